// nn.LSTM(proj_size > 0): aten::lstm whose params per layer and direction are w_ih [4H, I],
// w_hh [4H, P], (b_ih, b_hh [4H],) w_hr [P, H]. ONNX LSTM has no projection (torch.onnx refuses
// it), so each layer and direction is an ONNX Loop over time (any sequence length, static or
// dynamic) carrying h [B, P] and c [B, H]:
//   gates = x_t W_ih^T + b_ih + b_hh + h W_hh^T   (i, f, g, o as PyTorch stacks them)
//   c' = sigmoid(f) c + sigmoid(i) tanh(g),   h' = (sigmoid(o) tanh(c')) W_hr^T
// The input products of all time steps are one MatMul before the Loop; the reverse direction runs
// the same Loop over the time-reversed products and reverses its outputs back. Every opset (Loop
// with scan outputs, Gather, Split).
#include "convert/args.h"
#include "convert/loop_body.h"
#include "convert/rnn.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

bool foldable(const Context& ctx, const Value* v) {
  return ctx.settings().constant_folding && v->constant && v->constant->isTensor();
}

// w^T for a 2-D weight, emitted before the Loop (its body reads it from the outer graph).
Result<std::string> transposed(Context& ctx, const Value* w) {
  if (foldable(ctx, w)) return ctx.transposedConstant(w->constant->tensor(), "MatMul", w);
  OXPORT_ASSIGN(std::string wn, ctx.tensor(w));
  return ctx.emit1("Transpose", {wn}, {attrInts("perm", {1, 0})});
}

struct Direction {
  std::string x_gates;     // [T, B, 4H]: x W_ih^T + biases
  std::string whh_t, whr_t;  // [P, 4H], [H, P]
  std::string h0, c0;      // [B, P], [B, H]
};

struct Carried {
  std::string y, h, c;  // [T, B, P], [B, P], [B, H]
};

// The Loop over the time steps of one layer and direction (forward in time over d.x_gates).
Carried recurrence(Context& ctx, const Direction& d, int64_t hidden, DType dt, const std::string& steps) {
  LoopBody body(ctx, "lstm_projection_body");
  std::string k = body.iteration();
  std::string h = body.input("lstm_h", dt);
  std::string c = body.input("lstm_c", dt);
  std::string xt = ctx.emit1("Gather", {d.x_gates, k}, {attrInt("axis", 0)});  // [B, 4H]
  std::string gates = ctx.emit1("Add", {xt, ctx.emit1("MatMul", {h, d.whh_t})});
  auto parts = ctx.split(gates, 1, std::vector<int64_t>(4, hidden));
  std::string i = ctx.emit1("Sigmoid", {parts[0]});
  std::string f = ctx.emit1("Sigmoid", {parts[1]});
  std::string cand = ctx.emit1("Tanh", {parts[2]});
  std::string o = ctx.emit1("Sigmoid", {parts[3]});
  std::string c2 = ctx.emit1("Add", {ctx.emit1("Mul", {f, c}), ctx.emit1("Mul", {i, cand})});
  std::string h2 = ctx.emit1("MatMul", {ctx.emit1("Mul", {o, ctx.emit1("Tanh", {c2})}), d.whr_t});
  std::string y = ctx.emit1("Identity", {h2});
  auto outs = body.run(steps, {d.h0, d.c0}, {{h2, dt}, {c2, dt}, {y, dt}});
  return Carried{outs[2], outs[0], outs[1]};
}

}  // namespace

// lstm.input(input, hx[h0, c0], params[], has_biases, num_layers, dropout, train, bidirectional,
// batch_first): output [T, B, D*P] (batch_first: [B, T, D*P]), h_n [L*D, B, P], c_n [L*D, B, H].
Status convertLstmProjected(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  if (args.optIn("data") != nullptr)
    return ctx.error("unsupported-form", "lstm with projections (proj_size > 0) over a packed sequence",
                     "pass the padded batch to the LSTM (pad_packed_sequence first), or export without proj_size");
  const Value* input = args.in("input", 0);
  OXPORT_ASSIGN(bool has_biases, args.constBool("has_biases", 3));
  OXPORT_ASSIGN(int64_t layers, args.constInt("num_layers", 4));
  OXPORT_ASSIGN(double dropout, args.constDouble("dropout", 5));
  OXPORT_ASSIGN(bool train, args.constBool("train", 6));
  OXPORT_ASSIGN(bool bidirectional, args.constBool("bidirectional", 7));
  OXPORT_ASSIGN(bool batch_first, args.constBool("batch_first", 8));
  OXPORT_ASSIGN(auto params, ctx.listElements(args.in("params", 2)));
  OXPORT_ASSIGN(auto hx, ctx.listElements(args.in("hx", 1)));
  if (hx.size() != 2) return ctx.error("bad-argument", "lstm: hx must hold h0 and c0");
  const int64_t dirs = bidirectional ? 2 : 1;
  const size_t per = has_biases ? 5 : 3;
  if (params.size() != static_cast<size_t>(layers * dirs) * per)
    return ctx.error("bad-argument", "lstm: " + std::to_string(params.size()) + " weights for " +
                                         std::to_string(layers * dirs) + " layers and directions with projections");
  if (train && dropout > 0 && layers > 1)
    ctx.warn("training-op", n.kind + ": dropout between layers is left out of the ONNX graph");
  const DType dt = ctx.dtype(input);
  const int64_t hidden = ctx.meta(params[0]).shape.at(0) / 4;
  const bool unbatched = ctx.rank(input) == 2;

  OXPORT_ASSIGN(std::string x, ctx.tensor(input));
  OXPORT_ASSIGN(std::string h0, ctx.tensor(hx[0]));
  OXPORT_ASSIGN(std::string c0, ctx.tensor(hx[1]));
  if (unbatched) {
    x = ctx.unsqueeze(x, {1});
    h0 = ctx.unsqueeze(h0, {1});
    c0 = ctx.unsqueeze(c0, {1});
  } else if (batch_first) {
    x = ctx.emit1("Transpose", {x}, {attrInts("perm", {1, 0, 2})});
  }
  std::string steps = dimSize(ctx, x, 0, true);
  // Time indices T-1, ..., 0 for the reverse direction.
  std::string reversed;
  if (bidirectional)
    reversed = ctx.emit1("Sub", {ctx.emit1("Sub", {steps, ctx.constInt64s({1}, true)}), arangeOf(ctx, steps)});
  auto reverse = [&](const std::string& t) { return ctx.emit1("Gather", {t, reversed}, {attrInt("axis", 0)}); };

  std::vector<std::string> hs, cs;
  for (int64_t l = 0; l < layers; ++l) {
    std::vector<std::string> ys;
    for (int64_t dir = 0; dir < dirs; ++dir) {
      const int64_t at = l * dirs + dir;
      const size_t p0 = static_cast<size_t>(at) * per;
      Direction d;
      OXPORT_ASSIGN(std::string wih_t, transposed(ctx, params[p0]));
      OXPORT_ASSIGN(d.whh_t, transposed(ctx, params[p0 + 1]));
      OXPORT_ASSIGN(d.whr_t, transposed(ctx, params[p0 + per - 1]));
      d.x_gates = ctx.emit1("MatMul", {x, wih_t});
      if (has_biases) {
        OXPORT_ASSIGN(std::string b_ih, ctx.tensor(params[p0 + 2]));
        OXPORT_ASSIGN(std::string b_hh, ctx.tensor(params[p0 + 3]));
        d.x_gates = ctx.emit1("Add", {d.x_gates, ctx.emit1("Add", {b_ih, b_hh})});
      }
      if (dir == 1) d.x_gates = reverse(d.x_gates);
      d.h0 = ctx.squeeze(ctx.slice(h0, {at}, {at + 1}, {0}), {0});
      d.c0 = ctx.squeeze(ctx.slice(c0, {at}, {at + 1}, {0}), {0});
      Carried out = recurrence(ctx, d, hidden, dt, steps);
      ys.push_back(dir == 1 ? reverse(out.y) : out.y);
      hs.push_back(ctx.unsqueeze(out.h, {0}));
      cs.push_back(ctx.unsqueeze(out.c, {0}));
    }
    x = ys.size() == 1 ? ys[0] : ctx.emit1("Concat", ys, {attrInt("axis", 2)});
  }
  return bindRecurrentOutputs(ctx, n, x, hs, cs, unbatched, batch_first);
}

}  // namespace oxport::convert
