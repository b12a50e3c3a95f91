// Diagnostics: every error and warning the core reports is one of these.
#pragma once

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "oxport/export.h"

OXPORT_API_BEGIN
namespace oxport {

enum class Severity { Note, Warning, Error };

const char* severityName(Severity s);

struct SourceLocation {
  std::string file;  // the model's Python source file, as recorded by TorchScript
  int line = 0;      // 1-based; 0 when unknown
  int column = 0;
  bool known() const { return line > 0; }
};

// One structured diagnostic: what went wrong, where in the model, and what to do.
struct Diagnostic {
  Severity severity = Severity::Error;
  std::string code;         // stable machine-readable id, e.g. "unsupported-op", "preset.unknown-key"
  std::string message;      // one sentence naming the problem
  std::string node_kind;    // TorchScript node kind (aten::view) when the problem is at a node
  std::string module_path;  // module scope of that node (layer1.0.conv1)
  SourceLocation location;  // source line of that node
  std::string option;       // export option (preset key) at fault, when an option is at fault
  std::string hint;         // what the user can do about it

  // "error[code]: message\n  at aten::view in layer1.0 (model.py:12)\n  option: dynamic_axes\n  hint: ..."
  // with only the parts that are set.
  std::string toString() const;
};

std::string toJson(const std::vector<Diagnostic>& diagnostics);

Diagnostic makeError(std::string code, std::string message, std::string hint = {});
Diagnostic makeWarning(std::string code, std::string message, std::string hint = {});

// An error: one or more error diagnostics (e.g. every unsupported op at once).
class Error {
 public:
  Error() = default;
  explicit Error(Diagnostic d) { diagnostics_.push_back(std::move(d)); }
  explicit Error(std::vector<Diagnostic> ds) : diagnostics_(std::move(ds)) {}
  Error(std::string code, std::string message, std::string hint = {})
      : Error(makeError(std::move(code), std::move(message), std::move(hint))) {}

  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  std::vector<Diagnostic>& diagnostics() { return diagnostics_; }
  const Diagnostic& first() const { return diagnostics_.front(); }
  const std::string& code() const { return diagnostics_.front().code; }
  // All diagnostics, one per line block.
  std::string message() const;

 private:
  std::vector<Diagnostic> diagnostics_;
};

// Result<T>: a value or an Error. Callers must look at it.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}
  Result(Diagnostic d) : v_(Error(std::move(d))) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }
  Error& error() { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

struct Ok {};
using Status = Result<Ok>;
inline Status okStatus() { return Ok{}; }

}  // namespace oxport
OXPORT_API_END

// Propagate an error from an expression returning Status/Result<...>.
#define OXPORT_TRY(expr)                          \
  do {                                            \
    auto oxport_try_r_ = (expr);                  \
    if (!oxport_try_r_.ok()) return oxport_try_r_.error(); \
  } while (0)

#define OXPORT_CONCAT_INNER_(a, b) a##b
#define OXPORT_CONCAT_(a, b) OXPORT_CONCAT_INNER_(a, b)
// OXPORT_ASSIGN(auto x, expr): x = value of expr or return its error.
#define OXPORT_ASSIGN(lhs, expr)                                              \
  auto OXPORT_CONCAT_(oxport_r_, __LINE__) = (expr);                          \
  if (!OXPORT_CONCAT_(oxport_r_, __LINE__).ok())                              \
    return OXPORT_CONCAT_(oxport_r_, __LINE__).error();                       \
  lhs = std::move(OXPORT_CONCAT_(oxport_r_, __LINE__)).value()
