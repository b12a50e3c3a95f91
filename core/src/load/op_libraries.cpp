// Loading op libraries (see oxport/op_libraries.h).
#include "oxport/op_libraries.h"
#include "oxport/subprocess.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <string.h>

#include <torch/csrc/jit/runtime/operator.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>

namespace oxport {

namespace fs = std::filesystem;

namespace {

std::mutex g_mutex;
std::vector<OpLibrary> g_loaded;

std::set<std::string> operatorNames() {
  std::set<std::string> names;
  for (const auto& op : torch::jit::getAllOperators()) names.insert(op->schema().name());
  return names;
}

std::string demangle(const std::string& symbol) {
  int status = 0;
  char* d = abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status);
  if (!d) return symbol;
  std::string out(d);
  std::free(d);
  return out;
}

Error dlopenError(const fs::path& path, const std::string& why) {
  if (why.find("invalid ELF header") != std::string::npos || why.find("file too short") != std::string::npos ||
      why.find("not an ELF") != std::string::npos || why.find("wrong ELF class") != std::string::npos)
    return Error("op-library-not-shared", path.string() + " is not a shared library this process can load (" + why + ")",
                 "pass the .so file that registers the ops (built for this machine, x86-64 Linux)");
  const std::string key = "undefined symbol: ";
  if (auto p = why.find(key); p != std::string::npos) {
    std::string sym = why.substr(p + key.size());
    if (auto e = sym.find_first_of(" \n\t("); e != std::string::npos) sym.resize(e);
    return Error("op-library-undefined-symbol",
                 path.string() + " needs the symbol " + demangle(sym) + ", which nothing loaded provides",
                 "it was most likely built against another libtorch than this oxport's (libtorch 1.13, Debian's "
                 "libtorch-dev); rebuild it against this one, or load the library it depends on first");
  }
  return Error("op-library-failed", "cannot load the op library " + path.string() + ": " + why,
               "check that the file is a shared library built for this libtorch");
}

// dlopen in a child first: a library whose static initializers crash (an ABI mismatch) ends
// the child, not this process. Returns the dlerror text of a failure, "" on success.
Result<std::string> probeInChild(const fs::path& path) {
  auto probe = runInChild([&](std::string& message) {
    void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (h) return 0;
    const char* e = ::dlerror();
    message = e ? e : "dlopen failed";
    return 3;
  });
  if (!probe.ok()) return std::string();  // no probe possible: load directly
  const ExitStatus status = probe->status;
  const std::string& message = probe->message;
  if (status.signal)
    return Error("op-library-crashed",
                 "loading the op library " + path.string() + " crashed (" + ::strsignal(status.signal) +
                     ") in a separate process; this one was not affected",
                 "it was most likely built against another libtorch than this oxport's (libtorch 1.13); rebuild it");
  if (status.exited && status.code == 3) return message.empty() ? std::string("dlopen failed") : message;
  return std::string();
}

}  // namespace

Result<OpLibrary> loadOpLibrary(const fs::path& path_in, bool found_automatically) {
  std::error_code ec;
  if (!fs::exists(path_in, ec))
    return Error("op-library-not-found", "op library " + path_in.string() + " does not exist",
                 "check the path (a preset's load_libraries are relative to the preset's folder)");
  if (!fs::is_regular_file(path_in, ec))
    return Error("op-library-not-shared", path_in.string() + " is not a file", "pass the library's .so file");
  const fs::path path = fs::weakly_canonical(path_in, ec);
  std::lock_guard<std::mutex> lock(g_mutex);
  for (const auto& l : g_loaded)
    if (l.path == path) return l;
  {
    std::ifstream f(path, std::ios::binary);
    char magic[4] = {0, 0, 0, 0};
    f.read(magic, 4);
    if (!f || magic[0] != 0x7f || magic[1] != 'E' || magic[2] != 'L' || magic[3] != 'F')
      return Error("op-library-not-shared", path.string() + " is not a shared library (no ELF header)",
                   "pass the .so file that registers the ops with TORCH_LIBRARY");
  }
  OXPORT_ASSIGN(std::string probe, probeInChild(path));
  if (!probe.empty()) return dlopenError(path, probe);
  const std::set<std::string> before = operatorNames();
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    const char* e = ::dlerror();
    return dlopenError(path, e ? e : "dlopen failed");
  }
  OpLibrary lib;
  lib.path = path;
  lib.found_automatically = found_automatically;
  for (const auto& name : operatorNames())
    if (!before.count(name)) lib.operators.push_back(name);
  g_loaded.push_back(lib);
  return lib;
}

std::vector<OpLibrary> loadedOpLibraries() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_loaded;
}

std::optional<fs::path> findTorchvisionOpLibrary() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("OXPORT_TORCHVISION_LIBRARY"); env && *env) {
    fs::path p(env);
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p;
    dirs.push_back(p);
  }
  dirs.push_back("/usr/lib/python3/dist-packages/torchvision");
  for (const char* base : {"/usr/local/lib", "/usr/lib"}) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(base, ec)) {
      const std::string n = e.path().filename().string();
      if (n.rfind("python3", 0) != 0) continue;
      dirs.push_back(e.path() / "dist-packages" / "torchvision");
      dirs.push_back(e.path() / "site-packages" / "torchvision");
    }
  }
  for (const auto& d : dirs) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(d, ec)) {
      const std::string n = e.path().filename().string();
      if (n.rfind("_C", 0) == 0 && n.size() > 3 && (n[2] == '.') && e.path().extension() == ".so") return e.path();
    }
  }
  return std::nullopt;
}

}  // namespace oxport
