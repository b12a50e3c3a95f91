// The default ONNX Runtime: tools/ort_run.js (npm's onnxruntime-node, CPU) run by `node` in a
// child process, exchanging .npy files and JSON through a temporary run folder:
//   RUN_DIR/in0.npy ...   inputs, written here
//   RUN_DIR/request.json  {"model": "/abs/model.onnx", "inputs": [{"name": "x", "file": "in0.npy"}]}
//   RUN_DIR/response.json {"outputs": [{"name", "file", "dtype", "shape"}]} or {"error": "..."}
//   RUN_DIR/log.txt       the runner's stdout and stderr
// The folder is removed after each run.
//
// Where things are found:
//   node    - the first executable `node` on PATH
//   runner  - $OXPORT_ORT_RUNNER if set (it must exist), else <exe dir>/../share/oxport/ort_run.js,
//             else <source tree>/tools/ort_run.js
//   onnxruntime-node - as Node resolves it for the runner: node_modules in the runner's folder or
//             any parent, then $NODE_PATH, ~/.node_modules, ~/.node_libraries
//             ($OXPORT_ORT_PACKAGE names another package there, e.g. onnxruntime-node-next)
//
// compareTensors' rule (the project's acceptance rule, "max abs error at most tolerance times the
// output's largest magnitude"):
//   - shapes and dtypes must be equal;
//   - floating outputs: max |expected - actual| <= tol * max |expected| over finite elements,
//     where tol = max(tolerance, the dtype's epsilon) (float16 2^-10, bfloat16 2^-7: one rounding
//     step of those types already exceeds 1e-4; verifyExport raises it further for a half output
//     that fails, to how far the type's own rounding moves that output). An all-zero expected
//     output must be matched exactly. NaN must meet NaN and an infinity the same infinity;
//   - integer and bool outputs must be equal element for element.
#include "oxport/runtime.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>

#include "oxport/atomic_file.h"
#include "oxport/npy.h"
#include "oxport/subprocess.h"


namespace oxport {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kSetupHint = "run tools/setup.sh (npm ci --ignore-scripts)";

std::string envOr(const char* name, std::string fallback = {}) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : fallback;
}

bool isExecutableFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

std::vector<std::string> splitPathList(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, ':'))
    if (!cur.empty()) out.push_back(cur);
  return out;
}

std::optional<fs::path> findOnPath(const std::string& name) {
  for (const auto& dir : splitPathList(envOr("PATH", "/usr/local/bin:/usr/bin:/bin"))) {
    const fs::path p = fs::path(dir) / name;
    if (isExecutableFile(p)) return p;
  }
  return std::nullopt;
}

fs::path exeDir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

Result<fs::path> locateRunner() {
  std::error_code ec;
  if (const char* env = std::getenv("OXPORT_ORT_RUNNER"); env && *env) {
    const fs::path p(env);
    if (!fs::is_regular_file(p, ec))
      return Error("runtime-missing",
                   "OXPORT_ORT_RUNNER is set to " + p.string() + ", which is not a file",
                   "point OXPORT_ORT_RUNNER at tools/ort_run.js or unset it; " + std::string(kSetupHint));
    return fs::absolute(p, ec);
  }
  std::vector<fs::path> tried;
  if (const fs::path dir = exeDir(); !dir.empty())
    tried.push_back((dir / ".." / "share" / "oxport" / "ort_run.js").lexically_normal());
  tried.push_back(fs::path(OXPORT_SOURCE_DIR) / "tools" / "ort_run.js");
  for (const auto& p : tried)
    if (fs::is_regular_file(p, ec)) return p;
  std::string list;
  for (const auto& p : tried) list += (list.empty() ? "" : ", ") + p.string();
  return Error("runtime-missing", "the ONNX Runtime runner ort_run.js was not found (looked at " + list + ")",
               "set OXPORT_ORT_RUNNER to the path of tools/ort_run.js; " + std::string(kSetupHint));
}

// Where Node would find onnxruntime-node for a script in `runner`'s folder.
std::optional<fs::path> findOrtPackage(const fs::path& runner, std::vector<fs::path>& looked) {
  std::error_code ec;
  std::vector<fs::path> roots;
  for (fs::path d = runner.parent_path(); !d.empty(); d = d.parent_path()) {
    roots.push_back(d / "node_modules");
    if (d == d.root_path()) break;
  }
  for (const auto& p : splitPathList(envOr("NODE_PATH"))) roots.emplace_back(p);
  if (const std::string home = envOr("HOME"); !home.empty()) {
    roots.push_back(fs::path(home) / ".node_modules");
    roots.push_back(fs::path(home) / ".node_libraries");
  }
  // OXPORT_ORT_PACKAGE: another installed package to use (ort_run.js reads it too).
  const std::string name = envOr("OXPORT_ORT_PACKAGE").empty() ? "onnxruntime-node" : envOr("OXPORT_ORT_PACKAGE");
  for (const auto& r : roots) {
    const fs::path pkg = r / name;
    looked.push_back(pkg);
    if (fs::is_regular_file(pkg / "package.json", ec)) return pkg;
  }
  return std::nullopt;
}

std::string readText(const fs::path& p, size_t limit = 1 << 20) {
  std::ifstream in(p, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (s.size() > limit) s = "..." + s.substr(s.size() - limit);
  return s;
}

std::string trimTail(std::string s, size_t max_chars = 2000) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (s.size() > max_chars) s = "..." + s.substr(s.size() - max_chars);
  return s;
}

// A fresh private folder, removed with everything in it on destruction.
class TempDir {
 public:
  static Result<TempDir> create() {
    std::error_code ec;
    fs::path base = fs::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string tmpl = (base / "oxport-ort-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) {
      const int err = errno;
      return Error("runtime-failed",
                   "cannot create a temporary folder in " + base.string() + ": " + std::strerror(err),
                   "set TMPDIR to a writable folder with free space");
    }
    return TempDir(tmpl);
  }
  TempDir(TempDir&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  TempDir& operator=(TempDir&&) = delete;
  ~TempDir() {
    if (!path_.empty()) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
  }
  const fs::path& path() const { return path_; }

 private:
  explicit TempDir(fs::path p) : path_(std::move(p)) {}
  fs::path path_;
};

class NodeOnnxRuntime final : public OnnxRuntime {
 public:
  NodeOnnxRuntime(fs::path node, fs::path runner, fs::path ort_pkg, std::string ort_version)
      : node_(std::move(node)), runner_(std::move(runner)), ort_pkg_(std::move(ort_pkg)),
        ort_version_(std::move(ort_version)) {}

  std::string describe() const override {
    return "ONNX Runtime " + (ort_version_.empty() ? std::string("(unknown version)") : ort_version_) +
           " (onnxruntime-node, CPU) via " + node_.string() + " " + runner_.string();
  }

  Result<std::vector<NamedTensor>> run(const fs::path& model_in,
                                       const std::vector<NamedTensor>& inputs) override {
    std::error_code ec;
    const fs::path model = fs::absolute(model_in, ec);
    if (!fs::is_regular_file(model, ec))
      return Error("runtime-failed", "cannot run " + model_in.string() + ": the ONNX file does not exist",
                   "export the model first, or check the path");

    OXPORT_ASSIGN(TempDir dir, TempDir::create());
    json request = {{"model", model.string()}, {"inputs", json::array()}};
    for (size_t i = 0; i < inputs.size(); ++i) {
      const std::string file = "in" + std::to_string(i) + ".npy";
      OXPORT_TRY(writeNpy(dir.path() / file, inputs[i].tensor));
      request["inputs"].push_back({{"name", inputs[i].name}, {"file", file}});
    }
    OXPORT_TRY(writeFileAtomically(dir.path() / "request.json", request.dump(2)));

    const fs::path log = dir.path() / "log.txt";
    auto spawned = spawnAndWait({node_.string(), runner_.string(), dir.path().string()}, log.string());
    if (!spawned.ok()) {
      Error e = spawned.error();
      if (e.diagnostics().front().hint.empty()) e.diagnostics().front().hint = std::string("check that node works; ") + kSetupHint;
      return e;
    }
    const ExitStatus exit = *spawned;

    const fs::path response_file = dir.path() / "response.json";
    json response;
    bool have_response = false;
    if (fs::is_regular_file(response_file, ec)) {
      response = json::parse(readText(response_file), nullptr, /*allow_exceptions=*/false);
      have_response = !response.is_discarded() && response.is_object();
    }
    if (have_response && response.contains("error")) {
      const auto& e = response["error"];
      return Error("runtime-failed",
                   "ONNX Runtime failed: " + (e.is_string() ? e.get<std::string>() : e.dump()),
                   "see the message above; an exporter bug is likely if the model itself fails to load");
    }
    if (!exit.exited || exit.code != 0 || !have_response) {
      std::string how = !exit.exited ? "was killed by signal " + std::to_string(exit.signal)
                        : exit.code != 0 ? "exited with status " + std::to_string(exit.code)
                                         : "wrote no valid response.json";
      const std::string out = trimTail(readText(log));
      return Error("runtime-failed",
                   "the ONNX Runtime runner " + how + (out.empty() ? "" : ":\n" + out),
                   "run `node " + runner_.string() + " --info MODEL.onnx` to check the runtime; " + kSetupHint);
    }
    if (!response.contains("outputs") || !response["outputs"].is_array())
      return Error("runtime-failed", "the ONNX Runtime runner's response has no \"outputs\" list",
                   "the runner " + runner_.string() + " does not match this oxport; reinstall oxport");

    std::vector<NamedTensor> outputs;
    for (const auto& o : response["outputs"]) {
      if (!o.is_object() || !o.contains("name") || !o["name"].is_string() || !o.contains("file") ||
          !o["file"].is_string())
        return Error("runtime-failed", "the ONNX Runtime runner's response has a malformed output: " + o.dump());
      OXPORT_ASSIGN(HostTensor t, readNpy(dir.path() / o["file"].get<std::string>()));
      if (o.contains("shape") && o["shape"].is_array() && o["shape"].get<std::vector<int64_t>>() != t.shape)
        return Error("runtime-failed", "output '" + o["name"].get<std::string>() +
                                           "': response.json and its .npy disagree on the shape");
      outputs.push_back({o["name"].get<std::string>(), std::move(t)});
    }
    return outputs;
  }

 private:
  fs::path node_, runner_, ort_pkg_;
  std::string ort_version_;
};

std::string num(double v) {
  std::ostringstream o;
  o << std::setprecision(3) << v;
  return o.str();
}

}  // namespace

Result<std::unique_ptr<OnnxRuntime>> makeDefaultRuntime() {
  OXPORT_ASSIGN(fs::path runner, locateRunner());
  const auto node = findOnPath("node");
  if (!node)
    return Error("runtime-missing", "node (Node.js) was not found on PATH; ONNX Runtime runs in it",
                 "install Node.js and onnxruntime-node: " + std::string(kSetupHint));
  std::vector<fs::path> looked;
  const auto pkg = findOrtPackage(runner, looked);
  if (!pkg) {
    std::string list;
    for (const auto& p : looked) list += "\n  " + p.string();
    return Error("runtime-missing",
                 "onnxruntime-node is not installed where " + runner.string() + " can load it; looked in:" + list,
                 std::string(kSetupHint) + " in the oxport source tree, or set NODE_PATH to a node_modules "
                 "folder that holds onnxruntime-node");
  }
  std::string version;
  const json pj = json::parse(readText(*pkg / "package.json"), nullptr, false);
  if (pj.is_object() && pj.contains("version") && pj["version"].is_string()) version = pj["version"];
  return std::unique_ptr<OnnxRuntime>(
      std::make_unique<NodeOnnxRuntime>(*node, runner, *pkg, std::move(version)));
}

OutputComparison compareTensors(const std::string& name, const HostTensor& expected,
                                const HostTensor& actual, double tolerance) {
  OutputComparison c;
  c.name = name;
  c.expected_shape = expected.shape;
  c.actual_shape = actual.shape;
  if (!wellFormed(expected) || !wellFormed(actual)) {
    c.note = "malformed tensor: its byte count does not match its shape and dtype";
    return c;
  }
  if (expected.shape != actual.shape) {
    c.note = "shape mismatch: expected " + shapeText(expected.shape) + ", got " + shapeText(actual.shape);
    return c;
  }
  std::vector<std::string> notes;
  bool ok = true;
  if (expected.dtype != actual.dtype) {
    notes.push_back(std::string("dtype mismatch: expected ") + dtypeName(expected.dtype) + ", got " +
                    dtypeName(actual.dtype));
    ok = false;
  }

  const int64_t n = expected.numel();
  const bool floating = isFloating(expected.dtype) || isFloating(actual.dtype);
  int64_t special_mismatch = 0, first_special = -1;
  int64_t int_mismatch = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double e = expected.at(i), a = actual.at(i);
    if (std::isfinite(e)) c.max_magnitude = std::max(c.max_magnitude, std::fabs(e));
    if (!std::isfinite(e) || !std::isfinite(a)) {
      const bool same = (std::isnan(e) && std::isnan(a)) || e == a;
      if (!same && special_mismatch++ == 0) first_special = i;
      continue;
    }
    c.max_abs_error = std::max(c.max_abs_error, std::fabs(e - a));
    if (!floating) {
      const bool equal = expected.dtype == DType::Int64 && actual.dtype == DType::Int64
                             ? expected.as<int64_t>()[i] == actual.as<int64_t>()[i]
                             : e == a;
      if (!equal) ++int_mismatch;
    }
  }
  if (c.max_magnitude > 0)
    c.max_rel_error = c.max_abs_error / c.max_magnitude;
  else
    c.max_rel_error = c.max_abs_error > 0 ? HUGE_VAL : 0.0;

  if (special_mismatch > 0) {
    ok = false;
    notes.push_back(std::to_string(special_mismatch) + " NaN/infinity mismatch(es), first at flat index " +
                    std::to_string(first_special) + " (expected " + num(expected.at(first_special)) +
                    ", got " + num(actual.at(first_special)) + ")");
  }
  if (floating) {
    const double tol = std::max({tolerance, dtypeEpsilon(expected.dtype), dtypeEpsilon(actual.dtype)});
    if (tol > tolerance)
      notes.push_back(std::string("tolerance raised to ") + num(tol) + " for " +
                      dtypeName(dtypeEpsilon(expected.dtype) >= dtypeEpsilon(actual.dtype) ? expected.dtype
                                                                                             : actual.dtype));
    if (c.max_abs_error > tol * c.max_magnitude) {
      ok = false;
      notes.push_back("max abs error " + num(c.max_abs_error) + " exceeds " + num(tol) + " x largest |value| " +
                      num(c.max_magnitude) + " = " + num(tol * c.max_magnitude));
    }
  } else if (int_mismatch > 0) {
    ok = false;
    notes.push_back(std::to_string(int_mismatch) + " of " + std::to_string(n) +
                    " elements differ (integer and bool outputs must match exactly)");
  }
  c.passed = ok;
  for (size_t i = 0; i < notes.size(); ++i) c.note += (i ? "; " : "") + notes[i];
  return c;
}

std::string VerifyReport::outcome() const {
  if (skipped) return "not run";
  if (!passed) return "FAILED";
  bool ties = false, random = false;
  for (const auto& run : runs)
    for (const auto& c : run.outputs) {
      ties = ties || c.tie_order;
      random = random || c.random;
    }
  return std::string("passed") + (ties ? " except tie order" : "") + (random ? ", random outputs not compared" : "");
}

std::string VerifyReport::toText() const {
  std::ostringstream o;
  if (skipped) {
    o << "ONNX Runtime check: not run: " << skip_reason << "\n";
    return o.str();
  }
  o << "ONNX Runtime check: " << outcome();
  if (passed) {
    // "passed except tie order at output idx: 12 elements whose selected values are equal"
    std::map<std::string, int64_t> tied;
    std::set<std::string> random;
    for (const auto& run : runs)
      for (const auto& c : run.outputs) {
        if (c.tie_order) tied[c.name] = std::max(tied[c.name], c.tied_elements);
        if (c.random) random.insert(c.name);
      }
    for (const auto& [name, n] : tied)
      o << "; tie order at output " << name << ": up to " << n << " index elements whose selected values are equal";
    for (const auto& name : random) o << "; " << name << " is random: shape and dtype checked";
  }
  o << " (tolerance " << num(tolerance) << " x each output's largest magnitude)\n";
  for (const auto& n : notes) o << "  note: " << n << "\n";
  if (runs.empty()) o << "  no runs\n";
  for (size_t r = 0; r < runs.size(); ++r) {
    const VerifyRun& run = runs[r];
    o << "run " << r + 1 << ", input shapes ";
    for (size_t i = 0; i < run.input_shapes.size(); ++i) o << (i ? ", " : "") << shapeText(run.input_shapes[i]);
    if (run.input_shapes.empty()) o << "(none)";
    o << ": " << (run.passed ? "passed" : "FAILED") << "\n";
    if (!run.error.empty()) o << "  error: " << run.error << "\n";
    for (const auto& c : run.outputs) {
      o << "  " << c.name << " " << shapeText(c.actual_shape) << ": ";
      if (c.random)
        o << "values not compared";
      else if (c.expected_shape == c.actual_shape)
        o << "max abs error " << num(c.max_abs_error) << ", max rel " << num(c.max_rel_error)
          << " (largest |value| " << num(c.max_magnitude) << ")";
      o << (!c.passed ? "  FAILED" : c.tie_order ? "  ok (tie order)" : c.random ? "  ok (random: not compared)" : "  ok");
      if (!c.note.empty()) o << " - " << c.note;
      o << "\n";
    }
  }
  return o.str();
}

std::string VerifyReport::toJson() const {
  json j;
  j["passed"] = passed;
  j["outcome"] = outcome();
  if (skipped) {
    j["skipped"] = true;
    j["skip_reason"] = skip_reason;
  }
  j["tolerance"] = tolerance;
  if (!notes.empty()) j["notes"] = notes;
  j["runs"] = json::array();
  for (const auto& run : runs) {
    json jr;
    jr["input_shapes"] = run.input_shapes;
    jr["passed"] = run.passed;
    if (!run.error.empty()) jr["error"] = run.error;
    jr["outputs"] = json::array();
    for (const auto& c : run.outputs) {
      // Non-finite numbers become null (JSON has no infinity).
      jr["outputs"].push_back({{"name", c.name},
                               {"expected_shape", c.expected_shape},
                               {"actual_shape", c.actual_shape},
                               {"max_abs_error", c.max_abs_error},
                               {"max_rel_error", c.max_rel_error},
                               {"max_magnitude", c.max_magnitude},
                               {"passed", c.passed},
                               {"status", !c.passed ? "failed" : c.tie_order ? "tie-order" : c.random ? "random" : "ok"},
                               {"tied_elements", c.tied_elements},
                               {"note", c.note}});
    }
    j["runs"].push_back(std::move(jr));
  }
  return j.dump(2);
}

}  // namespace oxport
