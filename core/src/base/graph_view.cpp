// GraphView's text form: one line per node, like a compact IR dump.
#include "oxport/graph_view.h"

#include <string>

namespace oxport {

namespace {

// "%name"; "%<id>" for unnamed values; "_" for an absent optional input.
std::string edgeRef(const GraphView& g, int id) {
  if (id < 0) return "_";
  if (static_cast<size_t>(id) >= g.edges.size()) return "%<bad edge " + std::to_string(id) + ">";
  const GraphViewEdge& e = g.edges[static_cast<size_t>(id)];
  return "%" + (e.name.empty() ? std::to_string(id) : e.name);
}

std::string edgeWithType(const GraphView& g, int id) {
  std::string out = edgeRef(g, id);
  if (id >= 0 && static_cast<size_t>(id) < g.edges.size() && !g.edges[static_cast<size_t>(id)].type.empty())
    out += " : " + g.edges[static_cast<size_t>(id)].type;
  return out;
}

// The last component of a path: TorchScript records absolute file names, too long for one line.
std::string baseName(const std::string& file) {
  const size_t slash = file.find_last_of("/\\");
  return slash == std::string::npos ? file : file.substr(slash + 1);
}

}  // namespace

std::string GraphView::toText() const {
  size_t initializers = 0;
  for (const GraphViewEdge& e : edges)
    if (e.is_initializer) ++initializers;

  std::string out = "graph";
  if (!title.empty()) out += " " + title;
  out += (title.empty() ? " (" : "  (") + std::to_string(nodes.size()) + (nodes.size() == 1 ? " node" : " nodes");
  if (initializers) out += ", " + std::to_string(initializers) + (initializers == 1 ? " initializer" : " initializers");
  out += ")\n";

  for (int id : inputs) out += "  input  " + edgeWithType(*this, id) + "\n";

  for (const GraphViewNode& n : nodes) {
    std::string line = "  ";
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      if (i) line += ", ";
      line += edgeRef(*this, n.outputs[i]);
    }
    if (!n.outputs.empty()) line += " = ";
    if (!n.domain.empty() && n.domain != "ai.onnx") line += n.domain + ".";
    line += n.op + "(";
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (i) line += ", ";
      line += edgeRef(*this, n.inputs[i]);
    }
    line += ")";
    if (!n.attributes.empty()) {
      line += " {";
      for (size_t i = 0; i < n.attributes.size(); ++i) {
        if (i) line += ", ";
        line += n.attributes[i].first + "=" + n.attributes[i].second;
      }
      line += "}";
    }
    std::string where = n.module_path;
    if (!n.location.file.empty() || n.location.known()) {
      if (!where.empty()) where += "  ";
      where += baseName(n.location.file);
      if (n.location.known()) where += (n.location.file.empty() ? "line " : ":") + std::to_string(n.location.line);
    }
    if (!where.empty()) line += "  # " + where;
    out += line + "\n";
  }

  for (int id : outputs) out += "  output " + edgeWithType(*this, id) + "\n";
  return out;
}

}  // namespace oxport
