// Diagnostics: readable text for people, JSON for tools.
#include "oxport/diagnostic.h"

#include <nlohmann/json.hpp>

#include "base/enum_names.h"

namespace oxport {

const char* severityName(Severity s) {
  static constexpr EnumName<Severity> kNames[] = {
      {Severity::Note, "note"}, {Severity::Warning, "warning"}, {Severity::Error, "error"}};
  return enumName(kNames, s, "error");
}

namespace {

// Continuation lines of a multi-line message or hint line up under the first one.
std::string indentContinuation(const std::string& text, const char* indent) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    out += c;
    if (c == '\n') out += indent;
  }
  return out;
}

// "model.py:12:5", "model.py", "line 12"; empty when nothing is known.
std::string locationText(const SourceLocation& loc) {
  std::string out = loc.file;
  if (loc.line > 0) {
    out += out.empty() ? "line " : ":";
    out += std::to_string(loc.line);
    if (loc.column > 0) out += ":" + std::to_string(loc.column);
  }
  return out;
}

}  // namespace

std::string Diagnostic::toString() const {
  std::string out = severityName(severity);
  if (!code.empty()) out += "[" + code + "]";
  out += ": " + indentContinuation(message, "  ");

  // "  at aten::view in layer1.0 (model.py:12)", "  in layer1.0", "  at model.py:12": each part
  // only when known.
  std::string where;
  if (!node_kind.empty()) where = "at " + node_kind;
  if (!module_path.empty()) where += (where.empty() ? "in " : " in ") + module_path;
  const std::string loc = locationText(location);
  if (!loc.empty()) where += where.empty() ? "at " + loc : " (" + loc + ")";
  if (!where.empty()) out += "\n  " + where;

  if (!option.empty()) out += "\n  option: " + option;
  if (!hint.empty()) out += "\n  hint: " + indentContinuation(hint, "    ");
  return out;
}

std::string toJson(const std::vector<Diagnostic>& diagnostics) {
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const Diagnostic& d : diagnostics) {
    nlohmann::ordered_json j;
    j["severity"] = severityName(d.severity);
    j["code"] = d.code;
    j["message"] = d.message;
    j["node_kind"] = d.node_kind;
    j["module_path"] = d.module_path;
    if (d.location.file.empty() && !d.location.known()) {
      j["location"] = nullptr;
    } else {
      j["location"] = {{"file", d.location.file}, {"line", d.location.line}, {"column", d.location.column}};
    }
    j["option"] = d.option;
    j["hint"] = d.hint;
    arr.push_back(std::move(j));
  }
  // Messages may quote user data (file names, op names) that is not valid UTF-8: replace such
  // bytes rather than fail while reporting another failure.
  return arr.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

Diagnostic makeError(std::string code, std::string message, std::string hint) {
  Diagnostic d;
  d.severity = Severity::Error;
  d.code = std::move(code);
  d.message = std::move(message);
  d.hint = std::move(hint);
  return d;
}

Diagnostic makeWarning(std::string code, std::string message, std::string hint) {
  Diagnostic d = makeError(std::move(code), std::move(message), std::move(hint));
  d.severity = Severity::Warning;
  return d;
}

std::string Error::message() const {
  if (diagnostics_.empty()) return "error: (no diagnostic was recorded)";
  std::string out;
  for (const Diagnostic& d : diagnostics_) {
    if (!out.empty()) out += '\n';
    out += d.toString();
  }
  return out;
}

}  // namespace oxport
