// Ctrl+C during a CLI command: the first SIGINT cancels the work (the core stops at its next
// check, within a second, and writes nothing); a second one ends the process as usual.
#pragma once

#include <csignal>

#include "oxport/progress.h"

namespace oxport {

class SigintCancels {
 public:
  // Installs the handler unless SIGINT is ignored (a background job keeps ignoring it).
  explicit SigintCancels(const CancelToken& token);
  // Puts back the handler that was there before.
  ~SigintCancels();
  SigintCancels(const SigintCancels&) = delete;
  SigintCancels& operator=(const SigintCancels&) = delete;

  // Whether a SIGINT arrived while installed.
  bool fired() const;

  // Also set *flag when a SIGINT arrives (the supervised child's flag in memory its parent
  // shares: the parent then knows the child got the SIGINT itself and does not forward it again).
  static void alsoFlag(volatile sig_atomic_t* flag);

 private:
  bool installed_ = false;
};

// Ends the process with `rc` at once (as std::_Exit), leaving the freeing of its memory to a
// helper process that shares it and exits right after. The kernel frees a process's pages before
// its parent learns of the exit: for the gigabytes of a big model's weights, in 4 KiB pages, that
// took about a second on a loaded machine after a Ctrl+C that had cancelled in 0.2-0.3 s. The
// helper holds no file descriptors (a reader of the process's output sees its end at once).
// Elsewhere than Linux, or if the helper cannot be started, this is std::_Exit(rc).
[[noreturn]] void exitLeavingMemoryBehind(int rc);

}  // namespace oxport
