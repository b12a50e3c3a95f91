#include <caffe2/serialize/read_adapter_interface.h>
#include <fcntl.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <sstream>

#include <filesystem>
#include <fstream>


#include "oxport/op_libraries.h"
#include "base/enum_names.h"
#include "frontend/frontend.h"
#include "load/input_guess.h"
#include "load/load_probe.h"
#include "load/torch_archive.h"
#include "pipeline/model_impl.h"
#include "frontend/inline_calls.h"

namespace oxport {

std::string torchErrorMessage(const std::exception& e) {
  std::string msg;
  if (auto* ce = dynamic_cast<const c10::Error*>(&e)) msg = ce->what_without_backtrace();
  else msg = e.what();
  // Keep the first meaningful lines; drop C++ frames and the TorchScript traceback boilerplate.
  std::string out;
  size_t start = 0;
  int lines = 0;
  // The interpreter's own error ("RuntimeError: ... not implemented for 'Half'") comes last, after
  // the TorchScript traceback: it is kept even when the traceback is cut.
  std::string last_error;
  bool cut = false;
  while (start < msg.size()) {
    size_t end = msg.find('\n', start);
    std::string line = msg.substr(start, end == std::string::npos ? std::string::npos : end - start);
    start = end == std::string::npos ? msg.size() : end + 1;
    if (line.find("Exception raised from") != std::string::npos) break;
    if (line.find("frame #") != std::string::npos) break;
    if (line.empty()) continue;
    const size_t colon = line.find("Error: ");
    if (colon != std::string::npos && colon > 0 && line.find(' ') > colon) last_error = line;
    if (lines < 6) {
      out += (out.empty() ? "" : "\n") + line;
      ++lines;
    } else {
      cut = true;
    }
  }
  if (cut && !last_error.empty()) out += "\n  ...\n" + last_error;
  return out.empty() ? msg : out;
}

const char* modelKindName(ModelKind k) {
  static constexpr EnumName<ModelKind> kNames[] = {{ModelKind::TracedModule, "traced module"},
                                                   {ModelKind::ScriptedModule, "scripted module"},
                                                   {ModelKind::ScriptFunction, "script function"}};
  return enumName(kNames, k);
}

const ModelInfo& Model::info() const { return impl_->info; }

// torch.jit.trace records, for each node, the Python call stack that made it ("model.py(12):
// forward" lines through torch/jit/_trace.py); scripted code keeps its own source text.
static std::optional<ModelKind> kindFromSourceRecords(const torch::jit::Block* b) {
  bool scripted = false;
  for (const torch::jit::Node* n : b->nodes()) {
    bool original = false;
    const std::string text = recordedSource(n, &original);
    if (isTraceStack(text)) return ModelKind::TracedModule;
    if (original && !text.empty()) scripted = true;
  }
  if (scripted) return ModelKind::ScriptedModule;
  return std::nullopt;
}

// "Unknown builtin op: ns::name" in a load failure: load the op library that registers it when
// oxport can find it (torchvision's) and say so in `notes`; true to try the load again. Other
// unknown ops are an error saying which library to load.
static Result<bool> loadLibraryForUnknownOp(const std::filesystem::path& model, const std::string& message,
                                             std::vector<Diagnostic>& notes) {
  const std::string key = "Unknown builtin op: ";
  auto p = message.find(key);
  if (p == std::string::npos) return false;
  std::string op = message.substr(p + key.size());
  auto end = op.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:");
  if (end != std::string::npos) op.resize(end);
  while (!op.empty() && op.back() == ':') op.pop_back();
  const std::string ns = op.substr(0, op.find("::"));
  if (ns == "torchvision") {
    for (const auto& l : loadedOpLibraries())
      if (l.found_automatically) return false;  // loaded already, and the op is still unknown
    auto lib_path = findTorchvisionOpLibrary();
    if (!lib_path)
      return Error("op-library-missing",
                   model.filename().string() + " uses " + op + ", from torchvision's op library, which is not loaded "
                   "and was not found",
                   "install torchvision's ops (apt-get install python3-torchvision), or pass --load-library "
                   "PATH/TO/torchvision/_C.so (preset key load_libraries)");
    OXPORT_ASSIGN(OpLibrary lib, loadOpLibrary(*lib_path, /*found_automatically=*/true));
    (void)lib;
    Diagnostic d = makeWarning("op-library-loaded",
                               "loaded torchvision's op library " + lib_path->string() + " for " + op +
                                   " (no Python is involved)",
                               "pass --load-library to use another build");
    d.severity = Severity::Note;
    notes.push_back(d);
    return true;
  }
  return Error("op-library-missing",
               model.filename().string() + " uses " + op + ", an operator that no loaded op library registers",
               "pass --load-library PATH (preset key load_libraries) naming the shared library that registers "
               "the " + ns + ":: operators with TORCH_LIBRARY (what torch.ops.load_library loads in Python)");
}

// Libraries given by the user that register nothing this model uses: a likely mix-up, said as
// a warning (the load itself succeeded).
static std::vector<Diagnostic> unusedOpLibraries(torch::jit::Graph& forward) {
  std::vector<Diagnostic> out;
  const auto libs = loadedOpLibraries();
  if (libs.empty()) return out;
  auto g = forward.copy();
  inlineCallsAndForks(*g);
  std::set<std::string> kinds;
  std::function<void(const torch::jit::Block*)> visit = [&](const torch::jit::Block* b) {
    for (const auto* n : b->nodes()) {
      kinds.insert(n->kind().toQualString());
      for (const auto* sb : n->blocks()) visit(sb);
    }
  };
  visit(g->block());
  for (const auto& l : libs) {
    if (l.found_automatically) continue;
    bool used = false;
    for (const auto& op : l.operators) used = used || kinds.count(op);
    if (used) continue;
    out.push_back(makeWarning("op-library-unused",
                              l.operators.empty()
                                  ? "the op library " + l.path.string() + " registers no TorchScript operators"
                                  : "the model uses none of the " + std::to_string(l.operators.size()) +
                                        " operators the op library " + l.path.string() + " registers (" +
                                        l.operators.front() + (l.operators.size() > 1 ? ", ..." : "") + ")",
                              "check that it is the library the model was saved with"));
  }
  return out;
}

static bool hasControlFlow(const torch::jit::Block* b) {
  for (const auto* n : b->nodes()) {
    if (n->kind() == c10::prim::If || n->kind() == c10::prim::Loop) return true;
    for (const auto* sub : n->blocks())
      if (hasControlFlow(sub)) return true;
  }
  return false;
}

namespace {

// libtorch's reads of the archive, through DeferredCrcs: the tensor records' CRC-32s are checked
// as they are read, and a cancel stops the read within one 4 MiB piece (libtorch then fails with
// a read error, reported as the cancel). torch::jit::load of a 1.4 GB model takes seconds.
class CheckingReader : public caffe2::serialize::ReadAdapterInterface {
 public:
  CheckingReader(int fd, size_t size, DeferredCrcs& crcs, const CancelToken& cancel)
      : fd_(fd), size_(size), crcs_(crcs), cancel_(cancel) {}
  ~CheckingReader() override { ::close(fd_); }
  size_t size() const override { return size_; }
  size_t read(uint64_t pos, void* buf, size_t n, const char*) const override {
    return crcs_.read(fd_, pos, buf, n, [this] { return cancel_.cancelled(); });
  }

 private:
  int fd_;
  size_t size_;
  DeferredCrcs& crcs_;
  const CancelToken& cancel_;
};

torch::jit::Module loadChecked(const std::filesystem::path& path, DeferredCrcs& crcs, const CancelToken& cancel) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return torch::jit::load(path.string());  // libtorch says why
  const off_t size = ::lseek(fd, 0, SEEK_END);
  auto reader = std::make_shared<CheckingReader>(fd, static_cast<size_t>(std::max<off_t>(size, 0)), crcs, cancel);
  return torch::jit::load(std::shared_ptr<caffe2::serialize::ReadAdapterInterface>(reader));
}

}  // namespace

Result<Model> Model::load(const std::filesystem::path& path, const ProgressFn& progress, const CancelToken& cancel) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec))
    return Error("file-not-found", "model file " + path.string() + " does not exist",
                 "check the path; oxport reads files saved by torch.jit.save");
  if (fs::is_directory(path, ec))
    return Error("not-a-file", path.string() + " is a directory, not a model file",
                 "pass the .pt file saved by torch.jit.save");
  auto size = fs::file_size(path, ec);
  if (ec || size == 0)
    return Error("empty-file", "model file " + path.string() + " is empty",
                 "save the model again with torch.jit.save(torch.jit.trace(model, example), path)");
  {
    std::ifstream f(path, std::ios::binary);
    char magic[2] = {0, 0};
    f.read(magic, 2);
    if (!f || magic[0] != 'P' || magic[1] != 'K')
      return Error("not-torchscript",
                   path.string() + " is not a TorchScript archive (it is not a zip file)",
                   "oxport reads files saved by torch.jit.save; a state_dict or a pickled module saved by "
                   "torch.save must first be scripted or traced, then saved with torch.jit.save");
  }
  // One progress call before each step, and the cancel checked after it: a cancel at any of
  // them ends the load (the probe child is killed within its 100 ms poll).
  auto step = [&](double fraction, const std::string& what) {
    if (progress) progress(Phase::Load, fraction, what);
    return cancel.cancelled();
  };
  const Error cancelled("cancelled", "loading was cancelled");
  if (step(0.0, "checking the archive of " + path.filename().string())) return cancelled;
  // The zip directory, the entries TorchScript needs and the CRC-32s, before libtorch reads it
  // (libtorch checks little of this; see torch_archive.h).
  DeferredCrcs crcs;  // the tensor records': checked as libtorch reads them
  OXPORT_TRY(checkTorchScriptArchive(path, &crcs));
  auto impl = std::make_shared<Impl>();
  std::vector<Diagnostic> notes;
  // A model that uses ops of an op library not loaded yet fails with "Unknown builtin op";
  // torchvision's library is found and loaded here, then the load is tried again.
  for (int attempt = 0;; ++attempt) {
    // libtorch may still crash on malformed code or pickles: read the file in a child first
    // (probeLoadInChild polls the cancel itself and kills its child).
    if (progress) progress(Phase::Load, 0.2, "reading it in a separate process");
    Status probe = probeLoadInChild(path, cancel);
    if (probe.ok()) {
      if (step(0.5, "compiling its TorchScript code")) return cancelled;
      try {
        impl->module = loadChecked(path, crcs, cancel);
        if (loadGuard() == LoadGuard::CallerIsolated) readAllSourceRanges(impl->module);
        break;
      } catch (const std::exception& e) {
        if (cancel.cancelled()) return cancelled;
        // A damaged tensor record is the better explanation of a failed read.
        OXPORT_TRY(crcs.finish(path));
        probe = loadFailed(path, torchErrorMessage(e));
      }
    }
    const std::string message = probe.error().diagnostics().empty() ? "" : probe.error().first().message;
    if (attempt >= 4 || probe.error().code() != "load-failed") return probe.error();
    OXPORT_ASSIGN(bool retry, loadLibraryForUnknownOp(path, message, notes));
    if (!retry) return probe.error();
  }
  if (cancel.cancelled()) return cancelled;
  OXPORT_TRY(crcs.finish(path));  // the tensor records libtorch did not read whole
  if (step(0.8, "reading forward()'s signature and the parameters")) return cancelled;
  auto method = impl->module.find_method("forward");
  if (!method)
    return Error("no-forward", path.string() + " has no forward() method", "save a module with a forward method");
  ModelInfo& info = impl->info;
  info.path = path;
  const auto& schema = method->function().getSchema();
  std::string type_name = impl->module.type()->name() ? impl->module.type()->name()->qualifiedName() : "";
  auto graph = torch::jit::toGraphFunction(method->function()).graph();
  if (type_name.find("PlaceholderModule") != std::string::npos) info.kind = ModelKind::ScriptFunction;
  else if (hasControlFlow(graph->block())) info.kind = ModelKind::ScriptedModule;
  else if (auto kind = kindFromSourceRecords(graph->block())) info.kind = *kind;
  else {
    // No source records (stripped debug info): a module whose forward takes only tensors was
    // most likely traced.
    bool all_tensors = true;
    for (size_t i = 1; i < schema.arguments().size(); ++i)
      all_tensors = all_tensors && schema.arguments()[i].type()->kind() == c10::TypeKind::TensorType;
    info.kind = all_tensors ? ModelKind::TracedModule : ModelKind::ScriptedModule;
  }
  for (size_t i = 1; i < schema.arguments().size(); ++i) {
    const auto& a = schema.arguments()[i];
    ArgumentInfo ai;
    ai.name = a.name();
    ai.type = a.type()->annotation_str();
    ai.keyword_only = a.kwarg_only();
    if (a.default_value()) {
      ai.has_default = true;
      std::ostringstream os;
      os << *a.default_value();
      ai.default_value = os.str();
    }
    info.arguments.push_back(ai);
  }
  std::ostringstream rt;
  for (size_t i = 0; i < schema.returns().size(); ++i)
    rt << (i ? ", " : "") << schema.returns()[i].type()->annotation_str();
  info.return_type = rt.str();
  {
    std::ostringstream s;
    s << "forward(";
    for (size_t i = 0; i < info.arguments.size(); ++i) {
      const auto& a = info.arguments[i];
      s << (i ? ", " : "") << a.type << ' ' << a.name;
      if (a.has_default) s << '=' << a.default_value;
    }
    s << ") -> " << info.return_type;
    info.schema = s.str();
  }
  info.training = impl->module.is_training();
  for (const auto& p : impl->module.named_parameters(true)) {
    info.parameter_count += p.value.numel();
    info.parameter_bytes += p.value.numel() * static_cast<int64_t>(p.value.element_size());
  }
  for (const auto& b : impl->module.named_buffers(true)) {
    info.parameter_count += b.value.numel();
    info.parameter_bytes += b.value.numel() * static_cast<int64_t>(b.value.element_size());
  }
  info.input_guesses = guessInputShapes(impl->module);
  info.load_notes = std::move(notes);
  for (auto& d : unusedOpLibraries(*graph)) info.load_notes.push_back(std::move(d));
  if (cancel.cancelled()) return cancelled;
  if (progress) progress(Phase::Load, 1.0, "loaded");
  return Model(impl);
}

}  // namespace oxport
