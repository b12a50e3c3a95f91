// libFuzzer target: the preset parser. Any text must give a Preset or an Error (never a crash,
// a sanitizer report or an exception), and a parsed preset must round-trip:
// parsePreset(presetToJson(p)) == p and presetToJson is stable (see preset.h).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "oxport/preset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto p = oxport::parsePreset(text);
  if (!p.ok()) {
    if (p.error().diagnostics().empty() || p.error().first().message.empty()) {
      std::fprintf(stderr, "parsePreset failed without a message\n");
      std::abort();
    }
    return 0;
  }
  const std::string json = oxport::presetToJson(*p);
  auto again = oxport::parsePreset(json);
  if (!again.ok()) {
    std::fprintf(stderr, "presetToJson wrote a preset parsePreset refuses:\n%s\n%s\n", json.c_str(),
                 again.error().message().c_str());
    std::abort();
  }
  if (!(*again == *p)) {
    std::fprintf(stderr, "preset does not round-trip:\n%s\n", json.c_str());
    std::abort();
  }
  if (oxport::presetToJson(*again) != json) {
    std::fprintf(stderr, "presetToJson is not stable:\n%s\n", json.c_str());
    std::abort();
  }
  return 0;
}
