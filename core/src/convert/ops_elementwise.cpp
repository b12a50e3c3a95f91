// Elementwise arithmetic, math functions, comparisons, logic, clamp and where.
// Type promotion follows the example run: inputs are cast to the dtype PyTorch produced.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

#include "convert/args.h"
#include "convert/registry.h"
#include "convert/sequence.h"
#include "convert/number_list.h"
#include "convert/util.h"

namespace oxport::convert {

namespace {

// add/sub(self, other, alpha=1)
// aten::add.t(List a, List b): the lists joined, not added element by element (`[2] + x.shape`).
Status listConcat(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* la = args.in("a", 0);
  const Value* lb = args.in("b", 1);
  const ts::ValueType elem = la->elem_type;
  if (elem == ts::ValueType::Int) {
    OXPORT_ASSIGN(std::string a, ctx.intsTensor(la));
    OXPORT_ASSIGN(std::string b, ctx.intsTensor(lb));
    return bindOut(ctx, n, ctx.emit1("Concat", {a, b}, {attrInt("axis", 0)}));
  }
  if (elem == ts::ValueType::Tensor && (ctx.isSequence(la) || ctx.isSequence(lb))) {
    // A list built in a loop (outs = outs + [y]): the right side's tensors inserted one by one.
    if (ctx.isSequence(lb))
      return ctx.error("unsupported-form",
                       "joining list %" + la->name + " with list %" + lb->name +
                           ", whose length depends on the inputs, has no ONNX form here",
                       "append the tensors one by one, or put the new list first");
    OXPORT_ASSIGN(std::string seq, ctx.sequence(la, listElemDType(la, {lb})));
    OXPORT_ASSIGN(auto b, ctx.listElements(lb));
    for (const Value* e : b) {
      OXPORT_ASSIGN(std::string t, ctx.tensor(e));
      seq = ctx.emit1("SequenceInsert", {seq, t});
    }
    ctx.bindSequence(n.output(0), seq);
    return okStatus();
  }
  if (elem == ts::ValueType::Tensor) {
    OXPORT_ASSIGN(auto a, ctx.tensorList(la));
    OXPORT_ASSIGN(auto b, ctx.tensorList(lb));
    a.insert(a.end(), b.begin(), b.end());
    ctx.bindList(n.output(0), a);
    return okStatus();
  }
  return ctx.error("unsupported-list", std::string("joining lists of ") + ts::valueTypeName(elem));
}

// aten::mul.left_t(t[] l, int n) / mul.right_(int n, t[] l): the list repeated n times
// (`torch.cat([x] * 2)`, classifier-free guidance's batch doubling, scripted).
Status listRepeat(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* l = args.in("l", 0);
  OXPORT_ASSIGN(int64_t times, args.constInt("n", 1));
  if (l->elem_type == ts::ValueType::Int) {
    OXPORT_ASSIGN(std::string t, ctx.intsTensor(l));
    if (times <= 0) return bindOut(ctx, n, ctx.slice(t, {0}, {0}, {0}));
    return bindOut(ctx, n, times == 1 ? t : ctx.emit1("Concat", std::vector<std::string>(times, t), {attrInt("axis", 0)}));
  }
  if (l->elem_type != ts::ValueType::Tensor || ctx.isSequence(l))
    return ctx.error("unsupported-form", "repeating list %" + l->name + " (list * int) has no ONNX form here",
                     "write the list out, or torch.cat / repeat the tensors");
  OXPORT_ASSIGN(auto elems, ctx.tensorList(l));
  std::vector<std::string> out;
  for (int64_t i = 0; i < times; ++i) out.insert(out.end(), elems.begin(), elems.end());
  ctx.bindList(n.output(0), out);
  return okStatus();
}

ConvertFn addSub(const std::string& op, bool reverse = false) {
  return [op, reverse](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    if (op == "Add" && !reverse && args.in({"self", "a"}, 0)->type == ts::ValueType::List) return listConcat(ctx, n);
    OXPORT_ASSIGN(auto ins, promotedInputs(ctx, n, {args.in({"self", "a"}, 0), args.in({"other", "b"}, 1)}));
    if (args.has("alpha", 2)) {
      OXPORT_ASSIGN(double alpha, ctx.constDouble(args.in("alpha", 2)));
      if (n.output(0)->meta.dtype == DType::Bool) {
        // alpha * b of bools is b for a nonzero alpha and false for 0 (ONNX has no bool Mul).
        if (alpha == 0.0) ins[1] = ctx.emit1("And", {ins[1], ctx.constScalar(0, DType::Bool)});
      } else if (alpha != 1.0) {
        ins[1] = ctx.emit1("Mul", {ins[1], ctx.constScalar(alpha, n.output(0)->meta.dtype)});
      }
    }
    if (reverse) std::swap(ins[0], ins[1]);
    // bool + bool is logical or in PyTorch; ONNX has no Add for bool.
    if (op == "Add" && n.output(0)->meta.dtype == DType::Bool) return bindOut(ctx, n, ctx.emit1("Or", ins));
    return bindOut(ctx, n, ctx.emit1(op, ins));
  };
}

// Max/Min of two tensors of dtype dt: integer Max/Min need opset 12; before, Less/Greater + Where.
// Bool: max is Or, min is And (ONNX has no Max/Min for bool).
std::string extremum(Context& ctx, bool is_max, const std::string& a, const std::string& b, DType dt) {
  if (dt == DType::Bool) return ctx.emit1(is_max ? "Or" : "And", {a, b});
  if (isFloating(dt) || ctx.opset() >= 12) return ctx.emit1(is_max ? "Max" : "Min", {a, b});
  std::string cmp = ctx.emit1(is_max ? "Greater" : "Less", {a, b});
  return whereTyped(ctx, cmp, a, b, dt);
}

ConvertFn extremumOp(bool is_max) {
  return [is_max](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(auto ins, promotedInputs(ctx, n, {args.in({"self", "a"}, 0), args.in({"other", "b"}, 1)}));
    return bindOut(ctx, n, extremum(ctx, is_max, ins[0], ins[1], n.output(0)->meta.dtype));
  };
}

// max(list) / min(list) of numbers: the list's elements (of a fixed count) as one 1-D tensor of the
// result's dtype, reduced to a 0-d value.
Status listExtremum(Context& ctx, const Node& n, bool is_max) {
  const DType dt = n.output(0)->meta.dtype;
  // An int list may be a list of sizes or a slice of one, kept as a tensor.
  OXPORT_ASSIGN(std::string all, numberListTensor(ctx, n.input(0), dt));
  if (all.empty()) return ctx.error("bad-argument", std::string(is_max ? "max" : "min") + "() of an empty list");
  return bindOut(ctx, n, reduceOver(ctx, is_max ? "ReduceMax" : "ReduceMin", all, {0}, false));
}

ConvertFn binary(const std::string& op) {
  return [op](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(auto ins, promotedInputs(ctx, n, {args.in("self", 0), args.in("other", 1)}));
    return bindOut(ctx, n, ctx.emit1(op, ins));
  };
}

// div(self, other, rounding_mode=None|"trunc"|"floor")
Status convertDiv(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  std::string mode;
  if (n.inputs.size() > 2 && args.in("rounding_mode", 2)->constant && args.in("rounding_mode", 2)->constant->isString()) mode = args.in("rounding_mode", 2)->constant->str();
  const DType out = n.output(0)->meta.dtype;
  if (mode.empty() || isFloating(out)) {
    OXPORT_ASSIGN(auto ins, promotedInputs(ctx, n, {args.in("self", 0), args.in("other", 1)}));
    std::string q = ctx.emit1("Div", ins);
    if (mode == "trunc") {
      // trunc(x) = sign(x) * floor(|x|)
      q = ctx.emit1("Mul", {ctx.emit1("Sign", {q}), ctx.emit1("Floor", {ctx.emit1("Abs", {q})})});
    } else if (mode == "floor") {
      q = ctx.emit1("Floor", {q});
    }
    return bindOut(ctx, n, q);
  }
  // Integer division with rounding: compute in float64, round, cast back.
  OXPORT_ASSIGN(std::string a, ctx.tensorOfType(args.in("self", 0), DType::Float64));
  OXPORT_ASSIGN(std::string b, ctx.tensorOfType(args.in("other", 1), DType::Float64));
  std::string q = ctx.emit1("Div", {a, b});
  if (mode == "floor") q = ctx.emit1("Floor", {q});
  else q = ctx.emit1("Mul", {ctx.emit1("Sign", {q}), ctx.emit1("Floor", {ctx.emit1("Abs", {q})})});
  return bindOut(ctx, n, ctx.cast(q, out));
}

// Integer true division: PyTorch returns float; inputs were integer.
Status convertTrueDiv(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  if (n.inputs.size() > 2) return convertDiv(ctx, n);
  OXPORT_ASSIGN(auto ins, promotedInputs(ctx, n, {args.in({"self", "a"}, 0), args.in({"other", "b"}, 1)}));
  return bindOut(ctx, n, ctx.emit1("Div", ins));
}

ConvertFn unary(const std::string& op) {
  return [op](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    const Value* in = args.in({"self", "a"}, 0);
    const DType out = n.output(0)->meta.dtype;
    // math.ceil / math.floor of a float give an int (ceil.float -> int): round in the float type,
    // then cast; casting the input first would truncate it (and ONNX Ceil takes no int64).
    if (!isFloating(out) && isFloating(in->meta.dtype)) {
      OXPORT_ASSIGN(std::string x, ctx.tensorOfType(in, in->meta.dtype));
      return bindOut(ctx, n, ctx.cast(ctx.emit1(op, {x}), out));
    }
    OXPORT_ASSIGN(std::string x, ctx.tensorOfType(in, out));
    return bindOut(ctx, n, ctx.emit1(op, {x}));
  };
}

// round(self) / round(self, *, decimals): half to even, as PyTorch. decimals d scales by 10^d
// first (PyTorch: round(x * 10^d) / 10^d, and x / 10^-d ... * 10^-d for negative d). Round from
// opset 11; below it Floor(x + 0.5), one less where that was a tie that landed on an odd number.
Status convertRound(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(std::string x, ctx.tensorOfType(args.in({"self", "a"}, 0), dt));
  if (!isFloating(dt)) return bindOut(ctx, n, ctx.emit1("Identity", {x}));
  int64_t decimals = 0;
  if (const Value* d = args.optIn("decimals")) { OXPORT_ASSIGN(decimals, ctx.constInt(d)); }
  double ten = 1;
  for (int64_t i = 0; i < (decimals < 0 ? -decimals : decimals); ++i) ten *= 10;
  std::string scale = ctx.constScalar(ten, dt);
  if (decimals > 0) x = ctx.emit1("Mul", {x, scale});
  else if (decimals < 0) x = ctx.emit1("Div", {x, scale});
  std::string r;
  if (ctx.opset() >= 11) {
    r = ctx.emit1("Round", {x});
  } else {
    std::string half = ctx.constScalar(0.5, dt), two = ctx.constScalar(2, dt), one = ctx.constScalar(1, dt);
    std::string up = ctx.emit1("Floor", {ctx.emit1("Add", {x, half})});
    // Equal takes floats from opset 11 only: a tie is up - x neither below nor above 0.5.
    std::string d = ctx.emit1("Sub", {up, x});
    std::string tie = ctx.emit1("Not", {ctx.emit1("Or", {ctx.emit1("Less", {d, half}), ctx.emit1("Greater", {d, half})})});
    std::string odd_part = ctx.emit1("Sub", {up, ctx.emit1("Mul", {two, ctx.emit1("Floor", {ctx.emit1("Div", {up, two})})})});
    std::string odd = ctx.emit1("Greater", {odd_part, half});
    r = ctx.emit1("Where", {ctx.emit1("And", {tie, odd}), ctx.emit1("Sub", {up, one}), up});
  }
  if (decimals > 0) r = ctx.emit1("Div", {r, scale});
  else if (decimals < 0) r = ctx.emit1("Mul", {r, scale});
  return bindOut(ctx, n, r);
}

Status convertRsqrt(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensorOfType(args.in("self", 0), n.output(0)->meta.dtype));
  return bindOut(ctx, n, ctx.emit1("Reciprocal", {ctx.emit1("Sqrt", {x})}));
}

// Comparisons: inputs promoted to a common dtype (the tensor's, or float when mixed).
// The length of a list of ints known at export time: a constant, a tensor's sizes (its rank), a
// list built from elements, a slice of one with constant bounds.
std::optional<size_t> listLength(const Context& ctx, const Value* v) {
  if (v->constant) return v->constant->isList() ? std::optional<size_t>(v->constant->list().size()) : std::nullopt;
  const Node* p = v->producer;
  if (!p) return std::nullopt;
  if (p->kind == "prim::ListConstruct") return p->inputs.size();
  if (p->kind == "aten::size" && p->inputs.size() == 1 && p->input(0)->isTensor() && p->input(0)->meta.known)
    return p->input(0)->meta.rank();
  if (p->kind == "aten::slice" && p->inputs.size() == 4) {
    const std::optional<size_t> len = listLength(ctx, p->input(0));
    const std::optional<int64_t> step = p->input(3)->isNone() ? 1 : ctx.maybeInt(p->input(3));
    if (!len || !step || *step <= 0) return std::nullopt;
    const auto n = static_cast<int64_t>(*len);
    auto bound = [&](const Value* b, int64_t dflt) -> std::optional<int64_t> {
      if (b->isNone()) return dflt;
      std::optional<int64_t> i = ctx.maybeInt(b);
      if (!i) return std::nullopt;
      return std::clamp(*i < 0 ? *i + n : *i, int64_t{0}, n);
    };
    const std::optional<int64_t> start = bound(p->input(1), 0), end = bound(p->input(2), n);
    if (!start || !end) return std::nullopt;
    return *end <= *start ? 0 : static_cast<size_t>((*end - *start + *step - 1) / *step);
  }
  return std::nullopt;
}

// a == b / a != b on lists of ints (`input.size()[:-1] == var.size()` in F.gaussian_nll_loss): one
// bool, as Python compares lists, not an elementwise Equal.
Status compareIntLists(Context& ctx, const Node& n, const Value* a, const Value* b, bool negate) {
  const std::optional<size_t> la = listLength(ctx, a), lb = listLength(ctx, b);
  if (!la || !lb)
    return ctx.error("unsupported-form", "comparing lists whose lengths depend on the inputs has no ONNX form here",
                     "compare the elements one by one, or compare tensors (torch.equal)");
  if (*la != *lb || *la == 0) {
    const bool equal = *la == *lb;
    return bindOut(ctx, n, ctx.constScalar(equal != negate ? 1.0 : 0.0, DType::Bool));
  }
  OXPORT_ASSIGN(std::string x, ctx.intsTensor(a));
  OXPORT_ASSIGN(std::string y, ctx.intsTensor(b));
  std::string same = ctx.cast(ctx.emit1("Equal", {x, y}), DType::Int32);
  std::string all = ctx.cast(reduceOver(ctx, "ReduceMin", same, {0}, false), DType::Bool);
  return bindOut(ctx, n, negate ? ctx.emit1("Not", {all}) : all);
}

bool isIntList(const Value* v) { return v->type == ts::ValueType::List && v->elem_type == ts::ValueType::Int; }

ConvertFn compare(const std::string& op, bool negate = false) {
  return [op, negate](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    const Value* a = args.in({"self", "a"}, 0);
    const Value* b = args.in({"other", "b"}, 1);
    if (op == "Equal" && isIntList(a) && isIntList(b)) return compareIntLists(ctx, n, a, b, negate);
    DType common = a->isTensor() ? ctx.dtype(a) : (b->isTensor() ? ctx.dtype(b) : DType::Float32);
    if (a->isTensor() && b->isTensor() && ctx.dtype(a) != ctx.dtype(b)) {
      bool fa = isFloating(ctx.dtype(a)), fb = isFloating(ctx.dtype(b));
      if (fa != fb) common = fa ? ctx.dtype(a) : ctx.dtype(b);
      else common = dtypeSize(ctx.dtype(a)) >= dtypeSize(ctx.dtype(b)) ? ctx.dtype(a) : ctx.dtype(b);
    } else if (!b->isTensor() && b->constant && b->constant->isDouble() && !isFloating(common)) {
      common = DType::Float32;
    }
    if (common == DType::Bool && (op == "Less" || op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual"))
      common = DType::Int32;
    OXPORT_ASSIGN(std::string x, ctx.tensorOfType(a, common));
    OXPORT_ASSIGN(std::string y, ctx.tensorOfType(b, common));
    std::string r;
    if (op == "Equal" && ctx.opset() < 11 && isFloating(common)) {
      // Equal takes floats from opset 11; before, a == b is !(a < b || a > b).
      r = ctx.emit1("Not", {ctx.emit1("Or", {ctx.emit1("Less", {x, y}), ctx.emit1("Greater", {x, y})})});
    } else if ((op == "LessOrEqual" || op == "GreaterOrEqual") && ctx.opset() < 12) {
      std::string strict = ctx.emit1(op == "LessOrEqual" ? "Greater" : "Less", {x, y});
      r = ctx.emit1("Not", {strict});
    } else {
      r = ctx.emit1(op, {x, y});
    }
    if (negate) r = ctx.emit1("Not", {r});
    return bindOut(ctx, n, r);
  };
}

// logical_and/or/xor, and the bitwise forms on bool tensors (&, |, ^ of masks).
ConvertFn logical(const std::string& op) {
  return [op](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    OXPORT_ASSIGN(std::string x, ctx.tensorOfType(args.in({"self", "a"}, 0), DType::Bool));
    OXPORT_ASSIGN(std::string y, ctx.tensorOfType(args.in({"other", "b"}, 1), DType::Bool));
    std::string r = ctx.emit1(op, {x, y});
    if (n.output(0)->meta.dtype != DType::Bool) r = ctx.cast(r, n.output(0)->meta.dtype);
    return bindOut(ctx, n, r);
  };
}

Status convertLogicalNot(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensorOfType(args.in("self", 0), DType::Bool));
  std::string r = ctx.emit1("Not", {x});
  if (n.output(0)->meta.dtype != DType::Bool) r = ctx.cast(r, n.output(0)->meta.dtype);
  return bindOut(ctx, n, r);
}

// ~x. On bool tensors it is Not. On integers, two's complement makes ~x = -1 - x for every
// signed value (no overflow: -1 - INT_MIN is INT_MAX) and 255 - x for uint8. Sub on int8/int16/uint8
// is widened to int32 by the legalize-types pass where the opset or ONNX Runtime lacks it. ONNX's
// BitwiseNot is opset 18, past the opsets oxport writes.
Status convertBitwiseNot(Context& ctx, const Node& n) {
  const DType dt = n.output(0)->meta.dtype;
  if (dt == DType::Bool) return convertLogicalNot(ctx, n);
  if (isFloating(dt))
    return ctx.error("unsupported-form", "bitwise_not needs an integer or bool tensor",
                     "torch refuses ~ on floating tensors too: compare first (x != 0) or cast to an integer");
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensorOfType(args.in("self", 0), dt));
  const double all_ones = dt == DType::UInt8 ? 255.0 : -1.0;
  return bindOut(ctx, n, ctx.emit1("Sub", {ctx.constScalar(all_ones, dt), x}));
}

// ---- &, |, ^ on integer tensors
// ONNX's BitwiseAnd/Or/Xor are opset 18. Below, each operand is split into its bits with integer
// Div/Mod by powers of two along a new last axis (one node per step, whatever the width), the bits
// are combined as 0/1 numbers (and: a b, or: a + b - a b, xor: a + b - 2 a b) and summed back with their
// weights. The top bit is kept apart: in two's complement it weighs -2^(w-1) (the sign: x < 0),
// for uint8 it is 128 (x > 127); the low w-1 bits are those of x with the top bit cleared, which
// lies in [0, 2^(w-1)), so truncating Div and Mod are floor ones there. Nothing overflows: the low
// sum is at most 2^(w-1) - 1 and the top weight is added once. int8/int16/uint8 are emitted in
// their own type; the legalize-types pass widens the ops ONNX Runtime lacks to int32 and back.
enum class BitOp { And, Or, Xor };

int bitWidth(DType dt) { return static_cast<int>(8 * dtypeSize(dt)); }

// Integer constants of dtype dt: a 0-d one (scalar) or 1-D. Exact for every int64 (no double).
std::string intConst(Context& ctx, const std::vector<int64_t>& v, DType dt, bool scalar) {
  std::vector<int64_t> shape;
  if (!scalar) shape.push_back(static_cast<int64_t>(v.size()));
  switch (dt) {
    case DType::Int8: return ctx.constant(HostTensor::fromVector(dt, shape, std::vector<int8_t>(v.begin(), v.end())));
    case DType::UInt8: return ctx.constant(HostTensor::fromVector(dt, shape, std::vector<uint8_t>(v.begin(), v.end())));
    case DType::Int16: return ctx.constant(HostTensor::fromVector(dt, shape, std::vector<int16_t>(v.begin(), v.end())));
    case DType::Int32: return ctx.constant(HostTensor::fromVector(dt, shape, std::vector<int32_t>(v.begin(), v.end())));
    default: return ctx.constant(HostTensor::fromVector(DType::Int64, shape, v));
  }
}
std::string intScalar(Context& ctx, int64_t v, DType dt) { return intConst(ctx, {v}, dt, true); }

// The weight of the top bit: INT_MIN of a signed type, 128 for uint8.
int64_t topWeight(DType dt) { return dt == DType::UInt8 ? 128 : -(int64_t{1} << (bitWidth(dt) - 1)); }

// x mod m for m > 0 (floor: in [0, m)): Mod (fmod=0) from opset 10; before, x - trunc(x / m) m,
// plus m where that is negative.
std::string floorMod(Context& ctx, const std::string& x, int64_t m, DType dt) {
  const std::string mc = intScalar(ctx, m, dt);
  if (ctx.opset() >= 10) return ctx.emit1("Mod", {x, mc});
  std::string r = ctx.emit1("Sub", {x, ctx.emit1("Mul", {ctx.emit1("Div", {x, mc}), mc})});
  std::string neg = ctx.cast(ctx.emit1("Less", {r, intScalar(ctx, 0, dt)}), dt);
  return ctx.emit1("Add", {r, ctx.emit1("Mul", {neg, mc})});
}

// The top bit of x as 0/1 in dt, and x with it cleared (in [0, 2^(w-1))).
std::pair<std::string, std::string> topBitSplit(Context& ctx, const std::string& x, DType dt) {
  std::string top = dt == DType::UInt8 ? ctx.emit1("Greater", {x, intScalar(ctx, 127, dt)})
                                       : ctx.emit1("Less", {x, intScalar(ctx, 0, dt)});
  top = ctx.cast(top, dt);
  std::string low = ctx.emit1("Sub", {x, ctx.emit1("Mul", {top, intScalar(ctx, topWeight(dt), dt)})});
  return {top, low};
}

// Bit k of x as 0/1 in dt.
std::string bitOf(Context& ctx, const std::string& x, int k, DType dt) {
  const int w = bitWidth(dt);
  if (k == w - 1) return topBitSplit(ctx, x, dt).first;
  if (k == w - 2 && dt != DType::UInt8)  // 2^(k+1) is past the type: read it from x without its sign
    return ctx.emit1("Div", {topBitSplit(ctx, x, dt).second, intScalar(ctx, int64_t{1} << k, dt)});
  return ctx.emit1("Div", {floorMod(ctx, x, int64_t{1} << (k + 1), dt), intScalar(ctx, int64_t{1} << k, dt)});
}

// The low k bits of x (x & (2^k - 1)), 1 <= k < w.
std::string lowBits(Context& ctx, const std::string& x, int k, DType dt) {
  if (k == bitWidth(dt) - 1 && dt != DType::UInt8) return topBitSplit(ctx, x, dt).second;
  return floorMod(ctx, x, int64_t{1} << k, dt);
}

// x op c for a constant c (only its low w bits count) whose bit pattern has a cheap form: 0, all
// ones, a single bit, a low mask 2^k - 1 (x & 0xFF), or (for &) a high mask ~(2^k - 1). nullopt
// for other constants.
std::optional<std::string> bitwiseWithConstant(Context& ctx, BitOp op, const std::string& x, int64_t c, DType dt) {
  const int w = bitWidth(dt);
  const uint64_t all = w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
  const uint64_t u = static_cast<uint64_t>(c) & all;
  auto isPow2 = [](uint64_t v) { return v != 0 && (v & (v - 1)) == 0; };
  auto log2 = [](uint64_t v) { int k = 0; while (v > 1) { v >>= 1; ++k; } return k; };
  const int64_t all_value = dt == DType::UInt8 ? 255 : -1;
  auto zero_like = [&] { return ctx.emit1("Sub", {x, x}); };
  if (u == 0) return op == BitOp::And ? zero_like() : ctx.emit1("Identity", {x});
  if (u == all) {
    if (op == BitOp::And) return ctx.emit1("Identity", {x});
    if (op == BitOp::Or) return ctx.emit1("Add", {zero_like(), intScalar(ctx, all_value, dt)});
    return ctx.emit1("Sub", {intScalar(ctx, all_value, dt), x});  // ~x
  }
  if (isPow2(u)) {  // a single bit 2^k
    const int k = log2(u);
    const std::string p = intScalar(ctx, k == w - 1 ? topWeight(dt) : int64_t{1} << k, dt);
    const std::string bit = bitOf(ctx, x, k, dt);
    const std::string set = ctx.emit1("Mul", {bit, p});
    const std::string unset = ctx.emit1("Mul", {ctx.emit1("Sub", {intScalar(ctx, 1, dt), bit}), p});
    if (op == BitOp::And) return set;
    if (op == BitOp::Or) return ctx.emit1("Add", {x, unset});
    return ctx.emit1("Add", {ctx.emit1("Sub", {x, set}), unset});  // clear it if set, then set it if it was clear
  }
  if (isPow2(u + 1)) {  // 2^k - 1
    const int k = log2(u + 1);
    const std::string low = lowBits(ctx, x, k, dt);
    if (op == BitOp::And) return low;
    const std::string high = ctx.emit1("Sub", {x, low});
    if (op == BitOp::Or) return ctx.emit1("Add", {high, intScalar(ctx, c, dt)});
    return ctx.emit1("Add", {high, ctx.emit1("Sub", {intScalar(ctx, c, dt), low})});  // the low bits flipped
  }
  if (op == BitOp::And && isPow2((~u & all) + 1))  // ~(2^k - 1): x rounded down to a multiple of 2^k
    return ctx.emit1("Sub", {x, lowBits(ctx, x, log2((~u & all) + 1), dt)});
  return std::nullopt;
}

// The general form: bits 0..w-2 of each operand along a new last axis, combined, weighed and summed.
std::string bitwiseGeneral(Context& ctx, BitOp op, const std::string& a, int rank_a, const std::string& b, int rank_b,
                           int rank_out, DType dt) {
  const int w = bitWidth(dt);
  std::vector<int64_t> weights;
  for (int k = 0; k < w - 1; ++k) weights.push_back(int64_t{1} << k);
  const std::string h = intConst(ctx, weights, dt, false);
  const std::string two = intScalar(ctx, 2, dt);
  auto split = [&](const std::string& x, int rank) {
    auto [top, low] = topBitSplit(ctx, x, dt);
    std::string q = ctx.emit1("Div", {ctx.unsqueeze(low, {rank}), h});  // floor(low / 2^k) >= 0
    std::string bits = ctx.opset() >= 10 ? ctx.emit1("Mod", {q, two})
                                         : ctx.emit1("Sub", {q, ctx.emit1("Mul", {ctx.emit1("Div", {q, two}), two})});
    return std::make_pair(top, bits);
  };
  auto [ta, ba] = split(a, rank_a);
  auto [tb, bb] = split(b, rank_b);
  auto combine = [&](const std::string& p, const std::string& q) {
    if (op == BitOp::And) return ctx.emit1("Mul", {p, q});
    if (op == BitOp::Xor)  // p + q - 2 p q: no negative step, which uint8 would wrap
      return ctx.emit1("Sub", {ctx.emit1("Add", {p, q}), ctx.emit1("Mul", {ctx.emit1("Mul", {p, q}), two})});
    return ctx.emit1("Sub", {ctx.emit1("Add", {p, q}), ctx.emit1("Mul", {p, q})});
  };
  std::string low = reduceOver(ctx, "ReduceSum", ctx.emit1("Mul", {combine(ba, bb), h}), {rank_out}, false);
  std::string top = ctx.emit1("Mul", {combine(ta, tb), intScalar(ctx, topWeight(dt), dt)});
  return ctx.emit1("Add", {low, top});
}

// A static integer: a Python number, or a 0-d integer constant tensor (read exactly).
std::optional<int64_t> staticInt(const Value* v) {
  if (!v->constant) return std::nullopt;
  const auto& c = *v->constant;
  if (c.isInt() || c.isBool()) return c.toInt();
  if (!c.isTensor() || !c.tensor().shape.empty() || !c.tensor().data) return std::nullopt;
  const HostTensor& t = c.tensor();
  switch (t.dtype) {
    case DType::Int64: return *t.as<int64_t>();
    case DType::Int32: return *t.as<int32_t>();
    case DType::Int16: return *t.as<int16_t>();
    case DType::Int8: return *t.as<int8_t>();
    case DType::UInt8: return *t.as<uint8_t>();
    case DType::Bool: return *t.as<bool>() ? 1 : 0;
    default: return std::nullopt;
  }
}

// __and__/__or__/__xor__ and bitwise_and/or/xor (and their in-place forms): logical on bool
// results, the bit steps above on integers.
ConvertFn bitwise(BitOp op) {
  const char* logical_op = op == BitOp::And ? "And" : op == BitOp::Or ? "Or" : "Xor";
  return [op, logical_op](Context& ctx, const Node& n) -> Status {
    const DType dt = typeDType(n.output(0)).value_or(n.output(0)->meta.dtype);
    if (dt == DType::Bool) return logical(logical_op)(ctx, n);
    if (isFloating(dt))
      return ctx.error("unsupported-form", n.kind + " needs integer or bool operands",
                       "torch refuses &, | and ^ on floating tensors too: compare first or cast to an integer");
    const Args args(ctx, n);
    const Value* va = args.in({"self", "a"}, 0);
    const Value* vb = args.in({"other", "b"}, 1);
    OXPORT_ASSIGN(std::string a, ctx.tensorOfType(va, dt));
    OXPORT_ASSIGN(std::string b, ctx.tensorOfType(vb, dt));
    for (int side = 0; side < 2; ++side) {
      const Value* c = side == 0 ? vb : va;
      if (auto value = staticInt(c))
        if (auto r = bitwiseWithConstant(ctx, op, side == 0 ? a : b, *value, dt)) return bindOut(ctx, n, *r);
    }
    auto rankOf = [&](const Value* v) { return v->isTensor() ? ctx.rank(v) : 0; };
    const int rank_out = std::max(rankOf(va), rankOf(vb));
    return bindOut(ctx, n, bitwiseGeneral(ctx, op, a, rankOf(va), b, rankOf(vb), rank_out, dt));
  };
}

// clamp(self, min=None, max=None): scalars or tensors.
Status convertClamp(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(std::string x, ctx.tensorOfType(args.in("self", 0), dt));
  const Value* lo = args.in("min", 1);
  const Value* hi = args.optIn("max", 2);
  const bool lo_none = ctx.isNone(lo), hi_none = !hi || ctx.isNone(hi);
  const bool static_bounds = (lo_none || lo->constant) && (hi_none || hi->constant);
  if (static_bounds && ctx.opset() >= 11 && (lo_none || !lo->isTensor()) && (hi_none || !hi->isTensor()) &&
      (isFloating(dt) || ctx.opset() >= 12)) {
    std::vector<std::string> ins{x, lo_none ? std::string() : ctx.constScalar(lo->constant->toDouble(), dt),
                                 hi_none ? std::string() : ctx.constScalar(hi->constant->toDouble(), dt)};
    while (ins.back().empty()) ins.pop_back();
    return bindOut(ctx, n, ctx.emit1("Clip", ins));
  }
  // General form: Max/Min (work for tensors, integers and every opset).
  std::string y = x;
  if (!lo_none) {
    OXPORT_ASSIGN(std::string l, ctx.tensorOfType(lo, dt));
    y = extremum(ctx, true, y, l, dt);
  }
  if (!hi_none) {
    OXPORT_ASSIGN(std::string h, ctx.tensorOfType(hi, dt));
    y = extremum(ctx, false, y, h, dt);
  }
  if (y == x) y = ctx.emit1("Identity", {x});
  return bindOut(ctx, n, y);
}

ConvertFn clampOneSide(bool is_min) {
  return [is_min](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    const DType dt = n.output(0)->meta.dtype;
    OXPORT_ASSIGN(std::string x, ctx.tensorOfType(args.in("self", 0), dt));
    OXPORT_ASSIGN(std::string b, ctx.tensorOfType(args.in(is_min ? "min" : "max", 1), dt));
    return bindOut(ctx, n, extremum(ctx, is_min, x, b, dt));
  };
}

// where(condition, self, other)
Status convertWhere(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  if (n.inputs.size() == 1) return convertNonzeroNumpy(ctx, n);  // where(condition): the indices
  OXPORT_ASSIGN(std::string c, ctx.tensorOfType(args.in("condition", 0), DType::Bool));
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(std::string a, ctx.tensorOfType(args.in("self", 1), dt));
  OXPORT_ASSIGN(std::string b, ctx.tensorOfType(args.in("other", 2), dt));
  return bindOut(ctx, n, whereTyped(ctx, c, a, b, dt));
}

// pow(self, exponent)
Status convertPow(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(std::string x, ctx.tensorOfType(args.in({"self", "a"}, 0), dt));
  OXPORT_ASSIGN(std::string e, ctx.tensorOfType(args.in({"exponent", "b"}, 1), dt));
  if (isFloating(dt)) return bindOut(ctx, n, ctx.emit1("Pow", {x, e}));
  // Integers: ONNX Pow takes them from opset 12; before, compute in float and cast back (a
  // negative exponent then truncates toward zero, 2^-1 -> 0 and -1^-3 -> -1, as in PyTorch).
  // 0^-n is 0 in PyTorch but inf in float and INT64_MIN in ONNX Runtime's integer Pow: masked.
  const std::string xf = ctx.cast(x, DType::Float64), ef = ctx.cast(e, DType::Float64);
  const std::string r = ctx.opset() < 12 ? ctx.cast(ctx.emit1("Pow", {xf, ef}), dt) : ctx.emit1("Pow", {x, e});
  const std::string zero_base = ctx.emit1("Less", {ctx.emit1("Abs", {xf}), ctx.constScalar(0.5, DType::Float64)});
  const std::string negative_exp = ctx.emit1("Less", {ef, ctx.constScalar(0.0, DType::Float64)});
  return bindOut(ctx, n, ctx.emit1("Where", {ctx.emit1("And", {zero_base, negative_exp}), ctx.constScalar(0, dt), r}));
}

}  // namespace

void registerElementwiseOps(Registry& r) {
  addAll(r, {"aten::add", "aten::add_"}, addSub("Add"));
  addAll(r, {"aten::sub", "aten::sub_"}, addSub("Sub"));
  r.add("aten::rsub", addSub("Sub", true));
  // bool * bool is logical and in PyTorch; ONNX has no Mul for bool.
  addAll(r, {"aten::mul", "aten::mul_"}, [](Context& ctx, const Node& n) -> Status {
    const Args args(ctx, n);
    if (args.has("l")) return listRepeat(ctx, n);
    OXPORT_ASSIGN(auto ins, promotedInputs(ctx, n, {args.in({"self", "a"}, 0), args.in({"other", "b"}, 1)}));
    return bindOut(ctx, n, ctx.emit1(n.output(0)->meta.dtype == DType::Bool ? "And" : "Mul", ins));
  });
  addAll(r, {"aten::div", "aten::div_"}, convertTrueDiv);
  r.add("aten::true_divide", binary("Div"));
  addAll(r, {"aten::pow", "aten::pow_"}, convertPow);
  r.add("aten::maximum", extremumOp(true));
  // max(a, b) / min(a, b) of two numbers in a scripted forward (prim::max.int, .float, .int_float,
  // ...) when they depend on input sizes; max(list) / min(list) (F.affine_grid's
  // `min(spatial_size) == 1` check, scripted) reduce the list as a 1-D tensor.
  r.add("prim::max", [](Context& ctx, const Node& n) -> Status {
    if (n.inputs.size() == 1) return listExtremum(ctx, n, true);
    return extremumOp(true)(ctx, n);
  });
  r.add("prim::min", [](Context& ctx, const Node& n) -> Status {
    if (n.inputs.size() == 1) return listExtremum(ctx, n, false);
    return extremumOp(false)(ctx, n);
  });
  r.add("aten::minimum", extremumOp(false));
  r.add("aten::neg", unary("Neg"));
  r.add("aten::abs", unary("Abs"));
  addAll(r, {"aten::exp", "aten::exp_"}, unary("Exp"));
  addAll(r, {"aten::log", "aten::log_"}, unary("Log"));
  addAll(r, {"aten::sqrt", "aten::sqrt_"}, unary("Sqrt"));
  r.add("aten::rsqrt", convertRsqrt);
  r.add("aten::reciprocal", unary("Reciprocal"));
  r.add("aten::floor", unary("Floor"));
  r.add("aten::ceil", unary("Ceil"));
  r.add("aten::sin", unary("Sin"));
  r.add("aten::cos", unary("Cos"));
  r.add("aten::tan", unary("Tan"));
  r.add("aten::asin", unary("Asin"));
  r.add("aten::acos", unary("Acos"));
  r.add("aten::atan", unary("Atan"));
  r.add("aten::sinh", unary("Sinh"));
  r.add("aten::cosh", unary("Cosh"));
  r.add("aten::erf", unary("Erf"));
  addAll(r, {"aten::sign", "aten::sgn"}, unary("Sign"));
  addAll(r, {"aten::round", "aten::round_"}, convertRound);
  r.add("aten::eq", compare("Equal"));
  r.add("aten::ne", compare("Equal", true));
  r.add("aten::lt", compare("Less"));
  r.add("aten::gt", compare("Greater"));
  r.add("aten::le", compare("LessOrEqual"));
  r.add("aten::ge", compare("GreaterOrEqual"));
  r.add("aten::logical_and", logical("And"));
  r.add("aten::logical_or", logical("Or"));
  r.add("aten::logical_xor", logical("Xor"));
  r.add("aten::logical_not", convertLogicalNot);
  addAll(r, {"aten::__and__", "aten::bitwise_and", "aten::__iand__", "aten::bitwise_and_"}, bitwise(BitOp::And));
  addAll(r, {"aten::__or__", "aten::bitwise_or", "aten::__ior__", "aten::bitwise_or_"}, bitwise(BitOp::Or));
  addAll(r, {"aten::__xor__", "aten::bitwise_xor", "aten::__ixor__", "aten::bitwise_xor_"}, bitwise(BitOp::Xor));
  r.add("aten::bitwise_not", convertBitwiseNot);
  addAll(r, {"aten::clamp", "aten::clamp_", "aten::clip"}, convertClamp);
  r.add("aten::clamp_min", clampOneSide(true));
  r.add("aten::clamp_max", clampOneSide(false));
  r.add("aten::where", convertWhere);
}

}  // namespace oxport::convert
