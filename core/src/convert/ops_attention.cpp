// PyTorch's fused attention fast paths, which torch.onnx (1.13) cannot export, decomposed into
// standard ONNX: aten::_native_multi_head_attention (nn.MultiheadAttention self-attention under
// torch.no_grad()) and aten::_transformer_encoder_layer_fwd (nn.TransformerEncoderLayer under
// torch.no_grad(), post-norm or pre-norm, ReLU or exact GELU), with key padding masks (bool, or
// float taken as bool like PyTorch does) and (B, heads, L, S) masks.
#include <cmath>
#include <limits>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

Result<std::string> weightT(Context& ctx, const Value* w) {
  if (w->constant && w->constant->isTensor() && w->constant->tensor().shape.size() == 2 &&
      ctx.settings().constant_folding)
    return ctx.transposedConstant(w->constant->tensor(), "MatMul", w);
  OXPORT_ASSIGN(std::string wn, ctx.tensor(w));
  return ctx.emit1("Transpose", {wn}, {attrInts("perm", {1, 0})});
}

Result<std::string> linearV(Context& ctx, const std::string& x, const Value* w, const Value* b) {
  OXPORT_ASSIGN(std::string wt, weightT(ctx, w));
  std::string y = ctx.emit1("MatMul", {x, wt});
  if (b && !ctx.isNone(b)) {
    OXPORT_ASSIGN(std::string bn, ctx.tensor(b));
    y = ctx.emit1("Add", {y, bn});
  }
  return y;
}

// Rows [part*E, (part+1)*E) of a packed in-projection weight (3E, E) or bias (3E), transposed for
// weights; folded on the host when constant.
Result<std::string> packedPart(Context& ctx, const Value* v, int part, int64_t e, bool transpose) {
  if (v->constant && v->constant->isTensor() && ctx.settings().constant_folding) {
    const HostTensor& t = v->constant->tensor();
    const size_t block = t.nbytes / 3;
    const auto* src = static_cast<const unsigned char*>(t.data) + static_cast<size_t>(part) * block;
    // A view of the rows (the bytes are shared and immutable), not a copy.
    HostTensor piece = t;
    piece.shape[0] = e;
    piece.data = src;
    piece.nbytes = block;
    return transpose ? ctx.transposedConstant(piece, "MatMul", v) : ctx.constant(piece, "Add", v);
  }
  OXPORT_ASSIGN(std::string t, ctx.tensor(v));
  std::string piece = ctx.slice(t, {part * e}, {(part + 1) * e}, {0});
  return transpose ? ctx.emit1("Transpose", {piece}, {attrInts("perm", {1, 0})}) : piece;
}

// LayerNormalization over the last axis (opset 17), or its decomposition before.
Result<std::string> layerNorm(Context& ctx, const std::string& x, const Value* w, const Value* b, double eps,
                              DType dt) {
  OXPORT_ASSIGN(std::string wn, ctx.tensorOfType(w, dt));
  OXPORT_ASSIGN(std::string bn, ctx.tensorOfType(b, dt));
  if (ctx.opset() >= 17)
    return ctx.emit1("LayerNormalization", {x, wn, bn},
                     {attrInt("axis", -1), attrFloat("epsilon", static_cast<float>(eps))});
  std::string mean = ctx.emit1("ReduceMean", {x}, {attrInts("axes", {-1}), attrInt("keepdims", 1)});
  std::string centered = ctx.emit1("Sub", {x, mean});
  std::string var = ctx.emit1("ReduceMean", {ctx.emit1("Mul", {centered, centered})},
                              {attrInts("axes", {-1}), attrInt("keepdims", 1)});
  std::string denom = ctx.emit1("Sqrt", {ctx.emit1("Add", {var, ctx.constScalar(eps, dt)})});
  std::string y = ctx.emit1("Div", {centered, denom});
  return ctx.emit1("Add", {ctx.emit1("Mul", {y, wn}), bn});
}

// Exact GELU: x * 0.5 * (1 + erf(x / sqrt(2))).
std::string gelu(Context& ctx, const std::string& x, DType dt) {
  std::string e = ctx.emit1("Erf", {ctx.emit1("Div", {x, ctx.constScalar(std::sqrt(2.0), dt)})});
  std::string half = ctx.emit1("Mul", {x, ctx.constScalar(0.5, dt)});
  return ctx.emit1("Mul", {half, ctx.emit1("Add", {e, ctx.constScalar(1.0, dt)})});
}

struct Mha {
  const Value* query;
  const Value* key;
  const Value* value;
  int64_t embed_dim = 0, heads = 1;
  const Value* qkv_weight;
  const Value* qkv_bias;
  const Value* proj_weight;
  const Value* proj_bias;
  const Value* mask = nullptr;
  int64_t mask_type = -1;  // 1: key padding (B, S); 0: attention mask (L, S); -1: none
};

struct MhaOut {
  std::string out;      // (B, L, E)
  std::string weights;  // (B, heads, L, S) softmax
};

// The attention block on batch-first tensors; q/k/v already bound to ONNX names.
Result<MhaOut> attention(Context& ctx, const Mha& a, const std::string& q_in, const std::string& k_in,
                         const std::string& v_in, DType dt) {
  const int64_t e = a.embed_dim, h = a.heads, hd = e / h;
  if (hd * h != e) return ctx.error("bad-argument", "embed_dim must be divisible by num_heads");
  const bool has_bias = a.qkv_bias && !ctx.isNone(a.qkv_bias);
  std::string proj[3];
  const std::string ins[3] = {q_in, k_in, v_in};
  for (int p = 0; p < 3; ++p) {
    OXPORT_ASSIGN(std::string wt, packedPart(ctx, a.qkv_weight, p, e, true));
    proj[p] = ctx.emit1("MatMul", {ins[p], wt});
    if (has_bias) {
      OXPORT_ASSIGN(std::string b, packedPart(ctx, a.qkv_bias, p, e, false));
      proj[p] = ctx.emit1("Add", {proj[p], b});
    }
    // (B, T, E) -> (B, T, heads, hd) -> (B, heads, T, hd)
    proj[p] = ctx.emit1("Transpose", {ctx.reshape(proj[p], {0, 0, h, hd})}, {attrInts("perm", {0, 2, 1, 3})});
  }
  // Scaled like PyTorch: q / sqrt(hd) before the product.
  std::string q = ctx.emit1("Div", {proj[0], ctx.constScalar(std::sqrt(static_cast<double>(hd)), dt)});
  std::string kt = ctx.emit1("Transpose", {proj[1]}, {attrInts("perm", {0, 1, 3, 2})});
  std::string scores = ctx.emit1("MatMul", {q, kt});  // (B, heads, L, S)
  if (a.mask && !ctx.isNone(a.mask)) {
    OXPORT_ASSIGN(std::string m, ctx.tensor(a.mask));
    const int mrank = ctx.rank(a.mask);
    if (mrank == 2 && a.mask_type == 1) m = ctx.unsqueeze(m, {1, 2});  // (B, 1, 1, S)
    else if (mrank == 3) m = ctx.unsqueeze(m, {1});                     // (B, 1, L, S)
    // PyTorch's masked softmax takes any non-bool mask as bool (non-zero = masked), not additive.
    if (ctx.dtype(a.mask) != DType::Bool) m = ctx.cast(m, DType::Bool);
    std::string ninf = ctx.constScalar(-std::numeric_limits<double>::infinity(), dt);
    scores = ctx.emit1("Where", {m, ninf, scores});
  }
  MhaOut o;
  o.weights = ctx.emit1("Softmax", {scores}, {attrInt("axis", ctx.opset() >= 13 ? -1 : 3)});
  std::string att = ctx.emit1("MatMul", {o.weights, proj[2]});  // (B, heads, L, hd)
  att = ctx.reshape(ctx.emit1("Transpose", {att}, {attrInts("perm", {0, 2, 1, 3})}), {0, 0, e});
  OXPORT_ASSIGN(o.out, linearV(ctx, att, a.proj_weight, a.proj_bias));
  return o;
}

// The arguments both ops have in this order from `first` on: embed_dim, the head count (named
// `heads`), qkv_weight, qkv_bias, proj_weight, proj_bias.
Status readProjection(Context& ctx, const Args& args, const char* heads, size_t first, Mha& a) {
  OXPORT_ASSIGN(a.embed_dim, ctx.constInt(args.in("embed_dim", first)));
  OXPORT_ASSIGN(a.heads, ctx.constInt(args.in(heads, first + 1)));
  a.qkv_weight = args.in("qkv_weight", first + 2);
  a.qkv_bias = args.in("qkv_bias", first + 3);
  a.proj_weight = args.in("proj_weight", first + 4);
  a.proj_bias = args.in("proj_bias", first + 5);
  return okStatus();
}

// _native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias,
//     proj_weight, proj_bias, mask=None, need_weights=True, average_attn_weights=True, mask_type=None)
Status convertNativeMha(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  Mha a;
  a.query = args.in("query", 0);
  a.key = args.in("key", 1);
  a.value = args.in("value", 2);
  OXPORT_TRY(readProjection(ctx, args, "num_head", 3, a));
  bool need_weights = true, average = true;
  if (n.inputs.size() > 9) a.mask = args.in("mask", 9);
  if (n.inputs.size() > 10) { OXPORT_ASSIGN(need_weights, ctx.constBool(args.in("need_weights", 10))); }
  if (n.inputs.size() > 11) { OXPORT_ASSIGN(average, ctx.constBool(args.in("average_attn_weights", 11))); }
  if (args.has("mask_type", 12)) { OXPORT_ASSIGN(a.mask_type, ctx.constInt(args.in("mask_type", 12))); }
  if (ctx.rank(a.query) != 3) return ctx.error("unsupported-form", "_native_multi_head_attention needs batched (B, L, E) input");
  const DType dt = ctx.dtype(a.query);
  OXPORT_ASSIGN(std::string q, ctx.tensor(a.query));
  OXPORT_ASSIGN(std::string k, ctx.tensor(a.key));
  OXPORT_ASSIGN(std::string v, ctx.tensor(a.value));
  OXPORT_ASSIGN(MhaOut o, attention(ctx, a, q, k, v, dt));
  ctx.bind(n.output(0), o.out);
  if (n.outputs.size() > 1) {
    std::string w;
    if (!need_weights) w = ctx.constant(HostTensor::fromVector<float>(DType::Float32, {0}, {}));
    else if (average) w = ctx.emit1("ReduceMean", {o.weights}, {attrInts("axes", {1}), attrInt("keepdims", 0)});
    else w = o.weights;
    ctx.bind(n.output(1), w);
  }
  return okStatus();
}

// _transformer_encoder_layer_fwd(src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight,
//     proj_bias, use_gelu, norm_first, eps, norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2,
//     ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2, mask=None, mask_type=None)
Status convertEncoderLayer(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  if (n.inputs.size() < 18) return ctx.error("bad-argument", n.kind + ": unexpected overload");
  Mha a;
  a.query = a.key = a.value = args.in("src", 0);
  OXPORT_TRY(readProjection(ctx, args, "num_heads", 1, a));
  OXPORT_ASSIGN(bool use_gelu, ctx.constBool(args.in("use_gelu", 7)));
  OXPORT_ASSIGN(bool norm_first, ctx.constBool(args.in("norm_first", 8)));
  OXPORT_ASSIGN(double eps, ctx.constDouble(args.in("eps", 9)));
  if (n.inputs.size() > 18) a.mask = args.in("mask", 18);
  if (args.has("mask_type", 19)) { OXPORT_ASSIGN(a.mask_type, ctx.constInt(args.in("mask_type", 19))); }
  if (a.mask && !ctx.isNone(a.mask) && a.mask_type < 0) a.mask_type = ctx.rank(a.mask) == 2 ? 1 : 0;
  if (ctx.rank(args.in("src", 0)) != 3)
    return ctx.error("unsupported-form", "_transformer_encoder_layer_fwd needs batched (B, L, E) input");
  const DType dt = ctx.dtype(args.in("src", 0));
  OXPORT_ASSIGN(std::string src, ctx.tensor(args.in("src", 0)));

  auto sa = [&](const std::string& x) -> Result<std::string> {
    OXPORT_ASSIGN(MhaOut o, attention(ctx, a, x, x, x, dt));
    return o.out;
  };
  auto ff = [&](const std::string& x) -> Result<std::string> {
    OXPORT_ASSIGN(std::string y, linearV(ctx, x, args.in("ffn_weight_1", 14), args.in("ffn_bias_1", 15)));
    y = use_gelu ? gelu(ctx, y, dt) : ctx.emit1("Relu", {y});
    return linearV(ctx, y, args.in("ffn_weight_2", 16), args.in("ffn_bias_2", 17));
  };
  std::string x = src;
  if (norm_first) {
    OXPORT_ASSIGN(std::string n1, layerNorm(ctx, x, args.in("norm_weight_1", 10), args.in("norm_bias_1", 11), eps, dt));
    OXPORT_ASSIGN(std::string s, sa(n1));
    x = ctx.emit1("Add", {x, s});
    OXPORT_ASSIGN(std::string n2, layerNorm(ctx, x, args.in("norm_weight_2", 12), args.in("norm_bias_2", 13), eps, dt));
    OXPORT_ASSIGN(std::string f, ff(n2));
    x = ctx.emit1("Add", {x, f});
  } else {
    OXPORT_ASSIGN(std::string s, sa(x));
    OXPORT_ASSIGN(x, layerNorm(ctx, ctx.emit1("Add", {x, s}), args.in("norm_weight_1", 10), args.in("norm_bias_1", 11), eps, dt));
    OXPORT_ASSIGN(std::string f, ff(x));
    OXPORT_ASSIGN(x, layerNorm(ctx, ctx.emit1("Add", {x, f}), args.in("norm_weight_2", 12), args.in("norm_bias_2", 13), eps, dt));
  }
  return bindOut(ctx, n, x);
}

}  // namespace

void registerAttentionOps(Registry& r) {
  r.add("aten::_native_multi_head_attention", convertNativeMha);
  r.add("aten::_transformer_encoder_layer_fwd", convertEncoderLayer);
}

}  // namespace oxport::convert
