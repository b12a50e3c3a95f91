// The localize report: comparing one value, and the report as text and JSON. No libtorch here
// (the run itself is pipeline/localize.cpp).
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "oxport/localize.h"

namespace oxport {

namespace {

using json = nlohmann::ordered_json;

std::string num(double v) {
  std::ostringstream o;
  o << std::setprecision(3) << v;
  return o.str();
}

std::string percent(double share) {
  std::ostringstream o;
  o << std::setprecision(3) << share * 100 << "%";
  return o.str();
}

// JSON has no infinity or NaN.
json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json valueJson(const ValueComparison& c) {
  json j;
  j["torch_value"] = c.torch_value;
  j["onnx_value"] = c.onnx_value.empty() ? json(nullptr) : json(c.onnx_value);
  j["compared"] = c.compared;
  if (c.compared) {
    j["passed"] = c.passed;
    j["shape"] = c.expected_shape;
    if (c.actual_shape != c.expected_shape) j["onnx_shape"] = c.actual_shape;
    j["max_abs_error"] = number(c.max_abs_error);
    j["max_rel_error"] = number(c.max_rel_error);
    j["share_off"] = number(c.share_off);
  }
  if (!c.note.empty()) j["note"] = c.note;
  return j;
}

json nodeJson(const LocalizedNode& n, bool detail) {
  json j;
  j["torch_node"] = n.torch_node;
  j["kind"] = n.kind;
  j["module"] = n.module;
  j["source"] = n.source.empty() ? json(nullptr) : json(n.source);
  j["torch_id"] = n.torch_id;
  j["onnx_nodes"] = n.onnx_nodes;
  j["max_abs_error"] = number(n.max_abs_error);
  j["max_rel_error"] = number(n.max_rel_error);
  j["share_off"] = number(n.share_off);
  j["inputs_agree"] = n.inputs_agree;
  j["inputs_compared"] = n.inputs_compared;
  if (!n.merged.empty()) j["merged"] = n.merged;
  if (detail) {
    j["outputs"] = json::array();
    for (const auto& c : n.outputs) j["outputs"].push_back(valueJson(c));
    j["inputs"] = json::array();
    for (const auto& c : n.inputs) j["inputs"].push_back(valueJson(c));
  }
  return j;
}

void valueLine(std::ostream& o, const char* role, const ValueComparison& c) {
  o << "    " << role << " %" << c.torch_value;
  if (!c.onnx_value.empty()) o << " (ONNX '" << c.onnx_value << "')";
  if (!c.compared) {
    o << ": not compared" << (c.note.empty() ? "" : " (" + c.note + ")") << "\n";
    return;
  }
  o << " " << shapeText(c.expected_shape) << ": max abs " << num(c.max_abs_error) << ", max rel "
    << num(c.max_rel_error) << ", " << percent(c.share_off) << " off  " << (c.passed ? "ok" : "DIFFERS");
  if (!c.note.empty()) o << " - " << c.note;
  o << "\n";
}

}  // namespace

ValueComparison compareValue(const std::string& torch_value, const std::string& onnx_value,
                             const HostTensor& expected, const HostTensor& actual, double tolerance) {
  ValueComparison c;
  c.torch_value = torch_value;
  c.onnx_value = onnx_value;
  c.expected_shape = expected.shape;
  c.actual_shape = actual.shape;
  c.compared = true;
  if (!wellFormed(expected) || !wellFormed(actual)) {
    c.passed = false;
    c.note = "malformed tensor: its byte count does not match its shape and dtype";
    return c;
  }
  const int64_t n = expected.numel();
  if (expected.shape != actual.shape) {
    if (actual.numel() != n) {
      c.passed = false;
      c.share_off = 1;
      c.max_abs_error = c.max_rel_error = std::numeric_limits<double>::infinity();
      c.note = "shape mismatch: libtorch " + shapeText(expected.shape) + ", ONNX " + shapeText(actual.shape);
      return c;
    }
    c.note = "same elements in another shape (ONNX " + shapeText(actual.shape) + "), compared flattened";
  }
  const bool floating = isFloating(expected.dtype) || isFloating(actual.dtype);
  double max_mag = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double e = expected.at(i);
    if (std::isfinite(e)) max_mag = std::max(max_mag, std::fabs(e));
  }
  const double tol = floating ? std::max({tolerance, dtypeEpsilon(expected.dtype), dtypeEpsilon(actual.dtype)}) * max_mag
                              : 0.0;
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double e = expected.at(i), a = actual.at(i);
    double err;
    if (std::isnan(e) || std::isnan(a)) {
      err = std::isnan(e) && std::isnan(a) ? 0 : std::numeric_limits<double>::infinity();
    } else if (std::isinf(e) || std::isinf(a)) {
      err = e == a ? 0 : std::numeric_limits<double>::infinity();
    } else {
      err = std::fabs(e - a);
    }
    c.max_abs_error = std::max(c.max_abs_error, err);
    if (err > tol) ++off;
  }
  c.max_rel_error = max_mag > 0 ? c.max_abs_error / max_mag : (c.max_abs_error > 0 ? std::numeric_limits<double>::infinity() : 0);
  c.share_off = n > 0 ? static_cast<double>(off) / static_cast<double>(n) : 0;
  c.passed = off == 0;
  if (expected.dtype != actual.dtype && (isFloating(expected.dtype) != isFloating(actual.dtype))) {
    std::string d = std::string("dtype: libtorch ") + dtypeName(expected.dtype) + ", ONNX " + dtypeName(actual.dtype);
    c.note = c.note.empty() ? d : c.note + "; " + d;
  }
  return c;
}

std::string LocalizeReport::toText() const {
  std::ostringstream o;
  o << "Localize: ";
  if (!mapped) {
    o << "not possible. " << message << "\n";
    return o.str();
  }
  o << compared << " values compared";
  if (not_compared) o << ", " << not_compared << " not comparable";
  o << " (" << torch_nodes << " TorchScript nodes; " << onnx_nodes_mapped << " of " << onnx_nodes
    << " ONNX nodes mapped; tolerance " << num(tolerance) << " x each value's largest magnitude)\n";
  if (!message.empty()) o << "  " << message << "\n";
  if (!first_divergence) {
    o << "  no divergence: every compared value matches libtorch's\n";
    return o.str();
  }
  const LocalizedNode& f = *first_divergence;
  o << "FIRST DIVERGENCE: " << f.torch_node;
  if (!f.module.empty()) o << "  in " << f.module;
  if (!f.source.empty()) o << "  at " << f.source;
  o << "\n  ONNX nodes:";
  for (size_t i = 0; i < f.onnx_nodes.size(); ++i) o << (i ? ", " : " ") << f.onnx_nodes[i];
  if (f.onnx_nodes.empty()) o << " (none)";
  o << "\n";
  for (const auto& m : f.merged) o << "  with, merged into it (no value of its own in the file): " << m << "\n";
  for (const auto& c : f.inputs) valueLine(o, "input ", c);
  for (const auto& c : f.outputs) valueLine(o, "output", c);
  if (!f.inputs_agree)
    o << "  (an input already differs: the divergence starts upstream, in a value that was not compared)\n";
  else if (f.inputs_compared > 0)
    o << "  its inputs agree and its output does not: the divergence starts here\n";
  if (divergent_nodes > 1) {
    o << "then " << divergent_nodes - 1 << " more divergent node(s) downstream, by module:\n";
    for (const auto& m : by_module)
      o << "  " << (m.module.empty() ? "(top level)" : m.module) << ": " << m.nodes << " node(s), worst rel "
        << num(m.max_rel_error) << (m.sources ? ", " + std::to_string(m.sources) + " with agreeing inputs" : "")
        << ", first " << m.first_node << "\n";
  }
  return o.str();
}

std::string LocalizeReport::toJson() const {
  json j;
  j["mapped"] = mapped;
  if (!message.empty()) j["message"] = message;
  j["tolerance"] = tolerance;
  j["compared"] = compared;
  j["not_compared"] = not_compared;
  j["torch_nodes"] = torch_nodes;
  j["onnx_nodes"] = onnx_nodes;
  j["onnx_nodes_mapped"] = onnx_nodes_mapped;
  j["first_divergence"] = first_divergence ? nodeJson(*first_divergence, true) : json(nullptr);
  j["divergent_nodes"] = divergent_nodes;
  j["divergences"] = json::array();
  for (const auto& d : divergences) j["divergences"].push_back(nodeJson(d, false));
  j["by_module"] = json::array();
  for (const auto& m : by_module)
    j["by_module"].push_back({{"module", m.module},
                              {"nodes", m.nodes},
                              {"sources", m.sources},
                              {"max_rel_error", number(m.max_rel_error)},
                              {"first_node", m.first_node}});
  j["onnx_ms"] = onnx_ms;
  j["torch_ms"] = torch_ms;
  j["total_ms"] = total_ms;
  return j.dump(2);
}

}  // namespace oxport
