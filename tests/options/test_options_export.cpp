// Every export option, checked on the STRUCTURE of the written model (what the option changes),
// on the fixture models of make_models.py. Comparisons with torch.onnx itself are in
// test_options_golden.cpp.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "oxport/model.h"
#include "oxport/preset.h"
#include "oxport/runtime.h"

namespace fs = std::filesystem;
using namespace oxport;

namespace {

fs::path modelPath(const std::string& name) { return fs::path(OXPORT_OPTIONS_DIR) / "models" / (name + ".pt"); }

const Model& load(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Model>> cache;
  auto& m = cache[name];
  if (!m) {
    auto r = Model::load(modelPath(name));
    if (!r.ok()) throw std::runtime_error(r.error().message());
    m = std::make_unique<Model>(std::move(*r));
  }
  return *m;
}

ArgValue T(std::vector<int64_t> shape) {
  TensorSpec s;
  s.shape = std::move(shape);
  return ArgValue::tensor(s);
}

ExportOptions netOptions() {
  ExportOptions o;
  o.args = {T({1, 3, 8, 8})};
  return o;
}

ExportOptions unsupportedOptions(OperatorExportType t) {
  ExportOptions o;
  o.args = {T({2, 4}), T({5})};
  o.operator_export_type = t;
  return o;
}

// ArgsNet: forward(x, n: int, flag: bool, mode: str, scale: float, opt: Optional[Tensor],
//                  ts: List[Tensor], pair: Tuple[Tensor, Tensor], order: List[int],
//                  bias: Optional[Tensor] = None, k: int = 2)
ExportOptions argsOptions() {
  ExportOptions o;
  o.args = {T({2, 4}), ArgValue::integer(3), ArgValue::boolean(true), ArgValue::string("floor"),
            ArgValue::number(0.5), T({4}), ArgValue::list({T({2, 1}), T({2, 2})}),
            ArgValue::list({T({2, 4}), T({2, 4})}), ArgValue::list({ArgValue::integer(1), ArgValue::integer(0)})};
  o.kwargs = {{"bias", T({4})}};
  o.keep_initializers_as_inputs = false;
  return o;
}

fs::path tempDir() {
  static fs::path d = [] {
    fs::path p = fs::temp_directory_path() / ("oxport_options_" + std::to_string(::getpid()));
    fs::create_directories(p);
    return p;
  }();
  return d;
}

onnx::ModelProto parse(const fs::path& p) {
  onnx::ModelProto m;
  std::ifstream f(p, std::ios::binary);
  EXPECT_TRUE(m.ParseFromIstream(&f)) << p;
  return m;
}

struct Exported {
  ExportResult result;
  onnx::ModelProto proto;
  fs::path file;
};

Exported exportOk(const std::string& model, const ExportOptions& o, const std::string& file = "") {
  Exported e;
  e.file = tempDir() / (file.empty() ? model + ".onnx" : file);
  auto r = load(model).exportOnnx(o, OutputTarget::toFile(e.file));
  if (!r.ok()) {
    ADD_FAILURE() << r.error().message();
    return e;
  }
  e.result = *r;
  EXPECT_TRUE(r->stats.checker_passed);
  EXPECT_TRUE(r->stats.shape_inference_passed);
  e.proto = parse(e.file);
  // No unused initializer, whatever the options.
  std::set<std::string> used;
  for (const auto& n : e.proto.graph().node())
    for (const auto& i : n.input()) used.insert(i);
  for (const auto& out : e.proto.graph().output()) used.insert(out.name());
  for (const auto& i : e.proto.graph().initializer()) EXPECT_TRUE(used.count(i.name())) << "unused " << i.name();
  EXPECT_EQ(e.proto.producer_name(), "oxport");
  EXPECT_FALSE(e.proto.producer_version().empty());
  return e;
}

Error exportFails(const std::string& model, const ExportOptions& o) {
  auto r = load(model).exportOnnx(o, OutputTarget::toFile(tempDir() / "failed.onnx"));
  if (r.ok()) {
    ADD_FAILURE() << "the export succeeded";
    return Error(makeError("none", "none"));
  }
  return r.error();
}

std::vector<std::string> inputNames(const onnx::GraphProto& g) {
  std::vector<std::string> v;
  for (const auto& i : g.input()) v.push_back(i.name());
  return v;
}
std::vector<std::string> outputNames(const onnx::GraphProto& g) {
  std::vector<std::string> v;
  for (const auto& i : g.output()) v.push_back(i.name());
  return v;
}
std::vector<std::string> dimsOf(const onnx::ValueInfoProto& vi) {
  std::vector<std::string> v;
  for (const auto& d : vi.type().tensor_type().shape().dim())
    v.push_back(d.has_dim_value() ? std::to_string(d.dim_value()) : d.dim_param());
  return v;
}
int countOp(const onnx::GraphProto& g, const std::string& op, const std::string& domain = "") {
  int n = 0;
  for (const auto& x : g.node()) n += x.op_type() == op && x.domain() == domain;
  return n;
}
const onnx::NodeProto* findOp(const onnx::GraphProto& g, const std::string& op) {
  for (const auto& x : g.node())
    if (x.op_type() == op) return &x;
  return nullptr;
}
const onnx::AttributeProto* findAttr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
std::map<std::string, int64_t> opsets(const onnx::ModelProto& m) {
  std::map<std::string, int64_t> out;
  for (const auto& o : m.opset_import()) out[o.domain()] = o.version();
  return out;
}
std::set<std::string> initNames(const onnx::GraphProto& g) {
  std::set<std::string> s;
  for (const auto& i : g.initializer()) s.insert(i.name());
  return s;
}
bool hasDiagnostic(const std::vector<Diagnostic>& ds, const std::string& code) {
  for (const auto& d : ds)
    if (d.code == code) return true;
  return false;
}
const Diagnostic* findDiagnostic(const Error& e, const std::string& code) {
  for (const auto& d : e.diagnostics())
    if (d.code == code) return &d;
  return nullptr;
}

OnnxRuntime* runtime() {
  static std::unique_ptr<OnnxRuntime> rt = [] {
    auto r = makeDefaultRuntime();
    return r.ok() ? std::move(*r) : nullptr;
  }();
  return rt.get();
}

void expectRuntimeMatches(const std::string& model, const ExportOptions& o, const fs::path& file) {
  ASSERT_TRUE(runtime()) << "no ONNX Runtime";
  VerifyOptions vo;
  vo.extra_sizes = false;
  auto v = verifyExport(load(model), o, file, *runtime(), vo);
  ASSERT_TRUE(v.ok()) << v.error().message();
  EXPECT_TRUE(v->passed) << v->toText();
}

// ---- args ------------------------------------------------------------------------------------

TEST(Args, SingleTensorIsOneInput) {
  auto e = exportOk("plain", netOptions());
  ASSERT_EQ(e.proto.graph().input_size() - e.proto.graph().initializer_size(), 1);
  EXPECT_EQ(dimsOf(e.proto.graph().input(0)), (std::vector<std::string>{"1", "3", "8", "8"}));
}

TEST(Args, NonTensorsAreBakedContainersFlattened) {
  ExportOptions o = argsOptions();
  auto e = exportOk("args", o);
  const auto& g = e.proto.graph();
  // x, opt, ts (2), pair (2), bias: tensors only, in argument order, containers flattened.
  ASSERT_EQ(g.input_size(), 7);
  std::vector<std::vector<std::string>> dims;
  for (const auto& i : g.input()) dims.push_back(dimsOf(i));
  EXPECT_EQ(dims, (std::vector<std::vector<std::string>>{
                      {"2", "4"}, {"4"}, {"2", "1"}, {"2", "2"}, {"2", "4"}, {"2", "4"}, {"4"}}));
  // Output (tensor, [tensor, tensor], {"s": tensor, "m": tensor}) flattened to 5 outputs.
  ASSERT_EQ(g.output_size(), 5);
  EXPECT_EQ(dimsOf(g.output(0)), (std::vector<std::string>{"4", "4"}));
  EXPECT_EQ(dimsOf(g.output(3)), (std::vector<std::string>{"1", "4"}));  // keepdim=True baked
  EXPECT_TRUE(dimsOf(g.output(4)).empty());
  // rounding_mode="floor" baked: a Floor node.
  EXPECT_EQ(countOp(g, "Floor"), 1);
  expectRuntimeMatches("args", o, e.file);
}

TEST(Args, KeywordDefaultsAndNoneForOptional) {
  ExportOptions o = argsOptions();
  o.kwargs.clear();  // bias -> its default None; k -> 2
  o.args[5] = ArgValue::none();  // opt: Optional[Tensor] given None
  o.args[2] = ArgValue::boolean(false);
  auto e = exportOk("args", o);
  const auto& g = e.proto.graph();
  EXPECT_EQ(g.input_size(), 5);  // x, ts (2), pair (2)
  EXPECT_EQ(dimsOf(g.output(3)), (std::vector<std::string>{"4"}));  // keepdim=False baked
  expectRuntimeMatches("args", o, e.file);
  o.kwargs = {{"k", ArgValue::integer(5)}};
  auto e2 = exportOk("args", o, "args_k5.onnx");
  expectRuntimeMatches("args", o, e2.file);
}

TEST(Args, ErrorsNameTheArgument) {
  ExportOptions o = argsOptions();
  o.kwargs = {{"nope", T({4})}};
  auto err = exportFails("args", o);
  const Diagnostic* d = findDiagnostic(err, "unknown-kwarg");
  ASSERT_TRUE(d) << err.message();
  EXPECT_EQ(d->option, "kwargs.nope");
  o = argsOptions();
  o.args.resize(3);
  err = exportFails("args", o);
  d = findDiagnostic(err, "missing-arg");
  ASSERT_TRUE(d) << err.message();
  EXPECT_NE(d->message.find("'mode'"), std::string::npos) << d->message;
  o = argsOptions();
  o.kwargs = {{"n", ArgValue::integer(2)}};
  err = exportFails("args", o);
  EXPECT_TRUE(findDiagnostic(err, "duplicate-arg")) << err.message();
}

// ---- export_params -----------------------------------------------------------------------------

TEST(ExportParams, FalseWritesNoWeightsAndMakesParametersInputs) {
  ExportOptions o = netOptions();
  o.export_params = false;
  auto e = exportOk("plain", o);
  const auto& g = e.proto.graph();
  EXPECT_EQ(g.initializer_size(), 0);
  EXPECT_EQ(inputNames(g), (std::vector<std::string>{"x", "conv.weight", "conv.bias", "fc.weight", "fc.bias"}));
  EXPECT_EQ(dimsOf(g.input(1)), (std::vector<std::string>{"4", "3", "3", "3"}));
  // With batch norm: not folded into the conv (its weights are inputs now).
  auto n = exportOk("net", o, "net_noparams.onnx");
  EXPECT_EQ(countOp(n.proto.graph(), "BatchNormalization"), 1);
  auto names = inputNames(n.proto.graph());
  EXPECT_NE(std::find(names.begin(), names.end(), "bn.running_var"), names.end());
  for (const auto& i : n.proto.graph().initializer()) EXPECT_NE(i.data_type(), 0);
}

// ---- verbose -------------------------------------------------------------------------------------

TEST(Verbose, DocStringsCarryScopeAndLine) {
  ExportOptions o = netOptions();
  o.verbose = true;
  auto e = exportOk("net", o);
  const auto* conv = findOp(e.proto.graph(), "Conv");
  ASSERT_TRUE(conv);
  EXPECT_NE(conv->doc_string().find("conv"), std::string::npos) << conv->doc_string();
  EXPECT_NE(conv->doc_string().find(".py:"), std::string::npos) << conv->doc_string();
  EXPECT_FALSE(e.result.verbose_log.empty());
  EXPECT_NE(e.result.verbose_log.find("aten::"), std::string::npos);
  o.verbose = false;
  auto q = exportOk("net", o, "net_quiet.onnx");
  for (const auto& n : q.proto.graph().node()) EXPECT_TRUE(n.doc_string().empty());
  EXPECT_TRUE(q.result.verbose_log.empty());
}

// ---- training ------------------------------------------------------------------------------------

TEST(Training, EvalFoldsBatchNormAndDropsDropout) {
  auto e = exportOk("net", netOptions());
  EXPECT_EQ(countOp(e.proto.graph(), "BatchNormalization"), 0);
  EXPECT_EQ(countOp(e.proto.graph(), "Dropout"), 0);
  EXPECT_EQ(countOp(e.proto.graph(), "Conv"), 1);
  expectRuntimeMatches("net", netOptions(), e.file);
}

TEST(Training, TrainingKeepsBatchNormAndDropoutInTrainingMode) {
  ExportOptions o = netOptions();
  o.training = TrainingMode::Training;
  o.opset_version = 15;
  auto e = exportOk("net", o);
  const auto& g = e.proto.graph();
  const auto* bn = findOp(g, "BatchNormalization");
  ASSERT_TRUE(bn);
  const auto* tm = findAttr(*bn, "training_mode");
  ASSERT_TRUE(tm);
  EXPECT_EQ(tm->i(), 1);
  const auto* drop = findOp(g, "Dropout");
  ASSERT_TRUE(drop);
  ASSERT_EQ(drop->input_size(), 3);  // data, ratio, training_mode
  EXPECT_TRUE(initNames(g).count("conv.weight"));  // not folded
}

// Dropout has no training form before opset 12 (torch.onnx 1.13 silently writes an inference
// Dropout there). oxport says so: an error naming opset_version with ONNX, and with the default
// ONNX_FALLTHROUGH a custom node plus a warning saying why.
TEST(Training, DropoutBeforeOpset12IsAClearMessage) {
  ExportOptions o = netOptions();
  o.training = TrainingMode::Training;
  o.opset_version = 11;
  o.operator_export_type = OperatorExportType::Onnx;
  auto err = exportFails("net", o);
  // Batch norm (needs 14) fails first; the dropout after it is not tried.
  const Diagnostic* d = findDiagnostic(err, "opset-too-old");
  ASSERT_TRUE(d) << err.message();
  EXPECT_EQ(d->option, "opset_version");
  EXPECT_NE(d->message.find("needs opset 14"), std::string::npos) << d->message;
  o.operator_export_type = OperatorExportType::OnnxFallthrough;
  o.opset_version = 14;  // batch norm has its training form from 14, dropout from 12
  auto ok = exportOk("net", o, "net_train14.onnx");
  EXPECT_EQ(countOp(ok.proto.graph(), "Dropout"), 1);
  o.opset_version = 11;
  auto fb = exportOk("net", o, "net_train11.onnx");
  bool warned = false;
  for (const auto& d : fb.result.diagnostics)
    if (d.code == "fallback-op" && d.message.find("opset 12") != std::string::npos) warned = true;
  EXPECT_TRUE(warned);
  EXPECT_EQ(countOp(fb.proto.graph(), "Dropout"), 0);
}

TEST(Training, PreserveFollowsTheSavedFlag) {
  ExportOptions o = netOptions();
  o.training = TrainingMode::Preserve;
  o.opset_version = 15;
  // A module saved in eval mode: inference form. As torch.onnx 1.13, batch norm is folded into the
  // conv only with EVAL, so here it stays, in inference form.
  auto ev = exportOk("net", o);
  const auto* bn = findOp(ev.proto.graph(), "BatchNormalization");
  ASSERT_TRUE(bn);
  EXPECT_EQ(bn->output_size(), 1);
  const auto* tm = findAttr(*bn, "training_mode");
  EXPECT_TRUE(!tm || tm->i() == 0);
  EXPECT_EQ(countOp(ev.proto.graph(), "Dropout"), 0);
  EXPECT_FALSE(hasDiagnostic(ev.result.diagnostics, "traced-in-training-mode"));
  auto tr = exportOk("net_train", o);
  EXPECT_FALSE(hasDiagnostic(tr.result.diagnostics, "traced-in-training-mode"));
  EXPECT_EQ(countOp(tr.proto.graph(), "BatchNormalization"), 1);
  EXPECT_EQ(countOp(tr.proto.graph(), "Dropout"), 1);
}

TEST(Training, EvalOfAModuleTracedInTrainingModeWarns) {
  auto e = exportOk("net_train", netOptions());
  EXPECT_EQ(countOp(e.proto.graph(), "Dropout"), 0);
  EXPECT_EQ(countOp(e.proto.graph(), "BatchNormalization"), 0);
  bool warned = false;
  for (const auto& d : e.result.diagnostics)
    if (d.code == "traced-in-training-mode") {
      warned = true;
      EXPECT_EQ(d.option, "training");
    }
  EXPECT_TRUE(warned);
}

// ---- input_names / output_names ----------------------------------------------------------------

TEST(Names, FewerNamesThanInputsAndOutputs) {
  ExportOptions o;
  o.args = {T({2, 4}), T({2, 4})};
  o.input_names = {"first"};
  o.output_names = {"y"};
  o.keep_initializers_as_inputs = false;
  auto e = exportOk("two", o);
  auto in = inputNames(e.proto.graph());
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[0], "first");
  EXPECT_EQ(in[1], "b");  // the schema name
  auto out = outputNames(e.proto.graph());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], "y");
  EXPECT_FALSE(out[1].empty());
  EXPECT_NE(out[1], "y");
}

TEST(Names, GeneratedNamesAvoidGivenOnes) {
  ExportOptions o;
  o.args = {T({2, 4}), T({2, 4})};
  o.input_names = {"b"};  // the second input's own name is "b" too
  o.keep_initializers_as_inputs = false;
  auto e = exportOk("two", o);
  EXPECT_EQ(inputNames(e.proto.graph()), (std::vector<std::string>{"b", "b_1"}));
  o.input_names = {"fc.weight"};  // a parameter's name
  auto err = exportFails("two", o);
  EXPECT_EQ(err.first().code, "input-name-taken");
  EXPECT_EQ(err.first().option, "input_names");
}

TEST(Names, TooManyOrDuplicateNamesAreErrors) {
  ExportOptions o;
  o.args = {T({2, 4}), T({2, 4})};
  o.input_names = {"a", "b", "c"};
  auto err = exportFails("two", o);
  ASSERT_EQ(err.first().code, "too-many-input-names");
  EXPECT_EQ(err.first().option, "input_names");
  o.input_names = {};
  o.output_names = {"y", "s", "t"};
  err = exportFails("two", o);
  EXPECT_EQ(err.first().option, "output_names");
  o.output_names = {"y", "y"};
  err = exportFails("two", o);
  EXPECT_EQ(err.first().option.rfind("output_names", 0), 0u) << err.message();
  o.output_names = {};
  o.input_names = {"a", "a"};
  err = exportFails("two", o);
  EXPECT_EQ(err.first().option.rfind("input_names", 0), 0u) << err.message();
  // An output name that is also an input name.
  o.input_names = {"a", "b"};
  o.output_names = {"a"};
  err = exportFails("two", o);
  EXPECT_FALSE(err.first().option.empty()) << err.message();
}

// ---- operator_export_type ----------------------------------------------------------------------

TEST(OperatorExportType, OnnxListsEveryUnsupportedOp) {
  auto err = exportFails("unsupported", unsupportedOptions(OperatorExportType::Onnx));
  std::set<std::string> kinds, paths;
  for (const auto& d : err.diagnostics()) {
    kinds.insert(d.node_kind);
    paths.insert(d.module_path);
    EXPECT_TRUE(d.location.known()) << d.toString();
    EXPECT_EQ(d.option, "operator_export_type");
  }
  EXPECT_TRUE(kinds.count("aten::special_zeta")) << err.message();
  EXPECT_TRUE(kinds.count("aten::special_bessel_j0")) << err.message();
  EXPECT_TRUE(paths.count("search"));
  EXPECT_TRUE(paths.count("hist"));
}

TEST(OperatorExportType, FallthroughKeepsOpsInTheirDomain) {
  auto e = exportOk("unsupported", unsupportedOptions(OperatorExportType::OnnxFallthrough));
  const auto& g = e.proto.graph();
  EXPECT_EQ(countOp(g, "special_zeta", "org.pytorch.aten"), 1);
  EXPECT_EQ(countOp(g, "special_bessel_j0", "org.pytorch.aten"), 1);
  EXPECT_EQ(countOp(g, "Gemm"), 1);
  const auto* s = findOp(g, "special_zeta");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->input_size(), 1);
  EXPECT_TRUE(findAttr(*s, "other"));
  EXPECT_EQ(opsets(e.proto)["org.pytorch.aten"], 1);
  EXPECT_TRUE(hasDiagnostic(e.result.diagnostics, "fallback-op"));
}

TEST(OperatorExportType, AtenMakesEveryAtenOpAnAtenNode) {
  auto e = exportOk("unsupported", unsupportedOptions(OperatorExportType::OnnxAten));
  const auto& g = e.proto.graph();
  std::multiset<std::string> ops;
  for (const auto& n : g.node()) {
    if (n.op_type() == "Identity" || n.op_type() == "Constant") continue;
    EXPECT_EQ(n.op_type(), "ATen");
    EXPECT_EQ(n.domain(), "org.pytorch.aten");
    const auto* a = findAttr(n, "operator");
    ASSERT_TRUE(a);
    ops.insert(a->s());
    EXPECT_TRUE(findAttr(n, "overload_name"));
  }
  EXPECT_EQ(ops, (std::multiset<std::string>{"linear", "relu", "special_zeta", "special_bessel_j0", "slice", "add"}));
  EXPECT_EQ(opsets(e.proto)["org.pytorch.aten"], 1);
}

TEST(OperatorExportType, AtenFallbackOnlyForUnsupported) {
  auto e = exportOk("unsupported", unsupportedOptions(OperatorExportType::OnnxAtenFallback));
  const auto& g = e.proto.graph();
  EXPECT_EQ(countOp(g, "Gemm"), 1);
  EXPECT_EQ(countOp(g, "Relu"), 1);
  EXPECT_EQ(countOp(g, "ATen", "org.pytorch.aten"), 2);
}

// ---- opset_version -----------------------------------------------------------------------------

TEST(Opset, EveryOpsetFrom9To17) {
  for (int op = kMinOpset; op <= kMaxOpset; ++op) {
    SCOPED_TRACE(op);
    ExportOptions o = netOptions();
    o.opset_version = op;
    auto e = exportOk("net", o, "net_opset" + std::to_string(op) + ".onnx");
    EXPECT_EQ(opsets(e.proto)[""], op);
    expectRuntimeMatches("net", o, e.file);
  }
  for (int bad : {8, 18}) {
    ExportOptions o = netOptions();
    o.opset_version = bad;
    auto err = exportFails("net", o);
    EXPECT_EQ(err.first().option, "opset_version");
  }
  EXPECT_EQ(ExportOptions().opset_version, 11);
}

// ---- do_constant_folding -----------------------------------------------------------------------

TEST(ConstantFolding, FoldsParameterArithmeticIntoInitializers) {
  auto e = exportOk("net", netOptions());
  const auto& g = e.proto.graph();
  EXPECT_EQ(countOp(g, "Transpose"), 0);
  EXPECT_EQ(countOp(g, "Mul"), 0);
  EXPECT_EQ(g.initializer_size(), 5);  // conv w+b (bn folded), fc w+b, (w*2).t()
  EXPECT_TRUE(ExportOptions().do_constant_folding);
}

TEST(ConstantFolding, FalseKeepsTheArithmetic) {
  ExportOptions o = netOptions();
  o.do_constant_folding = false;
  auto e = exportOk("net", o);
  const auto& g = e.proto.graph();
  EXPECT_EQ(countOp(g, "Mul"), 1);
  EXPECT_EQ(countOp(g, "Transpose"), 1);
  EXPECT_TRUE(initNames(g).count("w"));
  expectRuntimeMatches("net", o, e.file);
}

TEST(ConstantFolding, IdenticalInitializersKeptOnce) {
  ExportOptions o;
  o.args = {T({2, 4})};
  o.keep_initializers_as_inputs = false;
  auto e = exportOk("twin", o);
  // a.weight == b.weight and a.bias == b.bias (copies); `unused` is not used by forward.
  // weight and bias; the scalar 2 is computed by the export, so a Constant node, not a weight.
  EXPECT_EQ(e.proto.graph().initializer_size(), 2);
  auto constants = [](const onnx::ModelProto& m) {
    int k = 0;
    for (const auto& n : m.graph().node()) k += n.op_type() == "Constant";
    return k;
  };
  EXPECT_EQ(constants(e.proto), 1);
  for (const auto& i : e.proto.graph().initializer()) EXPECT_EQ(i.name().find("unused"), std::string::npos);
  expectRuntimeMatches("twin", o, e.file);
  o.do_constant_folding = false;
  auto n = exportOk("twin", o, "twin_nofold.onnx");
  EXPECT_EQ(n.proto.graph().initializer_size(), 4);
  EXPECT_EQ(constants(n.proto), 1);
}

// ---- dynamic_axes --------------------------------------------------------------------------------

TEST(DynamicAxes, DictAndListForms) {
  ExportOptions o = netOptions();
  o.input_names = {"x"};
  o.output_names = {"y"};
  DynamicAxisSpec d;
  d.axes = {{0, "batch"}, {2, "h"}};
  o.dynamic_axes["x"] = d;
  DynamicAxisSpec l;
  l.list_form = true;
  l.axes = {{0, ""}};
  o.dynamic_axes["y"] = l;
  auto e = exportOk("net", o);
  EXPECT_EQ(dimsOf(e.proto.graph().input(0)), (std::vector<std::string>{"batch", "3", "h", "8"}));
  EXPECT_EQ(dimsOf(e.proto.graph().output(0)), (std::vector<std::string>{"y_dynamic_axes_1", "3"}));
  // List form: names numbered by position in the list, as torch.onnx does.
  DynamicAxisSpec l2;
  l2.list_form = true;
  l2.axes = {{0, ""}, {2, ""}};
  o.dynamic_axes["x"] = l2;
  auto e2 = exportOk("net", o, "net_dyn2.onnx");
  EXPECT_EQ(dimsOf(e2.proto.graph().input(0)),
            (std::vector<std::string>{"x_dynamic_axes_1", "3", "x_dynamic_axes_2", "8"}));
  VerifyOptions vo;
  ASSERT_TRUE(runtime());
  auto v = verifyExport(load("net"), o, e2.file, *runtime(), vo);
  ASSERT_TRUE(v.ok()) << v.error().message();
  EXPECT_TRUE(v->passed) << v->toText();
}

TEST(DynamicAxes, UnknownNamesAndAxesOutOfRange) {
  ExportOptions o = netOptions();
  o.input_names = {"x"};
  DynamicAxisSpec d;
  d.axes = {{0, "batch"}};
  o.dynamic_axes["nope"] = d;
  auto err = exportFails("net", o);
  const Diagnostic* u = findDiagnostic(err, "dynamic-axes-unknown-name");
  ASSERT_TRUE(u) << err.message();
  EXPECT_EQ(u->option, "dynamic_axes.nope");
  EXPECT_NE(u->hint.find("x"), std::string::npos) << u->hint;
  o.dynamic_axes.clear();
  d.axes = {{4, "w"}};
  o.dynamic_axes["x"] = d;
  err = exportFails("net", o);
  const Diagnostic* r = findDiagnostic(err, "dynamic-axes-out-of-range");
  ASSERT_TRUE(r) << err.message();
  EXPECT_EQ(r->option, "dynamic_axes.x");
}

// ---- keep_initializers_as_inputs ---------------------------------------------------------------

TEST(KeepInitializersAsInputs, NoneTrueFalse) {
  struct Row {
    std::optional<bool> keep;
    OperatorExportType type;
    bool listed;
  };
  const Row rows[] = {{std::nullopt, OperatorExportType::OnnxFallthrough, true},
                      {std::nullopt, OperatorExportType::Onnx, false},
                      {std::nullopt, OperatorExportType::OnnxAtenFallback, true},
                      {std::nullopt, OperatorExportType::OnnxAten, true},
                      {true, OperatorExportType::Onnx, true},
                      {false, OperatorExportType::OnnxFallthrough, false}};
  int k = 0;
  for (const auto& row : rows) {
    SCOPED_TRACE(k);
    ExportOptions o = netOptions();
    o.keep_initializers_as_inputs = row.keep;
    o.operator_export_type = row.type;
    auto e = exportOk("net", o, "net_keep" + std::to_string(k++) + ".onnx");
    const auto& g = e.proto.graph();
    auto inits = initNames(g);
    int listed = 0;
    for (const auto& i : g.input()) listed += inits.count(i.name()) ? 1 : 0;
    EXPECT_EQ(listed, row.listed ? g.initializer_size() : 0);
    EXPECT_EQ(g.input_size() - listed, 1);
  }
}

// ---- custom_opsets -------------------------------------------------------------------------------

TEST(CustomOpsets, VersionPerDomainDefaultOneUnusedWarns) {
  ExportOptions o = unsupportedOptions(OperatorExportType::OnnxFallthrough);
  o.custom_opsets = {{"org.pytorch.aten", 2}, {"my.unused", 3}};
  auto e = exportOk("unsupported", o);
  auto os = opsets(e.proto);
  EXPECT_EQ(os["org.pytorch.aten"], 2);
  EXPECT_FALSE(os.count("my.unused"));
  bool warned = false;
  for (const auto& d : e.result.diagnostics)
    if (d.code == "custom-opset-unused" && d.option.find("my.unused") != std::string::npos) warned = true;
  EXPECT_TRUE(warned);
}

// ---- f: file, stream, atomic, external data ------------------------------------------------------

TEST(Output, StreamHoldsTheSameModel) {
  std::ostringstream os;
  auto r = load("net").exportOnnx(netOptions(), OutputTarget::toStream(os));
  ASSERT_TRUE(r.ok()) << r.error().message();
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(os.str()));
  auto f = exportOk("net", netOptions(), "net_file.onnx");
  EXPECT_EQ(m.graph().node_size(), f.proto.graph().node_size());
  EXPECT_EQ(m.graph().initializer_size(), f.proto.graph().initializer_size());
}

TEST(Output, FailedOrCancelledExportLeavesTheOldFile) {
  const fs::path file = tempDir() / "keep_me.onnx";
  {
    std::ofstream f(file);
    f << "old contents";
  }
  auto r = load("unsupported").exportOnnx(unsupportedOptions(OperatorExportType::Onnx), OutputTarget::toFile(file));
  EXPECT_FALSE(r.ok());
  CancelToken cancel;
  ProgressFn progress = [&](Phase p, double, const std::string&) {
    if (p == Phase::Serialize) cancel.cancel();  // the last moment before writing
  };
  auto r2 = load("net").exportOnnx(netOptions(), OutputTarget::toFile(file), progress, cancel);
  EXPECT_FALSE(r2.ok());
  std::ifstream f(file);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "old contents");
  for (const auto& entry : fs::directory_iterator(tempDir()))
    EXPECT_EQ(entry.path().filename().string().find("keep_me.onnx."), std::string::npos) << entry.path();
}

// The 2 GiB limit lowered through the test-only variable OXPORT_EXTERNAL_DATA_THRESHOLD (bytes).
TEST(Output, ExternalDataBesideTheModel) {
  ExportOptions o;
  o.args = {T({2, 256})};
  ::setenv("OXPORT_EXTERNAL_DATA_THRESHOLD", "100000", 1);
  auto e = exportOk("big", o, "net_external.onnx");
  ::unsetenv("OXPORT_EXTERNAL_DATA_THRESHOLD");
  EXPECT_TRUE(e.result.stats.external_data);
  const fs::path data = tempDir() / "net_external.onnx.data";
  ASSERT_TRUE(fs::exists(data));
  int external = 0;
  for (const auto& t : e.proto.graph().initializer()) {
    const bool big = t.dims_size() == 2 && t.dims(0) == 256 && t.dims(1) == 256;
    if (big) EXPECT_EQ(t.data_location(), onnx::TensorProto::EXTERNAL);
    if (t.data_location() != onnx::TensorProto::EXTERNAL) {
      EXPECT_TRUE(t.has_raw_data());
      continue;
    }
    ++external;
    std::map<std::string, std::string> kv;
    for (const auto& x : t.external_data()) kv[x.key()] = x.value();
    EXPECT_EQ(kv["location"], "net_external.onnx.data");
    EXPECT_EQ(std::stoll(kv["offset"]) % 4096, 0);
    EXPECT_LE(std::stoll(kv["offset"]) + std::stoll(kv["length"]), static_cast<long long>(fs::file_size(data)));
    EXPECT_FALSE(t.has_raw_data());
  }
  EXPECT_EQ(external, 3);  // tensors of 1 KiB or more (both weights, the first bias)
  EXPECT_LT(fs::file_size(e.file), 100000u);
  expectRuntimeMatches("big", o, e.file);
  // A stream cannot hold external data: a clear error, nothing half-written.
  ::setenv("OXPORT_EXTERNAL_DATA_THRESHOLD", "100000", 1);
  std::ostringstream os;
  auto r = load("big").exportOnnx(o, OutputTarget::toStream(os));
  ::unsetenv("OXPORT_EXTERNAL_DATA_THRESHOLD");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().first().code, "too-large-for-stream");
  EXPECT_TRUE(os.str().empty());
}

// The real thing: a model with more than 2 GiB of weights (protobuf's limit) is written with its
// weights in external data beside it, and ONNX Runtime runs it. Slow (writes ~6 GiB, needs ~10 GiB
// of memory), so only with OXPORT_TEST_LARGE=1.
TEST(Output, LargeModelPast2GiBGoesToExternalData) {
  const char* on = std::getenv("OXPORT_TEST_LARGE");
  if (!on || std::string(on) != "1") GTEST_SKIP() << "set OXPORT_TEST_LARGE=1 to run";
  const fs::path dir = tempDir() / "large";
  fs::create_directories(dir);
  const fs::path pt = dir / "large.pt";
  if (!fs::exists(pt)) {
    std::string cmd = std::string(OXPORT_PYTHON) + " " + OXPORT_MAKE_MODELS + " --large " + pt.string();
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }
  auto model = Model::load(pt);
  ASSERT_TRUE(model.ok()) << model.error().message();
  ExportOptions o;
  o.args = {T({1, 16384})};
  const fs::path file = dir / "large.onnx";
  auto r = model->exportOnnx(o, OutputTarget::toFile(file));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->stats.external_data);
  EXPECT_TRUE(r->stats.checker_passed);
  EXPECT_LT(fs::file_size(file), 1u << 20);
  EXPECT_GT(fs::file_size(dir / "large.onnx.data"), (1ull << 31));
  onnx::ModelProto m = parse(file);
  for (const auto& t : m.graph().initializer())
    if (t.dims_size() == 2) EXPECT_EQ(t.data_location(), onnx::TensorProto::EXTERNAL) << t.name();
  ASSERT_TRUE(runtime());
  VerifyOptions vo;
  vo.extra_sizes = false;
  auto v = verifyExport(*model, o, file, *runtime(), vo);
  ASSERT_TRUE(v.ok()) << v.error().message();
  EXPECT_TRUE(v->passed) << v->toText();
  fs::remove_all(dir);
}

}  // namespace
