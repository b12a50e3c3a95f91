// Sorting: sort, argsort, topk (TopK: k as an input from opset 10, largest/sorted from 11) and
// bucketize. ONNX TopK is not stable: equal values may come back in another order than PyTorch's.
#include <algorithm>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// The dtype TopK runs in: ONNX Runtime sorts float/double, and int32/int64 from opset 11.
DType topkType(DType dt, int opset) {
  if (dt == DType::Float32 || dt == DType::Float64) return dt;
  if (dt == DType::Float16 || dt == DType::BFloat16) return DType::Float32;
  if (opset >= 11) return dt == DType::Int32 ? DType::Int32 : DType::Int64;
  return DType::Float64;
}

// TopK of x (dtype dt) along axis with k a 1-D int64 tensor [k]. Before opset 11 TopK always
// takes the largest: the smallest are the largest of -x.
struct TopKOut {
  std::string values, indices;
};

TopKOut topk(Context& ctx, const std::string& x, DType dt, int64_t axis, const std::string& k, bool largest) {
  const DType work = topkType(dt, ctx.opset());
  std::string xin = castIf(ctx, x, dt, work);
  TopKOut out;
  if (ctx.opset() >= 11) {
    auto r = ctx.emit("TopK", {xin, k}, 2,
                      {attrInt("axis", axis), attrInt("largest", largest ? 1 : 0), attrInt("sorted", 1)});
    out = {r[0], r[1]};
  } else {
    if (!largest) xin = ctx.emit1("Neg", {xin});
    auto r = ctx.emit("TopK", {xin, k}, 2, {attrInt("axis", axis)});
    out = {largest ? r[0] : ctx.emit1("Neg", {r[0]}), r[1]};
  }
  out.values = castIf(ctx, out.values, work, dt);
  return out;
}

// ONNX Runtime's TopK dies (SIGFPE) on an input with no elements. There is nothing to order then:
// the values are the input cut to k along the axis, the indices an int64 tensor of their shape.
bool emptyExample(Context& ctx, const Value* v) {
  for (int64_t d : ctx.meta(v).shape)
    if (d == 0) return true;
  return false;
}

TopKOut emptyTopk(Context& ctx, const std::string& x, int64_t axis, const std::string& k) {
  TopKOut out;
  out.values = ctx.emit1("Slice", {x, ctx.constInt64s({0}), k, ctx.constInt64s({axis})});
  out.indices = ctx.cast(out.values, DType::Int64);
  return out;
}

// The size of x along axis as a 1-D int64 tensor [n] (from Shape: nothing baked).
std::string sizeAlong(Context& ctx, const std::string& x, int64_t axis) {
  return ctx.slice(ctx.shapeOf(x), {axis}, {axis + 1}, {0});
}

// sort(self, dim=-1, descending=False) / sort.stable(self, *, stable, dim, descending); argsort.
ConvertFn convertSort(bool indices_only) {
  return [indices_only](Context& ctx, const Node& n) -> Status {
    if (!n.inputs.empty() && n.input(0)->type == ts::ValueType::List)
      return ctx.error("unsupported-list",
                       "list.sort() sorts a list of numbers in place; oxport converts sorting of tensors only",
                       "sort a tensor instead (torch.tensor(values).sort()), or keep the list's order");
    const Args args(ctx, n);
    if (ctx.opset() < 10) return ctx.needsOpset(10, n.kind.substr(6) + " (TopK with k as an input)");
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
    const DType dt = ctx.dtype(args.in("self", 0));
    const int rank = ctx.rank(args.in("self", 0));
    int64_t dim = -1;
    bool descending = false;
    if (const Value* d = args.optIn("dim")) { OXPORT_ASSIGN(dim, ctx.constInt(d)); }
    if (const Value* d = args.optIn("descending")) { OXPORT_ASSIGN(descending, ctx.constBool(d)); }
    if (rank == 0) {
      if (!indices_only) ctx.bind(n.output(0), ctx.emit1("Identity", {x}));
      ctx.bind(n.output(indices_only ? 0 : 1), ctx.constScalar(0, DType::Int64));
      return okStatus();
    }
    const int64_t axis = ctx.normDim(dim, rank);
    TopKOut r = emptyExample(ctx, args.in("self", 0)) ? emptyTopk(ctx, x, axis, sizeAlong(ctx, x, axis))
                                              : topk(ctx, x, dt, axis, sizeAlong(ctx, x, axis), descending);
    if (indices_only) return bindOut(ctx, n, r.indices);
    ctx.bind(n.output(0), r.values);
    ctx.bind(n.output(1), r.indices);
    return okStatus();
  };
}

// topk(self, k, dim=-1, largest=True, sorted=True). k may be dynamic from opset 10. With
// sorted=False PyTorch leaves the order unspecified; the export returns it sorted.
Status convertTopk(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const DType dt = ctx.dtype(args.in("self", 0));
  const int rank = ctx.rank(args.in("self", 0));
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(args.in("dim", 2)));
  OXPORT_ASSIGN(bool largest, ctx.constBool(args.in("largest", 3)));
  const int64_t axis = ctx.normDim(dim, std::max(rank, 1));
  if (rank == 0) x = ctx.unsqueeze(x, {0});
  TopKOut r;
  if (ctx.opset() < 10) {
    // TopK-1: k is an attribute and the largest are taken.
    auto kc = ctx.maybeInt(args.in("k", 1));
    if (!kc) return ctx.needsOpset(10, "topk with a k computed from the inputs (TopK k as an input)");
    if (emptyExample(ctx, args.in("self", 0))) {
      std::string v = ctx.slice(x, {0}, {*kc}, {axis});
      r = {v, ctx.cast(v, DType::Int64)};
    } else {
      const DType work = topkType(dt, 9);
      std::string xin = castIf(ctx, x, dt, work);
      if (!largest) xin = ctx.emit1("Neg", {xin});
      auto o = ctx.emit("TopK", {xin}, 2, {attrInt("axis", axis), attrInt("k", *kc)});
      r = {castIf(ctx, largest ? o[0] : ctx.emit1("Neg", {o[0]}), work, dt), o[1]};
    }
  } else {
    std::string k;
    if (auto kc = ctx.maybeInt(args.in("k", 1))) {
      k = ctx.constInt64s({*kc});
    } else {
      OXPORT_ASSIGN(std::string ks, ctx.tensorOfType(args.in("k", 1), DType::Int64));
      k = ctx.reshape(ks, {1});
    }
    r = emptyExample(ctx, args.in("self", 0)) ? emptyTopk(ctx, x, axis, k) : topk(ctx, x, dt, axis, k, largest);
  }
  if (rank == 0) {
    r.values = ctx.reshape(r.values, {});
    r.indices = ctx.reshape(r.indices, {});
  }
  ctx.bind(n.output(0), r.values);
  ctx.bind(n.output(1), r.indices);
  return okStatus();
}

// bucketize's and searchsorted's boundaries and values in one dtype (theirs when they share one
// that ONNX Runtime compares, float64 otherwise) and `right`.
struct Search {
  std::string seq, x;
  bool right = false;
};

Result<Search> searchOperands(Context& ctx, const Args& args, const Value* seq, const Value* x) {
  const DType ds = ctx.dtype(seq), dx = ctx.dtype(x);
  const bool same_ok = dx == ds && (dx == DType::Float32 || dx == DType::Float64 || dx == DType::Int32 || dx == DType::Int64);
  const DType common = same_ok ? dx : DType::Float64;
  Search s;
  OXPORT_ASSIGN(s.seq, ctx.tensorOfType(seq, common));
  OXPORT_ASSIGN(s.x, ctx.tensorOfType(x, common));
  if (const Value* r = args.optIn("right")) { OXPORT_ASSIGN(s.right, ctx.constBool(r)); }
  return s;
}

// bucketize(self, boundaries, *, out_int32=False, right=False): the number of boundaries below
// each element (right=False: b < x; right=True: b <= x), counted over a broadcast last axis.
Status convertBucketize(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  if (!args.in("self", 0)->isTensor()) return ctx.error("unsupported-form", "bucketize of a Python number is not supported");
  OXPORT_ASSIGN(Search sr, searchOperands(ctx, args, args.in("boundaries", 1), args.in("self", 0)));
  const std::string &x = sr.x, &b = sr.seq;
  const bool right = sr.right;
  const int rank = ctx.rank(args.in("self", 0));
  std::string xe = ctx.unsqueeze(x, {rank});  // [..., 1] against [B]
  std::string below = right ? ctx.emit1("Not", {ctx.emit1("Greater", {b, xe})}) : ctx.emit1("Greater", {xe, b});
  std::string count = reduceOver(ctx, "ReduceSum", ctx.cast(below, DType::Int64), {rank}, false);
  return bindOut(ctx, n, castIf(ctx, count, DType::Int64, n.output(0)->meta.dtype));
}

// searchsorted(sorted_sequence, self, *, out_int32=False, right=False, side=None, sorter=None):
// bucketize with the boundaries first; an N-D sequence searches row by row (its leading axes
// match self's), so the count runs over sorted[..., None, :] against self[..., :, None].
Status convertSearchsorted(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  if (!args.in("self", 1)->isTensor()) return ctx.error("unsupported-form", "searchsorted of a Python number is not supported");
  const Value* sorter = args.optIn("sorter");
  if (sorter && !ctx.isNone(sorter))
    return ctx.error("unsupported-form", "searchsorted with a sorter", "sort the sequence first (torch.sort)");
  OXPORT_ASSIGN(Search sr, searchOperands(ctx, args, args.in("sorted_sequence", 0), args.in("self", 1)));
  const std::string &seq = sr.seq, &x = sr.x;
  bool right = sr.right;
  if (const Value* side = args.optIn("side"); side && !ctx.isNone(side)) {
    OXPORT_ASSIGN(std::string sd, ctx.constString(side));
    right = sd == "right";
  }
  const int rank = ctx.rank(args.in("self", 1)), srank = ctx.rank(args.in("sorted_sequence", 0));
  std::string xe = ctx.unsqueeze(x, {rank});                              // [..., M, 1]
  std::string se = srank > 1 ? ctx.unsqueeze(seq, {srank - 1}) : seq;     // [..., 1, B] or [B]
  std::string below = right ? ctx.emit1("Not", {ctx.emit1("Greater", {se, xe})}) : ctx.emit1("Greater", {xe, se});
  std::string count = reduceOver(ctx, "ReduceSum", ctx.cast(below, DType::Int64), {rank}, false);
  return bindOut(ctx, n, castIf(ctx, count, DType::Int64, n.output(0)->meta.dtype));
}

// The k-th smallest along `dim` (1-based k) and its index: TopK(largest=0) of k, the last of
// them. Opset 11 (TopK's smallest).
struct KthResult {
  std::string values, indices;
};
KthResult kthSmallest(Context& ctx, const std::string& x, const std::string& k, int64_t dim, bool keep) {
  auto tk = ctx.emit("TopK", {x, ctx.reshape(k, {1})}, 2, {attrInt("axis", dim), attrInt("largest", 0), attrInt("sorted", 1)});
  std::string last = ctx.emit1("Sub", {ctx.reshape(k, {1}), ctx.constInt64s({1})});
  KthResult r;
  r.values = ctx.emit1("Gather", {tk[0], last}, {attrInt("axis", dim)});
  r.indices = ctx.emit1("Gather", {tk[1], last}, {attrInt("axis", dim)});
  if (!keep) {
    r.values = ctx.squeeze(r.values, {dim});
    r.indices = ctx.squeeze(r.indices, {dim});
  }
  return r;
}

// kthvalue(self, k, dim=-1, keepdim=False) -> (values, indices)
Status convertKthvalue(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  if (ctx.opset() < 11) return ctx.needsOpset(11, "kthvalue (TopK of the smallest)");
  OXPORT_ASSIGN(std::string x, args.tensor("self", 0));
  OXPORT_ASSIGN(int64_t k, args.constInt("k", 1));
  int64_t dim = -1;
  bool keep = false;
  if (args.has("dim", 2)) { OXPORT_ASSIGN(dim, args.constInt("dim", 2)); }
  if (args.has("keepdim", 3)) { OXPORT_ASSIGN(keep, args.constBool("keepdim", 3)); }
  const int rank = ctx.rank(args.in("self", 0));
  dim = ctx.normDim(dim, std::max(rank, 1));
  if (rank == 0) return ctx.error("unsupported-form", "kthvalue of a 0-d tensor");
  KthResult r = kthSmallest(ctx, x, ctx.constInt64s({k}), dim, keep);
  ctx.bind(n.output(0), r.values);
  ctx.bind(n.output(1), r.indices);
  return okStatus();
}

// median(self) / median(self, dim, keepdim) -> (values, indices): the lower median, the
// ((n - 1) / 2 + 1)-th smallest (n may be dynamic).
Status convertMedian(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  if (ctx.opset() < 11) return ctx.needsOpset(11, "median (TopK of the smallest)");
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const int rank = ctx.rank(args.in("self", 0));
  const bool all = n.inputs.size() == 1;
  int64_t dim = 0;
  bool keep = false;
  if (all) {
    x = ctx.reshape(x, {-1});
  } else {
    OXPORT_ASSIGN(dim, ctx.constInt(args.in("dim", 1)));
    if (n.inputs.size() > 2) { OXPORT_ASSIGN(keep, ctx.constBool(args.in("keepdim", 2))); }
    dim = ctx.normDim(dim, std::max(rank, 1));
    if (rank == 0) x = ctx.reshape(x, {1});
  }
  std::string len = dimSize(ctx, x, dim);
  std::string k = ctx.emit1("Add", {ctx.emit1("Div", {ctx.emit1("Sub", {len, ctx.constInt64s({1})}), ctx.constInt64s({2})}),
                                    ctx.constInt64s({1})});
  KthResult r = kthSmallest(ctx, x, k, dim, all ? false : keep);
  if (!all && rank == 0 && !keep) { r.values = ctx.reshape(r.values, {}); r.indices = ctx.reshape(r.indices, {}); }
  ctx.bind(n.output(0), r.values);
  if (n.outputs.size() > 1) ctx.bind(n.output(1), r.indices);
  return okStatus();
}

}  // namespace

void registerSortOps(Registry& r) {
  r.add("aten::kthvalue", convertKthvalue);
  r.add("aten::median", convertMedian);
  r.add("aten::searchsorted", convertSearchsorted);
  r.add("aten::sort", convertSort(false));
  r.add("aten::argsort", convertSort(true));
  r.add("aten::topk", convertTopk);
  r.add("aten::bucketize", convertBucketize);
}

}  // namespace oxport::convert
