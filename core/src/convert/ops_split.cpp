// Splitting a tensor into pieces: split/split_with_sizes (and unsafe_), chunk, tensor_split,
// unbind. The pieces' sizes are the example run's (PyTorch's rules), except where they follow a
// dynamic axis: chunk into equal parts (Split by count) and sizes computed from the inputs' shapes
// (Slices between their running sums).
#include <algorithm>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// Splits bound as a list (consumed by ListUnpack, cat, __getitem__ ...).
// The pieces of a split as the node's list output, or as its outputs one by one.
Status bindParts(Context& ctx, const Node& n, const std::vector<std::string>& parts) {
  if (n.outputs.size() == 1 && n.output(0)->type == ts::ValueType::List) {
    ctx.bindList(n.output(0), parts);
  } else {
    for (size_t i = 0; i < n.outputs.size() && i < parts.size(); ++i) ctx.bind(n.output(i), parts[i]);
  }
  return okStatus();
}

Status bindSplit(Context& ctx, const Node& n, const std::string& x, int64_t dim, const std::vector<int64_t>& sizes) {
  return bindParts(ctx, n, sizes.size() == 1 ? std::vector<std::string>{ctx.emit1("Identity", {x})} : ctx.split(x, dim, sizes));
}

// The input of split/chunk/unbind and their `dim` (at `dim_pos` without names), normalised, with
// the input's size along it in the example run.
struct SplitInput {
  std::string x;
  int64_t dim = 0;
  int64_t len = 0;
};

Result<SplitInput> splitInput(Context& ctx, const Args& args, size_t dim_pos) {
  SplitInput in;
  OXPORT_ASSIGN(in.x, ctx.tensor(args.in("self", 0)));
  OXPORT_ASSIGN(in.dim, args.constInt("dim", dim_pos));
  const auto& shape = ctx.meta(args.in("self", 0)).shape;
  in.dim = ctx.normDim(in.dim, static_cast<int>(shape.size()));
  in.len = shape.at(static_cast<size_t>(in.dim));
  return in;
}

// split(self, split_size|split_sizes, dim) / split_with_sizes / chunk(self, chunks, dim)
ConvertFn splitOp(bool is_chunk) {
  return [is_chunk](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(SplitInput in, splitInput(ctx, args, 2));
    const std::string& x = in.x;
    const int64_t dim = in.dim, len = in.len;
    // The sizes the example run produced are authoritative (they follow PyTorch's rules).
    std::vector<int64_t> sizes;
    for (const auto& m : n.output(0)->elem_meta) sizes.push_back(m.shape.at(static_cast<size_t>(dim)));
    if (sizes.empty()) {
      OXPORT_ASSIGN(auto arg, ctx.constInts(args.in({"split_size", "split_sizes", "chunks"}, 1)));
      if (arg.size() == 1 && !is_chunk) {
        for (int64_t s = 0; s < len; s += arg[0]) sizes.push_back(std::min(arg[0], len - s));
      } else {
        sizes = arg;
      }
    }
    // chunk into equal parts (RAFT's two images stacked along the batch, GLU-style halves along a
    // sequence): a Split into that many equal parts, which follows the axis when it is dynamic
    // (the sizes from the example run would bake it).
    if (is_chunk && sizes.size() > 1 && std::all_of(sizes.begin(), sizes.end(), [&](int64_t v) { return v == sizes[0]; })) {
      return bindParts(ctx, n, ctx.emit("Split", {x}, static_cast<int>(sizes.size()), {attrInt("axis", dim)}));
    }
    // Sizes computed from the inputs' shapes (Deformable DETR's value.split([h * w for h, w in
    // shapes])): each piece a Slice between the sizes' running sums, which follow the dynamic axes
    // where the example run's sizes would bake them.
    const Value* size_arg = args.in({"split_size", "split_sizes", "chunks"}, 1);
    if (!is_chunk && !size_arg->constant && sizes.size() > 1 && ctx.opset() >= 11 &&
        size_arg->type == ts::ValueType::List) {
      OXPORT_ASSIGN(std::string s, ctx.intsTensor(size_arg));
      std::string ends = ctx.emit1("CumSum", {s, ctx.constInt64s({0}, /*scalar=*/true)});
      std::string axes = ctx.constInt64s({dim});
      std::vector<std::string> parts;
      std::string start = ctx.constInt64s({0});
      for (size_t i = 0; i < sizes.size(); ++i) {
        std::string end = ctx.emit1("Gather", {ends, ctx.constInt64s({static_cast<int64_t>(i)})}, {attrInt("axis", 0)});
        parts.push_back(ctx.emit1("Slice", {x, start, end, axes}));
        start = end;
      }
      return bindParts(ctx, n, parts);
    }
    return bindSplit(ctx, n, x, dim, sizes);
  };
}

// tensor_split(self, sections|indices|tensor_indices_or_sections, dim): the pieces' sizes along dim
// as the example run produced them (PyTorch's rule: the first len % sections pieces one longer).
Status convertTensorSplit(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const int rank = ctx.rank(args.in("self", 0));
  int64_t dim = 0;
  if (n.inputs.size() > 2) { OXPORT_ASSIGN(dim, ctx.constInt(args.in("dim", 2))); }
  dim = ctx.normDim(dim, rank);
  std::vector<int64_t> sizes;
  for (const auto& m : n.output(0)->elem_meta) sizes.push_back(m.shape.at(static_cast<size_t>(dim)));
  if (sizes.empty()) return ctx.error("unsupported-form", "tensor_split: the pieces' sizes are unknown");
  return bindSplit(ctx, n, x, dim, sizes);
}

// unbind(self, dim): split into ones and squeeze each.
Status convertUnbind(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(SplitInput in, splitInput(ctx, args, 1));
  const std::string& x = in.x;
  const int64_t dim = in.dim, len = in.len;
  // The list has one tensor per element along dim, as many as in the example: a dynamic axis there
  // (`for a, b in zip(x.unbind(0), y.unbind(0))` over a dynamic batch) is baked into the count.
  if (len > 1 && ctx.axisMayVary(args.in("self", 0), static_cast<int>(dim)))
    ctx.warn("baked-dynamic-size",
             "unbind along axis " + std::to_string(dim) + ", whose size may change when the file runs, makes " +
                 std::to_string(len) + " tensors (the example's count): the file splits into " + std::to_string(len) +
                 " pieces at every size, and a loop over them runs " + std::to_string(len) + " times",
             "index the tensor in a loop over range(x.size(" + std::to_string(dim) +
                 ")) instead of unbinding it, or export with that axis fixed");
  auto parts = len == 1 ? std::vector<std::string>{x} : ctx.split(x, dim, std::vector<int64_t>(static_cast<size_t>(len), 1));
  for (auto& p : parts) p = ctx.squeeze(p, {dim});
  ctx.bindList(n.output(0), parts);
  return okStatus();
}

}  // namespace

void registerSplitOps(Registry& r) {
  r.add("aten::tensor_split", convertTensorSplit);
  addAll(r, {"aten::split", "aten::split_with_sizes"}, splitOp(false));
  addAll(r, {"aten::chunk", "aten::unsafe_chunk"}, splitOp(true));
  r.add("aten::unbind", convertUnbind);
  addAll(r, {"aten::unsafe_split", "aten::unsafe_split_with_sizes"}, splitOp(false));
}

}  // namespace oxport::convert
