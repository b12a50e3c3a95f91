// Rewrites that keep a correct graph correct in ONNX Runtime, whose graph optimizer changes some
// patterns into something that computes another value (see passes.h).
#include <unordered_map>
#include <unordered_set>

#include "onnx/passes.h"

namespace oxport::onnx_ir {

namespace {

bool isIntegral(DType t) {
  return t == DType::Int64 || t == DType::Int32 || t == DType::Int16 || t == DType::Int8 || t == DType::UInt8;
}

class CastGuard {
 public:
  explicit CastGuard(Graph& root) : root_(root) { collectNames(root); }

  int run(Graph& g) {
    std::unordered_map<std::string, DType> integer_casts;  // output -> the integer dtype it was cast to
    for (const auto& n : g.nodes) {
      if (n.op_type != "Cast" || !n.domain.empty() || n.outputs.size() != 1) continue;
      if (auto to = castTarget(n); to && isIntegral(*to)) integer_casts[n.outputs[0]] = *to;
    }
    int count = 0;
    std::vector<Node> out;
    out.reserve(g.nodes.size());
    for (auto& n : g.nodes) {
      for (auto& a : n.attributes)
        if (auto* sg = std::get_if<std::shared_ptr<Graph>>(&a.value); sg && *sg) count += run(**sg);
      auto from = n.inputs.size() == 1 ? integer_casts.find(n.inputs[0]) : integer_casts.end();
      if (n.op_type != "Cast" || !n.domain.empty() || castTarget(n) != DType::Bool || from == integer_casts.end()) {
        out.push_back(std::move(n));
        continue;
      }
      // x != 0 on the integer value, as Cast to bool computes it.
      std::string x = n.inputs[0];
      DType t = from->second;
      // Equal-7 takes int32/int64 only, and ONNX Runtime has no Equal kernel for the narrower ones.
      if (t != DType::Int32 && t != DType::Int64) {
        Node widen = like(n, "Cast", "_int32");
        widen.inputs = {x};
        widen.outputs = {fresh(x + "_int32")};
        widen.attributes = {{"to", static_cast<int64_t>(onnxDataType(DType::Int32))}};
        x = widen.outputs[0];
        t = DType::Int32;
        out.push_back(std::move(widen));
      }
      Node eq = like(n, "Equal", "_is_zero");
      eq.inputs = {x, zero(t)};
      eq.outputs = {fresh(n.outputs[0] + "_is_zero")};
      Node neg = like(n, "Not", "");
      neg.inputs = {eq.outputs[0]};
      neg.outputs = n.outputs;
      out.push_back(std::move(eq));
      out.push_back(std::move(neg));
      ++count;
    }
    g.nodes = std::move(out);
    return count;
  }

 private:
  static std::optional<DType> castTarget(const Node& n) {
    const Attribute* a = n.attr("to");
    const auto* v = a ? std::get_if<int64_t>(&a->value) : nullptr;
    return v ? fromOnnxDataType(static_cast<int>(*v)) : std::nullopt;
  }

  Node like(const Node& n, const std::string& op, const std::string& suffix) {
    Node m;
    m.op_type = op;
    m.name = n.name.empty() ? std::string() : n.name + suffix;
    m.origins = n.origins;
    m.module_path = n.module_path;
    m.location = n.location;
    return m;
  }

  void collectNames(const Graph& g) {
    for (const auto& i : g.inputs) names_.insert(i.name);
    for (const auto& i : g.initializers) names_.insert(i.name);
    for (const auto& n : g.nodes) {
      for (const auto& o : n.outputs) names_.insert(o);
      for (const auto& a : n.attributes)
        if (auto* sg = std::get_if<std::shared_ptr<Graph>>(&a.value); sg && *sg) collectNames(**sg);
    }
  }

  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int k = 1; names_.count(name); ++k) name = base + "_" + std::to_string(k);
    names_.insert(name);
    return name;
  }

  // A 0-d zero of dtype t, in the outer graph (If branches and Loop bodies read it there).
  std::string zero(DType t) {
    auto it = zeros_.find(t);
    if (it != zeros_.end()) return it->second;
    Initializer z;
    z.name = fresh(std::string("zero_") + dtypeName(t));
    z.tensor = HostTensor::fromBytes(t, {}, std::vector<unsigned char>(dtypeSize(t), 0));
    root_.initializers.push_back(z);
    return zeros_[t] = z.name;
  }

  Graph& root_;
  std::unordered_set<std::string> names_;
  std::unordered_map<DType, std::string> zeros_;
};

}  // namespace

int guardCastsToBool(Graph& g) {
  CastGuard guard(g);
  return guard.run(g);
}

}  // namespace oxport::onnx_ir
