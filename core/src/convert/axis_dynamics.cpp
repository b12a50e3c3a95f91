#include "convert/axis_dynamics.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>

namespace oxport::convert {

namespace {

using ts::Node;
using ts::Value;

bool isStatic(const Value* v) { return v->isConstant() || v->from_weights; }

// The input named `name` of `n`, else input `index`, else nullptr.
const Value* arg(const Node& n, const std::string& name, size_t index) {
  for (size_t i = 0; i < n.inputs.size() && i < n.arg_names.size(); ++i)
    if (n.arg_names[i] == name) return n.inputs[i];
  if (!n.arg_names.empty() && n.arg_names.size() == n.inputs.size()) return nullptr;  // the overload lacks it
  return index < n.inputs.size() ? n.inputs[index] : nullptr;
}

std::optional<int64_t> constInt(const Value* v) {
  if (v && v->constant && v->constant->isInt()) return v->constant->toInt();
  return std::nullopt;
}

// int or int[] constant.
std::optional<std::vector<int64_t>> constInts(const Value* v) {
  if (!v || !v->constant) return std::nullopt;
  if (v->constant->isInt()) return std::vector<int64_t>{v->constant->toInt()};
  if (!v->constant->isList()) return std::nullopt;
  std::vector<int64_t> out;
  for (const auto& e : v->constant->list()) {
    if (!e.isInt()) return std::nullopt;
    out.push_back(e.toInt());
  }
  return out;
}

std::string baseKind(const std::string& kind) {
  std::string k = kind.substr(kind.find("::") == std::string::npos ? 0 : kind.find("::") + 2);
  if (k.size() > 1 && k.back() == '_' && k[k.size() - 2] != '_') k.pop_back();  // add_ -> add
  return k;
}

// Ops whose result has the broadcast shape of their tensor arguments.
bool isElementwise(const std::string& k) {
  static const std::set<std::string> s = {
      "add", "sub", "rsub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod", "pow", "where",
      "masked_fill", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "logical_not",
      "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "maximum", "minimum", "fmax", "fmin", "atan2",
      "hypot", "relu", "relu6", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish", "hardswish",
      "hardsigmoid", "hardtanh", "sigmoid", "tanh", "softplus", "softsign", "tanhshrink", "hardshrink",
      "softshrink", "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt", "abs", "neg",
      "reciprocal", "sign", "sgn", "floor", "ceil", "round", "trunc", "frac", "sin", "cos", "tan", "asin", "acos",
      "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erfc", "erfinv", "clamp", "clamp_min", "clamp_max",
      "clip", "threshold", "dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout", "contiguous",
      "clone", "detach", "to", "type_as", "float", "int", "long", "half", "bool", "double", "prelu", "lerp",
      "addcmul", "addcdiv", "square", "nan_to_num", "isnan", "isinf", "isfinite", "softmax", "log_softmax",
      "batch_norm", "layer_norm", "group_norm", "instance_norm", "cumsum", "cumprod", "fill", "zero", "copy",
      "zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like", "xlogy", "logit",
      "sigmoid_backward", "rrelu", "quantize_per_tensor", "dequantize", "fake_quantize_per_tensor_affine",
      "fake_quantize_per_channel_affine", "_fake_quantize_learnable_per_tensor_affine",
      "_fake_quantize_learnable_per_channel_affine", "fused_moving_avg_obs_fake_quant", "glu_inplace_unused",
      "real", "imag", "angle", "complex", "polar", "conj", "_conj", "conj_physical", "resolve_conj", "resolve_neg"};
  return s.count(k) > 0;
}

// Ops whose result's size follows the inputs' data, not only their shapes.
bool isDataDependent(const std::string& k) {
  static const std::set<std::string> s = {"nonzero", "nonzero_numpy", "argwhere", "unique_dim", "_unique",
                                          "_unique2", "unique_consecutive", "unique_dim_consecutive",
                                          "masked_select", "repeat_interleave", "bincount", "nms",
                                          "_reshape_from_tensor", "index", "where"};
  return s.count(k) > 0;
}

// Tensor -> number.
bool isTensorToScalar(const std::string& k) {
  static const std::set<std::string> s = {"Int", "Float", "Bool", "item", "ScalarImplicit", "IntImplicit",
                                          "FloatImplicit", "tolist", "_local_scalar_dense"};
  return s.count(k) > 0;
}

// Reductions over `dim` (int or int[]) with an optional keepdim.
bool isReduction(const std::string& k) {
  static const std::set<std::string> s = {"mean", "sum", "amax", "amin", "prod", "std", "var", "logsumexp",
                                          "argmax", "argmin", "max", "min", "all", "any", "norm",
                                          "linalg_vector_norm", "nansum", "nanmean", "median", "mode"};
  return s.count(k) > 0;
}

int spatialDimsOf(const std::string& k) {
  for (char c : k)
    if (c >= '1' && c <= '3') return c - '0';
  return -1;
}

}  // namespace

AxisDynamics::AxisDynamics(const ts::Graph& g,
                           const std::unordered_map<const ts::Value*, std::vector<bool>>& inputs) {
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Value* in = g.inputs[i];
    Facts f;
    f.axes.assign(static_cast<size_t>(in->meta.rank()), false);
    if (auto it = inputs.find(in); it != inputs.end())
      for (size_t a = 0; a < f.axes.size() && a < it->second.size(); ++a) {
        f.axes[a] = it->second[a];
        any_dynamic_input_ = any_dynamic_input_ || it->second[a];
      }
    f.data = i >= g.input_param_names.size() || g.input_param_names[i].empty();
    facts_[in] = std::move(f);
  }
  visitBlock(g.nodes);
}

const AxisDynamics::Facts* AxisDynamics::find(const Value* v) const {
  auto it = facts_.find(v);
  return it == facts_.end() ? nullptr : &it->second;
}

bool AxisDynamics::anyAxis(const Value* v) const {
  if (isStatic(v)) return false;
  const Facts* f = find(v);
  if (!f) return true;
  for (bool b : f->axes)
    if (b) return true;
  return false;
}

bool AxisDynamics::axis(const Value* v, int64_t a) const {
  if (isStatic(v)) return false;
  const Facts* f = find(v);
  if (a < 0) a += v->meta.rank();
  if (!f || a < 0 || a >= static_cast<int64_t>(f->axes.size())) return true;
  return f->axes[static_cast<size_t>(a)];
}

bool AxisDynamics::dataVaries(const Value* v) const {
  if (isStatic(v)) return false;
  const Facts* f = find(v);
  return !f || f->data;
}

bool AxisDynamics::axisMayVary(const Value* v, int64_t a) const { return axis(v, a); }

bool AxisDynamics::mayVary(const Value* v) const {
  if (v->isTensor()) return anyAxis(v);
  if (isStatic(v)) return false;
  const Facts* f = find(v);
  return !f || f->value;
}

void AxisDynamics::visitBlock(const std::vector<ts::Node*>& nodes) {
  for (const Node* n : nodes) visit(*n);
}

void AxisDynamics::visit(const Node& n) {
  const std::string k = baseKind(n.kind);
  // What any input brings: the value of a number or list, the sizes and the data of a tensor.
  bool any_value = false, any_shape = false, any_data = false;
  for (const Value* in : n.inputs) {
    if (in->isTensor()) {
      any_shape = any_shape || anyAxis(in);
      any_data = any_data || dataVaries(in);
    } else {
      any_value = any_value || mayVary(in);
    }
  }
  // If and Loop: a loop-carried value changes from one iteration to the next, and a branch may
  // give another shape than the other: everything in and out of them may vary.
  if (!n.blocks.empty()) {
    for (const auto& b : n.blocks) {
      for (const Value* in : b->inputs) {
        Facts f;
        f.axes.assign(static_cast<size_t>(std::max(in->meta.rank(), 0)), true);
        f.data = f.value = true;
        facts_[in] = std::move(f);
      }
      visitBlock(b->nodes);
    }
    for (const Value* o : n.outputs) {
      Facts f;
      f.axes.assign(static_cast<size_t>(o->meta.rank()), !isStatic(o));
      f.data = f.value = !isStatic(o);
      facts_[o] = std::move(f);
    }
    return;
  }
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    const Value* o = n.outputs[i];
    Facts f;
    if (isStatic(o)) {
      f.axes.assign(static_cast<size_t>(o->meta.rank()), false);
      facts_[o] = std::move(f);
      continue;
    }
    if (o->isTensor()) {
      f.data = any_data || any_value || any_shape;
      if (k == "NumToTensor" && !n.inputs.empty()) f.data = mayVary(n.inputs[0]);
      if (k == "_shape_as_tensor" && !n.inputs.empty()) f.data = anyAxis(n.inputs[0]);
      if (!inferTensor(n, i, f)) {
        const bool all = any_shape || any_value || (isDataDependent(k) && any_data);
        f.axes.assign(static_cast<size_t>(o->meta.rank()), all);
      }
      facts_[o] = std::move(f);
      continue;
    }
    // Numbers, lists and tuples.
    const Value* x = n.inputs.empty() ? nullptr : n.inputs[0];
    f.value = any_value || any_shape || any_data;
    if ((k == "size" || k == "shape") && x && x->isTensor()) {
      const Value* d = n.inputs.size() > 1 ? n.inputs[1] : nullptr;
      if (!d) {
        for (int64_t a = 0; a < x->meta.rank(); ++a) f.elems.push_back(axis(x, a));
        f.value = anyAxis(x);
      } else if (auto dim = constInt(d)) {
        f.value = axis(x, *dim);
      } else {
        f.value = anyAxis(x);
      }
    } else if (k == "dim" && x && x->isTensor()) {
      f.value = false;
    } else if ((k == "len" && x && x->isTensor())) {
      f.value = axis(x, 0);
    } else if (k == "numel" && x && x->isTensor()) {
      f.value = anyAxis(x);
    } else if (isTensorToScalar(k) && x && x->isTensor()) {
      f.value = dataVaries(x) || anyAxis(x);
    } else if ((k == "ListConstruct" || k == "TupleConstruct") && !n.inputs.empty()) {
      bool numbers = true;
      for (const Value* in : n.inputs) {
        numbers = numbers && !in->isTensor();
        f.elems.push_back(mayVary(in));
      }
      if (!numbers) f.elems.clear();
    } else if ((k == "ListUnpack" || k == "TupleUnpack") && x) {
      const Facts* lf = find(x);
      if (lf && i < lf->elems.size()) f.value = lf->elems[i];
    } else if ((k == "__getitem__" || k == "TupleIndex" || k == "select") && x && !x->isTensor() &&
               n.inputs.size() > 1) {
      const Facts* lf = find(x);
      auto idx = constInt(n.inputs[1]);
      if (lf && idx && !lf->elems.empty()) {
        int64_t j = *idx < 0 ? *idx + static_cast<int64_t>(lf->elems.size()) : *idx;
        if (j >= 0 && j < static_cast<int64_t>(lf->elems.size())) f.value = lf->elems[static_cast<size_t>(j)];
      }
    }
    facts_[o] = std::move(f);
  }
}

// Per-axis rules for the ops that carry most sizes from the inputs to the ops that need them:
// false when `n` has none (the caller then marks every axis as dynamic when anything read is).
bool AxisDynamics::inferTensor(const Node& n, size_t out, Facts& f) const {
  const std::string k = baseKind(n.kind);
  const Value* o = n.outputs[out];
  const int64_t r = o->meta.rank();
  if (r < 0 || n.inputs.empty()) return false;
  const Value* x = n.inputs[0];
  auto& ax = f.axes;
  ax.assign(static_cast<size_t>(r), false);
  auto S = [&](const Value* v, int64_t a) { return axis(v, a); };
  // A number or list argument: whether it may change.
  auto V = [&](const Value* v) { return v && mayVary(v); };
  // Elements of an int[] argument: static numbers false, numbers read at run time their facts.
  auto listElems = [&](const Value* v) -> std::optional<std::vector<bool>> {
    if (!v) return std::nullopt;
    if (auto c = constInts(v)) return std::vector<bool>(c->size(), false);
    if (v->producer && v->producer->kind == "prim::ListConstruct") {
      std::vector<bool> e;
      for (const Value* el : v->producer->inputs) e.push_back(!constInt(el) && V(el));
      return e;
    }
    return std::nullopt;
  };

  if (isElementwise(k)) {
    for (const Value* in : n.inputs) {
      if (!in->isTensor()) continue;
      const int64_t ir = in->meta.rank();
      if (ir > r) return false;
      for (int64_t j = 0; j < ir; ++j) ax[static_cast<size_t>(r - ir + j)] = ax[static_cast<size_t>(r - ir + j)] || S(in, j);
    }
    return true;
  }
  const bool conv = k == "_convolution" || k == "convolution" || k == "_convolution_mode" || k.rfind("conv", 0) == 0;
  const bool pool = k.find("max_pool") != std::string::npos || k.find("avg_pool") != std::string::npos;
  if ((conv || pool) && k.rfind("adaptive", 0) != 0) {
    const Value* w = conv ? arg(n, "weight", 1) : nullptr;
    if (conv && (!w || !w->isTensor())) return false;
    const int64_t nd = conv ? w->meta.rank() - 2 : spatialDimsOf(k);
    if (nd <= 0 || x->meta.rank() != r || (r != nd + 2 && r != nd + 1)) return false;
    bool scalars = false;  // strides, padding ... computed at run time
    for (const Value* in : n.inputs)
      if (!in->isTensor()) scalars = scalars || V(in);
    const bool wv = w && anyAxis(w);
    const int64_t c = r - nd - 1;  // the channel axis
    for (int64_t a = 0; a < c; ++a) ax[static_cast<size_t>(a)] = S(x, a);
    ax[static_cast<size_t>(c)] = conv ? wv : S(x, c);
    for (int64_t a = c + 1; a < r; ++a) ax[static_cast<size_t>(a)] = S(x, a) || wv || scalars;
    return true;
  }
  if (k.rfind("adaptive_", 0) == 0 && (k.find("pool") != std::string::npos)) {
    const int64_t nd = spatialDimsOf(k);
    const auto sizes = listElems(arg(n, "output_size", 1));
    if (nd <= 0 || !sizes || r != x->meta.rank()) return false;
    for (int64_t a = 0; a < r - nd; ++a) ax[static_cast<size_t>(a)] = S(x, a);
    for (int64_t a = 0; a < nd; ++a)
      ax[static_cast<size_t>(r - nd + a)] = sizes->size() == 1 ? (*sizes)[0]
                                            : a < static_cast<int64_t>(sizes->size()) ? (*sizes)[static_cast<size_t>(a)]
                                                                                        : true;
    return true;
  }
  if (k.rfind("upsample_", 0) == 0) {
    const int64_t nd = spatialDimsOf(k);
    if (nd <= 0 || r != x->meta.rank()) return false;
    for (int64_t a = 0; a < r - nd; ++a) ax[static_cast<size_t>(a)] = S(x, a);
    const Value* size = arg(n, "output_size", 1);
    if (size && !size->isNone()) {
      auto e = listElems(size);
      if (!e || static_cast<int64_t>(e->size()) != nd) return false;
      for (int64_t a = 0; a < nd; ++a) ax[static_cast<size_t>(r - nd + a)] = (*e)[static_cast<size_t>(a)];
      return true;
    }
    bool scales = false;
    for (size_t i = 1; i < n.inputs.size(); ++i)
      if (!n.inputs[i]->isTensor()) scales = scales || V(n.inputs[i]);
    for (int64_t a = r - nd; a < r; ++a) ax[static_cast<size_t>(a)] = S(x, a) || scales;
    return true;
  }
  if (k == "linear" && n.inputs.size() >= 2) {
    if (x->meta.rank() != r) return false;
    for (int64_t a = 0; a + 1 < r; ++a) ax[static_cast<size_t>(a)] = S(x, a);
    ax[static_cast<size_t>(r - 1)] = anyAxis(n.inputs[1]);
    return true;
  }
  if ((k == "matmul" || k == "bmm" || k == "mm") && n.inputs.size() >= 2) {
    const Value* b = n.inputs[1];
    const int64_t ra = x->meta.rank(), rb = b->meta.rank();
    if (ra < 2 || rb < 2) return false;
    ax[static_cast<size_t>(r - 1)] = S(b, rb - 1);
    ax[static_cast<size_t>(r - 2)] = S(x, ra - 2);
    for (int64_t j = 3; j <= r; ++j) {
      bool v = false;
      if (ra - j >= 0) v = v || S(x, ra - j);
      if (rb - j >= 0) v = v || S(b, rb - j);
      ax[static_cast<size_t>(r - j)] = v;
    }
    return true;
  }
  if (k == "flatten" && n.inputs.size() >= 3) {
    auto s = constInt(n.inputs[1]), e = constInt(n.inputs[2]);
    const int64_t xr = x->meta.rank();
    if (!s || !e || xr == 0) return false;
    int64_t start = *s < 0 ? *s + xr : *s, end = *e < 0 ? *e + xr : *e;
    if (r != xr - (end - start)) return false;
    for (int64_t a = 0; a < start; ++a) ax[static_cast<size_t>(a)] = S(x, a);
    for (int64_t a = start; a <= end; ++a) ax[static_cast<size_t>(start)] = ax[static_cast<size_t>(start)] || S(x, a);
    for (int64_t a = end + 1; a < xr; ++a) ax[static_cast<size_t>(a - (end - start))] = S(x, a);
    return true;
  }
  if ((k == "view" || k == "reshape" || k == "_unsafe_view") && n.inputs.size() >= 2) {
    // Each size: a static number is fixed; a number read at run time moves as it does; -1 takes
    // what the others leave, so it moves with every axis of x and with the other sizes.
    std::vector<std::optional<int64_t>> fixed;
    std::vector<const Value*> els;
    if (auto c = constInts(n.inputs[1])) {
      for (int64_t s : *c) fixed.emplace_back(s), els.push_back(nullptr);
    } else if (n.inputs[1]->producer && n.inputs[1]->producer->kind == "prim::ListConstruct") {
      for (const Value* el : n.inputs[1]->producer->inputs) fixed.push_back(constInt(el)), els.push_back(el);
    } else {
      return false;
    }
    if (static_cast<int64_t>(fixed.size()) != r) return false;
    bool any_elem = false;
    for (const Value* el : els) any_elem = any_elem || (el && V(el));
    for (int64_t a = 0; a < r; ++a) {
      const auto& c = fixed[static_cast<size_t>(a)];
      const Value* el = els[static_cast<size_t>(a)];
      const bool minus_one = c ? *c == -1 : (el->example && el->example->isInt() && el->example->toInt() == -1);
      ax[static_cast<size_t>(a)] = (!c && V(el)) || (minus_one && (anyAxis(x) || any_elem));
    }
    return true;
  }
  if (k == "expand" && n.inputs.size() >= 2) {
    auto e = listElems(n.inputs[1]);
    if (!e || static_cast<int64_t>(e->size()) != r) return false;
    const int64_t xr = x->meta.rank();
    const auto sizes = constInts(n.inputs[1]);
    const auto* lc = n.inputs[1]->producer && n.inputs[1]->producer->kind == "prim::ListConstruct"
                         ? n.inputs[1]->producer
                         : nullptr;
    for (int64_t a = 0; a < r; ++a) {
      std::optional<int64_t> c = sizes ? std::optional<int64_t>((*sizes)[static_cast<size_t>(a)])
                                       : (lc ? constInt(lc->inputs[static_cast<size_t>(a)]) : std::nullopt);
      const int64_t xa = a - (r - xr);
      if (c && *c == -1) ax[static_cast<size_t>(a)] = xa >= 0 ? S(x, xa) : true;
      else ax[static_cast<size_t>(a)] = (*e)[static_cast<size_t>(a)];
    }
    return true;
  }
  if (k == "permute" && n.inputs.size() >= 2) {
    auto d = constInts(n.inputs[1]);
    if (!d || static_cast<int64_t>(d->size()) != r) return false;
    for (int64_t a = 0; a < r; ++a) ax[static_cast<size_t>(a)] = S(x, (*d)[static_cast<size_t>(a)]);
    return true;
  }
  if ((k == "transpose" || k == "swapaxes") && n.inputs.size() >= 3) {
    auto d0 = constInt(n.inputs[1]), d1 = constInt(n.inputs[2]);
    if (!d0 || !d1 || x->meta.rank() != r) return false;
    const int64_t a0 = *d0 < 0 ? *d0 + r : *d0, a1 = *d1 < 0 ? *d1 + r : *d1;
    for (int64_t a = 0; a < r; ++a) ax[static_cast<size_t>(a)] = S(x, a == a0 ? a1 : a == a1 ? a0 : a);
    return true;
  }
  if (k == "t" && x->meta.rank() == r) {
    for (int64_t a = 0; a < r; ++a) ax[static_cast<size_t>(a)] = S(x, r - 1 - a);
    return true;
  }
  if (k == "unsqueeze" && n.inputs.size() >= 2) {
    auto d = constInt(n.inputs[1]);
    if (!d || r != x->meta.rank() + 1) return false;
    const int64_t at = *d < 0 ? *d + r : *d;
    for (int64_t a = 0, j = 0; a < r; ++a) ax[static_cast<size_t>(a)] = a == at ? false : S(x, j++);
    return true;
  }
  // One axis dropped: squeeze(x, dim), select(x, dim, index).
  if ((k == "squeeze" || (k == "select" && n.inputs.size() >= 3)) && n.inputs.size() >= 2 &&
      r == x->meta.rank() - 1) {
    auto d = constInt(n.inputs[1]);
    if (!d) return false;
    const int64_t at = *d < 0 ? *d + x->meta.rank() : *d;
    for (int64_t a = 0, j = 0; j < x->meta.rank(); ++j)
      if (j != at) ax[static_cast<size_t>(a++)] = S(x, j);
    return true;
  }
  if ((k == "cat" || k == "concat" || k == "stack") && x->producer && x->producer->kind == "prim::ListConstruct") {
    auto d = constInt(arg(n, "dim", 1));
    if (!d) return false;
    const bool stack = k == "stack";
    const int64_t at = *d < 0 ? *d + r : *d;
    for (const Value* t : x->producer->inputs) {
      if (!t->isTensor()) return false;
      const int64_t tr = t->meta.rank();
      if (tr != (stack ? r - 1 : r)) {
        if (!stack && tr == 1 && t->meta.shape == std::vector<int64_t>{0}) continue;  // legacy empty
        return false;
      }
      for (int64_t a = 0, j = 0; a < r; ++a) {
        if (stack && a == at) continue;
        ax[static_cast<size_t>(a)] = ax[static_cast<size_t>(a)] || S(t, j++);
      }
    }
    return true;
  }
  if (isReduction(k) && (n.arg_names.empty() || arg(n, "dim", 1))) {
    const Value* dv = arg(n, "dim", 1);
    const Value* kv = arg(n, "keepdim", 2);
    if (!dv || !dv->isConstant() || (dv->isTensor())) return false;
    auto dims = constInts(dv);
    auto keep = kv && kv->constant && kv->constant->isBool() ? std::optional<bool>(kv->constant->toInt() != 0)
                                                               : std::nullopt;
    const int64_t xr = x->meta.rank();
    if (!dims || !keep) return false;
    std::vector<bool> reduced(static_cast<size_t>(xr), dims->empty());
    for (int64_t d : *dims) {
      const int64_t a = d < 0 ? d + xr : d;
      if (a < 0 || a >= xr) return false;
      reduced[static_cast<size_t>(a)] = true;
    }
    int64_t j = 0;
    for (int64_t a = 0; a < xr; ++a) {
      if (reduced[static_cast<size_t>(a)] && !*keep) continue;
      if (j >= r) return false;
      ax[static_cast<size_t>(j++)] = reduced[static_cast<size_t>(a)] ? false : S(x, a);
    }
    return j == r;
  }
  if ((k == "slice" || k == "narrow") && n.inputs.size() >= 3 && r == x->meta.rank()) {
    auto d = constInt(n.inputs[1]);
    if (!d) return false;
    const int64_t at = *d < 0 ? *d + r : *d;
    for (int64_t a = 0; a < r; ++a) ax[static_cast<size_t>(a)] = S(x, a);
    bool bounds = false;
    for (size_t i = 2; i < n.inputs.size(); ++i) bounds = bounds || V(n.inputs[i]) || anyAxis(n.inputs[i]);
    // narrow's size is its length; a slice's also follows the sliced axis (its end clamps to it).
    ax[static_cast<size_t>(at)] = k == "narrow" ? V(n.inputs.back()) : S(x, at) || bounds;
    return true;
  }
  // torch.fft: each axis keeps its input's length, or gets a length n / s that may itself vary.
  if (k.rfind("fft_", 0) == 0 && k.find("freq") == std::string::npos && r == x->meta.rank()) {
    bool lengths = false;
    for (const Value* in : n.inputs)
      if (!in->isTensor()) lengths = lengths || V(in);
    for (int64_t a = 0; a < r; ++a) ax[static_cast<size_t>(a)] = S(x, a) || lengths;
    return true;
  }
  if (k == "view_as_real" && r == x->meta.rank() + 1) {
    for (int64_t a = 0; a + 1 < r; ++a) ax[static_cast<size_t>(a)] = S(x, a);
    return true;
  }
  if (k == "view_as_complex" && r + 1 == x->meta.rank()) {
    for (int64_t a = 0; a < r; ++a) ax[static_cast<size_t>(a)] = S(x, a);
    return true;
  }
  if (k == "index_select" && n.inputs.size() >= 3 && r == x->meta.rank()) {
    auto d = constInt(n.inputs[1]);
    if (!d) return false;
    const int64_t at = *d < 0 ? *d + r : *d;
    for (int64_t a = 0; a < r; ++a) ax[static_cast<size_t>(a)] = a == at ? anyAxis(n.inputs[2]) : S(x, a);
    return true;
  }
  if (k == "embedding" && n.inputs.size() >= 2) {
    const Value* idx = n.inputs[1];
    if (r != idx->meta.rank() + 1) return false;
    for (int64_t a = 0; a + 1 < r; ++a) ax[static_cast<size_t>(a)] = S(idx, a);
    ax[static_cast<size_t>(r - 1)] = anyAxis(x);
    return true;
  }
  if ((k == "pixel_shuffle" || k == "pixel_unshuffle") && r == x->meta.rank() && r >= 3) {
    for (int64_t a = 0; a < r; ++a) ax[static_cast<size_t>(a)] = a == r - 3 ? false : S(x, a);
    return true;
  }
  if ((k == "pad" || k == "constant_pad_nd" || k.find("reflection_pad") == 0 || k.find("replication_pad") == 0) &&
      r == x->meta.rank() && n.inputs.size() >= 2) {
    if (V(n.inputs[1])) return false;
    for (int64_t a = 0; a < r; ++a) ax[static_cast<size_t>(a)] = S(x, a);
    return true;
  }
  // An element of a split, chunk or unbind of x (ListUnpack or getitem of its list).
  if ((k == "ListUnpack" || k == "__getitem__") && x->producer) {
    const Node& p = *x->producer;
    const std::string pk = baseKind(p.kind);
    if (pk != "split" && pk != "chunk" && pk != "split_with_sizes" && pk != "unbind" && pk != "unsafe_split")
      return false;
    const Value* src = p.inputs[0];
    auto d = constInt(arg(p, "dim", pk == "unbind" ? 1 : 2));
    if (!d || !src->isTensor()) return false;
    const int64_t sr = src->meta.rank();
    const int64_t at = *d < 0 ? *d + sr : *d;
    bool sizes_vary = false;
    for (size_t i = 1; i < p.inputs.size(); ++i) sizes_vary = sizes_vary || V(p.inputs[i]);
    if (pk == "unbind") {
      if (r != sr - 1) return false;
      for (int64_t a = 0, j = 0; j < sr; ++j)
        if (j != at) ax[static_cast<size_t>(a++)] = S(src, j);
      return true;
    }
    if (r != sr) return false;
    for (int64_t a = 0; a < r; ++a) ax[static_cast<size_t>(a)] = S(src, a);
    ax[static_cast<size_t>(at)] = pk == "split_with_sizes" ? sizes_vary : S(src, at) || sizes_vary;
    return true;
  }
  ax.clear();
  return false;
}

}  // namespace oxport::convert
