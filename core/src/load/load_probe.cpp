// See load_probe.h.
#include "load/load_probe.h"

#include <string.h>

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "oxport/subprocess.h"
#include "pipeline/model_impl.h"

namespace oxport {

namespace {

void touchSourceRanges(const torch::jit::Block* b) {
  for (const torch::jit::Node* n : b->nodes()) {
    const auto& sr = n->sourceRange();
    if (auto orig = sr.findSourceRangeThatGenerated()) (void)orig->file_line_col();
    (void)sr.file_line_col();
    for (const torch::jit::Block* sub : n->blocks()) touchSourceRanges(sub);
  }
}

// The saved debug info (`code/...debug_pkl`, format FORMAT_WITH_STRING_TABLE):
//   ("FORMAT_WITH_STRING_TABLE", (text, ...),
//    ((byte_offset, ((text_indices, file_index, first_line), start, end), debug_handle), ...))
// libtorch indexes the text table with these numbers unchecked; check them. Returns a problem or "".
std::string checkDebugInfo(caffe2::serialize::PyTorchStreamReader& reader) {
  for (const std::string& name : reader.getAllRecords()) {
    if (name.size() < 10 || name.compare(name.size() - 10, 10, ".debug_pkl") != 0) continue;
    auto [data, size] = reader.getRecord(name);
    const c10::IValue v = torch::jit::unpickle(static_cast<const char*>(data.get()), size);
    const std::string bad = name + " (debug info) is malformed";
    if (!v.isTuple()) return bad;
    const auto& top = v.toTupleRef().elements();
    if (top.size() != 3 || !top[0].isString() || top[0].toStringRef() != "FORMAT_WITH_STRING_TABLE") continue;
    if (!top[1].isTuple() || !top[2].isTuple()) return bad;
    const auto& table = top[1].toTupleRef().elements();
    for (const auto& t : table)
      if (!t.isString()) return bad;
    const int64_t n = static_cast<int64_t>(table.size());
    for (const auto& rec : top[2].toTupleRef().elements()) {
      if (!rec.isTuple() || rec.toTupleRef().elements().size() < 2) return bad;
      const auto& range = rec.toTupleRef().elements()[1];
      if (!range.isTuple() || range.toTupleRef().elements().size() != 3) return bad;
      const auto& r = range.toTupleRef().elements();
      if (!r[0].isTuple() || !r[1].isInt() || !r[2].isInt()) return bad;
      const auto& src = r[0].toTupleRef().elements();
      if (src.size() != 3 || !src[0].isIntList() || !src[1].isInt() || !src[2].isInt()) return bad;
      int64_t text_len = 0;
      for (int64_t i : src[0].toIntList()) {
        if (i < 0 || i >= n) return bad + ": a text index is out of range";
        text_len += static_cast<int64_t>(table[static_cast<size_t>(i)].toStringRef().size());
      }
      if (src[1].toInt() < 0 || src[1].toInt() >= n) return bad + ": a file index is out of range";
      const int64_t start = r[1].toInt(), end = r[2].toInt();
      // PyTorch itself writes ranges that end past their text (e.g. (0, 1) over an empty entry),
      // and only the start is used to find a line: check that the start lies within the text.
      if (start < 0 || end < start || start > text_len) return bad + ": a source range is out of range";
    }
  }
  return {};
}

}  // namespace

void readAllSourceRanges(const torch::jit::Module& m) {
  for (const torch::jit::Function* f : m._ivalue()->compilation_unit()->get_functions())
    if (const auto* gf = dynamic_cast<const torch::jit::GraphFunction*>(f)) touchSourceRanges(gf->graph()->block());
}

Error loadFailed(const std::filesystem::path& path, const std::string& why) {
  return Error("load-failed", "cannot load " + path.string() + " as TorchScript: " + why,
               "the file may be truncated or saved by an incompatible PyTorch; save it again with "
               "torch.jit.save (PyTorch 1.13 or older formats are read)");
}

Error corruptModel(const std::filesystem::path& path, const std::string& why) {
  return Error("corrupt-model", path.string() + " is damaged: " + why,
               "the file was altered after torch.jit.save wrote it; save the model again");
}

namespace {
std::atomic<LoadGuard> g_guard{LoadGuard::ChildProcess};
}  // namespace

void setLoadGuard(LoadGuard guard) { g_guard = guard; }
LoadGuard loadGuard() { return g_guard; }

Status probeLoadInChild(const std::filesystem::path& path, const CancelToken& cancel) {
  if (const char* env = std::getenv("OXPORT_LOAD_PROBE"); env && std::string(env) == "0") return okStatus();
  if (g_guard == LoadGuard::CallerIsolated) {
    // A crash here ends the caller's isolated process, which reports it; only the checks remain.
    std::string message;
    try {
      caffe2::serialize::PyTorchStreamReader reader(path.string());
      message = checkDebugInfo(reader);
    } catch (const std::exception& e) {
      return loadFailed(path, torchErrorMessage(e));
    }
    if (!message.empty()) return corruptModel(path, message);
    return okStatus();
  }
  // Read the archive in a child; it reports libtorch's error text (if any) through its message.
  auto probe = runInChild(
      [&](std::string& message) {
        try {
          {
            caffe2::serialize::PyTorchStreamReader reader(path.string());
            message = checkDebugInfo(reader);
          }
          if (!message.empty()) return 4;
          torch::jit::Module m = torch::jit::load(path.string());
          readAllSourceRanges(m);
        } catch (const std::exception& e) {
          message = torchErrorMessage(e);
          return 3;
        }
        return 0;
      },
      [&] { return cancel.cancelled(); });
  if (!probe.ok()) return okStatus();  // no probe possible: load directly
  const bool cancelled = probe->cancelled;
  const std::string& message = probe->message;
  const ExitStatus status = probe->status;
  if (cancelled) return Error("cancelled", "loading was cancelled");
  if (status.signal) {
    return Error("load-crashed",
                 "libtorch crashed (" + std::string(::strsignal(status.signal)) + ") while reading " + path.string() +
                     ": its TorchScript code or pickled data is malformed",
                 "the file was altered after torch.jit.save wrote it, or was not written by it; save the model "
                 "again. (oxport read it in a separate process, so nothing else was affected.)");
  }
  if (status.exited && status.code == 4) return corruptModel(path, message);
  if (status.exited && status.code == 3) return loadFailed(path, message);
  if (!status.ok())
    return Error("load-crashed",
                 "libtorch ended abnormally (" + status.describe() + ") while reading " + path.string() +
                     (message.empty() ? std::string() : ": " + message),
                 "save the model again with torch.jit.save");
  return okStatus();
}

}  // namespace oxport
