// Lists of tensors mutated by the model (pass_list_mutation.h made each mutation a functional op):
// a list whose elements are known here (built in straight-line code) stays a list of values, as
// ListConstruct does; a list carried by a Loop or leaving an If is an ONNX sequence (opset 11+):
// append -> SequenceInsert, insert -> SequenceInsert at a position, pop -> SequenceAt and
// SequenceErase, l[i] = t -> SequenceErase and SequenceInsert, del l[i] -> SequenceErase,
// clear -> SequenceEmpty; cat/stack of it -> ConcatFromSequence, len -> SequenceLength.
#include "convert/sequence.h"

#include <limits>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

bool isTensorList(const Value* v) {
  if (v->type != ts::ValueType::List) return false;
  if (v->elem_type == ts::ValueType::Tensor) return true;
  if (!v->constant || !v->constant->isList() || v->constant->list().empty()) return false;
  for (const auto& e : v->constant->list())
    if (!e.isTensor()) return false;
  return true;
}

DType listElemDType(const Value* v, std::initializer_list<const Value*> related) {
  auto from = [](const Value* x) -> std::optional<DType> {
    for (const auto& m : x->elem_meta)
      if (m.known) return m.dtype;
    return std::nullopt;
  };
  if (auto d = from(v)) return *d;
  for (const Value* r : related)
    if (r)
      if (auto d = from(r)) return *d;
  // The elements put in by the ops that make this list's later versions.
  for (const Node* u : v->users)
    if (u->kind == "prim::oxport_list_append")
      if (const Value* x = Args::inputOf(*u, "x", 1); x && x->isTensor()) return x->meta.dtype;
  return DType::Float32;
}

Result<std::string> sequenceSubgraphOutput(Context& ctx, onnx_ir::Graph& g, const Value* v, DType elem) {
  OXPORT_ASSIGN(std::string name, ctx.sequence(v, elem));
  if (packListsAtBoundaries(ctx)) {
    onnx_ir::ValueInfo vi;
    vi.name = packList(ctx, name, elem);
    vi.dtype = elem;
    g.outputs.push_back(vi);
    return vi.name;
  }
  bool produced = false;
  for (const auto& n : g.nodes)
    for (const auto& o : n.outputs) produced = produced || o == name;
  for (const auto& o : g.outputs) produced = produced && o.name != name;
  if (!produced) {
    if (ctx.opset() >= 14) {
      name = ctx.emit1("Identity", {name});
    } else {
      // Identity takes sequences from opset 14: insert a tensor at the end and take it out again.
      std::string one = ctx.emit1("SequenceInsert", {name, ctx.constScalar(0, elem)});
      name = ctx.emit1("SequenceErase", {one, ctx.constInt64s({-1}, true)});
    }
  }
  onnx_ir::ValueInfo vi;
  vi.name = name;
  vi.dtype = elem;
  vi.sequence = true;
  g.outputs.push_back(vi);
  return name;
}

bool packListsAtBoundaries(const Context& ctx) { return ctx.opset() < 13; }

std::string packList(Context& ctx, const std::string& seq, DType elem) {
  std::string empty = ctx.emit1("Equal", {ctx.emit1("SequenceLength", {seq}), ctx.constInt64s({0}, true)});
  auto branch = [&](const char* name, bool is_empty) {
    auto g = std::make_shared<onnx_ir::Graph>();
    g->name = ctx.uniqueName(name);
    ctx.pushGraph(g.get());
    std::string out =
        is_empty ? ctx.emit1("ConstantOfShape", {ctx.constInt64s({0})}, {attrTensor("value", scalarHostTensor(0, elem, {1}))})
                 : ctx.emit1("ConcatFromSequence", {seq}, {attrInt("axis", 0), attrInt("new_axis", 1)});
    ctx.popGraph();
    onnx_ir::ValueInfo vi;
    vi.name = out;
    vi.dtype = elem;
    g->outputs.push_back(vi);
    return g;
  };
  std::vector<Attribute> attrs;
  attrs.push_back(Attribute{"then_branch", branch("pack_empty", true)});
  attrs.push_back(Attribute{"else_branch", branch("pack_list", false)});
  return ctx.emit1("If", {empty}, std::move(attrs));
}

std::string unpackList(Context& ctx, const std::string& packed) {
  return ctx.emit1("SplitToSequence", {packed}, {attrInt("axis", 0), attrInt("keepdims", 0)});
}

Status checkPackable(Context& ctx, const Value* list, std::initializer_list<const Value*> related) {
  std::vector<const ts::TensorMeta*> metas;
  for (const auto& m : list->elem_meta) metas.push_back(&m);
  for (const Value* r : related)
    if (r)
      for (const auto& m : r->elem_meta) metas.push_back(&m);
  for (const auto* m : metas)
    if (m->known && metas.front()->known && m->shape != metas.front()->shape)
      return ctx.needsOpset(13, "list %" + list->name + ", whose tensors have different shapes (" +
                                    metas.front()->toString() + ", " + m->toString() +
                                    "), carried by a loop or leaving an if");
  return okStatus();
}

Status concatSequence(Context& ctx, const Node& n, bool new_axis) {
  const Args args(ctx, n);
  const Value* l = args.in("tensors", 0);
  OXPORT_ASSIGN(int64_t dim, args.constInt("dim", 1));  // as given: ConcatFromSequence takes it negative
  OXPORT_ASSIGN(std::string seq, ctx.sequence(l, n.output(0)->meta.dtype));
  std::vector<Attribute> attrs{attrInt("axis", dim)};
  if (new_axis) attrs.push_back(attrInt("new_axis", 1));
  return bindOut(ctx, n, ctx.emit1("ConcatFromSequence", {seq}, std::move(attrs)));
}

namespace {
std::optional<std::vector<const Value*>> staticElements(Context& ctx, const Value* l);
}  // namespace

Status sliceTensorList(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* l = args.in("l", 0);
  const Value* sv = args.in("start", 1);
  const Value* ev = args.in("end", 2);
  auto bound = [&](const Value* v) -> std::optional<std::optional<int64_t>> {
    if (ctx.isNone(v)) return std::optional<int64_t>();
    if (auto i = ctx.maybeInt(v)) return std::optional<int64_t>(*i);
    return std::nullopt;  // depends on the inputs
  };
  auto step = ctx.maybeInt(args.in("step", 3));
  auto start = bound(sv), end = bound(ev);
  auto elems = staticElements(ctx, l);
  if (elems && start && end && step && *step != 0) {
    // Python's slice of a known list.
    const int64_t size = static_cast<int64_t>(elems->size());
    const bool up = *step > 0;
    auto clampIndex = [&](std::optional<int64_t> i, int64_t dflt) {
      if (!i) return dflt;
      int64_t v = *i < 0 ? *i + size : *i;
      return up ? std::max<int64_t>(0, std::min<int64_t>(v, size)) : std::max<int64_t>(-1, std::min<int64_t>(v, size - 1));
    };
    const int64_t a = clampIndex(*start, up ? 0 : size - 1), b = clampIndex(*end, up ? size : -1);
    std::vector<const Value*> out;
    for (int64_t i = a; up ? i < b : i > b; i += *step) out.push_back((*elems)[static_cast<size_t>(i)]);
    ctx.bindListValues(n.output(0), out);
    return okStatus();
  }
  if (ctx.opset() < 11) return ctx.needsOpset(11, "slicing list %" + l->name + " (an ONNX sequence)");
  if (!step) return ctx.error("dynamic-argument", "the step of a slice of list %" + l->name + " must be a constant");
  OXPORT_TRY(checkPackable(ctx, l, {n.output(0)}));
  const DType elem = listElemDType(l, {n.output(0)});
  OXPORT_ASSIGN(std::string seq, ctx.sequence(l, elem));
  auto boundTensor = [&](const Value* v, int64_t dflt) -> Result<std::string> {
    if (ctx.isNone(v)) return ctx.constInt64s({dflt});
    OXPORT_ASSIGN(std::string t, ctx.tensorOfType(v, DType::Int64));
    return ctx.reshape(t, {1});
  };
  const int64_t big = std::numeric_limits<int64_t>::max();
  OXPORT_ASSIGN(std::string a, boundTensor(sv, *step > 0 ? 0 : big));
  OXPORT_ASSIGN(std::string b, boundTensor(ev, *step > 0 ? big : std::numeric_limits<int64_t>::min()));
  std::string sliced = ctx.emit1("Slice", {packList(ctx, seq, elem), a, b, ctx.constInt64s({0}), ctx.constInt64s({*step})});
  ctx.bindSequence(n.output(0), unpackList(ctx, sliced));
  return okStatus();
}

namespace {

// The list's elements when they are known here (it is not a sequence and not made by an op
// whose length depends on the inputs).
std::optional<std::vector<const Value*>> staticElements(Context& ctx, const Value* l) {
  if (ctx.isSequence(l)) return std::nullopt;
  auto r = ctx.listElements(l);
  if (!r.ok()) return std::nullopt;
  return *r;
}

Result<std::string> position(Context& ctx, const Value* i) { return ctx.tensorOfType(i, DType::Int64); }

// A position counted from the front (l[-1] = t erases, then inserts at the end).
Result<std::string> frontPosition(Context& ctx, const Value* i, const std::string& seq) {
  if (auto c = ctx.maybeInt(i); c && *c >= 0) return ctx.constInt64s({*c}, true);
  OXPORT_ASSIGN(std::string p, position(ctx, i));
  std::string len = ctx.emit1("SequenceLength", {seq});
  std::string neg = ctx.emit1("Less", {p, ctx.constInt64s({0}, true)});
  return ctx.emit1("Where", {neg, ctx.emit1("Add", {p, len}), p});
}

Status needSequences(Context& ctx) {
  if (ctx.opset() < 11) return ctx.needsOpset(11, "a list built in a loop or an if (an ONNX sequence)");
  return okStatus();
}

// The ONNX sequence holding list l, for a list op whose list or index is not known at export time.
Result<std::string> dynamicSequence(Context& ctx, const Value* l) {
  OXPORT_TRY(needSequences(ctx));
  return ctx.sequence(l, listElemDType(l));
}

Status convertAppend(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* l = args.in("l", 0);
  const Value* x = args.in("x", 1);
  if (auto elems = staticElements(ctx, l)) {
    elems->push_back(x);
    ctx.bindListValues(n.output(0), *elems);
    return okStatus();
  }
  OXPORT_ASSIGN(std::string seq, dynamicSequence(ctx, l));
  OXPORT_ASSIGN(std::string t, ctx.tensor(x));
  ctx.bindSequence(n.output(0), ctx.emit1("SequenceInsert", {seq, t}));
  return okStatus();
}

// The list `l` and index `i` of a list op, and where both are known here, the list's elements
// and the place the index names in them.
struct IndexedList {
  const Value* l = nullptr;
  const Value* i = nullptr;
  std::optional<std::vector<const Value*>> elems;
  std::optional<size_t> at;  // set only with elems
};

// insert clamps the index to the list as Python's does (`insert` is true); the other ops refuse
// an index out of range, naming the list.
Result<IndexedList> indexedList(Context& ctx, const Node& n, bool insert) {
  const Args args(ctx, n);
  IndexedList li;
  li.l = args.in("l", 0);
  li.i = args.in("i", 1);
  auto elems = staticElements(ctx, li.l);
  auto i = ctx.maybeInt(li.i);
  if (!elems || !i) return li;
  const int64_t size = static_cast<int64_t>(elems->size());
  int64_t at = *i < 0 ? *i + size : *i;
  if (insert) {
    at = std::max<int64_t>(0, std::min<int64_t>(at, size));
  } else if (at < 0 || at >= size) {
    return ctx.error("bad-argument", "index " + std::to_string(at) + " is out of range for list %" + li.l->name + " of " +
                                         std::to_string(size) + " elements");
  }
  li.elems = std::move(elems);
  li.at = static_cast<size_t>(at);
  return li;
}

Status convertInsert(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(IndexedList li, indexedList(ctx, n, true));
  const Value* x = Args(ctx, n).in("x", 2);
  if (li.at) {
    li.elems->insert(li.elems->begin() + static_cast<int64_t>(*li.at), x);
    ctx.bindListValues(n.output(0), *li.elems);
    return okStatus();
  }
  OXPORT_ASSIGN(std::string seq, dynamicSequence(ctx, li.l));
  OXPORT_ASSIGN(std::string t, ctx.tensor(x));
  OXPORT_ASSIGN(std::string p, position(ctx, li.i));
  ctx.bindSequence(n.output(0), ctx.emit1("SequenceInsert", {seq, t, p}));
  return okStatus();
}

// del l[i]; l.pop(i) (`pop`) also gives the element taken out, as its second output.
Status eraseAt(Context& ctx, const Node& n, bool pop) {
  OXPORT_ASSIGN(IndexedList li, indexedList(ctx, n, false));
  if (li.at) {
    if (pop) {
      OXPORT_ASSIGN(std::string t, ctx.tensor((*li.elems)[*li.at]));
      ctx.bind(n.output(1), t);
    }
    li.elems->erase(li.elems->begin() + static_cast<int64_t>(*li.at));
    ctx.bindListValues(n.output(0), *li.elems);
    return okStatus();
  }
  OXPORT_ASSIGN(std::string seq, dynamicSequence(ctx, li.l));
  OXPORT_ASSIGN(std::string p, position(ctx, li.i));
  if (pop) ctx.bind(n.output(1), ctx.emit1("SequenceAt", {seq, p}));
  ctx.bindSequence(n.output(0), ctx.emit1("SequenceErase", {seq, p}));
  return okStatus();
}

Status convertPop(Context& ctx, const Node& n) { return eraseAt(ctx, n, true); }

Status convertDelete(Context& ctx, const Node& n) { return eraseAt(ctx, n, false); }

Status convertSet(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(IndexedList li, indexedList(ctx, n, false));
  const Value* x = Args(ctx, n).in("x", 2);
  if (li.at) {
    (*li.elems)[*li.at] = x;
    ctx.bindListValues(n.output(0), *li.elems);
    return okStatus();
  }
  OXPORT_ASSIGN(std::string seq, dynamicSequence(ctx, li.l));
  OXPORT_ASSIGN(std::string p, frontPosition(ctx, li.i, seq));
  OXPORT_ASSIGN(std::string t, ctx.tensor(x));
  std::string erased = ctx.emit1("SequenceErase", {seq, p});
  ctx.bindSequence(n.output(0), ctx.emit1("SequenceInsert", {erased, t, p}));
  return okStatus();
}

Status convertClear(Context& ctx, const Node& n) {
  ctx.bindListValues(n.output(0), {});
  return okStatus();
}

Status convertExtend(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* l = args.in("l", 0);
  const Value* other = args.in("other", 1);
  auto elems = staticElements(ctx, l);
  auto more = staticElements(ctx, other);
  if (elems && more) {
    elems->insert(elems->end(), more->begin(), more->end());
    ctx.bindListValues(n.output(0), *elems);
    return okStatus();
  }
  if (!more)
    return ctx.error("unsupported-form",
                     "extending list %" + l->name + " by list %" + other->name +
                         ", whose length depends on the inputs, has no ONNX form here",
                     "append the tensors one by one, or torch.cat the lists' stacked tensors");
  OXPORT_TRY(needSequences(ctx));
  OXPORT_ASSIGN(std::string seq, ctx.sequence(l, listElemDType(l, {other})));
  for (const Value* e : *more) {
    OXPORT_ASSIGN(std::string t, ctx.tensor(e));
    seq = ctx.emit1("SequenceInsert", {seq, t});
  }
  ctx.bindSequence(n.output(0), seq);
  return okStatus();
}

// list.reverse() (a Viterbi backtrace's tags, appended last to first): the elements in the other
// order when they are known here, else the sequence packed, sliced with step -1, unpacked.
Status convertReverse(Context& ctx, const Node& n) {
  const Value* l = Args(ctx, n).in("l", 0);
  if (auto elems = staticElements(ctx, l)) {
    ctx.bindListValues(n.output(0), std::vector<const Value*>(elems->rbegin(), elems->rend()));
    return okStatus();
  }
  OXPORT_TRY(needSequences(ctx));
  OXPORT_TRY(checkPackable(ctx, l, {n.output(0)}));
  const DType elem = listElemDType(l, {n.output(0)});
  OXPORT_ASSIGN(std::string seq, ctx.sequence(l, elem));
  const std::string packed = packList(ctx, seq, elem);
  std::string reversed = ctx.emit1("Slice", {packed, ctx.constInt64s({-1}), ctx.constInt64s({std::numeric_limits<int64_t>::min()}),
                                             ctx.constInt64s({0}), ctx.constInt64s({-1})});
  ctx.bindSequence(n.output(0), unpackList(ctx, reversed));
  return okStatus();
}

// An in-place list op that pass_list_mutation.h did not rewrite, on a list that depends on the
// inputs (the example run folds the rest).
Status convertInPlaceListOp(Context& ctx, const Node& n) {
  const Value* l = Args(ctx, n).in({"self", "l"}, 0);  // _set_item calls the list l
  const bool tensors = isTensorList(l);
  return ctx.error("unsupported-form",
                   n.kind + " changes list %" + l->name + " (a " + l->typeString() +
                       ") in place with values that depend on the inputs; " +
                       (tensors ? std::string("the list is also stored in another list, a dict or a loop's state, "
                                              "so it cannot become an ONNX sequence")
                                : std::string("only lists of tensors become ONNX sequences")),
                   std::string(tensors ? "keep the list in one variable and append to it directly"
                                       : "append tensors instead (torch.tensor(i) for an int) and torch.stack them") +
                       ", or export with graph_mode \"trace\" (--graph-mode trace)");
}

}  // namespace

void registerSequenceOps(Registry& r) {
  for (const char* k : {"aten::append", "aten::insert", "aten::pop", "aten::_set_item", "aten::Delete", "aten::clear",
                        "aten::extend", "aten::reverse", "aten::remove"})
    r.add(k, convertInPlaceListOp);
  r.add("prim::oxport_list_append", convertAppend);
  r.add("prim::oxport_list_insert", convertInsert);
  r.add("prim::oxport_list_pop", convertPop);
  r.add("prim::oxport_list_set", convertSet);
  r.add("prim::oxport_list_delete", convertDelete);
  r.add("prim::oxport_list_clear", convertClear);
  r.add("prim::oxport_list_extend", convertExtend);
  r.add("prim::oxport_list_reverse", convertReverse);
}

}  // namespace oxport::convert
