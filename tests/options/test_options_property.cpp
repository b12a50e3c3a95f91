// Property: for random combinations of every export option on a few models, the export either
// succeeds with a model that passes the full checker (and, where the model is deterministic and
// its weights are inside, matches libtorch in ONNX Runtime), or fails with diagnostics of which at
// least one names the offending option (Diagnostic::option). Never a crash, never a silent
// half-written file.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <filesystem>
#include <map>
#include <memory>

#include "oxport/model.h"
#include "oxport/preset.h"
#include "oxport/runtime.h"

namespace fs = std::filesystem;
using namespace oxport;

namespace {

const Model& load(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Model>> cache;
  auto& m = cache[name];
  if (!m) {
    auto r = Model::load(fs::path(OXPORT_OPTIONS_DIR) / "models" / (name + ".pt"));
    if (!r.ok()) throw std::runtime_error(r.error().message());
    m = std::make_unique<Model>(std::move(*r));
  }
  return *m;
}

OnnxRuntime* runtime() {
  static std::unique_ptr<OnnxRuntime> rt = [] {
    auto r = makeDefaultRuntime();
    return r.ok() ? std::move(*r) : nullptr;
  }();
  return rt.get();
}

ArgValue T(std::vector<int64_t> shape) {
  TensorSpec s;
  s.shape = std::move(shape);
  return ArgValue::tensor(s);
}

struct ModelCase {
  std::string name;
  std::vector<ArgValue> args;
  bool saved_training;
  bool standard_ops = true;  // every op has a standard ONNX form (ONNX Runtime can run it)
};

const std::vector<ModelCase>& models() {
  static const std::vector<ModelCase> m = {{"net", {T({1, 3, 8, 8})}, false},
                                           {"net_train", {T({1, 3, 8, 8})}, true},
                                           {"plain", {T({1, 3, 8, 8})}, false},
                                           {"two", {T({2, 4}), T({2, 4})}, false},
                                           {"unsupported", {T({2, 4}), T({5})}, false, false}};
  return m;
}

const std::vector<std::string> kNames = {"x", "y", "a", "b", "out"};

RC_GTEST_PROP(OptionsProperty, ExportChecksAndMatchesOrNamesTheOption, ()) {
  const auto& mc = *rc::gen::elementOf(models());
  ExportOptions o;
  o.args = mc.args;
  // Mostly valid values, so that most cases export; the invalid ones must be refused by name.
  o.opset_version = *rc::gen::weightedOneOf<int>({{9, rc::gen::inRange(kMinOpset, kMaxOpset + 1)},
                                                  {1, rc::gen::element(kMinOpset - 1, kMaxOpset + 1)}});
  o.training = *rc::gen::element(TrainingMode::Eval, TrainingMode::Preserve, TrainingMode::Training);
  o.operator_export_type = *rc::gen::element(OperatorExportType::Onnx, OperatorExportType::OnnxFallthrough,
                                             OperatorExportType::OnnxAten, OperatorExportType::OnnxAtenFallback);
  o.do_constant_folding = *rc::gen::arbitrary<bool>();
  o.export_params = *rc::gen::weightedElement<bool>({{3, true}, {1, false}});
  o.verbose = *rc::gen::arbitrary<bool>();
  o.keep_initializers_as_inputs = *rc::gen::element(std::optional<bool>(), std::optional<bool>(true),
                                                    std::optional<bool>(false));
  const auto names = [] {
    return rc::gen::weightedOneOf<std::vector<std::string>>(
        {{2, rc::gen::just(std::vector<std::string>())},
         {2, rc::gen::container<std::vector<std::string>>(1, rc::gen::elementOf(kNames))},
         {1, rc::gen::container<std::vector<std::string>>(*rc::gen::inRange(2, 4), rc::gen::elementOf(kNames))}});
  };
  o.input_names = *names();
  o.output_names = *names();
  if (*rc::gen::weightedElement<bool>({{1, true}, {2, false}})) {
    DynamicAxisSpec d;
    d.list_form = *rc::gen::arbitrary<bool>();
    int64_t axis = *rc::gen::inRange<int64_t>(0, 5);
    d.axes[axis] = d.list_form ? "" : "dyn" + std::to_string(axis);
    o.dynamic_axes[*rc::gen::elementOf(kNames)] = d;
  }
  if (*rc::gen::arbitrary<bool>()) o.custom_opsets["org.pytorch.aten"] = *rc::gen::inRange<int64_t>(1, 3);

  {
    Preset shown;
    shown.model = mc.name;
    shown.options = o;
    RC_LOG() << presetToJson(shown) << "\n";
  }
  const fs::path file = fs::temp_directory_path() / ("oxport_prop_" + std::to_string(::getpid()) + ".onnx");
  fs::remove(file);
  auto r = load(mc.name).exportOnnx(o, OutputTarget::toFile(file));
  if (!r.ok()) {
    bool named = false;
    for (const auto& d : r.error().diagnostics()) named = named || !d.option.empty();
    RC_LOG() << r.error().message() << "\n";
    RC_ASSERT(named);
    RC_ASSERT(!fs::exists(file));
    RC_TAG("refused: " + r.error().first().code);
    return;
  }
  RC_ASSERT(r->stats.checker_passed);
  RC_ASSERT(r->stats.shape_inference_passed);
  RC_ASSERT(fs::exists(file));
  const bool training = o.training == TrainingMode::Training ||
                        (o.training == TrainingMode::Preserve && mc.saved_training);
  // ATen nodes and weights given as inputs cannot be run by ONNX Runtime; dropout in training is
  // random. A module traced in training mode has its training flags baked into the trace, so
  // libtorch's reference run cannot follow an EVAL export of it.
  const bool runnable = o.export_params && !training && !mc.saved_training && mc.standard_ops &&
                        o.operator_export_type != OperatorExportType::OnnxAten;
  if (runnable && runtime()) {
    VerifyOptions vo;
    vo.extra_sizes = false;
    auto v = verifyExport(load(mc.name), o, file, *runtime(), vo);
    RC_ASSERT(v.ok());
    RC_LOG() << v->toText();
    RC_ASSERT(v->passed);
    RC_TAG("verified");
  } else {
    RC_TAG("exported");
  }
  fs::remove(file);
}

}  // namespace
