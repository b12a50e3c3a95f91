// The example run on meta tensors: conversions, and shapes of the ops libtorch 1.13 has no Meta
// kernel for in C++ (meta_rules.h).
#include "frontend/meta_rules.h"

#include <unordered_set>

#include "frontend/frontend.h"
#include "frontend/jit_util.h"
#include "pipeline/model_impl.h"

namespace oxport {

namespace jit = torch::jit;

bool holdsMeta(const c10::IValue& v) {
  return anyTensorIn(v, [](const at::Tensor& t) { return t.defined() && t.is_meta(); });
}

bool holdsRealTensor(const c10::IValue& v) {
  return anyTensorIn(v, [](const at::Tensor& t) { return t.defined() && !t.is_meta(); });
}

// The same value with every tensor as a meta tensor of the same sizes, strides and dtype (no
// data is copied; the original stays as it is).
c10::IValue toMeta(const c10::IValue& v) {
  return mapTensors(v, [](const at::Tensor& t) {
    if (!t.defined() || t.is_meta()) return t;
    if (t.is_quantized() || t.is_sparse() || t.is_mkldnn())
      throw MetaFallback("a " + std::string(t.is_quantized() ? "quantized" : "non-strided") + " tensor");
    return at::empty_strided(t.sizes(), t.strides(), t.options().device(at::kMeta));
  });
}

// Ops libtorch 1.13 has no Meta kernel for in C++ (Python's torch._meta_registrations are not
// there), the hot ones of CNNs: their result computed here from the arguments' shapes, in place
// of the op on `stack` (every tensor meta already). Returns false when it does not apply; any
// argument the real op would reject throws MetaFallback so the real run reports it.
bool metaRule(const std::string& kind, jit::Stack& stack, size_t nout) {
  if (stack.empty() || !stack[0].isTensor()) return false;
  const at::Tensor in = stack[0].toTensor();
  auto reject = [&](const std::string& why) -> bool { throw MetaFallback(kind + ": " + why); };
  auto isFloatOf = [&](const c10::IValue& v, std::vector<int64_t> shape) {
    if (!v.isTensor() || v.toTensor().scalar_type() != in.scalar_type() || v.toTensor().sizes().vec() != shape)
      reject("an argument of another shape or dtype");
  };
  // A key padding mask [batch, length] or an attention mask [length, length]; anything else is
  // left to the real run.
  auto checkMask = [&](size_t i, int64_t b, int64_t l) {
    if (i >= stack.size() || stack[i].isNone()) return;
    if (!stack[i].isTensor()) reject("a mask that is not a tensor");
    const at::Tensor m = stack[i].toTensor();
    if (!m.defined()) return;
    const std::vector<int64_t> ms = m.sizes().vec();
    if (ms != std::vector<int64_t>{b, l} && ms != std::vector<int64_t>{l, l}) reject("a mask of another shape");
  };
  if (kind == "aten::_native_multi_head_attention") {
    // (query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight, proj_bias,
    //  mask, need_weights, average_attn_weights, mask_type) -> (output, weights or undefined)
    if (nout != 2 || stack.size() < 12 || in.dim() != 3 || !at::isFloatingType(in.scalar_type()) ||
        !stack[3].isInt() || !stack[4].isInt() || !stack[10].isBool() || !stack[11].isBool())
      return false;
    const int64_t e = stack[3].toInt(), h = stack[4].toInt();
    for (size_t i : {1, 2}) isFloatOf(stack[i], in.sizes().vec());  // libtorch 1.13 needs equal shapes
    if (in.size(2) != e || h < 1 || e % h != 0) reject("embed_dim or num_head does not match the query");
    isFloatOf(stack[5], {3 * e, e});
    isFloatOf(stack[6], {3 * e});
    isFloatOf(stack[7], {e, e});
    isFloatOf(stack[8], {e});
    const bool need = stack[10].toBool(), average = stack[11].toBool();
    const int64_t b = in.size(0), l = in.size(1);
    checkMask(9, b, l);
    at::Tensor out = at::empty(in.sizes(), in.options());
    at::Tensor weights;  // undefined, as libtorch returns it without need_weights
    if (need) weights = average ? at::empty({b, l, l}, in.options()) : at::empty({b, h, l, l}, in.options());
    stack.clear();
    stack.emplace_back(std::move(out));
    stack.emplace_back(std::move(weights));
    return true;
  }
  if (nout != 1) return false;
  if (kind == "aten::adaptive_avg_pool2d") {  // its _adaptive_avg_pool2d has no Meta kernel
    if (stack.size() != 2 || !stack[1].isIntList() || (in.dim() != 3 && in.dim() != 4) ||
        !at::isFloatingType(in.scalar_type()))
      return false;
    const std::vector<int64_t> os = stack[1].toIntVector();
    if (os.size() != 2 || os[0] < 0 || os[1] < 0) reject("a bad output_size");
    for (int64_t d = in.dim() - 3; d < in.dim(); ++d)
      if (d >= 0 && in.size(d) == 0) reject("an empty input");
    std::vector<int64_t> shape(in.sizes().begin(), in.sizes().end() - 2);
    shape.insert(shape.end(), os.begin(), os.end());
    stack.clear();
    stack.emplace_back(at::empty(shape, in.options()));
    return true;
  }
  auto optTensor = [&](size_t i) -> at::Tensor {
    return i < stack.size() && stack[i].isTensor() ? stack[i].toTensor() : at::Tensor();
  };
  auto sameDtype = [&](const at::Tensor& t) {
    if (t.defined() && t.scalar_type() != in.scalar_type()) reject("mixed dtypes");
  };
  auto perChannel = [&](const at::Tensor& t, int64_t c) {
    if (t.defined() && (t.dim() != 1 || t.size(0) != c)) reject("a per-channel argument of another size");
  };
  const bool is_conv = kind == "aten::_convolution" || kind == "aten::convolution" || kind == "aten::conv1d" ||
                       kind == "aten::conv2d" || kind == "aten::conv3d";
  if (is_conv) {
    const bool general = kind == "aten::_convolution" || kind == "aten::convolution";
    if (stack.size() < 7 || !stack[1].isTensor()) return false;
    const at::Tensor w = stack[1].toTensor();
    sameDtype(w);
    sameDtype(optTensor(2));
    if (!at::isFloatingType(in.scalar_type())) reject("a non-float input");
    const int64_t k = w.dim() - 2;
    if (k < 1 || k > 3) reject("a weight of rank " + std::to_string(w.dim()));
    const bool batched = in.dim() == w.dim();
    if (!batched && in.dim() != w.dim() - 1) reject("an input of rank " + std::to_string(in.dim()));
    std::vector<int64_t> x = in.sizes().vec();
    if (!batched) x.insert(x.begin(), 1);
    auto expand = [&](const c10::IValue& v, const char* what) {
      if (!v.isIntList()) reject(std::string("a non-list ") + what);
      std::vector<int64_t> l = v.toIntVector();
      if (l.size() == 1) l.assign(static_cast<size_t>(k), l[0]);
      if (l.size() != static_cast<size_t>(k)) reject(std::string("a ") + what + " of another rank");
      return l;
    };
    const bool transposed = general ? stack[6].toBool() : false;
    const int64_t groups = general ? (stack.size() > 8 ? stack[8].toInt() : 1) : stack[6].toInt();
    if (groups < 1) reject("groups < 1");
    std::vector<int64_t> stride = expand(stack[3], "stride"), dilation = expand(stack[5], "dilation");
    std::vector<int64_t> padding(static_cast<size_t>(k), 0);
    bool same = false;
    if (stack[4].isString()) {
      if (stack[4].toStringRef() == "same") same = true;
      else if (stack[4].toStringRef() != "valid") reject("padding '" + stack[4].toStringRef() + "'");
    } else {
      padding = expand(stack[4], "padding");
    }
    std::vector<int64_t> out_pad(static_cast<size_t>(k), 0);
    if (transposed) out_pad = expand(stack[7], "output_padding");
    for (int64_t i = 0; i < k; ++i)
      if (stride[i] < 1 || dilation[i] < 1 || padding[i] < 0 || out_pad[i] < 0) reject("a bad stride/padding/dilation");
    std::vector<int64_t> y{x[0]};
    if (!transposed) {
      if (x[1] != w.size(1) * groups || w.size(0) % groups != 0) reject("channels that do not match");
      y.push_back(w.size(0));
    } else {
      if (x[1] != w.size(0) || w.size(0) % groups != 0) reject("channels that do not match");
      y.push_back(w.size(1) * groups);
    }
    perChannel(optTensor(2), y[1]);
    for (int64_t i = 0; i < k; ++i) {
      const int64_t n = x[2 + i], kk = w.size(2 + i);
      int64_t o;
      if (same) {
        for (auto s2 : stride)
          if (s2 != 1) reject("padding 'same' with a stride");
        o = n;
      } else if (!transposed) {
        const int64_t span = dilation[i] * (kk - 1) + 1;
        if (n + 2 * padding[i] < span) reject("a kernel larger than the padded input");
        o = (n + 2 * padding[i] - span) / stride[i] + 1;
      } else {
        o = (n - 1) * stride[i] - 2 * padding[i] + dilation[i] * (kk - 1) + out_pad[i] + 1;
      }
      if (o <= 0) reject("an empty output");
      y.push_back(o);
    }
    if (!batched) y.erase(y.begin());
    stack.clear();
    stack.emplace_back(at::empty(y, in.options()));
    return true;
  }
  // Elementwise ops with no Meta kernel: the input's shape and dtype.
  static const std::unordered_set<std::string> unary = {
      "aten::relu", "aten::relu_", "aten::relu6", "aten::relu6_", "aten::hardtanh", "aten::hardtanh_",
      "aten::hardswish", "aten::hardswish_", "aten::abs", "aten::abs_"};
  if (unary.count(kind)) {
    if (in.scalar_type() == at::kBool || in.is_complex()) return false;
    if (kind.rfind("aten::hard", 0) == 0 && !at::isFloatingType(in.scalar_type())) return false;
    for (size_t i = 1; i < stack.size(); ++i)
      if (!stack[i].isScalar() && !stack[i].isNone()) return false;  // only the Scalar bounds of hardtanh
    at::Tensor y = at::empty(in.sizes(), in.options());
    stack.clear();
    stack.emplace_back(std::move(y));
    return true;
  }
  if (kind == "aten::prelu") {
    if (stack.size() != 2 || !stack[1].isTensor() || !at::isFloatingType(in.scalar_type())) return false;
    const at::Tensor w = stack[1].toTensor();
    sameDtype(w);
    const int64_t c = in.dim() >= 2 ? in.size(1) : 1;
    if (w.numel() != 1 && w.numel() != c) reject("a weight of another size");
    at::Tensor y = at::empty(in.sizes(), in.options());
    stack.clear();
    stack.emplace_back(std::move(y));
    return true;
  }
  if (kind == "aten::where") {  // where.self(Tensor condition, Tensor self, Tensor other)
    if (stack.size() != 3 || !stack[1].isTensor() || !stack[2].isTensor()) return false;
    const at::Tensor a = stack[1].toTensor(), b = stack[2].toTensor();
    if (in.scalar_type() != at::kBool && in.scalar_type() != at::kByte) reject("a condition that is not bool");
    if (a.scalar_type() != b.scalar_type()) reject("mixed dtypes");  // 1.13 requires the same dtype
    std::vector<int64_t> shape = at::infer_size(at::infer_size(in.sizes(), a.sizes()), b.sizes());
    stack.clear();
    stack.emplace_back(at::empty(shape, a.options()));
    return true;
  }
  if (kind == "aten::embedding") {  // embedding(Tensor weight, Tensor indices, ...)
    if (stack.size() < 2 || !stack[1].isTensor()) return false;
    const at::Tensor idx = stack[1].toTensor();
    if (in.dim() != 2) reject("a weight that is not 2-D");
    if (idx.scalar_type() != at::kLong && idx.scalar_type() != at::kInt) reject("indices that are not integers");
    std::vector<int64_t> shape = idx.sizes().vec();
    shape.push_back(in.size(1));
    stack.clear();
    stack.emplace_back(at::empty(shape, in.options()));
    return true;
  }
  // Normalizations (and the fused encoder layer of nn.TransformerEncoderLayer's fast path): the
  // output has the input's shape and dtype.
  if (kind == "aten::_transformer_encoder_layer_fwd") {
    if (stack.size() < 18 || in.dim() != 3 || !stack[1].isInt() || !at::isFloatingType(in.scalar_type()))
      return false;
    if (stack[1].toInt() != in.size(2)) reject("embed_dim does not match the input");
    const at::Tensor qkv = optTensor(3), proj = optTensor(5);
    if (!qkv.defined() || qkv.dim() != 2 || qkv.size(1) != in.size(2) || qkv.size(0) != 3 * in.size(2))
      reject("qkv weights of another shape");
    if (!proj.defined() || proj.dim() != 2 || proj.size(0) != in.size(2)) reject("a projection of another shape");
    checkMask(18, in.size(0), in.size(1));
  } else if (kind == "aten::batch_norm" || kind == "aten::instance_norm") {
    if (stack.size() < 5 || in.dim() < 2 || !at::isFloatingType(in.scalar_type())) return false;
    for (size_t i = 1; i <= 4; ++i) perChannel(optTensor(i), in.size(1));
  } else if (kind == "aten::layer_norm") {
    if (stack.size() < 3 || !stack[1].isIntList() || !at::isFloatingType(in.scalar_type())) return false;
    const std::vector<int64_t> ns = stack[1].toIntVector();
    if (ns.empty() || ns.size() > static_cast<size_t>(in.dim())) reject("normalized_shape of another rank");
    for (size_t i = 0; i < ns.size(); ++i)
      if (in.size(in.dim() - static_cast<int64_t>(ns.size()) + static_cast<int64_t>(i)) != ns[i])
        reject("normalized_shape does not match the input");
    for (size_t i = 2; i <= 3; ++i) {
      at::Tensor t = optTensor(i);
      if (t.defined() && t.sizes().vec() != ns) reject("a weight or bias of another shape");
    }
  } else if (kind == "aten::group_norm") {
    if (stack.size() < 4 || in.dim() < 2 || !stack[1].isInt() || !at::isFloatingType(in.scalar_type())) return false;
    const int64_t groups = stack[1].toInt();
    if (groups < 1 || in.size(1) % groups != 0) reject("channels not divisible by the groups");
    for (size_t i = 2; i <= 3; ++i) perChannel(optTensor(i), in.size(1));
  } else {
    return false;
  }
  // Every tensor argument but the encoder layer's mask (bool or float) has the input's dtype.
  const size_t last = kind == "aten::_transformer_encoder_layer_fwd" ? 18 : stack.size();
  for (size_t i = 1; i < stack.size() && i < last; ++i)
    sameDtype(stack[i].isTensor() ? stack[i].toTensor() : at::Tensor());
  at::Tensor y = at::empty(in.sizes(), in.options());
  stack.clear();
  stack.emplace_back(std::move(y));
  return true;
}

}  // namespace oxport
