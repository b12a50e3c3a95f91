// verifyExport: run the written model in ONNX Runtime and compare with libtorch, at the example
// size and at other sizes of every dynamic axis.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "onnx/signature.h"
#include "oxport/model.h"
#include "oxport/runtime.h"
#include "verify/graph_deps.h"
#include "verify/tie_order.h"

namespace oxport {

namespace {

// Shapes of the flattened tensor inputs with dynamic axes resized by `f(size)`.
std::vector<std::vector<int64_t>> resized(const std::vector<std::vector<int64_t>>& base,
                                          const std::vector<std::map<int64_t, std::string>>& dyn,
                                          const std::function<int64_t(int64_t)>& f) {
  auto out = base;
  for (size_t i = 0; i < out.size() && i < dyn.size(); ++i)
    for (const auto& [axis, name] : dyn[i])
      if (axis < static_cast<int64_t>(out[i].size())) out[i][static_cast<size_t>(axis)] = f(out[i][static_cast<size_t>(axis)]);
  return out;
}

std::string number(double v) {
  std::ostringstream os;
  os.precision(3);
  os << v;
  return os.str();
}

// A float16/bfloat16 output that fails the rule against the reference (float32 arithmetic on the
// model's half values, rounded once at the end): how far does the type's own rounding move it? A
// run in that type rounds each op's result, and ONNX Runtime's CPU kernels round at some of those
// places; over many layers the roundings add up to more than one rounding step of the output. The
// reference run again with each op's result rounded (`half_run`) differs from it by `spread`: a
// file as close to the reference as that is as close as a run in the type is. The comparison is
// made again with that tolerance (spread over the largest |value|), and says why. A file that is
// off by more than the type's own drift still fails.
OutputComparison judgeWithHalfSpread(const std::string& name, const HostTensor& expected, const HostTensor& half_run,
                                     const HostTensor& actual, double tolerance, OutputComparison cmp) {
  if (half_run.shape != expected.shape || half_run.dtype != expected.dtype || cmp.max_magnitude <= 0) return cmp;
  double spread = 0;
  for (int64_t k = 0; k < expected.numel(); ++k) {
    const double a = expected.at(k), b = half_run.at(k);
    if (std::isfinite(a) && std::isfinite(b)) spread = std::max(spread, std::abs(a - b));
  }
  const double raised = spread / cmp.max_magnitude;
  if (raised <= std::max(tolerance, dtypeEpsilon(expected.dtype))) return cmp;
  OutputComparison again = compareTensors(name, expected, actual, raised);
  const std::string type = dtypeName(expected.dtype);
  std::string why = "tolerance raised to " + number(raised) + " for " + type + " arithmetic: rounding each op's result to " +
                    type + " (a " + type + " run) moves this output by up to " + number(spread) +
                    " from the reference (float32 arithmetic on the same values), so a correct file may too";
  again.note = why + (again.note.empty() ? "" : "; " + again.note);
  return again;
}

// An output computed from a random node: ONNX Runtime and libtorch draw different numbers, so only
// its shape and dtype are compared; the note names the random nodes and their source lines.
OutputComparison compareRandom(const std::string& name, const HostTensor& expected, const HostTensor& actual,
                               const verify_detail::GraphDeps& deps, const verify_detail::OutputDeps& od) {
  OutputComparison c;
  c.name = name;
  c.expected_shape = expected.shape;
  c.actual_shape = actual.shape;
  c.random = true;
  c.passed = true;
  std::string ops;
  for (size_t r : od.randoms) {
    const auto& rn = deps.randoms[r];
    ops += (ops.empty() ? "" : ", ") + rn.op_type + " '" + rn.name + "'" + (rn.where.empty() ? "" : " from " + rn.where);
  }
  c.note = "random: not compared (shape and dtype checked): it depends on " + ops +
           ", whose numbers ONNX Runtime and libtorch draw differently";
  if (expected.shape != actual.shape || expected.dtype != actual.dtype) {
    c.passed = false;
    c.note = (expected.shape != actual.shape ? "shape mismatch: expected " + expected.shapeString() + ", got " +
                                                   actual.shapeString()
                                             : std::string("dtype mismatch: expected ") + dtypeName(expected.dtype) +
                                                   ", got " + dtypeName(actual.dtype)) +
             "; " + c.note;
  }
  return c;
}

// Failing outputs that depend on tie-ordered index nodes: judged again from libtorch's picks
// (tie_order.h). Those that then match pass as tie order; the others keep failing, with why.
void judgeTieOrder(const std::filesystem::path& onnx_file, const verify_detail::GraphDeps& deps,
                   const std::map<std::string, size_t>& output_index, const std::vector<NamedTensor>& inputs,
                   const std::vector<NamedTensor>& expected, const std::vector<size_t>& values_differ,
                   OnnxRuntime& runtime, double tolerance, VerifyRun& run) {
  std::set<size_t> tie_ids;
  std::vector<size_t> candidates;
  for (size_t i : values_differ) {
    const auto it = output_index.find(run.outputs[i].name);
    if (it == output_index.end() || run.outputs[i].expected_shape != run.outputs[i].actual_shape) continue;
    const auto& od = deps.outputs[it->second];
    if (od.ties.empty() || !od.randoms.empty()) continue;
    candidates.push_back(i);
    tie_ids.insert(od.ties.begin(), od.ties.end());
  }
  if (candidates.empty()) return;
  std::vector<verify_detail::TieNode> ties;
  std::string names;
  for (size_t t : tie_ids) {
    ties.push_back(deps.ties[t]);
    names += (names.empty() ? "" : ", ") + deps.ties[t].op_type + " '" + deps.ties[t].name + "'";
  }
  auto rerun = verify_detail::rerunWithLibtorchTieOrder(onnx_file, ties, inputs, runtime);
  for (size_t i : candidates) {
    OutputComparison& cmp = run.outputs[i];
    const std::string before = cmp.note;
    if (!rerun.ok() || !rerun->ties_only) {
      cmp.note += std::string(cmp.note.empty() ? "" : "; ") + "it depends on the indices of " + names +
                  ", and the difference is not tie order: " +
                  (rerun.ok() ? rerun->note : rerun.error().message());
      continue;
    }
    const NamedTensor* again = nullptr;
    for (const auto& t : rerun->outputs)
      if (t.name == cmp.name) again = &t;
    if (!again) continue;
    OutputComparison judged = compareTensors(cmp.name, expected[i].tensor, again->tensor, tolerance);
    if (!judged.passed) {
      cmp.note += std::string(cmp.note.empty() ? "" : "; ") + "it depends on the indices of " + names +
                  ", but computed from libtorch's picks it still differs (" + judged.note +
                  "): not only tie order";
      continue;
    }
    cmp.passed = true;
    cmp.tie_order = true;
    cmp.tied_elements = rerun->tied_elements;
    cmp.note = "tie order: " + std::to_string(rerun->tied_elements) + " index element(s) of " + names +
               " picked another position whose selected value is equal (ONNX Runtime and libtorch order ties "
               "differently); computed from libtorch's picks the output matches. As compared: " + before;
  }
  run.passed = std::all_of(run.outputs.begin(), run.outputs.end(), [](const OutputComparison& c) { return c.passed; }) &&
               run.error.empty();
}

}  // namespace

Result<VerifyReport> verifyExport(const Model& model, const ExportOptions& options,
                                  const std::filesystem::path& onnx_file, OnnxRuntime& runtime,
                                  const VerifyOptions& vopts, const CancelToken& cancel,
                                  const ProgressFn& progress) {
  VerifyReport report;
  report.tolerance = vopts.tolerance;
  OXPORT_ASSIGN(auto base_inputs, model.exampleInputs(options));
  std::vector<std::vector<int64_t>> base_shapes;
  for (const auto& t : base_inputs) base_shapes.push_back(t.shape);

  // The names as written: the file's graph inputs start with the flattened tensor arguments (in
  // order; weights kept as inputs follow), so generated names (forward's argument names) are
  // known too, not only those given in input_names.
  OXPORT_ASSIGN(const onnx_ir::GraphSignature sig, onnx_ir::readGraphSignature(onnx_file));
  if (sig.inputs.size() < base_inputs.size())
    return Error("verify-mismatch",
                 "the ONNX file has " + std::to_string(sig.inputs.size()) + " inputs but the example arguments give " +
                     std::to_string(base_inputs.size()) + " tensors",
                 "verify the file with the options it was exported with (args, input shapes)");
  {
    // Ops kept in their own domains (ONNX_FALLTHROUGH, ATen fallback) exist in no ONNX Runtime.
    std::string custom;
    for (const auto& d : sig.domains)
      if (!d.empty() && d != "ai.onnx" && d != "ai.onnx.ml" && d != "com.microsoft")
        custom += (custom.empty() ? "'" : ", '") + d + "'";
    if (!custom.empty()) {
      report.skipped = true;
      report.skip_reason = "the file has nodes in the custom domain(s) " + custom +
                           " (ops kept as they are under ONNX_FALLTHROUGH or as ATen nodes), which ONNX Runtime "
                           "cannot run; a runtime that implements them (the vendor's, or one with their custom-op "
                           "library) can, or export at an opset where they convert";
      return report;
    }
  }
  for (const auto& t : base_inputs)
    if (t.dtype == DType::BFloat16) {
      // onnxruntime-node has no bfloat16 tensors (and ONNX Runtime's CPU provider few bfloat16 kernels).
      report.skipped = true;
      report.skip_reason = "the model takes bfloat16 inputs, which ONNX Runtime's Node binding (onnxruntime-node) "
                           "cannot pass; the file has passed the ONNX checker and strict shape inference. A runtime "
                           "with bfloat16 kernels (a GPU provider, or ONNX Runtime's Python binding) can run it, "
                           "or export a float32 or float16 copy of the model to compare numbers";
      return report;
    }
  const std::vector<std::string> input_names(sig.inputs.begin(), sig.inputs.begin() + base_inputs.size());
  const std::vector<std::string>& output_names = sig.outputs;
  // Which outputs depend on random and tie-ordered nodes (graph_deps.h).
  verify_detail::GraphDeps deps;
  if (auto d = verify_detail::readGraphDeps(onnx_file); d.ok() && d->outputs.size() == output_names.size())
    deps = std::move(*d);
  std::map<std::string, size_t> output_index;
  for (size_t i = 0; i < deps.outputs.size(); ++i) output_index[output_names[i]] = i;

  // Which flattened inputs have dynamic axes.
  std::vector<std::map<int64_t, std::string>> dyn(base_inputs.size());
  bool any_dynamic = false;
  for (size_t i = 0; i < base_inputs.size(); ++i) {
    auto it = options.dynamic_axes.find(input_names[i]);
    if (it != options.dynamic_axes.end()) {
      dyn[i] = it->second.axes;
      any_dynamic = any_dynamic || !it->second.axes.empty();
    }
  }
  std::vector<std::vector<std::vector<int64_t>>> shape_sets{base_shapes};
  if (!vopts.extra_shapes.empty()) {
    for (const auto& s : vopts.extra_shapes) shape_sets.push_back(s);
  } else if (any_dynamic && vopts.extra_sizes) {
    shape_sets.push_back(resized(base_shapes, dyn, [](int64_t s) { return s + 1; }));
    shape_sets.push_back(resized(base_shapes, dyn, [](int64_t s) { return s * 2; }));
  }
  {  // each distinct shape set once, in order
    std::set<std::vector<std::vector<int64_t>>> distinct(shape_sets.begin(), shape_sets.end());
    std::vector<std::vector<std::vector<int64_t>>> unique;
    for (const auto& s : shape_sets)
      if (distinct.erase(s)) unique.push_back(s);
    shape_sets = std::move(unique);
  }
  report.passed = true;
  std::vector<std::vector<int64_t>> base_output_shapes;  // from the first run
  auto shapesText = [](const std::vector<std::vector<int64_t>>& shapes) {
    std::string t;
    for (size_t k = 0; k < shapes.size(); ++k) {
      if (k) t += ", ";
      if (shapes[k].empty()) t += "scalar";
      for (size_t i = 0; i < shapes[k].size(); ++i) t += (i ? "x" : "") + std::to_string(shapes[k][i]);
    }
    return t;
  };
  size_t rejected_sets = 0;  // other sizes libtorch itself fails at
  for (size_t set = 0; set < shape_sets.size(); ++set) {
    const auto& shapes = shape_sets[set];
    if (progress)
      progress(Phase::Verify, static_cast<double>(set) / static_cast<double>(shape_sets.size()),
               "ONNX Runtime and libtorch at " + shapesText(shapes));
    if (cancel.cancelled()) return Error("cancelled", "verification was cancelled");
    VerifyRun run;
    run.input_shapes = shapes;
    auto inputs = model.exampleInputs(options, shapes);
    std::string note;
    auto expected = model.runReference(options, shapes, &note);
    if (!note.empty() && std::find(report.notes.begin(), report.notes.end(), note) == report.notes.end())
      report.notes.push_back(note);
    if (inputs.ok() && !expected.ok() && shapes != base_shapes && vopts.extra_shapes.empty()) {
      // libtorch itself rejects these sizes (an encoder-decoder at an odd H, a patch size that
      // does not divide it): the model's own limit, not the file's. Said, and left uncompared;
      // verification still fails when no other size could be compared (see below).
      // libtorch's own last line says what failed ("The size of tensor a (33) must match ...").
      const auto& diags = expected.error().diagnostics();
      std::string why = diags.empty() ? expected.error().message() : diags.front().message;
      while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
      if (auto nl = why.rfind('\n'); nl != std::string::npos) why = why.substr(nl + 1);
      report.notes.push_back("libtorch itself fails at input shapes " + shapesText(shapes) +
                             ", so the file was not compared there (a size the model does not accept, or one "
                             "tracing baked: see the warnings): " + why);
      ++rejected_sets;
      continue;
    }
    if (!inputs.ok() || !expected.ok()) {
      run.error = !inputs.ok() ? inputs.error().message() : expected.error().message();
      if (expected.ok() == false && shapes != base_shapes)
        run.error = "the model itself fails at these sizes (a size it does not accept, or one tracing baked: see "
                    "the warnings): " + run.error;
      run.passed = false;
      report.passed = false;
      report.runs.push_back(run);
      continue;
    }
    std::vector<NamedTensor> named;
    for (size_t i = 0; i < inputs->size(); ++i)
      named.push_back({input_names[i], (*inputs)[i]});
    auto actual = runtime.run(onnx_file, named);
    if (cancel.cancelled()) return Error("cancelled", "verification was cancelled");
    if (!actual.ok()) {
      run.error = actual.error().message();
      run.passed = false;
      report.passed = false;
      report.runs.push_back(run);
      continue;
    }
    run.passed = true;
    if (actual->size() != expected->size()) {
      run.error = "ONNX Runtime returned " + std::to_string(actual->size()) + " outputs, libtorch " +
                  std::to_string(expected->size());
      run.passed = false;
    }
    const bool is_base = base_output_shapes.empty();
    std::vector<size_t> values_differ;  // outputs that fail the comparison itself
    std::optional<Result<std::vector<NamedTensor>>> half_run;  // run when a half output fails
    for (size_t i = 0; i < expected->size() && i < actual->size(); ++i) {
      auto cmp = compareTensors((*actual)[i].name, (*expected)[i].tensor, (*actual)[i].tensor, vopts.tolerance);
      const DType dt = (*expected)[i].tensor.dtype;
      if (auto it = output_index.find((*actual)[i].name);
          it != output_index.end() && !deps.outputs[it->second].randoms.empty()) {
        cmp = compareRandom((*actual)[i].name, (*expected)[i].tensor, (*actual)[i].tensor, deps,
                            deps.outputs[it->second]);
      } else if (!cmp.passed && (dt == DType::Float16 || dt == DType::BFloat16)) {
        if (!half_run) half_run.emplace(model.runHalfRoundedReference(options, shapes));
        if (half_run->ok() && i < (*half_run)->size())
          cmp = judgeWithHalfSpread((*actual)[i].name, (*expected)[i].tensor, (**half_run)[i].tensor,
                                    (*actual)[i].tensor, vopts.tolerance, cmp);
      }
      const bool values_failed = !cmp.passed && !cmp.random;  // judged for tie order below
      bool baked = false;
      if (is_base) {
        base_output_shapes.push_back((*actual)[i].tensor.shape);
      } else if (shapes != base_shapes && i < output_names.size() && i < base_output_shapes.size()) {
        // A declared dynamic output axis that keeps its traced size while the inputs changed
        // was baked by tracing (libtorch's traced module does the same, so values can agree).
        auto it = options.dynamic_axes.find(output_names[i]);
        if (it != options.dynamic_axes.end()) {
          for (const auto& [axis, label] : it->second.axes) {
            const auto& now = (*actual)[i].tensor.shape;
            const auto& was = base_output_shapes[i];
            if (axis < static_cast<int64_t>(now.size()) && axis < static_cast<int64_t>(was.size()) &&
                now[static_cast<size_t>(axis)] == was[static_cast<size_t>(axis)]) {
              cmp.passed = false;
              baked = true;
              cmp.note = "dynamic axis " + std::to_string(axis) + " of output '" + output_names[i] +
                         "' stayed " + std::to_string(now[static_cast<size_t>(axis)]) +
                         " while the inputs' dynamic axes changed: tracing baked a size into the model";
            }
          }
        }
      }
      if (values_failed && !baked) values_differ.push_back(i);
      run.passed = run.passed && cmp.passed;
      run.outputs.push_back(cmp);
    }
    if (!run.passed && run.error.empty())
      judgeTieOrder(onnx_file, deps, output_index, named, *expected, values_differ, runtime, vopts.tolerance,
                    run);
    report.passed = report.passed && run.passed;
    report.runs.push_back(run);
  }
  if (rejected_sets > 0 && report.runs.size() < 2) {
    // Only the example's sizes were compared: nothing shows that the dynamic axes work.
    VerifyRun run;
    run.input_shapes = shape_sets.back();
    run.error = "libtorch itself fails at every other size of the dynamic axes that was tried (see the notes), "
                "so nothing shows the file works at other sizes; verify at sizes the model accepts";
    report.runs.push_back(run);
    report.passed = false;
  }
  if (progress) progress(Phase::Verify, 1.0, report.passed ? "outputs match" : "outputs differ");
  return report;
}

}  // namespace oxport
