// The CLI's progress: one status line on a terminal's stderr, overwritten in place (phase, the
// percentage of the whole command, the core's message) and erased before anything else is printed.
#pragma once

#include <chrono>
#include <iosfwd>
#include <string>
#include <vector>

#include "oxport/progress.h"

namespace oxport {

enum class ProgressMode { Auto, Always, Never };

// "auto", "always" or "never".
bool parseProgressMode(const std::string& text, ProgressMode* mode);

// Auto: shown when stderr is a terminal (not TERM=dumb) and diagnostics are not JSON.
bool progressWanted(ProgressMode mode, bool json);

class ProgressLine {
 public:
  // `phases`: the phases the command goes through, in order; each gets a share of the percentage
  // by its usual cost. Nothing is printed unless `enabled`.
  ProgressLine(std::ostream& err, bool enabled, std::vector<Phase> phases);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // For the core calls; shows at most ten updates a second, and every change of phase.
  ProgressFn fn();
  // Erases the line (if one is shown): call it before printing anything else.
  void clear();

 private:
  void update(Phase phase, double fraction, const std::string& message);

  std::ostream& err_;
  bool enabled_;
  std::vector<Phase> phases_;
  bool shown_ = false;
  int last_phase_ = -1;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace oxport
