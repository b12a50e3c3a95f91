// forward's graph as saved (savedGraphView, for the studio before the example run) and the
// source text and Python frames torch.jit.trace recorded on its nodes.
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "frontend/frontend.h"
#include "frontend/jit_util.h"
#include "pipeline/model_impl.h"
#include "frontend/inline_calls.h"

namespace oxport {

namespace jit = torch::jit;

GraphView savedGraphView(const jit::Module& module) {
  GraphView v;
  v.title = "TorchScript (as saved)";
  std::shared_ptr<jit::Graph> g = module.get_method("forward").graph()->copy();
  inlineCallsAndForks(*g, module._ivalue());
  jit::Value* self = g->inputs().empty() ? nullptr : g->inputs()[0];
  std::unordered_map<const jit::Value*, std::string> attr_path;  // self and GetAttr chains
  if (self) attr_path[self] = "";
  std::unordered_map<const jit::Value*, int> edge_of;
  auto edge = [&](const jit::Value* val) -> int {
    if (auto it = edge_of.find(val); it != edge_of.end()) return it->second;
    GraphViewEdge e;
    e.id = static_cast<int>(v.edges.size());
    auto ap = attr_path.find(val);
    e.name = ap != attr_path.end() ? ap->second : val->debugName();
    e.type = val->type()->annotation_str();
    e.is_initializer = ap != attr_path.end();
    if (e.is_initializer) e.summary = "parameter or buffer " + ap->second;
    v.edges.push_back(e);
    edge_of[val] = e.id;
    return e.id;
  };
  for (size_t i = 1; i < g->inputs().size(); ++i) {
    int id = edge(g->inputs()[i]);
    v.edges[id].is_graph_input = true;
    v.inputs.push_back(id);
  }
  // Constants, and lists of constants (a traced conv's stride), print as attribute values.
  std::function<std::optional<std::string>(const jit::Value*)> constText =
      [&](const jit::Value* val) -> std::optional<std::string> {
    const jit::Node* p = val->node();
    if (p->kind() == c10::prim::Constant) {
      auto iv = jit::toIValue(val);
      std::ostringstream os;
      if (iv && !iv->isTensor()) os << *iv;
      else os << val->type()->annotation_str();
      return os.str();
    }
    if (p->kind() != c10::prim::ListConstruct) return std::nullopt;
    std::string text = "[";
    for (size_t i = 0; i < p->inputs().size(); ++i) {
      auto e = constText(p->input(i));
      if (!e) return std::nullopt;
      text += (i ? ", " : "") + *e;
    }
    return text + "]";
  };
  int next_id = 0;
  for (jit::Node* n : g->nodes()) {
    if (n->kind() == c10::prim::Constant) continue;
    if (n->kind() == c10::prim::ListConstruct && constText(n->output())) continue;
    if (n->kind() == c10::prim::GetAttr) {
      // self.layer1.0.conv1.weight: drawn as the parameter it reads, not as a chain of nodes.
      auto base = attr_path.find(n->input(0));
      if (base != attr_path.end()) {
        attr_path[n->output()] = (base->second.empty() ? "" : base->second + ".") + n->s(c10::attr::name);
        continue;
      }
    }
    GraphViewNode gn;
    gn.id = next_id++;
    gn.name = n->outputs().empty() ? n->kind().toQualString() : "%" + n->output(0)->debugName();
    gn.op = n->kind().toQualString();
    gn.module_path = scopeOf(n).path;
    gn.location = locationOf(n);
    const c10::FunctionSchema* schema = n->maybeSchema();
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      jit::Value* in = n->input(i);
      if (auto text = constText(in)) {
        std::string an = schema && i < schema->arguments().size() ? schema->arguments()[i].name() : "arg" + std::to_string(i);
        gn.attributes.emplace_back(an, *text);
        continue;
      }
      if (attr_path.count(in) && in->type()->kind() == c10::TypeKind::ClassType) continue;  // a module
      int id = edge(in);
      v.edges[id].consumers.push_back(gn.id);
      gn.inputs.push_back(id);
    }
    if (!n->blocks().empty())
      gn.attributes.emplace_back("blocks", std::to_string(n->blocks().size()) + " (shown after the example run)");
    for (jit::Value* o : n->outputs()) {
      int id = edge(o);
      v.edges[id].producer = gn.id;
      gn.outputs.push_back(id);
    }
    v.nodes.push_back(std::move(gn));
  }
  for (jit::Value* o : g->outputs()) {
    int id = edge(o);
    v.edges[id].is_graph_output = true;
    v.outputs.push_back(id);
  }
  return v;
}

std::string recordedSource(const jit::Node* n, bool* original) {
  const auto& sr = n->sourceRange();
  auto orig = sr.findSourceRangeThatGenerated();
  if (original) *original = orig.has_value();
  const auto& src = orig ? orig->source() : sr.source();
  return src ? src->text_str().str() : std::string();
}

bool isTraceStack(const std::string& text) { return text.find("torch/jit/_trace.py(") != std::string::npos; }

std::vector<PythonFrame> tracedUserFrames(const jit::Module& module, bool* traced) {
  std::vector<PythonFrame> out;
  std::set<std::string> seen_stacks;
  bool any_trace = false;
  std::function<void(const jit::Block*, const std::string&)> visit = [&](const jit::Block* b, const std::string& path) {
    for (const jit::Node* n : b->nodes()) {
      for (const jit::Block* sub : n->blocks()) visit(sub, path);
      std::string text = recordedSource(n);
      if (!isTraceStack(text)) continue;
      any_trace = true;
      if (!seen_stacks.insert(text).second) continue;
      for (PythonFrame& f : userFramesOfTraceStack(text)) {
        f.module_path = path;
        out.push_back(std::move(f));
      }
    }
  };
  for (const auto& m : module.named_modules()) {
    for (const auto& method : m.value.get_methods()) {
      const auto* gf = dynamic_cast<const jit::GraphFunction*>(&method.function());
      if (gf) visit(gf->graph()->block(), m.name);
    }
  }
  if (traced) *traced = any_trace;
  return out;
}

}  // namespace oxport
