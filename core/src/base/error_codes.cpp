// The catalogue of diagnostic codes (error_codes.def) and lookups in it.
#include "oxport/error_codes.h"

#include <algorithm>
#include <utility>

namespace oxport {

const std::vector<ErrorCodeInfo>& errorCodes() {
  static const std::vector<ErrorCodeInfo> codes = [] {
    std::vector<ErrorCodeInfo> v = {
#define OXPORT_ERROR_CODE(code, severity, meaning, causes, action) \
  {code, Severity::severity, meaning, causes, action},
#include "base/error_codes.def"
#undef OXPORT_ERROR_CODE
    };
    std::sort(v.begin(), v.end(), [](const ErrorCodeInfo& a, const ErrorCodeInfo& b) { return a.code < b.code; });
    return v;
  }();
  return codes;
}

const ErrorCodeInfo* findErrorCode(std::string_view code) {
  const auto& codes = errorCodes();
  auto it = std::lower_bound(codes.begin(), codes.end(), code,
                             [](const ErrorCodeInfo& e, std::string_view c) { return e.code < c; });
  return it != codes.end() && it->code == code ? &*it : nullptr;
}

namespace {

size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string_view> similarErrorCodes(std::string_view code, size_t max) {
  // A typo (a few edits away) or a part of a code ("unknown-key" for "preset.unknown-key");
  // parts rank after typos.
  std::vector<std::pair<size_t, std::string_view>> ranked;
  const size_t allowed = std::max<size_t>(2, code.size() / 3);
  for (const auto& e : errorCodes()) {
    const size_t d = editDistance(code, e.code);
    if (d <= allowed)
      ranked.emplace_back(d, e.code);
    else if (code.size() >= 3 && e.code.find(code) != std::string_view::npos)
      ranked.emplace_back(allowed + 1 + e.code.size() - code.size(), e.code);
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<std::string_view> out;
  for (size_t i = 0; i < ranked.size() && i < max; ++i) out.push_back(ranked[i].second);
  return out;
}

}  // namespace oxport
