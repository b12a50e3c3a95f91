// Finds the diagnostic codes that source files raise, for test_error_codes: the calls of the
// raise helpers (makeError("code", ...), ctx.error("code", ...), npyError(file, "code", ...),
// Python's _error("code", ...), ...) and `d.code = "code";`.
#pragma once

#include <string>
#include <vector>

namespace oxport::test {

enum class Lang { Cpp, Python };

// A helper that raises a diagnostic: its name and which argument is the code.
struct RaiseForm {
  Lang lang;
  std::string name;     // the last name of the callee: error for ctx.error, n->error, Diagnostic.error
  size_t code_arg;      // 0-based
  bool warning;         // raises a warning (or note) rather than an error
};

// Every raise helper of the sources. A helper that is not listed here makes
// findCodeParameters report it, so the scanner cannot silently miss a new form.
const std::vector<RaiseForm>& raiseForms();

struct RaiseSite {
  std::string code;     // empty for a site whose code is not a literal (see `problem`)
  std::string file;     // as given to scanSource
  int line = 0;
  bool warning = false;
  std::string problem;  // set when a helper is called with a code that is neither a string literal
                        // nor the caller's own `code` parameter passed on
};

// The raise sites in one file's text.
std::vector<RaiseSite> scanSource(const std::string& text, const std::string& file, Lang lang);

// Functions and lambdas that take a string parameter named `code` and, after it, a message
// (`message`, `msg` or `what`), as "name/index" (index of `code`, 0-based, without self/cls):
// the helpers that make diagnostics, each of which needs a raise form.
std::vector<std::string> findCodeParameters(const std::string& text, Lang lang);

// Whether `s` has the shape of a code: lower-case words joined by '-', with an optional
// "area." prefix (unsupported-op, preset.unknown-key).
bool looksLikeCode(const std::string& s);

}  // namespace oxport::test
