#include "ir/ts_ir.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>
#include <sstream>

namespace oxport::ts {

const char* valueTypeName(ValueType t) {
  switch (t) {
    case ValueType::Tensor: return "Tensor";
    case ValueType::Int: return "int";
    case ValueType::Float: return "float";
    case ValueType::Bool: return "bool";
    case ValueType::None: return "None";
    case ValueType::String: return "str";
    case ValueType::Device: return "Device";
    case ValueType::List: return "list";
    case ValueType::Tuple: return "tuple";
    case ValueType::Other: return "other";
  }
  return "?";
}

double Constant::toDouble() const {
  if (isBool()) return std::get<bool>(v) ? 1.0 : 0.0;
  if (isInt()) return static_cast<double>(std::get<int64_t>(v));
  if (isDouble()) return std::get<double>(v);
  if (isTensor() && tensor().numel() == 1) return tensor().at(0);
  return 0.0;
}

int64_t Constant::toInt() const {
  if (isBool()) return std::get<bool>(v) ? 1 : 0;
  if (isInt()) return std::get<int64_t>(v);
  if (isDouble()) return static_cast<int64_t>(std::get<double>(v));
  if (isTensor() && tensor().numel() == 1) return static_cast<int64_t>(tensor().at(0));
  return 0;
}

std::string Constant::toString() const {
  std::ostringstream os;
  if (isNone()) os << "None";
  else if (isBool()) os << (std::get<bool>(v) ? "True" : "False");
  else if (isInt()) os << std::get<int64_t>(v);
  else if (isDouble()) os << std::get<double>(v);
  else if (isString()) os << '"' << str() << '"';
  else if (isTensor()) os << dtypeName(tensor().dtype) << tensor().shapeString();
  else if (isList()) {
    os << '[';
    const auto& l = list();
    for (size_t i = 0; i < l.size(); ++i) os << (i ? ", " : "") << l[i].toString();
    os << ']';
  }
  return os.str();
}

std::string TensorMeta::toString() const {
  if (!known) return "Tensor";
  std::ostringstream os;
  os << (complex ? "Complex" : "") << dtypeName(dtype) << '(';
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << ')';
  return os.str();
}

std::string Value::typeString() const {
  if (type == ValueType::Tensor) return meta.toString();
  if (type == ValueType::List && elem_type == ValueType::Tensor) return "Tensor[]";
  if (type == ValueType::List && elem_type != ValueType::Other)
    return std::string(valueTypeName(elem_type)) + "[]";
  return valueTypeName(type);
}

int Node::argIndex(const std::string& name) const {
  for (size_t i = 0; i < arg_names.size(); ++i)
    if (arg_names[i] == name) return static_cast<int>(i);
  return -1;
}

Diagnostic Node::error(std::string code, std::string message, std::string hint) const {
  Diagnostic d = makeError(std::move(code), std::move(message), std::move(hint));
  d.node_kind = kind;
  d.module_path = module_path;
  d.location = location;
  return d;
}

Diagnostic Node::warning(std::string code, std::string message, std::string hint) const {
  Diagnostic d = error(std::move(code), std::move(message), std::move(hint));
  d.severity = Severity::Warning;
  return d;
}

ValueType typeOfConstant(const Constant& c) {
  if (c.isNone()) return ValueType::None;
  if (c.isBool()) return ValueType::Bool;
  if (c.isInt()) return ValueType::Int;
  if (c.isDouble()) return ValueType::Float;
  if (c.isString()) return ValueType::String;
  if (c.isTensor()) return ValueType::Tensor;
  return ValueType::List;
}

Value* Graph::newValue(ValueType t, std::string name) {
  auto v = std::make_unique<Value>();
  v->id = static_cast<int>(values_.size());
  v->type = t;
  v->name = name.empty() ? std::to_string(v->id) : std::move(name);
  values_.push_back(std::move(v));
  return values_.back().get();
}

Value* Graph::newConstant(Constant c, std::string name) {
  Value* v = newValue(typeOfConstant(c), std::move(name));
  if (c.isTensor()) {
    v->meta.dtype = c.tensor().dtype;
    v->meta.shape = c.tensor().shape;
    v->meta.known = true;
  } else if (c.isList()) {
    const auto& l = c.list();
    v->elem_type = l.empty() ? ValueType::Other : typeOfConstant(l.front());
  }
  v->constant = std::move(c);
  return v;
}

Node* Graph::newNode(std::string kind) {
  auto n = std::make_unique<Node>();
  n->id = static_cast<int>(nodes_.size());
  n->kind = std::move(kind);
  nodes_.push_back(std::move(n));
  return nodes_.back().get();
}

std::string Graph::toText() const {
  std::ostringstream os;
  os << "graph(";
  for (size_t i = 0; i < inputs.size(); ++i)
    os << (i ? ", " : "") << '%' << inputs[i]->name << " : " << inputs[i]->typeString();
  os << "):\n";
  for (const Node* n : nodes) {
    os << "  ";
    for (size_t i = 0; i < n->outputs.size(); ++i) os << (i ? ", " : "") << '%' << n->outputs[i]->name;
    os << " = " << n->kind << '(';
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      const Value* v = n->inputs[i];
      os << (i ? ", " : "");
      if (v->constant && !v->constant->isTensor()) os << v->constant->toString();
      else if (!v->param_name.empty()) os << '%' << v->param_name;
      else os << '%' << v->name;
    }
    os << ')';
    if (!n->module_path.empty()) os << "  # " << n->module_path;
    if (n->location.known()) os << "  " << n->location.file << ':' << n->location.line;
    os << '\n';
  }
  os << "  return (";
  for (size_t i = 0; i < outputs.size(); ++i) os << (i ? ", " : "") << '%' << outputs[i]->name;
  os << ")\n";
  return os.str();
}

namespace {

void forgetUses(Node* n) {
  for (Value* in : n->inputs) {
    auto& u = in->users;
    u.erase(std::remove(u.begin(), u.end(), n), u.end());
  }
  for (auto& b : n->blocks)
    for (Node* bn : b->nodes) forgetUses(bn);
}

void collectBlockOutputs(const Node* n, std::unordered_set<const Value*>& out) {
  for (const auto& b : n->blocks) {
    for (const Value* o : b->outputs) out.insert(o);
    for (const Node* bn : b->nodes) collectBlockOutputs(bn, out);
  }
}

}  // namespace

size_t removeUnusedNodes(Graph& g) {
  std::unordered_set<const Value*> kept(g.outputs.begin(), g.outputs.end());
  for (const Node* n : g.nodes) collectBlockOutputs(n, kept);
  size_t dropped = 0;
  std::vector<Node*> live;
  for (auto it = g.nodes.rbegin(); it != g.nodes.rend(); ++it) {
    Node* n = *it;
    bool used = n->outputs.empty();
    for (const Value* o : n->outputs) used = used || !o->users.empty() || kept.count(o);
    if (used) {
      live.push_back(n);
      continue;
    }
    forgetUses(n);
    ++dropped;
  }
  std::reverse(live.begin(), live.end());
  g.nodes = std::move(live);
  return dropped;
}

}  // namespace oxport::ts
