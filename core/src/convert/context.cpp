#include "convert/context.h"

#include "convert/axis_dynamics.h"
#include "convert/util.h"

#include <cstring>
#include <functional>
#include <sstream>

namespace oxport::convert {

Attribute attrInt(const std::string& name, int64_t v) { return Attribute{name, v}; }
Attribute attrFloat(const std::string& name, float v) { return Attribute{name, v}; }
Attribute attrString(const std::string& name, std::string v) { return Attribute{name, std::move(v)}; }
Attribute attrInts(const std::string& name, std::vector<int64_t> v) { return Attribute{name, std::move(v)}; }
Attribute attrFloats(const std::string& name, std::vector<float> v) { return Attribute{name, std::move(v)}; }
Attribute attrTensor(const std::string& name, HostTensor t) { return Attribute{name, std::move(t)}; }

Context::Context(onnx_ir::Model& model, ts::Graph& graph, const Settings& settings)
    : model_(model), graph_(graph), settings_(settings) {}

Context::~Context() = default;

bool Context::axisMayVary(const Value* v, int64_t axis) {
  if (!axis_dynamics_) {
    std::unordered_map<const Value*, std::vector<bool>> inputs;
    for (const Value* in : graph_.inputs) {
      auto name = boundName(in);
      if (!name) continue;
      for (const auto& vi : model_.graph.inputs)
        if (vi.name == *name) {
          std::vector<bool> dyn;
          for (const auto& d : vi.shape) dyn.push_back(!d.param.empty() || d.value < 0);
          inputs[in] = std::move(dyn);
        }
    }
    axis_dynamics_ = std::make_unique<AxisDynamics>(graph_, inputs);
  }
  return axis_dynamics_->axisMayVary(v, axis);
}

bool Context::trainingForm() const {
  switch (settings_.training) {
    case TrainingMode::Eval: return false;
    case TrainingMode::Training: return true;
    case TrainingMode::Preserve: return settings_.model_training_flag;
  }
  return false;
}

static std::string argLabel(const Node* n, const Value* v) {
  if (n) {
    for (size_t i = 0; i < n->inputs.size(); ++i)
      if (n->inputs[i] == v && i < n->arg_names.size() && !n->arg_names[i].empty())
        return "argument '" + n->arg_names[i] + "'";
  }
  return "value %" + v->name;
}

bool Context::isNone(const Value* v) const { return v->isNone(); }

Result<int64_t> Context::constInt(const Value* v) const {
  if (v->constant && (v->constant->isInt() || v->constant->isBool())) return v->constant->toInt();
  if (v->constant && v->constant->isDouble()) {
    double d = std::get<double>(v->constant->v);
    if (d == static_cast<double>(static_cast<int64_t>(d))) return static_cast<int64_t>(d);
  }
  if (v->constant && v->constant->isTensor() && v->constant->tensor().numel() == 1)
    return v->constant->toInt();
  return error("dynamic-argument",
               argLabel(current_, v) + " must be a constant integer here, but it depends on the inputs",
               "make it a Python int in the model, or trace with the shapes you export");
}

Result<double> Context::constDouble(const Value* v) const {
  if (v->constant && (v->constant->isNumber() ||
                      (v->constant->isTensor() && v->constant->tensor().numel() == 1)))
    return v->constant->toDouble();
  return error("dynamic-argument",
               argLabel(current_, v) + " must be a constant number here, but it depends on the inputs");
}

Result<bool> Context::constBool(const Value* v) const {
  if (v->constant && v->constant->isNumber()) return v->constant->toInt() != 0;
  return error("dynamic-argument",
               argLabel(current_, v) + " must be a constant bool here, but it depends on the inputs");
}

Result<std::string> Context::constString(const Value* v) const {
  if (v->constant && v->constant->isString()) return v->constant->str();
  return error("dynamic-argument", argLabel(current_, v) + " must be a constant string");
}

std::optional<int64_t> Context::maybeInt(const Value* v) const {
  if (v->constant && (v->constant->isInt() || v->constant->isBool())) return v->constant->toInt();
  return std::nullopt;
}

Result<std::vector<int64_t>> Context::constInts(const Value* v) const {
  if (v->constant) {
    const auto& c = *v->constant;
    if (c.isInt() || c.isBool()) return std::vector<int64_t>{c.toInt()};
    if (c.isList()) {
      std::vector<int64_t> out;
      for (const auto& e : c.list()) {
        if (!e.isInt() && !e.isBool())
          return error("bad-argument", argLabel(current_, v) + " must be a list of integers");
        out.push_back(e.toInt());
      }
      return out;
    }
    if (c.isTensor() && c.tensor().shape.size() <= 1) {
      std::vector<int64_t> out;
      for (int64_t i = 0; i < c.tensor().numel(); ++i) out.push_back(static_cast<int64_t>(c.tensor().at(i)));
      return out;
    }
  }
  if (v->producer && (v->producer->kind == "prim::ListConstruct")) {
    std::vector<int64_t> out;
    for (const Value* e : v->producer->inputs) {
      auto i = maybeInt(e);
      if (!i) break;
      out.push_back(*i);
    }
    if (out.size() == v->producer->inputs.size()) return out;
  }
  return error("dynamic-argument",
               argLabel(current_, v) + " must be a constant list of integers here, but it depends on the inputs",
               "make the sizes Python ints in the model, or export with fixed shapes");
}

Result<std::vector<double>> Context::constDoubles(const Value* v) const {
  if (v->constant) {
    const auto& c = *v->constant;
    if (c.isNumber()) return std::vector<double>{c.toDouble()};
    if (c.isList()) {
      std::vector<double> out;
      for (const auto& e : c.list()) out.push_back(e.toDouble());
      return out;
    }
  }
  return error("dynamic-argument", argLabel(current_, v) + " must be a constant list of numbers here");
}

Result<std::vector<const Value*>> Context::listElements(const Value* v) {
  if (auto it = list_values_.find(v); it != list_values_.end()) return it->second;
  if (auto it = lists_.find(v); it != lists_.end() && it->second.size() == v->elem_meta.size()) {
    // A list an op made here (split, chunk, unbind, scripted: `torch.cat(parts[1:])`): values
    // standing for its ONNX tensors, with the metas the example run saw. Made anew at each call, as
    // the bindings of a subgraph are dropped when it ends.
    std::vector<const Value*> out;
    for (size_t i = 0; i < it->second.size(); ++i) {
      Value* e = graph_.newValue(ts::ValueType::Tensor, v->name + "." + std::to_string(i));
      e->meta = v->elem_meta[i];
      bind(e, it->second[i]);
      out.push_back(e);
    }
    return out;
  }
  if (isSequence(v))
    return error("unsupported-form",
                 "list %" + v->name + " has a length that depends on the inputs (it is built in a loop or an if: "
                 "an ONNX sequence), and " + (current_ ? current_->kind : std::string("this op")) +
                 " needs its elements one by one",
                 "torch.stack or torch.cat the list, index it, or take len() of it; build a list that this op reads "
                 "outside the loop");
  if (v->producer && (v->producer->kind == "prim::ListConstruct" || v->producer->kind == "prim::TupleConstruct"))
    return std::vector<const Value*>(v->producer->inputs.begin(), v->producer->inputs.end());
  if (v->producer && v->producer->kind == "aten::add" && v->type == ts::ValueType::List &&
      v->producer->inputs.size() == 2) {
    // list + list (aten::add.t), e.g. `outs = outs + [y]` unrolled by graph_mode trace
    OXPORT_ASSIGN(auto elems, listElements(v->producer->inputs[0]));
    OXPORT_ASSIGN(auto tail, listElements(v->producer->inputs[1]));
    elems.insert(elems.end(), tail.begin(), tail.end());
    return elems;
  }
  if (v->producer && v->producer->kind == "aten::mul" && v->type == ts::ValueType::List &&
      v->producer->inputs.size() == 2) {
    // list * n (aten::mul.left_t / right_), e.g. torch.cat([x] * 2) scripted
    const bool left = v->producer->inputs[0]->type == ts::ValueType::List;
    OXPORT_ASSIGN(auto once, listElements(v->producer->inputs[left ? 0 : 1]));
    OXPORT_ASSIGN(int64_t times, constInt(v->producer->inputs[left ? 1 : 0]));
    std::vector<const Value*> elems;
    for (int64_t i = 0; i < times; ++i) elems.insert(elems.end(), once.begin(), once.end());
    return elems;
  }
  if (v->constant && v->constant->isList()) {
    auto it = const_list_elems_.find(v);
    if (it != const_list_elems_.end()) return it->second;
    std::vector<const Value*> out;
    for (const auto& e : v->constant->list()) out.push_back(graph_.newConstant(e));
    const_list_elems_[v] = out;
    return out;
  }
  return error("unsupported-list", argLabel(current_, v) + " is a list whose elements are not known at export time");
}

static HostTensor scalarTensor(double value, DType dtype) {
  switch (dtype) {
    case DType::Float32: return HostTensor::fromVector<float>(dtype, {}, {static_cast<float>(value)});
    case DType::Float64: return HostTensor::fromVector<double>(dtype, {}, {value});
    case DType::Int64: return HostTensor::fromVector<int64_t>(dtype, {}, {static_cast<int64_t>(value)});
    case DType::Int32: return HostTensor::fromVector<int32_t>(dtype, {}, {static_cast<int32_t>(value)});
    case DType::Int16: return HostTensor::fromVector<int16_t>(dtype, {}, {static_cast<int16_t>(value)});
    case DType::Int8: return HostTensor::fromVector<int8_t>(dtype, {}, {static_cast<int8_t>(value)});
    case DType::UInt8: return HostTensor::fromVector<uint8_t>(dtype, {}, {static_cast<uint8_t>(value)});
    case DType::Bool: return HostTensor::fromVector<uint8_t>(dtype, {}, {static_cast<uint8_t>(value != 0)});
    case DType::Float16:
    case DType::BFloat16: {
      // Round through float32 bits.
      float f = static_cast<float>(value);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      uint16_t h;
      if (dtype == DType::BFloat16) {
        h = static_cast<uint16_t>((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
      } else {
        uint32_t sign = (bits >> 16) & 0x8000;
        int32_t exp = static_cast<int32_t>((bits >> 23) & 0xFF) - 127 + 15;
        uint32_t mant = bits & 0x7FFFFF;
        if (exp <= 0) h = static_cast<uint16_t>(sign);
        else if (exp >= 31) h = static_cast<uint16_t>(sign | 0x7C00);
        else h = static_cast<uint16_t>(sign | (exp << 10) | ((mant + 0x1000) >> 13));
      }
      return HostTensor::fromVector<uint16_t>(dtype, {}, {h});
    }
  }
  return HostTensor::fromVector<float>(DType::Float32, {}, {static_cast<float>(value)});
}

HostTensor scalarHostTensor(double value, DType dtype, std::vector<int64_t> shape) {
  HostTensor t = scalarTensor(value, dtype);
  if (!shape.empty()) t.shape = std::move(shape);  // one element either way
  return t;
}

std::string Context::constant(HostTensor t, const std::string& hint, const Value* from) {
  std::string name = uniqueName("onnx::" + hint + "_" + std::to_string(const_counter_++));
  const bool weight = from && (!from->param_name.empty() || from->from_weights);
  model_.graph.initializers.push_back({name, std::move(t), weight, nullptr});
  return name;
}

std::string Context::transposedConstant(const HostTensor& t, const std::string& hint, const Value* from) {
  // Above the size of a Constant node (constants-as-nodes): such a tensor is always an initializer.
  constexpr size_t kLazyBytes = size_t(1) << 20;
  if (t.nbytes <= kLazyBytes || !t.data || t.shape.size() != 2) return constant(transpose2D(t), hint, from);
  HostTensor out;
  out.dtype = t.dtype;
  out.shape = {t.shape[1], t.shape[0]};
  out.nbytes = t.nbytes;
  std::string name = constant(std::move(out), hint, from);
  model_.graph.initializers.back().transposed_of = std::make_shared<const HostTensor>(t);
  return name;
}

const std::vector<std::pair<const Node*, size_t>>& Context::weightUses(const Value* w) {
  static const std::vector<std::pair<const Node*, size_t>> none;
  if (!w->constant || !w->constant->isTensor() || !w->constant->tensor().data) return none;
  if (!weight_uses_) {
    weight_uses_.emplace();
    std::function<void(const std::vector<Node*>&)> visit = [&](const std::vector<Node*>& nodes) {
      for (const Node* n : nodes) {
        for (size_t i = 0; i < n->inputs.size(); ++i) {
          const Value* in = n->inputs[i];
          if (in->constant && in->constant->isTensor() && in->constant->tensor().data)
            (*weight_uses_)[in->constant->tensor().data].emplace_back(n, i);
        }
        for (const auto& b : n->blocks) visit(b->nodes);
      }
    };
    visit(graph_.nodes);
  }
  auto it = weight_uses_->find(w->constant->tensor().data);
  return it == weight_uses_->end() ? none : it->second;
}

std::string Context::constInt64s(const std::vector<int64_t>& v, bool scalar) {
  std::vector<int64_t> shape;
  if (!scalar) shape.push_back(static_cast<int64_t>(v.size()));
  return constant(HostTensor::fromVector<int64_t>(DType::Int64, shape, v), "Constant");
}

std::string Context::constScalar(double v, DType dtype) { return constant(scalarTensor(v, dtype), "Constant"); }

Result<std::string> Context::tensor(const Value* v) {
  if (auto it = names_.find(v); it != names_.end()) return it->second;
  if (v->constant) {
    const auto& c = *v->constant;
    std::string name;
    if (c.isTensor()) {
      if (!v->param_name.empty()) {
        const HostTensor& t = c.tensor();
        if (t.data)
          for (const auto& w : weight_names_[t.data])
            if (w.dtype == t.dtype && w.shape == t.shape) name = w.name;
        if (name.empty()) {
          name = uniqueName(v->param_name);
          model_.graph.initializers.push_back({name, t, true, nullptr});
          if (t.data) weight_names_[t.data].push_back({name, t.dtype, t.shape});
        }
      } else {
        name = constant(c.tensor(), "Constant", v);
      }
    } else if (c.isBool()) {
      name = constScalar(c.toDouble(), DType::Bool);
    } else if (c.isInt()) {
      name = constInt64s({c.toInt()}, true);  // exact beyond 2^53 (e.g. the max trip count of while loops)
    } else if (c.isDouble()) {
      name = constScalar(c.toDouble(), DType::Float32);
    } else if (c.isList()) {
      bool all_int = true;
      std::vector<double> vals;
      for (const auto& e : c.list()) {
        if (!e.isNumber()) return error("bad-argument", argLabel(current_, v) + " is a list that cannot be a tensor");
        all_int = all_int && (e.isInt() || e.isBool());
        vals.push_back(e.toDouble());
      }
      if (all_int) {
        std::vector<int64_t> iv(vals.begin(), vals.end());
        name = constInt64s(iv);
      } else {
        std::vector<float> fv(vals.begin(), vals.end());
        name = constant(HostTensor::fromVector<float>(DType::Float32, {static_cast<int64_t>(fv.size())}, fv));
      }
    } else {
      return error("bad-argument", argLabel(current_, v) + " (" + c.toString() + ") cannot be used as a tensor");
    }
    names_[v] = name;
    return name;
  }
  if (v->producer && v->producer->kind == "prim::ListConstruct") {
    auto r = intsTensor(v);
    if (r.ok()) names_[v] = *r;
    return r;
  }
  return error("internal", "value %" + v->name + " has no ONNX tensor (its producer was not converted)");
}

Result<std::string> Context::tensorOfType(const Value* v, DType dtype) {
  if (v->constant && v->constant->isInt() && dtype == DType::Int64) return constInt64s({v->constant->toInt()}, true);
  if (v->constant && v->constant->isNumber()) return constScalar(v->constant->toDouble(), dtype);
  OXPORT_ASSIGN(std::string name, tensor(v));
  DType have;
  switch (v->type) {
    case ts::ValueType::Int: have = DType::Int64; break;
    case ts::ValueType::Float: have = DType::Float32; break;
    case ts::ValueType::Bool: have = DType::Bool; break;
    case ts::ValueType::Tensor: have = v->meta.dtype; break;
    default: return name;
  }
  if (have == dtype) return name;
  return cast(name, dtype);
}

Result<std::string> Context::intsTensor(const Value* v) {
  if (v->constant) {
    OXPORT_ASSIGN(auto ints, constInts(v));
    return constInt64s(ints);
  }
  if (v->producer && v->producer->kind == "prim::ListConstruct") {
    std::vector<std::string> parts;
    bool all_static = true;
    for (const Value* e : v->producer->inputs) all_static = all_static && maybeInt(e).has_value();
    if (all_static) {
      OXPORT_ASSIGN(auto ints, constInts(v));
      return constInt64s(ints);
    }
    for (const Value* e : v->producer->inputs) {
      if (auto i = maybeInt(e)) {
        parts.push_back(constInt64s({*i}));
      } else {
        OXPORT_ASSIGN(std::string s, tensorOfType(e, DType::Int64));
        if (e->type == ts::ValueType::Tensor && e->meta.rank() == 1) parts.push_back(s);
        else parts.push_back(unsqueeze(s, {0}));
      }
    }
    if (parts.size() == 1) return parts.front();
    return emit1("Concat", parts, {attrInt("axis", 0)});
  }
  if (v->type == ts::ValueType::Tensor) return tensorOfType(v, DType::Int64);
  if (auto it = names_.find(v); it != names_.end()) return it->second;
  return error("dynamic-argument", argLabel(current_, v) + " is an integer list not known at export time");
}

Result<std::vector<std::string>> Context::tensorList(const Value* v) {
  if (auto it = lists_.find(v); it != lists_.end()) return it->second;
  OXPORT_ASSIGN(auto elems, listElements(v));
  std::vector<std::string> out;
  for (const Value* e : elems) {
    OXPORT_ASSIGN(std::string s, tensor(e));
    out.push_back(s);
  }
  return out;
}

std::string Context::scopePrefix() const {
  std::string p;
  if (!current_) return "/";
  std::string full;
  for (const auto& part : current_->scope) {
    bool numeric = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    std::string next = full.empty() ? part : full + "." + part;
    p += "/" + (numeric ? next : part);
    full = next;
  }
  return p + "/";
}

std::string Context::uniqueName(const std::string& base) {
  std::string name = base;
  int& n = name_counts_[base];
  if (n > 0) {
    do {
      name = base + "_" + std::to_string(n++);
    } while (name_counts_.count(name));
    name_counts_[name] = 1;
  } else {
    n = 1;
  }
  return name;
}

std::string Context::nodeName(const std::string& op_type) { return uniqueName(scopePrefix() + op_type); }

std::vector<std::string> Context::emit(const std::string& op_type, const std::vector<std::string>& inputs,
                                       int num_outputs, std::vector<Attribute> attrs,
                                       const std::string& domain) {
  onnx_ir::Node n;
  n.op_type = op_type;
  n.domain = domain;
  n.name = nodeName(op_type);
  n.inputs = inputs;
  n.attributes = std::move(attrs);
  for (int i = 0; i < num_outputs; ++i) n.outputs.push_back(n.name + "_output_" + std::to_string(i));
  if (current_) {
    n.origins.push_back(current_->id);
    n.module_path = current_->module_path;
    n.location = current_->location;
    if (settings_.verbose) {
      std::ostringstream doc;
      doc << current_->kind;
      if (!current_->module_path.empty()) doc << " in " << current_->module_path;
      if (current_->location.known()) doc << " at " << current_->location.file << ':' << current_->location.line;
      n.doc_string = doc.str();
    }
  }
  auto outs = n.outputs;
  targetGraph().nodes.push_back(std::move(n));
  return outs;
}

std::string Context::cast(const std::string& x, DType to) {
  return emit1("Cast", {x}, {attrInt("to", onnxDataType(to))});
}

std::string Context::unsqueeze(const std::string& x, const std::vector<int64_t>& axes) {
  if (opset() >= 13) return emit1("Unsqueeze", {x, constInt64s(axes)});
  return emit1("Unsqueeze", {x}, {attrInts("axes", axes)});
}

std::string Context::squeeze(const std::string& x, const std::vector<int64_t>& axes) {
  if (opset() >= 13) return axes.empty() ? emit1("Squeeze", {x}) : emit1("Squeeze", {x, constInt64s(axes)});
  if (axes.empty()) return emit1("Squeeze", {x});
  return emit1("Squeeze", {x}, {attrInts("axes", axes)});
}

std::string Context::reshape(const std::string& x, const std::vector<int64_t>& shape) {
  return emit1("Reshape", {x, constInt64s(shape)});
}

std::string Context::shapeOf(const std::string& x) { return emit1("Shape", {x}); }

std::string Context::slice(const std::string& x, const std::vector<int64_t>& starts,
                           const std::vector<int64_t>& ends, const std::vector<int64_t>& axes,
                           const std::vector<int64_t>& steps) {
  if (opset() < 10) {
    return emit1("Slice", {x}, {attrInts("starts", starts), attrInts("ends", ends), attrInts("axes", axes)});
  }
  std::vector<std::string> in{x, constInt64s(starts), constInt64s(ends), constInt64s(axes)};
  if (!steps.empty()) in.push_back(constInt64s(steps));
  return emit1("Slice", in);
}

std::vector<std::string> Context::split(const std::string& x, int64_t axis, const std::vector<int64_t>& sizes) {
  int n = static_cast<int>(sizes.size());
  if (opset() >= 13) return emit("Split", {x, constInt64s(sizes)}, n, {attrInt("axis", axis)});
  return emit("Split", {x}, n, {attrInt("axis", axis), attrInts("split", sizes)});
}

void Context::pushGraph(onnx_ir::Graph* g) { targets_.push_back(Target{g, names_, lists_, list_values_}); }

void Context::popGraph() {
  names_ = std::move(targets_.back().names);
  lists_ = std::move(targets_.back().lists);
  list_values_ = std::move(targets_.back().list_values);
  targets_.pop_back();
}

void Context::bind(const Value* v, const std::string& onnx_name) { names_[v] = onnx_name; }
void Context::bindList(const Value* v, std::vector<std::string> names) { lists_[v] = std::move(names); }
bool Context::isBound(const Value* v) const { return names_.count(v) || lists_.count(v) || list_values_.count(v); }

void Context::bindListValues(const Value* v, std::vector<const Value*> elems) { list_values_[v] = std::move(elems); }

void Context::bindSequence(const Value* v, const std::string& onnx_name) {
  names_[v] = onnx_name;
  sequences_[v] = true;
}

bool Context::isSequence(const Value* v) const { return sequences_.count(v) && names_.count(v); }

Result<std::string> Context::sequence(const Value* v, DType elem) {
  if (isSequence(v)) return names_.at(v);
  if (settings_.opset < 11) return needsOpset(11, "a list built in a loop or an if (an ONNX sequence)");
  OXPORT_ASSIGN(auto elems, tensorList(v));
  if (elems.empty()) {
    onnx_ir::Attribute a = attrInt("dtype", onnxDataType(elem));
    return emit1("SequenceEmpty", {}, {a});
  }
  return emit1("SequenceConstruct", elems);
}
std::optional<std::string> Context::boundName(const Value* v) const {
  auto it = names_.find(v);
  if (it == names_.end()) return std::nullopt;
  return it->second;
}

Diagnostic Context::error(std::string code, std::string message, std::string hint) const {
  if (current_) return current_->error(std::move(code), std::move(message), std::move(hint));
  return makeError(std::move(code), std::move(message), std::move(hint));
}

Diagnostic Context::needsOpset(int opset, const std::string& what) const {
  Diagnostic d = error("opset-too-old",
                       what + " needs opset " + std::to_string(opset) + " or newer; this export targets opset " +
                           std::to_string(settings_.opset),
                       "set opset_version to " + std::to_string(opset) + " or higher");
  d.option = "opset_version";
  return d;
}

void Context::warn(std::string code, std::string message, std::string hint) {
  if (current_) warnings_.push_back(current_->warning(std::move(code), std::move(message), std::move(hint)));
  else warnings_.push_back(makeWarning(std::move(code), std::move(message), std::move(hint)));
}

}  // namespace oxport::convert
