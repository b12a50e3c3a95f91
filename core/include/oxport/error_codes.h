// The catalogue of diagnostic codes: every code the core, the studio and the Python module raise,
// with what it means, what usually causes it and what to do. `oxport explain CODE` prints an entry
// and docs/ERRORS.md is generated from the catalogue (`oxport explain --all --markdown`).
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "oxport/diagnostic.h"

#include "oxport/export.h"

OXPORT_API_BEGIN
namespace oxport {

struct ErrorCodeInfo {
  std::string_view code;      // "unsupported-op", "preset.unknown-key"
  Severity severity;          // how it is raised (a few codes are raised at another severity too)
  std::string_view meaning;   // one paragraph: what the diagnostic says happened
  std::string_view causes;    // what usually leads to it
  std::string_view action;    // what the user does about it
};

// Every code, sorted by code.
const std::vector<ErrorCodeInfo>& errorCodes();

// The entry of a code; nullptr when the catalogue has none.
const ErrorCodeInfo* findErrorCode(std::string_view code);

// Codes that look like `code` (a typo, a part of a code), closest first; at most `max`.
std::vector<std::string_view> similarErrorCodes(std::string_view code, size_t max = 5);

}  // namespace oxport
OXPORT_API_END
