#include "progress_line.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ostream>

namespace oxport {
namespace {

const char* phaseName(Phase p) {
  switch (p) {
    case Phase::Load: return "load";
    case Phase::Passes: return "passes";
    case Phase::Trace: return "trace";
    case Phase::Convert: return "convert";
    case Phase::Fold: return "fold";
    case Phase::Optimize: return "optimize";
    case Phase::Serialize: return "serialize";
    case Phase::Check: return "check";
    case Phase::Verify: return "verify";
  }
  return "working";
}

// The share of a command's time a phase usually takes (a large model: the example run and the
// write dominate).
double phaseWeight(Phase p) {
  switch (p) {
    case Phase::Load: return 10;
    case Phase::Passes: return 5;
    case Phase::Trace: return 25;
    case Phase::Convert: return 15;
    case Phase::Fold: return 0;
    case Phase::Optimize: return 10;
    case Phase::Serialize: return 35;
    case Phase::Check: return 0;
    case Phase::Verify: return 40;
  }
  return 0;
}

// The terminal's width, so the line never wraps (a wrapped line cannot be overwritten with \r).
size_t terminalColumns() {
  struct winsize ws {};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* c = std::getenv("COLUMNS")) {
    const long n = std::strtol(c, nullptr, 10);
    if (n > 0) return static_cast<size_t>(n);
  }
  return 80;
}

constexpr const char* kErase = "\r\033[K";

}  // namespace

bool parseProgressMode(const std::string& text, ProgressMode* mode) {
  if (text == "auto") *mode = ProgressMode::Auto;
  else if (text == "always") *mode = ProgressMode::Always;
  else if (text == "never") *mode = ProgressMode::Never;
  else return false;
  return true;
}

bool progressWanted(ProgressMode mode, bool json) {
  if (mode != ProgressMode::Auto) return mode == ProgressMode::Always;
  if (json || !::isatty(STDERR_FILENO)) return false;
  const char* term = std::getenv("TERM");
  return !(term && std::strcmp(term, "dumb") == 0);
}

ProgressLine::ProgressLine(std::ostream& err, bool enabled, std::vector<Phase> phases)
    : err_(err), enabled_(enabled), phases_(std::move(phases)) {}

ProgressLine::~ProgressLine() { clear(); }

ProgressFn ProgressLine::fn() {
  if (!enabled_) return {};
  return [this](Phase phase, double fraction, const std::string& message) { update(phase, fraction, message); };
}

void ProgressLine::clear() {
  if (!shown_) return;
  err_ << kErase << std::flush;
  shown_ = false;
}

void ProgressLine::update(Phase phase, double fraction, const std::string& message) {
  const auto now = std::chrono::steady_clock::now();
  const int p = static_cast<int>(phase);
  if (p == last_phase_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_phase_ = p;
  last_ = now;
  // Phases before this one count in full; a phase the command does not list counts as nothing.
  double total = 0, done = 0;
  bool seen = false;
  for (Phase q : phases_) {
    total += phaseWeight(q);
    if (q == phase) {
      seen = true;
      done += phaseWeight(q) * std::clamp(fraction, 0.0, 1.0);
    } else if (!seen) {
      done += phaseWeight(q);
    }
  }
  if (!seen) done = 0;
  const int percent = total > 0 && seen ? static_cast<int>(100.0 * done / total) : 0;
  char head[32];
  std::snprintf(head, sizeof head, "[%3d%%] %s", std::min(percent, 100), phaseName(phase));
  std::string line = head;
  if (!message.empty()) line += ": " + message;
  const size_t width = terminalColumns();
  if (line.size() >= width) line.resize(width > 1 ? width - 1 : 0);
  err_ << kErase << line << std::flush;
  shown_ = true;
}

}  // namespace oxport
