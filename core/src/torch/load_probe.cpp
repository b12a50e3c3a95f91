// See load_probe.h.
#include "torch/load_probe.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "torch/model_impl.h"

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
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return okStatus();  // no probe possible; load directly
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return okStatus();
  }
  if (pid == 0) {
    // Child: read the archive, report libtorch's error text (if any) through the pipe, and leave
    // without running destructors or atexit handlers.
    ::close(fds[0]);
    std::string message;
    int code = 0;
    try {
      {
        caffe2::serialize::PyTorchStreamReader reader(path.string());
        message = checkDebugInfo(reader);
      }
      if (!message.empty()) {
        code = 4;
        (void)!::write(fds[1], message.data(), message.size());
        ::_exit(code);
      }
      torch::jit::Module m = torch::jit::load(path.string());
      readAllSourceRanges(m);
    } catch (const std::exception& e) {
      message = torchErrorMessage(e);
      code = 3;
    } catch (...) {
      message = "unknown exception";
      code = 3;
    }
    for (size_t off = 0; off < message.size();) {
      const ssize_t w = ::write(fds[1], message.data() + off, message.size() - off);
      if (w <= 0) break;
      off += static_cast<size_t>(w);
    }
    ::_exit(code);
  }

  ::close(fds[1]);
  std::string message;
  bool cancelled = false;
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    const int r = ::poll(&p, 1, 100);
    if (cancel.cancelled()) {
      cancelled = true;
      ::kill(pid, SIGKILL);
      break;
    }
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0) {
      if (message.size() < 65536) message.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;  // EOF: the child has exited (or closed the pipe)
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (cancelled) return Error("cancelled", "loading was cancelled");
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return Error("load-crashed",
                 "libtorch crashed (" + std::string(::strsignal(sig)) + ") while reading " + path.string() +
                     ": its TorchScript code or pickled data is malformed",
                 "the file was altered after torch.jit.save wrote it, or was not written by it; save the model "
                 "again. (oxport read it in a separate process, so nothing else was affected.)");
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 4) return corruptModel(path, message);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 3) return loadFailed(path, message);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return Error("load-crashed",
                 "libtorch ended abnormally (exit status " + std::to_string(WEXITSTATUS(status)) +
                     ") while reading " + path.string(),
                 "save the model again with torch.jit.save");
  return okStatus();
}

}  // namespace oxport
