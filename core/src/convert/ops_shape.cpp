// Shape and layout: size, flatten, view/reshape, permute/transpose, (un)squeeze, cat/stack,
// slice/select/narrow, expand; flip/roll, repeat/tile/repeat_interleave,
// movedim, meshgrid, broadcast_tensors, unfold/im2col, pixel_(un)shuffle, as_strided, and the
// shape queries numel/item/dim/len.
#include <algorithm>
#include <limits>
#include <optional>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/sequence.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {


// size(self) -> int[] / size(self, dim) -> int: computed from Shape so dynamic axes stay dynamic.
Status convertSize(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  std::string shape = ctx.shapeOf(x);
  if (n.inputs.size() == 1) return bindOut(ctx, n, shape);
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(args.in("dim", 1)));
  dim = ctx.normDim(dim, ctx.rank(args.in("self", 0)));
  return bindOut(ctx, n, ctx.emit1("Gather", {shape, ctx.constInt64s({dim}, true)}, {attrInt("axis", 0)}));
}

// flatten(self, start_dim=0, end_dim=-1)
Status convertFlatten(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const int rank = ctx.rank(args.in("self", 0));
  OXPORT_ASSIGN(int64_t start, ctx.constInt(args.in("start_dim", 1)));
  OXPORT_ASSIGN(int64_t end, ctx.constInt(args.in("end_dim", 2)));
  if (rank == 0) return bindOut(ctx, n, ctx.reshape(x, {1}));
  start = ctx.normDim(start, rank);
  end = ctx.normDim(end, rank);
  if (start == end) return bindOut(ctx, n, ctx.emit1("Identity", {x}));
  if (end == rank - 1) {
    if (start == 1) return bindOut(ctx, n, ctx.emit1("Flatten", {x}, {attrInt("axis", 1)}));
    if (start == 0) return bindOut(ctx, n, ctx.reshape(x, {-1}));
    std::vector<int64_t> shape(static_cast<size_t>(start), 0);
    shape.push_back(-1);
    return bindOut(ctx, n, ctx.reshape(x, shape));
  }
  // Dims after end_dim may be dynamic: build the shape from Shape(x).
  std::string s = ctx.shapeOf(x);
  std::vector<std::string> parts;
  if (start > 0) parts.push_back(ctx.slice(s, {0}, {start}, {0}));
  parts.push_back(ctx.constInt64s({-1}));
  parts.push_back(ctx.slice(s, {end + 1}, {kInt64Max}, {0}));
  std::string shape = ctx.emit1("Concat", parts, {attrInt("axis", 0)});
  return bindOut(ctx, n, ctx.emit1("Reshape", {x, shape}));
}

// view/reshape(self, shape)
// view/reshape(self, shape). A 0 in PyTorch's shape is a size 0; in ONNX's Reshape it copies the
// input's size unless allowzero=1 (opset 14). Before 14, a literal 0 (the result has no elements)
// is a ConstantOfShape of the static result shape.
Status convertReshape(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(std::string shape, ctx.intsTensor(args.in({"size", "shape"}, 1)));
  bool literal_zero = false;
  std::optional<std::vector<int64_t>> target;
  if (auto t = ctx.constInts(args.in({"size", "shape"}, 1)); t.ok()) {
    target = *t;
    for (int64_t d : *target) literal_zero = literal_zero || d == 0;
  }
  if (literal_zero) {
    if (ctx.opset() >= 14) return bindOut(ctx, n, ctx.emit1("Reshape", {x, shape}, {attrInt("allowzero", 1)}));
    const auto& out = n.output(0)->meta.shape;
    return bindOut(ctx, n, ctx.emit1("ConstantOfShape", {ctx.constInt64s(out)},
                                     {attrTensor("value", scalarHostTensor(0, ctx.dtype(args.in("self", 0)), {1}))}));
  }
  return bindOut(ctx, n, ctx.emit1("Reshape", {x, shape}));
}

// view_as/reshape_as/expand_as(self, other)
ConvertFn likeShape(const std::string& op) {
  return [op](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
    OXPORT_ASSIGN(std::string o, ctx.tensor(args.in("other", 1)));
    return bindOut(ctx, n, ctx.emit1(op, {x, ctx.shapeOf(o)}));
  };
}

Status convertPermute(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(auto perm, ctx.constInts(args.in("dims", 1)));
  const int rank = ctx.rank(args.in("self", 0));
  for (auto& p : perm) p = ctx.normDim(p, rank);
  return bindOut(ctx, n, ctx.emit1("Transpose", {x}, {attrInts("perm", perm)}));
}

Status convertTranspose(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const int rank = ctx.rank(args.in("self", 0));
  OXPORT_ASSIGN(int64_t a, ctx.constInt(args.in({"dim0", "axis0"}, 1)));
  OXPORT_ASSIGN(int64_t b, ctx.constInt(args.in({"dim1", "axis1"}, 2)));
  a = ctx.normDim(a, rank);
  b = ctx.normDim(b, rank);
  if (a == b) return bindOut(ctx, n, ctx.emit1("Identity", {x}));
  std::vector<int64_t> perm;
  for (int i = 0; i < rank; ++i) perm.push_back(i);
  std::swap(perm[static_cast<size_t>(a)], perm[static_cast<size_t>(b)]);
  return bindOut(ctx, n, ctx.emit1("Transpose", {x}, {attrInts("perm", perm)}));
}

Status convertUnsqueeze(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(args.in("dim", 1)));
  dim = ctx.normDim(dim, ctx.rank(args.in("self", 0)) + 1);
  return bindOut(ctx, n, ctx.unsqueeze(x, {dim}));
}

// squeeze(self) / squeeze(self, dim): a dim that is not 1 is left alone, as in PyTorch.
Status convertSqueeze(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const auto& shape = ctx.meta(args.in("self", 0)).shape;
  const int rank = ctx.rank(args.in("self", 0));
  if (n.inputs.size() == 1) {
    std::vector<int64_t> axes;
    for (int i = 0; i < rank; ++i)
      if (shape[static_cast<size_t>(i)] == 1) axes.push_back(i);
    if (axes.empty()) return bindOut(ctx, n, ctx.emit1("Identity", {x}));
    return bindOut(ctx, n, ctx.squeeze(x, axes));
  }
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(args.in("dim", 1)));
  if (rank == 0) return bindOut(ctx, n, ctx.emit1("Identity", {x}));
  dim = ctx.normDim(dim, rank);
  if (shape[static_cast<size_t>(dim)] != 1) return bindOut(ctx, n, ctx.emit1("Identity", {x}));
  return bindOut(ctx, n, ctx.squeeze(x, {dim}));
}

// cat(tensors, dim): empty 1-d tensors next to tensors of another rank are skipped as PyTorch
// does (its legacy placeholder). Between 1-d tensors an empty one stays: its size may only have
// been 0 in the example run (a detector's boxes for an image without any), and Concat takes it.
Status convertCat(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  if (ctx.isSequence(args.in("tensors", 0))) return concatSequence(ctx, n, false);
  OXPORT_ASSIGN(auto elems, ctx.listElements(args.in("tensors", 0)));
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(args.in("dim", 1)));
  std::vector<std::string> parts;
  int rank = 0;
  const int out_rank = n.output(0)->meta.rank();
  for (const Value* e : elems) {
    const auto& s = ctx.meta(e).shape;
    if (s.size() == 1 && s[0] == 0 && out_rank != 1) continue;
    rank = static_cast<int>(s.size());
    OXPORT_ASSIGN(std::string t, ctx.tensorOfType(e, n.output(0)->meta.dtype));
    parts.push_back(t);
  }
  if (parts.empty()) return ctx.error("unsupported-form", "cat of only empty tensors");
  dim = ctx.normDim(dim, rank);
  if (parts.size() == 1) return bindOut(ctx, n, ctx.emit1("Identity", {parts[0]}));
  return bindOut(ctx, n, ctx.emit1("Concat", parts, {attrInt("axis", dim)}));
}

Status convertStack(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  if (ctx.isSequence(args.in("tensors", 0))) return concatSequence(ctx, n, true);
  OXPORT_ASSIGN(auto elems, ctx.listElements(args.in("tensors", 0)));
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(args.in("dim", 1)));
  const int rank = elems.empty() ? 0 : ctx.rank(elems[0]);
  dim = ctx.normDim(dim, rank + 1);
  std::vector<std::string> parts;
  for (const Value* e : elems) {
    OXPORT_ASSIGN(std::string t, ctx.tensorOfType(e, n.output(0)->meta.dtype));
    parts.push_back(ctx.unsqueeze(t, {dim}));
  }
  return bindOut(ctx, n, ctx.emit1("Concat", parts, {attrInt("axis", dim)}));
}

// slice(self, dim, start, end, step)
// Also aten::slice.t(t[] l, int? start, int? end, int step) on a list of ints computed from the
// inputs (`x.shape[1:]` in a scripted model): such a list is a 1-D int64 tensor, sliced on axis 0.
Status convertSlice(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const bool list_form = n.inputs.size() == 4;
  const Value* self = args.in({"self", "l", "string"}, 0);
  if (list_form && isTensorList(self)) return sliceTensorList(ctx, n);
  if (list_form && self->elem_type != ts::ValueType::Int)
    return ctx.error("unsupported-form",
                     "slicing a " + self->typeString() +
                         " that depends on the inputs; only lists of ints (sizes) can be sliced in ONNX",
                     "slice the tensors instead (torch.stack the list first), or export with graph_mode \"trace\"");
  std::string x;
  if (list_form) {
    OXPORT_ASSIGN(x, ctx.intsTensor(self));
  } else {
    OXPORT_ASSIGN(x, ctx.tensor(self));
  }
  int64_t dim = 0;
  if (!list_form) {
    OXPORT_ASSIGN(dim, ctx.constInt(args.in("dim", 1)));
    dim = ctx.normDim(dim, ctx.rank(self));
  }
  // slice.t has no dim: its bounds come one place earlier.
  const size_t first_bound = list_form ? 1 : 2;
  OXPORT_ASSIGN(int64_t step, ctx.constInt(args.in("step", first_bound + 2)));
  const Value* sv = args.in("start", first_bound);
  const Value* ev = args.in("end", first_bound + 1);
  const bool static_bounds = (ctx.isNone(sv) || sv->constant) && (ctx.isNone(ev) || ev->constant);
  if (static_bounds) {
    int64_t start = ctx.isNone(sv) ? 0 : sv->constant->toInt();
    int64_t end = ctx.isNone(ev) ? kInt64Max : ev->constant->toInt();
    if (start == 0 && end == kInt64Max && step == 1) return bindOut(ctx, n, ctx.emit1("Identity", {x}));
    if (step != 1 && ctx.opset() < 10) return ctx.needsOpset(10, "slicing with a step");
    return bindOut(ctx, n, ctx.slice(x, {start}, {end}, {dim}, step == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{step}));
  }
  if (ctx.opset() < 10) return ctx.needsOpset(10, "slicing with bounds computed from the inputs");
  std::string start, end;
  if (ctx.isNone(sv)) start = ctx.constInt64s({0});
  else { OXPORT_ASSIGN(std::string s, ctx.tensorOfType(sv, DType::Int64)); start = ctx.reshape(s, {1}); }
  if (ctx.isNone(ev)) end = ctx.constInt64s({kInt64Max});
  else { OXPORT_ASSIGN(std::string e, ctx.tensorOfType(ev, DType::Int64)); end = ctx.reshape(e, {1}); }
  return bindOut(ctx, n, ctx.emit1("Slice", {x, start, end, ctx.constInt64s({dim}), ctx.constInt64s({step})}));
}

// select(self, dim, index) -> Gather with a scalar index drops the axis.
Status convertSelect(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in({"self", "list"}, 0)));
  const int rank = ctx.rank(args.in({"self", "list"}, 0));
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(args.in("dim", 1)));
  dim = ctx.normDim(dim, rank);
  std::string index;
  if (auto i = ctx.maybeInt(args.in("index", 2))) index = ctx.constInt64s({*i}, true);
  else { OXPORT_ASSIGN(index, ctx.tensorOfType(args.in("index", 2), DType::Int64)); }
  return bindOut(ctx, n, ctx.emit1("Gather", {x, index}, {attrInt("axis", dim)}));
}

// narrow(self, dim, start, length)
Status convertNarrow(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const int rank = ctx.rank(args.in("self", 0));
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(args.in("dim", 1)));
  dim = ctx.normDim(dim, rank);
  if (!ctx.maybeInt(args.in("start", 2)) || !ctx.maybeInt(args.in("length", 3))) {
    // x.narrow(1, x.size(1) - n, n): bounds from the inputs; a negative start counts from the end.
    if (ctx.opset() < 10) return ctx.needsOpset(10, "narrow with a start or length computed from the inputs");
    OXPORT_ASSIGN(std::string s, ctx.tensorOfType(args.in("start", 2), DType::Int64));
    OXPORT_ASSIGN(std::string len, ctx.tensorOfType(args.in("length", 3), DType::Int64));
    s = ctx.reshape(s, {1});
    std::string size = ctx.emit1("Gather", {ctx.shapeOf(x), ctx.constInt64s({dim})});
    s = ctx.emit1("Where", {ctx.emit1("Less", {s, ctx.constInt64s({0})}), ctx.emit1("Add", {s, size}), s});
    std::string end = ctx.emit1("Add", {s, ctx.reshape(len, {1})});
    return bindOut(ctx, n, ctx.emit1("Slice", {x, s, end, ctx.constInt64s({dim})}));
  }
  OXPORT_ASSIGN(int64_t start, ctx.constInt(args.in("start", 2)));
  OXPORT_ASSIGN(int64_t length, ctx.constInt(args.in("length", 3)));
  if (start < 0) start += ctx.meta(args.in("self", 0)).shape.at(static_cast<size_t>(dim));
  return bindOut(ctx, n, ctx.slice(x, {start}, {start + length}, {dim}));
}

// expand(self, size, implicit): -1 keeps the input's size.
Status convertExpand(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(std::string shape, ctx.intsTensor(args.in("size", 1)));
  // Expand treats -1 as an error, so replace -1 by 1 (Expand broadcasts 1 to the input's size).
  std::string ones = ctx.emit1("ConstantOfShape", {ctx.shapeOf(shape)},
                               {attrTensor("value", HostTensor::fromVector<int64_t>(DType::Int64, {1}, {1}))});
  std::string is_neg = ctx.emit1("Equal", {shape, ctx.constInt64s({-1}, true)});
  std::string fixed = ctx.emit1("Where", {is_neg, ones, shape});
  return bindOut(ctx, n, ctx.emit1("Expand", {x, fixed}));
}

// ---- reordering and repeating

// Concat of 1-D int64 pieces (skipping none).
std::string concatShape(Context& ctx, const std::vector<std::string>& parts) {
  if (parts.size() == 1) return parts[0];
  return ctx.emit1("Concat", parts, {attrInt("axis", 0)});
}

// flip(self, dims): a Slice with step -1 per flipped axis.
// Below opset 10 (no negative steps): a Gather of n-1 .. 0 per flipped axis.
Status convertFlip(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const int rank = ctx.rank(args.in("self", 0));
  OXPORT_ASSIGN(auto dims, ctx.constInts(args.in("dims", 1)));
  if (dims.empty()) return bindOut(ctx, n, ctx.emit1("Identity", {x}));
  for (auto& d : dims) d = ctx.normDim(d, rank);
  if (ctx.opset() < 10) {
    for (int64_t d : dims) {
      std::string size = dimSize(ctx, x, d);
      std::string idx = ctx.emit1("Sub", {ctx.emit1("Sub", {size, ctx.constInt64s({1})}), arangeOf(ctx, size)});
      x = ctx.emit1("Gather", {x, idx}, {attrInt("axis", d)});
    }
    return bindOut(ctx, n, x);
  }
  const size_t k = dims.size();
  return bindOut(ctx, n, ctx.slice(x, std::vector<int64_t>(k, -1), std::vector<int64_t>(k, std::numeric_limits<int64_t>::min()),
                                   dims, std::vector<int64_t>(k, -1)));
}

// roll(self, shifts, dims): per axis, the last (shift mod size) elements move to the front. The
// modulo is computed from Shape, so dynamic axes stay dynamic; no dims rolls the flattened tensor.
Status convertRoll(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  if (ctx.opset() < 10) return ctx.needsOpset(10, "roll (Slice with computed bounds, Mod)");
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const int rank = ctx.rank(args.in("self", 0));
  OXPORT_ASSIGN(auto shifts, ctx.constInts(args.in("shifts", 1)));
  OXPORT_ASSIGN(auto dims, ctx.constInts(args.in("dims", 2)));
  const bool flat = dims.empty();
  std::string y = flat ? ctx.reshape(x, {-1}) : x;
  if (flat) dims = {0};
  if (shifts.size() != dims.size()) return ctx.error("bad-argument", "roll: shifts and dims differ in length");
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = ctx.normDim(dims[i], flat ? 1 : rank);
    std::string s = ctx.emit1("Mod", {ctx.constInt64s({shifts[i]}), dimSize(ctx, y, d)});  // in [0, size)
    std::string neg = ctx.emit1("Neg", {s});
    std::string axes = ctx.constInt64s({d});
    std::string tail = ctx.emit1("Slice", {y, neg, ctx.constInt64s({kInt64Max}), axes});
    std::string head = ctx.emit1("Slice", {y, ctx.constInt64s({0}), neg, axes});
    // A shift of 0: tail is all of y (start -0 = 0) and head is empty.
    y = ctx.emit1("Concat", {tail, head}, {attrInt("axis", d)});
  }
  if (flat) y = ctx.emit1("Reshape", {y, ctx.shapeOf(x)});
  return bindOut(ctx, n, y);
}

// Tile after giving x as many dims as the repeats (leading 1s).
Result<std::string> tileTo(Context& ctx, const std::string& x, int rank, const Value* reps_v, bool pad_reps) {
  OXPORT_ASSIGN(std::string reps, ctx.intsTensor(reps_v));
  int64_t count = rank;
  if (auto c = ctx.constInts(reps_v); c.ok()) count = static_cast<int64_t>(c->size());
  else if (reps_v->producer && reps_v->producer->kind == "prim::ListConstruct")
    count = static_cast<int64_t>(reps_v->producer->inputs.size());
  std::string y = x;
  if (count > rank) {
    std::vector<int64_t> axes;
    for (int64_t i = 0; i < count - rank; ++i) axes.push_back(i);
    y = ctx.unsqueeze(x, axes);
  } else if (count < rank) {
    if (!pad_reps) return ctx.error("bad-argument", "repeat: fewer repeats than dims");
    reps = ctx.emit1("Concat", {ctx.constInt64s(std::vector<int64_t>(static_cast<size_t>(rank - count), 1)), reps},
                     {attrInt("axis", 0)});
  }
  return ctx.emit1("Tile", {y, reps});
}

// repeat(self, repeats) / tile(self, dims)
ConvertFn repeatOp(bool is_tile) {
  return [is_tile](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
    OXPORT_ASSIGN(std::string y, tileTo(ctx, x, ctx.rank(args.in("self", 0)), args.in({"repeats", "dims"}, 1), is_tile));
    return bindOut(ctx, n, y);
  };
}

// Source positions of repeat_interleave with per-element counts: for output j, the number of
// cumulative counts <= j.
std::string interleaveSources(Context& ctx, const std::string& repeats) {
  std::string cs = ctx.emit1("CumSum", {repeats, ctx.constInt64s({0}, true)});
  std::string total = reduceOver(ctx, "ReduceSum", repeats, {0}, false);
  std::string pos = ctx.unsqueeze(arangeOf(ctx, total), {1});                                 // [T, 1]
  std::string reached = ctx.emit1("Not", {ctx.emit1("Less", {pos, ctx.unsqueeze(cs, {0})})});  // [T, n]
  return reduceOver(ctx, "ReduceSum", ctx.cast(reached, DType::Int64), {1}, false);
}

// repeat_interleave(self, repeats: int|Tensor, dim, output_size) / repeat_interleave(repeats, output_size)
Status convertRepeatInterleave(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  if (n.inputs.size() == 2) {
    if (ctx.opset() < 11) return ctx.needsOpset(11, "repeat_interleave with a tensor of counts (CumSum)");
    OXPORT_ASSIGN(std::string reps, ctx.tensorOfType(args.in("repeats", 0), DType::Int64));
    return bindOut(ctx, n, interleaveSources(ctx, reps));
  }
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  int rank = ctx.rank(args.in("self", 0));
  int64_t dim = 0;
  if (ctx.isNone(args.in("dim", 2))) {
    x = ctx.reshape(x, {-1});
    rank = 1;
  } else {
    OXPORT_ASSIGN(dim, ctx.constInt(args.in("dim", 2)));
    dim = ctx.normDim(dim, rank);
  }
  const Value* rv = args.in("repeats", 1);
  const bool per_element = rv->isTensor() && !(ctx.meta(rv).shape.empty() ||
                                               (ctx.meta(rv).shape.size() == 1 && ctx.meta(rv).shape[0] == 1));
  if (per_element) {
    if (ctx.opset() < 11) return ctx.needsOpset(11, "repeat_interleave with a tensor of counts (CumSum)");
    OXPORT_ASSIGN(std::string reps, ctx.tensorOfType(rv, DType::Int64));
    return bindOut(ctx, n, ctx.emit1("Gather", {x, interleaveSources(ctx, reps)}, {attrInt("axis", dim)}));
  }
  // One count for every element: unsqueeze after dim, expand to the count, merge.
  std::string r;
  if (auto c = ctx.maybeInt(rv)) r = ctx.constInt64s({*c});
  else { OXPORT_ASSIGN(r, ctx.tensorOfType(rv, DType::Int64)); r = ctx.reshape(r, {1}); }
  std::string shape = ctx.shapeOf(x);
  std::vector<std::string> before, after;
  if (dim + 1 > 0) before.push_back(ctx.slice(shape, {0}, {dim + 1}, {0}));
  if (dim + 1 < rank) after.push_back(ctx.slice(shape, {dim + 1}, {kInt64Max}, {0}));
  std::vector<std::string> target = before;
  target.push_back(r);
  target.insert(target.end(), after.begin(), after.end());
  std::string e = ctx.emit1("Expand", {ctx.unsqueeze(x, {dim + 1}), concatShape(ctx, target)});
  std::vector<std::string> merged;
  if (dim > 0) merged.push_back(ctx.slice(shape, {0}, {dim}, {0}));
  merged.push_back(ctx.constInt64s({-1}));
  merged.insert(merged.end(), after.begin(), after.end());
  return bindOut(ctx, n, ctx.emit1("Reshape", {e, concatShape(ctx, merged)}));
}

// movedim(self, source, destination)
Status convertMovedim(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const int rank = ctx.rank(args.in("self", 0));
  OXPORT_ASSIGN(auto src, ctx.constInts(args.in("source", 1)));
  OXPORT_ASSIGN(auto dst, ctx.constInts(args.in("destination", 2)));
  if (src.size() != dst.size()) return ctx.error("bad-argument", "movedim: source and destination differ in length");
  std::vector<int64_t> perm(static_cast<size_t>(rank), -1);
  std::vector<bool> used(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < src.size(); ++i) {
    int64_t s = ctx.normDim(src[i], rank), d = ctx.normDim(dst[i], rank);
    perm[static_cast<size_t>(d)] = s;
    used[static_cast<size_t>(s)] = true;
  }
  int64_t next = 0;
  for (auto& p : perm) {
    if (p >= 0) continue;
    while (used[static_cast<size_t>(next)]) ++next;
    p = next++;
  }
  return bindOut(ctx, n, ctx.emit1("Transpose", {x}, {attrInts("perm", perm)}));
}

// numpy_T(self): all dims reversed.
Status convertNumpyT(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const int rank = ctx.rank(args.in("self", 0));
  if (rank < 2) return bindOut(ctx, n, ctx.emit1("Identity", {x}));
  std::vector<int64_t> perm;
  for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
  return bindOut(ctx, n, ctx.emit1("Transpose", {x}, {attrInts("perm", perm)}));
}

// meshgrid(tensors [, indexing]): each 1-D input reshaped along its own axis and expanded to the
// full grid; "xy" swaps the first two axes of the grid.
Status convertMeshgrid(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(auto elems, ctx.listElements(args.in("tensors", 0)));
  std::string indexing = "ij";
  if (args.has("indexing", 1)) { OXPORT_ASSIGN(indexing, ctx.constString(args.in("indexing", 1))); }
  const size_t k = elems.size();
  std::vector<std::string> flat;
  for (const Value* e : elems) {
    OXPORT_ASSIGN(std::string t, ctx.tensor(e));
    flat.push_back(ctx.reshape(t, {-1}));
  }
  // Grid axis of input i.
  std::vector<size_t> axis_of(k);
  for (size_t i = 0; i < k; ++i) axis_of[i] = i;
  if (indexing == "xy" && k >= 2) std::swap(axis_of[0], axis_of[1]);
  std::vector<std::string> sizes(k);
  for (size_t i = 0; i < k; ++i) sizes[axis_of[i]] = ctx.shapeOf(flat[i]);
  std::string grid = concatShape(ctx, sizes);
  std::vector<std::string> outs;
  for (size_t i = 0; i < k; ++i) {
    std::vector<int64_t> shape(k, 1);
    shape[axis_of[i]] = -1;
    outs.push_back(ctx.emit1("Expand", {ctx.reshape(flat[i], shape), grid}));
  }
  if (n.outputs.size() == 1 && n.output(0)->type == ts::ValueType::List) ctx.bindList(n.output(0), outs);
  else for (size_t i = 0; i < n.outputs.size() && i < outs.size(); ++i) ctx.bind(n.output(i), outs[i]);
  return okStatus();
}

// broadcast_tensors(tensors): each expanded to the common shape (found by chained Expands).
Status convertBroadcastTensors(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(auto elems, ctx.listElements(args.in("tensors", 0)));
  std::vector<std::string> ts;
  for (const Value* e : elems) {
    OXPORT_ASSIGN(std::string t, ctx.tensor(e));
    ts.push_back(t);
  }
  if (ts.empty()) return ctx.error("bad-argument", "broadcast_tensors of no tensors");
  std::string shape = ctx.shapeOf(ts[0]);
  for (size_t i = 1; i < ts.size(); ++i) shape = ctx.shapeOf(ctx.emit1("Expand", {ts[i], shape}));
  std::vector<std::string> outs;
  for (const auto& t : ts) outs.push_back(ctx.emit1("Expand", {t, shape}));
  if (n.outputs.size() == 1 && n.output(0)->type == ts::ValueType::List) ctx.bindList(n.output(0), outs);
  else for (size_t i = 0; i < n.outputs.size() && i < outs.size(); ++i) ctx.bind(n.output(i), outs[i]);
  return okStatus();
}

// unfold(self, dimension, size, step): windows gathered along the dim, the window last.
Status convertUnfold(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const int rank = ctx.rank(args.in("self", 0));
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(args.in("dimension", 1)));
  OXPORT_ASSIGN(int64_t size, ctx.constInt(args.in("size", 2)));
  OXPORT_ASSIGN(int64_t step, ctx.constInt(args.in("step", 3)));
  if (rank == 0) return bindOut(ctx, n, ctx.reshape(x, {1}));
  dim = ctx.normDim(dim, rank);
  // windows = (len - size) / step + 1; starts = arange(windows) * step
  std::string len = dimSize(ctx, x, dim, true);
  std::string windows = ctx.emit1("Add", {ctx.emit1("Div", {ctx.emit1("Sub", {len, ctx.constInt64s({size}, true)}),
                                                             ctx.constInt64s({step}, true)}),
                                          ctx.constInt64s({1}, true)});
  std::string starts = ctx.emit1("Mul", {arangeOf(ctx, windows), ctx.constInt64s({step}, true)});
  std::vector<int64_t> offsets(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) offsets[static_cast<size_t>(i)] = i;
  std::string idx = ctx.emit1("Add", {ctx.unsqueeze(starts, {1}), ctx.constInt64s(offsets)});  // [W, size]
  std::string g = ctx.emit1("Gather", {x, idx}, {attrInt("axis", dim)});  // x[:dim] + [W, size] + x[dim+1:]
  std::vector<int64_t> perm;
  for (int64_t i = 0; i <= rank; ++i)
    if (i != dim + 1) perm.push_back(i);
  perm.push_back(dim + 1);
  if (dim + 1 == rank) return bindOut(ctx, n, g);
  return bindOut(ctx, n, ctx.emit1("Transpose", {g}, {attrInts("perm", perm)}));
}

// im2col(self, kernel_size, dilation, padding, stride) on [N, C, H, W] -> [N, C*kh*kw, L]: one
// strided Slice per kernel offset (ends counted from the end, so H and W may be dynamic).
Status convertIm2col(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  if (ctx.rank(args.in("self", 0)) != 4) return ctx.error("unsupported-form", "im2col of a tensor that is not 4-D (N, C, H, W)");
  OXPORT_ASSIGN(auto k, ctx.constInts(args.in("kernel_size", 1)));
  OXPORT_ASSIGN(auto dil, ctx.constInts(args.in("dilation", 2)));
  OXPORT_ASSIGN(auto pad, ctx.constInts(args.in("padding", 3)));
  OXPORT_ASSIGN(auto stride, ctx.constInts(args.in("stride", 4)));
  k = expandInts(k, 2);
  dil = expandInts(dil, 2);
  pad = expandInts(pad, 2);
  stride = expandInts(stride, 2);
  if ((stride[0] != 1 || stride[1] != 1) && ctx.opset() < 10) return ctx.needsOpset(10, "im2col with a stride (Slice steps)");
  std::string xp = x;
  if (pad[0] || pad[1]) {
    std::vector<int64_t> pads{0, 0, pad[0], pad[1], 0, 0, pad[0], pad[1]};
    if (ctx.opset() >= 11) xp = ctx.emit1("Pad", {x, ctx.constInt64s(pads)});
    else xp = ctx.emit1("Pad", {x}, {attrInts("pads", pads)});
  }
  std::vector<std::string> parts;
  for (int64_t i = 0; i < k[0]; ++i) {
    for (int64_t j = 0; j < k[1]; ++j) {
      const int64_t sh = i * dil[0], sw = j * dil[1];
      const int64_t eh = -(dil[0] * (k[0] - 1 - i)), ew = -(dil[1] * (k[1] - 1 - j));
      std::vector<int64_t> steps;
      if (stride[0] != 1 || stride[1] != 1) steps = {stride[0], stride[1]};
      std::string s = ctx.slice(xp, {sh, sw}, {eh == 0 ? kInt64Max : eh, ew == 0 ? kInt64Max : ew}, {2, 3}, steps);
      parts.push_back(ctx.unsqueeze(s, {2}));
    }
  }
  std::string stacked = parts.size() == 1 ? parts[0] : ctx.emit1("Concat", parts, {attrInt("axis", 2)});  // [N,C,K,oh,ow]
  std::string flat = ctx.reshape(stacked, {0, 0, 0, -1});                                              // [N,C,K,L]
  std::string s = ctx.shapeOf(flat);
  std::string shape = concatShape(ctx, {ctx.slice(s, {0}, {1}, {0}), ctx.constInt64s({-1}), ctx.slice(s, {3}, {4}, {0})});
  return bindOut(ctx, n, ctx.emit1("Reshape", {flat, shape}));
}

// pixel_shuffle/pixel_unshuffle(self, factor): the 4-D input and the factor (`factor` is its name).
struct ShuffleArgs {
  std::string x;
  int64_t r = 1;
};

Result<ShuffleArgs> shuffleArgs(Context& ctx, const Node& n, const char* factor) {
  const Args args(ctx, n);
  ShuffleArgs a;
  OXPORT_ASSIGN(a.x, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(a.r, args.constInt(factor, 1));
  if (ctx.rank(args.in("self", 0)) != 4)
    return ctx.error("unsupported-form", n.kind.substr(n.kind.find("::") + 2) + " of a tensor that is not 4-D");
  return a;
}

// pixel_shuffle(self, r): [N, C*r*r, H, W] -> [N, C, H*r, W*r] (DepthToSpace CRD from opset 11).
Status convertPixelShuffle(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(ShuffleArgs a, shuffleArgs(ctx, n, "upscale_factor"));
  const std::string& x = a.x;
  const int64_t r = a.r;
  if (ctx.opset() >= 11)
    return bindOut(ctx, n, ctx.emit1("DepthToSpace", {x}, {attrInt("blocksize", r), attrString("mode", "CRD")}));
  std::string s = ctx.shapeOf(x);
  std::string nn = ctx.slice(s, {0}, {1}, {0}), h = ctx.slice(s, {2}, {3}, {0}), w = ctx.slice(s, {3}, {4}, {0});
  std::string rr = ctx.constInt64s({r});
  std::string six = ctx.emit1("Reshape", {x, concatShape(ctx, {nn, ctx.constInt64s({-1, r, r}), h, w})});
  std::string t = ctx.emit1("Transpose", {six}, {attrInts("perm", {0, 1, 4, 2, 5, 3})});
  std::string out_shape = concatShape(ctx, {nn, ctx.constInt64s({-1}), ctx.emit1("Mul", {h, rr}), ctx.emit1("Mul", {w, rr})});
  return bindOut(ctx, n, ctx.emit1("Reshape", {t, out_shape}));
}

// pixel_unshuffle(self, r): [N, C, H*r, W*r] -> [N, C*r*r, H, W] (SpaceToDepth orders channels
// differently, so Reshape/Transpose).
Status convertPixelUnshuffle(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(ShuffleArgs a, shuffleArgs(ctx, n, "downscale_factor"));
  const std::string& x = a.x;
  const int64_t r = a.r;
  std::string s = ctx.shapeOf(x);
  std::string nc = ctx.slice(s, {0}, {2}, {0});
  std::string rr = ctx.constInt64s({r});
  std::string h = ctx.emit1("Div", {ctx.slice(s, {2}, {3}, {0}), rr});
  std::string w = ctx.emit1("Div", {ctx.slice(s, {3}, {4}, {0}), rr});
  std::string six = ctx.emit1("Reshape", {x, concatShape(ctx, {nc, h, rr, w, rr})});
  std::string t = ctx.emit1("Transpose", {six}, {attrInts("perm", {0, 1, 3, 5, 2, 4})});
  std::string out_shape = concatShape(ctx, {ctx.slice(s, {0}, {1}, {0}), ctx.constInt64s({-1}), h, w});
  return bindOut(ctx, n, ctx.emit1("Reshape", {t, out_shape}));
}

// as_strided(self, size, stride, storage_offset): static indices into the flattened (contiguous) input.
// as_strided with sizes or strides read at run time (Longformer's _chunk takes list(x.size()) and
// list(x.stride()), traced as aten::size): offset + sum over d of arange(size[d]) * stride[d],
// each laid along its own axis and broadcast, then the same Gather into the flattened input
// (arangeOf: every opset).
Status asStridedRuntime(Context& ctx, const Node& n, const std::string& x) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string size, ctx.intsTensor(args.in("size", 1)));
  OXPORT_ASSIGN(std::string stride, ctx.intsTensor(args.in("stride", 2)));
  const int rank = ctx.rank(n.output(0));
  if (rank < 1) return ctx.error("bad-argument", "as_strided: the output's rank is unknown");
  // A trace records x.stride() as numbers: strides that are constants beside sizes read at run time
  // are the example's layout, wrong wherever a stride spans an axis whose size changes.
  if (auto fixed = ctx.constInts(args.in("stride", 2)); fixed.ok()) {
    bool spans = false;
    for (int64_t st : *fixed) spans = spans || st > 1;
    if (spans)
      ctx.warn("baked-dynamic-size",
               "as_strided's sizes are read at run time but its strides are constants (a trace records x.stride() as "
               "the example's numbers): where a stride spans an axis whose size changes, the file reads other elements "
               "at other sizes",
               "compute the windows with unfold or slicing, or script the model, or export at the sizes you run");
  }
  std::string idx;
  if (args.has("storage_offset", 3) && !ctx.isNone(args.in("storage_offset", 3))) {
    OXPORT_ASSIGN(idx, ctx.tensorOfType(args.in("storage_offset", 3), DType::Int64));
    idx = ctx.reshape(idx, {});
  } else {
    idx = ctx.constInt64s({0}, true);
  }
  for (int d = 0; d < rank; ++d) {
    const std::string at = ctx.constInt64s({d}, true);
    std::string steps = ctx.emit1("Mul", {arangeOf(ctx, ctx.emit1("Gather", {size, at})), ctx.emit1("Gather", {stride, at})});
    std::vector<int64_t> along(static_cast<size_t>(rank), 1);
    along[static_cast<size_t>(d)] = -1;
    idx = ctx.emit1("Add", {idx, ctx.reshape(steps, along)});
  }
  return bindOut(ctx, n, ctx.emit1("Gather", {ctx.reshape(x, {-1}), idx}, {attrInt("axis", 0)}));
}

Status convertAsStrided(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  auto size_r = ctx.constInts(args.in("size", 1));
  auto stride_r = ctx.constInts(args.in("stride", 2));
  const bool fixed_offset = !args.has("storage_offset", 3) || ctx.isNone(args.in("storage_offset", 3)) ||
                            ctx.maybeInt(args.in("storage_offset", 3));
  if (!size_r.ok() || !stride_r.ok() || !fixed_offset) return asStridedRuntime(ctx, n, x);
  const auto& size = *size_r;
  const auto& stride = *stride_r;
  int64_t offset = 0;
  if (args.has("storage_offset", 3) && !ctx.isNone(args.in("storage_offset", 3))) {
    OXPORT_ASSIGN(offset, ctx.constInt(args.in("storage_offset", 3)));
  }
  if (size.size() != stride.size()) return ctx.error("bad-argument", "as_strided: size and stride differ in length");
  std::vector<int64_t> idx{offset};
  for (size_t d = 0; d < size.size(); ++d) {
    std::vector<int64_t> next;
    next.reserve(idx.size() * static_cast<size_t>(size[d]));
    for (int64_t base : idx)
      for (int64_t i = 0; i < size[d]; ++i) next.push_back(base + i * stride[d]);
    idx = std::move(next);
  }
  std::string indices = ctx.constant(HostTensor::fromVector<int64_t>(DType::Int64, size, idx), "Constant");
  return bindOut(ctx, n, ctx.emit1("Gather", {ctx.reshape(x, {-1}), indices}, {attrInt("axis", 0)}));
}

// _reshape_from_tensor(self, shape) / _shape_as_tensor(self) / numel(self)
Status convertReshapeFromTensor(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(std::string s, ctx.tensorOfType(args.in("shape", 1), DType::Int64));
  return bindOut(ctx, n, ctx.emit1("Reshape", {x, s}));
}

Status convertShapeAsTensor(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  return bindOut(ctx, n, ctx.shapeOf(x));
}

Status convertNumel(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  return bindOut(ctx, n, ctx.emit1("Size", {x}));
}

// item(self): a dynamic scalar, carried as a 0-d tensor of the type the IR gives the number.
Status convertItem(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  if (ctx.rank(args.in("self", 0)) != 0) x = ctx.reshape(x, {});
  const DType want = n.output(0)->type == ts::ValueType::Int    ? DType::Int64
                     : n.output(0)->type == ts::ValueType::Bool ? DType::Bool
                                                                : DType::Float32;
  return bindOut(ctx, n, ctx.dtype(args.in("self", 0)) == want ? x : ctx.cast(x, want));
}

// dim(self) / is_floating_point(self): known from the example run (the frontend usually folds them).
Status convertDim(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  return bindOut(ctx, n, ctx.constInt64s({ctx.rank(args.in("self", 0))}, true));
}

Status convertIsFloatingPoint(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  return bindOut(ctx, n, ctx.constScalar(isFloating(ctx.dtype(args.in("self", 0))) ? 1 : 0, DType::Bool));
}

// len(tensor) = size(0); len(list) = its length.
Status convertLen(Context& ctx, const Node& n) {
  const Value* v = Args(ctx, n).in({"a", "t", "self", "s"}, 0);  // len.t/.any, .Tensor, .Dict_*, .str
  if (v->isTensor()) {
    OXPORT_ASSIGN(std::string x, ctx.tensor(v));
    return bindOut(ctx, n, dimSize(ctx, x, 0, true));
  }
  if (v->elem_type == ts::ValueType::Int && !v->constant &&
      !(v->producer && v->producer->kind == "prim::ListConstruct")) {
    // An int list computed at run time (`y.shape[2:]`): its length is the 1-D tensor's size.
    OXPORT_ASSIGN(std::string l, ctx.intsTensor(v));
    return bindOut(ctx, n, ctx.reshape(ctx.emit1("Size", {l}), {}));
  }
  if (ctx.isSequence(v)) {
    OXPORT_ASSIGN(std::string seq, ctx.tensor(v));
    return bindOut(ctx, n, ctx.emit1("SequenceLength", {seq}));
  }
  OXPORT_ASSIGN(auto names, ctx.tensorList(v));
  return bindOut(ctx, n, ctx.constInt64s({static_cast<int64_t>(names.size())}, true));
}

}  // namespace

void registerShapeOps(Registry& r) {
  r.add("aten::size", convertSize);
  r.add("aten::flatten", convertFlatten);
  addAll(r, {"aten::view", "aten::reshape", "aten::_reshape_alias", "aten::_unsafe_view"}, convertReshape);
  addAll(r, {"aten::view_as", "aten::reshape_as"}, likeShape("Reshape"));
  r.add("aten::expand_as", likeShape("Expand"));
  r.add("aten::permute", convertPermute);
  addAll(r, {"aten::transpose", "aten::transpose_", "aten::swapaxes", "aten::swapdims"}, convertTranspose);
  addAll(r, {"aten::unsqueeze", "aten::unsqueeze_"}, convertUnsqueeze);
  addAll(r, {"aten::squeeze", "aten::squeeze_"}, convertSqueeze);
  addAll(r, {"aten::cat", "aten::concat", "aten::concatenate"}, convertCat);
  r.add("aten::stack", convertStack);
  r.add("aten::slice", convertSlice);
  r.add("aten::select", convertSelect);
  r.add("aten::narrow", convertNarrow);
  r.add("aten::narrow_copy", convertNarrow);  // the same Slice (a copy is a new value anyway)
  r.add("aten::expand", convertExpand);
  r.add("aten::flip", convertFlip);
  r.add("aten::roll", convertRoll);
  r.add("aten::repeat", repeatOp(false));
  r.add("aten::tile", repeatOp(true));
  r.add("aten::repeat_interleave", convertRepeatInterleave);
  addAll(r, {"aten::movedim", "aten::moveaxis"}, convertMovedim);
  r.add("aten::numpy_T", convertNumpyT);
  r.add("aten::meshgrid", convertMeshgrid);
  r.add("aten::broadcast_tensors", convertBroadcastTensors);
  r.add("aten::unfold", convertUnfold);
  r.add("aten::im2col", convertIm2col);
  r.add("aten::pixel_shuffle", convertPixelShuffle);
  r.add("aten::pixel_unshuffle", convertPixelUnshuffle);
  r.add("aten::as_strided", convertAsStrided);
  r.add("aten::_reshape_from_tensor", convertReshapeFromTensor);
  r.add("aten::_shape_as_tensor", convertShapeAsTensor);
  r.add("aten::numel", convertNumel);
  r.add("aten::item", convertItem);
  r.add("aten::dim", convertDim);
  r.add("aten::is_floating_point", convertIsFloatingPoint);
  r.add("aten::len", convertLen);
}

}  // namespace oxport::convert
