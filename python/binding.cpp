// The `oxport._oxport` extension: a thin binding over oxport::core for the Python package
// (python/oxport/, docs/PYTHON.md). The Python side turns a live module into a TorchScript file
// and its arguments into a preset; this side loads and exports it through the core's public API,
// with the GIL released and Ctrl+C turned into the core's cancel.
//
// Only the core's public headers are used (no libtorch or torch-Python types cross this boundary),
// so the extension does not depend on how Debian built torch's own pybind11 bindings.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "oxport/model.h"
#include "oxport/npy.h"
#include "oxport/preset.h"
#include "oxport/runtime.h"

namespace py = pybind11;
using namespace oxport;

namespace {

py::object fromJson(const std::string& text) { return py::module_::import("json").attr("loads")(text); }

// The core's JSON of the diagnostics (the CLI's --json), each with its text as the CLI prints it.
py::object diagnosticList(const std::vector<Diagnostic>& ds) {
  auto arr = nlohmann::ordered_json::parse(toJson(ds));
  for (size_t i = 0; i < ds.size(); ++i) arr[i]["text"] = ds[i].toString();
  return fromJson(arr.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

// Runs `work` on a worker thread while this (Python) thread waits with the GIL released. Every
// 50 ms it takes the GIL back to run Python's signal handlers: when one raises (Ctrl+C's
// KeyboardInterrupt), the core's cancel token is set, the worker is waited for (the core stops at
// its next check and removes its temporary files) and the exception propagates to the caller.
// Signals reach handlers only in the main thread; elsewhere PyErr_CheckSignals does nothing.
template <class F>
void runWithoutGil(const CancelToken& cancel, F&& work) {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::exception_ptr failure;
  std::thread worker([&] {
    try {
      work();
    } catch (...) {
      failure = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mu);
    done = true;
    cv.notify_all();
  });
  bool interrupted = false;
  for (;;) {
    bool finished;
    {
      py::gil_scoped_release release;
      std::unique_lock<std::mutex> lock(mu);
      finished = cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return done; });
    }
    if (finished) break;
    if (!interrupted && PyErr_CheckSignals() != 0) {
      interrupted = true;  // the Python error stays set until we raise it below
      cancel.cancel();
    }
  }
  worker.join();
  if (interrupted) throw py::error_already_set();
  if (failure) std::rethrow_exception(failure);
}

// export(preset_json, output, verify, tolerance) -> dict
//   ok: bool; errors: [diagnostic]; diagnostics: [diagnostic] (warnings and notes);
//   load_notes, stats, input_names, output_names, verbose_log, verify (JSON text or None)
// The preset names the TorchScript file (absolute path) and every option; `output` is the path of
// the ONNX file, written atomically by the core.
py::dict exportModel(const std::string& preset_json, const std::string& output, bool verify, double tolerance) {
  py::dict out;
  auto fail = [&](const Error& e) {
    out["ok"] = false;
    out["errors"] = diagnosticList(e.diagnostics());
    return out;
  };
  auto preset = parsePreset(preset_json);
  if (!preset.ok()) return fail(preset.error());
  if (auto bad = validateOptions(preset->options); !bad.empty()) return fail(Error(bad));
  if (!preset->model) return fail(Error("usage", "no model file given"));

  CancelToken cancel;
  std::optional<Error> error;
  std::optional<ExportResult> result;
  std::vector<Diagnostic> load_notes;
  std::optional<VerifyReport> report;
  std::optional<Error> verify_error;
  const ExportOptions& options = preset->options;
  const std::string model_path = *preset->model;
  runWithoutGil(cancel, [&] {
    auto model = Model::load(model_path, {}, cancel);
    if (!model.ok()) {
      error = model.error();
      return;
    }
    load_notes = model->info().load_notes;
    OutputTarget target = OutputTarget::toFile(output);
    target.graph_views = false;  // the studio's previews: the module returns neither graph
    auto r = model->exportOnnx(options, target, {}, cancel);
    if (!r.ok()) {
      error = r.error();
      return;
    }
    result = std::move(*r);
    if (!verify) return;
    auto rt = makeDefaultRuntime();
    if (!rt.ok()) {
      verify_error = rt.error();
      return;
    }
    VerifyOptions vo;
    vo.tolerance = tolerance;
    auto vr = verifyExport(*model, options, output, **rt, vo, cancel);
    if (!vr.ok()) verify_error = vr.error();
    else report = std::move(*vr);
  });
  out["load_notes"] = diagnosticList(load_notes);
  if (error) return fail(*error);
  out["ok"] = true;
  out["errors"] = py::list();
  out["diagnostics"] = diagnosticList(result->diagnostics);
  out["stats"] = fromJson(toJson(result->stats));
  out["input_names"] = result->input_names;
  out["output_names"] = result->output_names;
  out["verbose_log"] = result->verbose_log;
  out["verify"] = report ? py::object(py::str(report->toJson())) : py::object(py::none());
  out["verify_text"] = report ? py::object(py::str(report->toText())) : py::object(py::none());
  out["verify_errors"] = verify_error ? py::object(diagnosticList(verify_error->diagnostics())) : py::object(py::none());
  return out;
}

// write_npy(path, dtype, shape, data): an example input as a .npy file the preset can name.
// `dtype` is an oxport dtype name ("float32", "bfloat16", "bool", ...); `data` the row-major bytes.
void writeNpyFile(const std::string& path, const std::string& dtype, const std::vector<int64_t>& shape,
                  const py::bytes& data) {
  auto dt = parseDType(dtype);
  if (!dt) throw py::value_error("oxport cannot take a tensor of dtype " + dtype + " as an example input");
  std::string bytes = data;
  HostTensor t = HostTensor::fromBytes(*dt, shape, std::vector<unsigned char>(bytes.begin(), bytes.end()));
  Status s = writeNpy(path, t);
  if (!s.ok()) throw std::runtime_error(s.error().message());
}

// example_tensor(spec) -> dict: ok, errors, and when ok dtype (oxport's name), shape, data (the
// row-major bytes), spec (the spec in its compact form), fill and seed: the example tensor an export makes
// from a tensor spec ("1x3x320x320:smooth:seed=4"), for oxport.example_input.
py::dict exampleTensor(const std::string& spec_text) {
  py::dict out;
  auto spec = parseTensorSpec(spec_text);
  Result<HostTensor> t = spec.ok() ? makeExampleTensor(*spec) : Result<HostTensor>(spec.error());
  out["ok"] = t.ok();
  if (!t.ok()) {
    out["errors"] = diagnosticList(t.error().diagnostics());
    return out;
  }
  out["errors"] = py::list();
  out["dtype"] = dtypeName(t->dtype);
  out["shape"] = t->shape;
  out["data"] = py::bytes(static_cast<const char*>(t->data), t->nbytes);
  out["spec"] = formatTensorSpec(*spec);
  out["fill"] = fillKindName(spec->fill);
  out["seed"] = spec->seed;
  return out;
}

}  // namespace

PYBIND11_MODULE(_oxport, m) {
  m.doc() = "oxport's C++ core (use the `oxport` package, not this module)";
  // The TorchScript file this module loads was written a moment ago by torch.jit.save from an
  // object already live in this process, so it is not untrusted input: the core reads it once, in
  // this process, rather than first probing it in a fork()ed child (which, in a Python process
  // with several threads, would only add a second parse and the risks of fork without exec).
  setLoadGuard(LoadGuard::CallerIsolated);
  m.def("export", &exportModel, py::arg("preset_json"), py::arg("output"), py::arg("verify") = false,
        py::arg("tolerance") = 1e-4);
  m.def("example_tensor", &exampleTensor, py::arg("spec"));
  m.def("write_npy", &writeNpyFile, py::arg("path"), py::arg("dtype"), py::arg("shape"), py::arg("data"));
  m.def("versions", [] {
    Versions v = versions();
    py::dict d;
    d["oxport"] = v.oxport;
    d["libtorch"] = v.libtorch;
    d["onnx"] = v.onnx;
    d["protobuf"] = v.protobuf;
    return d;
  });
}
