#include "oxport/cli.h"

#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "oxport/atomic_file.h"
#include "oxport/model.h"
#include "oxport/op_libraries.h"
#include "oxport/ops.h"
#include "oxport/preset.h"
#include "oxport/localize.h"
#include "oxport/runtime.h"
#include "oxport/subprocess.h"
#include "explain.h"
#include "interrupt.h"
#include "progress_line.h"

namespace oxport {

namespace {

using json = nlohmann::ordered_json;

const char* kMainHelp = R"(oxport - export TorchScript models (.pt from torch.jit.save) to ONNX

usage:
  oxport export MODEL.pt -o OUT.onnx [--preset P.json] [options]
  oxport verify MODEL.pt OUT.onnx [--preset P.json] [options] [--tolerance T] [--localize]
  oxport inspect MODEL.pt [--preset P.json] [options]
  oxport info MODEL.pt
  oxport ops [--opset N] [--json]
  oxport explain CODE | --all [--markdown]
  oxport --version

Run `oxport COMMAND --help` for the options of a command.
Exit codes: 0 success, 1 the export or verification failed, 2 usage error, 130 interrupted
(Ctrl+C: export and verify stop within a second and write nothing).
)";

const char* kExportHelp = R"(usage: oxport export MODEL.pt -o OUT.onnx [--preset P.json] [options]

Every option mirrors a key of the preset file (docs/PRESET.md); a flag overrides the preset.

  -o, --output FILE              where to write the .onnx (written atomically)
  --preset FILE                  read all options from a preset (model/output may be inside)
  --arg SPEC                     a positional argument; repeat in order. SPEC is a tensor spec
                                 ("1x3x224x224", "2x8:int64:arange", "1x3:float32:zeros:seed=3",
                                 "npy=x.npy") or a JSON ARG ('3', 'true', 'null', '"s"',
                                 '{"tensor": {...}}', '[...]'). Fills: randn (default), rand,
                                 smooth (a seeded low-frequency field in [0, 1]: an image with
                                 blobs and edges, the same picture at every verified size), zeros,
                                 ones, arange, npy=FILE
  --kwarg NAME=SPEC              a named argument of forward()
  --input-names a,b              names of the graph inputs, in order
  --output-names y,z             names of the graph outputs, in order
  --dynamic-axes SPEC            NAME:AXIS[=LABEL][,AXIS[=LABEL]...]; repeatable (a tensor's
                                 axes add up), e.g. --dynamic-axes x:0=batch,2=h --dynamic-axes y:0
  --opset N                      opset_version, 9 to 17 (default 11)
  --training MODE                EVAL (default), PRESERVE or TRAINING
  --operator-export-type T       ONNX, ONNX_FALLTHROUGH (default), ONNX_ATEN, ONNX_ATEN_FALLBACK
  --export-params BOOL           default true; false makes parameters graph inputs
  --graph-mode script|trace      script (default): a scripted model's data-dependent if/loops
                                 become ONNX If/Loop; trace: record only the path the example
                                 inputs take, as torch.jit.trace would (for raise/str/dict on a
                                 data-dependent path; warns for each if or loop it unrolled)
  --do-constant-folding BOOL     default true
  --keep-initializers-as-inputs true|false|none
  --custom-opset DOMAIN=VERSION  repeatable
  --verbose                      doc_strings with module scope and source line; print the graph
  --report FILE                  write a JSON report (status, timings, counts, diagnostics)
  --verify                       run the written model in ONNX Runtime and compare with libtorch
  --tolerance T                  verification tolerance relative to the output's magnitude (1e-4)
  --localize                     after verifying, find the first TorchScript node whose ONNX
                                 values differ from libtorch's (module, source line, ONNX nodes,
                                 errors of its inputs and outputs); exit 1 when one does
  --json                         print diagnostics as JSON
  --progress auto|always|never   a status line on stderr (phase, percentage, what is being
                                 done), overwritten in place and erased at the end; auto
                                 (default): only when stderr is a terminal and not with --json
  --load-library PATH            load an op library (a .so registering ops with TORCH_LIBRARY)
                                 before the model; repeatable (preset key load_libraries).
                                 torchvision's is found without it
  --list-passes                  print the export's passes in the order they run, and exit
  --print-after PASS             print the graph after that pass (TorchScript IR before
                                 conversion, ONNX IR from then on); repeatable, or "all"
)";

// What the supervised child (runCliIsolated) is doing, in memory its parent shares, so that a
// crash can be reported with what was being done to which file.
struct CrashBoard {
  char phase[256];
  char model[2048];
  char output[2048];
  volatile sig_atomic_t child_sigint;  // set by the child's own SIGINT handler (SigintCancels)
  // Set by the child once its work is done and its output flushed, just before it exits with
  // `exit_code`: the end of a process holding gigabytes of weights takes the kernel a while.
  volatile sig_atomic_t child_done;
  volatile sig_atomic_t exit_code;
};
CrashBoard* g_board = nullptr;
// The program ends when this command returns (runCliIsolated, oxport's main): what is big and
// only freed by the end anyway (a model's weights) is left to the process's exit.
bool g_process_ends = false;

void copyField(char* dst, size_t n, const std::string& s) {
  std::snprintf(dst, n, "%s", s.c_str());
}

void notePhase(const std::string& phase, const std::string& model = {}, const std::string& output = {}) {
  if (!g_board) return;
  copyField(g_board->phase, sizeof g_board->phase, phase);
  if (!model.empty()) copyField(g_board->model, sizeof g_board->model, model);
  if (!output.empty()) copyField(g_board->output, sizeof g_board->output, output);
}

struct CliError {
  std::string message;
};

bool parseBool(const std::string& s, bool* out) {
  if (s == "true" || s == "1" || s == "yes" || s == "on" || s == "True") { *out = true; return true; }
  if (s == "false" || s == "0" || s == "no" || s == "off" || s == "False") { *out = false; return true; }
  return false;
}

std::vector<std::string> splitList(const std::string& s, char sep = ',') {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream is(s);
  while (std::getline(is, cur, sep))
    if (!cur.empty()) out.push_back(cur);
  return out;
}

// An ARG from the command line: a JSON value, or a compact tensor spec.
Result<ArgValue> parseArg(const std::string& text) {
  std::string t = text;
  bool looks_json = !t.empty() && (t[0] == '{' || t[0] == '[' || t[0] == '"' || t == "null" || t == "true" ||
                                   t == "false");
  if (!looks_json) {
    // A bare number is a number; anything else is a tensor spec.
    char* end = nullptr;
    long long iv = std::strtoll(t.c_str(), &end, 10);
    if (end && *end == '\0' && !t.empty()) return ArgValue::integer(iv);
    double dv = std::strtod(t.c_str(), &end);
    if (end && *end == '\0' && !t.empty() && t.find_first_of(".eE") != std::string::npos) return ArgValue::number(dv);
    OXPORT_ASSIGN(TensorSpec spec, parseTensorSpec(t));
    return ArgValue::tensor(spec);
  }
  // Reuse the preset parser: wrap the value as the only element of "args".
  std::string doc = std::string("{\"args\": [") + t + "]}";
  OXPORT_ASSIGN(Preset p, parsePreset(doc));
  return p.options.args.at(0);
}

struct ParsedArgs {
  std::string command;
  std::vector<std::string> positional;
  std::optional<std::string> preset, output, report;
  bool verify = false, json = false, help = false;
  bool localize = false;  // verify --localize
  double tolerance = 1e-4;
  std::optional<int> ops_opset;
  bool list_passes = false;
  std::vector<std::string> load_libraries;  // --load-library, in order
  std::set<std::string> print_after;  // pass names, or "all"
  ProgressMode progress = ProgressMode::Auto;
  // overrides
  std::vector<std::function<Status(ExportOptions&)>> overrides;
};

Result<ParsedArgs> parseArgs(const std::vector<std::string>& args) {
  ParsedArgs p;
  if (args.empty()) return Error("usage", "no command given", "run `oxport --help`");
  p.command = args[0];
  std::vector<ArgValue> cli_args;
  bool have_cli_args = false;
  std::shared_ptr<std::map<std::string, DynamicAxisSpec>> flag_axes;  // --dynamic-axes, merged per name
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const std::string& flag) -> Result<std::string> {
      auto eq = a.find('=');
      if (a.rfind("--", 0) == 0 && eq != std::string::npos) return a.substr(eq + 1);
      if (i + 1 >= args.size()) return Error("usage", flag + " needs a value", "run `oxport " + p.command + " --help`");
      return args[++i];
    };
    std::string flag = a;
    if (a.rfind("--", 0) == 0 && a.find('=') != std::string::npos) flag = a.substr(0, a.find('='));
    if (flag == "-h" || flag == "--help") { p.help = true; continue; }
    if (flag == "-o" || flag == "--output") { OXPORT_ASSIGN(std::string v, value(flag)); p.output = v; continue; }
    if (flag == "--preset") { OXPORT_ASSIGN(std::string v, value(flag)); p.preset = v; continue; }
    if (flag == "--report") { OXPORT_ASSIGN(std::string v, value(flag)); p.report = v; continue; }
    if (flag == "--verify") { p.verify = true; continue; }
    if (flag == "--localize") { p.localize = true; continue; }
    if (flag == "--list-passes") { p.list_passes = true; continue; }
    if (flag == "--load-library") {
      OXPORT_ASSIGN(std::string v, value(flag));
      if (v.empty()) return Error("usage", "--load-library needs the path of a shared library");
      p.load_libraries.push_back(v);
      continue;
    }
    if (flag == "--print-after") {
      OXPORT_ASSIGN(std::string v, value(flag));
      for (const auto& name : splitList(v)) {
        bool known = name == "all";
        std::string names;
        for (const auto& pass : exportPasses()) {
          known = known || pass.name == name;
          names += (names.empty() ? "" : ", ") + pass.name;
        }
        if (!known)
          return Error("usage", "--print-after: there is no pass '" + name + "'",
                       "name one of: all, " + names + " (oxport export --list-passes)");
        p.print_after.insert(name);
      }
      continue;
    }
    if (flag == "--json") { p.json = true; continue; }
    if (flag == "--progress") {
      OXPORT_ASSIGN(std::string v, value(flag));
      if (!parseProgressMode(v, &p.progress))
        return Error("usage", "--progress takes auto, always or never, not '" + v + "'");
      continue;
    }
    if (flag == "--verbose") { p.overrides.push_back([](ExportOptions& o) { o.verbose = true; return okStatus(); }); continue; }
    if (flag == "--tolerance") {
      OXPORT_ASSIGN(std::string v, value(flag));
      char* end = nullptr;
      p.tolerance = std::strtod(v.c_str(), &end);
      if (!end || *end || p.tolerance <= 0) return Error("usage", "--tolerance takes a positive number, not '" + v + "'");
      continue;
    }
    if (flag == "--arg") {
      OXPORT_ASSIGN(std::string v, value(flag));
      OXPORT_ASSIGN(ArgValue arg, parseArg(v));
      cli_args.push_back(arg);
      have_cli_args = true;
      continue;
    }
    if (flag == "--kwarg") {
      OXPORT_ASSIGN(std::string v, value(flag));
      auto eq = v.find('=');
      if (eq == std::string::npos || eq == 0) return Error("usage", "--kwarg takes NAME=SPEC, not '" + v + "'");
      std::string name = v.substr(0, eq);
      OXPORT_ASSIGN(ArgValue arg, parseArg(v.substr(eq + 1)));
      p.overrides.push_back([name, arg](ExportOptions& o) {
        for (auto& kv : o.kwargs)
          if (kv.first == name) { kv.second = arg; return okStatus(); }
        o.kwargs.emplace_back(name, arg);
        return okStatus();
      });
      continue;
    }
    if (flag == "--input-names" || flag == "--output-names") {
      OXPORT_ASSIGN(std::string v, value(flag));
      auto names = splitList(v);
      bool in = flag == "--input-names";
      p.overrides.push_back([names, in](ExportOptions& o) {
        (in ? o.input_names : o.output_names) = names;
        return okStatus();
      });
      continue;
    }
    if (flag == "--dynamic-axes") {
      OXPORT_ASSIGN(std::string v, value(flag));
      auto colon = v.find(':');
      if (colon == std::string::npos || colon == 0)
        return Error("usage", "--dynamic-axes takes NAME:AXIS[=LABEL],..., not '" + v + "'");
      std::string name = v.substr(0, colon);
      // Repeating the flag for one tensor adds axes (`x:0=batch` then `x:2=height`).
      if (!flag_axes) {
        flag_axes = std::make_shared<std::map<std::string, DynamicAxisSpec>>();
        p.overrides.push_back([axes = flag_axes](ExportOptions& o) {
          for (const auto& [n, spec] : *axes) o.dynamic_axes[n] = spec;
          return okStatus();
        });
      }
      const bool seen = flag_axes->count(name) != 0;
      DynamicAxisSpec& spec = (*flag_axes)[name];
      if (!seen) spec.list_form = true;
      for (const auto& part : splitList(v.substr(colon + 1))) {
        auto eq = part.find('=');
        std::string ax = eq == std::string::npos ? part : part.substr(0, eq);
        char* end = nullptr;
        long long axis = std::strtoll(ax.c_str(), &end, 10);
        if (ax.empty() || !end || *end) return Error("usage", "--dynamic-axes: '" + ax + "' is not an axis number");
        std::string label = eq == std::string::npos ? "" : part.substr(eq + 1);
        if (auto it = spec.axes.find(axis); it != spec.axes.end() && it->second != label)
          return Error("usage", "--dynamic-axes names axis " + ax + " of '" + name + "' twice ('" + it->second +
                                    "' and '" + label + "')");
        if (!label.empty()) spec.list_form = false;
        spec.axes[axis] = label;
      }
      continue;
    }
    if (flag == "--opset" || flag == "--opset-version") {
      OXPORT_ASSIGN(std::string v, value(flag));
      char* end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || !end || *end) return Error("usage", "--opset takes a number, not '" + v + "'");
      if (p.command == "ops") p.ops_opset = static_cast<int>(n);
      p.overrides.push_back([n](ExportOptions& o) { o.opset_version = static_cast<int>(n); return okStatus(); });
      continue;
    }
    if (flag == "--training") {
      OXPORT_ASSIGN(std::string v, value(flag));
      auto m = parseTrainingMode(v);
      if (!m) return Error("usage", "--training takes EVAL, PRESERVE or TRAINING, not '" + v + "'");
      p.overrides.push_back([m](ExportOptions& o) { o.training = *m; return okStatus(); });
      continue;
    }
    if (flag == "--operator-export-type") {
      OXPORT_ASSIGN(std::string v, value(flag));
      auto t = parseOperatorExportType(v);
      if (!t) return Error("usage", "--operator-export-type takes ONNX, ONNX_FALLTHROUGH, ONNX_ATEN or ONNX_ATEN_FALLBACK, not '" + v + "'");
      p.overrides.push_back([t](ExportOptions& o) { o.operator_export_type = *t; return okStatus(); });
      continue;
    }
    if (flag == "--graph-mode") {
      OXPORT_ASSIGN(std::string v, value(flag));
      auto m = parseGraphMode(v);
      if (!m)
        return Error("usage", "--graph-mode takes script (keep if/loops as ONNX If/Loop) or trace (record the "
                              "path the example inputs take), not '" + v + "'");
      p.overrides.push_back([m](ExportOptions& o) { o.graph_mode = *m; return okStatus(); });
      continue;
    }
    if (flag == "--export-params" || flag == "--do-constant-folding") {
      OXPORT_ASSIGN(std::string v, value(flag));
      bool b;
      if (!parseBool(v, &b)) return Error("usage", flag + " takes true or false, not '" + v + "'");
      bool ep = flag == "--export-params";
      p.overrides.push_back([b, ep](ExportOptions& o) {
        (ep ? o.export_params : o.do_constant_folding) = b;
        return okStatus();
      });
      continue;
    }
    if (flag == "--keep-initializers-as-inputs") {
      OXPORT_ASSIGN(std::string v, value(flag));
      std::optional<bool> k;
      bool b;
      if (v == "none" || v == "None" || v == "null") k = std::nullopt;
      else if (parseBool(v, &b)) k = b;
      else return Error("usage", flag + " takes true, false or none, not '" + v + "'");
      p.overrides.push_back([k](ExportOptions& o) { o.keep_initializers_as_inputs = k; return okStatus(); });
      continue;
    }
    if (flag == "--custom-opset") {
      OXPORT_ASSIGN(std::string v, value(flag));
      auto eq = v.find('=');
      char* end = nullptr;
      long ver = eq == std::string::npos ? 0 : std::strtol(v.c_str() + eq + 1, &end, 10);
      if (eq == std::string::npos || eq == 0 || !end || *end)
        return Error("usage", "--custom-opset takes DOMAIN=VERSION, not '" + v + "'");
      std::string domain = v.substr(0, eq);
      p.overrides.push_back([domain, ver](ExportOptions& o) { o.custom_opsets[domain] = ver; return okStatus(); });
      continue;
    }
    if (a.rfind("-", 0) == 0 && a.size() > 1)
      return Error("usage", "unknown option " + a, "run `oxport " + p.command + " --help`");
    p.positional.push_back(a);
  }
  if (have_cli_args)
    p.overrides.insert(p.overrides.begin(), [cli_args](ExportOptions& o) { o.args = cli_args; return okStatus(); });
  return p;
}

void printDiagnostics(std::ostream& os, const std::vector<Diagnostic>& ds, bool as_json) {
  if (ds.empty()) return;
  if (as_json) {
    os << toJson(ds) << "\n";
    return;
  }
  for (const auto& d : ds) os << d.toString() << "\n";
}

int usageError(std::ostream& err, const Error& e) {
  err << "oxport: " << e.first().message << "\n";
  if (!e.first().hint.empty()) err << "  hint: " << e.first().hint << "\n";
  return 2;
}

// Options from the preset (if any) with the flags applied on top. Model and output paths from the
// preset are resolved against the preset's folder.
struct Job {
  ExportOptions options;
  std::string model, output;
  std::vector<std::string> libraries;  // the preset's load_libraries, then --load-library
};

Result<Job> makeJob(const ParsedArgs& p, size_t model_pos) {
  Job job;
  if (p.preset) {
    OXPORT_ASSIGN(Preset loaded, loadPreset(*p.preset));
    const Preset preset = resolvePresetPaths(std::move(loaded), *p.preset);
    job.options = preset.options;
    if (preset.model) job.model = *preset.model;
    if (preset.output) job.output = *preset.output;
    job.libraries = preset.load_libraries;
  }
  job.libraries.insert(job.libraries.end(), p.load_libraries.begin(), p.load_libraries.end());
  for (const auto& f : p.overrides) OXPORT_TRY(f(job.options));
  if (p.positional.size() > model_pos) job.model = p.positional[model_pos];
  if (p.output) job.output = *p.output;
  if (job.model.empty()) return Error("usage", "no model file given", "pass MODEL.pt or a preset with \"model\"");
  return job;
}

// Loads the op libraries, then the model; what loading noted (a library oxport found itself, one
// the model does not use) is printed and returned in `notes`.
Result<Model> openModel(const std::vector<std::string>& libraries, const std::string& path, bool as_json,
                        std::ostream& err, std::vector<Diagnostic>* notes = nullptr, const ProgressFn& progress = {},
                        const CancelToken& cancel = {}, ProgressLine* line = nullptr) {
  for (const auto& lib : libraries) {
    notePhase("loading the op library " + lib);
    OXPORT_TRY(loadOpLibrary(lib));
  }
  notePhase("loading", path);
  auto loaded = Model::load(path, progress, cancel);
  if (line) line->clear();
  if (!loaded.ok()) return loaded.error();
  Model model = std::move(*loaded);
  const auto& n = model.info().load_notes;
  if (!n.empty()) printDiagnostics(err, n, as_json);
  if (notes) *notes = n;
  return model;
}

json statsJson(const ExportStats& s) { return json::parse(toJson(s)); }

int cmdListPasses(std::ostream& out) {
  size_t width = 0;
  for (const auto& pass : exportPasses()) width = std::max(width, pass.name.size());
  std::string stage;
  for (const auto& pass : exportPasses()) {
    if (pass.stage != stage) out << (stage.empty() ? "" : "\n") << (stage = pass.stage) << ":\n";
    out << "  " << pass.name << std::string(width + 2 - pass.name.size(), ' ') << pass.summary << "\n";
  }
  return 0;
}

int cmdExportOrVerify(const ParsedArgs& p, std::ostream& out, std::ostream& err, bool verify_only) {
  if (p.list_passes && !verify_only) return cmdListPasses(out);
  auto t0 = std::chrono::steady_clock::now();
  auto jobr = makeJob(p, 0);
  if (!jobr.ok()) {
    if (jobr.error().code() == "usage") return usageError(err, jobr.error());
    printDiagnostics(err, jobr.error().diagnostics(), p.json);
    return 2;
  }
  Job& job = *jobr;
  // Options that are wrong whatever the model (opset range, duplicate names, ...) are usage errors.
  if (auto bad = validateOptions(job.options); !bad.empty()) {
    printDiagnostics(err, bad, p.json);
    return 2;
  }
  if (verify_only) {
    if (p.positional.size() < 2) return usageError(err, Error("usage", "verify needs MODEL.pt and MODEL.onnx"));
    job.output = p.positional[1];
  }
  if (job.output.empty())
    return usageError(err, Error("usage", "no output file given", "pass -o OUT.onnx (or set \"output\" in the preset)"));
  json report;
  report["model"] = job.model;
  report["output"] = job.output;
  auto writeReport = [&](const std::string& status) -> int {
    report["status"] = status;
    report["total_ms"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!p.report) return 0;
    Status s = writeFileAtomically(*p.report, report.dump(2) + "\n");
    if (!s.ok()) {
      err << s.error().message() << "\n";
      return 1;
    }
    return 0;
  };
  // Ctrl+C cancels: the core stops at its next check and writes nothing (exit 130).
  CancelToken cancel;
  SigintCancels sigint(cancel);
  const auto cancelled = [&](const Error& e) { return e.code() == "cancelled" && sigint.fired(); };
  std::vector<Phase> phases;
  if (!verify_only)
    phases = {Phase::Load, Phase::Passes, Phase::Trace, Phase::Convert, Phase::Fold,
              Phase::Optimize, Phase::Serialize, Phase::Check};
  else
    phases = {Phase::Load};
  if (verify_only || p.verify || p.localize) phases.push_back(Phase::Verify);
  ProgressLine line(err, progressWanted(p.progress, p.json), phases);
  const ProgressFn progress = line.fn();
  notePhase("loading", job.model, job.output);
  std::vector<Diagnostic> load_notes;
  auto model = openModel(job.libraries, job.model, p.json, err, &load_notes, progress, cancel, &line);
  // Freeing gigabytes of weights tensor by tensor takes a second or more (a cancelled export of a
  // big model waited on it): when the process ends with this command, it is left to the exit.
  struct LeaveToExit {
    const Result<Model>& m;
    ~LeaveToExit() {
      if (g_process_ends && m.ok()) new Model(*m);  // one more owner, never released
    }
  } leave_to_exit{model};
  if (!load_notes.empty()) report["load_notes"] = json::parse(toJson(load_notes));
  if (!model.ok()) {
    printDiagnostics(err, model.error().diagnostics(), p.json);
    report["errors"] = json::parse(toJson(model.error().diagnostics()));
    if (cancelled(model.error())) {
      writeReport("cancelled");
      return 130;
    }
    writeReport("failed");
    return 1;
  }
  bool ok = true;
  if (!verify_only) {
    notePhase("exporting");
    PassTrace trace;
    trace.print_after = p.print_after;
    trace.print = [&out, &line](const std::string& pass, const std::string& text) {
      line.clear();
      out << "*** after " << pass << " ***\n" << text << std::flush;
    };
    OutputTarget target = OutputTarget::toFile(job.output);
    target.graph_views = false;  // the studio's previews; the command prints neither
    auto r = model->exportOnnx(job.options, target, progress, cancel, p.print_after.empty() ? nullptr : &trace);
    line.clear();
    if (!r.ok()) {
      printDiagnostics(err, r.error().diagnostics(), p.json);
      report["errors"] = json::parse(toJson(r.error().diagnostics()));
      if (cancelled(r.error())) {
        writeReport("cancelled");
        err << "oxport: interrupted; " << job.output << " was not written (an earlier file of that name is untouched)\n";
        return 130;
      }
      writeReport("failed");
      err << "oxport: export failed; " << job.output << " was not written\n";
      return 1;
    }
    printDiagnostics(err, r->diagnostics, p.json);
    if (job.options.verbose) out << r->verbose_log;
    const auto& s = r->stats;
    out << "wrote " << job.output << " (" << s.file_bytes << " bytes, opset " << job.options.opset_version << ", "
        << s.onnx_nodes << " nodes, " << s.initializers << " initializers)\n";
    out << "  inputs:  ";
    for (size_t i = 0; i < r->input_names.size() && i < 8; ++i) out << (i ? ", " : "") << r->input_names[i];
    if (r->input_names.size() > 8) out << ", ... (" << r->input_names.size() << ")";
    out << "\n  outputs: ";
    for (size_t i = 0; i < r->output_names.size(); ++i) out << (i ? ", " : "") << r->output_names[i];
    out << "\n  checker: " << (s.checker_passed ? "passed" : "not run")
        << ", shape inference: " << (s.shape_inference_passed ? "passed" : "not run") << "\n";
    report["stats"] = statsJson(s);
    report["inputs"] = r->input_names;
    report["outputs"] = r->output_names;
    report["warnings"] = json::parse(toJson(r->diagnostics));
  }
  if (p.verify || p.localize || verify_only) {
    auto rt = makeDefaultRuntime();
    if (!rt.ok()) {
      printDiagnostics(err, rt.error().diagnostics(), p.json);
      report["verify"] = {{"error", rt.error().message()}};
      writeReport("failed");
      return 1;
    }
    VerifyOptions vo;
    vo.tolerance = p.tolerance;
    notePhase("verifying");
    auto vr = verifyExport(*model, job.options, job.output, **rt, vo, cancel, progress);
    line.clear();
    if (!vr.ok()) {
      printDiagnostics(err, vr.error().diagnostics(), p.json);
      writeReport(cancelled(vr.error()) ? "cancelled" : "failed");
      return cancelled(vr.error()) ? 130 : 1;
    }
    if (!(p.localize && p.json)) out << vr->toText();
    report["verify"] = json::parse(vr->toJson());
    // A file ONNX Runtime cannot run (custom-domain nodes) is not a failed verification.
    if (vr->skipped)
      printDiagnostics(err, {makeWarning("verify-skipped", "verification was not run: " + vr->skip_reason)}, p.json);
    ok = vr->passed || vr->skipped;
    if (p.localize && !vr->skipped) {
      notePhase("localizing");
      LocalizeOptions lo;
      lo.tolerance = p.tolerance;
      auto lr = localizeExport(*model, job.options, job.output, **rt, lo, cancel, progress);
      line.clear();
      if (!lr.ok()) {
        printDiagnostics(err, lr.error().diagnostics(), p.json);
        report["localize"] = {{"error", lr.error().message()}};
        writeReport(cancelled(lr.error()) ? "cancelled" : "failed");
        return cancelled(lr.error()) ? 130 : 1;
      }
      report["localize"] = json::parse(lr->toJson());
      if (p.json) {
        json doc;
        doc["verify"] = report["verify"];
        doc["localize"] = report["localize"];
        out << doc.dump(2) << "\n";
      } else {
        out << lr->toText();
      }
      ok = ok && !lr->diverged();
    }
  }
  if (writeReport(ok ? "ok" : "verify-failed") != 0) return 1;
  return ok ? 0 : 1;
}

int cmdInspect(const ParsedArgs& p, std::ostream& out, std::ostream& err) {
  auto jobr = makeJob(p, 0);
  if (!jobr.ok()) return usageError(err, jobr.error());
  auto model = openModel(jobr->libraries, jobr->model, p.json, err);
  if (!model.ok()) {
    printDiagnostics(err, model.error().diagnostics(), p.json);
    return 1;
  }
  notePhase("inspecting");
  auto g = model->inspect(jobr->options);
  if (!g.ok()) {
    printDiagnostics(err, g.error().diagnostics(), p.json);
    return 1;
  }
  out << g->toText();
  return 0;
}

int cmdInfo(const ParsedArgs& p, std::ostream& out, std::ostream& err) {
  if (p.positional.empty()) return usageError(err, Error("usage", "info needs MODEL.pt"));
  auto model = openModel(p.load_libraries, p.positional[0], p.json, err);
  if (!model.ok()) {
    printDiagnostics(err, model.error().diagnostics(), p.json);
    return 1;
  }
  const auto& i = model->info();
  if (p.json) {
    json j;
    j["path"] = i.path.string();
    j["kind"] = modelKindName(i.kind);
    j["schema"] = i.schema;
    j["training"] = i.training;
    j["parameter_count"] = i.parameter_count;
    j["parameter_bytes"] = i.parameter_bytes;
    json args = json::array();
    for (const auto& a : i.arguments)
      args.push_back({{"name", a.name}, {"type", a.type}, {"has_default", a.has_default}, {"default", a.default_value},
                      {"keyword_only", a.keyword_only}});
    j["arguments"] = args;
    json guesses = json::object();
    for (const auto& [name, g] : i.input_guesses)
      guesses[name] = {{"shape", g.shape}, {"dtype", dtypeName(g.dtype)}, {"reason", g.reason}};
    j["input_guesses"] = guesses;
    out << j.dump(2) << "\n";
    return 0;
  }
  out << i.path.string() << ": " << modelKindName(i.kind) << "\n"
      << "  " << i.schema << "\n"
      << "  parameters and buffers: " << i.parameter_count << " elements, " << i.parameter_bytes << " bytes\n"
      << "  saved in " << (i.training ? "training" : "eval") << " mode\n";
  // A starting point for --arg: the file keeps no input shapes, so these are read from the graph.
  for (const auto& [name, g] : i.input_guesses) {
    std::string spec;
    for (size_t d = 0; d < g.shape.size(); ++d) spec += (d ? "x" : "") + std::to_string(g.shape[d]);
    out << "  guessed input " << name << ": --arg " << spec << ":" << dtypeName(g.dtype) << "  (" << g.reason << ")\n";
  }
  return 0;
}

int cmdOps(const ParsedArgs& p, std::ostream& out) {
  auto ops = supportedOps();
  if (p.ops_opset) {
    std::vector<OpSupport> kept;
    for (auto& o : ops)
      if (std::find(o.opsets.begin(), o.opsets.end(), *p.ops_opset) != o.opsets.end()) kept.push_back(o);
    ops = kept;
  }
  if (p.json) {
    json j = json::array();
    for (const auto& o : ops)
      j.push_back({{"op", o.kind}, {"opsets", o.opsets}, {"min_opset", o.min_opset}, {"family", o.family}});
    out << j.dump(2) << "\n";
    return 0;
  }
  for (const auto& o : ops) {
    out << o.kind;
    if (o.min_opset > kMinOpset || o.max_opset < kMaxOpset)
      out << "  (opset " << o.min_opset << "-" << o.max_opset << ")";
    out << "\n";
  }
  out << ops.size() << " ops\n";
  return 0;
}

}  // namespace

int runCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    (args.empty() ? err : out) << kMainHelp;
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version" || args[0] == "version") {
    auto v = versions();
    out << "oxport " << v.oxport << " (libtorch " << v.libtorch << ", ONNX " << v.onnx << ", protobuf " << v.protobuf
        << ")\n";
    return 0;
  }
  if (args[0] == "explain") return runExplain({args.begin() + 1, args.end()}, out, err);
  auto parsed = parseArgs(args);
  if (!parsed.ok()) return usageError(err, parsed.error());
  const ParsedArgs& p = *parsed;
  const std::string& cmd = p.command;
  if (p.help) {
    out << (cmd == "export" || cmd == "verify" || cmd == "inspect" ? kExportHelp : kMainHelp);
    return 0;
  }
  try {
    if (cmd == "export") return cmdExportOrVerify(p, out, err, false);
    if (cmd == "verify") return cmdExportOrVerify(p, out, err, true);
    if (cmd == "inspect") return cmdInspect(p, out, err);
    if (cmd == "info") return cmdInfo(p, out, err);
    if (cmd == "ops") return cmdOps(p, out);
  } catch (const std::exception& e) {
    err << "oxport: internal error: " << e.what() << "\n";
    return 1;
  }
  err << "oxport: unknown command '" << cmd << "'\n" << kMainHelp;
  return 2;
}

namespace {

volatile sig_atomic_t g_child = 0;
volatile sig_atomic_t g_sigint = 0;   // a SIGINT reached the parent
volatile sig_atomic_t g_sigint_from_process = 0;  // ... sent by a process (kill), to be forwarded maybe

// A signal from the terminal (Ctrl+C, Ctrl+\, a hangup: si_code SI_KERNEL) reached the whole
// foreground process group, the child too; forwarding it would make it a second Ctrl+C there.
// A SIGINT sent by a process may have gone to the whole group too (`kill -INT -PGID`): the wait
// loop forwards it only if the child did not get it itself (childGotSigint).
void forwardSignal(int sig, siginfo_t* info, void*) {
  if (sig == SIGINT) g_sigint = 1;
  if (info && info->si_code == SI_KERNEL) return;
  if (sig == SIGINT) {
    g_sigint_from_process = 1;
    return;
  }
  if (g_child > 0) ::kill(static_cast<pid_t>(g_child), sig);
}

// Whether the child got a SIGINT of its own: its handler ran (the flag on the shared board) or the
// signal is pending there (/proc/PID/status: SigPnd, ShdPnd).
bool childGotSigint(pid_t pid) {
  if (g_board && g_board->child_sigint) return true;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("SigPnd:", 0) != 0 && line.rfind("ShdPnd:", 0) != 0) continue;
    try {
      if (std::stoull(line.substr(7), nullptr, 16) & (1ull << (SIGINT - 1))) return true;
    } catch (...) {
    }
  }
  return false;
}

// Removes the temporary files an atomic write beside `target` left behind (".NAME.tmp-XXXXXX")
// when the process writing them died; only those made since `since`.
void removeStaleTemporaries(const std::filesystem::path& target, std::filesystem::file_time_type since) {
  namespace fs = std::filesystem;
  if (target.empty()) return;
  std::error_code ec;
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::vector<std::string> prefixes = {"." + target.filename().string() + ".tmp-"};
  prefixes.push_back("." + target.filename().string() + ".data.tmp-");  // external data beside it
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    bool match = false;
    for (const auto& pre : prefixes) match = match || (name.rfind(pre, 0) == 0 && name.size() == pre.size() + 6);
    if (!match) continue;
    std::error_code e2;
    if (fs::last_write_time(it->path(), e2) >= since && !e2) fs::remove(it->path(), e2);
  }
}

// runCli, then the end of the process. Everything is written and closed by then (outputs are
// renamed into place, temporary files removed, before runCli returns): libtorch's static
// destructors and the heap's teardown are skipped, which cost a tenth of a second or more of a
// short export and more after a big one.
[[noreturn]] void runCliAndExit(const std::vector<std::string>& args) {
  const int rc = runCli(args, std::cout, std::cerr);
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  if (g_board) {
    g_board->exit_code = rc;
    g_board->child_done = 1;
  }
  // The prompt comes back without waiting for the kernel to free a big model's pages (0.5-1 s
  // for 1.5 GB under load), whether the command finished or was interrupted: every output is
  // complete, renamed into place and closed by now.
  exitLeavingMemoryBehind(rc);
}

}  // namespace

int runCliIsolated(const std::vector<std::string>& args) {
  g_process_ends = true;
  auto parsed = parseArgs(args);
  const char* env = std::getenv("OXPORT_ISOLATE");
  const bool wanted = !(env && std::string(env) == "0");
  const std::string cmd = parsed.ok() ? parsed->command : "";
  if (!wanted || !parsed.ok() || parsed->help ||
      (cmd != "export" && cmd != "verify" && cmd != "inspect" && cmd != "info"))
    runCliAndExit(args);

  void* mem = ::mmap(nullptr, sizeof(CrashBoard), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) runCliAndExit(args);
  g_board = new (mem) CrashBoard{};
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const auto started = std::filesystem::file_time_type::clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) runCliAndExit(args);
  if (pid == 0) {
    // The child does the work; a libtorch crash ends only it, and the parent reports it. The
    // model is therefore read once (no load probe of its own).
    setLoadGuard(LoadGuard::CallerIsolated);
    SigintCancels::alsoFlag(&g_board->child_sigint);
    runCliAndExit(args);
  }

  // The parent's end skips libtorch's static destructors too, as the child's does: returning
  // from main took this process 0.5-0.7 s more (measured on a loaded machine), on every command.
  const auto supervise = [&]() -> int {
    g_child = pid;
    struct sigaction sa {};
    sa.sa_sigaction = forwardSignal;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    // Forward what would have ended this process to the child (Ctrl+C reaches both anyway); a
    // signal this process was started ignoring (e.g. SIGINT in a background job) stays ignored.
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
      ::sigaction(sig, &sa, nullptr);
    }
    // The child cancels on SIGINT at its next check, within a second in the core's loops; a call
    // that cannot be interrupted (libtorch reading a large archive, the ONNX checker) may take
    // longer: a child still running a second after the SIGINT is killed, and reported interrupted.
    constexpr auto kCancelGrace = std::chrono::seconds(1);
    int status = 0;
    bool escalated = false;
    std::chrono::steady_clock::time_point sigint_at{};
    for (;;) {
      const pid_t r = ::waitpid(pid, &status, g_sigint ? WNOHANG : 0);
      if (r == pid) break;
      if (r < 0 && errno != EINTR) return 1;
      if (!g_sigint) continue;
      // Interrupted, and the child has finished (the export cancelled, its temporary files removed,
      // its message written): its exit status is known, so the prompt comes back now, not after the
      // kernel has freed a big model's memory (half a second or more); init reaps the child.
      if (g_board->child_done) return g_board->exit_code;
      const auto now = std::chrono::steady_clock::now();
      if (sigint_at == std::chrono::steady_clock::time_point{}) sigint_at = now;
      // kill(2) to a process group marks the signal pending in every member before it returns, so
      // a look a moment later tells a SIGINT to the group (the child has it) from one to this
      // process only (forwarded). One SIGINT, one cancel: a second would end the child by default.
      if (g_sigint_from_process && now - sigint_at >= std::chrono::milliseconds(20)) {
        g_sigint_from_process = 0;
        if (!childGotSigint(pid)) ::kill(pid, SIGINT);
      }
      if (!escalated && now - sigint_at >= kCancelGrace) {
        ::kill(pid, SIGKILL);
        escalated = true;
      }
      if (r == 0) ::usleep(10000);
    }
    g_child = 0;
    const ExitStatus ended = ExitStatus::decode(status);
    if (ended.exited) return ended.code;
    if (!ended.signal) return 1;

    const int sig = escalated ? SIGINT : ended.signal;
    const ParsedArgs& p = *parsed;
    const std::string phase = g_board->phase[0] ? g_board->phase : "starting";
    const std::string model = g_board->model, output = g_board->output;
    removeStaleTemporaries(output, started);
    if (p.report) removeStaleTemporaries(*p.report, started);
    const std::string kept = output.empty() ? std::string("nothing was written")
                                            : output + " was not written (an earlier file of that name is untouched)";
    Diagnostic d;
    d.severity = Severity::Error;
    int rc = 1;
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT) {
      d.code = "interrupted";
      d.message = "interrupted (" + std::string(::strsignal(sig)) + ") while " + phase + (model.empty() ? "" : " " + model);
      d.hint = kept;
      rc = 128 + sig;
    } else if (sig == SIGKILL) {
      d.code = "killed";
      d.message = "oxport was killed while " + phase + (model.empty() ? "" : " " + model) +
                  "; the system may have run out of memory";
      d.hint = kept + "; free memory or export on a larger machine";
    } else if (phase == "loading") {
      d.code = "load-crashed";
      d.message = "libtorch crashed (" + std::string(::strsignal(sig)) + ") while reading " + model +
                  ": its TorchScript code or pickled data is malformed";
      d.hint = "the file was altered after torch.jit.save wrote it, or was not written by it; save the model again; " + kept;
    } else {
      d.code = "crashed";
      d.message = "oxport crashed (" + std::string(::strsignal(sig)) + ") while " + phase +
                  (model.empty() ? "" : " " + model);
      d.hint = "this is a bug in oxport or libtorch: please report it with the model and the command line; " + kept;
    }
    printDiagnostics(std::cerr, {d}, p.json);
    if (p.report) {
      json report;
      report["model"] = model;
      report["output"] = output;
      report["status"] = d.code == "interrupted" ? "interrupted" : "crashed";
      report["errors"] = json::parse(toJson(std::vector<Diagnostic>{d}));
      (void)writeFileAtomically(*p.report, report.dump(2) + "\n");
    }
    return rc;
  };
  const int rc = supervise();
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(rc);
}

}  // namespace oxport
