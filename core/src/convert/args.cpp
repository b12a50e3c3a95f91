#include "convert/args.h"

namespace oxport::convert {

std::string ArgName::label() const {
  std::string s;
  for (const char* n : names_) s += (s.empty() ? "" : "/") + std::string(n);
  return s;
}

namespace {

bool hasArgNames(const Node& n) {
  for (const auto& a : n.arg_names)
    if (!a.empty()) return true;
  return false;
}

}  // namespace

bool Args::named() const { return hasArgNames(n_); }

int Args::index(const Node& n, const ArgName& name, size_t pos) {
  if (!hasArgNames(n)) return pos != kByName && pos < n.inputs.size() ? static_cast<int>(pos) : -1;
  for (const char* nm : name.names()) {
    const int i = n.argIndex(nm);
    if (i >= 0 && static_cast<size_t>(i) < n.inputs.size()) return i;
  }
  return -1;
}

Value* Args::inputOf(const Node& n, const ArgName& name, size_t pos) {
  const int i = index(n, name, pos);
  return i >= 0 ? n.input(static_cast<size_t>(i)) : nullptr;
}

Value* Args::in(const ArgName& name, size_t pos) const {
  const int i = index(n_, name, pos);
  if (i >= 0) return n_.input(static_cast<size_t>(i));
  const std::string where = named() ? "its schema (" + n_.schema + ") has no argument '" + name.label() + "'"
                    : pos == kByName ? "the node carries no argument names"
                                     : "it has " + std::to_string(n_.inputs.size()) + " inputs, and argument '" +
                                           name.label() + "' would be input " + std::to_string(pos);
  throw MissingArgument(n_.error("unsupported-form",
                                 n_.kind + " is converted with its argument '" + name.label() + "', but " + where,
                                 "an overload of the op oxport does not convert; with operator_export_type "
                                 "ONNX_FALLTHROUGH the node is kept as a custom node"));
}

Value* Args::optIn(const ArgName& name, size_t pos) const { return inputOf(n_, name, pos); }

bool Args::has(const ArgName& name, size_t pos) const {
  const Value* v = optIn(name, pos);
  return v && !v->isNone();
}

}  // namespace oxport::convert
