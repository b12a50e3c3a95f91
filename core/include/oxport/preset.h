// The preset file: the public JSON format of all export options (see docs/PRESET.md).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "oxport/diagnostic.h"
#include "oxport/options.h"

namespace oxport {

struct Preset {
  std::optional<std::string> model;   // as written in the file (relative to the preset's folder)
  std::optional<std::string> output;
  ExportOptions options;
  bool operator==(const Preset& o) const { return model == o.model && output == o.output && options == o.options; }
};

// Parses a preset. Unknown keys, wrong types and impossible values are errors naming the key
// (Diagnostic::option) and what is allowed. Missing keys take the seed's defaults.
Result<Preset> parsePreset(std::string_view json_text);
Result<Preset> loadPreset(const std::filesystem::path& file);

// Writes every key (defaults included), so a saved preset documents all options.
std::string presetToJson(const Preset& p);
Status savePreset(const Preset& p, const std::filesystem::path& file);  // atomic write

// Resolves a path from a preset against the preset's folder.
std::filesystem::path resolvePresetPath(const std::filesystem::path& preset_file, const std::string& p);

// Parses the CLI's compact forms: "1x3x224x224" or "1,3,224,224" shapes; "float32:1x3:randn" arg specs.
Result<TensorSpec> parseTensorSpec(std::string_view text);

}  // namespace oxport
