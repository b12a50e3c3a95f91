// Control flow from torch.jit.script: prim::If -> ONNX If, prim::Loop -> ONNX Loop (opset 11+ as
// torch.onnx; If and Loop exist from opset 1, but torch.onnx scripting export starts at 11, and
// so do we). The frontend has already inlined every If whose condition is static (the branch
// taken), and folded loops that depend on nothing dynamic; what reaches here is data-dependent.
// Block bodies are converted with the same driver as the main graph, into a subgraph.
#include <set>

#include "convert/driver.h"
#include "convert/args.h"
#include "convert/registry.h"
#include "convert/sequence.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

const char* kTraceHint =
    "export with graph_mode \"trace\" (--graph-mode trace, or graph_mode in the studio's options), which records only the "
    "path the example inputs take, as torch.jit.trace would";

// The ONNX dtype a TorchScript value has as a tensor (scalars are 0-d tensors).
std::optional<DType> onnxDTypeOf(const Value* v) {
  if (auto dt = typeDType(v)) return dt;
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
  if (!dt && as && v->isNone() && v->isConstant()) {
    // prim::Uninitialized, folded: the value of a path that returned early, never read.
    onnx_ir::ValueInfo vi;
    vi.name = ctx.emit1("Identity", {ctx.constScalar(0, *as)});
    vi.dtype = *as;
    g.outputs.push_back(vi);
    return vi.name;
  }
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
        if (isTensorList(n.output(i))) {
          // A list of tensors leaves the If as a sequence (its length may differ between branches).
          const Value* o0 = n.blocks[0]->outputs[i];
          const Value* o1 = n.blocks[1]->outputs[i];
          if (packListsAtBoundaries(ctx)) s = checkPackable(ctx, n.output(i), {o0, o1});
          if (!s.ok()) break;
          auto r = sequenceSubgraphOutput(ctx, *g, b.outputs[i], listElemDType(n.output(i), {o0, o1}));
          if (!r.ok()) s = r.error();
          continue;
        }
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
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    if (isTensorList(n.output(i)))
      ctx.bindSequence(n.output(i), packListsAtBoundaries(ctx) ? unpackList(ctx, outs[i]) : outs[i]);
    else ctx.bind(n.output(i), outs[i]);
  }
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
  std::vector<bool> carried_seq;
  for (size_t k = 2; k < n.inputs.size(); ++k) {
    const Value* v = n.input(k);
    if (isTensorList(v) || isTensorList(n.output(k - 2)) || isTensorList(b.inputs.at(k - 1))) {
      // A list of tensors (appended to in the loop) is carried as a sequence (packed below opset 13).
      DType elem = listElemDType(v, {n.output(k - 2), b.inputs.at(k - 1), b.outputs.at(k - 1)});
      OXPORT_ASSIGN(std::string seq, ctx.sequence(v, elem));
      if (packListsAtBoundaries(ctx)) {
        OXPORT_TRY(checkPackable(ctx, n.output(k - 2), {v, b.outputs.at(k - 1)}));
        seq = packList(ctx, seq, elem);
      }
      inputs.push_back(seq);
      carried_types.push_back(elem);
      carried_seq.push_back(true);
      continue;
    }
    auto dt = onnxDTypeOf(v);
    if (!dt && v->isNone() && v->isConstant()) {
      // prim::Uninitialized, folded (the result of a return inside the loop before it happens):
      // a placeholder of the type the loop gives it.
      dt = onnxDTypeOf(n.output(k - 2));
      if (!dt) dt = onnxDTypeOf(b.inputs.at(k - 1));
      if (dt) {
        inputs.push_back(ctx.constScalar(0, *dt));
        carried_types.push_back(*dt);
        carried_seq.push_back(false);
        continue;
      }
    }
    if (!dt)
      return ctx.error("unsupported-form",
                       "loop-carried value %" + v->name + " is a " + v->typeString() +
                           ", which has no ONNX form (only tensors and numbers are carried)",
                       fixFor(v) + kTraceHint);
    OXPORT_ASSIGN(std::string s, ctx.tensor(v));
    inputs.push_back(s);
    carried_types.push_back(*dt);
    carried_seq.push_back(false);
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
    if (carried_seq.at(k)) {
      std::string name = scalarInput(bv->name.empty() ? "loop_list" : bv->name, carried_types.at(k), false);
      if (packListsAtBoundaries(ctx)) name = unpackList(ctx, name);
      else g->inputs.back().sequence = true;
      ctx.bindSequence(bv, name);
      continue;
    }
    bool scalar = bv->type != ts::ValueType::Tensor;
    ctx.bind(bv, scalarInput(bv->name.empty() ? "loop_carried" : bv->name, carried_types.at(k), scalar));
  }
  Status s = convertBlockNodes(ctx, b);
  if (s.ok()) {
    ctx.setCurrent(&n);
    auto r = subgraphOutput(ctx, *g, b.outputs.at(0), n, "the loop condition", DType::Bool);
    if (!r.ok()) s = r.error();
    for (size_t k = 1; k < b.outputs.size() && s.ok(); ++k) {
      if (carried_seq.at(k - 1)) {
        auto rs = sequenceSubgraphOutput(ctx, *g, b.outputs[k], carried_types.at(k - 1));
        if (!rs.ok()) s = rs.error();
        continue;
      }
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
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    if (carried_seq.at(i))
      ctx.bindSequence(n.output(i), packListsAtBoundaries(ctx) ? unpackList(ctx, outs[i]) : outs[i]);
    else ctx.bind(n.output(i), outs[i]);
  }
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
  if (isTensorList(n.output(0))) {
    ctx.bindListValues(n.output(0), {});
    return okStatus();
  }
  DType dt = n.output(0)->type == ts::ValueType::Tensor ? n.output(0)->meta.dtype
             : n.output(0)->type == ts::ValueType::Float ? DType::Float32
             : n.output(0)->type == ts::ValueType::Bool  ? DType::Bool
                                                         : DType::Int64;
  return bindOut(ctx, n, ctx.constScalar(0, dt));
}

// aten::__range_length(lo, hi, step): the trip count of `for i in range(lo, hi, step)`, 0 when
// the range is empty: max(0, ceil((hi - lo) / step)) with the sign of step.
Status convertRangeLength(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string lo, ctx.tensorOfType(args.in("lo", 0), DType::Int64));
  OXPORT_ASSIGN(std::string hi, ctx.tensorOfType(args.in("hi", 1), DType::Int64));
  OXPORT_ASSIGN(int64_t step, ctx.constInt(args.in("step", 2)));
  if (step == 0) return ctx.error("bad-argument", "range() step must not be zero");
  const int64_t mag = step > 0 ? step : -step;
  std::string span = step > 0 ? ctx.emit1("Sub", {hi, lo}) : ctx.emit1("Sub", {lo, hi});
  // Integer Div truncates; for span <= 0 the result is <= 0 and the Where makes it 0.
  std::string q = ctx.emit1("Div", {ctx.emit1("Add", {span, ctx.constInt64s({mag - 1}, true)}),
                                     ctx.constInt64s({mag}, true)});
  std::string zero = ctx.constInt64s({0}, true);  // Max takes int64 from opset 12 only
  return bindOut(ctx, n, ctx.emit1("Where", {ctx.emit1("Less", {q, zero}), zero, q}));
}

// aten::__derive_index(index, start, step) = start + index * step: the loop variable of a range.
Status convertDeriveIndex(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string i, ctx.tensorOfType(args.in("index", 0), DType::Int64));
  OXPORT_ASSIGN(std::string start, ctx.tensorOfType(args.in("start", 1), DType::Int64));
  OXPORT_ASSIGN(std::string step, ctx.tensorOfType(args.in("step", 2), DType::Int64));
  return bindOut(ctx, n, ctx.emit1("Add", {start, ctx.emit1("Mul", {i, step})}));
}

}  // namespace

void registerControlOps(Registry& r) {
  r.add("prim::If", convertIf);
  r.add("prim::Loop", convertLoop);
  r.add("prim::RaiseException", convertRaise);
  r.add("prim::Uninitialized", convertUninitialized);
  r.add("aten::__range_length", convertRangeLength);
  r.add("aten::__derive_index", convertDeriveIndex);
}

}  // namespace oxport::convert
