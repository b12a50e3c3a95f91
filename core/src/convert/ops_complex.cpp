// Complex values as (real, imag) pairs (docs/ARCHITECTURE.md, "Complex values"): view_as_real /
// view_as_complex (the layout itself), real, imag, abs, angle, conj, polar, complex, and arithmetic
// with complex or mixed operands. Shape and indexing ops (slice, select, reshape, permute, cat,
// flip, roll, fftshift ...) and products with a real operand act on the two parts alike: they run
// the op's own real converter once per part (`perPart`) and pair the results, so the pair axis
// stays last whatever the op does to the leading axes.
#include <cmath>
#include <vector>

#include "convert/args.h"
#include "convert/complex_pair.h"
#include "convert/registry.h"
#include "convert/util.h"

namespace oxport::convert {

std::string pairPart(Context& ctx, const std::string& pair, int rank, int k) {
  return ctx.emit1("Gather", {pair, ctx.constInt64s({k}, true)}, {attrInt("axis", rank)});
}

std::string makePair(Context& ctx, const std::string& re, const std::string& im) {
  return ctx.emit1("Concat", {ctx.unsqueeze(re, {-1}), ctx.unsqueeze(im, {-1})}, {attrInt("axis", -1)});
}

std::string makePair(Context& ctx, const std::string& re, const std::string& im, int rank) {
  return ctx.emit1("Concat", {ctx.unsqueeze(re, {rank}), ctx.unsqueeze(im, {rank})}, {attrInt("axis", rank)});
}

namespace {

struct Parts {
  std::string re, im;
};

Result<Parts> partsOf(Context& ctx, const Value* v) {
  OXPORT_ASSIGN(std::string x, ctx.tensor(v));
  if (v->meta.complex) return Parts{pairPart(ctx, x, v->meta.rank(), 0), pairPart(ctx, x, v->meta.rank(), 1)};
  const DType dt = ctx.current() ? ctx.current()->output(0)->meta.dtype : DType::Float32;
  OXPORT_ASSIGN(x, ctx.tensorOfType(v, dt));
  return Parts{x, std::string()};  // a real operand: no imaginary part
}

// The node's real converter run on each part of its complex inputs (real inputs as they are).
Status perPart(Context& ctx, const Node& n) {
  const OpEntry* real = builtinRegistry().find(n.kind, ctx.opset(), false);
  if (!real) return ctx.error("complex-value", "complex values reach " + n.kind + ", which has no conversion here");
  struct Saved {
    const Value* v;
    bool list;
    std::vector<std::string> names;
  };
  std::vector<Saved> saved;
  for (const Value* in : n.inputs) {
    const bool list = in->type == ts::ValueType::List;
    bool cplx = in->meta.complex;
    for (const auto& m : in->elem_meta) cplx = cplx || m.complex;
    if (!cplx) continue;
    Saved s{in, list, {}};
    if (list) {
      OXPORT_ASSIGN(s.names, ctx.tensorList(in));
      // Converters read a list through its elements where they can: rebind those too.
      if (auto elems = ctx.listElements(in); elems.ok())
        for (const Value* e : *elems) {
          if (!e->meta.complex) continue;
          OXPORT_ASSIGN(std::string x, ctx.tensor(e));
          saved.push_back(Saved{e, false, {x}});
        }
    } else {
      OXPORT_ASSIGN(std::string x, ctx.tensor(in));
      s.names = {x};
    }
    saved.push_back(std::move(s));
  }
  std::vector<std::vector<std::string>> outs(2);
  for (int k = 0; k < 2; ++k) {
    for (const auto& s : saved) {
      if (!s.list) {
        ctx.bind(s.v, pairPart(ctx, s.names[0], s.v->meta.rank(), k));
        continue;
      }
      std::vector<std::string> parts;
      for (size_t i = 0; i < s.names.size(); ++i) {
        const int r = i < s.v->elem_meta.size() ? s.v->elem_meta[i].rank() : s.v->elem_meta.front().rank();
        parts.push_back(pairPart(ctx, s.names[i], r, k));
      }
      ctx.bindList(s.v, parts);
    }
    OXPORT_TRY(real->fn(ctx, n));
    ctx.setCurrent(&n);
    const Value* o = n.output(0);
    if (o->type == ts::ValueType::List) {
      OXPORT_ASSIGN(outs[static_cast<size_t>(k)], ctx.tensorList(o));
    } else {
      auto name = ctx.boundName(o);
      if (!name) return ctx.error("internal", n.kind + " bound no result");
      outs[static_cast<size_t>(k)] = {*name};
    }
  }
  for (const auto& s : saved) {
    if (s.list) ctx.bindList(s.v, s.names);
    else ctx.bind(s.v, s.names[0]);
  }
  std::vector<std::string> pairs;
  const Value* o = n.output(0);
  for (size_t i = 0; i < outs[0].size(); ++i) {
    const int r = o->type != ts::ValueType::List ? o->meta.rank()
                  : i < o->elem_meta.size()     ? o->elem_meta[i].rank()
                  : o->elem_meta.empty()        ? -1
                                                : o->elem_meta.front().rank();
    pairs.push_back(r < 0 ? makePair(ctx, outs[0][i], outs[1][i]) : makePair(ctx, outs[0][i], outs[1][i], r));
  }
  if (n.output(0)->type == ts::ValueType::List) {
    ctx.bindList(n.output(0), pairs);
    return okStatus();
  }
  return bindOut(ctx, n, pairs.front());
}

// The node's real converter with each complex tensor input bound to its real part (same PyTorch
// shape), the results left as that converter binds them.
Status onRealParts(Context& ctx, const Node& n) {
  const OpEntry* real = builtinRegistry().find(n.kind, ctx.opset(), false);
  if (!real) return ctx.error("complex-value", "complex values reach " + n.kind + ", which has no conversion here");
  std::vector<std::pair<const Value*, std::string>> saved;
  for (const Value* in : n.inputs) {
    if (!in->meta.complex || in->type != ts::ValueType::Tensor) continue;
    OXPORT_ASSIGN(std::string x, ctx.tensor(in));
    saved.emplace_back(in, x);
    ctx.bind(in, pairPart(ctx, x, in->meta.rank(), 0));
  }
  Status s = real->fn(ctx, n);
  ctx.setCurrent(&n);
  for (const auto& [v, x] : saved) ctx.bind(v, x);
  return s;
}

// What reads only a complex tensor's shape (size, dim, numel): the real part's answer.
Status convertShapeOfComplex(Context& ctx, const Node& n) { return onRealParts(ctx, n); }

// Creation with a complex dtype (torch.zeros(b, c, h, w, dtype=torch.cfloat), FNO's spectrum
// buffer; ones_like/full_like of a complex tensor): the real converter's tensor is the real part
// and the imaginary part is zero.
Status convertComplexCreation(Context& ctx, const Node& n) {
  OXPORT_TRY(onRealParts(ctx, n));
  auto re = ctx.boundName(n.output(0));
  if (!re) return ctx.error("internal", n.kind + " bound no result");
  const std::string im = ctx.emit1("Mul", {*re, ctx.constScalar(0.0, n.output(0)->meta.dtype)});
  return bindOut(ctx, n, makePair(ctx, *re, im, n.output(0)->meta.rank()));
}

// A product linear in each of two complex operands (matmul, bmm, mm, einsum of two, FNO's
// mode mixing `einsum("bixy,ioxy->boxy", x_ft, w)`): re = f(a.re, b.re) - f(a.im, b.im),
// im = f(a.re, b.im) + f(a.im, b.re), each f the real converter. With one operand real it is
// linear in the other: per part.
Status convertBilinear(Context& ctx, const Node& n) {
  // The complex operands: tensor inputs, or the elements of a tensor list (einsum's).
  struct Slot {
    const Value* v;
    std::string x;
    std::string part[2];  // re, im: taken once, read by the four products
  };
  std::vector<Slot> slots;
  const Value* list = nullptr;
  std::vector<std::string> list_names;
  for (const Value* in : n.inputs) {
    if (in->type == ts::ValueType::List) {
      bool cplx = false;
      for (const auto& m : in->elem_meta) cplx = cplx || m.complex;
      if (!cplx) continue;
      OXPORT_ASSIGN(auto elems, ctx.listElements(in));
      OXPORT_ASSIGN(list_names, ctx.tensorList(in));
      list = in;
      for (const Value* e : elems)
        if (e->meta.complex) {
          OXPORT_ASSIGN(std::string x, ctx.tensor(e));
          slots.push_back({e, x, {}});
        }
    } else if (in->meta.complex) {
      OXPORT_ASSIGN(std::string x, ctx.tensor(in));
      slots.push_back({in, x, {}});
    }
  }
  if (slots.size() < 2) return perPart(ctx, n);
  if (slots.size() > 2) return ctx.error("complex-value", n.kind + " of more than two complex operands");
  for (auto& sl : slots)
    for (int k = 0; k < 2; ++k) sl.part[k] = pairPart(ctx, sl.x, sl.v->meta.rank(), k);
  const OpEntry* real = builtinRegistry().find(n.kind, ctx.opset(), false);
  if (!real) return ctx.error("complex-value", "complex values reach " + n.kind + ", which has no conversion here");
  auto eval = [&](int pa, int pb) -> Result<std::string> {
    const int parts[2] = {pa, pb};
    std::vector<std::string> names = list_names;
    for (size_t i = 0; i < 2; ++i) {
      const std::string& part = slots[i].part[parts[i]];
      ctx.bind(slots[i].v, part);
      for (size_t k = 0; k < names.size(); ++k)
        if (names[k] == slots[i].x) names[k] = part;
    }
    if (list) ctx.bindList(list, names);
    Status s = real->fn(ctx, n);
    ctx.setCurrent(&n);
    for (const auto& sl : slots) ctx.bind(sl.v, sl.x);
    if (list) ctx.bindList(list, list_names);
    OXPORT_TRY(s);
    auto out = ctx.boundName(n.output(0));
    if (!out) return ctx.error("internal", n.kind + " bound no result");
    return *out;
  };
  OXPORT_ASSIGN(std::string rr, eval(0, 0));
  OXPORT_ASSIGN(std::string ii, eval(1, 1));
  OXPORT_ASSIGN(std::string ri, eval(0, 1));
  OXPORT_ASSIGN(std::string ir, eval(1, 0));
  return bindOut(ctx, n, makePair(ctx, ctx.emit1("Sub", {rr, ii}), ctx.emit1("Add", {ri, ir}), n.output(0)->meta.rank()));
}

const Value* firstOperand(const Args& args) { return args.in({"self", "a"}, 0); }
const Value* secondOperand(const Args& args) { return args.in({"other", "b"}, 1); }

// mul: complex x complex as (ac - bd, ad + bc); with a real operand, per part.
Status convertMul(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* a = firstOperand(args);
  const Value* b = secondOperand(args);
  if (!a->meta.complex || !b->meta.complex) return perPart(ctx, n);
  OXPORT_ASSIGN(Parts x, partsOf(ctx, a));
  OXPORT_ASSIGN(Parts y, partsOf(ctx, b));
  std::string re = ctx.emit1("Sub", {ctx.emit1("Mul", {x.re, y.re}), ctx.emit1("Mul", {x.im, y.im})});
  std::string im = ctx.emit1("Add", {ctx.emit1("Mul", {x.re, y.im}), ctx.emit1("Mul", {x.im, y.re})});
  return bindOut(ctx, n, makePair(ctx, re, im, n.output(0)->meta.rank()));
}

// div: complex / real per part; by a complex divisor, a * conj(b) / |b|^2.
Status convertDiv(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const Value* a = firstOperand(args);
  const Value* b = secondOperand(args);
  if (!b->meta.complex) return perPart(ctx, n);
  if (args.has("rounding_mode")) return ctx.error("unsupported-form", n.kind + " of complex values with rounding_mode");
  OXPORT_ASSIGN(Parts x, partsOf(ctx, a));
  OXPORT_ASSIGN(Parts y, partsOf(ctx, b));
  std::string den = ctx.emit1("Add", {ctx.emit1("Mul", {y.re, y.re}), ctx.emit1("Mul", {y.im, y.im})});
  std::string re = ctx.emit1("Mul", {x.re, y.re});
  std::string im = ctx.emit1("Neg", {ctx.emit1("Mul", {x.re, y.im})});
  if (!x.im.empty()) {
    re = ctx.emit1("Add", {re, ctx.emit1("Mul", {x.im, y.im})});
    im = ctx.emit1("Add", {im, ctx.emit1("Mul", {x.im, y.re})});
  }
  return bindOut(ctx, n, makePair(ctx, ctx.emit1("Div", {re, den}), ctx.emit1("Div", {im, den}), n.output(0)->meta.rank()));
}

// add/sub (alpha 1): both complex per part; a real operand adds to the real part only.
Status convertAddSub(Context& ctx, const Node& n, const std::string& op) {
  const Args args(ctx, n);
  const Value* a = firstOperand(args);
  const Value* b = secondOperand(args);
  if (a->meta.complex && b->meta.complex) return perPart(ctx, n);
  if (args.has("alpha")) {
    OXPORT_ASSIGN(double alpha, args.constDouble("alpha", 2));
    if (alpha != 1.0) return ctx.error("unsupported-form", n.kind + " of a complex and a real value with alpha != 1");
  }
  OXPORT_ASSIGN(Parts x, partsOf(ctx, a));
  OXPORT_ASSIGN(Parts y, partsOf(ctx, b));
  std::string re = ctx.emit1(op, {x.re, y.re});
  std::string im;
  if (x.im.empty()) im = op == "Sub" ? ctx.emit1("Neg", {y.im}) : y.im;
  else im = x.im;
  // Broadcast the imaginary part to the result's shape (the real operand may be larger).
  im = ctx.emit1("Add", {im, ctx.emit1("Mul", {re, ctx.constScalar(0, n.output(0)->meta.dtype)})});
  return bindOut(ctx, n, makePair(ctx, re, im, n.output(0)->meta.rank()));
}

Status convertViewAsReal(Context& ctx, const Node& n) {  // the layout itself: nothing to do
  const Args args(ctx, n);
  OXPORT_ASSIGN(std::string x, ctx.tensor(args.in("self", 0)));
  return bindOut(ctx, n, x);
}

Status convertPart(Context& ctx, const Node& n, int k) {
  const Args args(ctx, n);
  const Value* self = args.in("self", 0);
  OXPORT_ASSIGN(std::string x, ctx.tensor(self));
  return bindOut(ctx, n, pairPart(ctx, x, self->meta.rank(), k));
}

Status convertAbs(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(Parts x, partsOf(ctx, args.in("self", 0)));
  return bindOut(ctx, n, ctx.emit1("Sqrt", {ctx.emit1("Add", {ctx.emit1("Mul", {x.re, x.re}), ctx.emit1("Mul", {x.im, x.im})})}));
}

// angle: atan2(im, re) from Atan and the quadrant (angle(0) = 0, as torch).
Status convertAngle(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(Parts x, partsOf(ctx, args.in("self", 0)));
  const DType dt = n.output(0)->meta.dtype;
  auto c = [&](double v) { return ctx.constScalar(v, dt); };
  const std::string zero = c(0);
  // re == 0 as neither < nor > (Equal takes floats from opset 11 only).
  std::string re_zero = ctx.emit1("Not", {ctx.emit1("Or", {ctx.emit1("Less", {x.re, zero}), ctx.emit1("Greater", {x.re, zero})})});
  std::string safe_re = ctx.emit1("Where", {re_zero, c(1), x.re});
  std::string a = ctx.emit1("Atan", {ctx.emit1("Div", {x.im, safe_re})});
  std::string im_neg = ctx.emit1("Less", {x.im, zero});
  std::string pi = ctx.emit1("Where", {im_neg, c(-M_PI), c(M_PI)});
  a = ctx.emit1("Where", {ctx.emit1("Less", {x.re, zero}), ctx.emit1("Add", {a, pi}), a});
  std::string axis = ctx.emit1("Where", {im_neg, c(-M_PI / 2), ctx.emit1("Where", {ctx.emit1("Greater", {x.im, zero}), c(M_PI / 2), zero})});
  return bindOut(ctx, n, ctx.emit1("Where", {re_zero, axis, a}));
}

Status convertConj(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  OXPORT_ASSIGN(Parts x, partsOf(ctx, args.in("self", 0)));
  return bindOut(ctx, n, makePair(ctx, x.re, ctx.emit1("Neg", {x.im}), n.output(0)->meta.rank()));
}

// polar(abs, angle) and complex(real, imag): real tensors paired (broadcast to one shape).
Status convertMakeComplex(Context& ctx, const Node& n, bool polar) {
  const Args args(ctx, n);
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(std::string a, ctx.tensorOfType(args.in({"abs", "real"}, 0), dt));
  OXPORT_ASSIGN(std::string b, ctx.tensorOfType(args.in({"angle", "imag"}, 1), dt));
  std::string re = a, im = b;
  if (polar) {
    re = ctx.emit1("Mul", {a, ctx.emit1("Cos", {b})});
    im = ctx.emit1("Mul", {a, ctx.emit1("Sin", {b})});
  } else {
    std::string zero = ctx.constScalar(0, dt);
    re = ctx.emit1("Add", {re, ctx.emit1("Mul", {b, zero})});
    im = ctx.emit1("Add", {im, ctx.emit1("Mul", {a, zero})});
  }
  return bindOut(ctx, n, makePair(ctx, re, im, n.output(0)->meta.rank()));
}

// real / angle of a real tensor: itself; pi where negative, 0 elsewhere (NaN stays NaN).
Status convertRealOfReal(Context& ctx, const Node& n) { return convertViewAsReal(ctx, n); }
Status convertAngleOfReal(Context& ctx, const Node& n) {
  const Args args(ctx, n);
  const DType dt = n.output(0)->meta.dtype;
  OXPORT_ASSIGN(std::string x, ctx.tensorOfType(args.in("self", 0), dt));
  const std::string zero = ctx.constScalar(0, dt);
  std::string rest = ctx.emit1("Where", {ctx.emit1("IsNaN", {x}), x, zero});
  return bindOut(ctx, n, ctx.emit1("Where", {ctx.emit1("Less", {x, zero}), ctx.constScalar(M_PI, dt), rest}));
}

}  // namespace

void registerComplexOps(Registry& r) {
  r.addComplex("aten::view_as_real", convertViewAsReal);
  r.addComplex("aten::view_as_complex", convertViewAsReal);
  r.addComplex("aten::real", [](Context& ctx, const Node& n) { return convertPart(ctx, n, 0); });
  r.addComplex("aten::imag", [](Context& ctx, const Node& n) { return convertPart(ctx, n, 1); });
  r.addComplex("aten::abs", convertAbs);
  r.add("aten::real", convertRealOfReal);
  r.add("aten::angle", convertAngleOfReal);
  r.addComplex("aten::angle", convertAngle);
  for (const char* k : {"aten::conj", "aten::_conj", "aten::conj_physical"}) r.addComplex(k, convertConj);
  // The pair layout holds the conjugation (or negation) already made: resolving it is nothing.
  for (const char* k : {"aten::resolve_conj", "aten::resolve_neg"}) r.addComplex(k, convertViewAsReal);
  r.addComplex("aten::polar", [](Context& ctx, const Node& n) { return convertMakeComplex(ctx, n, true); });
  r.addComplex("aten::complex", [](Context& ctx, const Node& n) { return convertMakeComplex(ctx, n, false); });
  for (const char* k : {"aten::mul", "aten::mul_"}) r.addComplex(k, convertMul);
  for (const char* k : {"aten::div", "aten::div_", "aten::true_divide"}) r.addComplex(k, convertDiv);
  for (const char* k : {"aten::add", "aten::add_"})
    r.addComplex(k, [](Context& ctx, const Node& n) { return convertAddSub(ctx, n, "Add"); });
  for (const char* k : {"aten::sub", "aten::sub_"})
    r.addComplex(k, [](Context& ctx, const Node& n) { return convertAddSub(ctx, n, "Sub"); });
  for (const char* k : {"aten::matmul", "aten::bmm", "aten::mm", "aten::einsum", "aten::mv", "aten::dot"})
    r.addComplex(k, convertBilinear);
  for (const char* k : {"aten::size", "aten::dim", "aten::numel", "aten::sym_size", "aten::_shape_as_tensor"})
    r.addComplex(k, convertShapeOfComplex);
  for (const char* k : {"aten::zeros", "aten::ones", "aten::full", "aten::empty", "aten::new_zeros", "aten::new_ones",
                        "aten::new_full", "aten::new_empty", "aten::ones_like", "aten::full_like", "aten::empty_like"})
    r.addComplex(k, convertComplexCreation);
  // Ops that act on the leading axes (or multiply by a real value) alike for both parts.
  for (const char* k :
       {"aten::slice", "aten::select", "aten::narrow", "aten::index", "aten::index_select", "aten::gather",
        "aten::view", "aten::reshape", "aten::flatten", "aten::unflatten", "aten::permute", "aten::transpose",
        "aten::t", "aten::unsqueeze", "aten::squeeze", "aten::cat", "aten::stack", "aten::flip", "aten::roll",
        "aten::expand", "aten::expand_as", "aten::repeat", "aten::contiguous", "aten::clone", "aten::detach",
        "aten::fft_fftshift", "aten::fft_ifftshift", "aten::split", "aten::chunk", "aten::unbind",
        "aten::constant_pad_nd", "aten::pad", "aten::neg", "aten::sum", "aten::mean", "aten::slice_scatter", "aten::select_scatter", "aten::zeros_like",
        "aten::type_as"})
    r.addComplex(k, perPart);
}

}  // namespace oxport::convert
