#include "convert/registry.h"

#include <mutex>

namespace oxport::convert {

void Registry::add(const std::string& kind, ConvertFn fn, int min_opset, int max_opset) {
  OpEntry e;
  e.kind = kind;
  e.min_opset = min_opset;
  e.max_opset = max_opset;
  e.fn = std::move(fn);
  e.family = family_;
  entries_[kind].push_back(std::move(e));
}

void Registry::addComplex(const std::string& kind, ConvertFn fn, int min_opset, int max_opset) {
  add(kind, std::move(fn), min_opset, max_opset);
  entries_[kind].back().complex = true;
}

const OpEntry* Registry::find(const std::string& kind, int opset, bool complex) const {
  auto it = entries_.find(kind);
  if (it == entries_.end()) return nullptr;
  // The entry with the highest min_opset that still covers `opset`: the best form allowed.
  const OpEntry* best = nullptr;
  for (const auto& e : it->second)
    if (e.complex == complex && opset >= e.min_opset && opset <= e.max_opset &&
        (!best || e.min_opset > best->min_opset))
      best = &e;
  return best;
}

int Registry::minOpset(const std::string& kind) const {
  auto it = entries_.find(kind);
  if (it == entries_.end()) return 0;
  int m = 0;
  for (const auto& e : it->second)
    if (m == 0 || e.min_opset < m) m = e.min_opset;
  return m;
}

std::vector<std::string> Registry::kinds() const {
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const auto& [k, v] : entries_) out.push_back(k);
  return out;
}

const std::vector<OpEntry>& Registry::entries(const std::string& kind) const {
  static const std::vector<OpEntry> empty;
  auto it = entries_.find(kind);
  return it == entries_.end() ? empty : it->second;
}

const Registry& builtinRegistry() {
  static const Registry registry = [] {
    Registry r;
    // The explicit list of op families. A family that is not called here does not exist.
    struct Family { const char* name; void (*fn)(Registry&); };
    const Family families[] = {
        {"structural", registerStructuralOps}, {"conv", registerConvOps},
        {"norm", registerNormOps},             {"pool", registerPoolOps},
        {"activation", registerActivationOps}, {"elementwise", registerElementwiseOps},
        {"linear", registerLinearOps},         {"shape", registerShapeOps}, {"split", registerSplitOps},
        {"tensor", registerTensorOps},         {"reduce", registerReduceOps},
        {"math", registerMathOps},             {"sort", registerSortOps},
        {"index", registerIndexOps},
        {"resize", registerResizeOps},
        {"rnn", registerRnnOps},               {"attention", registerAttentionOps},
        {"quant", registerQuantOps},           {"control", registerControlOps},
        {"linalg", registerLinalgOps},         {"loss", registerLossOps},
        {"vision", registerVisionOps},         {"sequence", registerSequenceOps},
        {"special", registerSpecialOps},       {"rearrange", registerRearrangeOps},
        {"cumulative", registerCumulativeOps}, {"scatter_reduce", registerScatterReduceOps},
        {"loss_margin", registerMarginLossOps}, {"special_functions", registerSpecialFunctionOps},
        {"order_stats", registerOrderStatsOps}, {"products", registerProductOps},
        {"number_functions", registerNumberFunctionOps},
        {"linalg_small", registerSmallLinalgOps},
        {"linalg_qr", registerLinalgQrOps},
        {"float_tests", registerFloatTestOps},
        {"fold", registerFoldOps},
        {"resize_aa", registerResizeAaOps},
        {"unique", registerUniqueOps},
        {"spectral", registerSpectralOps},
        {"complex", registerComplexOps},
        {"ctc", registerCtcOps},
        {"grid_sample", registerGridSampleOps},
        {"stats", registerStatsOps},
    };
    for (const auto& f : families) {
      r.setFamily(f.name);
      f.fn(r);
    }
    return r;
  }();
  return registry;
}

const RefusedOp* refusedOp(const std::string& kind) {
  static const RefusedOp kRefused[] = {
#define OXPORT_REFUSED_OP(op, reason, action) {op, reason, action},
#include "convert/refused.def"
#undef OXPORT_REFUSED_OP
  };
  for (const auto& r : kRefused)
    if (kind == r.kind) return &r;
  return nullptr;
}

}  // namespace oxport::convert

#include "oxport/ops.h"

namespace oxport {

std::vector<OpSupport> supportedOps() {
  const auto& r = convert::builtinRegistry();
  std::vector<OpSupport> out;
  for (const auto& kind : r.kinds()) {
    OpSupport s;
    s.kind = kind;
    for (int o = kMinOpset; o <= kMaxOpset; ++o)
      if (r.find(kind, o) || r.find(kind, o, true)) s.opsets.push_back(o);
    if (s.opsets.empty()) continue;
    s.min_opset = s.opsets.front();
    s.max_opset = s.opsets.back();
    s.family = r.entries(kind).front().family;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace oxport
