// Scripted control flow (tests/control/gen_control.py): each torch.jit.script model is exported
// once (opsets 11 and 13) with its first input set, then the same ONNX file is verified against
// libtorch on every input set of the case: different branches taken, different loop counts,
// other sizes of the dynamic axes. With graph_mode "trace" the same models are re-traced on the
// first input set: the file has no If/Loop, matches libtorch on that input set, and the export
// warns for every data-dependent if and loop it unrolled.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>

#include "oxport/model.h"
#include "oxport/preset.h"
#include "oxport/runtime.h"

namespace fs = std::filesystem;
using namespace oxport;

namespace {

struct ControlCase {
  std::string name, model;
  std::vector<nlohmann::json> input_sets;
  nlohmann::json dynamic;
  std::vector<std::string> ops;
  std::vector<std::string> out_dtypes;  // when given: the outputs' dtypes, in order
  std::string script_error;             // when given: the script export fails with this code
  bool trace_exact = false;             // trace mode unrolls nothing that depends on the data
  std::vector<std::string> warnings;     // codes the script export must warn with
  std::vector<std::string> input_names{"x"};
  int opset = 11;
  GraphMode mode = GraphMode::Script;
};

std::string caseName(const ControlCase& c) {
  return c.name + "_opset" + std::to_string(c.opset) + (c.mode == GraphMode::Trace ? "_trace" : "");
}

void PrintTo(const ControlCase& c, std::ostream* os) { *os << caseName(c); }

std::vector<ControlCase> loadCases() {
  std::vector<ControlCase> out;
  std::ifstream f(fs::path(OXPORT_CONTROL_DIR) / "manifest.json");
  if (!f) return out;
  for (const auto& row : nlohmann::json::parse(f)) {
    std::vector<int> opsets{11, 13};
    if (row.contains("opsets")) opsets = row["opsets"].get<std::vector<int>>();
    for (int opset : opsets) {
      for (GraphMode mode : {GraphMode::Script, GraphMode::Trace}) {
        ControlCase c;
        c.name = row["name"];
        c.model = row["model"];
        for (const auto& s : row["input_sets"]) c.input_sets.push_back(s);
        c.dynamic = row["dynamic"];
        c.ops = row["ops"].get<std::vector<std::string>>();
        c.out_dtypes = row["out_dtypes"].get<std::vector<std::string>>();
        c.script_error = row["script_error"];
        c.trace_exact = row.value("trace_exact", false);
        if (row.contains("warnings")) c.warnings = row["warnings"].get<std::vector<std::string>>();
        if (row.contains("input_names")) c.input_names = row["input_names"].get<std::vector<std::string>>();
        c.opset = opset;
        c.mode = mode;
        out.push_back(c);
      }
    }
  }
  return out;
}

OnnxRuntime& runtime() {
  static std::unique_ptr<OnnxRuntime> rt = [] {
    auto r = makeDefaultRuntime();
    return r.ok() ? std::move(*r) : std::unique_ptr<OnnxRuntime>();
  }();
  return *rt;
}

ExportOptions optionsFor(const ControlCase& c, const nlohmann::json& args) {
  nlohmann::json preset = {{"args", args}, {"input_names", c.input_names}, {"dynamic_axes", c.dynamic},
                           {"opset_version", c.opset}, {"graph_mode", graphModeName(c.mode)}};
  auto p = parsePreset(preset.dump());
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message());
  return p.ok() ? p->options : ExportOptions{};
}

class ControlFlowTest : public ::testing::TestWithParam<ControlCase> {};

TEST_P(ControlFlowTest, MatchesLibtorchOnEveryInputSet) {
  const ControlCase& c = GetParam();
  ASSERT_TRUE(makeDefaultRuntime().ok()) << "ONNX Runtime is not available";
  auto model = Model::load(fs::path(OXPORT_CONTROL_DIR) / c.model);
  ASSERT_TRUE(model.ok()) << model.error().message();
  ExportOptions options = optionsFor(c, c.input_sets.at(0));
  if (c.mode == GraphMode::Script && !c.script_error.empty()) {
    // No ONNX form: the error names the node and its line, and points to trace mode.
    std::ostringstream sink;
    auto r = model->exportOnnx(options, OutputTarget::toStream(sink));
    ASSERT_FALSE(r.ok()) << "the script export of " << c.name << " should fail";
    const Diagnostic& d = r.error().first();
    EXPECT_EQ(d.code, c.script_error) << d.toString();
    EXPECT_FALSE(d.node_kind.empty()) << d.toString();
    EXPECT_GT(d.location.line, 0) << d.toString();
    EXPECT_NE(d.hint.find("--graph-mode trace"), std::string::npos) << d.toString();
    return;
  }
  fs::path out = fs::path(OXPORT_CONTROL_DIR) / "out" / (caseName(c) + ".onnx");
  fs::create_directories(out.parent_path());
  auto r = model->exportOnnx(options, OutputTarget::toFile(out));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->stats.checker_passed);
  size_t unrolled = 0;
  for (const auto& d : r->diagnostics) unrolled += d.code == "control-flow-unrolled";
  // In trace mode only the first input set (the one traced) must match: the others take other
  // branches or loop counts, which the traced file does not hold.
  size_t verified_sets = c.input_sets.size();
  if (c.mode == GraphMode::Script) {
    for (const auto& op : c.ops) EXPECT_GT(r->stats.onnx_op_histogram[op], 0) << op << " missing";
    for (const auto& code : c.warnings) {
      bool found = false;
      for (const auto& d : r->diagnostics) found = found || (d.code == code && d.location.line > 0);
      EXPECT_TRUE(found) << "no " << code << " warning with a source line";
    }
    EXPECT_EQ(unrolled, 0u);
  } else {
    EXPECT_EQ(r->stats.onnx_op_histogram["If"], 0);
    EXPECT_EQ(r->stats.onnx_op_histogram["Loop"], 0);
    // Cases whose script export has an If or Loop depend on the data: each such construct warns.
    if ((c.ops.empty() && c.script_error.empty()) || c.trace_exact) EXPECT_EQ(unrolled, 0u);
    else EXPECT_GT(unrolled, 0u) << "no control-flow-unrolled warning";
    if (!c.trace_exact) verified_sets = 1;
  }
  if (!c.out_dtypes.empty()) {
    // Integer and bool outputs take part in the comparison (verification needs equal dtypes and
    // equal elements for them): libtorch's own outputs have these dtypes.
    auto reference = model->runReference(options);
    ASSERT_TRUE(reference.ok()) << reference.error().message();
    std::vector<std::string> dtypes;
    for (const auto& t : *reference) dtypes.push_back(dtypeName(t.tensor.dtype));
    EXPECT_EQ(dtypes, c.out_dtypes);
  }
  for (size_t i = 0; i < verified_sets; ++i) {
    ExportOptions run = optionsFor(c, c.input_sets[i]);
    VerifyOptions vo;
    vo.extra_sizes = false;
    auto report = verifyExport(*model, run, out, runtime(), vo);
    ASSERT_TRUE(report.ok()) << report.error().message();
    EXPECT_TRUE(report->passed) << "input set " << i << ": " << c.input_sets[i].dump() << "\n" << report->toText();
  }
}

INSTANTIATE_TEST_SUITE_P(Control, ControlFlowTest, ::testing::ValuesIn(loadCases()),
                         [](const ::testing::TestParamInfo<ControlCase>& i) {
                           return caseName(i.param);
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ControlFlowTest);

// Exports control fixture `file` with one input of `shape` (`tweak` sets other options) and
// expects a refusal: its first diagnostic (an empty one, after a test failure, when the fixture
// does not load or the export succeeds).
Diagnostic refusal(const char* file, const std::vector<int64_t>& shape,
                   const std::function<void(ExportOptions&)>& tweak = nullptr) {
  auto model = Model::load(fs::path(OXPORT_CONTROL_DIR) / file);
  if (!model.ok()) {
    ADD_FAILURE() << file << ": " << model.error().message();
    return {};
  }
  ExportOptions options;
  options.args = {ArgValue::tensor(TensorSpec{shape})};
  if (tweak) tweak(options);
  std::ostringstream sink;
  auto r = model->exportOnnx(options, OutputTarget::toStream(sink));
  if (r.ok()) {
    ADD_FAILURE() << file << " was exported; a refusal was expected";
    return {};
  }
  return r.error().first();
}

// A raise on a data-dependent branch that the example inputs pass is left out of the file, as
// torch.onnx leaves it out: one data-check-dropped warning names its line (both graph modes).
TEST(ControlFlowChecks, RaiseInDataDependentBranchIsLeftOutWithAWarning) {
  auto model = Model::load(fs::path(OXPORT_CONTROL_DIR) / "raises_on_data.pt");
  ASSERT_TRUE(model.ok()) << model.error().message();
  for (GraphMode mode : {GraphMode::Script, GraphMode::Trace}) {
    ExportOptions options;
    options.graph_mode = mode;
    options.args = {ArgValue::tensor(TensorSpec{{2, 3}})};
    std::ostringstream sink;
    auto r = model->exportOnnx(options, OutputTarget::toStream(sink));
    ASSERT_TRUE(r.ok()) << r.error().message();
    ASSERT_EQ(r->diagnostics.size(), 1u);
    const Diagnostic& d = r->diagnostics[0];
    EXPECT_EQ(d.severity, Severity::Warning);
    EXPECT_EQ(d.code, "data-check-dropped");
    EXPECT_EQ(d.node_kind, "prim::If");
    EXPECT_NE(d.message.find("not in the ONNX file"), std::string::npos) << d.message;
    EXPECT_GT(d.location.line, 0);
    EXPECT_EQ(r->stats.onnx_op_histogram["If"], 0);
  }
}

// Trace mode really records one path: the file made from an input that takes the then-branch
// gives the then-branch's result for an input that takes the else-branch, which libtorch does not.
TEST(ControlFlowTrace, OtherBranchIsNotInTheFile) {
  ASSERT_TRUE(makeDefaultRuntime().ok()) << "ONNX Runtime is not available";
  auto model = Model::load(fs::path(OXPORT_CONTROL_DIR) / "data_if.pt");
  ASSERT_TRUE(model.ok()) << model.error().message();
  ExportOptions options;
  options.graph_mode = GraphMode::Trace;
  options.opset_version = 9;  // no If left, so opsets below 11 work too
  options.args = {ArgValue::tensor(TensorSpec{{3, 4}, DType::Float32, FillKind::Ones})};
  fs::path out = fs::path(OXPORT_CONTROL_DIR) / "out" / "data_if_trace_opset9.onnx";
  fs::create_directories(out.parent_path());
  auto r = model->exportOnnx(options, OutputTarget::toFile(out));
  ASSERT_TRUE(r.ok()) << r.error().message();
  VerifyOptions vo;
  vo.extra_sizes = false;
  auto same = verifyExport(*model, options, out, runtime(), vo);
  ASSERT_TRUE(same.ok()) << same.error().message();
  EXPECT_TRUE(same->passed) << same->toText();
  ExportOptions other = options;
  other.args = {ArgValue::tensor(TensorSpec{{3, 4}, DType::Float32, FillKind::Zeros})};
  auto differs = verifyExport(*model, other, out, runtime(), vo);
  ASSERT_TRUE(differs.ok()) << differs.error().message();
  EXPECT_FALSE(differs->passed) << "the else-branch input matched a file traced through the then-branch";
}

// None cannot leave an ONNX If; a list whose length depends on the inputs (a sequence) cannot be
// a plain output: the error says which value and what to do.
TEST(ControlFlowErrors, NoneOrListLeavingControlFlowSaysWhatToDo) {
  struct Want {
    const char* model;
    const char* message;
    const char* hint;
  };
  for (const Want& w : {Want{"if_may_give_none.pt", "output 0 of the else-branch of prim::If is a None",
                             "torch.zeros instead of None"},
                        Want{"if_gives_list.pt", "returns list %r, whose length depends on the inputs",
                             "return torch.stack(list)"},
                        Want{"returns_growing_list.pt", "returns list %outs",
                             "return torch.stack(list)"}}) {
    const Diagnostic d = refusal(w.model, {2, 3}, [](ExportOptions& o) {
      o.input_names = {"x"};
      o.dynamic_axes["x"] = DynamicAxisSpec{true, {{0, ""}}};  // a loop over x.size(0) stays a loop
    });
    EXPECT_NE(d.message.find(w.message), std::string::npos) << w.model << ": " << d.message;
    EXPECT_NE(d.hint.find(w.hint), std::string::npos) << w.model << ": " << d.hint;
  }
}

// Reading a dict that holds input-dependent tensors has no ONNX form in either mode: the error
// says so at the read (not a confusing message about an integer index).
TEST(ControlFlowErrors, DictLookupIsRefusedClearly) {
  auto model = Model::load(fs::path(OXPORT_CONTROL_DIR) / "dict_lookup.pt");
  ASSERT_TRUE(model.ok()) << model.error().message();
  for (GraphMode mode : {GraphMode::Script, GraphMode::Trace}) {
    ExportOptions options;
    options.graph_mode = mode;
    options.operator_export_type = OperatorExportType::Onnx;
    options.args = {ArgValue::tensor(TensorSpec{{2, 3}})};
    std::ostringstream sink;
    auto r = model->exportOnnx(options, OutputTarget::toStream(sink));
    if (mode == GraphMode::Trace) {
      // Trace mode keeps the path the example takes: the dict is rebuilt at each write and read
      // back by key, with the unrolled if reported.
      ASSERT_TRUE(r.ok()) << r.error().message();
      size_t unrolled = 0;
      for (const auto& d : r->diagnostics) unrolled += d.code == "control-flow-unrolled";
      EXPECT_GT(unrolled, 0u);
      continue;
    }
    ASSERT_FALSE(r.ok()) << graphModeName(mode);
    bool found = false;
    for (const auto& d : r.error().diagnostics())
      found = found || (d.code == "unsupported-form" && d.node_kind == "prim::If" &&
                        d.message.find("ONNX has no dicts") != std::string::npos && d.location.line > 0);
    EXPECT_TRUE(found) << graphModeName(mode) << ":\n" << r.error().message();
  }
}

// The example run takes dynamic values as meta tensors (shapes and dtypes, no compute) when
// nothing needs their data; a condition computed from a tensor's values needs it, so that run
// starts again on real tensors, and the file still takes both branches right.
TEST(ExampleRun, MetaUnlessADecisionNeedsTheData) {
  ASSERT_TRUE(makeDefaultRuntime().ok()) << "ONNX Runtime is not available";
  auto exportCase = [](const std::string& name, const nlohmann::json& args, GraphMode mode,
                       const fs::path& out) -> Result<ExportResult> {
    auto model = Model::load(fs::path(OXPORT_CONTROL_DIR) / (name + ".pt"));
    if (!model.ok()) return model.error();
    ControlCase c;
    c.dynamic = {{"x", {0}}};
    c.mode = mode;
    return model->exportOnnx(optionsFor(c, args), OutputTarget::toFile(out));
  };
  const nlohmann::json x34 = {{{"tensor", {{"shape", {3, 4}}, {"fill", "ones"}}}}};
  fs::create_directories(fs::path(OXPORT_CONTROL_DIR) / "out");
  // Sizes decide a loop's count and a reshape: the meta run is enough.
  for (const char* name : {"loop_over_size", "sizes_list_arithmetic"}) {
    for (GraphMode mode : {GraphMode::Script, GraphMode::Trace}) {
      fs::path out = fs::path(OXPORT_CONTROL_DIR) / "out" / (std::string(name) + "_meta.onnx");
      const nlohmann::json args = std::string(name) == "sizes_list_arithmetic"
                                      ? nlohmann::json{{{"tensor", {{"shape", {2, 3, 4}}}}}}
                                      : x34;
      auto r = exportCase(name, args, mode, out);
      ASSERT_TRUE(r.ok()) << name << ": " << r.error().message();
      EXPECT_EQ(r->stats.example_run, "meta") << name << " " << graphModeName(mode);
    }
  }
  // `if x.mean() > 0`: the condition needs x's values.
  for (GraphMode mode : {GraphMode::Script, GraphMode::Trace}) {
    fs::path out = fs::path(OXPORT_CONTROL_DIR) / "out" / (std::string("data_if_fallback_") + graphModeName(mode) + ".onnx");
    auto r = exportCase("data_if", x34, mode, out);
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_EQ(r->stats.example_run.rfind("real (fallback: ", 0), 0u) << r->stats.example_run;
    EXPECT_NE(r->stats.example_run.find("meta"), std::string::npos) << r->stats.example_run;
    size_t unrolled = 0;
    for (const auto& d : r->diagnostics) unrolled += d.code == "control-flow-unrolled";
    EXPECT_EQ(unrolled, mode == GraphMode::Trace ? 1u : 0u);  // the meta try left no warning behind
    auto model = Model::load(fs::path(OXPORT_CONTROL_DIR) / "data_if.pt");
    ASSERT_TRUE(model.ok());
    for (const char* fill : {"ones", "zeros"}) {
      if (mode == GraphMode::Trace && std::string(fill) == "zeros") continue;  // one path only
      ControlCase c;
      c.dynamic = {{"x", {0}}};
      c.mode = mode;
      VerifyOptions vo;
      vo.extra_sizes = false;
      auto report = verifyExport(*model, optionsFor(c, {{{"tensor", {{"shape", {3, 4}}, {"fill", fill}}}}}), out,
                                 runtime(), vo);
      ASSERT_TRUE(report.ok()) << report.error().message();
      EXPECT_TRUE(report->passed) << graphModeName(mode) << " " << fill << "\n" << report->toText();
    }
  }
  // The escape hatch.
  ::setenv("OXPORT_META_RUN", "0", 1);
  fs::path out = fs::path(OXPORT_CONTROL_DIR) / "out" / "loop_over_size_real.onnx";
  auto r = exportCase("loop_over_size", x34, GraphMode::Script, out);
  ::unsetenv("OXPORT_META_RUN");
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->stats.example_run, "real (OXPORT_META_RUN=0)");
}

// roll, max_pool3d and grid_sample have no Meta kernel in C++ libtorch 1.13, but their results'
// shapes follow from the arguments' shapes: each runs alone on zero-filled tensors and the rest of
// the run stays meta (it used to fall back to a real forward pass of the whole model: Swin, MViT,
// S3D, RAFT). The file is the real run's, byte for byte, and matches libtorch.
TEST(ExampleRun, OpsWithoutMetaKernelsKeepTheRunMeta) {
  ASSERT_TRUE(makeDefaultRuntime().ok()) << "ONNX Runtime is not available";
  auto model = Model::load(fs::path(OXPORT_CONTROL_DIR) / "shape_only_ops.pt");
  ASSERT_TRUE(model.ok()) << model.error().message();
  ExportOptions options;
  options.args = {ArgValue::tensor(TensorSpec{{2, 3, 4, 8, 10}}), ArgValue::tensor(TensorSpec{{2, 5, 6, 2}})};
  options.input_names = {"x", "grid"};
  options.opset_version = 17;
  fs::create_directories(fs::path(OXPORT_CONTROL_DIR) / "out");
  const fs::path out = fs::path(OXPORT_CONTROL_DIR) / "out" / "shape_only_ops.onnx";
  const fs::path real_out = fs::path(OXPORT_CONTROL_DIR) / "out" / "shape_only_ops.real.onnx";
  auto r = model->exportOnnx(options, OutputTarget::toFile(out));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->stats.example_run, "meta");
  ::setenv("OXPORT_META_RUN", "0", 1);
  auto real = model->exportOnnx(options, OutputTarget::toFile(real_out));
  ::unsetenv("OXPORT_META_RUN");
  ASSERT_TRUE(real.ok()) << real.error().message();
  auto bytes = [](const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  };
  EXPECT_TRUE(bytes(out) == bytes(real_out)) << "the meta and the real example run gave different files";
  VerifyOptions vo;
  vo.extra_sizes = false;
  auto report = verifyExport(*model, options, out, runtime(), vo);
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_TRUE(report->passed) << report->toText();
}

// torchvision's scripted Swin block sets shift_size[i] = 0 in place when the window covers the
// feature map. The example run used to run the branch not taken (for its metadata) on the list
// itself, so the file rolled by the wrong shift. Now the branch decided by the sizes is kept, it
// matches at every size tried (among them one where the window covers the map), and it says so.
TEST(ControlFlowLists, SizeBranchThatChangesAListKeepsTheExamplesBranch) {
  auto model = Model::load(fs::path(OXPORT_CONTROL_DIR) / "swin_block_shifted.pt");
  ASSERT_TRUE(model.ok()) << model.error().message();
  for (std::vector<int64_t> shape : {std::vector<int64_t>{1, 8, 8, 8}, {2, 10, 12, 8}, {1, 4, 4, 8}}) {
    ExportOptions options;
    options.args = {ArgValue::tensor(TensorSpec{shape})};
    options.input_names = {"x"};
    options.dynamic_axes["x"].axes = {{1, "h"}, {2, "w"}};
    fs::path out = fs::path(OXPORT_CONTROL_DIR) / "out" / ("swin_block_" + std::to_string(shape[1]) + ".onnx");
    fs::create_directories(out.parent_path());
    auto r = model->exportOnnx(options, OutputTarget::toFile(out));
    ASSERT_TRUE(r.ok()) << r.error().message();
    size_t fixed = 0;
    for (const auto& d : r->diagnostics) fixed += d.code == "size-branch-fixed";
    EXPECT_GT(fixed, 0u) << "no size-branch-fixed warning";
    VerifyOptions vo;
    vo.extra_sizes = false;
    auto report = verifyExport(*model, options, out, runtime(), vo);
    ASSERT_TRUE(report.ok()) << report.error().message();
    EXPECT_TRUE(report->passed) << report->toText();
  }
}

TEST(ControlFlowLists, DataBranchThatChangesAListIsRefused) {
  const Diagnostic d = refusal("data_branch_sets_list.pt", {2, 3});
  EXPECT_EQ(d.code, "unsupported-form") << d.toString();
  EXPECT_EQ(d.node_kind, "prim::If");
  EXPECT_NE(d.message.find("list or dict"), std::string::npos) << d.message;
  EXPECT_GT(d.location.line, 0);
  EXPECT_NE(d.hint.find("--graph-mode trace"), std::string::npos) << d.hint;
}

// A scripted module's diagnostics name its module path as a traced one's do: Conv2d.forward's call
// of self._conv_forward is the same module ("0.0"), not a child named SELF ("0.0.SELF").
TEST(ControlFlowErrors, ScriptedModulePathHasNoSelf) {
  const Diagnostic d = refusal("nested_conv.pt", {1, 5, 8, 8});
  EXPECT_EQ(d.node_kind, "aten::conv2d") << d.toString();
  EXPECT_EQ(d.module_path, "0.0") << d.toString();
}

// Control flow needs opset 11 (as torch.onnx): older opsets say so.
TEST(ControlFlowErrors, OpsetBelow11) {
  const Diagnostic d = refusal("data_if.pt", {2, 3}, [](ExportOptions& o) {
    o.opset_version = 10;
    o.operator_export_type = OperatorExportType::Onnx;
  });
  EXPECT_EQ(d.code, "opset-too-old");
}

// A list built in a loop is an ONNX sequence, which needs opset 11 too.
TEST(ControlFlowErrors, ListInLoopBelowOpset11) {
  const Diagnostic d = refusal("greedy_decoder.pt", {2, 12}, [](ExportOptions& o) { o.opset_version = 10; });
  EXPECT_EQ(d.code, "opset-too-old") << d.toString();
  EXPECT_NE(d.message.find("needs opset 11"), std::string::npos) << d.message;
  EXPECT_GT(d.location.line, 0) << d.toString();
}

}  // namespace

// State kept on self: a write read back in the same call is a value; the last write of an
// attribute whose saved value the call also reads is dropped with one warning naming it and its
// line, and a cache the call writes before reading is silent.
TEST(ControlFlowState, DroppedWriteIsNamedOncePerAttribute) {
  auto warningsOf = [](const std::string& model_name) {
    auto model = Model::load(fs::path(OXPORT_CONTROL_DIR) / model_name);
    EXPECT_TRUE(model.ok()) << model.error().message();
    ExportOptions options;
    options.args = {ArgValue::tensor(TensorSpec{{3, 4}, DType::Float32, FillKind::Randn, {}})};
    std::ostringstream sink;
    auto r = model->exportOnnx(options, OutputTarget::toStream(sink));
    EXPECT_TRUE(r.ok()) << r.error().message();
    std::vector<Diagnostic> out;
    if (r.ok())
      for (const auto& d : r->diagnostics)
        if (d.code == "attribute-write-dropped") out.push_back(d);
    return out;
  };
  auto counter = warningsOf("state_counter.pt");
  ASSERT_EQ(counter.size(), 2u);
  std::string names;
  for (const auto& d : counter) {
    names += d.message;
    EXPECT_GT(d.location.line, 0) << d.toString();
  }
  EXPECT_NE(names.find("self.calls"), std::string::npos) << names;
  EXPECT_NE(names.find("self.steps"), std::string::npos) << names;
  EXPECT_TRUE(warningsOf("state_cache_then_read.pt").empty());
  EXPECT_EQ(warningsOf("state_loop_writes.pt").size(), 1u);  // self.total; self.acc starts fresh
  // Written through a view of it: named when the call reads it back, silent for a record never read.
  auto sliced = warningsOf("state_slice_written_buffer.pt");
  ASSERT_EQ(sliced.size(), 1u);
  EXPECT_NE(sliced[0].message.find("self.cache"), std::string::npos) << sliced[0].message;
  EXPECT_GT(sliced[0].location.line, 0) << sliced[0].toString();
  EXPECT_TRUE(warningsOf("state_write_only_record.pt").empty());
}

// Scripted RAFT (small) keeps its correlation pyramid on self (prim::SetAttr, then read back in the
// refinement loop) and builds it with a constant-count loop of appends: exported with the defaults
// and verified against libtorch.
TEST(ControlFlowState, ScriptedRaftSmall) {
  ASSERT_TRUE(makeDefaultRuntime().ok()) << "ONNX Runtime is not available";
  auto model = Model::load(fs::path(OXPORT_CONTROL_DIR) / "raft_small.pt");
  ASSERT_TRUE(model.ok()) << model.error().message();
  ExportOptions options;
  TensorSpec image{{1, 3, 128, 128}, DType::Float32, FillKind::Randn, {}};
  TensorSpec other = image;
  other.seed = 1;
  options.args = {ArgValue::tensor(image), ArgValue::tensor(other)};
  fs::path out = fs::path(OXPORT_CONTROL_DIR) / "out" / "raft_small.onnx";
  fs::create_directories(out.parent_path());
  auto r = model->exportOnnx(options, OutputTarget::toFile(out));
  ASSERT_TRUE(r.ok()) << r.error().message();
  VerifyOptions vo;
  vo.extra_sizes = false;
  auto report = verifyExport(*model, options, out, runtime(), vo);
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_TRUE(report->passed) << report->toText();
}

// groups=n with n = inst.shape[0] (a per-instance conv, StyleGAN2's groups=batch): warned as baked
// only when that axis is dynamic; with only the feature map's height and width dynamic, n is fixed
// and the export is right at every size (the warning fired for any dynamic axis before).
TEST(ControlFlowDiagnostics, ComputedGroupsWarnOnlyWhenTheirAxisIsDynamic) {
  auto bakedOf = [](bool n_dynamic) {
    auto model = Model::load(fs::path(OXPORT_CONTROL_DIR) / "per_instance_conv.pt");
    EXPECT_TRUE(model.ok()) << model.error().message();
    ExportOptions options;
    options.args = {ArgValue::tensor(TensorSpec{{1, 3, 8, 8}, DType::Float32, FillKind::Randn, {}}),
                    ArgValue::tensor(TensorSpec{{3, 6}, DType::Float32, FillKind::Randn, {}})};
    options.input_names = {"feats", "inst"};
    options.dynamic_axes["feats"] = DynamicAxisSpec{true, {{2, ""}, {3, ""}}};
    if (n_dynamic) options.dynamic_axes["inst"] = DynamicAxisSpec{true, {{0, ""}}};
    std::ostringstream sink;
    auto r = model->exportOnnx(options, OutputTarget::toStream(sink));
    EXPECT_TRUE(r.ok()) << r.error().message();
    int baked = 0;
    if (r.ok())
      for (const auto& d : r->diagnostics) baked += d.code == "baked-dynamic-size";
    return baked;
  };
  EXPECT_EQ(bakedOf(false), 0);
  EXPECT_GE(bakedOf(true), 1);
}
