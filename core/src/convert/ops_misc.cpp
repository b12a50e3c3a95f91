// Structural ops (prim:: list/tuple plumbing, number <-> tensor), identities and casts, dropout.
#include "convert/args.h"
#include "convert/registry.h"
#include "convert/sequence.h"
#include "convert/number_list.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// ListConstruct/TupleConstruct/DictConstruct: consumers look through them (Context::listElements).
Status convertConstruct(Context&, const Node&) { return okStatus(); }

// ListUnpack/TupleUnpack: from a constructed list, a bound list (split), or a 1-D int tensor (size()).
Status convertUnpack(Context& ctx, const Node& n) {
  const Value* list = Args(ctx, n).in("tup", 0);  // prim::ListUnpack has no schema: its one input
  if (ctx.isSequence(list)) {
    // a, b = l with l built in a loop: one SequenceAt per name.
    for (size_t i = 0; i < n.outputs.size(); ++i)
      ctx.bind(n.output(i), ctx.emit1("SequenceAt", {*ctx.boundName(list), ctx.constInt64s({static_cast<int64_t>(i)}, true)}));
    return okStatus();
  }
  if (auto name = ctx.boundName(list)) {
    // A 1-D tensor (e.g. size() of a tensor): one Gather per element.
    for (size_t i = 0; i < n.outputs.size(); ++i)
      ctx.bind(n.output(i), ctx.emit1("Gather", {*name, ctx.constInt64s({static_cast<int64_t>(i)}, true)},
                                      {attrInt("axis", 0)}));
    return okStatus();
  }
  if (list->producer && (list->producer->kind == "prim::ListConstruct" || list->producer->kind == "prim::TupleConstruct")) {
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      const Value* src = list->producer->inputs.at(i);
      if (src->type == ts::ValueType::Tensor || src->isConstant() || ctx.isBound(src)) {
        if (auto b = ctx.boundName(src)) ctx.bind(n.output(i), *b);
        else if (src->isConstant() && !src->isNone()) {  // a None element (an Optional[Tensor] left
                                                          // None: MHA's weights with need_weights=False)
                                                          // stays unbound, like the constant it is
          OXPORT_ASSIGN(std::string s, ctx.tensor(src));
          ctx.bind(n.output(i), s);
        }
      }
    }
    return okStatus();
  }
  OXPORT_ASSIGN(auto names, ctx.tensorList(list));
  if (names.size() != n.outputs.size())
    return ctx.error("internal", "unpacking " + std::to_string(names.size()) + " values into " +
                                    std::to_string(n.outputs.size()));
  for (size_t i = 0; i < names.size(); ++i) ctx.bind(n.output(i), names[i]);
  return okStatus();
}

// sizes[i + 2] in a loop over a shape (GroupNorm's batch-size check, any `for i in range(len(s))`
// in a scripted model): a number list at an index known only when the graph runs. The list
// becomes a 1-D tensor (its elements may be dynamic) and the index a Gather; a negative index
// counts from the end, as Python's does (Gather takes negative indices natively from opset 11).
Status getNumberAt(Context& ctx, const Node& n, const Value* list, const Value* index) {
  const DType dt = list->elem_type == ts::ValueType::Int    ? DType::Int64
                   : list->elem_type == ts::ValueType::Bool ? DType::Bool
                                                            : DType::Float32;
  OXPORT_ASSIGN(std::string table, numberListTensor(ctx, list, dt));
  if (table.empty()) return ctx.error("bad-argument", "indexing an empty list");
  OXPORT_ASSIGN(std::string i, ctx.tensorOfType(index, DType::Int64));
  i = ctx.reshape(i, {});
  if (ctx.opset() < 11) {
    // i + len * (i < 0)
    std::string len = ctx.emit1("Shape", {table});
    len = ctx.reshape(len, {});
    std::string neg = ctx.cast(ctx.emit1("Less", {i, ctx.constInt64s({0}, true)}), DType::Int64);
    i = ctx.emit1("Add", {i, ctx.emit1("Mul", {len, neg})});
  }
  return bindOut(ctx, n, ctx.emit1("Gather", {table, i}, {attrInt("axis", 0)}));
}

// __getitem__(list, idx) / __getitem__.Dict_*(self, key) / __getitem__.str(s, index) /
// prim::TupleIndex(tup, i)
Status convertGetItem(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* list = args.in({"list", "self", "tup", "s"}, 0);
  const Value* index = args.in({"idx", "key", "i", "index"}, 1);
  if (n.schema.rfind("aten::__getitem__.Dict", 0) == 0 && list->producer && list->producer->kind == "prim::DictConstruct") {
    // features["out"] of a dict built with constant keys (pass_dict_writes.h): the entry itself.
    // DictConstruct is variadic: its inputs are key, value, key, value...
    const auto& ins = list->producer->inputs;
    for (size_t i = 0; i + 1 < ins.size(); i += 2) {
      bool same = false;
      if (index->constant && ins[i]->constant) {
        if (index->constant->isString() && ins[i]->constant->isString())
          same = index->constant->str() == ins[i]->constant->str();
        else if (index->constant->isInt() && ins[i]->constant->isInt())
          same = index->constant->toInt() == ins[i]->constant->toInt();
      }
      if (!same) continue;
      OXPORT_ASSIGN(std::string s, ctx.tensor(ins[i + 1]));
      return bindOut(ctx, n, s);
    }
  }
  if (n.schema.rfind("aten::__getitem__.Dict", 0) == 0)
    return ctx.error("unsupported-form",
                     "reading an entry of a dict that holds values computed from the inputs (d[key]); ONNX has "
                     "no dicts",
                     "keep the tensors in variables (or a list indexed by constants) inside forward(); returning a "
                     "dict of tensors is fine");
  if (isTensorList(list) && (ctx.isSequence(list) || !ctx.maybeInt(index))) {
    // l[i] of a list built in a loop, or at an index that depends on the inputs: SequenceAt.
    OXPORT_ASSIGN(std::string seq, ctx.sequence(list, listElemDType(list)));
    OXPORT_ASSIGN(std::string i, ctx.tensorOfType(index, DType::Int64));
    return bindOut(ctx, n, ctx.emit1("SequenceAt", {seq, i}));
  }
  if (!ctx.maybeInt(index) && (list->elem_type == ts::ValueType::Int || list->elem_type == ts::ValueType::Float ||
                                     list->elem_type == ts::ValueType::Bool))
    return getNumberAt(ctx, n, list, index);
  OXPORT_ASSIGN(int64_t idx, ctx.constInt(index));
  if (auto name = ctx.boundName(list)) {
    return bindOut(ctx, n, ctx.emit1("Gather", {*name, ctx.constInt64s({idx}, true)}, {attrInt("axis", 0)}));
  }
  if (list->producer && (list->producer->kind == "prim::ListConstruct" || list->producer->kind == "prim::TupleConstruct")) {
    auto& ins = list->producer->inputs;
    if (idx < 0) idx += static_cast<int64_t>(ins.size());
    if (idx < 0 || idx >= static_cast<int64_t>(ins.size())) return ctx.error("bad-argument", "list index out of range");
    const Value* e = ins[static_cast<size_t>(idx)];
    if (e->type == ts::ValueType::Tuple || e->type == ts::ValueType::List) {
      // an element that is itself a tuple or list (`for h in [(0, H - ws), ...]`): its values
      OXPORT_ASSIGN(auto elems, ctx.listElements(e));
      ctx.bindListValues(n.output(0), std::move(elems));
      return okStatus();
    }
    OXPORT_ASSIGN(std::string s, ctx.tensor(e));
    return bindOut(ctx, n, s);
  }
  OXPORT_ASSIGN(auto names, ctx.tensorList(list));
  if (idx < 0) idx += static_cast<int64_t>(names.size());
  if (idx < 0 || idx >= static_cast<int64_t>(names.size())) return ctx.error("bad-argument", "list index out of range");
  return bindOut(ctx, n, names[static_cast<size_t>(idx)]);
}

Status convertIdentity(Context& ctx, const Node& n) {
  // Positional on purpose: the value passed through is the first argument of every op this
  // serves, whatever its schema calls it (self, prim::data's a, prim::unchecked_cast's x).
  OXPORT_ASSIGN(std::string x, ctx.tensor(n.input(0)));
  return bindOut(ctx, n, x);
}

// Number <-> tensor: the ONNX form of a dynamic scalar is a 0-d tensor; only the dtype changes.
ConvertFn scalarCast(DType to) {
  return [to](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("a", 0)));
    DType have = args.in("a", 0)->isTensor() ? ctx.dtype(args.in("a", 0))
                 : args.in("a", 0)->type == ts::ValueType::Float ? DType::Float32
                 : args.in("a", 0)->type == ts::ValueType::Bool  ? DType::Bool
                                                            : DType::Int64;
    if (args.in("a", 0)->isTensor() && ctx.rank(args.in("a", 0)) > 0) x = ctx.reshape(x, {});
    return bindOut(ctx, n, have == to ? x : ctx.cast(x, to));
  };
}

Status convertNumToTensor(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("a", 0)));
  return bindOut(ctx, n, x);
}

// to / type_as / float / long ...: a Cast to the dtype the example run produced, or nothing.
Status convertCastToOutput(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  DType out = n.output(0)->meta.dtype;
  if (ctx.dtype(args.in("self", 0)) == out) return bindOut(ctx, n, x);
  return bindOut(ctx, n, ctx.cast(x, out));
}

// dropout(input, p, train) and its variants.
Status convertDropout(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in({"input", "self"}, 0)));
  bool train = ctx.trainingForm();
  if (ctx.settings().training == TrainingMode::Preserve && n.inputs.size() > 2) {
    if (auto t = ctx.maybeInt(args.in("train", 2))) train = *t != 0;
  }
  if (!train) return bindOut(ctx, n, x);
  if (n.kind != "aten::dropout" && n.kind != "aten::dropout_")
    return ctx.error("unsupported-form", n.kind + " in training mode has no ONNX form",
                     "export with training=EVAL, or use nn.Dropout");
  if (ctx.opset() < 12) return ctx.needsOpset(12, "dropout in training mode (Dropout training_mode)");
  OXPORT_ASSIGN(double p, ctx.constDouble(args.in("p", 1)));
  DType dt = ctx.dtype(args.in({"input", "self"}, 0));
  std::string ratio = ctx.constScalar(p, dt == DType::Float64 ? DType::Float64 : DType::Float32);
  std::string training_mode = ctx.constScalar(1, DType::Bool);
  auto outs = ctx.emit("Dropout", {x, ratio, training_mode}, 1);
  return bindOut(ctx, n, outs[0]);
}

// native_dropout(input, p, train) -> (output, mask): in eval the input and a mask of ones; in
// training mode ONNX Dropout with its mask output (opset 12).
Status convertNativeDropout(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("input", 0)));
  bool train = ctx.trainingForm();
  if (ctx.settings().training == TrainingMode::Preserve && args.has("train", 2)) {
    if (auto t = ctx.maybeInt(args.in("train", 2))) train = *t != 0;
  }
  if (!train) {
    ctx.bind(n.output(0), x);
    ctx.bind(n.output(1), ctx.emit1("Expand", {ctx.constScalar(1, DType::Bool), ctx.shapeOf(x)}));
    return okStatus();
  }
  if (ctx.opset() < 12) return ctx.needsOpset(12, "native_dropout in training mode (Dropout training_mode)");
  OXPORT_ASSIGN(double p, ctx.constDouble(args.in("p", 1)));
  DType dt = ctx.dtype(args.in("input", 0));
  std::string ratio = ctx.constScalar(p, dt == DType::Float64 ? DType::Float64 : DType::Float32);
  auto outs = ctx.emit("Dropout", {x, ratio, ctx.constScalar(1, DType::Bool)}, 2);
  ctx.bind(n.output(0), outs[0]);
  ctx.bind(n.output(1), outs[1]);
  return okStatus();
}

// prim::unchecked_cast (Optional[T] -> T in scripted code) and aten::list (a copy of a list):
// the value itself, of any kind.
Status convertUncheckedCast(Context& ctx, const Node& n) {
  const Value* v = n.input(0);  // positional as in convertIdentity: unchecked_cast's x, list's l
  if (v->type == ts::ValueType::List && v->elem_type == ts::ValueType::Int) {
    OXPORT_ASSIGN(std::string l, ctx.intsTensor(v));
    return bindOut(ctx, n, l);
  }
  if (v->type == ts::ValueType::List && ctx.isSequence(v)) {
    // list(l) of a list built in a loop or an if: the same ONNX sequence
    OXPORT_ASSIGN(std::string seq, ctx.sequence(v, listElemDType(v, {n.output(0)})));
    ctx.bindSequence(n.output(0), seq);
    return okStatus();
  }
  if (v->type == ts::ValueType::List) {
    OXPORT_ASSIGN(auto l, ctx.tensorList(v));
    ctx.bindList(n.output(0), l);
    return okStatus();
  }
  return convertIdentity(ctx, n);
}

// conj/_conj/conj_physical: ONNX has no complex tensors, so on what it holds (real tensors) the
// conjugate is the tensor itself.
Status convertConj(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  if (!args.in("self", 0)->isTensor()) return ctx.error("unsupported-form", n.kind + " of a number");
  return convertIdentity(ctx, n);
}

// __not__(bool): a dynamic Python bool (static ones are folded by the example run).
Status convertNot(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string b, ctx.tensorOfType(args.in("self", 0), DType::Bool));
  return bindOut(ctx, n, ctx.emit1("Not", {b}));
}

// __is__/__isnot__: TorchScript uses them to test for None (`m is None`); whether a value is None
// is known at export time.
ConvertFn convertIs(bool negate) {
  return [negate](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    const bool a_none = ctx.isNone(args.in("self", 0)), b_none = ctx.isNone(args.in("obj", 1));
    if (!a_none && !b_none)
      return ctx.error("unsupported-form", n.kind + " between two values that are not None (object identity)",
                       "compare with None, or compare values with ==");
    const bool same = a_none && b_none;
    return bindOut(ctx, n, ctx.constScalar(same != negate ? 1 : 0, DType::Bool));
  };
}

// is_pinned(self, device=None): exported models hold no page-locked host memory.
Status convertIsPinned(Context& ctx, const Node& n) { return bindOut(ctx, n, ctx.constScalar(0, DType::Bool)); }

}  // namespace

void registerStructuralOps(Registry& r) {
  addAll(r, {"aten::conj", "aten::_conj", "aten::conj_physical"}, convertConj);
  r.add("aten::__not__", convertNot);
  r.add("aten::__is__", convertIs(false));
  r.add("aten::__isnot__", convertIs(true));
  r.add("aten::is_pinned", convertIsPinned);
  addAll(r, {"prim::ListConstruct", "prim::TupleConstruct", "prim::DictConstruct"}, convertConstruct);
  addAll(r, {"prim::ListUnpack", "prim::TupleUnpack"}, convertUnpack);
  addAll(r, {"aten::__getitem__", "prim::TupleIndex"}, convertGetItem);
  r.add("prim::NumToTensor", convertNumToTensor);
  addAll(r, {"aten::Int", "aten::IntImplicit"}, scalarCast(DType::Int64));
  addAll(r, {"aten::Float", "aten::FloatImplicit"}, scalarCast(DType::Float32));
  r.add("aten::Bool", scalarCast(DType::Bool));
  r.add("aten::ScalarImplicit", convertNumToTensor);
  addAll(r, {"aten::contiguous", "aten::detach", "aten::detach_", "aten::clone", "aten::alias", "aten::lift",
             "aten::lift_fresh", "aten::_shape_as_tensor_identity", "aten::resolve_conj", "aten::resolve_neg",
             "prim::data", "aten::cpu"},  // the export runs on the CPU: .cpu() is the tensor itself
         convertIdentity);
  addAll(r, {"prim::unchecked_cast", "aten::list"}, convertUncheckedCast);
  addAll(r, {"aten::to", "aten::type_as", "aten::float", "aten::double", "aten::half", "aten::long", "aten::int",
             "aten::bool", "aten::short", "aten::char", "aten::byte", "aten::_cast_Float", "aten::_cast_Long",
             "aten::_cast_Int", "aten::_cast_Bool", "aten::_cast_Double", "aten::_cast_Byte", "aten::_cast_Char",
             "aten::_cast_Short", "aten::_cast_Half", "aten::_cast_BFloat16", "aten::bfloat16"},
         convertCastToOutput);
  r.add("aten::native_dropout", convertNativeDropout);
  addAll(r, {"aten::dropout", "aten::dropout_", "aten::feature_dropout", "aten::feature_dropout_",
             "aten::alpha_dropout", "aten::alpha_dropout_", "aten::feature_alpha_dropout",
             "aten::feature_alpha_dropout_"},
         convertDropout);
}


}  // namespace oxport::convert
