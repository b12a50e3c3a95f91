// The ONNX IR as text (onnx_ir::toText), for `oxport export --print-after`.
#include <sstream>

#include "onnx/onnx_ir.h"

namespace oxport::onnx_ir {

namespace {

std::string dimsText(const ValueInfo& vi) {
  std::string s = dtypeName(vi.dtype);
  if (!vi.has_shape) return s + "[?]";
  s += '[';
  for (size_t i = 0; i < vi.shape.size(); ++i) {
    const Dim& d = vi.shape[i];
    s += (i ? ", " : "") + (d.value >= 0 ? std::to_string(d.value) : !d.param.empty() ? d.param : std::string("?"));
  }
  return s + ']';
}

// A tensor attribute: dtype and shape, and the values when there are at most 8.
std::string attributeText(const Attribute& a) {
  if (const auto* t = std::get_if<HostTensor>(&a.value)) {
    std::ostringstream os;
    os << dtypeName(t->dtype) << t->shapeString();
    const int64_t n = t->numel();
    if (n <= 8 && t->data && static_cast<size_t>(n) * dtypeSize(t->dtype) == t->nbytes) {
      os << " {";
      for (int64_t i = 0; i < n; ++i) os << (i ? ", " : "") << t->at(i);
      os << '}';
    }
    return os.str();
  }
  return a.toString();
}

void printGraph(std::ostream& os, const Graph& g, const std::string& indent) {
  for (const auto& in : g.inputs) os << indent << "input %" << in.name << ": " << dimsText(in) << '\n';
  for (const auto& init : g.initializers)
    os << indent << (init.weight ? "weight %" : "initializer %") << init.name << ": " << dtypeName(init.tensor.dtype)
       << init.tensor.shapeString() << '\n';
  for (const auto& n : g.nodes) {
    os << indent;
    for (size_t i = 0; i < n.outputs.size(); ++i) os << (i ? ", %" : "%") << n.outputs[i];
    os << (n.outputs.empty() ? "" : " = ") << (n.domain.empty() ? "" : n.domain + "::") << n.op_type << '(';
    for (size_t i = 0; i < n.inputs.size(); ++i) os << (i ? ", " : "") << (n.inputs[i].empty() ? "" : "%" + n.inputs[i]);
    os << ')';
    std::vector<const Graph*> subgraphs;
    bool any = false;
    for (const auto& a : n.attributes) {
      if (const auto* sg = std::get_if<std::shared_ptr<Graph>>(&a.value)) {
        if (*sg) subgraphs.push_back(sg->get());
        continue;
      }
      os << (any ? ", " : " {") << a.name << '=' << attributeText(a);
      any = true;
    }
    if (any) os << '}';
    if (!n.module_path.empty()) os << "  # " << n.module_path;
    os << '\n';
    for (const auto& a : n.attributes)
      if (const auto* sg = std::get_if<std::shared_ptr<Graph>>(&a.value); sg && *sg) {
        os << indent << "  " << a.name << ":\n";
        printGraph(os, **sg, indent + "    ");
      }
  }
  for (const auto& out : g.outputs) os << indent << "output %" << out.name << ": " << dimsText(out) << '\n';
}

}  // namespace

std::string toText(const Model& m) {
  std::ostringstream os;
  os << "graph " << m.graph.name << " (opsets:";
  for (const auto& [domain, version] : m.opset_imports) os << ' ' << (domain.empty() ? "ai.onnx" : domain) << '=' << version;
  os << ")\n";
  printGraph(os, m.graph, "  ");
  return os.str();
}

}  // namespace oxport::onnx_ir
