// NumPy-style rearrangements that PyTorch records as ops of their own: rot90, fliplr/flipud,
// hstack/vstack/dstack/column_stack, atleast_1d/2d/3d, ravel, hsplit/vsplit/dsplit,
// channel_shuffle, take_along_dim. Each is a few Slice/Gather/Transpose/Concat/Reshape nodes.
#include <algorithm>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// x reversed along `axis`: Slice with step -1 from opset 10, a Gather of n-1 .. 0 below it.
std::string flipAxis(Context& ctx, const std::string& x, int64_t axis) {
  if (ctx.opset() >= 10) return ctx.slice(x, {-1}, {std::numeric_limits<int64_t>::min()}, {axis}, {-1});
  std::string size = dimSize(ctx, x, axis);
  std::string idx = ctx.emit1("Sub", {ctx.emit1("Sub", {size, ctx.constInt64s({1})}), arangeOf(ctx, size)});
  return ctx.emit1("Gather", {x, idx}, {attrInt("axis", axis)});
}

std::string swapAxes(Context& ctx, const std::string& x, int rank, int64_t a, int64_t b) {
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  for (int i = 0; i < rank; ++i) perm[static_cast<size_t>(i)] = i;
  std::swap(perm[static_cast<size_t>(a)], perm[static_cast<size_t>(b)]);
  return ctx.emit1("Transpose", {x}, {attrInts("perm", perm)});
}

// rot90(self, k=1, dims=[0, 1]), as PyTorch composes it from flip and transpose.
Status convertRot90(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const int rank = ctx.rank(args.in("self", 0));
  int64_t k = 1;
  std::vector<int64_t> dims{0, 1};
  if (n.inputs.size() > 1) { OXPORT_ASSIGN(k, ctx.constInt(args.in("k", 1))); }
  if (n.inputs.size() > 2) { OXPORT_ASSIGN(dims, ctx.constInts(args.in("dims", 2))); }
  if (dims.size() != 2 || rank < 2) return ctx.error("bad-argument", "rot90 needs two dims of a tensor of rank >= 2");
  const int64_t a = ctx.normDim(dims[0], rank), b = ctx.normDim(dims[1], rank);
  k = ((k % 4) + 4) % 4;
  if (k == 1) x = swapAxes(ctx, flipAxis(ctx, x, b), rank, a, b);
  else if (k == 2) x = flipAxis(ctx, flipAxis(ctx, x, a), b);
  else if (k == 3) x = swapAxes(ctx, flipAxis(ctx, x, a), rank, a, b);
  else x = ctx.emit1("Identity", {x});
  return bindOut(ctx, n, x);
}

ConvertFn flipOne(int64_t axis) {
  return [axis](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
    return bindOut(ctx, n, flipAxis(ctx, x, axis));
  };
}

// x with ones added as atleast_{1,2,3}d does: 0-d -> [1](,[1,1],[1,1,1]); 1-d -> [1, n] / [1, n, 1];
// 2-d -> [m, n, 1].
std::string atLeast(Context& ctx, const std::string& x, int rank, int want) {
  if (rank >= want) return x;
  if (rank == 0) return ctx.reshape(x, std::vector<int64_t>(static_cast<size_t>(want), 1));
  if (want == 2) return ctx.unsqueeze(x, {0});
  if (rank == 1) return ctx.unsqueeze(x, {0, 2});
  return ctx.unsqueeze(x, {2});
}

ConvertFn atLeastOp(int want) {
  return [want](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    const Value* in = args.in({"self", "tensors"}, 0);
    if (in->type == ts::ValueType::List) {
      OXPORT_ASSIGN(auto xs, ctx.tensorList(in));
      OXPORT_ASSIGN(auto elems, ctx.listElements(in));
      std::vector<std::string> out;
      for (size_t i = 0; i < xs.size(); ++i) out.push_back(atLeast(ctx, xs[i], ctx.rank(elems[i]), want));
      ctx.bindList(n.output(0), out);
      return okStatus();
    }
    OXPORT_ASSIGN(std::string x, ctx.tensor(in));
    std::string y = atLeast(ctx, x, ctx.rank(in), want);
    return bindOut(ctx, n, y == x ? ctx.emit1("Identity", {x}) : y);
  };
}

// hstack / vstack / dstack / column_stack(tensors): Concat after making the pieces 1-, 2- or 3-D.
enum class Stack { H, V, D, Column };
ConvertFn stackOp(Stack kind) {
  return [kind](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(auto xs, ctx.tensorList(args.in("tensors", 0)));
    OXPORT_ASSIGN(auto elems, ctx.listElements(args.in("tensors", 0)));
    const DType dt = n.output(0)->meta.dtype;
    std::vector<std::string> parts;
    int out_rank = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const int r = ctx.rank(elems[i]);
      std::string x = ctx.dtype(elems[i]) == dt ? xs[i] : ctx.cast(xs[i], dt);
      if (kind == Stack::H) { x = atLeast(ctx, x, r, 1); out_rank = std::max(r, 1); }
      else if (kind == Stack::V) { x = atLeast(ctx, x, r, 2); out_rank = std::max(r, 2); }
      else if (kind == Stack::D) { x = atLeast(ctx, x, r, 3); out_rank = std::max(r, 3); }
      else {
        if (r == 0) x = ctx.reshape(x, {1, 1});
        else if (r == 1) x = ctx.unsqueeze(x, {1});
        out_rank = std::max(r, 2);
      }
      parts.push_back(x);
    }
    int64_t axis = kind == Stack::V ? 0 : kind == Stack::D ? 2 : (out_rank == 1 ? 0 : 1);
    return bindOut(ctx, n, ctx.emit1("Concat", parts, {attrInt("axis", axis)}));
  };
}

Status convertRavel(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  return bindOut(ctx, n, ctx.reshape(x, {-1}));
}

// hsplit / vsplit / dsplit(self, sections|indices): tensor_split along axis 1 (0 for 1-D), 0, 2;
// the pieces' sizes as the example run produced them.
ConvertFn splitAlong(int64_t axis) {
  return [axis](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
    const int rank = ctx.rank(args.in("self", 0));
    const int64_t dim = (axis == 1 && rank == 1) ? 0 : axis;
    std::vector<int64_t> sizes;
    for (const auto& m : n.output(0)->elem_meta) sizes.push_back(m.shape.at(static_cast<size_t>(dim)));
    if (sizes.empty()) return ctx.error("unsupported-form", n.kind + ": the pieces' sizes are unknown");
    auto outs = sizes.size() == 1 ? std::vector<std::string>{ctx.emit1("Identity", {x})} : ctx.split(x, dim, sizes);
    ctx.bindList(n.output(0), outs);
    return okStatus();
  };
}

// channel_shuffle / native_channel_shuffle(self, groups): [N, g, C/g, *] -> [N, C/g, g, *].
Status convertChannelShuffle(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(int64_t groups, ctx.constInt(args.in("groups", 1)));
  const auto& shape = ctx.meta(args.in("self", 0)).shape;
  if (shape.size() < 3 || groups <= 0 || shape[1] % groups != 0)
    return ctx.error("bad-argument", "channel_shuffle needs a tensor of rank >= 3 whose channels divide into the groups");
  std::string s = ctx.shapeOf(x);
  std::string grouped = ctx.reshape(x, {0, groups, shape[1] / groups, -1});
  std::string t = ctx.emit1("Transpose", {grouped}, {attrInts("perm", {0, 2, 1, 3})});
  return bindOut(ctx, n, ctx.emit1("Reshape", {t, s}));
}

// take_along_dim(self, indices, dim=None): GatherElements (flattened when dim is None); indices
// broadcast against self except along dim.
Status convertTakeAlongDim(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  if (ctx.opset() < 11) return ctx.needsOpset(11, "take_along_dim (GatherElements)");
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(std::string idx, ctx.tensorOfType(args.in("indices", 1), DType::Int64));
  const bool flat = n.inputs.size() < 3 || ctx.isNone(args.in("dim", 2));
  if (flat)
    return bindOut(ctx, n, ctx.emit1("GatherElements", {ctx.reshape(x, {-1}), ctx.reshape(idx, {-1})}, {attrInt("axis", 0)}));
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(args.in("dim", 2)));
  const auto& xs = ctx.meta(args.in("self", 0)).shape;
  const auto& is = ctx.meta(args.in("indices", 1)).shape;
  const int rank = static_cast<int>(xs.size());
  dim = ctx.normDim(dim, rank);
  if (is.size() != xs.size())
    return ctx.error("unsupported-form", "take_along_dim with indices of another rank than the input",
                     "give the indices the input's rank (unsqueeze them)");
  // Broadcast both to the common shape outside dim: Expand with ones where a side is 1.
  bool same = true;
  for (int i = 0; i < rank; ++i)
    if (i != dim && xs[static_cast<size_t>(i)] != is[static_cast<size_t>(i)]) same = false;
  if (!same) {
    std::vector<int64_t> xt(xs.size()), it(is.size());
    for (int i = 0; i < rank; ++i) {
      const auto u = static_cast<size_t>(i);
      const int64_t common = std::max(xs[u], is[u]);
      xt[u] = i == dim ? 1 : common;  // Expand keeps an axis where the shape says 1
      it[u] = xt[u];
    }
    x = ctx.emit1("Expand", {x, ctx.constInt64s(xt)});
    idx = ctx.emit1("Expand", {idx, ctx.constInt64s(it)});
  }
  return bindOut(ctx, n, ctx.emit1("GatherElements", {x, idx}, {attrInt("axis", dim)}));
}

}  // namespace

void registerRearrangeOps(Registry& r) {
  r.add("aten::rot90", convertRot90);
  r.add("aten::fliplr", flipOne(1));
  r.add("aten::flipud", flipOne(0));
  r.add("aten::atleast_1d", atLeastOp(1));
  r.add("aten::atleast_2d", atLeastOp(2));
  r.add("aten::atleast_3d", atLeastOp(3));
  r.add("aten::hstack", stackOp(Stack::H));
  addAll(r, {"aten::vstack", "aten::row_stack"}, stackOp(Stack::V));
  r.add("aten::dstack", stackOp(Stack::D));
  r.add("aten::column_stack", stackOp(Stack::Column));
  r.add("aten::ravel", convertRavel);
  r.add("aten::hsplit", splitAlong(1));
  r.add("aten::vsplit", splitAlong(0));
  r.add("aten::dsplit", splitAlong(2));
  addAll(r, {"aten::channel_shuffle", "aten::native_channel_shuffle"}, convertChannelShuffle);
  r.add("aten::take_along_dim", convertTakeAlongDim);
}

}  // namespace oxport::convert
