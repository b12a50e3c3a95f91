#include "frontend/frontend.h"

#include <unistd.h>

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/lower_tuples.h>
#include <torch/csrc/jit/passes/remove_mutation.h>

#include <cstdlib>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "pipeline/model_impl.h"
#include "frontend/pass_export_constants.h"
#include "frontend/pass_list_mutation.h"
#include "frontend/pass_nested_tensor.h"
#include "frontend/pass_view_writes.h"
#include "frontend/weight_views.h"
#include "frontend/shape_asserts.h"

namespace oxport {

namespace jit = torch::jit;

DType dtypeFromScalarType(c10::ScalarType s, bool* ok) {
  if (ok) *ok = true;
  switch (s) {
    case c10::kFloat: return DType::Float32;
    case c10::kDouble: return DType::Float64;
    case c10::kHalf: return DType::Float16;
    case c10::kBFloat16: return DType::BFloat16;
    case c10::kChar: return DType::Int8;
    case c10::kByte: return DType::UInt8;
    case c10::kShort: return DType::Int16;
    case c10::kInt: return DType::Int32;
    case c10::kLong: return DType::Int64;
    case c10::kBool: return DType::Bool;
    default:
      if (ok) *ok = false;
      return DType::Float32;
  }
}

c10::ScalarType scalarTypeFromDType(DType d) {
  switch (d) {
    case DType::Float32: return c10::kFloat;
    case DType::Float64: return c10::kDouble;
    case DType::Float16: return c10::kHalf;
    case DType::BFloat16: return c10::kBFloat16;
    case DType::Int8: return c10::kChar;
    case DType::UInt8: return c10::kByte;
    case DType::Int16: return c10::kShort;
    case DType::Int32: return c10::kInt;
    case DType::Int64: return c10::kLong;
    case DType::Bool: return c10::kBool;
  }
  return c10::kFloat;
}

c10::IValue mapTensors(const c10::IValue& v, const std::function<at::Tensor(const at::Tensor&)>& fn) {
  if (v.isTensor()) return fn(v.toTensor());
  if (v.isList()) {  // tensor lists too: a GenericList whose element type is Tensor
    const auto& l = v.toList();
    c10::impl::GenericList out(l.elementType());
    out.reserve(l.size());
    for (const auto& e : v.toListRef()) out.push_back(mapTensors(e, fn));
    return out;
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> items;
    for (const auto& e : v.toTupleRef().elements()) items.push_back(mapTensors(e, fn));
    return c10::ivalue::Tuple::create(std::move(items));
  }
  if (v.isGenericDict()) {
    const auto& d = v.toGenericDict();
    c10::impl::GenericDict out(d.keyType(), d.valueType());
    for (const auto& e : d) out.insert(e.key(), mapTensors(e.value(), fn));
    return out;
  }
  return v;
}

HostTensor hostTensorFromAt(const at::Tensor& t0) {
  // A meta tensor (the example run's shapes-only values) has no data: it must never become one.
  if (t0.is_meta()) throw std::logic_error("internal: a meta tensor of the example run was read as a value");
  at::Tensor t = t0.detach();
  if (t.is_quantized()) t = t.dequantize();
  if (!t.is_contiguous()) t = t.contiguous();
  HostTensor h;
  h.dtype = dtypeFromScalarType(t.scalar_type());
  h.shape = t.sizes().vec();
  auto owner = std::make_shared<at::Tensor>(t);
  h.data = owner->data_ptr();
  h.nbytes = static_cast<size_t>(owner->numel()) * owner->element_size();
  h.holder = std::shared_ptr<const void>(owner, owner.get());
  return h;
}

at::Tensor atFromHostTensor(const HostTensor& t) {
  auto opts = at::TensorOptions().dtype(scalarTypeFromDType(t.dtype));
  at::Tensor out = at::empty(t.shape, opts);
  if (t.nbytes) std::memcpy(out.data_ptr(), t.data, t.nbytes);
  return out;
}

ts::Constant constantFromIValue(const c10::IValue& v, bool* ok) {
  *ok = true;
  ts::Constant c;
  if (v.isNone()) return c;
  if (v.isBool()) { c.v = v.toBool(); return c; }
  if (v.isInt()) { c.v = v.toInt(); return c; }
  if (v.isDouble()) { c.v = v.toDouble(); return c; }
  if (v.isString()) { c.v = v.toStringRef(); return c; }
  if (v.isDevice()) { c.v = v.toDevice().str(); return c; }
  if (v.isTensor()) {
    bool dok = true;
    dtypeFromScalarType(v.toTensor().scalar_type(), &dok);
    if (!dok && !v.toTensor().is_quantized()) { *ok = false; return c; }
    c.v = hostTensorFromAt(v.toTensor());
    return c;
  }
  if (v.isList() || v.isTuple()) {
    ts::Constant::List l;
    auto elems = v.isList() ? v.toListRef().vec() : v.toTupleRef().elements().vec();
    for (const auto& e : elems) {
      l.push_back(constantFromIValue(e, ok));
      if (!*ok) return c;
    }
    c.v = std::move(l);
    return c;
  }
  *ok = false;
  return c;
}

// ---------------------------------------------------------------------------------------------
// Example arguments

static c10::IValue makeTensor(const TensorSpec& spec) {
  auto opts = at::TensorOptions().dtype(scalarTypeFromDType(spec.dtype));
  auto gen = at::make_generator<at::CPUGeneratorImpl>(spec.seed);
  at::Tensor t;
  switch (spec.fill) {
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

}  // namespace oxport

#include "oxport/npy.h"
#include "oxport/preset.h"

namespace oxport {

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

// ---------------------------------------------------------------------------------------------
// Frontend

namespace {

struct ScopeInfo {
  std::vector<std::string> names, types;
  std::string path;
};

ScopeInfo scopeOf(const jit::Node* n) {
  ScopeInfo s;
  if (auto cs = n->callstack()) {
    for (const auto& entry : (*cs)->vec()) {
      const auto& mi = std::get<2>(entry);
      if (!mi) continue;
      std::string name = mi->instance_name();
      if (name.empty()) continue;
      s.names.push_back(name);
      auto ct = mi->class_type();
      s.types.push_back(ct && ct->name() ? ct->name()->name() : std::string());
      s.path += (s.path.empty() ? "" : ".") + name;
    }
  }
  return s;
}

SourceLocation locationOf(const jit::Node* n) {
  SourceLocation loc;
  const auto& sr = n->sourceRange();
  c10::optional<std::tuple<std::string, size_t, size_t>> flc;
  if (auto orig = sr.findSourceRangeThatGenerated()) flc = orig->file_line_col();
  if (!flc) flc = sr.file_line_col();
  if (flc) {
    loc.file = std::get<0>(*flc);
    loc.line = static_cast<int>(std::get<1>(*flc));
    loc.column = static_cast<int>(std::get<2>(*flc));
  }
  return loc;
}

ts::ValueType valueTypeOf(const c10::TypePtr& t0, ts::ValueType* elem) {
  c10::TypePtr t = t0;
  *elem = ts::ValueType::Other;
  if (auto opt = t->cast<c10::OptionalType>()) t = opt->getElementType();
  switch (t->kind()) {
    case c10::TypeKind::TensorType: return ts::ValueType::Tensor;
    case c10::TypeKind::IntType: return ts::ValueType::Int;
    case c10::TypeKind::FloatType: return ts::ValueType::Float;
    case c10::TypeKind::NumberType: return ts::ValueType::Float;
    case c10::TypeKind::BoolType: return ts::ValueType::Bool;
    case c10::TypeKind::NoneType: return ts::ValueType::None;
    case c10::TypeKind::StringType: return ts::ValueType::String;
    case c10::TypeKind::DeviceObjType: return ts::ValueType::Device;
    case c10::TypeKind::ListType: {
      ts::ValueType e2;
      *elem = valueTypeOf(t->cast<c10::ListType>()->getElementType(), &e2);
      return ts::ValueType::List;
    }
    case c10::TypeKind::TupleType: return ts::ValueType::Tuple;
    default: return ts::ValueType::Other;
  }
}

ts::TensorMeta metaOf(const at::Tensor& t) {
  ts::TensorMeta m;
  bool ok = true;
  m.dtype = dtypeFromScalarType(t.is_quantized() ? c10::kFloat : t.scalar_type(), &ok);
  m.shape = t.sizes().vec();
  m.known = ok;
  return m;
}

// Is `pred` true of some tensor in the value (a tensor, or inside lists and tuples)?
template <typename Pred>
bool anyTensorIn(const c10::IValue& v, const Pred& pred) {
  if (v.isTensor()) return pred(v.toTensor());
  if (v.isList()) {
    for (const auto& e : v.toListRef())
      if (anyTensorIn(e, pred)) return true;
  }
  if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements())
      if (anyTensorIn(e, pred)) return true;
  }
  return false;
}

// Does the value's IValue contain a tensor (the folding rule treats those specially)? A tensor
// list counts even when empty.
bool holdsTensor(const c10::IValue& v) {
  return v.isTensorList() || anyTensorIn(v, [](const at::Tensor&) { return true; });
}

// Ops whose result depends only on a tensor's metadata that does not vary with dynamic axes
// (dtype, device, rank): known at export time even for inputs.
bool isMetadataQuery(const jit::Node* n) {
  static const std::unordered_set<std::string> kinds = {
      "prim::dtype", "prim::device", "prim::layout", "aten::dim", "prim::is_cuda", "aten::is_floating_point",
      "prim::requires_grad", "aten::is_complex", "prim::is_quantized", "aten::__is__", "aten::__isnot__", "aten::is_pinned",
      "prim::is_nested", "prim::is_sparse", "prim::is_mkldnn", "prim::is_meta"};
  return kinds.count(n->kind().toQualString()) != 0;
}

class Frontend {
 public:
  Frontend(const jit::Module& module, const ExampleArgs& args, const ExportOptions& options,
           const ProgressFn& progress, const CancelToken& cancel, const ValueObserver* observer = nullptr)
      : module_(module), args_(args), options_(options), progress_(progress), cancel_(cancel),
        observer_(observer) {}

  Result<FrontendResult> run() {
    report(Phase::Passes, 0.0, "inlining");
    graph_ = module_.get_method("forward").graph()->copy();
    jit::Inline(*graph_);
    OXPORT_TRY(bakeArguments());
    // No grad, no autocast, the training option, the modules' flags, the inputs' dtype, rank and
    // device, None-ness of Optional arguments: the fast paths they rule out go before anything runs.
    foldExportConstants(graph_, module_._ivalue(), options_.training);
    // nn.TransformerEncoder's nested-tensor fast path: its test on the mask and the padded path.
    nested_refusal_ = lowerNestedFastPath(graph_, module_._ivalue(), options_.training);
    functionalizeViewWrites(*graph_);  // y[:, i] = v and friends, before the mutation passes
    jit::LowerSimpleTuples(graph_);
    try {
      // `[x.transpose(1, 0) for x in (query, key)]` (nn.MultiheadAttention, batch_first, query not
      // key) builds an empty list and appends to it: without this the empty list is folded as a
      // constant and the dynamic tensors appended to it are baked at the example size.
      jit::RemoveListMutation(graph_);
      jit::RemoveTensorMutation(graph_);
    } catch (const std::exception&) {
      // Mutation that cannot be removed safely is executed as is by the example run.
    }
    jit::EliminateDeadCode(graph_);
    // outs.append(t) in a loop: a new version of the list each time, carried by the loop (an ONNX
    // sequence). After the passes above, which need every node to have an operator.
    functionalizeListMutation(*graph_);
    if (cancel_.cancelled()) return Error("cancelled", "the export was cancelled");
    report(Phase::Trace, 0.0, "running the model on the example inputs");
    OXPORT_TRY(exampleRunMetaFirst());
    report(Phase::Trace, 1.0, "example run done");
    return lower();
  }

 private:
  void report(Phase p, double f, const std::string& m) {
    if (progress_) progress_(p, f, m);
  }

  // Replace forward's non-tensor arguments by constants and flatten tensor containers into
  // plain tensor inputs.
  Status bakeArguments() {
    jit::Graph& g = *graph_;
    size_t n = args_.values.size();
    if (g.inputs().size() != n + 1)
      return Error("internal", "forward graph has " + std::to_string(g.inputs().size() - 1) + " inputs, expected " +
                                   std::to_string(n));
    jit::WithInsertPoint guard(g.block()->nodes().front());
    std::vector<jit::Value*> old_inputs(g.inputs().begin() + 1, g.inputs().end());
    for (size_t i = 0; i < n; ++i) {
      jit::Value* in = old_inputs[i];
      const c10::IValue& v = args_.values[i];
      jit::Value* repl = materialize(g, v, args_.names[i]);
      if (!repl) {
        Diagnostic d = makeError("unsupported-arg",
                                 "argument '" + args_.names[i] + "' of type " + in->type()->annotation_str() +
                                     " cannot be exported",
                                 "pass tensors, numbers, bools, strings, None, or lists and tuples of them");
        d.option = "args";
        return Error(d);
      }
      in->replaceAllUsesWith(repl);
    }
    for (size_t i = n; i > 0; --i) g.eraseInput(i);
    return okStatus();
  }

  // A graph value holding `v`: new graph inputs for tensors, constants for the rest.
  jit::Value* materialize(jit::Graph& g, const c10::IValue& v, const std::string& name) {
    if (v.isTensor()) {
      jit::Value* in = g.addInput(name);
      in->setType(c10::TensorType::create(v.toTensor()));
      example_inputs_.push_back(v.toTensor());
      return in;
    }
    if (!holdsTensor(v)) {
      auto c = g.insertConstant(v);
      return c;
    }
    std::vector<c10::IValue> elems = v.isList() ? v.toListRef().vec() : v.toTupleRef().elements().vec();
    std::vector<jit::Value*> vals;
    for (size_t i = 0; i < elems.size(); ++i) {
      jit::Value* e = materialize(g, elems[i], name + "." + std::to_string(i));
      if (!e) return nullptr;
      vals.push_back(e);
    }
    jit::Node* node;
    if (v.isTuple()) {
      node = g.createTuple(vals);
    } else {
      node = g.createList(c10::TensorType::get(), vals);
    }
    g.insertNode(node);
    return node->output();
  }

  // ---- the example run on meta tensors
  //
  // The values that depend on the example inputs ("dynamic") only need their shapes and dtypes,
  // so the run first tries them as meta tensors (no data, no compute); static values (parameters,
  // constants, what is folded) stay real. Whatever needs a dynamic value's data (a condition or
  // trip count computed from a tensor, item(), an op without a Meta kernel in libtorch, an in-place
  // write into a real tensor) throws MetaFallback, and the whole run starts again on real tensors
  // exactly as before (exampleRun), from a clean state. OXPORT_META_RUN=0 skips the meta try.

  struct MetaFallback : std::runtime_error {
    using std::runtime_error::runtime_error;
  };

  static bool metaRunEnabled() {
    const char* e = std::getenv("OXPORT_META_RUN");
    return !(e && std::string(e) == "0");
  }

  static bool holdsMeta(const c10::IValue& v) {
    return anyTensorIn(v, [](const at::Tensor& t) { return t.defined() && t.is_meta(); });
  }

  static bool holdsRealTensor(const c10::IValue& v) {
    return anyTensorIn(v, [](const at::Tensor& t) { return t.defined() && !t.is_meta(); });
  }

  // The same value with every tensor as a meta tensor of the same sizes, strides and dtype (no
  // data is copied; the original stays as it is).
  static c10::IValue toMeta(const c10::IValue& v) {
    return mapTensors(v, [](const at::Tensor& t) {
      if (!t.defined() || t.is_meta()) return t;
      if (t.is_quantized() || t.is_sparse() || t.is_mkldnn())
        throw MetaFallback("a " + std::string(t.is_quantized() ? "quantized" : "non-strided") + " tensor");
      return at::empty_strided(t.sizes(), t.strides(), t.options().device(at::kMeta));
    });
  }

  Status exampleRunMetaFirst() {
    if (observer_ && *observer_) {
      example_run_ = "real (values observed)";
      return exampleRun();
    }
    if (!metaRunEnabled()) {
      example_run_ = "real (OXPORT_META_RUN=0)";
      return exampleRun();
    }
    // Trace mode edits the graph while it runs (unrolling): keep a copy to start again from.
    std::shared_ptr<jit::Graph> saved;
    if (options_.graph_mode == GraphMode::Trace && hasControlFlow(graph_->block())) saved = graph_->copy();
    const size_t warnings_before = warnings_.size();
    std::string reason;
    meta_mode_ = true;
    try {
      Status s = exampleRun();
      if (s.ok()) {
        meta_mode_ = false;
        example_run_ = "meta";
        return s;
      }
      if (cancel_.cancelled()) return s;
      reason = s.error().diagnostics().empty() ? "error" : s.error().diagnostics().front().message;
    } catch (const MetaFallback& e) {
      reason = e.what();
    } catch (const std::exception& e) {
      reason = torchErrorMessage(e);
    }
    meta_mode_ = false;
    if (cancel_.cancelled()) return Error("cancelled", "the export was cancelled");
    // Back to the state before the run.
    if (saved) graph_ = saved;
    env_.clear();
    static_.clear();
    paths_.clear();
    from_weights_.clear();
    meta_.clear();
    elem_meta_.clear();
    scalar_example_.clear();
    shadow_depth_ = 0;
    executed_.clear();
    warned_unrolled_.clear();
    dropped_asserts_.clear();
    warnings_.resize(warnings_before);
    if (auto nl = reason.find('\n'); nl != std::string::npos) reason.resize(nl);
    if (reason.size() > 300) reason = reason.substr(0, 300) + "...";
    example_run_ = "real (fallback: " + reason + ")";
    return exampleRun();
  }

  // Runs the op of `n` on `stack`. With a meta input, every tensor argument becomes meta first.
  void runOp(jit::Node* n, jit::Operation& op, jit::Stack& stack) {
    if (!meta_mode_) {
      op(stack);
      return;
    }
    bool any_meta = false;
    for (const auto& v : stack) any_meta = any_meta || holdsMeta(v);
    if (!any_meta) {
      op(stack);  // only real tensors (or none): runs as in the real run
      return;
    }
    const std::string kind = n->kind().toQualString();
    if (const c10::FunctionSchema* schema = n->maybeSchema()) {
      const auto& sargs = schema->arguments();
      for (size_t i = 0; i < sargs.size() && i < stack.size(); ++i) {
        const auto* alias = sargs[i].alias_info();
        if (alias && alias->isWrite() && holdsRealTensor(stack[i]))
          throw MetaFallback(kind + " writes into a tensor that does not depend on the inputs");
      }
    }
    // Running statistics updated in place although the schema does not say so.
    if ((kind == "aten::batch_norm" || kind == "aten::instance_norm") && stack.size() > 5 && stack[5].isBool() &&
        stack[5].toBool() && holdsRealTensor(stack[3]))
      throw MetaFallback(kind + " updates its running statistics");
    for (auto& v : stack) {
      if (v.isDevice() && v.toDevice().is_cpu()) v = c10::IValue(c10::Device(at::kMeta));
      else v = toMeta(v);
    }
    if (metaRule(kind, stack, n->outputs().size())) return;
    try {
      op(stack);
    } catch (const std::exception& e) {
      std::string msg = torchErrorMessage(e);
      if (auto nl = msg.find('\n'); nl != std::string::npos) msg.resize(nl);
      throw MetaFallback(kind + " on meta tensors: " + msg);
    }
  }

  // Ops libtorch 1.13 has no Meta kernel for in C++ (Python's torch._meta_registrations are not
  // there), the hot ones of CNNs: their result computed here from the arguments' shapes, in place
  // of the op on `stack` (every tensor meta already). Returns false when it does not apply; any
  // argument the real op would reject throws MetaFallback so the real run reports it.
  static bool metaRule(const std::string& kind, jit::Stack& stack, size_t nout) {
    if (stack.empty() || !stack[0].isTensor()) return false;
    const at::Tensor in = stack[0].toTensor();
    auto reject = [&](const std::string& why) -> bool { throw MetaFallback(kind + ": " + why); };
    auto isFloatOf = [&](const c10::IValue& v, std::vector<int64_t> shape) {
      if (!v.isTensor() || v.toTensor().scalar_type() != in.scalar_type() || v.toTensor().sizes().vec() != shape)
        reject("an argument of another shape or dtype");
    };
    // A key padding mask [batch, length] or an attention mask [length, length]; anything else is
    // left to the real run.
    auto checkMask = [&](size_t i, int64_t b, int64_t l) {
      if (i >= stack.size() || stack[i].isNone()) return;
      if (!stack[i].isTensor()) reject("a mask that is not a tensor");
      const at::Tensor m = stack[i].toTensor();
      if (!m.defined()) return;
      const std::vector<int64_t> ms = m.sizes().vec();
      if (ms != std::vector<int64_t>{b, l} && ms != std::vector<int64_t>{l, l}) reject("a mask of another shape");
    };
    if (kind == "aten::_native_multi_head_attention") {
      // (query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight, proj_bias,
      //  mask, need_weights, average_attn_weights, mask_type) -> (output, weights or undefined)
      if (nout != 2 || stack.size() < 12 || in.dim() != 3 || !at::isFloatingType(in.scalar_type()) ||
          !stack[3].isInt() || !stack[4].isInt() || !stack[10].isBool() || !stack[11].isBool())
        return false;
      const int64_t e = stack[3].toInt(), h = stack[4].toInt();
      for (size_t i : {1, 2}) isFloatOf(stack[i], in.sizes().vec());  // libtorch 1.13 needs equal shapes
      if (in.size(2) != e || h < 1 || e % h != 0) reject("embed_dim or num_head does not match the query");
      isFloatOf(stack[5], {3 * e, e});
      isFloatOf(stack[6], {3 * e});
      isFloatOf(stack[7], {e, e});
      isFloatOf(stack[8], {e});
      const bool need = stack[10].toBool(), average = stack[11].toBool();
      const int64_t b = in.size(0), l = in.size(1);
      checkMask(9, b, l);
      at::Tensor out = at::empty(in.sizes(), in.options());
      at::Tensor weights;  // undefined, as libtorch returns it without need_weights
      if (need) weights = average ? at::empty({b, l, l}, in.options()) : at::empty({b, h, l, l}, in.options());
      stack.clear();
      stack.emplace_back(std::move(out));
      stack.emplace_back(std::move(weights));
      return true;
    }
    if (nout != 1) return false;
    if (kind == "aten::adaptive_avg_pool2d") {  // its _adaptive_avg_pool2d has no Meta kernel
      if (stack.size() != 2 || !stack[1].isIntList() || (in.dim() != 3 && in.dim() != 4) ||
          !at::isFloatingType(in.scalar_type()))
        return false;
      const std::vector<int64_t> os = stack[1].toIntVector();
      if (os.size() != 2 || os[0] < 0 || os[1] < 0) reject("a bad output_size");
      for (int64_t d = in.dim() - 3; d < in.dim(); ++d)
        if (d >= 0 && in.size(d) == 0) reject("an empty input");
      std::vector<int64_t> shape(in.sizes().begin(), in.sizes().end() - 2);
      shape.insert(shape.end(), os.begin(), os.end());
      stack.clear();
      stack.emplace_back(at::empty(shape, in.options()));
      return true;
    }
    auto optTensor = [&](size_t i) -> at::Tensor {
      return i < stack.size() && stack[i].isTensor() ? stack[i].toTensor() : at::Tensor();
    };
    auto sameDtype = [&](const at::Tensor& t) {
      if (t.defined() && t.scalar_type() != in.scalar_type()) reject("mixed dtypes");
    };
    auto perChannel = [&](const at::Tensor& t, int64_t c) {
      if (t.defined() && (t.dim() != 1 || t.size(0) != c)) reject("a per-channel argument of another size");
    };
    const bool is_conv = kind == "aten::_convolution" || kind == "aten::convolution" || kind == "aten::conv1d" ||
                         kind == "aten::conv2d" || kind == "aten::conv3d";
    if (is_conv) {
      const bool general = kind == "aten::_convolution" || kind == "aten::convolution";
      if (stack.size() < 7 || !stack[1].isTensor()) return false;
      const at::Tensor w = stack[1].toTensor();
      sameDtype(w);
      sameDtype(optTensor(2));
      if (!at::isFloatingType(in.scalar_type())) reject("a non-float input");
      const int64_t k = w.dim() - 2;
      if (k < 1 || k > 3) reject("a weight of rank " + std::to_string(w.dim()));
      const bool batched = in.dim() == w.dim();
      if (!batched && in.dim() != w.dim() - 1) reject("an input of rank " + std::to_string(in.dim()));
      std::vector<int64_t> x = in.sizes().vec();
      if (!batched) x.insert(x.begin(), 1);
      auto expand = [&](const c10::IValue& v, const char* what) {
        if (!v.isIntList()) reject(std::string("a non-list ") + what);
        std::vector<int64_t> l = v.toIntVector();
        if (l.size() == 1) l.assign(static_cast<size_t>(k), l[0]);
        if (l.size() != static_cast<size_t>(k)) reject(std::string("a ") + what + " of another rank");
        return l;
      };
      const bool transposed = general ? stack[6].toBool() : false;
      const int64_t groups = general ? (stack.size() > 8 ? stack[8].toInt() : 1) : stack[6].toInt();
      if (groups < 1) reject("groups < 1");
      std::vector<int64_t> stride = expand(stack[3], "stride"), dilation = expand(stack[5], "dilation");
      std::vector<int64_t> padding(static_cast<size_t>(k), 0);
      bool same = false;
      if (stack[4].isString()) {
        if (stack[4].toStringRef() == "same") same = true;
        else if (stack[4].toStringRef() != "valid") reject("padding '" + stack[4].toStringRef() + "'");
      } else {
        padding = expand(stack[4], "padding");
      }
      std::vector<int64_t> out_pad(static_cast<size_t>(k), 0);
      if (transposed) out_pad = expand(stack[7], "output_padding");
      for (int64_t i = 0; i < k; ++i)
        if (stride[i] < 1 || dilation[i] < 1 || padding[i] < 0 || out_pad[i] < 0) reject("a bad stride/padding/dilation");
      std::vector<int64_t> y{x[0]};
      if (!transposed) {
        if (x[1] != w.size(1) * groups || w.size(0) % groups != 0) reject("channels that do not match");
        y.push_back(w.size(0));
      } else {
        if (x[1] != w.size(0) || w.size(0) % groups != 0) reject("channels that do not match");
        y.push_back(w.size(1) * groups);
      }
      perChannel(optTensor(2), y[1]);
      for (int64_t i = 0; i < k; ++i) {
        const int64_t n = x[2 + i], kk = w.size(2 + i);
        int64_t o;
        if (same) {
          for (auto s2 : stride)
            if (s2 != 1) reject("padding 'same' with a stride");
          o = n;
        } else if (!transposed) {
          const int64_t span = dilation[i] * (kk - 1) + 1;
          if (n + 2 * padding[i] < span) reject("a kernel larger than the padded input");
          o = (n + 2 * padding[i] - span) / stride[i] + 1;
        } else {
          o = (n - 1) * stride[i] - 2 * padding[i] + dilation[i] * (kk - 1) + out_pad[i] + 1;
        }
        if (o <= 0) reject("an empty output");
        y.push_back(o);
      }
      if (!batched) y.erase(y.begin());
      stack.clear();
      stack.emplace_back(at::empty(y, in.options()));
      return true;
    }
    // Elementwise ops with no Meta kernel: the input's shape and dtype.
    static const std::unordered_set<std::string> unary = {
        "aten::relu", "aten::relu_", "aten::relu6", "aten::relu6_", "aten::hardtanh", "aten::hardtanh_",
        "aten::hardswish", "aten::hardswish_", "aten::abs", "aten::abs_"};
    if (unary.count(kind)) {
      if (in.scalar_type() == at::kBool || in.is_complex()) return false;
      if (kind.rfind("aten::hard", 0) == 0 && !at::isFloatingType(in.scalar_type())) return false;
      for (size_t i = 1; i < stack.size(); ++i)
        if (!stack[i].isScalar() && !stack[i].isNone()) return false;  // only the Scalar bounds of hardtanh
      at::Tensor y = at::empty(in.sizes(), in.options());
      stack.clear();
      stack.emplace_back(std::move(y));
      return true;
    }
    if (kind == "aten::prelu") {
      if (stack.size() != 2 || !stack[1].isTensor() || !at::isFloatingType(in.scalar_type())) return false;
      const at::Tensor w = stack[1].toTensor();
      sameDtype(w);
      const int64_t c = in.dim() >= 2 ? in.size(1) : 1;
      if (w.numel() != 1 && w.numel() != c) reject("a weight of another size");
      at::Tensor y = at::empty(in.sizes(), in.options());
      stack.clear();
      stack.emplace_back(std::move(y));
      return true;
    }
    if (kind == "aten::where") {  // where.self(Tensor condition, Tensor self, Tensor other)
      if (stack.size() != 3 || !stack[1].isTensor() || !stack[2].isTensor()) return false;
      const at::Tensor a = stack[1].toTensor(), b = stack[2].toTensor();
      if (in.scalar_type() != at::kBool && in.scalar_type() != at::kByte) reject("a condition that is not bool");
      if (a.scalar_type() != b.scalar_type()) reject("mixed dtypes");  // 1.13 requires the same dtype
      std::vector<int64_t> shape = at::infer_size(at::infer_size(in.sizes(), a.sizes()), b.sizes());
      stack.clear();
      stack.emplace_back(at::empty(shape, a.options()));
      return true;
    }
    if (kind == "aten::embedding") {  // embedding(Tensor weight, Tensor indices, ...)
      if (stack.size() < 2 || !stack[1].isTensor()) return false;
      const at::Tensor idx = stack[1].toTensor();
      if (in.dim() != 2) reject("a weight that is not 2-D");
      if (idx.scalar_type() != at::kLong && idx.scalar_type() != at::kInt) reject("indices that are not integers");
      std::vector<int64_t> shape = idx.sizes().vec();
      shape.push_back(in.size(1));
      stack.clear();
      stack.emplace_back(at::empty(shape, in.options()));
      return true;
    }
    // Normalizations (and the fused encoder layer of nn.TransformerEncoderLayer's fast path): the
    // output has the input's shape and dtype.
    if (kind == "aten::_transformer_encoder_layer_fwd") {
      if (stack.size() < 18 || in.dim() != 3 || !stack[1].isInt() || !at::isFloatingType(in.scalar_type()))
        return false;
      if (stack[1].toInt() != in.size(2)) reject("embed_dim does not match the input");
      const at::Tensor qkv = optTensor(3), proj = optTensor(5);
      if (!qkv.defined() || qkv.dim() != 2 || qkv.size(1) != in.size(2) || qkv.size(0) != 3 * in.size(2))
        reject("qkv weights of another shape");
      if (!proj.defined() || proj.dim() != 2 || proj.size(0) != in.size(2)) reject("a projection of another shape");
      checkMask(18, in.size(0), in.size(1));
    } else if (kind == "aten::batch_norm" || kind == "aten::instance_norm") {
      if (stack.size() < 5 || in.dim() < 2 || !at::isFloatingType(in.scalar_type())) return false;
      for (size_t i = 1; i <= 4; ++i) perChannel(optTensor(i), in.size(1));
    } else if (kind == "aten::layer_norm") {
      if (stack.size() < 3 || !stack[1].isIntList() || !at::isFloatingType(in.scalar_type())) return false;
      const std::vector<int64_t> ns = stack[1].toIntVector();
      if (ns.empty() || ns.size() > static_cast<size_t>(in.dim())) reject("normalized_shape of another rank");
      for (size_t i = 0; i < ns.size(); ++i)
        if (in.size(in.dim() - static_cast<int64_t>(ns.size()) + static_cast<int64_t>(i)) != ns[i])
          reject("normalized_shape does not match the input");
      for (size_t i = 2; i <= 3; ++i) {
        at::Tensor t = optTensor(i);
        if (t.defined() && t.sizes().vec() != ns) reject("a weight or bias of another shape");
      }
    } else if (kind == "aten::group_norm") {
      if (stack.size() < 4 || in.dim() < 2 || !stack[1].isInt() || !at::isFloatingType(in.scalar_type())) return false;
      const int64_t groups = stack[1].toInt();
      if (groups < 1 || in.size(1) % groups != 0) reject("channels not divisible by the groups");
      for (size_t i = 2; i <= 3; ++i) perChannel(optTensor(i), in.size(1));
    } else {
      return false;
    }
    // Every tensor argument but the encoder layer's mask (bool or float) has the input's dtype.
    const size_t last = kind == "aten::_transformer_encoder_layer_fwd" ? 18 : stack.size();
    for (size_t i = 1; i < stack.size() && i < last; ++i)
      sameDtype(stack[i].isTensor() ? stack[i].toTensor() : at::Tensor());
    at::Tensor y = at::empty(in.sizes(), in.options());
    stack.clear();
    stack.emplace_back(std::move(y));
    return true;
  }

  Status exampleRun() {
    jit::Graph& g = *graph_;
    // Last top-level use of each value, to free activations early.
    std::unordered_map<jit::Value*, size_t> last_use;
    std::vector<jit::Node*> order(g.nodes().begin(), g.nodes().end());
    for (size_t i = 0; i < order.size(); ++i) {
      std::function<void(jit::Node*)> visit = [&](jit::Node* n) {
        for (auto* in : n->inputs()) last_use[in] = i;
        for (auto* b : n->blocks())
          for (auto* bn : b->nodes()) visit(bn);
        for (auto* b : n->blocks())
          for (auto* o : b->outputs()) last_use[o] = i;
      };
      visit(order[i]);
    }
    for (auto* o : g.outputs()) last_use[o] = order.size();

    env_[g.inputs()[0]] = module_._ivalue();
    static_.insert(g.inputs()[0]);
    paths_[g.inputs()[0]] = "";
    for (size_t i = 1; i < g.inputs().size(); ++i) {
      env_[g.inputs()[i]] = meta_mode_ ? toMeta(example_inputs_[i - 1]) : c10::IValue(example_inputs_[i - 1]);
      recordMeta(g.inputs()[i]);
    }
    if (options_.graph_mode == GraphMode::Trace && hasControlFlow(g.block())) {
      OXPORT_TRY(runUnrolling(g.block()->nodes().front(), g.block()->return_node()));
      jit::EliminateDeadCode(graph_);  // what only decided a branch or a trip count
      return okStatus();
    }
    for (size_t i = 0; i < order.size(); ++i) {
      if (cancel_.cancelled()) return Error("cancelled", "the export was cancelled");
      jit::Node* n = order[i];
      if (i % 32 == 0) report(Phase::Trace, static_cast<double>(i) / order.size(), n->kind().toQualString());
      OXPORT_TRY(step(n));
      for (auto* in : n->inputs()) {
        auto it = last_use.find(in);
        if (it != last_use.end() && it->second == i && !static_.count(in)) env_.erase(in);
      }
    }
    return okStatus();
  }

  // Ops kept as nodes even when their inputs are static: fake quantization of weights becomes
  // QuantizeLinear/DequantizeLinear on the weights, as quantization-aware runtimes expect.
  static bool keepAsNode(const jit::Node* n) {
    static const std::unordered_set<std::string> kinds = {
        "aten::fake_quantize_per_tensor_affine", "aten::fake_quantize_per_channel_affine",
        "aten::_fake_quantize_learnable_per_tensor_affine", "aten::_fake_quantize_learnable_per_channel_affine",
        "aten::_fake_quantize_per_tensor_affine_cachemask_tensor_qparams", "aten::fused_moving_avg_obs_fake_quant",
        "aten::quantize_per_tensor", "aten::dequantize"};
    return kinds.count(n->kind().toQualString()) != 0;
  }

  // Runs one node (its blocks included), then records which outputs are static and their metas.
  Status step(jit::Node* n) {
    Status s = stepNode(n);
    if (s.ok() && observer_ && *observer_ && shadow_depth_ == 0 && n->owningBlock() == graph_->block())
      for (auto* o : n->outputs())
        if (auto it = env_.find(o); it != env_.end()) (*observer_)(o->debugName(), it->second);
    return s;
  }

  // Names the nested value, the branch that made it and why the rewrite into padded ops left it.
  std::string nestedMessage(const jit::Node* n, const jit::Value* v) const {
    std::string m = std::string(n->kind().toQualString()) + " makes a nested tensor (%" + v->debugName() +
                    ") on the example inputs, which has no ONNX form (nested tensors have no shape)";
    for (const jit::Block* b = n->owningBlock(); b->owningNode(); b = b->owningNode()->owningBlock()) {
      const jit::Node* branch = b->owningNode();
      SourceLocation at = locationOf(branch);
      if (branch->kind() == c10::prim::If && at.known()) {
        m += ", in the branch of the `if` at " + at.file + ":" + std::to_string(at.line) + " on %" +
             branch->input(0)->debugName();
        break;
      }
    }
    if (!nested_refusal_.empty()) m += "; it is not rewritten into padded-tensor ops because " + nested_refusal_;
    return m;
  }

  Status stepNode(jit::Node* n) {
    if (n->kind() == c10::prim::If) return runIf(n);
    if (n->kind() == c10::prim::Loop) return runLoop(n);
    OXPORT_TRY(execute(n));
    for (auto* o : n->outputs()) {
      auto it = env_.find(o);
      if (it != env_.end() && anyTensorIn(it->second, [](const at::Tensor& t) { return t.defined() && t.is_nested(); }))
        return nodeError(n, "nested-tensor", nestedMessage(n, o),
                         "construct nn.TransformerEncoder with mask_check=True (its default) or "
                         "enable_nested_tensor=False (the same results at the positions that are not padding), or do "
                         "not convert inputs to nested tensors in forward()");
    }
    bool all_static = !n->isNondeterministic() && !keepAsNode(n);
    for (auto* in : n->inputs()) all_static = all_static && static_.count(in);
    if (n->kind() == c10::prim::Constant || isMetadataQuery(n)) all_static = true;
    if (all_static) {
      for (auto* o : n->outputs()) {
        const c10::IValue& v = env_[o];
        bool is_param_attr = n->kind() == c10::prim::GetAttr;
        bool tensorish = holdsTensor(v);
        if (is_param_attr && v.isTensor() && !options_.export_params) continue;  // params become inputs
        if (!tensorish || options_.do_constant_folding || is_param_attr || n->kind() == c10::prim::Constant ||
            n->kind() == c10::prim::ListConstruct || n->kind() == c10::prim::TupleConstruct)
          static_.insert(o);
      }
    }
    for (auto* o : n->outputs()) recordMeta(o);
    // A list changed in place inside a loop or an if with values that depend on the inputs (one
    // pass_list_mutation.h left as is: not a list of tensors, or stored elsewhere too) has no ONNX
    // form, and folding it would write the example run's contents into the file. (Straight-line
    // appends of sizes keep the example's values, as before.)
    if (!all_static && !n->inputs().empty() && n->input(0)->type()->kind() == c10::TypeKind::ListType &&
        n->owningBlock() != graph_->block() && isInPlaceListOp(n)) {
      const bool tensors = n->input(0)->type()->cast<c10::ListType>()->getElementType()->kind() ==
                           c10::TypeKind::TensorType;
      return nodeError(n, "unsupported-form",
                       std::string(n->kind().toQualString()) + " changes list %" + n->input(0)->debugName() + " (" +
                           n->input(0)->type()->annotation_str() +
                           ") in place inside a loop or an if, with values that depend on the inputs; " +
                           (tensors ? "the list is also stored in another list, a dict or a loop's state, so it "
                                      "cannot become an ONNX sequence"
                                    : "only lists of tensors become ONNX sequences"),
                       std::string(tensors ? "keep the list in one variable and append to it directly"
                                           : "append tensors instead (torch.tensor(i) for an int) and torch.stack "
                                             "them") +
                           ", or export with graph_mode \"trace\" (--graph-mode trace)");
    }
    return okStatus();
  }

  static bool isInPlaceListOp(const jit::Node* n) {
    static const std::unordered_set<std::string> kinds = {"aten::append", "aten::insert", "aten::pop",
                                                          "aten::_set_item", "aten::Delete", "aten::clear",
                                                          "aten::extend", "aten::add_", "aten::reverse",
                                                          "aten::remove", "aten::sort"};
    return kinds.count(n->kind().toQualString()) != 0;
  }

  Status runBlock(jit::Block* b) {
    for (jit::Node* n : b->nodes()) {
      if (cancel_.cancelled()) return Error("cancelled", "the export was cancelled");
      OXPORT_TRY(step(n));
    }
    return okStatus();
  }

  // The branch not taken, run on the same values only to learn its shapes and dtypes (the
  // converters need them). Failures only leave metas unknown; nothing is reported.
  void runForMetas(jit::Block* b) {
    ++shadow_depth_;
    Status s = runBlock(b);
    --shadow_depth_;
    // On meta tensors a failure may not be one on real tensors (a missing Meta kernel): only the
    // real run can tell which metas stay unknown.
    if (meta_mode_ && !s.ok())
      throw MetaFallback("the branch not taken failed: " +
                         (s.error().diagnostics().empty() ? std::string("error") : s.error().diagnostics().front().message));
  }

  // prim::If: the taken branch runs. A static condition makes the If disappear at lowering (the
  // taken branch is inlined); a dynamic one becomes an ONNX If, so the other branch is run too
  // for its metadata.
  Status runIf(jit::Node* n) {
    const c10::IValue& c = env_.at(n->input(0));
    const bool cond = c.toBool();
    const bool static_cond = static_.count(n->input(0)) != 0;
    jit::Block* taken = n->blocks()[cond ? 0 : 1];
    jit::Block* other = n->blocks()[cond ? 1 : 0];
    OXPORT_TRY(runBlock(taken));
    size_t raise_branch = 0;
    if (!static_cond && isShapeAssert(n, &raise_branch) && raise_branch != (cond ? 0u : 1u)) {
      // An assert on shapes that the example inputs pass: ONNX has no exceptions, and nothing but
      // the shapes decides it, so it is left out of the file (see lowerNodes).
      dropped_asserts_.insert(n);
      return okStatus();
    }
    if (!static_cond) runForMetas(other);
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      jit::Value* bo = taken->outputs()[i];
      env_[n->outputs()[i]] = env_.at(bo);
      if (static_cond && static_.count(bo)) static_.insert(n->outputs()[i]);
      recordMeta(n->outputs()[i]);
    }
    return okStatus();
  }

  // Values a block uses from outside it (free variables), nested blocks included.
  static void freeValues(jit::Block* b, std::unordered_set<jit::Value*>& out) {
    std::unordered_set<jit::Value*> defined(b->inputs().begin(), b->inputs().end());
    std::function<void(jit::Block*)> visit = [&](jit::Block* blk) {
      for (auto* v : blk->inputs()) defined.insert(v);
      for (jit::Node* n : blk->nodes()) {
        for (auto* in : n->inputs())
          if (!defined.count(in)) out.insert(in);
        for (auto* sb : n->blocks()) visit(sb);
        for (auto* o : n->outputs()) defined.insert(o);
      }
      for (auto* o : blk->outputs())
        if (!defined.count(o)) out.insert(o);
    };
    visit(b);
  }

  // prim::Loop(max_trip_count, initial_condition, carried...) with body (iter, carried...) ->
  // (condition, carried...): iterated as TorchScript does. A loop whose inputs and free values are
  // all static is folded; otherwise it becomes an ONNX Loop.
  Status runLoop(jit::Node* n) {
    jit::Block* body = n->blocks()[0];
    bool all_static = true;
    for (auto* in : n->inputs()) all_static = all_static && static_.count(in);
    std::unordered_set<jit::Value*> free;
    freeValues(body, free);
    for (auto* v : free) all_static = all_static && static_.count(v);
    const int64_t max_trip = env_.at(n->input(0)).toInt();
    bool cond = env_.at(n->input(1)).toBool();
    std::vector<c10::IValue> carried;
    for (size_t k = 2; k < n->inputs().size(); ++k) carried.push_back(env_.at(n->input(k)));
    auto setBodyInputs = [&](int64_t i) {
      env_[body->inputs()[0]] = c10::IValue(i);
      for (size_t k = 0; k < carried.size(); ++k) env_[body->inputs()[k + 1]] = carried[k];
      for (auto* v : body->inputs()) {
        if (all_static) static_.insert(v);
        recordMeta(v);
      }
    };
    int64_t i = 0;
    for (; i < max_trip && cond; ++i) {
      if (cancel_.cancelled()) return Error("cancelled", "the export was cancelled");
      setBodyInputs(i);
      OXPORT_TRY(runBlock(body));
      cond = env_.at(body->outputs()[0]).toBool();
      for (size_t k = 0; k < carried.size(); ++k) carried[k] = env_.at(body->outputs()[k + 1]);
    }
    if (i == 0 && !all_static) {
      // Never entered on the example inputs: one run for the body's metadata only.
      setBodyInputs(0);
      runForMetas(body);
      carried.clear();
      for (size_t k = 2; k < n->inputs().size(); ++k) carried.push_back(env_.at(n->input(k)));
    }
    for (size_t k = 0; k < n->outputs().size(); ++k) {
      env_[n->outputs()[k]] = carried[k];
      if (all_static) static_.insert(n->outputs()[k]);
      recordMeta(n->outputs()[k]);
    }
    return okStatus();
  }

  // ---- graph_mode "trace": what torch.jit.trace would record on the example inputs

  static bool hasControlFlow(jit::Block* b) {
    for (jit::Node* n : b->nodes())
      if (n->kind() == c10::prim::If || n->kind() == c10::prim::Loop) return true;
    return false;  // Inline() left no calls; blocks only hang off If and Loop
  }

  // Runs the nodes from `n` up to `end` (same block), replacing every prim::If by a copy of the
  // branch taken and every prim::Loop by one copy of its body per iteration; each copy runs as
  // soon as it is made (its own Ifs and Loops are replaced in turn). What remains is straight-line
  // code: the path the example inputs take.
  Status runUnrolling(jit::Node* n, jit::Node* end) {
    while (n != end) {
      if (cancel_.cancelled()) return Error("cancelled", "the export was cancelled");
      if (n->kind() == c10::prim::If) {
        OXPORT_ASSIGN(n, unrollIf(n));
        continue;
      }
      if (n->kind() == c10::prim::Loop) {
        OXPORT_ASSIGN(n, unrollLoop(n));
        continue;
      }
      OXPORT_TRY(step(n));
      executed_.insert(n);
      for (auto* in : n->inputs()) freeIfDead(in);
      n = n->next();
    }
    return okStatus();
  }

  // Drops the example value of `v` once every node using it has run (activations of big models).
  void freeIfDead(jit::Value* v) {
    if (static_.count(v)) return;
    for (const jit::Use& u : v->uses())
      if (!executed_.count(u.user)) return;  // includes the graph's return and not-yet-run copies
    env_.erase(v);
  }

  // Copies the nodes of block `b` before `before`, with `inputs` standing for b's inputs; returns
  // the copies of b's outputs.
  static std::vector<jit::Value*> inlineBlockBefore(jit::Block* b, jit::Node* before,
                                                    const std::vector<jit::Value*>& inputs) {
    std::unordered_map<jit::Value*, jit::Value*> map;
    for (size_t i = 0; i < b->inputs().size(); ++i) map[b->inputs()[i]] = inputs.at(i);
    auto mapped = [&](jit::Value* v) {
      auto it = map.find(v);
      return it == map.end() ? v : it->second;
    };
    jit::Graph& g = *before->owningGraph();
    for (jit::Node* bn : b->nodes()) {
      jit::Node* copy = g.createClone(bn, mapped);
      copy->insertBefore(before);
      for (size_t i = 0; i < bn->outputs().size(); ++i) map[bn->outputs()[i]] = copy->outputs()[i];
    }
    std::vector<jit::Value*> outs;
    for (auto* o : b->outputs()) outs.push_back(mapped(o));
    return outs;
  }

  Result<jit::Node*> unrollIf(jit::Node* n) {
    const bool cond = env_.at(n->input(0)).toBool();
    if (!static_.count(n->input(0)))
      warnUnrolled(n, std::string("this data-dependent if took its ") + (cond ? "then" : "else") +
                          " branch on the example inputs, and only that branch is exported: inputs that "
                          "would take the other branch get wrong results");
    jit::Node* before = n->prev();
    std::vector<jit::Value*> outs = inlineBlockBefore(n->blocks()[cond ? 0 : 1], n, {});
    for (size_t i = 0; i < outs.size(); ++i) n->outputs()[i]->replaceAllUsesWith(outs[i]);
    jit::Node* first = before->next();
    jit::Node* next = first == n ? n->next() : first;
    jit::Value* condition = n->input(0);
    n->destroy();
    freeIfDead(condition);
    return next;
  }

  // prim::Loop(max_trip_count, condition, carried...) { body(i, carried...) -> (condition, carried...) }:
  // each iteration copies the body before the loop node, then makes the copy's results the loop's
  // inputs (so later copies, and replacements of Ifs in this one, follow); at the end the loop's
  // results are its current inputs.
  Result<jit::Node*> unrollLoop(jit::Node* n) {
    jit::Block* body = n->blocks()[0];
    const int64_t max_trip = env_.at(n->input(0)).toInt();
    bool dynamic_count = !static_.count(n->input(0)) || !static_.count(n->input(1));
    int64_t i = 0;
    for (; i < max_trip && env_.at(n->input(1)).toBool(); ++i) {
      jit::Node* before = n->prev();
      jit::Value* iter;
      {
        jit::WithInsertPoint guard(n);
        iter = graph_->insertConstant(i);
      }
      std::vector<jit::Value*> ins{iter};
      std::vector<jit::Value*> previous(n->inputs().begin() + 1, n->inputs().end());
      for (size_t k = 2; k < n->inputs().size(); ++k) ins.push_back(n->input(k));
      std::vector<jit::Value*> outs = inlineBlockBefore(body, n, ins);
      for (size_t k = 0; k < outs.size(); ++k) n->replaceInput(k + 1, outs[k]);
      OXPORT_TRY(runUnrolling(before->next(), n));
      dynamic_count = dynamic_count || !static_.count(n->input(1));
      for (auto* v : previous) freeIfDead(v);
    }
    if (dynamic_count)
      warnUnrolled(n, "this loop ran " + std::to_string(i) + " time" + (i == 1 ? "" : "s") +
                          " on the example inputs and is unrolled that many times: inputs that need another "
                          "count (other sizes of a dynamic axis included) get wrong results");
    for (size_t k = 0; k < n->outputs().size(); ++k) n->outputs()[k]->replaceAllUsesWith(n->input(k + 2));
    jit::Node* next = n->next();
    std::vector<jit::Value*> inputs(n->inputs().begin(), n->inputs().end());
    n->destroy();
    for (auto* v : inputs) freeIfDead(v);
    return next;
  }

  // One warning per construct of the model's code (a loop body copied N times holds N copies).
  void warnUnrolled(const jit::Node* n, const std::string& what) {
    const SourceLocation loc = locationOf(n);
    const std::string key = std::string(n->kind().toQualString()) + "@" + loc.file + ":" + std::to_string(loc.line) +
                            ":" + std::to_string(loc.column);
    if (!warned_unrolled_.insert(key).second) return;
    Diagnostic w = makeWarning("control-flow-unrolled", "graph_mode trace: " + what,
                               "export with graph_mode \"script\" (--graph-mode script) to keep the control flow "
                               "as ONNX If/Loop, or choose example inputs that take the path every input takes");
    w.node_kind = n->kind().toQualString();
    w.module_path = scopeOf(n).path;
    w.location = loc;
    warnings_.push_back(w);
  }

  // Asserts on shapes are left out of the file; with dynamic axes an input of other sizes could
  // fail one that the example inputs pass, so the export says so once.
  void warnDroppedAssert(const jit::Node* n) {
    if (options_.dynamic_axes.empty() || warned_assert_) return;
    warned_assert_ = true;
    Diagnostic w = makeWarning("shape-assert-dropped",
                               "an assert on shapes (and any like it) is left out of the ONNX file, which has no "
                               "exceptions: the example inputs pass it, but inputs of other sizes along the "
                               "dynamic axes that would fail it run without the check",
                               "keep the inputs' sizes consistent as forward() expects");
    w.node_kind = n->kind().toQualString();
    w.module_path = scopeOf(n).path;
    w.location = locationOf(n);
    warnings_.push_back(w);
  }

  void recordMeta(jit::Value* v) {
    auto it = env_.find(v);
    if (it == env_.end()) return;
    const c10::IValue& iv = it->second;
    if (iv.isTensor()) {
      meta_[v] = metaOf(iv.toTensor());
    } else if (iv.isTensorList() || (iv.isList() && holdsTensor(iv))) {
      std::vector<ts::TensorMeta> ms;
      for (const auto& e : iv.toListRef())
        if (e.isTensor()) ms.push_back(metaOf(e.toTensor()));
      elem_meta_[v] = std::move(ms);
    } else if (iv.isTuple() && holdsTensor(iv)) {
      std::vector<ts::TensorMeta> ms;
      for (const auto& e : iv.toTupleRef().elements())
        if (e.isTensor()) ms.push_back(metaOf(e.toTensor()));
      elem_meta_[v] = std::move(ms);
    } else if (iv.isInt() || iv.isDouble() || iv.isBool()) {
      bool ok;
      scalar_example_[v] = constantFromIValue(iv, &ok);
    }
  }

  c10::IValue trainingFlag(const c10::IValue& obj) const {
    switch (options_.training) {
      case TrainingMode::Eval: return false;
      case TrainingMode::Training: return true;
      case TrainingMode::Preserve: break;
    }
    return obj.toObjectRef().getAttr("training");
  }

  Status execute(jit::Node* n) {
    using namespace c10;
    if (n->kind() == prim::Constant) {
      auto iv = jit::toIValue(n->output());
      env_[n->output()] = iv ? *iv : IValue();
      return okStatus();
    }
    if (n->kind() == prim::GetAttr) {
      const IValue& obj = env_.at(n->input());
      const std::string& name = n->s(attr::name);
      if (!obj.isObject()) return nodeError(n, "internal", "GetAttr on a value that is not an object");
      auto& o = obj.toObjectRef();
      if (name == "training" && o.type()->is_module()) env_[n->output()] = trainingFlag(obj);
      else env_[n->output()] = o.getAttr(name);
      auto pit = paths_.find(n->input());
      if (pit != paths_.end()) paths_[n->output()] = pit->second.empty() ? name : pit->second + "." + name;
      return okStatus();
    }
    if (!n->blocks().empty()) {
      return nodeError(n, "control-flow",
                       std::string(n->kind().toQualString()) + " with blocks is not supported",
                       "trace the model instead (torch.jit.trace with example inputs) and export the traced file");
    }
    if (n->kind() == prim::ListConstruct) {
      auto lt = n->output()->type()->cast<c10::ListType>();
      c10::impl::GenericList list(lt ? lt->getElementType() : c10::AnyType::get());
      for (auto* in : n->inputs()) list.push_back(env_.at(in));
      env_[n->output()] = c10::IValue(list);
      return okStatus();
    }
    if (n->kind() == prim::TupleConstruct) {
      std::vector<IValue> items;
      for (auto* in : n->inputs()) items.push_back(env_.at(in));
      env_[n->output()] = c10::ivalue::Tuple::create(std::move(items));
      return okStatus();
    }
    if (n->kind() == prim::ListUnpack || n->kind() == prim::TupleUnpack) {
      const IValue& v = env_.at(n->input());
      std::vector<IValue> items = v.isList() ? v.toListRef().vec() : v.toTupleRef().elements().vec();
      if (items.size() != n->outputs().size())
        return nodeError(n, "forward-failed", "unpacking " + std::to_string(items.size()) + " values into " +
                                                  std::to_string(n->outputs().size()));
      for (size_t i = 0; i < items.size(); ++i) env_[n->outputs()[i]] = items[i];
      return okStatus();
    }
    if (n->kind() == prim::TupleIndex) {
      const IValue& t = env_.at(n->input(0));
      int64_t idx = env_.at(n->input(1)).toInt();
      const auto& elems = t.toTupleRef().elements();
      if (idx < 0) idx += static_cast<int64_t>(elems.size());
      env_[n->output()] = elems.at(static_cast<size_t>(idx));
      return okStatus();
    }
    if (n->kind() == prim::DictConstruct) {
      auto dt = n->output()->type()->cast<c10::DictType>();
      c10::impl::GenericDict dict(dt->getKeyType(), dt->getValueType());
      for (size_t i = 0; i + 1 < n->inputs().size(); i += 2) dict.insert(env_.at(n->input(i)), env_.at(n->input(i + 1)));
      env_[n->output()] = c10::IValue(dict);
      return okStatus();
    }
    if (n->kind() == prim::unchecked_cast) {
      env_[n->output()] = env_.at(n->input());
      return okStatus();
    }
    if (n->kind() == prim::Uninitialized) {
      env_[n->output()] = IValue();
      return okStatus();
    }
    if (meta_mode_ && (n->kind() == prim::device || n->kind() == Symbol::fromQualString("prim::is_meta")) &&
        n->inputs().size() == 1 && holdsMeta(env_.at(n->input()))) {
      // What the real run would see: the example inputs live on the CPU. (A meta device must not
      // be folded into the graph.)
      if (n->kind() == prim::device) env_[n->output()] = IValue(c10::Device(at::kCPU));
      else env_[n->output()] = IValue(false);
      return okStatus();
    }
    if (isFunctionalListOp(n)) return executeListOp(n);
    if (n->kind() == prim::RaiseException) {
      return nodeError(n, "raises", "the model raises an exception on these example inputs",
                       "check the shapes and values in args");
    }
    std::optional<jit::Operation> op;
    try {
      op.emplace(n->getOperation());
    } catch (const std::exception& e) {
      return nodeError(n, "no-kernel", std::string("libtorch cannot run ") + n->kind().toQualString() + ": " +
                                           torchErrorMessage(e));
    }
    jit::Stack stack;
    for (auto* in : n->inputs()) {
      auto it = env_.find(in);
      if (it == env_.end()) return nodeError(n, "internal", "input %" + in->debugName() + " has no value");
      stack.push_back(it->second);
    }
    // Vararg ops (aten::format, prim::TupleConstruct's kin) take their input count on the stack,
    // as TorchScript's interpreter pushes it (the OPN instruction).
    if (const c10::FunctionSchema* schema = n->maybeSchema(); schema && schema->is_vararg())
      stack.push_back(IValue(static_cast<int64_t>(n->inputs().size())));
    if (n->kind() == c10::Symbol::fromQualString("aten::fused_moving_avg_obs_fake_quant") && stack.size() > 1 &&
        stack[1].isTensor()) {
      // The export uses the observer statistics as saved: the example run must not update them.
      const at::Tensor& on = stack[1].toTensor();
      if (on.numel() > 0 && on.reshape({-1})[0].item<int64_t>() != 0 && shadow_depth_ == 0) {
        Diagnostic w = makeWarning("observer-enabled",
                                   "the fake-quantize observer is enabled in the saved model; the export uses its "
                                   "statistics as saved, while libtorch would keep updating them on every input",
                                   "call model.apply(torch.ao.quantization.disable_observer) before saving");
        w.node_kind = n->kind().toQualString();
        w.module_path = scopeOf(n).path;
        w.location = locationOf(n);
        warnings_.push_back(w);
      }
      stack[1] = at::zeros_like(on);
    }
    try {
      runOp(n, *op, stack);
    } catch (const MetaFallback&) {
      throw;
    } catch (const std::exception& e) {
      return nodeError(n, "forward-failed",
                       std::string("the model fails on the example inputs at ") + n->kind().toQualString() + ": " +
                           torchErrorMessage(e),
                       "check the input shapes and dtypes in args against what forward() expects");
    }
    if (stack.size() != n->outputs().size())
      return nodeError(n, "internal", "unexpected number of results from " + std::string(n->kind().toQualString()));
    for (size_t i = 0; i < n->outputs().size(); ++i) env_[n->outputs()[i]] = std::move(stack[i]);
    return okStatus();
  }

  // The functional list ops of pass_list_mutation.h, on copies (earlier versions stay as they were).
  Status executeListOp(jit::Node* n) {
    const std::string k = n->kind().toQualString();
    const c10::IValue& lv = env_.at(n->input(0));
    if (!lv.isList()) return nodeError(n, "internal", k + " on a value that is not a list");
    c10::impl::GenericList list(lv.toList().elementType());
    for (const auto& e : lv.toListRef()) list.push_back(e);
    const int64_t size = static_cast<int64_t>(list.size());
    auto index = [&](size_t at, bool insert) -> Result<int64_t> {
      int64_t i = env_.at(n->input(at)).toInt();
      if (insert) return std::max<int64_t>(0, std::min<int64_t>(i < 0 ? i + size : i, size));
      if (i < 0) i += size;
      if (i < 0 || i >= size)
        return nodeError(n, "forward-failed", "list index out of range on the example inputs (" + k + ")");
      return i;
    };
    if (k == "prim::oxport_list_append") {
      list.push_back(env_.at(n->input(1)));
    } else if (k == "prim::oxport_list_insert") {
      OXPORT_ASSIGN(int64_t i, index(1, true));
      list.insert(list.begin() + i, env_.at(n->input(2)));
    } else if (k == "prim::oxport_list_pop") {
      OXPORT_ASSIGN(int64_t i, index(1, false));
      env_[n->output(1)] = list.get(static_cast<size_t>(i));
      list.erase(list.begin() + i);
    } else if (k == "prim::oxport_list_set") {
      OXPORT_ASSIGN(int64_t i, index(1, false));
      list.set(static_cast<size_t>(i), env_.at(n->input(2)));
    } else if (k == "prim::oxport_list_delete") {
      OXPORT_ASSIGN(int64_t i, index(1, false));
      list.erase(list.begin() + i);
    } else if (k == "prim::oxport_list_clear") {
      list.clear();
    } else if (k == "prim::oxport_list_extend") {
      for (const auto& e : env_.at(n->input(1)).toListRef()) list.push_back(e);
    } else {
      return nodeError(n, "internal", "unknown list op " + k);
    }
    env_[n->output(0)] = c10::IValue(list);
    return okStatus();
  }

  Error nodeError(const jit::Node* n, std::string code, std::string msg, std::string hint = {}) const {
    Diagnostic d = makeError(std::move(code), std::move(msg), std::move(hint));
    d.node_kind = n->kind().toQualString();
    d.module_path = scopeOf(n).path;
    d.location = locationOf(n);
    return Error(d);
  }

  // ---- lowering to ts IR
  ts::Value* tsValue(jit::Value* v) {
    auto it = map_.find(v);
    if (it != map_.end()) return it->second;
    // Static values become constants on first use.
    if (static_.count(v)) {
      bool ok = true;
      const c10::IValue& iv = env_.at(v);
      ts::Constant c = constantFromIValue(iv, &ok);
      ts::Value* tv;
      if (ok) {
        tv = out_->newConstant(std::move(c), v->debugName());
      } else {
        tv = out_->newValue(ts::ValueType::Other, v->debugName());
      }
      auto pit = paths_.find(v);
      if (pit != paths_.end() && iv.isTensor()) tv->param_name = pit->second;
      tv->from_weights = iv.isTensor() && fromWeights(v);
      map_[v] = tv;
      return tv;
    }
    // Parameters as graph inputs (export_params=False).
    auto pit = paths_.find(v);
    if (pit != paths_.end() && meta_.count(v)) {
      ts::Value* tv = out_->newValue(ts::ValueType::Tensor, pit->second);
      tv->meta = meta_[v];
      tv->param_name = pit->second;
      param_inputs_.push_back(tv);
      map_[v] = tv;
      return tv;
    }
    return nullptr;
  }

  // Whether a static value was computed from the module's parameters or buffers (a tensor
  // attribute reached through GetAttr, or a node folded with such an input, blocks included).
  // Such tensors are weights of the written model; what the export computed from constants
  // alone (shapes, scales, index tables) is not.
  bool fromWeights(jit::Value* v) {
    if (auto it = from_weights_.find(v); it != from_weights_.end()) return it->second;
    from_weights_[v] = false;  // cycles cannot occur in a graph; this guards re-entry only
    bool w = false;
    if (auto pit = paths_.find(v); pit != paths_.end()) {
      auto eit = env_.find(v);
      w = eit != env_.end() && holdsTensor(eit->second);
    }
    if (!w && v->node()->kind() != c10::prim::Param) {
      jit::Node* n = v->node();
      for (auto* in : n->inputs())
        if (fromWeights(in)) { w = true; break; }
      if (!w && !n->blocks().empty()) {
        std::unordered_set<jit::Value*> free;
        for (auto* b : n->blocks()) freeValues(b, free);
        for (auto* f : free)
          if (fromWeights(f)) { w = true; break; }
      }
    }
    from_weights_[v] = w;
    return w;
  }

  void fillValue(ts::Value* tv, jit::Value* v) {
    ts::ValueType elem;
    tv->type = valueTypeOf(v->type(), &elem);
    tv->elem_type = elem;
    if (auto m = meta_.find(v); m != meta_.end()) {
      tv->meta = m->second;
      tv->type = ts::ValueType::Tensor;
    }
    if (auto m = elem_meta_.find(v); m != elem_meta_.end()) tv->elem_meta = m->second;
    if (auto s = scalar_example_.find(v); s != scalar_example_.end()) {
      tv->example = s->second;
      // A dynamic number is a 0-d tensor in ONNX: its meta says which (int64, float32, bool), so
      // arithmetic on numbers (n += 1 in a loop, size(0) * 2) keeps their dtype.
      if (tv->type == ts::ValueType::Int || tv->type == ts::ValueType::Float || tv->type == ts::ValueType::Bool) {
        tv->meta.dtype = tv->type == ts::ValueType::Int ? DType::Int64
                         : tv->type == ts::ValueType::Bool ? DType::Bool : DType::Float32;
        tv->meta.shape.clear();
        tv->meta.known = true;
      }
    }
    // None where the static type allows it; a tensor, number or list that is None in the example
    // run is prim::Uninitialized (the value of a path that returned early) and keeps its type.
    const auto kind = v->type()->kind();
    const bool never_none = kind == c10::TypeKind::TensorType || kind == c10::TypeKind::IntType ||
                            kind == c10::TypeKind::FloatType || kind == c10::TypeKind::BoolType ||
                            kind == c10::TypeKind::ListType;
    if (auto e = env_.find(v); e != env_.end() && e->second.isNone() && !never_none) tv->type = ts::ValueType::None;
  }

  // The lowered value for v: a constant, a parameter input, or the value made by its producer.
  ts::Value* lookup(jit::Value* v) {
    if (ts::Value* tv = tsValue(v)) return tv;
    ts::Value* tv = out_->newValue(ts::ValueType::Other, v->debugName());
    fillValue(tv, v);
    map_[v] = tv;
    return tv;
  }

  // Lowers the nodes of `b` into `out` (a graph's or a block's node list). Nodes whose results
  // are all static are left out (their values become constants where used); an If on a static
  // condition is replaced by the nodes of the branch taken.
  Status lowerNodes(jit::Block* b, std::vector<ts::Node*>& out) {
    for (jit::Node* n : b->nodes()) {
      bool all_static = !n->outputs().empty();
      for (auto* o : n->outputs()) all_static = all_static && static_.count(o);
      if (all_static && !weight_views_.count(n)) continue;
      if (n->kind() == c10::prim::GetAttr) {
        if (tsValue(n->output())) continue;  // a parameter input
      }
      if (dropped_asserts_.count(n)) {
        warnDroppedAssert(n);
        continue;
      }
      if (n->kind() == c10::prim::If && static_.count(n->input(0))) {
        auto it = env_.find(n->input(0));
        if (it == env_.end()) continue;  // in a branch that did not run: its values are unknown
        jit::Block* taken = n->blocks()[it->second.toBool() ? 0 : 1];
        OXPORT_TRY(lowerNodes(taken, out));
        for (size_t i = 0; i < n->outputs().size(); ++i) map_[n->outputs()[i]] = lookup(taken->outputs()[i]);
        continue;
      }
      ts::Node* tn = out_->newNode(n->kind().toQualString());
      for (auto* in : n->inputs()) {
        ts::Value* tv = tsValue(in);
        if (!tv) {
          auto mit = map_.find(in);
          if (mit != map_.end()) {
            tv = mit->second;
          } else {
            tv = out_->newValue(ts::ValueType::Other, in->debugName());
            map_[in] = tv;
          }
        }
        tn->inputs.push_back(tv);
        tv->users.push_back(tn);
      }
      if (auto schema = n->maybeSchema()) {
        tn->schema = c10::toString(*schema);
        for (const auto& a : schema->arguments()) tn->arg_names.push_back(a.name());
        tn->arg_names.resize(tn->inputs.size());
      }
      ScopeInfo s = scopeOf(n);
      tn->module_path = s.path;
      tn->scope = s.names;
      tn->scope_types = s.types;
      tn->location = locationOf(n);
      tn->nondeterministic = n->isNondeterministic();
      for (jit::Block* jb : n->blocks()) {
        auto blk = std::make_unique<ts::Block>();
        for (jit::Value* bi : jb->inputs()) {
          ts::Value* tv = out_->newValue(ts::ValueType::Other, bi->debugName());
          fillValue(tv, bi);
          map_[bi] = tv;
          blk->inputs.push_back(tv);
        }
        OXPORT_TRY(lowerNodes(jb, blk->nodes));
        for (jit::Value* bo : jb->outputs()) blk->outputs.push_back(lookup(bo));
        tn->blocks.push_back(std::move(blk));
      }
      for (size_t i = 0; i < n->outputs().size(); ++i) {
        jit::Value* o = n->outputs()[i];
        ts::Value* tv = out_->newValue(ts::ValueType::Other, o->debugName());
        fillValue(tv, o);
        tv->producer = tn;
        tv->offset = static_cast<int>(i);
        tn->outputs.push_back(tv);
        map_[o] = tv;
      }
      out.push_back(tn);
    }
    return okStatus();
  }

  Result<FrontendResult> lower() {
    out_ = std::make_unique<ts::Graph>();
    jit::Graph& g = *graph_;
    FrontendResult res;
    for (size_t i = 1; i < g.inputs().size(); ++i) {
      jit::Value* in = g.inputs()[i];
      ts::Value* tv = out_->newValue(ts::ValueType::Tensor, in->debugName());
      fillValue(tv, in);
      map_[in] = tv;
      out_->inputs.push_back(tv);
      out_->input_param_names.push_back("");
      res.input_debug_names.push_back(in->debugName());
    }
    res.user_input_count = static_cast<int>(out_->inputs.size());
    // Folded views of a weight that is also read in another form stay nodes over the one weight.
    WeightViewQueries q;
    q.is_static = [&](jit::Value* v) { return static_.count(v) != 0; };
    q.is_weight = [&](jit::Value* v) {
      auto e = env_.find(v);
      return paths_.count(v) && e != env_.end() && e->second.isTensor();
    };
    q.value = [&](jit::Value* v) -> const c10::IValue* {
      auto e = env_.find(v);
      return static_.count(v) && e != env_.end() ? &e->second : nullptr;
    };
    if (options_.do_constant_folding) weight_views_ = sharedWeightViews(g.block(), q);
    OXPORT_TRY(lowerNodes(g.block(), out_->nodes));
    for (auto* p : param_inputs_) {
      out_->inputs.push_back(p);
      out_->input_param_names.push_back(p->param_name);
    }
    for (auto* o : g.outputs()) {
      ts::Value* tv = tsValue(o);
      if (!tv) tv = map_.count(o) ? map_[o] : nullptr;
      if (!tv) return Error("internal", "graph output %" + o->debugName() + " was not lowered");
      out_->outputs.push_back(tv);
    }
    res.graph = std::move(out_);
    res.warnings = std::move(warnings_);
    res.example_run = example_run_;
    return res;
  }

  const jit::Module& module_;
  const ExampleArgs& args_;
  const ExportOptions& options_;
  const ProgressFn& progress_;
  const CancelToken& cancel_;
  const ValueObserver* observer_ = nullptr;

  std::shared_ptr<jit::Graph> graph_;
  std::string nested_refusal_;  // why lowerNestedFastPath left a nested op as it was
  std::vector<at::Tensor> example_inputs_;
  std::unordered_map<jit::Value*, c10::IValue> env_;
  std::unordered_set<jit::Value*> static_;
  std::unordered_map<jit::Value*, std::string> paths_;
  std::unordered_map<jit::Value*, bool> from_weights_;  // memo of fromWeights
  std::unordered_map<jit::Value*, ts::TensorMeta> meta_;
  std::unordered_map<jit::Value*, std::vector<ts::TensorMeta>> elem_meta_;
  std::unordered_map<jit::Value*, ts::Constant> scalar_example_;

  int shadow_depth_ = 0;  // > 0 while running a branch not taken, for its metadata
  bool meta_mode_ = false;   // dynamic values are meta tensors (see exampleRunMetaFirst)
  std::string example_run_;  // "meta", or "real (...)" and why
  std::unordered_set<jit::Node*> executed_;       // trace mode: nodes run (never destroyed)
  std::unordered_set<std::string> warned_unrolled_;  // trace mode: constructs already reported
  std::unordered_set<jit::Node*> dropped_asserts_;   // asserts on shapes the example inputs pass
  bool warned_assert_ = false;
  std::vector<Diagnostic> warnings_;

  std::unique_ptr<ts::Graph> out_;
  std::unordered_map<jit::Value*, ts::Value*> map_;
  std::vector<ts::Value*> param_inputs_;
  std::unordered_set<jit::Node*> weight_views_;  // folded views lowered as nodes (weight_views.h)
};

}  // namespace

GraphView savedGraphView(const jit::Module& module) {
  GraphView v;
  v.title = "TorchScript (as saved)";
  std::shared_ptr<jit::Graph> g = module.get_method("forward").graph()->copy();
  jit::Inline(*g);
  jit::Value* self = g->inputs().empty() ? nullptr : g->inputs()[0];
  std::unordered_map<const jit::Value*, std::string> attr_path;  // self and GetAttr chains
  if (self) attr_path[self] = "";
  std::unordered_map<const jit::Value*, int> edge_of;
  auto edge = [&](const jit::Value* val) -> int {
    if (auto it = edge_of.find(val); it != edge_of.end()) return it->second;
    GraphViewEdge e;
    e.id = static_cast<int>(v.edges.size());
    auto ap = attr_path.find(val);
    e.name = ap != attr_path.end() ? ap->second : val->debugName();
    e.type = val->type()->annotation_str();
    e.is_initializer = ap != attr_path.end();
    if (e.is_initializer) e.summary = "parameter or buffer " + ap->second;
    v.edges.push_back(e);
    edge_of[val] = e.id;
    return e.id;
  };
  for (size_t i = 1; i < g->inputs().size(); ++i) {
    int id = edge(g->inputs()[i]);
    v.edges[id].is_graph_input = true;
    v.inputs.push_back(id);
  }
  // Constants, and lists of constants (a traced conv's stride), print as attribute values.
  std::function<std::optional<std::string>(const jit::Value*)> constText =
      [&](const jit::Value* val) -> std::optional<std::string> {
    const jit::Node* p = val->node();
    if (p->kind() == c10::prim::Constant) {
      auto iv = jit::toIValue(val);
      std::ostringstream os;
      if (iv && !iv->isTensor()) os << *iv;
      else os << val->type()->annotation_str();
      return os.str();
    }
    if (p->kind() != c10::prim::ListConstruct) return std::nullopt;
    std::string text = "[";
    for (size_t i = 0; i < p->inputs().size(); ++i) {
      auto e = constText(p->input(i));
      if (!e) return std::nullopt;
      text += (i ? ", " : "") + *e;
    }
    return text + "]";
  };
  int next_id = 0;
  for (jit::Node* n : g->nodes()) {
    if (n->kind() == c10::prim::Constant) continue;
    if (n->kind() == c10::prim::ListConstruct && constText(n->output())) continue;
    if (n->kind() == c10::prim::GetAttr) {
      // self.layer1.0.conv1.weight: drawn as the parameter it reads, not as a chain of nodes.
      auto base = attr_path.find(n->input(0));
      if (base != attr_path.end()) {
        attr_path[n->output()] = (base->second.empty() ? "" : base->second + ".") + n->s(c10::attr::name);
        continue;
      }
    }
    GraphViewNode gn;
    gn.id = next_id++;
    gn.name = n->outputs().empty() ? n->kind().toQualString() : "%" + n->output(0)->debugName();
    gn.op = n->kind().toQualString();
    gn.module_path = scopeOf(n).path;
    gn.location = locationOf(n);
    const c10::FunctionSchema* schema = n->maybeSchema();
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      jit::Value* in = n->input(i);
      if (auto text = constText(in)) {
        std::string an = schema && i < schema->arguments().size() ? schema->arguments()[i].name() : "arg" + std::to_string(i);
        gn.attributes.emplace_back(an, *text);
        continue;
      }
      if (attr_path.count(in) && in->type()->kind() == c10::TypeKind::ClassType) continue;  // a module
      int id = edge(in);
      v.edges[id].consumers.push_back(gn.id);
      gn.inputs.push_back(id);
    }
    if (!n->blocks().empty())
      gn.attributes.emplace_back("blocks", std::to_string(n->blocks().size()) + " (shown after the example run)");
    for (jit::Value* o : n->outputs()) {
      int id = edge(o);
      v.edges[id].producer = gn.id;
      gn.outputs.push_back(id);
    }
    v.nodes.push_back(std::move(gn));
  }
  for (jit::Value* o : g->outputs()) {
    int id = edge(o);
    v.edges[id].is_graph_output = true;
    v.outputs.push_back(id);
  }
  return v;
}

Result<FrontendResult> runFrontend(const jit::Module& module, const ExampleArgs& args,
                                   const ExportOptions& options, const ProgressFn& progress,
                                   const CancelToken& cancel, const ValueObserver* observer) {
  try {
    // The example run is the export's inference, as the reference run: without autograd (what
    // torch.is_grad_enabled() answers is folded to false before it, see pass_export_constants.h).
    torch::NoGradGuard no_grad;
    Frontend f(module, args, options, progress, cancel, observer);
    return f.run();
  } catch (const std::exception& e) {
    return Error("frontend-failed", std::string("preparing the TorchScript graph failed: ") + torchErrorMessage(e));
  }
}

std::string recordedSource(const jit::Node* n, bool* original) {
  const auto& sr = n->sourceRange();
  auto orig = sr.findSourceRangeThatGenerated();
  if (original) *original = orig.has_value();
  const auto& src = orig ? orig->source() : sr.source();
  return src ? src->text_str().str() : std::string();
}

bool isTraceStack(const std::string& text) { return text.find("torch/jit/_trace.py(") != std::string::npos; }

std::vector<PythonFrame> tracedUserFrames(const jit::Module& module, bool* traced) {
  std::vector<PythonFrame> out;
  std::set<std::string> seen_stacks;
  bool any_trace = false;
  std::function<void(const jit::Block*, const std::string&)> visit = [&](const jit::Block* b, const std::string& path) {
    for (const jit::Node* n : b->nodes()) {
      for (const jit::Block* sub : n->blocks()) visit(sub, path);
      std::string text = recordedSource(n);
      if (!isTraceStack(text)) continue;
      any_trace = true;
      if (!seen_stacks.insert(text).second) continue;
      for (PythonFrame& f : userFramesOfTraceStack(text)) {
        f.module_path = path;
        out.push_back(std::move(f));
      }
    }
  };
  for (const auto& m : module.named_modules()) {
    for (const auto& method : m.value.get_methods()) {
      const auto* gf = dynamic_cast<const jit::GraphFunction*>(&method.function());
      if (gf) visit(gf->graph()->block(), m.name);
    }
  }
  if (traced) *traced = any_trace;
  return out;
}

}  // namespace oxport
