// libFuzzer target: the CLI's compact tensor spec (parseTensorSpec). Any text must give a spec
// or an Error with a message, and a parsed spec must round-trip through formatTensorSpec
// (preset.h promises it for sizes >= 0 and npy paths without surrounding blanks).
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "oxport/preset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto s = oxport::parseTensorSpec(text);
  if (!s.ok()) {
    if (s.error().diagnostics().empty() || s.error().first().message.empty()) {
      std::fprintf(stderr, "parseTensorSpec failed without a message\n");
      std::abort();
    }
    return 0;
  }
  for (int64_t d : s->shape)
    if (d < 0) {
      std::fprintf(stderr, "parseTensorSpec accepted a negative size\n");
      std::abort();
    }
  const std::string& npy = s->npy;
  if (!npy.empty() && (std::isspace(static_cast<unsigned char>(npy.front())) ||
                       std::isspace(static_cast<unsigned char>(npy.back()))))
    return 0;  // outside formatTensorSpec's promise
  const std::string compact = oxport::formatTensorSpec(*s);
  auto again = oxport::parseTensorSpec(compact);
  if (!again.ok() || !(*again == *s)) {
    std::fprintf(stderr, "tensor spec does not round-trip: \"%.*s\" -> \"%s\"%s%s\n", static_cast<int>(size),
                 reinterpret_cast<const char*>(data), compact.c_str(), again.ok() ? "" : ": ",
                 again.ok() ? "" : again.error().message().c_str());
    std::abort();
  }
  return 0;
}
