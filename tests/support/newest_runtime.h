// The newest ONNX Runtime next to the pinned one: package.json installs npm's newest
// onnxruntime-node as `onnxruntime-node-next`, and OXPORT_ORT_PACKAGE makes the runner load it.
// Newer releases bring newer shape rules, which is where files that the pinned release accepts
// have failed to load (an operand that must be constant written as an overridable input).
#pragma once

#include <cstdlib>
#include <memory>

#include "oxport/runtime.h"

namespace oxport::testing {

inline constexpr const char* kNewestOrtPackage = "onnxruntime-node-next";

// Verifies `file` in the newest runtime. The environment variable is set only for the call (the
// runner inherits it when it starts), so the pinned runtime's other runs are unaffected.
inline Result<VerifyReport> verifyInNewestRuntime(const Model& model, const ExportOptions& options,
                                                  const std::filesystem::path& file, const VerifyOptions& vopts = {}) {
  struct Scoped {
    Scoped() { setenv("OXPORT_ORT_PACKAGE", kNewestOrtPackage, 1); }
    ~Scoped() { unsetenv("OXPORT_ORT_PACKAGE"); }
  } scoped;
  OXPORT_ASSIGN(std::unique_ptr<OnnxRuntime> rt, makeDefaultRuntime());
  return verifyExport(model, options, file, *rt, vopts);
}

}  // namespace oxport::testing
