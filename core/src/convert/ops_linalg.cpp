// Triangles and products of several tensors: tril/triu (Trilu from opset 14, a mask below it),
// einsum (Einsum from opset 12, Mul/ReduceSum below), outer products, unflatten, tensordot, diagonal,
// diag/diag_embed/diagflat and diagonal_scatter.
#include <algorithm>
#include <cctype>
#include <map>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// The dtypes ONNX Runtime's Trilu kernel takes; others use the mask form.
bool triluKernel(DType dt) {
  return dt == DType::Float32 || dt == DType::Float64 || dt == DType::Int64 || dt == DType::Bool;
}

// tril/triu(self, diagonal=0): keep the elements with col - row <= k (tril) or >= k (triu) of the
// last two axes, zero the rest.
ConvertFn convertTriangle(bool upper) {
  return [upper](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
    const int rank = ctx.rank(args.in("self", 0));
    if (rank < 2)
      return ctx.error("bad-argument", std::string(upper ? "triu" : "tril") + " needs a tensor of at least 2 dimensions, "
                                       "got rank " + std::to_string(rank));
    // The diagonal may depend on the inputs (a causal mask offset by a KV cache's past length:
    // `mask.triu(1 + past)`): then it is a 0-d int64 tensor computed in the graph.
    std::string kk = ctx.constInt64s({0}, true);
    if (n.inputs.size() > 1) {
      const Value* diag = args.in("diagonal", 1);
      if (ctx.isStatic(diag)) {
        OXPORT_ASSIGN(int64_t k, ctx.constInt(diag));
        kk = ctx.constInt64s({k}, true);
      } else {
        OXPORT_ASSIGN(kk, ctx.tensorOfType(diag, DType::Int64));
      }
    }
    const DType dt = ctx.dtype(args.in("self", 0));
    if (ctx.opset() >= 14 && triluKernel(dt))
      return bindOut(ctx, n, ctx.emit1("Trilu", {x, kk}, {attrInt("upper", upper ? 1 : 0)}));
    // col - row, broadcast over [rows, cols]; rows and cols may be dynamic.
    std::string rows = ctx.unsqueeze(arangeOf(ctx, dimSize(ctx, x, rank - 2)), {1});
    std::string cols = ctx.unsqueeze(arangeOf(ctx, dimSize(ctx, x, rank - 1)), {0});
    std::string diff = ctx.emit1("Sub", {cols, rows});
    // Greater/Less take int64 from opset 9; keep = upper ? diff >= k : diff <= k.
    std::string drop = upper ? ctx.emit1("Less", {diff, kk}) : ctx.emit1("Greater", {diff, kk});
    std::string zero = ctx.constScalar(0, dt);
    return bindOut(ctx, n, whereTyped(ctx, drop, zero, x, dt));
  };
}

// einsum(equation, tensors, path=None)
Status convertEinsum(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string eq, ctx.constString(args.in({"equation", "a"}, 0)));
  OXPORT_ASSIGN(auto ins, ctx.tensorList(args.in("tensors", 1)));
  std::string equation;
  for (char c : eq)
    if (!std::isspace(static_cast<unsigned char>(c))) equation += c;
  const DType dt = n.output(0)->meta.dtype;
  // ONNX Runtime's Einsum runs float, double, int32 and int64; others go through float or int64.
  DType run = dt;
  if (dt == DType::Float16 || dt == DType::BFloat16) run = DType::Float32;
  else if (!isFloating(dt) && dt != DType::Int32 && dt != DType::Int64) run = DType::Int64;
  OXPORT_ASSIGN(auto elems, ctx.listElements(args.in("tensors", 1)));
  for (size_t i = 0; i < ins.size(); ++i) {
    const DType have = i < elems.size() ? ctx.dtype(elems[i]) : run;
    if (have != run) ins[i] = ctx.cast(ins[i], run);
  }
  std::string y = ctx.emit1("Einsum", ins, {attrString("equation", equation)});
  if (run != dt) y = ctx.cast(y, dt);
  return bindOut(ctx, n, y);
}

// einsum below opset 12 (no Einsum): every operand is put in one common axis order (the
// output's letters first, in the output's order, then the summed ones), multiplied with
// broadcasting, and the summed letters reduced with ReduceSum. A letter repeated in one operand
// (a diagonal, "ii->i") is first masked with an identity grid and summed over its second axis.
// Exact; its memory is the product of every letter's size, more than Einsum's own kernel.
Status convertEinsumExpanded(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string eq0, ctx.constString(args.in("equation", 0)));
  OXPORT_ASSIGN(auto ins, ctx.tensorList(args.in("tensors", 1)));
  OXPORT_ASSIGN(auto elems, ctx.listElements(args.in("tensors", 1)));
  if (elems.size() != ins.size()) return ctx.error("unsupported-form", "einsum over a list of tensors unknown at export time");
  std::string eq;
  for (char c : eq0)
    if (!std::isspace(static_cast<unsigned char>(c))) eq += c;
  const auto arrow = eq.find("->");
  std::string lhs = arrow == std::string::npos ? eq : eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t at = 0;;) {
    const auto comma = lhs.find(',', at);
    terms.push_back(lhs.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  if (terms.size() != ins.size())
    return ctx.error("bad-argument", "einsum '" + eq0 + "' names " + std::to_string(terms.size()) + " operands for " +
                                         std::to_string(ins.size()) + " tensors");
  // The ellipsis becomes letters of its own ('0', '1', ...: the broadcast dims, right-aligned).
  int ell = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const auto dots = terms[i].find("...");
    if (dots == std::string::npos) continue;
    const int named = static_cast<int>(terms[i].size()) - 3;
    ell = std::max(ell, ctx.rank(elems[i]) - named);
  }
  if (ell > 10) return ctx.error("unsupported-form", "einsum with an ellipsis over more than 10 dims");
  auto ellLetters = [](int count, int total) {
    std::string e;
    for (int k = total - count; k < total; ++k) e += static_cast<char>('0' + k);
    return e;
  };
  std::vector<std::string> axes(terms.size());
  for (size_t i = 0; i < terms.size(); ++i) {
    std::string t = terms[i];
    const auto dots = t.find("...");
    if (dots != std::string::npos) {
      const int count = ctx.rank(elems[i]) - (static_cast<int>(t.size()) - 3);
      if (count < 0) return ctx.error("bad-argument", "einsum operand '" + t + "' has more letters than dims");
      t = t.substr(0, dots) + ellLetters(count, ell) + t.substr(dots + 3);
    }
    if (static_cast<int>(t.size()) != ctx.rank(elems[i]))
      return ctx.error("bad-argument", "einsum operand '" + terms[i] + "' does not match a tensor of rank " +
                                           std::to_string(ctx.rank(elems[i])));
    axes[i] = t;
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
    const auto dots = out.find("...");
    if (dots != std::string::npos) out = out.substr(0, dots) + ellLetters(ell, ell) + out.substr(dots + 3);
  } else {
    // Implicit output: the ellipsis dims, then the letters seen once, alphabetically.
    std::map<char, int> seen;
    for (const auto& a : axes)
      for (char c : a) ++seen[c];
    out = ellLetters(ell, ell);
    for (const auto& [c, k] : seen)
      if (k == 1 && std::isalpha(static_cast<unsigned char>(c))) out += c;
  }
  const DType dt = n.output(0)->meta.dtype;
  DType run = dt;
  if (dt == DType::Float16 || dt == DType::BFloat16) run = DType::Float32;
  else if (!isFloating(dt) && dt != DType::Int32 && dt != DType::Int64) run = DType::Int64;
  // The common order: the output's letters, then the summed ones in order of appearance.
  std::string order = out;
  for (const auto& a : axes)
    for (char c : a)
      if (order.find(c) == std::string::npos) order += c;
  std::string product;
  for (size_t i = 0; i < ins.size(); ++i) {
    std::string x = ctx.dtype(elems[i]) == run ? ins[i] : ctx.cast(ins[i], run);
    std::string a = axes[i];
    // Diagonals: a letter seen again at axis j keeps the elements equal along its first axis.
    for (size_t j = 0; j < a.size(); ++j) {
      const auto first = a.find(a[j]);
      if (first == j) continue;
      std::string ar = arangeOf(ctx, dimSize(ctx, x, static_cast<int64_t>(j)));
      std::string eye = ctx.cast(ctx.emit1("Equal", {ctx.unsqueeze(ar, {1}), ctx.unsqueeze(ar, {0})}), run);
      std::vector<int64_t> lift;
      for (size_t k = 0; k < a.size(); ++k)
        if (k != first && k != j) lift.push_back(static_cast<int64_t>(k));
      if (!lift.empty()) eye = ctx.unsqueeze(eye, lift);
      x = reduceOver(ctx, "ReduceSum", ctx.emit1("Mul", {x, eye}), {static_cast<int64_t>(j)}, false);
      a.erase(j, 1);
      --j;
    }
    // Transpose to the common order, then unsqueeze the letters this operand lacks.
    std::vector<std::pair<size_t, int64_t>> pos;
    for (size_t k = 0; k < a.size(); ++k) pos.push_back({order.find(a[k]), static_cast<int64_t>(k)});
    std::sort(pos.begin(), pos.end());
    std::vector<int64_t> perm;
    bool identity = true;
    for (size_t k = 0; k < pos.size(); ++k) {
      perm.push_back(pos[k].second);
      identity = identity && pos[k].second == static_cast<int64_t>(k);
    }
    if (!identity) x = ctx.emit1("Transpose", {x}, {attrInts("perm", perm)});
    std::vector<int64_t> missing;
    for (size_t k = 0; k < order.size(); ++k)
      if (a.find(order[k]) == std::string::npos) missing.push_back(static_cast<int64_t>(k));
    if (!missing.empty()) x = ctx.unsqueeze(x, missing);
    product = product.empty() ? x : ctx.emit1("Mul", {product, x});
  }
  std::vector<int64_t> summed;
  for (size_t k = out.size(); k < order.size(); ++k) summed.push_back(static_cast<int64_t>(k));
  std::string y = summed.empty() ? ctx.emit1("Identity", {product}) : reduceOver(ctx, "ReduceSum", product, summed, false);
  if (run != dt) y = ctx.cast(y, dt);
  return bindOut(ctx, n, y);
}

// mT / mH / adjoint(self): the last two axes swapped (for real tensors mH and adjoint are mT).
Status convertMatrixTranspose(Context& ctx, const Node& n) {
  const Value* self = Args(ctx, n).in("self", 0);
  OXPORT_ASSIGN(std::string x, ctx.tensor(self));
  const int rank = ctx.rank(self);
  if (rank < 2) return ctx.error("bad-argument", "a matrix transpose (mT) of a tensor of rank " + std::to_string(rank));
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i) perm.push_back(i);
  std::swap(perm[static_cast<size_t>(rank - 2)], perm[static_cast<size_t>(rank - 1)]);
  return bindOut(ctx, n, ctx.emit1("Transpose", {x}, {attrInts("perm", perm)}));
}

// outer/ger(self, vec2): self[:, None] * vec2[None, :]
Status convertOuter(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(auto ins, promotedInputs(ctx, n, {args.in("self", 0), args.in("vec2", 1)}));
  return bindOut(ctx, n, ctx.emit1("Mul", {ctx.unsqueeze(ins[0], {1}), ctx.unsqueeze(ins[1], {0})}));
}

// unflatten(self, dim, sizes): dim becomes `sizes` (one of them may be -1).
Status convertUnflatten(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const int rank = ctx.rank(args.in("self", 0));
  OXPORT_ASSIGN(int64_t dim, ctx.constInt(args.in("dim", 1)));
  dim = ctx.normDim(dim, rank);
  if (dim < 0 || dim >= rank) return ctx.error("bad-argument", "unflatten: dim is out of range for rank " + std::to_string(rank));
  // The sizes may come from the input's shape (DPT: x.unflatten(2, (h // p, w // p))): a Reshape
  // target built in the graph then. A literal 0 in Reshape's shape copies the input's size: a
  // constant 0 is refused, a computed one is allowed to be 0 from opset 14 (allowzero).
  std::string sizes;
  bool computed = false;
  if (auto c = ctx.constInts(args.in("sizes", 2)); c.ok()) {
    for (auto v : *c)
      if (v == 0)
        return ctx.error("unsupported-form", "unflatten into a size of 0",
                         "unflatten to sizes of 1 or more (the tensor would have no elements)");
    sizes = ctx.constInt64s(*c);
  } else {
    OXPORT_ASSIGN(sizes, ctx.intsTensor(args.in("sizes", 2)));
    computed = true;
  }
  std::string s = ctx.shapeOf(x);
  std::vector<std::string> parts;
  if (dim > 0) parts.push_back(ctx.slice(s, {0}, {dim}, {0}));
  parts.push_back(sizes);
  if (dim + 1 < rank) parts.push_back(ctx.slice(s, {dim + 1}, {kInt64Max}, {0}));
  std::string shape = parts.size() == 1 ? parts[0] : ctx.emit1("Concat", parts, {attrInt("axis", 0)});
  if (computed && ctx.opset() >= 14) return bindOut(ctx, n, ctx.emit1("Reshape", {x, shape}, {attrInt("allowzero", 1)}));
  return bindOut(ctx, n, ctx.emit1("Reshape", {x, shape}));
}

// tensordot(a, b, dims_a, dims_b): a's free axes then its contracted ones, b's contracted axes
// then its free ones, each flattened to 2-D (Flatten takes dynamic sizes), one MatMul, and the
// free sizes of both restored. Every opset (torch.onnx has it from 12, as an Einsum).
Status convertTensordot(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(auto ins, promotedInputs(ctx, n, {args.in("self", 0), args.in("other", 1)}));
  const int ra = ctx.rank(args.in("self", 0)), rb = ctx.rank(args.in("other", 1));
  OXPORT_ASSIGN(auto da, ctx.constInts(args.in("dims_self", 2)));
  OXPORT_ASSIGN(auto db, ctx.constInts(args.in("dims_other", 3)));
  if (da.size() != db.size()) return ctx.error("bad-argument", "tensordot: dims_a and dims_b differ in length");
  for (auto& d : da) d = ctx.normDim(d, ra);
  for (auto& d : db) d = ctx.normDim(d, rb);
  auto order = [](int rank, const std::vector<int64_t>& contracted, bool contracted_first) {
    std::vector<int64_t> freeAxes, perm;
    for (int64_t i = 0; i < rank; ++i)
      if (std::find(contracted.begin(), contracted.end(), i) == contracted.end()) freeAxes.push_back(i);
    if (contracted_first) { perm = contracted; perm.insert(perm.end(), freeAxes.begin(), freeAxes.end()); }
    else { perm = freeAxes; perm.insert(perm.end(), contracted.begin(), contracted.end()); }
    return perm;
  };
  const DType dt = ctx.dtype(n.output(0));
  // ONNX Runtime's MatMul: float, double, int32, int64 (others through float or int64).
  DType run = dt;
  if (dt == DType::Float16 || dt == DType::BFloat16) run = DType::Float32;
  else if (!isFloating(dt) && dt != DType::Int32 && dt != DType::Int64) run = DType::Int64;
  std::string a = ins[0], b = ins[1];
  if (run != dt) { a = ctx.cast(a, run); b = ctx.cast(b, run); }
  const int64_t nc = static_cast<int64_t>(da.size());
  const int64_t fa = ra - nc;
  a = ctx.emit1("Transpose", {a}, {attrInts("perm", order(ra, da, false))});
  b = ctx.emit1("Transpose", {b}, {attrInts("perm", order(rb, db, true))});
  std::string m = ctx.emit1("MatMul", {ctx.emit1("Flatten", {a}, {attrInt("axis", fa)}),
                                       ctx.emit1("Flatten", {b}, {attrInt("axis", nc)})});
  std::vector<std::string> parts;
  if (fa > 0) parts.push_back(ctx.slice(ctx.shapeOf(a), {0}, {fa}, {0}));
  if (rb - nc > 0) parts.push_back(ctx.slice(ctx.shapeOf(b), {nc}, {kInt64Max}, {0}));
  std::string shape = parts.empty() ? ctx.constInt64s({}) : parts.size() == 1 ? parts[0]
                                    : ctx.emit1("Concat", parts, {attrInt("axis", 0)});
  std::string y = ctx.emit1("Reshape", {m, shape});
  if (run != dt) y = ctx.cast(y, dt);
  return bindOut(ctx, n, y);
}

// diagonal(self, offset, dim1, dim2): dim1 and dim2 moved last and flattened together, then one
// Gather of the flat positions (r0 + i) * n2 + c0 + i, i < max(0, min(n1 - r0, n2 - c0)) with
// r0 = max(-offset, 0), c0 = max(offset, 0). Sizes may be dynamic; every opset.
Result<std::string> diagonalOf(Context& ctx, std::string x, int rank, int64_t offset, int64_t d1, int64_t d2) {
  d1 = ctx.normDim(d1, rank);
  d2 = ctx.normDim(d2, rank);
  if (rank < 2 || d1 == d2 || d1 < 0 || d2 < 0 || d1 >= rank || d2 >= rank)
    return ctx.error("bad-argument", "diagonal: dim1 and dim2 must be two different axes of a tensor of rank >= 2");
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i)
    if (i != d1 && i != d2) perm.push_back(i);
  perm.push_back(d1);
  perm.push_back(d2);
  x = ctx.emit1("Transpose", {x}, {attrInts("perm", perm)});
  std::string n1 = dimSize(ctx, x, rank - 2), n2 = dimSize(ctx, x, rank - 1);
  std::vector<std::string> shape;
  if (rank > 2) shape.push_back(ctx.slice(ctx.shapeOf(x), {0}, {rank - 2}, {0}));
  shape.push_back(ctx.constInt64s({-1}));
  std::string flat = ctx.emit1("Reshape", {x, shape.size() == 1 ? shape[0] : ctx.emit1("Concat", shape, {attrInt("axis", 0)})});
  const int64_t r0 = std::max<int64_t>(-offset, 0), c0 = std::max<int64_t>(offset, 0);
  std::string len = ctx.emit1("Concat", {ctx.emit1("Sub", {n1, ctx.constInt64s({r0})}),
                                         ctx.emit1("Sub", {n2, ctx.constInt64s({c0})})}, {attrInt("axis", 0)});
  len = reduceOver(ctx, "ReduceMin", len, {0}, true);
  len = reduceOver(ctx, "ReduceMax", ctx.emit1("Concat", {len, ctx.constInt64s({0})}, {attrInt("axis", 0)}), {0}, true);
  std::string i = arangeOf(ctx, len);
  std::string pos = ctx.emit1("Add", {ctx.emit1("Mul", {ctx.emit1("Add", {i, ctx.constInt64s({r0})}), n2}),
                                      ctx.emit1("Add", {i, ctx.constInt64s({c0})})});
  return ctx.emit1("Gather", {flat, pos}, {attrInt("axis", rank - 2)});
}

Status convertDiagonal(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  int64_t offset = 0, d1 = 0, d2 = 1;
  if (n.inputs.size() > 1) { OXPORT_ASSIGN(offset, ctx.constInt(args.in("offset", 1))); }
  if (n.inputs.size() > 2) { OXPORT_ASSIGN(d1, ctx.constInt(args.in("dim1", 2))); }
  if (n.inputs.size() > 3) { OXPORT_ASSIGN(d2, ctx.constInt(args.in("dim2", 3))); }
  OXPORT_ASSIGN(std::string y, diagonalOf(ctx, x, ctx.rank(args.in("self", 0)), offset, d1, d2));
  return bindOut(ctx, n, y);
}

// trace(self): the sum of the main diagonal of a matrix.
Status convertTrace(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensorOfType(args.in("self", 0), n.output(0)->meta.dtype));
  OXPORT_ASSIGN(std::string d, diagonalOf(ctx, x, ctx.rank(args.in("self", 0)), 0, 0, 1));
  return bindOut(ctx, n, reduceOver(ctx, "ReduceSum", d, {0}, false));
}

// diag_embed(self, offset, dim1=-2, dim2=-1) for the last two axes: out[..., i, j] = x[..., i - r0]
// where j - i == offset, else 0 (a Gather and a Where, so infinities stay off the diagonal).
Result<std::string> diagEmbed(Context& ctx, const std::string& x, int rank, DType dt, int64_t offset) {
  std::string nlen = dimSize(ctx, x, rank - 1);
  const int64_t k = offset < 0 ? -offset : offset, r0 = std::max<int64_t>(-offset, 0);
  std::string m = ctx.emit1("Add", {nlen, ctx.constInt64s({k})});
  std::string ar = arangeOf(ctx, m);
  std::string i = ctx.unsqueeze(ar, {1}), j = ctx.unsqueeze(ar, {0});
  std::string on = ctx.emit1("Equal", {ctx.emit1("Sub", {j, i}), ctx.constInt64s({offset})});  // [m, m]
  // Row i reads x[i - r0], clamped into range (those positions are off the diagonal anyway).
  std::string src = ctx.emit1("Sub", {i, ctx.constInt64s({r0})});
  src = ctx.emit1("Where", {ctx.emit1("Less", {src, ctx.constInt64s({0})}), ctx.constInt64s({0}), src});
  std::string last = ctx.emit1("Sub", {nlen, ctx.constInt64s({1})});
  src = ctx.emit1("Where", {ctx.emit1("Greater", {src, last}), last, src});
  src = ctx.emit1("Expand", {src, ctx.shapeOf(on)});
  std::string picked = ctx.emit1("Gather", {x, src}, {attrInt("axis", rank - 1)});            // [..., m, m]
  return whereTyped(ctx, on, picked, ctx.constScalar(0, dt), dt);
}

Status convertDiagEmbed(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  const int rank = ctx.rank(args.in("self", 0));
  int64_t offset = 0, d1 = -2, d2 = -1;
  if (n.inputs.size() > 1) { OXPORT_ASSIGN(offset, ctx.constInt(args.in("offset", 1))); }
  if (n.inputs.size() > 2) { OXPORT_ASSIGN(d1, ctx.constInt(args.in("dim1", 2))); }
  if (n.inputs.size() > 3) { OXPORT_ASSIGN(d2, ctx.constInt(args.in("dim2", 3))); }
  d1 = ctx.normDim(d1, rank + 1);
  d2 = ctx.normDim(d2, rank + 1);
  if (d1 != rank - 1 || d2 != rank)
    return ctx.error("unsupported-form", "diag_embed into other axes than the last two",
                     "use the default dims and move the axes with permute afterwards");
  OXPORT_ASSIGN(std::string y, diagEmbed(ctx, x, rank, ctx.dtype(args.in("self", 0)), offset));
  return bindOut(ctx, n, y);
}

// diag(self, diagonal=0): a 1-D input becomes a matrix with it on that diagonal; a 2-D input gives
// that diagonal.
Status convertDiag(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  int64_t offset = 0;
  if (n.inputs.size() > 1) { OXPORT_ASSIGN(offset, ctx.constInt(args.in("diagonal", 1))); }
  const int rank = ctx.rank(args.in("self", 0));
  if (rank == 1) {
    OXPORT_ASSIGN(std::string y, diagEmbed(ctx, x, rank, ctx.dtype(args.in("self", 0)), offset));
    return bindOut(ctx, n, y);
  }
  if (rank != 2) return ctx.error("bad-argument", "diag needs a 1-D or 2-D tensor");
  OXPORT_ASSIGN(std::string y, diagonalOf(ctx, x, 2, offset, 0, 1));
  return bindOut(ctx, n, y);
}

// diagflat(self, offset=0): the flattened input on that diagonal of a square matrix.
Status convertDiagflat(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  int64_t offset = 0;
  if (const Value* ov = args.optIn("offset", 1)) { OXPORT_ASSIGN(offset, ctx.constInt(ov)); }
  OXPORT_ASSIGN(std::string y, diagEmbed(ctx, ctx.reshape(x, {-1}), 1, ctx.dtype(args.in("self", 0)), offset));
  return bindOut(ctx, n, y);
}

// diagonal_scatter(self, src, offset=0, dim1=0, dim2=1): self with src written on its diagonal.
// dim1 and dim2 move last (Transpose), where row i of the diagonal reads src[..., i - r0] (a Gather
// along src's last axis, clamped into range) and a Where keeps self off the diagonal.
Status convertDiagonalScatter(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* sv = args.in("self", 0);
  const Value* srcv = args.in("src", 1);
  const DType dt = ctx.dtype(sv);
  const int rank = ctx.rank(sv);
  OXPORT_ASSIGN(std::string x, ctx.tensor(sv));
  OXPORT_ASSIGN(std::string src, ctx.tensorOfType(srcv, dt));
  int64_t offset = 0, d1 = 0, d2 = 1;
  if (const Value* v = args.optIn("offset", 2)) { OXPORT_ASSIGN(offset, ctx.constInt(v)); }
  if (const Value* v = args.optIn("dim1", 3)) { OXPORT_ASSIGN(d1, ctx.constInt(v)); }
  if (const Value* v = args.optIn("dim2", 4)) { OXPORT_ASSIGN(d2, ctx.constInt(v)); }
  if (rank < 2) return ctx.error("bad-argument", "diagonal_scatter of a tensor of fewer than 2 dimensions");
  d1 = ctx.normDim(d1, rank);
  d2 = ctx.normDim(d2, rank);
  if (d1 == d2) return ctx.error("bad-argument", "diagonal_scatter with dim1 == dim2", "give two different dims");
  const auto& src_shape = srcv->meta.shape;
  if (!src_shape.empty() && src_shape.back() == 0) return bindOut(ctx, n, ctx.emit1("Identity", {x}));  // no diagonal
  std::vector<int64_t> perm;
  for (int64_t k = 0; k < rank; ++k)
    if (k != d1 && k != d2) perm.push_back(k);
  perm.push_back(d1);
  perm.push_back(d2);
  bool identity = true;
  std::vector<int64_t> inverse(perm.size());
  for (size_t k = 0; k < perm.size(); ++k) {
    identity = identity && perm[k] == static_cast<int64_t>(k);
    inverse[static_cast<size_t>(perm[k])] = static_cast<int64_t>(k);
  }
  std::string xt = identity ? x : ctx.emit1("Transpose", {x}, {attrInts("perm", perm)});
  std::string rows = ctx.unsqueeze(arangeOf(ctx, dimSize(ctx, xt, rank - 2)), {1});
  std::string cols = ctx.unsqueeze(arangeOf(ctx, dimSize(ctx, xt, rank - 1)), {0});
  std::string on = ctx.emit1("Equal", {ctx.emit1("Sub", {cols, rows}), ctx.constInt64s({offset})});  // [H, W]
  std::string at = ctx.emit1("Sub", {rows, ctx.constInt64s({std::max<int64_t>(-offset, 0)})});         // [H, 1]
  at = ctx.emit1("Where", {ctx.emit1("Less", {at, ctx.constInt64s({0})}), ctx.constInt64s({0}), at});
  std::string last = ctx.emit1("Sub", {dimSize(ctx, src, rank - 2), ctx.constInt64s({1})});
  at = ctx.emit1("Where", {ctx.emit1("Greater", {at, last}), last, at});
  std::string picked = ctx.emit1("Gather", {src, at}, {attrInt("axis", rank - 2)});  // [..., H, 1]
  std::string y = whereTyped(ctx, on, picked, xt, dt);
  return bindOut(ctx, n, identity ? y : ctx.emit1("Transpose", {y}, {attrInts("perm", inverse)}));
}

}  // namespace

void registerLinalgOps(Registry& r) {
  addAll(r, {"aten::tril", "aten::tril_"}, convertTriangle(false));
  addAll(r, {"aten::triu", "aten::triu_"}, convertTriangle(true));
  r.add("aten::einsum", convertEinsumExpanded, kMinOpset, 11);
  r.add("aten::einsum", convertEinsum, 12);
  addAll(r, {"aten::outer", "aten::ger"}, convertOuter);
  r.add("aten::unflatten", convertUnflatten);
  addAll(r, {"aten::mT", "aten::mH", "aten::adjoint"}, convertMatrixTranspose);
  r.add("aten::tensordot", convertTensordot);
  r.add("aten::diagonal", convertDiagonal);
  r.add("aten::diag", convertDiag);
  r.add("aten::diag_embed", convertDiagEmbed);
  r.add("aten::diagflat", convertDiagflat);
  r.add("aten::diagonal_scatter", convertDiagonalScatter);
  r.add("aten::trace", convertTrace);
}

}  // namespace oxport::convert
