// Shape and layout: size, flatten, view/reshape, permute/transpose, (un)squeeze, cat/stack,
// split/chunk/unbind, slice/select/narrow, expand.
#include <limits>

#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// size(self) -> int[] / size(self, dim) -> int: computed from Shape so dynamic axes stay dynamic.
Status convertSize(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(std::string x, ctx.tensor(n.input(0)));
  std::string shape = ctx.shapeOf(x);
  if (n.inputs.size() == 1) return bindOut(ctx, n, shape);
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(n.input(1)));
  dim = ctx.normDim(dim, ctx.rank(n.input(0)));
  return bindOut(ctx, n, ctx.emit1("Gather", {shape, ctx.constInt64s({dim}, true)}, {attrInt("axis", 0)}));
}

// flatten(self, start_dim=0, end_dim=-1)
Status convertFlatten(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(std::string x, ctx.tensor(n.input(0)));
  const int rank = ctx.rank(n.input(0));
  OXPORT_ASSIGN(int64_t start, ctx.constInt(n.input(1)));
  OXPORT_ASSIGN(int64_t end, ctx.constInt(n.input(2)));
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
Status convertReshape(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(std::string x, ctx.tensor(n.input(0)));
  OXPORT_ASSIGN(std::string shape, ctx.intsTensor(n.input(1)));
  return bindOut(ctx, n, ctx.emit1("Reshape", {x, shape}));
}

// view_as/reshape_as/expand_as(self, other)
ConvertFn likeShape(const std::string& op) {
  return [op](Context& ctx, const Node& n) -> Status {
    OXPORT_ASSIGN(std::string x, ctx.tensor(n.input(0)));
    OXPORT_ASSIGN(std::string o, ctx.tensor(n.input(1)));
    return bindOut(ctx, n, ctx.emit1(op, {x, ctx.shapeOf(o)}));
  };
}

Status convertPermute(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(std::string x, ctx.tensor(n.input(0)));
  OXPORT_ASSIGN(auto perm, ctx.constInts(n.input(1)));
  const int rank = ctx.rank(n.input(0));
  for (auto& p : perm) p = ctx.normDim(p, rank);
  return bindOut(ctx, n, ctx.emit1("Transpose", {x}, {attrInts("perm", perm)}));
}

Status convertTranspose(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(std::string x, ctx.tensor(n.input(0)));
  const int rank = ctx.rank(n.input(0));
  OXPORT_ASSIGN(int64_t a, ctx.constInt(n.input(1)));
  OXPORT_ASSIGN(int64_t b, ctx.constInt(n.input(2)));
  a = ctx.normDim(a, rank);
  b = ctx.normDim(b, rank);
  if (a == b) return bindOut(ctx, n, ctx.emit1("Identity", {x}));
  std::vector<int64_t> perm;
  for (int i = 0; i < rank; ++i) perm.push_back(i);
  std::swap(perm[static_cast<size_t>(a)], perm[static_cast<size_t>(b)]);
  return bindOut(ctx, n, ctx.emit1("Transpose", {x}, {attrInts("perm", perm)}));
}

Status convertUnsqueeze(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(std::string x, ctx.tensor(n.input(0)));
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(n.input(1)));
  dim = ctx.normDim(dim, ctx.rank(n.input(0)) + 1);
  return bindOut(ctx, n, ctx.unsqueeze(x, {dim}));
}

// squeeze(self) / squeeze(self, dim): a dim that is not 1 is left alone, as in PyTorch.
Status convertSqueeze(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(std::string x, ctx.tensor(n.input(0)));
  const auto& shape = ctx.meta(n.input(0)).shape;
  const int rank = ctx.rank(n.input(0));
  if (n.inputs.size() == 1) {
    std::vector<int64_t> axes;
    for (int i = 0; i < rank; ++i)
      if (shape[static_cast<size_t>(i)] == 1) axes.push_back(i);
    if (axes.empty()) return bindOut(ctx, n, ctx.emit1("Identity", {x}));
    return bindOut(ctx, n, ctx.squeeze(x, axes));
  }
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(n.input(1)));
  if (rank == 0) return bindOut(ctx, n, ctx.emit1("Identity", {x}));
  dim = ctx.normDim(dim, rank);
  if (shape[static_cast<size_t>(dim)] != 1) return bindOut(ctx, n, ctx.emit1("Identity", {x}));
  return bindOut(ctx, n, ctx.squeeze(x, {dim}));
}

// cat(tensors, dim): empty (0-element, 1-d) tensors are skipped as PyTorch does.
Status convertCat(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(auto elems, ctx.listElements(n.input(0)));
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(n.input(1)));
  std::vector<std::string> parts;
  int rank = 0;
  for (const Value* e : elems) {
    const auto& s = ctx.meta(e).shape;
    if (s.size() == 1 && s[0] == 0) continue;
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
  OXPORT_ASSIGN(auto elems, ctx.listElements(n.input(0)));
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(n.input(1)));
  const int rank = elems.empty() ? 0 : ctx.rank(elems[0]);
  dim = ctx.normDim(dim, rank + 1);
  std::vector<std::string> parts;
  for (const Value* e : elems) {
    OXPORT_ASSIGN(std::string t, ctx.tensorOfType(e, n.output(0)->meta.dtype));
    parts.push_back(ctx.unsqueeze(t, {dim}));
  }
  return bindOut(ctx, n, ctx.emit1("Concat", parts, {attrInt("axis", dim)}));
}

// Splits bound as a list (consumed by ListUnpack, cat, __getitem__ ...).
Status bindSplit(Context& ctx, const Node& n, const std::string& x, int64_t dim, const std::vector<int64_t>& sizes) {
  auto outs = sizes.size() == 1 ? std::vector<std::string>{ctx.emit1("Identity", {x})} : ctx.split(x, dim, sizes);
  if (n.outputs.size() == 1 && n.output(0)->type == ts::ValueType::List) {
    ctx.bindList(n.output(0), outs);
  } else {
    for (size_t i = 0; i < n.outputs.size() && i < outs.size(); ++i) ctx.bind(n.output(i), outs[i]);
  }
  return okStatus();
}

// split(self, split_size|split_sizes, dim) / split_with_sizes / chunk(self, chunks, dim)
ConvertFn splitOp(bool is_chunk) {
  return [is_chunk](Context& ctx, const Node& n) -> Status {
    OXPORT_ASSIGN(std::string x, ctx.tensor(n.input(0)));
    OXPORT_ASSIGN(int64_t dim, ctx.constInt(n.input(2)));
    const auto& shape = ctx.meta(n.input(0)).shape;
    dim = ctx.normDim(dim, static_cast<int>(shape.size()));
    const int64_t len = shape.at(static_cast<size_t>(dim));
    // The sizes the example run produced are authoritative (they follow PyTorch's rules).
    std::vector<int64_t> sizes;
    for (const auto& m : n.output(0)->elem_meta) sizes.push_back(m.shape.at(static_cast<size_t>(dim)));
    if (sizes.empty()) {
      OXPORT_ASSIGN(auto arg, ctx.constInts(n.input(1)));
      if (arg.size() == 1 && !is_chunk) {
        for (int64_t s = 0; s < len; s += arg[0]) sizes.push_back(std::min(arg[0], len - s));
      } else {
        sizes = arg;
      }
    }
    return bindSplit(ctx, n, x, dim, sizes);
  };
}

// unbind(self, dim): split into ones and squeeze each.
Status convertUnbind(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(std::string x, ctx.tensor(n.input(0)));
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(n.input(1)));
  const auto& shape = ctx.meta(n.input(0)).shape;
  dim = ctx.normDim(dim, static_cast<int>(shape.size()));
  const int64_t len = shape.at(static_cast<size_t>(dim));
  auto parts = len == 1 ? std::vector<std::string>{x} : ctx.split(x, dim, std::vector<int64_t>(static_cast<size_t>(len), 1));
  for (auto& p : parts) p = ctx.squeeze(p, {dim});
  ctx.bindList(n.output(0), parts);
  return okStatus();
}

// slice(self, dim, start, end, step)
Status convertSlice(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(std::string x, ctx.tensor(n.input(0)));
  const int rank = ctx.rank(n.input(0));
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(n.input(1)));
  dim = ctx.normDim(dim, rank);
  OXPORT_ASSIGN(int64_t step, ctx.constInt(n.input(4)));
  const Value* sv = n.input(2);
  const Value* ev = n.input(3);
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
  OXPORT_ASSIGN(std::string x, ctx.tensor(n.input(0)));
  const int rank = ctx.rank(n.input(0));
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(n.input(1)));
  dim = ctx.normDim(dim, rank);
  std::string index;
  if (auto i = ctx.maybeInt(n.input(2))) index = ctx.constInt64s({*i}, true);
  else { OXPORT_ASSIGN(index, ctx.tensorOfType(n.input(2), DType::Int64)); }
  return bindOut(ctx, n, ctx.emit1("Gather", {x, index}, {attrInt("axis", dim)}));
}

// narrow(self, dim, start, length)
Status convertNarrow(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(std::string x, ctx.tensor(n.input(0)));
  const int rank = ctx.rank(n.input(0));
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(n.input(1)));
  OXPORT_ASSIGN(int64_t start, ctx.constInt(n.input(2)));
  OXPORT_ASSIGN(int64_t length, ctx.constInt(n.input(3)));
  dim = ctx.normDim(dim, rank);
  if (start < 0) start += ctx.meta(n.input(0)).shape.at(static_cast<size_t>(dim));
  return bindOut(ctx, n, ctx.slice(x, {start}, {start + length}, {dim}));
}

// expand(self, size, implicit): -1 keeps the input's size.
Status convertExpand(Context& ctx, const Node& n) {
  OXPORT_ASSIGN(std::string x, ctx.tensor(n.input(0)));
  OXPORT_ASSIGN(std::string shape, ctx.intsTensor(n.input(1)));
  // Expand treats -1 as an error, so replace -1 by 1 (Expand broadcasts 1 to the input's size).
  std::string ones = ctx.emit1("ConstantOfShape", {ctx.shapeOf(shape)},
                               {attrTensor("value", HostTensor::fromVector<int64_t>(DType::Int64, {1}, {1}))});
  std::string is_neg = ctx.emit1("Equal", {shape, ctx.constInt64s({-1}, true)});
  std::string fixed = ctx.emit1("Where", {is_neg, ones, shape});
  return bindOut(ctx, n, ctx.emit1("Expand", {x, fixed}));
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
  addAll(r, {"aten::split", "aten::split_with_sizes"}, splitOp(false));
  addAll(r, {"aten::chunk", "aten::unsafe_chunk"}, splitOp(true));
  r.add("aten::unbind", convertUnbind);
  r.add("aten::slice", convertSlice);
  r.add("aten::select", convertSelect);
  r.add("aten::narrow", convertNarrow);
  r.add("aten::expand", convertExpand);
}

}  // namespace oxport::convert
