#include "onnx/legalize_types.h"

#include <onnx/defs/schema.h>

#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_set>

#include "onnx/writer.h"

namespace oxport::onnx_ir {

namespace {

const char* onnxTypeName(DType t) {
  switch (t) {
    case DType::Float32: return "tensor(float)";
    case DType::Float64: return "tensor(double)";
    case DType::Float16: return "tensor(float16)";
    case DType::BFloat16: return "tensor(bfloat16)";
    case DType::Int8: return "tensor(int8)";
    case DType::UInt8: return "tensor(uint8)";
    case DType::Int16: return "tensor(int16)";
    case DType::Int32: return "tensor(int32)";
    case DType::Int64: return "tensor(int64)";
    case DType::Bool: return "tensor(bool)";
  }
  return "";
}

bool allows(const ::onnx::OpSchema::FormalParameter& p, const char* type) {
  for (const auto* t : p.GetTypes())
    if (*t == type) return true;
  return false;
}

bool isHalf(DType t) { return t == DType::Float16 || t == DType::BFloat16; }

// The type an op runs in where the opset has no form for t: float16/bfloat16 compute in float32;
// int8, uint8 and int16 in int32 (Add, Sub, Mul, Div, Abs, Neg, comparisons ... take them only from
// opset 14 or later). An integer result cast back wraps around as the narrow type's arithmetic does.
std::optional<DType> widerType(DType t) {
  if (isHalf(t)) return DType::Float32;
  if (t == DType::Int8 || t == DType::UInt8 || t == DType::Int16) return DType::Int32;
  return std::nullopt;
}

// Whether a tensor of a type with a wider form can appear at all: a graph input, an initializer, a
// Constant or a Cast to one of those types. Graphs without one are left alone without inferring types.
bool mayHoldNarrow(const Graph& g) {
  for (const auto& in : g.inputs)
    if (widerType(in.dtype)) return true;
  for (const auto& init : g.initializers)
    if (widerType(init.tensor.dtype)) return true;
  for (const auto& n : g.nodes)
    for (const auto& a : n.attributes) {
      if (const auto* t = std::get_if<HostTensor>(&a.value); t && widerType(t->dtype)) return true;
      if (const auto* sub = std::get_if<std::shared_ptr<Graph>>(&a.value); sub && *sub && mayHoldNarrow(**sub))
        return true;
      if (const auto* i = std::get_if<int64_t>(&a.value); i && (a.name == "to" || a.name == "dtype")) {
        auto t = fromOnnxDataType(static_cast<int>(*i));
        if (t && widerType(*t)) return true;
      }
    }
  return false;
}

// Elementwise ops whose schema lists the narrow integers (Greater-9, Equal-11, Add/Mul-14 ...)
// while ONNX Runtime registers no kernel for them (1.20: a file with Mul-14 on int8 does not load).
// Computed in int32 and cast back they give the same values, so they widen at every opset.
bool lacksNarrowKernel(const std::string& op, DType t) {
  if (widerType(t) != DType::Int32) return false;
  static const std::set<std::string> ops = {"Add", "Sub", "Mul", "Div", "Mod", "Abs", "Neg", "Sign",
                                            "Max", "Min", "Sum", "Clip", "Greater", "Less",
                                            "GreaterOrEqual", "LessOrEqual", "Equal"};
  return ops.count(op) > 0;
}

const char* suffix(DType wide) { return wide == DType::Float32 ? "float" : "int32"; }

const ::onnx::OpSchema::FormalParameter* formalInput(const ::onnx::OpSchema& s, size_t i) {
  const auto& ins = s.inputs();
  if (ins.empty()) return nullptr;
  if (i < ins.size()) return &ins[i];
  return ins.back().GetOption() == ::onnx::OpSchema::Variadic ? &ins.back() : nullptr;
}

const ::onnx::OpSchema::FormalParameter* formalOutput(const ::onnx::OpSchema& s, size_t i) {
  const auto& outs = s.outputs();
  if (outs.empty()) return nullptr;
  if (i < outs.size()) return &outs[i];
  return outs.back().GetOption() == ::onnx::OpSchema::Variadic ? &outs.back() : nullptr;
}

// Rewrites one graph and, before each node, the If/Loop/Scan bodies it holds (names are unique
// across scopes, so one name set and one type map serve them all).
class Legalizer {
 public:
  Legalizer(int opset, const std::map<std::string, DType>& types) : opset_(opset), types_(types) {
    for (const auto& [name, t] : types) names_.insert(name);
  }

  void collectNames(const Graph& g) {
    for (const auto& in : g.inputs) names_.insert(in.name);
    for (const auto& n : g.nodes) {
      names_.insert(n.outputs.begin(), n.outputs.end());
      names_.insert(n.name);
      for (const auto& a : n.attributes)
        if (const auto* sub = std::get_if<std::shared_ptr<Graph>>(&a.value); sub && *sub) collectNames(**sub);
    }
  }

  void rewrite(Graph& g) {
    if (!visited_.insert(&g).second) return;  // a body shared by two nodes is rewritten once
    std::vector<Node> out;
    out.reserve(g.nodes.size());
    for (auto& n : g.nodes) {
      for (auto& a : n.attributes)
        if (auto* sub = std::get_if<std::shared_ptr<Graph>>(&a.value); sub && *sub) rewrite(**sub);
      legalizeNode(std::move(n), out);
    }
    g.nodes = std::move(out);
  }

  std::vector<LegalizedOp> summary() const {
    std::vector<LegalizedOp> done;
    for (const auto& [key, count] : counts_)
      done.push_back({std::get<0>(key), dtypeName(std::get<1>(key)), dtypeName(std::get<2>(key)), count});
    return done;
  }

 private:
  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int k = 1; names_.count(name); ++k) name = base + "_" + std::to_string(k);
    names_.insert(name);
    return name;
  }

  static Attribute attrTo(DType t) {
    Attribute a;
    a.name = "to";
    a.value = static_cast<int64_t>(onnxDataType(t));
    return a;
  }

  static Node castLike(const Node& n, std::string name, std::string input, std::string output, DType to) {
    Node cast;
    cast.op_type = "Cast";
    cast.name = std::move(name);
    cast.inputs = {std::move(input)};
    cast.outputs = {std::move(output)};
    cast.attributes = {attrTo(to)};
    cast.origins = n.origins;
    cast.module_path = n.module_path;
    cast.doc_string = n.doc_string;
    return cast;
  }

  void legalizeNode(Node n, std::vector<Node>& out) {
    const ::onnx::OpSchema* schema =
        n.domain.empty() ? ::onnx::OpSchemaRegistry::Schema(n.op_type, opset_, "") : nullptr;
    // Type parameters bound to a type the schema does not allow here, where its wider type is allowed.
    std::map<std::string, std::pair<DType, DType>> widen;  // type string ("T") -> (bound type, wider type)
    if (schema) {
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        if (n.inputs[i].empty()) continue;
        const auto* p = formalInput(*schema, i);
        auto t = types_.find(n.inputs[i]);
        if (!p || t == types_.end()) continue;
        auto wide = widerType(t->second);
        if (wide && (!allows(*p, onnxTypeName(t->second)) || lacksNarrowKernel(n.op_type, t->second)) &&
            allows(*p, onnxTypeName(*wide)))
          widen.emplace(p->GetTypeStr(), std::make_pair(t->second, *wide));
      }
    }
    if (widen.empty()) {
      out.push_back(std::move(n));
      return;
    }
    DType from = widen.begin()->second.first;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i].empty()) continue;
      const auto* p = formalInput(*schema, i);
      auto w = p ? widen.find(p->GetTypeStr()) : widen.end();
      if (w == widen.end()) continue;
      const std::string wide = suffix(w->second.second);
      std::string name =
          fresh(n.name.empty() ? n.inputs[i] + "_to_" + wide : n.name + "_in" + std::to_string(i) + "_to_" + wide);
      std::string cast_out = fresh(n.inputs[i] + "_" + wide);
      out.push_back(castLike(n, std::move(name), n.inputs[i], cast_out, w->second.second));
      n.inputs[i] = std::move(cast_out);
    }
    std::vector<Node> after;
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      if (n.outputs[i].empty()) continue;
      const auto* p = formalOutput(*schema, i);
      if (!p) continue;
      auto w = widen.find(p->GetTypeStr());
      if (w == widen.end()) continue;
      const std::string wide = suffix(w->second.second);
      std::string name = fresh(n.name.empty() ? n.outputs[i] + "_from_" + wide
                                              : n.name + "_out" + std::to_string(i) + "_from_" + wide);
      std::string original = n.outputs[i];
      n.outputs[i] = fresh(original + "_" + wide);
      after.push_back(castLike(n, std::move(name), n.outputs[i], std::move(original), w->second.first));
    }
    ++counts_[{n.op_type, from, widen.begin()->second.second}];
    out.push_back(std::move(n));
    for (auto& c : after) out.push_back(std::move(c));
  }

  int opset_;
  const std::map<std::string, DType>& types_;
  std::unordered_set<std::string> names_;
  std::set<const Graph*> visited_;
  std::map<std::tuple<std::string, DType, DType>, int> counts_;
};

}  // namespace

Result<std::vector<LegalizedOp>> legalizeTypes(Model& model) {
  Graph& g = model.graph;
  if (!mayHoldNarrow(g)) return std::vector<LegalizedOp>{};
  auto opset_it = model.opset_imports.find("");
  if (opset_it == model.opset_imports.end()) return std::vector<LegalizedOp>{};
  const int opset = static_cast<int>(opset_it->second);
  OXPORT_ASSIGN(auto types, inferValueTypes(model));
  if (opset < 13)
    for (const auto& [name, t] : types)
      if (t == DType::BFloat16)
        return Error("opset-too-old",
                     "the model computes in bfloat16 ('" + name + "'), which ONNX has only from opset 13 (opset " +
                         std::to_string(opset) + " cannot even Cast it)",
                     "export with opset_version 13 or newer, or convert the model to float16 or float32 first");
  Legalizer legalizer(opset, types);
  legalizer.collectNames(g);
  legalizer.rewrite(g);
  return legalizer.summary();
}

}  // namespace oxport::onnx_ir
