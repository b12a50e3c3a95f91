// Control flow from torch.jit.script: prim::If -> ONNX If, prim::Loop -> ONNX Loop (opset 11+ as
// torch.onnx; If and Loop exist from opset 1, but torch.onnx scripting export starts at 11, and
// so do we). The frontend has already inlined every If whose condition is static (the branch
// taken), and folded loops that depend on nothing dynamic; what reaches here is data-dependent.
// Block bodies are converted with the same driver as the main graph, into a subgraph.
#include <set>

#include "convert/driver.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

const char* kTraceHint =
    "export with graph_mode \"trace\" (--graph-mode trace, or graph_mode in the studio's options), which records only the "
    "path the example inputs take, as torch.jit.trace would";

// The ONNX dtype a TorchScript value has as a tensor (scalars are 0-d tensors).
std::optional<DType> onnxDTypeOf(const Value* v) {
  switch (v->type) {
    case ts::ValueType::Tensor: return v->meta.dtype;
    case ts::ValueType::Int: return DType::Int64;
    case ts::ValueType::Float: return DType::Float32;
    case ts::ValueType::Bool: return DType::Bool;
    default: break;
  }
  if (v->constant && v->constant->isTensor()) return v->constant->tensor().dtype;
  if (v->constant && v->constant->isBool()) return DType::Bool;
  if (v->constant && v->constant->isInt()) return DType::Int64;
  if (v->constant && v->constant->isDouble()) return DType::Float32;
  return std::nullopt;
}

// Adds the trace-mode hint to errors raised inside a block.
Error withTraceHint(const Error& e) {
  std::vector<Diagnostic> ds = e.diagnostics();
  for (auto& d : ds)
    if (d.hint.empty() && d.code != "cancelled") d.hint = kTraceHint;
  return Error(ds);
}

// What the model can do so that `v` (not a tensor or a number) need not leave a branch or loop,
// ending in ", or " before the trace hint.
std::string fixFor(const Value* v) {
  if (v->type == ts::ValueType::None)
    return "give it a tensor on every path (e.g. torch.zeros instead of None), or ";
  if (v->type == ts::ValueType::List)
    return "make it one tensor (torch.stack or torch.cat the list) before it leaves the if or loop, or ";
  return {};
}

// Names a subgraph output `v`: the tensor carrying it, through an Identity when the subgraph does
// not produce it itself (an outer value, a constant, an input of the body).
Result<std::string> subgraphOutput(Context& ctx, onnx_ir::Graph& g, const Value* v, const Node& owner,
                                   const std::string& what, std::optional<DType> as = std::nullopt) {
  auto dt = onnxDTypeOf(v);
  if (!dt)
    return ctx.error("unsupported-form",
                     what + " of " + owner.kind + " is a " + v->typeString() +
                         ", which has no ONNX form inside control flow (only tensors and numbers)",
                     fixFor(v) + kTraceHint);
  std::string name;
  if (as && *as != *dt) {
    OXPORT_ASSIGN(name, ctx.tensorOfType(v, *as));
    dt = as;
  } else {
    OXPORT_ASSIGN(name, ctx.tensor(v));
  }
  bool produced = false;
  for (const auto& n : g.nodes)
    for (const auto& o : n.outputs) produced = produced || o == name;
  for (const auto& o : g.outputs) produced = produced && o.name != name;  // one output per name
  if (!produced) name = ctx.emit1("Identity", {name});
  onnx_ir::ValueInfo vi;
  vi.name = name;
  vi.dtype = *dt;
  g.outputs.push_back(vi);
  return name;
}

Status convertBlockNodes(Context& ctx, const ts::Block& b) {
  std::vector<const ts::Node*> nodes(b.nodes.begin(), b.nodes.end());
  Status s = convertNodes(ctx, nodes, ctx.warnings());
  if (!s.ok()) return withTraceHint(s.error());
  return okStatus();
}

Status convertIf(Context& ctx, const Node& n) {
  if (ctx.opset() < 11) return ctx.needsOpset(11, "data-dependent control flow (prim::If from torch.jit.script)");
  if (n.blocks.size() != 2) return ctx.error("internal", "prim::If without two blocks");
  OXPORT_ASSIGN(std::string cond, ctx.tensorOfType(n.input(0), DType::Bool));
  std::vector<std::shared_ptr<onnx_ir::Graph>> branches;
  const char* names[] = {"then_branch", "else_branch"};
  for (size_t bi = 0; bi < 2; ++bi) {
    const ts::Block& b = *n.blocks[bi];
    auto g = std::make_shared<onnx_ir::Graph>();
    g->name = ctx.uniqueName(std::string(names[bi]) + "_" + std::to_string(n.id));
    ctx.pushGraph(g.get());
    Status s = convertBlockNodes(ctx, b);
    if (s.ok()) {
      ctx.setCurrent(&n);
      for (size_t i = 0; i < b.outputs.size() && s.ok(); ++i) {
        // Both branches give the If's output dtype (TorchScript unified their types).
        auto want = onnxDTypeOf(n.output(i));
        auto r = subgraphOutput(ctx, *g, b.outputs[i], n,
                                "output " + std::to_string(i) + " of the " + (bi == 0 ? "then" : "else") + "-branch",
                                want);
        if (!r.ok()) s = r.error();
      }
    }
    ctx.popGraph();
    ctx.setCurrent(&n);
    if (!s.ok()) return s;
    branches.push_back(std::move(g));
  }
  std::vector<Attribute> attrs;
  attrs.push_back(Attribute{"then_branch", branches[0]});
  attrs.push_back(Attribute{"else_branch", branches[1]});
  auto outs = ctx.emit("If", {cond}, static_cast<int>(n.outputs.size()), std::move(attrs));
  for (size_t i = 0; i < n.outputs.size(); ++i) ctx.bind(n.output(i), outs[i]);
  return okStatus();
}

// prim::Loop(max_trip_count, condition, carried...) { body(iter, carried...) -> (condition, carried...) }
// is ONNX Loop(M, cond, carried...) { body(iter, cond_in, carried...) -> (cond_out, carried...) }.
Status convertLoop(Context& ctx, const Node& n) {
  if (ctx.opset() < 11) return ctx.needsOpset(11, "data-dependent loops (prim::Loop from torch.jit.script)");
  if (n.blocks.size() != 1) return ctx.error("internal", "prim::Loop without a body");
  const ts::Block& b = *n.blocks[0];
  OXPORT_ASSIGN(std::string trip, ctx.tensorOfType(n.input(0), DType::Int64));
  OXPORT_ASSIGN(std::string cond, ctx.tensorOfType(n.input(1), DType::Bool));
  std::vector<std::string> inputs{trip, cond};
  std::vector<DType> carried_types;
  for (size_t k = 2; k < n.inputs.size(); ++k) {
    const Value* v = n.input(k);
    auto dt = onnxDTypeOf(v);
    if (!dt)
      return ctx.error("unsupported-form",
                       "loop-carried value %" + v->name + " is a " + v->typeString() +
                           ", which has no ONNX form (only tensors and numbers are carried)",
                       fixFor(v) + kTraceHint);
    OXPORT_ASSIGN(std::string s, ctx.tensor(v));
    inputs.push_back(s);
    carried_types.push_back(*dt);
  }

  auto g = std::make_shared<onnx_ir::Graph>();
  g->name = ctx.uniqueName("loop_body_" + std::to_string(n.id));
  ctx.pushGraph(g.get());
  auto scalarInput = [&](const std::string& base, DType dt, bool scalar) {
    onnx_ir::ValueInfo vi;
    vi.name = ctx.uniqueName(base);
    vi.dtype = dt;
    vi.has_shape = scalar;
    g->inputs.push_back(vi);
    return vi.name;
  };
  std::string iter = scalarInput("loop_iter_" + std::to_string(n.id), DType::Int64, true);
  scalarInput("loop_cond_" + std::to_string(n.id), DType::Bool, true);
  ctx.bind(b.inputs.at(0), iter);
  for (size_t k = 0; k + 1 < b.inputs.size(); ++k) {
    const Value* bv = b.inputs[k + 1];
    bool scalar = bv->type != ts::ValueType::Tensor;
    ctx.bind(bv, scalarInput(bv->name.empty() ? "loop_carried" : bv->name, carried_types.at(k), scalar));
  }
  Status s = convertBlockNodes(ctx, b);
  if (s.ok()) {
    ctx.setCurrent(&n);
    auto r = subgraphOutput(ctx, *g, b.outputs.at(0), n, "the loop condition", DType::Bool);
    if (!r.ok()) s = r.error();
    for (size_t k = 1; k < b.outputs.size() && s.ok(); ++k) {
      auto ro = subgraphOutput(ctx, *g, b.outputs[k], n, "loop-carried value " + std::to_string(k - 1),
                               carried_types.at(k - 1));
      if (!ro.ok()) s = ro.error();
    }
  }
  ctx.popGraph();
  ctx.setCurrent(&n);
  if (!s.ok()) return s;
  std::vector<Attribute> attrs;
  attrs.push_back(Attribute{"body", g});
  auto outs = ctx.emit("Loop", inputs, static_cast<int>(n.outputs.size()), std::move(attrs));
  for (size_t i = 0; i < n.outputs.size(); ++i) ctx.bind(n.output(i), outs[i]);
  return okStatus();
}

// A raise that depends on the inputs (a static one stopped the example run or was dropped with
// its branch): ONNX has no exceptions.
Status convertRaise(Context& ctx, const Node& n) {
  std::string msg;
  if (!n.inputs.empty() && n.input(0)->constant && n.input(0)->constant->isString())
    msg = " (\"" + n.input(0)->constant->str() + "\")";
  return ctx.error("unsupported-form",
                   "the model raises an exception" + msg + " in a branch that depends on the inputs; ONNX "
                   "has no exceptions",
                   std::string("remove the check from forward(), or ") + kTraceHint);
}

// Values that only exist on a path that returns or raises early; never read.
Status convertUninitialized(Context& ctx, const Node& n) {
  DType dt = n.output(0)->type == ts::ValueType::Tensor ? n.output(0)->meta.dtype
             : n.output(0)->type == ts::ValueType::Float ? DType::Float32
             : n.output(0)->type == ts::ValueType::Bool  ? DType::Bool
                                                         : DType::Int64;
  return bindOut(ctx, n, ctx.constScalar(0, dt));
}

}  // namespace

void registerControlOps(Registry& r) {
  r.add("prim::If", convertIf);
  r.add("prim::Loop", convertLoop);
  r.add("prim::RaiseException", convertRaise);
  r.add("prim::Uninitialized", convertUninitialized);
}

}  // namespace oxport::convert
