// Key paths for diagnostics ("args[0].tensor.shape[2]", "custom_opsets[\"my.domain\"]") and
// "did you mean" suggestions. Shared by options.cpp and preset.cpp; internal to oxport_base.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

namespace oxport::detail {

// A JSON string literal for `s` (quotes and control characters escaped).
inline std::string jsonQuoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

inline bool isIdentifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// parent + ".key" for identifier-like keys, parent + "[\"odd key\"]" otherwise.
inline std::string keyPath(const std::string& parent, const std::string& key) {
  if (isIdentifier(key)) return parent.empty() ? key : parent + "." + key;
  return parent + "[" + jsonQuoted(key) + "]";
}

inline std::string indexPath(const std::string& parent, size_t i) { return parent + "[" + std::to_string(i) + "]"; }

inline size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const bool same =
          std::tolower(static_cast<unsigned char>(a[i - 1])) == std::tolower(static_cast<unsigned char>(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

inline std::string toLowerAscii(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The candidate `word` plausibly stands for: a close misspelling ("opset_verison"), or else the
// only candidate starting with or containing it ("opset" -> "opset_version"). Empty otherwise.
inline std::string closestMatch(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const std::string& c : candidates) {
    const size_t d = editDistance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  if (!best.empty() || word.size() < 3) return best;
  const std::string w = toLowerAscii(word);
  // The only candidate starting with the word, else the only one containing it; none when
  // ambiguous ("names": input_names or output_names).
  for (bool prefix_only : {true, false}) {
    std::string only;
    bool ambiguous = false;
    for (const std::string& c : candidates) {
      const size_t at = toLowerAscii(c).find(w);
      if (at == std::string::npos || (prefix_only && at != 0)) continue;
      ambiguous = !only.empty();
      if (ambiguous) break;
      only = c;
    }
    if (ambiguous) return {};
    if (!only.empty()) return only;
  }
  return {};
}

inline std::string joinQuoted(const std::vector<std::string>& items, const char* sep = ", ") {
  std::string out;
  for (const std::string& s : items) {
    if (!out.empty()) out += sep;
    out += jsonQuoted(s);
  }
  return out;
}

}  // namespace oxport::detail
