// forward's example arguments from the export options: tensors made from their specs or read
// from .npy, numbers, lists and tuples typed by the schema, kwargs, defaults (buildExampleArgs).
#include <unistd.h>

#include <algorithm>
#include <sstream>

#include "frontend/frontend.h"
#include "oxport/npy.h"
#include "oxport/preset.h"
#include "pipeline/model_impl.h"

namespace oxport {

namespace jit = torch::jit;

// "smooth": a low-frequency random field in [0, 1] over the last two axes (the last one of a 1-D
// tensor; each slice of the leading axes its own field): five octaves of value noise, seeded
// uniform grids of 3, 5, 9, 17 and 33 points per axis drawn in that order (float32, as "rand"),
// each interpolated bicubically (align_corners) over the whole axis, with amplitudes 1, 1/2, ...
// 1/16, summed in float64 and stretched to [0, 1] per slice. The grids span the axis whatever its
// length, so every size shows the same picture at its own resolution: verification at another
// size of a dynamic axis sees the same blobs and edges, resampled. Deterministic per (seed, shape).
// tests/zoo/gen_zoo.py's make_tensor reproduces it with the same torch ops.
static at::Tensor smoothField(const std::vector<int64_t>& shape, at::Generator& gen) {
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  if (shape.empty()) return at::rand({}, gen, f32);
  int64_t lead = 1, numel = 1;
  for (size_t i = 0; i + 2 < shape.size(); ++i) lead *= shape[i];
  for (auto d : shape) numel *= d;
  if (numel == 0) return at::zeros(shape, f32);
  const int64_t h = shape.size() >= 2 ? shape[shape.size() - 2] : 1, w = shape.back();
  at::Tensor sum = at::zeros({lead, 1, h, w}, at::TensorOptions().dtype(at::kDouble));
  double amplitude = 1.0;
  for (int64_t points : {3, 5, 9, 17, 33}) {
    at::Tensor grid = at::rand({lead, 1, points, points}, gen, f32).to(at::kDouble);
    sum.add_(at::upsample_bicubic2d(grid, {h, w}, /*align_corners=*/true), amplitude);
    amplitude /= 2;
  }
  const at::Tensor lo = sum.amin({2, 3}, /*keepdim=*/true), hi = sum.amax({2, 3}, /*keepdim=*/true);
  // A slice of one element (or a constant one) has nothing to stretch: its value stays in [0, 1].
  const at::Tensor flat = (hi - lo) <= 0;
  const at::Tensor field =
      at::where(flat, (sum / (2.0 - 1.0 / 16)).clamp(0, 1), (sum - lo) / at::where(flat, at::ones_like(hi), hi - lo));
  return field.to(at::kFloat).reshape(shape);
}

static c10::IValue makeTensor(const TensorSpec& spec) {
  auto opts = at::TensorOptions().dtype(scalarTypeFromDType(spec.dtype));
  auto gen = at::make_generator<at::CPUGeneratorImpl>(spec.seed);
  at::Tensor t;
  switch (spec.fill) {
    case FillKind::Smooth: {
      const at::Tensor field = smoothField(spec.shape, gen);
      t = spec.dtype == DType::Bool ? field > 0.5 : field.to(opts.dtype());
      break;
    }
    case FillKind::Randn:
      t = at::randn(spec.shape, gen, at::TensorOptions().dtype(at::kFloat)).to(opts.dtype());
      break;
    case FillKind::Rand:
      t = at::rand(spec.shape, gen, at::TensorOptions().dtype(at::kFloat)).to(opts.dtype());
      break;
    case FillKind::Zeros: t = at::zeros(spec.shape, opts); break;
    case FillKind::Ones: t = at::ones(spec.shape, opts); break;
    case FillKind::Arange: {
      int64_t n = 1;
      for (auto d : spec.shape) n *= d;
      t = at::arange(n, at::TensorOptions().dtype(at::kDouble)).to(opts.dtype()).reshape(spec.shape);
      break;
    }
    case FillKind::Npy: break;  // handled by the caller
  }
  if (spec.dtype == DType::Bool && (spec.fill == FillKind::Randn || spec.fill == FillKind::Rand))
    t = at::rand(spec.shape, gen) > 0.5;
  return t;
}

// An example tensor that cannot fit in this machine's memory is refused before libtorch tries to
// allocate it (which would fail with a C++ backtrace, or take the machine into swap).
static Status checkExampleSize(const TensorSpec& spec, const std::string& where) {
  // randn/rand fill float32 first, then convert: at least 4 bytes an element while it is made.
  const uint64_t elem = std::max<uint64_t>(4, dtypeSize(spec.dtype));
  uint64_t bytes = elem;
  bool overflow = false;
  for (auto d : spec.shape) overflow = overflow || __builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes);
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  const uint64_t memory = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
  if (!overflow && (memory == 0 || bytes <= memory / 2)) return okStatus();
  auto gib = [](uint64_t b) {
    std::ostringstream os;
    os.precision(3);
    os << static_cast<double>(b) / double(uint64_t(1) << 30) << " GiB";
    return os.str();
  };
  Diagnostic diag = makeError("example-input-too-large",
                              where + ": the example tensor " + formatTensorSpec(spec) + " would need " +
                                  (overflow ? std::string("more bytes than a 64-bit size can count") : gib(bytes)) +
                                  ", more than half of this machine's " + gib(memory) + " of memory",
                              "export at a small example size and mark the axes that vary as dynamic_axes; the ONNX "
                              "file then accepts any size");
  diag.option = where;
  return Error(diag);
}

static Result<c10::IValue> argToIValue(const ArgValue& a, const c10::TypePtr& type,
                                       const std::string& where, std::vector<std::vector<int64_t>>::const_iterator& shape_it,
                                       std::vector<std::vector<int64_t>>::const_iterator shape_end) {
  using T = ArgValue;
  if (a.isNone()) return c10::IValue();
  if (auto b = std::get_if<bool>(&a.v)) return c10::IValue(*b);
  if (auto i = std::get_if<int64_t>(&a.v)) {
    if (type && type->kind() == c10::TypeKind::FloatType) return c10::IValue(static_cast<double>(*i));
    return c10::IValue(*i);
  }
  if (auto d = std::get_if<double>(&a.v)) return c10::IValue(*d);
  if (auto s = std::get_if<std::string>(&a.v)) return c10::IValue(*s);
  if (auto ts = std::get_if<TensorSpec>(&a.v)) {
    TensorSpec spec = *ts;
    if (spec.fill == FillKind::Npy) {
      auto r = readNpy(spec.npy);
      if (!r.ok()) {
        Error e = r.error();
        for (auto& d : e.diagnostics()) d.option = where;
        return e;
      }
      if (shape_it != shape_end) {
        // Another size (verification at other sizes of the dynamic axes): the file's values are
        // repeated (or cut) along each axis that changed, so they stay what the file holds
        // (indices in range, valid boxes, masks of 0 and 1); keeping the file's tensor would run
        // every size at the example size. An axis that is empty in the file has nothing to
        // repeat: a tensor of the file's dtype is made at that size (randn, seed 0).
        const std::vector<int64_t> shape = *shape_it++;
        if (shape != r->shape) {
          TensorSpec sized;
          sized.shape = shape;
          sized.dtype = r->dtype;
          OXPORT_TRY(checkExampleSize(sized, where));
          if (shape.size() != r->shape.size() || r->numel() == 0) return makeTensor(sized);
          at::Tensor t = atFromHostTensor(*r);
          for (size_t k = 0; k < shape.size(); ++k) {
            const int64_t have = t.size(static_cast<int64_t>(k)), want = shape[k];
            if (want > have) {
              std::vector<int64_t> reps(shape.size(), 1);
              reps[k] = (want + have - 1) / have;
              t = t.repeat(reps);
            }
            t = t.narrow(static_cast<int64_t>(k), 0, want);
          }
          return c10::IValue(t.contiguous());
        }
      }
      return c10::IValue(atFromHostTensor(*r));
    }
    if (shape_it != shape_end) spec.shape = *shape_it++;
    for (auto d : spec.shape)
      if (d < 0) {
        Diagnostic diag = makeError("bad-shape", where + ": dimension " + std::to_string(d) + " is negative",
                                    "give every dimension a size of 0 or more");
        diag.option = where;
        return Error(diag);
      }
    OXPORT_TRY(checkExampleSize(spec, where));
    try {
      return makeTensor(spec);
    } catch (const std::exception& e) {
      Diagnostic diag = makeError("example-input-failed",
                                  where + ": making the example tensor " + formatTensorSpec(spec) + " failed: " +
                                      torchErrorMessage(e),
                                  "give a smaller shape or another dtype");
      diag.option = where;
      return Error(diag);
    }
  }
  const auto& list = std::get<T::List>(a.v);
  c10::TypePtr elem;
  bool tuple = false;
  if (type) {
    auto t = type;
    if (auto opt = t->cast<c10::OptionalType>()) t = opt->getElementType();
    if (auto lt = t->cast<c10::ListType>()) elem = lt->getElementType();
    if (t->cast<c10::TupleType>()) tuple = true;
  }
  std::vector<c10::IValue> items;
  for (size_t i = 0; i < list.size(); ++i) {
    c10::TypePtr et = elem;
    if (tuple) {
      auto tt = type->cast<c10::TupleType>();
      if (!tt) tt = type->cast<c10::OptionalType>()->getElementType()->cast<c10::TupleType>();
      if (i < tt->elements().size()) et = tt->elements()[i];
    }
    auto r = argToIValue(list[i], et, where + "[" + std::to_string(i) + "]", shape_it, shape_end);
    if (!r.ok()) return r.error();
    items.push_back(std::move(*r));
  }
  if (tuple) return c10::IValue(c10::ivalue::Tuple::create(std::move(items)));
  if (!elem) {
    // Infer the list type from the items.
    if (!items.empty() && items[0].isTensor()) elem = c10::TensorType::get();
    else if (!items.empty() && items[0].isDouble()) elem = c10::FloatType::get();
    else if (!items.empty() && items[0].isBool()) elem = c10::BoolType::get();
    else elem = c10::IntType::get();
  }
  c10::impl::GenericList gl(elem);
  for (auto& it : items) {
    if (elem->kind() == c10::TypeKind::FloatType && it.isInt()) gl.push_back(static_cast<double>(it.toInt()));
    else gl.push_back(std::move(it));
  }
  return c10::IValue(gl);
}

static std::string argListText(const c10::FunctionSchema& s) {
  std::string out;
  for (size_t i = 1; i < s.arguments().size(); ++i) {
    const auto& a = s.arguments()[i];
    out += (out.empty() ? "" : ", ") + a.name() + ": " + a.type()->annotation_str();
  }
  return out.empty() ? "(none)" : out;
}

Result<ExampleArgs> buildExampleArgs(const jit::Module& module, const ExportOptions& options,
                                     const std::vector<std::vector<int64_t>>& shapes) {
  auto method = module.find_method("forward");
  if (!method) return Error("no-forward", "the model has no forward() method", "save a module with a forward method");
  const c10::FunctionSchema& schema = method->function().getSchema();
  const auto& sargs = schema.arguments();
  size_t nparams = sargs.size() - 1;  // without self
  if (options.args.size() > nparams) {
    Diagnostic d = makeError("too-many-args",
                             "args has " + std::to_string(options.args.size()) + " positional arguments but forward() takes " +
                                 std::to_string(nparams) + ": " + argListText(schema),
                             "remove the extra arguments from args");
    d.option = "args";
    return Error(d);
  }
  ExampleArgs out;
  std::vector<bool> given(nparams, false);
  std::vector<c10::IValue> values(nparams);
  auto shape_it = shapes.cbegin();
  std::vector<Diagnostic> errors;
  for (size_t i = 0; i < options.args.size(); ++i) {
    // Given, even when its value is refused: one error for it, not a second "missing-arg".
    given[i] = true;
    auto r = argToIValue(options.args[i], sargs[i + 1].type(), "args[" + std::to_string(i) + "]", shape_it, shapes.cend());
    if (!r.ok()) { for (auto& d : r.error().diagnostics()) errors.push_back(d); continue; }
    values[i] = std::move(*r);
  }
  for (const auto& [name, arg] : options.kwargs) {
    size_t idx = nparams;
    for (size_t i = 0; i < nparams; ++i)
      if (sargs[i + 1].name() == name) idx = i;
    if (idx == nparams) {
      Diagnostic d = makeError("unknown-kwarg", "kwargs names '" + name + "', which is not an argument of forward(" +
                                                    argListText(schema) + ")",
                               "use one of forward's argument names");
      d.option = "kwargs." + name;
      errors.push_back(d);
      continue;
    }
    if (given[idx]) {
      Diagnostic d = makeError("duplicate-arg", "argument '" + name + "' is given both in args and in kwargs",
                               "give it only once");
      d.option = "kwargs." + name;
      errors.push_back(d);
      continue;
    }
    given[idx] = true;
    auto r = argToIValue(arg, sargs[idx + 1].type(), "kwargs." + name, shape_it, shapes.cend());
    if (!r.ok()) { for (auto& d : r.error().diagnostics()) errors.push_back(d); continue; }
    values[idx] = std::move(*r);
  }
  for (size_t i = 0; i < nparams; ++i) {
    if (given[i]) continue;
    const auto& a = sargs[i + 1];
    if (a.default_value()) {
      values[i] = *a.default_value();
    } else if (a.type()->kind() == c10::TypeKind::OptionalType || a.type()->kind() == c10::TypeKind::NoneType) {
      values[i] = c10::IValue();
    } else {
      Diagnostic d = makeError("missing-arg",
                               "forward() argument '" + a.name() + "' (" + a.type()->annotation_str() +
                                   ") has no value: it is not in args or kwargs and has no default",
                               "add it to args (position " + std::to_string(i) + ") or to kwargs as \"" + a.name() + "\"");
      d.option = "args";
      errors.push_back(d);
    }
  }
  if (!errors.empty()) return Error(errors);
  for (size_t i = 0; i < nparams; ++i) {
    out.values.push_back(values[i]);
    out.names.push_back(sargs[i + 1].name());
  }
  return out;
}

Result<HostTensor> makeExampleTensor(const TensorSpec& spec) {
  const std::vector<std::vector<int64_t>> none;
  auto it = none.cbegin();
  auto r = argToIValue(ArgValue::tensor(spec), nullptr, "tensor", it, none.cend());
  if (!r.ok()) return r.error();
  return hostTensorFromAt(r->toTensor().contiguous());
}

}  // namespace oxport
