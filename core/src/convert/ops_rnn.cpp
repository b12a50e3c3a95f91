// Recurrent layers: aten::lstm, gru, rnn_tanh, rnn_relu (nn.LSTM/GRU/RNN) as ONNX LSTM/GRU/RNN,
// one ONNX node per layer; and the cells (lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell) as
// plain matrix products and activations.
//
// Gate order: PyTorch stacks LSTM gates as i, f, g, o and GRU gates as r, z, n; ONNX wants
// i, o, f, c and z, r, h. GRU's n gate applies r after the hidden product (linear_before_reset=1).
#include <cstring>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/rnn.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

struct RnnKind {
  const char* onnx_op;     // LSTM, GRU, RNN
  int gates;               // gate blocks stacked in the weights
  std::vector<int> order;  // ONNX gate k is PyTorch gate order[k]
  const char* activation;  // RNN only: Tanh or Relu
};

const RnnKind kLstm{"LSTM", 4, {0, 3, 1, 2}, nullptr};
const RnnKind kGru{"GRU", 3, {1, 0, 2}, nullptr};
const RnnKind kRnnTanh{"RNN", 1, {0}, "Tanh"};
const RnnKind kRnnRelu{"RNN", 1, {0}, "Relu"};

bool isConstTensor(const Value* v) { return v->constant && v->constant->isTensor(); }

// Rows of t (gate blocks stacked along axis 0) in ONNX gate order, as raw bytes.
std::vector<unsigned char> reorderedRows(const HostTensor& t, const RnnKind& k) {
  const size_t block = t.nbytes / static_cast<size_t>(k.gates);
  std::vector<unsigned char> out(t.nbytes);
  const auto* src = static_cast<const unsigned char*>(t.data);
  for (size_t g = 0; g < k.order.size(); ++g)
    std::memcpy(&out[g * block], src + static_cast<size_t>(k.order[g]) * block, block);
  return out;
}

// One weight or bias tensor in ONNX gate order, emitted (for weights that are not constants).
std::string reorderedTensor(Context& ctx, const std::string& x, int64_t rows, const RnnKind& k) {
  if (k.gates == 1) return x;
  const int64_t h = rows / k.gates;
  auto parts = ctx.split(x, 0, std::vector<int64_t>(static_cast<size_t>(k.gates), h));
  std::vector<std::string> ordered;
  for (int g : k.order) ordered.push_back(parts[static_cast<size_t>(g)]);
  return ctx.emit1("Concat", ordered, {attrInt("axis", 0)});
}

// Stacks per-direction tensors (each in PyTorch gate order) into one [D, ...] ONNX input.
// `pairs` > 1 concatenates that many tensors per direction first (the biases: b_ih then b_hh).
Result<std::string> stackedParam(Context& ctx, const std::vector<std::vector<const Value*>>& per_dir,
                                 const RnnKind& k, const std::string& hint) {
  bool all_const = ctx.settings().constant_folding;
  for (const auto& d : per_dir)
    for (const Value* v : d) all_const = all_const && isConstTensor(v);
  if (all_const) {
    const HostTensor& first = per_dir[0][0]->constant->tensor();
    std::vector<unsigned char> bytes;
    for (const auto& d : per_dir)
      for (const Value* v : d) {
        auto r = reorderedRows(v->constant->tensor(), k);
        bytes.insert(bytes.end(), r.begin(), r.end());
      }
    std::vector<int64_t> shape{static_cast<int64_t>(per_dir.size())};
    shape.push_back(first.shape.at(0) * static_cast<int64_t>(per_dir[0].size()));
    for (size_t i = 1; i < first.shape.size(); ++i) shape.push_back(first.shape[i]);
    return ctx.constant(HostTensor::fromBytes(first.dtype, shape, std::move(bytes)), hint, per_dir[0][0]);
  }
  std::vector<std::string> dirs;
  for (const auto& d : per_dir) {
    std::vector<std::string> parts;
    for (const Value* v : d) {
      OXPORT_ASSIGN(std::string t, ctx.tensor(v));
      parts.push_back(reorderedTensor(ctx, t, ctx.meta(v).shape.at(0), k));
    }
    std::string joined = parts.size() == 1 ? parts[0] : ctx.emit1("Concat", parts, {attrInt("axis", 0)});
    dirs.push_back(ctx.unsqueeze(joined, {0}));
  }
  return dirs.size() == 1 ? dirs[0] : ctx.emit1("Concat", dirs, {attrInt("axis", 0)});
}

// lengths[b] = #{t : batch_sizes[t] > b} for b < batch (int64): exact, as packing sorts the
// lengths in decreasing order.
std::string lengthsFromBatchSizes(Context& ctx, const std::string& bs, const std::string& batch) {
  std::string b = ctx.unsqueeze(arangeOf(ctx, batch), {0});             // [1, B]
  std::string gt = ctx.emit1("Greater", {ctx.unsqueeze(bs, {1}), b});   // [T, B]
  return reduceOver(ctx, "ReduceSum", ctx.cast(gt, DType::Int64), {0}, false);
}

// The consumers a packed sequence's data may have: the RNNs' .data overloads (and the unpacking).
Status packedUsersOnly(Context& ctx, const Value* v, const std::string& what) {
  for (const Node* u : v->users) {
    const bool rnn = Args::inputOf(*u, "data") &&
                     (u->kind == "aten::lstm" || u->kind == "aten::gru" || u->kind == "aten::rnn_tanh" ||
                      u->kind == "aten::rnn_relu");
    if (!rnn && u->kind != "aten::_pad_packed_sequence")
      return ctx.error("unsupported-form",
                       what + " is read by " + u->kind + ": only an RNN and pad_packed_sequence can take a "
                       "packed sequence's data here (its ONNX form is the padded tensor)",
                       "run the op on the padded tensor (pad_packed_sequence first)");
  }
  return okStatus();
}

// _pack_padded_sequence(input, lengths, batch_first) -> (data, batch_sizes). ONNX has no packed
// layout: data stays the padded tensor, time-major; batch_sizes[t] = #{b : lengths[b] > t} for
// t < max(lengths), so that size(batch_sizes, 0) and batch_sizes[0] read as in PyTorch.
Status convertPackPadded(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("input", 0)));
  OXPORT_ASSIGN(std::string lengths, ctx.tensorOfType(args.in("lengths", 1), DType::Int64));
  OXPORT_ASSIGN(bool batch_first, ctx.constBool(args.in("batch_first", 2)));
  OXPORT_TRY(packedUsersOnly(ctx, n.output(0), "the packed sequence's data"));
  const int rank = ctx.rank(args.in("input", 0));
  if (batch_first) {
    std::vector<int64_t> perm{1, 0};
    for (int i = 2; i < rank; ++i) perm.push_back(i);
    x = ctx.emit1("Transpose", {x}, {attrInts("perm", perm)});
  }
  std::string lens = ctx.reshape(lengths, {-1});
  std::string maxlen = reduceOver(ctx, "ReduceMax", lens, {0}, true);
  std::string t = ctx.unsqueeze(arangeOf(ctx, maxlen), {1});               // [T, 1]
  std::string gt = ctx.emit1("Greater", {ctx.unsqueeze(lens, {0}), t});    // [T, B]
  ctx.bind(n.output(0), x);
  ctx.bind(n.output(1), reduceOver(ctx, "ReduceSum", ctx.cast(gt, DType::Int64), {1}, false));
  return okStatus();
}

// _pad_packed_sequence(data, batch_sizes, batch_first, padding_value, total_length) ->
// (padded, lengths): the RNN's time-major output, cut to total_length steps, padding_value past
// each sequence's end.
Status convertPadPacked(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string y, ctx.tensor(args.in("data", 0)));
  OXPORT_ASSIGN(std::string bs, ctx.tensor(args.in("batch_sizes", 1)));
  OXPORT_ASSIGN(bool batch_first, ctx.constBool(args.in("batch_first", 2)));
  OXPORT_ASSIGN(double pad, ctx.constDouble(args.in("padding_value", 3)));
  const Value* total = args.in("total_length", 4);
  std::string steps = dimSize(ctx, bs, 0);
  if (!ctx.isNone(total)) { OXPORT_ASSIGN(steps, ctx.tensorOfType(total, DType::Int64)); }
  // The first `steps` time steps (a Gather, so that opset 9 takes a dynamic count too).
  y = ctx.emit1("Gather", {y, arangeOf(ctx, ctx.reshape(steps, {1}))}, {attrInt("axis", 0)});
  std::string lengths = lengthsFromBatchSizes(ctx, bs, dimSize(ctx, y, 1));
  if (pad != 0.0) {
    const DType dt = ctx.dtype(n.output(0));
    std::string t = ctx.unsqueeze(arangeOf(ctx, dimSize(ctx, y, 0)), {1});       // [T, 1]
    std::string past = ctx.emit1("Not", {ctx.emit1("Less", {t, ctx.unsqueeze(lengths, {0})})});  // [T, B]
    const int rank = ctx.rank(n.output(0));
    std::vector<int64_t> axes;
    for (int i = 2; i < rank; ++i) axes.push_back(i);
    if (!axes.empty()) past = ctx.unsqueeze(past, axes);
    y = whereTyped(ctx, past, ctx.constScalar(pad, dt), y, dt);
  }
  if (batch_first) {
    std::vector<int64_t> perm{1, 0};
    for (int i = 2; i < ctx.rank(n.output(0)); ++i) perm.push_back(i);
    y = ctx.emit1("Transpose", {y}, {attrInts("perm", perm)});
  }
  ctx.bind(n.output(0), y);
  ctx.bind(n.output(1), lengths);
  return okStatus();
}

// lstm(input, hx[], params[], has_biases, num_layers, dropout, train, bidirectional, batch_first)
// gru/rnn_tanh/rnn_relu(input, hx, params[], has_biases, num_layers, dropout, train, bidirectional, batch_first)
ConvertFn rnnOp(const RnnKind& k) {
  return [k](Context& ctx, const Node& n) -> Status {
    const bool lstm = std::string(k.onnx_op) == "LSTM";
    // The .data overload runs on a packed sequence: (data, batch_sizes, hx, params, has_biases,
    // num_layers, dropout, train, bidirectional). Its data is the padded time-major tensor that
    // _pack_padded_sequence bound, and the lengths (from batch_sizes) become sequence_lens.
    const Args args(ctx, n);
    const bool packed = args.optIn("data") != nullptr;
    // Without schema names (never for these aten ops) the .input overload's places.
    if (n.inputs.size() < 9) return ctx.error("bad-argument", n.kind + ": unexpected overload");
    const Value* input = args.in({"input", "data"}, 0);
    OXPORT_ASSIGN(bool has_biases, args.constBool("has_biases", 3));
    OXPORT_ASSIGN(int64_t layers, args.constInt("num_layers", 4));
    OXPORT_ASSIGN(double dropout, args.constDouble("dropout", 5));
    OXPORT_ASSIGN(bool train, args.constBool("train", 6));
    OXPORT_ASSIGN(bool bidirectional, args.constBool("bidirectional", 7));
    bool batch_first = false;
    if (!packed) { OXPORT_ASSIGN(batch_first, args.constBool("batch_first", 8)); }
    OXPORT_ASSIGN(auto params, ctx.listElements(args.in("params", 2)));
    const int64_t dirs = bidirectional ? 2 : 1;
    const size_t per = has_biases ? 4 : 2;
    // proj_size > 0 adds w_hr per layer and direction: ONNX LSTM has no projection (ops_rnn_projection.cpp).
    if (lstm && params.size() == static_cast<size_t>(layers * dirs) * (per + 1)) return convertLstmProjected(ctx, n);
    if (params.size() != static_cast<size_t>(layers * dirs) * per)
      return ctx.error("bad-argument", n.kind + ": " + std::to_string(params.size()) + " weights for " +
                                           std::to_string(layers * dirs) + " layers and directions");
    if (train && dropout > 0 && layers > 1)
      ctx.warn("training-op", n.kind + ": dropout between layers is left out of the ONNX graph");
    const int64_t hidden = ctx.meta(params[1]).shape.at(1);

    const bool unbatched = !packed && ctx.rank(input) == 2;
    OXPORT_ASSIGN(std::string x, ctx.tensor(input));
    std::string seq_lens;
    if (packed) {
      OXPORT_ASSIGN(std::string bs, ctx.tensor(args.in("batch_sizes", 1)));
      seq_lens = ctx.cast(lengthsFromBatchSizes(ctx, bs, dimSize(ctx, x, 1)), DType::Int32);
    }
    if (unbatched) x = ctx.unsqueeze(x, {1});
    else if (batch_first) x = ctx.emit1("Transpose", {x}, {attrInts("perm", {1, 0, 2})});

    // Initial states (L*D, B, H); a batch-less call has (L*D, H).
    std::string h0, c0;
    if (lstm) {
      OXPORT_ASSIGN(auto hx, ctx.listElements(args.in("hx", 1)));
      if (hx.size() != 2) return ctx.error("bad-argument", "lstm: hx must hold h0 and c0");
      OXPORT_ASSIGN(h0, ctx.tensor(hx[0]));
      OXPORT_ASSIGN(c0, ctx.tensor(hx[1]));
    } else {
      OXPORT_ASSIGN(h0, ctx.tensor(args.in("hx", 1)));
    }
    if (unbatched) {
      h0 = ctx.unsqueeze(h0, {1});
      if (lstm) c0 = ctx.unsqueeze(c0, {1});
    }

    std::vector<Attribute> base{attrInt("hidden_size", hidden),
                                attrString("direction", bidirectional ? "bidirectional" : "forward")};
    if (std::string(k.onnx_op) == "GRU") base.push_back(attrInt("linear_before_reset", 1));
    if (std::string(k.onnx_op) == "RNN")
      base.push_back(Attribute{"activations", std::vector<std::string>(static_cast<size_t>(dirs), k.activation)});

    std::vector<std::string> hs, cs;
    for (int64_t l = 0; l < layers; ++l) {
      std::vector<std::vector<const Value*>> w(dirs), r(dirs), b(dirs);
      for (int64_t d = 0; d < dirs; ++d) {
        size_t at = static_cast<size_t>(l * dirs + d) * per;
        w[d] = {params[at]};
        r[d] = {params[at + 1]};
        if (has_biases) b[d] = {params[at + 2], params[at + 3]};
      }
      const std::string lname = std::string(k.onnx_op) + "_l" + std::to_string(l);
      OXPORT_ASSIGN(std::string W, stackedParam(ctx, w, k, lname + "_W"));
      OXPORT_ASSIGN(std::string R, stackedParam(ctx, r, k, lname + "_R"));
      std::string B;
      if (has_biases) { OXPORT_ASSIGN(B, stackedParam(ctx, b, k, lname + "_B")); }
      std::string hl = layers == 1 ? h0 : ctx.slice(h0, {l * dirs}, {(l + 1) * dirs}, {0});
      std::vector<std::string> ins{x, W, R, B, seq_lens, hl};
      if (lstm) ins.push_back(layers == 1 ? c0 : ctx.slice(c0, {l * dirs}, {(l + 1) * dirs}, {0}));
      auto outs = ctx.emit(k.onnx_op, ins, lstm ? 3 : 2, base);
      // Y (S, D, B, H) -> (S, B, D*H), the next layer's input.
      std::string y = ctx.emit1("Transpose", {outs[0]}, {attrInts("perm", {0, 2, 1, 3})});
      x = ctx.reshape(y, {0, 0, -1});
      hs.push_back(outs[1]);
      if (lstm) cs.push_back(outs[2]);
    }
    return bindRecurrentOutputs(ctx, n, x, hs, cs, unbatched, batch_first);
  };
}

// x @ w^T (+ b) for a 2-D x.
Result<std::string> linearT(Context& ctx, const std::string& x, const Value* w, const Value* b) {
  std::string wt;
  if (isConstTensor(w) && ctx.settings().constant_folding) {
    wt = ctx.transposedConstant(w->constant->tensor(), "MatMul", w);
  } else {
    OXPORT_ASSIGN(std::string wn, ctx.tensor(w));
    wt = ctx.emit1("Transpose", {wn}, {attrInts("perm", {1, 0})});
  }
  std::string y = ctx.emit1("MatMul", {x, wt});
  if (b && !ctx.isNone(b)) {
    OXPORT_ASSIGN(std::string bn, ctx.tensor(b));
    y = ctx.emit1("Add", {y, bn});
  }
  return y;
}

// The two products of a cell, x @ w_ih^T + b_ih and h @ w_hh^T + b_hh, on 2-D operands.
struct CellProducts {
  std::string gi, gh, h;
  bool unbatched = false;
  int64_t hidden = 0;
};

Result<CellProducts> cellProducts(Context& ctx, const Node& n, const Value* hx) {
  const Args args(ctx, n);
  CellProducts p;
  p.unbatched = ctx.rank(args.in("input", 0)) == 1;
  p.hidden = ctx.meta(args.in("w_hh", 3)).shape.at(1);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("input", 0)));
  OXPORT_ASSIGN(p.h, ctx.tensor(hx));
  if (p.unbatched) {
    x = ctx.unsqueeze(x, {0});
    p.h = ctx.unsqueeze(p.h, {0});
  }
  const Value* b_ih = args.optIn("b_ih", 4);
  const Value* b_hh = args.optIn("b_hh", 5);
  OXPORT_ASSIGN(p.gi, linearT(ctx, x, args.in("w_ih", 2), b_ih));
  OXPORT_ASSIGN(p.gh, linearT(ctx, p.h, args.in("w_hh", 3), b_hh));
  return p;
}

std::string batchless(Context& ctx, const CellProducts& p, const std::string& y) {
  return p.unbatched ? ctx.squeeze(y, {0}) : y;
}

// lstm_cell(input, hx[h, c], w_ih, w_hh, b_ih, b_hh) -> (h', c')
Status convertLstmCell(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(auto hx, ctx.listElements(args.in("hx", 1)));
  if (hx.size() != 2) return ctx.error("bad-argument", "lstm_cell: hx must hold h and c");
  OXPORT_ASSIGN(CellProducts p, cellProducts(ctx, n, hx[0]));
  OXPORT_ASSIGN(std::string c, ctx.tensor(hx[1]));
  if (p.unbatched) c = ctx.unsqueeze(c, {0});
  std::string gates = ctx.emit1("Add", {p.gi, p.gh});
  auto g = ctx.split(gates, 1, std::vector<int64_t>(4, p.hidden));
  std::string i = ctx.emit1("Sigmoid", {g[0]});
  std::string f = ctx.emit1("Sigmoid", {g[1]});
  std::string cand = ctx.emit1("Tanh", {g[2]});
  std::string o = ctx.emit1("Sigmoid", {g[3]});
  std::string c2 = ctx.emit1("Add", {ctx.emit1("Mul", {f, c}), ctx.emit1("Mul", {i, cand})});
  std::string h2 = ctx.emit1("Mul", {o, ctx.emit1("Tanh", {c2})});
  ctx.bind(n.output(0), batchless(ctx, p, h2));
  ctx.bind(n.output(1), batchless(ctx, p, c2));
  return okStatus();
}

// gru_cell(input, hx, w_ih, w_hh, b_ih, b_hh) -> h'
Status convertGruCell(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(CellProducts p, cellProducts(ctx, n, args.in("hx", 1)));
  auto gi = ctx.split(p.gi, 1, std::vector<int64_t>(3, p.hidden));
  auto gh = ctx.split(p.gh, 1, std::vector<int64_t>(3, p.hidden));
  std::string r = ctx.emit1("Sigmoid", {ctx.emit1("Add", {gi[0], gh[0]})});
  std::string z = ctx.emit1("Sigmoid", {ctx.emit1("Add", {gi[1], gh[1]})});
  std::string nn = ctx.emit1("Tanh", {ctx.emit1("Add", {gi[2], ctx.emit1("Mul", {r, gh[2]})})});
  // (1 - z) * n + z * h = n + z * (h - n)
  std::string h2 = ctx.emit1("Add", {nn, ctx.emit1("Mul", {z, ctx.emit1("Sub", {p.h, nn})})});
  return bindOut(ctx, n, batchless(ctx, p, h2));
}

// rnn_tanh_cell / rnn_relu_cell(input, hx, w_ih, w_hh, b_ih, b_hh) -> h'
ConvertFn simpleCell(const char* activation) {
  return [activation](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(CellProducts p, cellProducts(ctx, n, args.in("hx", 1)));
    std::string h2 = ctx.emit1(activation, {ctx.emit1("Add", {p.gi, p.gh})});
    return bindOut(ctx, n, batchless(ctx, p, h2));
  };
}

}  // namespace

Status bindRecurrentOutputs(Context& ctx, const Node& n, const std::string& y, const std::vector<std::string>& hs,
                            const std::vector<std::string>& cs, bool unbatched, bool batch_first) {
  std::string out = y;
  if (unbatched) out = ctx.squeeze(out, {1});
  else if (batch_first) out = ctx.emit1("Transpose", {out}, {attrInts("perm", {1, 0, 2})});
  auto joined = [&](const std::vector<std::string>& v) {
    std::string s = v.size() == 1 ? v[0] : ctx.emit1("Concat", v, {attrInt("axis", 0)});
    return unbatched ? ctx.squeeze(s, {1}) : s;
  };
  ctx.bind(n.output(0), out);
  ctx.bind(n.output(1), joined(hs));
  if (!cs.empty()) ctx.bind(n.output(2), joined(cs));
  return okStatus();
}

void registerRnnOps(Registry& r) {
  r.add("aten::lstm", rnnOp(kLstm));
  r.add("aten::gru", rnnOp(kGru));
  r.add("aten::rnn_tanh", rnnOp(kRnnTanh));
  r.add("aten::rnn_relu", rnnOp(kRnnRelu));
  r.add("aten::lstm_cell", convertLstmCell);
  r.add("aten::_pack_padded_sequence", convertPackPadded);
  r.add("aten::_pad_packed_sequence", convertPadPacked);
  r.add("aten::gru_cell", convertGruCell);
  r.add("aten::rnn_tanh_cell", simpleCell("Tanh"));
  r.add("aten::rnn_relu_cell", simpleCell("Relu"));
}

}  // namespace oxport::convert
