// Operator properties (rapidcheck): for each op family, generated shapes (size-0 and size-1 dims
// included), dtypes and argument values (negative dims, keepdim, align_corners, broadcasting ...)
// make a small TorchScript module, built here in C++ with Module::define. oxport exports it
// (operator_export_type ONNX, so nothing falls back silently) at a generated opset, and ONNX
// Runtime must match libtorch through the core's own verifyExport. A case libtorch itself refuses
// is discarded; an export that fails is a failure unless the case says which refusal it expects.
//
// Cases per property: OXPORT_PROP_CASES (default 6). The seed is fixed (kDefaultSeed) unless
// RC_PARAMS names one; a failure prints the seed, the generated module and its inputs:
//   OXPORT_PROP_CASES=200 RC_PARAMS="seed=7" build/tests/property/test_op_properties
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <torch/script.h>

#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <sstream>
#include <unistd.h>

#include "oxport/model.h"
#include "oxport/npy.h"
#include "oxport/runtime.h"

namespace fs = std::filesystem;

namespace oxport {
namespace {

constexpr uint64_t kDefaultSeed = 20261203;

// One generated input: shape, dtype and the value range of integer inputs ([lo, hi]).
struct In {
  std::vector<int64_t> shape;
  DType dtype = DType::Float32;
  int64_t lo = -4, hi = 4;
  bool distinct = false;  // float values without ties (sort, topk)
};

struct Case {
  std::vector<std::string> names;  // forward's argument names
  std::vector<In> inputs;
  std::string body;                // forward's body, one statement per line
  int opset = 11;
  uint64_t seed = 0;               // values of the inputs
  std::vector<std::string> allowed_refusals;  // diagnostic codes that are an acceptable answer
};

std::string source(const Case& c) {
  std::string s = "def forward(self";
  for (const auto& n : c.names) s += ", " + n;
  s += "):\n";
  std::istringstream body(c.body);
  for (std::string line; std::getline(body, line);) s += "    " + line + "\n";
  return s;
}

void showCase(const Case& c, std::ostream& os) {
  os << "opset " << c.opset << ", value seed " << c.seed << "\n";
  for (size_t i = 0; i < c.inputs.size(); ++i)
    os << "  " << c.names[i] << ": " << shapeText(c.inputs[i].shape) << " " << dtypeName(c.inputs[i].dtype) << "\n";
  os << source(c);
}

using namespace rc;

at::ScalarType scalarType(DType d) {
  switch (d) {
    case DType::Float32: return at::kFloat;
    case DType::Float64: return at::kDouble;
    case DType::Int32: return at::kInt;
    case DType::Int64: return at::kLong;
    case DType::UInt8: return at::kByte;
    case DType::Bool: return at::kBool;
    default: return at::kFloat;
  }
}

at::Tensor makeInput(const In& in, uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  int64_t numel = 1;
  for (int64_t d : in.shape) numel *= d;
  if (numel == 0) return at::empty(in.shape, at::TensorOptions().dtype(scalarType(in.dtype)));
  if (in.dtype == DType::Bool) return at::rand(in.shape, gen) > 0.5;
  if (in.distinct) {  // a permutation: no ties, so every index output is unique
    at::Tensor p = at::randperm(numel, gen, at::kLong) - numel / 2;
    return (isFloating(in.dtype) ? p.to(at::kFloat) * 0.37 : p).reshape(in.shape).to(scalarType(in.dtype));
  }
  if (!isFloating(in.dtype))
    return at::randint(in.lo, in.hi + 1, in.shape, gen, at::TensorOptions().dtype(scalarType(in.dtype)));
  return at::randn(in.shape, gen, at::TensorOptions().dtype(at::kFloat)).to(scalarType(in.dtype));
}

HostTensor toHost(const at::Tensor& t0) {
  at::Tensor t = t0.contiguous();
  HostTensor h;
  h.dtype = [&] {
    switch (t.scalar_type()) {
      case at::kDouble: return DType::Float64;
      case at::kInt: return DType::Int32;
      case at::kLong: return DType::Int64;
      case at::kByte: return DType::UInt8;
      case at::kBool: return DType::Bool;
      default: return DType::Float32;
    }
  }();
  h.shape = t.sizes().vec();
  h.data = t.data_ptr();
  h.nbytes = t.nbytes();
  h.holder = std::make_shared<at::Tensor>(t);
  return h;
}

OnnxRuntime* runtime() {
  static std::unique_ptr<OnnxRuntime> rt = [] {
    auto r = makeDefaultRuntime();
    return r.ok() ? std::move(*r) : std::unique_ptr<OnnxRuntime>();
  }();
  return rt.get();
}

// A scratch folder for this process, removed at exit.
fs::path workDir() {
  struct Dir {
    fs::path path = fs::temp_directory_path() / ("oxport-op-props-" + std::to_string(::getpid()));
    Dir() { fs::create_directories(path); }
    ~Dir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  };
  static Dir dir;
  return dir.path;
}

// Builds, exports and verifies one case; a mismatch or an unexpected refusal fails the property.
void checkCase(const Case& c) {
  torch::jit::Module m("PropModule");
  const std::string src = source(c);
  std::ostringstream what;
  showCase(c, what);
  m.define(src);  // a generator bug, not a property failure: let it throw
  std::vector<at::Tensor> inputs;
  std::vector<c10::IValue> ivalues;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    inputs.push_back(makeInput(c.inputs[i], c.seed + i));
    ivalues.emplace_back(inputs.back());
  }
  try {
    m.forward(ivalues);
  } catch (const std::exception& e) {
    RC_DISCARD("libtorch refuses this case");
  }

  const fs::path dir = workDir();
  const fs::path pt = dir / "case.pt", onnx = dir / "case.onnx";
  m.save(pt.string());
  ExportOptions options;
  options.opset_version = c.opset;
  options.operator_export_type = OperatorExportType::Onnx;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const fs::path npy = dir / ("in" + std::to_string(i) + ".npy");
    auto st = writeNpy(npy, toHost(inputs[i]));
    RC_ASSERT(st.ok());
    TensorSpec spec;
    spec.shape = c.inputs[i].shape;
    spec.dtype = c.inputs[i].dtype;
    spec.fill = FillKind::Npy;
    spec.npy = npy.string();
    options.args.push_back(ArgValue::tensor(spec));
  }
  auto model = Model::load(pt);
  if (!model.ok()) RC_FAIL(what.str() + "load failed: " + model.error().message());
  auto r = model->exportOnnx(options, OutputTarget::toFile(onnx));
  if (!r.ok()) {
    bool allowed = false;
    for (const auto& d : r.error().diagnostics())
      for (const auto& code : c.allowed_refusals) allowed = allowed || d.code == code;
    if (allowed) {
      RC_TAG(std::string("refused"));
      return;
    }
    RC_FAIL(what.str() + "export failed:\n" + r.error().message());
  }
  if (!r->stats.checker_passed || !r->stats.shape_inference_passed) RC_FAIL(what.str() + "checker or shape inference failed");
  RC_ASSERT(runtime() != nullptr);
  VerifyOptions vo;
  vo.extra_sizes = false;
  auto report = verifyExport(*model, options, onnx, *runtime(), vo);
  if (!report.ok()) RC_FAIL(what.str() + "verification could not run: " + report.error().message());
  if (!report->passed) RC_FAIL(what.str() + "ONNX Runtime differs from libtorch:\n" + report->toText());
}

// Runs a property with OXPORT_PROP_CASES cases and the fixed seed unless RC_PARAMS sets one.
template <class Testable>
void checkProperty(Testable&& testable) {
  ASSERT_NE(runtime(), nullptr) << "ONNX Runtime is not available (see docs/INSTALL.md)";
  setLoadGuard(LoadGuard::CallerIsolated);  // our own modules: no need to probe them in a child
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  const char* rc_params = std::getenv("RC_PARAMS");
  if (!rc_params || std::string(rc_params).find("seed") == std::string::npos) params.seed = kDefaultSeed;
  params.maxSuccess = 6;
  if (const char* n = std::getenv("OXPORT_PROP_CASES")) params.maxSuccess = std::max(1, std::atoi(n));
  params.maxSize = 100;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  auto result = rc::detail::checkTestable(std::forward<Testable>(testable), metadata, params);
  if (!result.template is<rc::detail::SuccessResult>()) {
    std::ostringstream ss;
    rc::detail::printResultMessage(result, ss);
    FAIL() << "seed " << params.seed << " (rerun: RC_PARAMS=\"seed=" << params.seed
           << "\" OXPORT_PROP_CASES=" << params.maxSuccess << ")\n"
           << ss.str();
  }
}

// ---- generators

// A dimension size: mostly small, often 1, sometimes 0.
Gen<int64_t> genDim() {
  return gen::weightedOneOf<int64_t>({{1, gen::just<int64_t>(0)}, {3, gen::just<int64_t>(1)}, {8, gen::inRange<int64_t>(2, 6)}});
}
Gen<int64_t> genPosDim() { return gen::weightedOneOf<int64_t>({{1, gen::just<int64_t>(1)}, {3, gen::inRange<int64_t>(2, 6)}}); }

Gen<std::vector<int64_t>> genShape(int min_rank, int max_rank, bool allow_empty = true) {
  return gen::mapcat(gen::inRange(min_rank, max_rank + 1), [allow_empty](int rank) {
    return gen::container<std::vector<int64_t>>(static_cast<size_t>(rank), allow_empty ? genDim() : genPosDim());
  });
}

Gen<int> genOpset(std::vector<int> opsets = {9, 11, 13, 17}) { return gen::elementOf(opsets); }

// A dim of a rank-r tensor, written positive or negative.
Gen<int64_t> genAxis(int64_t rank) {
  return gen::map(gen::pair(gen::inRange<int64_t>(0, rank), gen::arbitrary<bool>()),
                  [rank](std::pair<int64_t, bool> p) { return p.second ? p.first - rank : p.first; });
}

std::string listText(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}
std::string boolText(bool b) { return b ? "True" : "False"; }
int64_t norm(int64_t d, int64_t rank) { return d < 0 ? d + rank : d; }

// The other operand of a broadcasting op: some of `a`'s dims set to 1, leading dims dropped or added.
Gen<std::vector<int64_t>> genBroadcastPartner(std::vector<int64_t> a) {
  return gen::map(gen::tuple(gen::container<std::vector<bool>>(a.size(), gen::arbitrary<bool>()),
                             gen::inRange<size_t>(0, a.size() + 1), gen::inRange(0, 2)),
                  [a](const std::tuple<std::vector<bool>, size_t, int>& t) {
                    std::vector<int64_t> b = a;
                    for (size_t i = 0; i < b.size(); ++i)
                      if (std::get<0>(t)[i]) b[i] = 1;
                    b.erase(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(std::min(std::get<1>(t), b.size())));
                    if (std::get<2>(t) == 1 && b.size() == a.size()) b.insert(b.begin(), 1);
                    return b;
                  });
}

Gen<DType> genDType(std::vector<DType> ds) { return gen::elementOf(ds); }

// ---- properties


// Elementwise binary ops with broadcasting and every mix of float, int and bool operands (type
// promotion), also against Python scalars.
TEST(OpProperties, ElementwiseBinaryBroadcastsAndPromotes) {
  checkProperty([] {
    static const std::vector<std::string> ops = {
        "torch.add(a, b)", "torch.sub(a, b)", "torch.mul(a, b)", "torch.div(a, b)", "torch.maximum(a, b)",
        "torch.minimum(a, b)", "torch.eq(a, b)", "torch.lt(a, b)", "torch.ge(a, b)", "torch.ne(a, b)",
        "torch.pow(a, b)", "torch.remainder(a, b)", "torch.floor_divide(a, b)", "a + b * 2", "a * b - 2.5",
        "torch.logical_and(a, b)", "torch.logical_or(a, b)", "torch.add(a, b, alpha=2)", "a > b", "a & b", "a | b",
        "a ^ b"};
    auto a = *genShape(0, 4).as("shape of a");
    auto b = *genBroadcastPartner(a).as("shape of b");
    if (*gen::arbitrary<bool>()) std::swap(a, b);
    const std::vector<DType> dts = {DType::Float32, DType::Int64, DType::Int32, DType::Bool, DType::Float32};
    Case c;
    c.names = {"a", "b"};
    c.inputs = {In{a, *genDType(dts)}, In{b, *genDType(dts)}};
    c.body = "return " + *gen::elementOf(ops);
    c.opset = *genOpset();
    c.seed = *gen::inRange<uint64_t>(0, 1000);
    checkCase(c);
  });
}

// Reductions over dim lists written with negative dims, with and without keepdim, all dims, empty dims.
TEST(OpProperties, ReductionsDimsAndKeepdim) {
  checkProperty([] {
    const auto shape = *genShape(1, 4).as("shape");
    const int64_t rank = static_cast<int64_t>(shape.size());
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < rank; ++d)
      if (*gen::arbitrary<bool>()) dims.push_back(*gen::arbitrary<bool>() ? d - rank : d);
    if (dims.empty()) dims.push_back(*genAxis(rank));
    const int64_t dim = *genAxis(rank);
    const std::string k = boolText(*gen::arbitrary<bool>());
    const std::string D = listText(dims), d1 = std::to_string(dim);
    struct Op { std::string body; std::vector<DType> dtypes; bool distinct; };
    const std::vector<Op> ops = {
        {"return torch.sum(x, " + D + ", " + k + ")", {DType::Float32, DType::Int64, DType::Int32, DType::Bool}, false},
        {"return torch.mean(x, " + D + ", " + k + ")", {DType::Float32}, false},
        {"return torch.amax(x, " + D + ", " + k + ")", {DType::Float32, DType::Int64}, false},
        {"return torch.amin(x, " + D + ", " + k + ")", {DType::Float32, DType::Int32}, false},
        {"return torch.prod(x, " + d1 + ", " + k + ")", {DType::Float32, DType::Int64}, false},
        {"return torch.max(x, " + d1 + ", " + k + ")", {DType::Float32, DType::Int64}, true},
        {"return torch.min(x, " + d1 + ", " + k + ")", {DType::Float32}, true},
        {"return torch.argmax(x, " + d1 + ", " + k + ")", {DType::Float32, DType::Int64}, true},
        {"return torch.argmin(x, " + d1 + ", " + k + ")", {DType::Float32}, true},
        {"return torch.sum(x)", {DType::Float32, DType::Int64, DType::Bool}, false},
        {"return torch.mean(x)", {DType::Float32}, false},
        {"return torch.any(x, " + d1 + ", " + k + ")", {DType::Bool}, false},
        {"return torch.all(x, " + d1 + ", " + k + ")", {DType::Bool}, false},
        {"return torch.logsumexp(x, " + D + ", " + k + ")", {DType::Float32}, false},
        {"return torch.var(x, " + D + ", " + boolText(*gen::arbitrary<bool>()) + ", " + k + ")", {DType::Float32}, false},
        {"return torch.std(x, " + D + ", " + boolText(*gen::arbitrary<bool>()) + ", " + k + ")", {DType::Float32}, false},
    };
    const Op op = *gen::elementOf(ops);
    Case c;
    c.names = {"x"};
    c.inputs = {In{shape, *genDType(op.dtypes)}};
    c.inputs[0].distinct = op.distinct;
    c.body = op.body;
    c.opset = *genOpset();
    c.seed = *gen::inRange<uint64_t>(0, 1000);
    checkCase(c);
  });
}

// cat/stack of tensors that differ along the dim (size 0 included), split/chunk/unbind into lists.
TEST(OpProperties, CatStackSplitChunk) {
  checkProperty([] {
    const auto shape = *genShape(1, 4).as("shape");
    const int64_t rank = static_cast<int64_t>(shape.size());
    const int64_t dim = *genAxis(rank);
    const DType dt = *genDType({DType::Float32, DType::Int64, DType::Bool});
    const std::string d = std::to_string(dim);
    Case c;
    c.opset = *genOpset();
    c.seed = *gen::inRange<uint64_t>(0, 1000);
    const int which = *gen::inRange(0, 6);
    if (which <= 1) {
      auto other = shape;
      if (which == 0) other[static_cast<size_t>(norm(dim, rank))] = *genDim();
      c.names = {"a", "b"};
      c.inputs = {In{shape, dt}, In{other, dt}};
      c.body = which == 0 ? "return torch.cat([a, b, a], " + d + ")"
                          : "return torch.stack([a, b], " + std::to_string(*genAxis(rank + 1)) + ")";
    } else {
      c.names = {"x"};
      c.inputs = {In{shape, dt}};
      const int64_t n = shape[static_cast<size_t>(norm(dim, rank))];
      const int64_t part = *gen::inRange<int64_t>(0, n + 1);
      switch (which) {
        case 2: c.body = "return torch.split(x, " + std::to_string(*gen::inRange<int64_t>(1, 4)) + ", " + d + ")"; break;
        case 3: c.body = "return torch.split(x, [" + std::to_string(part) + ", " + std::to_string(n - part) + "], " + d + ")"; break;
        case 4: c.body = "return torch.chunk(x, " + std::to_string(*gen::inRange<int64_t>(1, 5)) + ", " + d + ")"; break;
        default: c.body = "return torch.unbind(x, " + d + ")"; break;
      }
    }
    checkCase(c);
  });
}

// Layout ops: transpose/permute/reshape/view/flatten/squeeze/unsqueeze with negative dims.
TEST(OpProperties, ShapeOps) {
  checkProperty([] {
    const auto shape = *genShape(1, 5).as("shape");
    const int64_t rank = static_cast<int64_t>(shape.size());
    std::vector<int64_t> perm(static_cast<size_t>(rank));
    std::iota(perm.begin(), perm.end(), 0);
    for (size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[*gen::inRange<size_t>(0, i)]);
    int64_t numel = std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
    const std::string a = std::to_string(*genAxis(rank)), b = std::to_string(*genAxis(rank));
    const std::vector<std::string> ops = {
        "return torch.transpose(x, " + a + ", " + b + ")",
        "return x.permute(" + listText(perm) + ")",
        "return torch.reshape(x, [-1, " + std::to_string(shape.back()) + "])",
        "return x.view(" + listText({numel}) + ")",
        "return x.reshape(" + listText({shape[0], -1}) + ")",
        "return torch.flatten(x, " + a + ", " + b + ")",
        "return torch.squeeze(x, " + a + ")",
        "return torch.squeeze(x)",
        "return torch.unsqueeze(x, " + std::to_string(*genAxis(rank + 1)) + ")",
        "return x.transpose(" + a + ", " + b + ").contiguous().view(" + listText({-1}) + ")",
        "return torch.movedim(x, " + a + ", " + b + ")",
        "return x.unsqueeze(0).expand(" + listText({2}) + " + x.shape)",
    };
    Case c;
    c.names = {"x"};
    c.inputs = {In{shape, *genDType({DType::Float32, DType::Int64, DType::Bool})}};
    c.body = *gen::elementOf(ops);
    c.opset = *genOpset();
    c.seed = *gen::inRange<uint64_t>(0, 1000);
    checkCase(c);
  });
}

// Slices with negative and out-of-range bounds and steps, select, narrow, index_select, gather, x[idx].
TEST(OpProperties, SliceSelectGatherIndex) {
  checkProperty([] {
    const auto shape = *genShape(1, 4).as("shape");
    const int64_t rank = static_cast<int64_t>(shape.size());
    const int64_t dim = *genAxis(rank);
    const int64_t nd = norm(dim, rank);
    const int64_t n = shape[static_cast<size_t>(nd)];
    const std::string d = std::to_string(dim);
    Case c;
    c.opset = *genOpset();
    c.seed = *gen::inRange<uint64_t>(0, 1000);
    c.names = {"x"};
    c.inputs = {In{shape, *genDType({DType::Float32, DType::Int64})}};
    const int which = *gen::inRange(0, 6);
    auto bound = gen::inRange<int64_t>(-n - 2, n + 3);
    if (which == 0) {
      c.allowed_refusals = {"opset-too-old"};  // slicing with a step needs opset 10
      if (c.opset >= 10) c.allowed_refusals.clear();
      std::string idx;
      for (int64_t i = 0; i < nd; ++i) idx += ":, ";
      idx += std::to_string(*bound) + ":" + std::to_string(*bound) + ":" + std::to_string(*gen::inRange<int64_t>(1, 4));
      c.body = "return x[" + idx + "]";
    } else if (which == 1) {
      c.body = "return x.select(" + d + ", " + std::to_string(*gen::inRange<int64_t>(-n, std::max<int64_t>(n, 1))) + ")";
    } else if (which == 2) {
      const int64_t start = *gen::inRange<int64_t>(0, n + 1);
      c.body = "return x.narrow(" + d + ", " + std::to_string(start) + ", " + std::to_string(*gen::inRange<int64_t>(0, n - start + 1)) + ")";
    } else {
      const int64_t k = n == 0 ? 0 : *gen::inRange<int64_t>(0, 5);
      c.names.push_back("i");
      if (which == 3) {
        c.inputs.push_back(In{{k}, DType::Int64, 0, n - 1});
        c.body = "return torch.index_select(x, " + d + ", i)";
      } else if (which == 4) {
        auto ishape = shape;
        for (size_t j = 0; j < ishape.size(); ++j)
          ishape[j] = static_cast<int64_t>(j) == nd ? k : *gen::inRange<int64_t>(0, ishape[j] + 1);
        c.inputs.push_back(In{ishape, DType::Int64, 0, n - 1});
        c.body = "return torch.gather(x, " + d + ", i)";
        if (c.opset < 11) c.allowed_refusals = {"opset-too-old"};  // GatherElements is opset 11
      } else {
        c.inputs.push_back(In{{k}, DType::Int64, -shape[0], shape[0] - 1});
        c.body = "return x[i]";
      }
    }
    checkCase(c);
  });
}

TEST(OpProperties, SoftmaxLogSoftmax) {
  checkProperty([] {
    const auto shape = *genShape(1, 4).as("shape");
    const std::string d = std::to_string(*genAxis(static_cast<int64_t>(shape.size())));
    Case c;
    c.names = {"x"};
    c.inputs = {In{shape, DType::Float32}};
    c.body = *gen::elementOf(std::vector<std::string>{"return torch.softmax(x, " + d + ")", "return torch.log_softmax(x, " + d + ")",
                                                      "return torch.softmax(x * 3.0, " + d + ", 6)"});
    c.opset = *genOpset();
    c.seed = *gen::inRange<uint64_t>(0, 1000);
    checkCase(c);
  });
}

// matmul of every rank pair (1-D vectors and broadcast batch dims included), mm, bmm.
TEST(OpProperties, Matmul) {
  checkProperty([] {
    const int ra = *gen::inRange(1, 5), rb = *gen::inRange(1, 5);
    const int64_t m = *genDim(), k = *genDim(), n = *genDim();
    const int nb = std::max(0, std::max(ra, rb) - 2);
    const auto batch = *genShape(nb, nb).as("batch");
    std::vector<int64_t> a = {k}, b = {k};
    if (ra > 1) {
      a.assign(batch.end() - (ra - 2), batch.end());
      a.push_back(m);
      a.push_back(k);
    }
    if (rb > 1) {
      b = *genBroadcastPartner(std::vector<int64_t>(batch.end() - (rb - 2), batch.end())).as("batch of b");
      b.push_back(k);
      b.push_back(n);
    }
    Case c;
    c.names = {"a", "b"};
    const DType dt = *genDType({DType::Float32, DType::Float32, DType::Int64});
    c.inputs = {In{a, dt}, In{b, dt}};
    c.body = *gen::elementOf(std::vector<std::string>{"return torch.matmul(a, b)", "return torch.mm(a, b)", "return torch.bmm(a, b)", "return a @ b"});
    c.opset = *genOpset();
    c.seed = *gen::inRange<uint64_t>(0, 1000);
    checkCase(c);
  });
}

// max/avg pooling (kernel, stride, padding, dilation, ceil_mode, count_include_pad), adaptive pooling.
TEST(OpProperties, Pooling) {
  checkProperty([] {
    const int nd = *gen::inRange(1, 3);
    std::vector<int64_t> shape = {*genPosDim(), *genPosDim()};
    for (int i = 0; i < nd; ++i) shape.push_back(*gen::inRange<int64_t>(1, 9));
    std::vector<int64_t> kernel, stride, pad, dil, out;
    for (int i = 0; i < nd; ++i) {
      kernel.push_back(*gen::inRange<int64_t>(1, 4));
      stride.push_back(*gen::inRange<int64_t>(1, 4));
      pad.push_back(*gen::inRange<int64_t>(0, kernel.back() / 2 + 1));
      dil.push_back(*gen::inRange<int64_t>(1, 3));
      out.push_back(*gen::inRange<int64_t>(1, 5));
    }
    const bool ceil_mode = *gen::arbitrary<bool>();
    const std::string N = std::to_string(nd) + "d", ceil = boolText(ceil_mode);
    // ceil_mode windows with no ONNX form (a clear refusal): a kernel past the padded input, or
    // PyTorch dropping the last window in some dims but not in others.
    bool ceil_refusal = false, some_floor = false, some_ceil = false;
    for (int i = 0; ceil_mode && i < nd; ++i) {
      const int64_t L = shape[2 + i], s = stride[i], p = pad[i];
      for (int64_t d : {int64_t{1}, dil[i]}) {
        const int64_t span = L + 2 * p - d * (kernel[i] - 1) - 1;
        if (span < 0) { ceil_refusal = true; continue; }
        const int64_t fl = span / s + 1, ce = (span + s - 1) / s + 1;
        const int64_t t = (ce - 1) * s >= L + p ? ce - 1 : ce;
        some_floor = some_floor || (t == fl && t != ce);
        some_ceil = some_ceil || (t == ce && t != fl);
      }
    }
    ceil_refusal = ceil_refusal || (some_floor && some_ceil);
    const std::vector<std::string> ops = {
        "return torch.max_pool" + N + "(x, " + listText(kernel) + ", " + listText(stride) + ", " + listText(pad) + ", " + listText(dil) + ", " + ceil + ")",
        "return torch.avg_pool" + N + "(x, " + listText(kernel) + ", " + listText(stride) + ", " + listText(pad) + ", " + ceil + ", " + boolText(*gen::arbitrary<bool>()) + ")",
        "return torch.adaptive_avg_pool" + N + "(x, " + listText(out) + ")",
        "return torch.adaptive_max_pool" + N + "(x, " + listText(out) + ")[0]",
    };
    Case c;
    c.names = {"x"};
    c.inputs = {In{shape, DType::Float32}};
    c.body = *gen::elementOf(ops);
    c.opset = *genOpset();
    c.seed = *gen::inRange<uint64_t>(0, 1000);
    if (c.opset < 10) c.allowed_refusals = {"opset-too-old"};  // ceil_mode/dilation need opset 10
    if (ceil_refusal && c.body.find("adaptive") == std::string::npos) c.allowed_refusals.push_back("unsupported-form");
    // Adaptive pooling whose windows are uneven has no ONNX pooling form: a clear refusal.
    for (int i = 0; i < nd; ++i)
      if (c.body.find("adaptive") != std::string::npos && out[i] != 1 && shape[2 + i] % out[i] != 0)
        c.allowed_refusals = {"unsupported-form"};
    checkCase(c);
  });
}

// Upsampling by output size or scale factor, nearest/linear/cubic, align_corners both ways.
TEST(OpProperties, InterpolateAlignCorners) {
  checkProperty([] {
    const int nd = *gen::inRange(1, 3);
    std::vector<int64_t> shape = {*genPosDim(), *genPosDim()};
    std::vector<int64_t> size;
    std::vector<double> scales;
    for (int i = 0; i < nd; ++i) {
      shape.push_back(*gen::inRange<int64_t>(1, 7));
      size.push_back(*gen::inRange<int64_t>(1, 13));
      scales.push_back(*gen::elementOf(std::vector<double>{0.5, 1.0, 1.5, 2.0, 3.0, 2.5}));
    }
    std::string sc = "[";
    for (size_t i = 0; i < scales.size(); ++i) sc += (i ? ", " : "") + std::to_string(scales[i]);
    sc += "]";
    const std::string ac = boolText(*gen::arbitrary<bool>());
    const std::string lin = nd == 1 ? "upsample_linear1d" : "upsample_bilinear2d";
    const std::string near = "upsample_nearest" + std::to_string(nd) + "d";
    std::vector<std::string> ops = {
        "return torch." + near + "(x, " + listText(size) + ", None)",
        "return torch." + near + "(x, None, " + sc + ")",
        "return torch." + lin + "(x, " + listText(size) + ", " + ac + ", None)",
        "return torch." + lin + "(x, None, " + ac + ", " + sc + ")",
    };
    if (nd == 2) {
      ops.push_back("return torch.upsample_bicubic2d(x, " + listText(size) + ", " + ac + ", None)");
    }
    Case c;
    c.names = {"x"};
    c.inputs = {In{shape, DType::Float32}};
    c.body = *gen::elementOf(ops);
    c.opset = *genOpset({9, 10, 11, 13, 17});
    c.seed = *gen::inRange<uint64_t>(0, 1000);
    c.allowed_refusals = {"opset-too-old"};
    checkCase(c);
  });
}

// constant (negative pads too), reflect and replicate padding.
TEST(OpProperties, Pad) {
  checkProperty([] {
    const auto shape = *genShape(1, 4).as("shape");
    const int64_t rank = static_cast<int64_t>(shape.size());
    const int64_t np = *gen::inRange<int64_t>(1, std::min<int64_t>(rank, 3) + 1);
    std::vector<int64_t> pads;
    for (int64_t i = 0; i < 2 * np; ++i) pads.push_back(*gen::inRange<int64_t>(-1, 3));
    const std::string mode = *gen::elementOf(std::vector<std::string>{"'constant'", "'reflect'", "'replicate'"});
    Case c;
    c.names = {"x"};
    c.inputs = {In{shape, *genDType({DType::Float32, DType::Float32, DType::Int64})}};
    c.body = *gen::elementOf(std::vector<std::string>{
        "return torch.constant_pad_nd(x, " + listText(pads) + ", 1.5)",
        "return torch.pad(x, " + listText(pads) + ", " + mode + ", None)"});
    c.opset = *genOpset();
    if (c.opset < 11) c.allowed_refusals = {"opset-too-old"};  // int64 or negative reflect/edge pads need Pad-11
    c.seed = *gen::inRange<uint64_t>(0, 1000);
    checkCase(c);
  });
}

TEST(OpProperties, Cumsum) {
  checkProperty([] {
    const auto shape = *genShape(1, 4).as("shape");
    const std::string d = std::to_string(*genAxis(static_cast<int64_t>(shape.size())));
    Case c;
    c.names = {"x"};
    c.inputs = {In{shape, *genDType({DType::Float32, DType::Int64, DType::Int32, DType::Bool})}};
    c.body = *gen::elementOf(std::vector<std::string>{"return torch.cumsum(x, " + d + ")", "return torch.cumsum(x, " + d + ", dtype=6)"});
    c.opset = *genOpset();
    c.seed = *gen::inRange<uint64_t>(0, 1000);
    c.allowed_refusals = {"opset-too-old"};  // CumSum is opset 11
    if (c.opset >= 11) c.allowed_refusals.clear();
    checkCase(c);
  });
}

// topk (largest or smallest, k up to the dim's size, 0 included) and sort/argsort, ties excluded.
TEST(OpProperties, TopkSort) {
  checkProperty([] {
    const auto shape = *genShape(1, 4).as("shape");
    const int64_t rank = static_cast<int64_t>(shape.size());
    const int64_t dim = *genAxis(rank);
    const int64_t n = shape[static_cast<size_t>(norm(dim, rank))];
    const std::string d = std::to_string(dim), desc = boolText(*gen::arbitrary<bool>());
    Case c;
    c.names = {"x"};
    c.inputs = {In{shape, *genDType({DType::Float32, DType::Int64})}};
    c.inputs[0].distinct = true;
    c.body = *gen::elementOf(std::vector<std::string>{
        "return torch.topk(x, " + std::to_string(*gen::inRange<int64_t>(0, n + 1)) + ", " + d + ", " + desc + ", True)",
        "return torch.sort(x, " + d + ", " + desc + ")", "return torch.argsort(x, " + d + ", " + desc + ")"});
    c.opset = *genOpset({10, 11, 13, 17});
    c.seed = *gen::inRange<uint64_t>(0, 1000);
    checkCase(c);
  });
}

// where and masked_fill with broadcasting conditions and mixed dtypes.
TEST(OpProperties, WhereMaskedFill) {
  checkProperty([] {
    const auto a = *genShape(0, 4).as("shape");
    const auto b = *genBroadcastPartner(a).as("shape of b");
    const auto m = *genBroadcastPartner(a).as("shape of the condition");
    const std::vector<DType> dts = {DType::Float32, DType::Int64, DType::Int32, DType::Bool};
    Case c;
    c.names = {"c", "a", "b"};
    c.inputs = {In{m, DType::Bool}, In{a, *genDType(dts)}, In{b, *genDType(dts)}};
    c.body = *gen::elementOf(std::vector<std::string>{
        "return torch.where(c, a, b)", "return torch.where(c, a, 2.5)", "return torch.where(c, 3, b)",
        "return a.masked_fill(c, 7)", "return a.masked_fill(c, -1.5)", "return torch.masked_fill(b, c, a.sum())"});
    c.opset = *genOpset();
    c.seed = *gen::inRange<uint64_t>(0, 1000);
    checkCase(c);
  });
}
}  // namespace
}  // namespace oxport
