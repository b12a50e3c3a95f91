// The preset file: the public JSON format of all export options (see docs/PRESET.md).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "oxport/diagnostic.h"
#include "oxport/options.h"

#include "oxport/export.h"

OXPORT_API_BEGIN
namespace oxport {

struct Preset {
  std::optional<std::string> model;   // as written in the file (relative to the preset's folder)
  std::optional<std::string> output;
  // Op libraries (shared libraries registering operators with TORCH_LIBRARY) to load before the
  // model, as written (relative to the preset's folder, like model): key "load_libraries".
  std::vector<std::string> load_libraries;
  ExportOptions options;
  bool operator==(const Preset& o) const {
    return model == o.model && output == o.output && load_libraries == o.load_libraries && options == o.options;
  }
};

// Parses a preset. Unknown keys, wrong types and impossible values are errors naming the key
// (Diagnostic::option) and what is allowed. Missing keys take the seed's defaults.
Result<Preset> parsePreset(std::string_view json_text);
Result<Preset> loadPreset(const std::filesystem::path& file);

// Writes every key (defaults included), so a saved preset documents all options;
// parsePreset(presetToJson(p)) == p. Text that is not valid UTF-8 is written as U+FFFD.
std::string presetToJson(const Preset& p);
// Atomic write. Fails (preset.encoding) rather than alter text that is not valid UTF-8.
Status savePreset(const Preset& p, const std::filesystem::path& file);

// Resolves a path from a preset (model, output, npy fills) against the preset's folder. The parser
// keeps paths as written, so that saving a loaded preset writes them unchanged.
std::filesystem::path resolvePresetPath(const std::filesystem::path& preset_file, const std::string& p);

// Every path a preset holds (model, output, the .npy of tensor fills in args and kwargs, nested
// lists included), mapped through f; empty paths are left alone.
Preset mapPresetPaths(Preset p, const std::function<std::string(const std::string&)>& f);
// mapPresetPaths with resolvePresetPath: the preset as loaded from preset_file, ready to run.
Preset resolvePresetPaths(Preset p, const std::filesystem::path& preset_file);

// The CLI's compact tensor spec, e.g. "1x3x224x224", "1,3,224,224", "1x3x224x224:float32:randn",
// "2x5:int64:arange", "4:zeros:seed=7", "npy=inputs/x.npy".
//
//   SPEC  := PART (":" PART)*      parts in any order, each kind at most once; blanks around parts
//                                  and sizes are ignored
//   PART  := SHAPE | DTYPE | FILL | "seed=" N | "npy=" PATH
//   SHAPE := N (("x" | "X" | ",") N)*            sizes are whole numbers, 0 or more
//   DTYPE := any name parseDType accepts          float32 float double int64 long torch.int32 ...
//   FILL  := "randn" | "rand" | "zeros" | "ones" | "arange"
//   "npy=" PATH must be the last part: the rest of the text is the path (it may contain ':').
//
// Missing parts take TensorSpec's defaults (float32, randn, seed 0). Without a SHAPE the tensor is
// 0-d (a scalar), except with npy=, where the file gives shape and dtype. Errors quote the spec
// and give the column of the bad part.
Result<TensorSpec> parseTensorSpec(std::string_view text);

// The compact form of a spec ("1x3x224x224:float32:randn"): parseTensorSpec(formatTensorSpec(s)) == s
// for every spec with sizes >= 0 (and, for npy, a path without surrounding blanks).
std::string formatTensorSpec(const TensorSpec& spec);

}  // namespace oxport
OXPORT_API_END
