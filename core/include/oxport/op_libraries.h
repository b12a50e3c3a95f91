// Op libraries: shared libraries that register TorchScript operators with TORCH_LIBRARY
// (torchvision's _C.so, a vendor's QAT or custom-op library). A model that uses their ops can be
// loaded only once they are loaded into the process, as Python's torch.ops.load_library does.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "oxport/diagnostic.h"

#include "oxport/export.h"

OXPORT_API_BEGIN
namespace oxport {

struct OpLibrary {
  std::filesystem::path path;
  std::vector<std::string> operators;  // the operators it registered: "torchvision::nms", ...
  bool found_automatically = false;    // torchvision's, found by oxport for a model that needs it
};

// Loads the library into this process (dlopen, so its TORCH_LIBRARY registrations run), once
// per file. It is first opened in a child process, so a library that crashes while loading
// (built against another libtorch) cannot take this one down. Errors name the path and the
// cause: op-library-not-found, op-library-not-shared (not an ELF shared library),
// op-library-undefined-symbol (the symbol, demangled: built against another libtorch, or needs a
// library that is not loaded), op-library-crashed, op-library-failed.
// `found_automatically` marks torchvision's library loaded by Model::load for a model that needs it.
Result<OpLibrary> loadOpLibrary(const std::filesystem::path& path, bool found_automatically = false);

// The libraries loaded so far, in load order.
std::vector<OpLibrary> loadedOpLibraries();

// torchvision's op library (`torchvision/_C*.so` of an installed torchvision: Debian's
// python3-torchvision, or any Python's site-packages; $OXPORT_TORCHVISION_LIBRARY first).
std::optional<std::filesystem::path> findTorchvisionOpLibrary();

}  // namespace oxport
OXPORT_API_END
