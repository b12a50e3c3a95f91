// Progress reporting and cancellation for long-running core calls.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "oxport/export.h"

OXPORT_API_BEGIN
namespace oxport {

enum class Phase { Load, Passes, Trace, Convert, Fold, Optimize, Serialize, Check, Verify };
constexpr int kPhaseCount = 9;

// Called from the worker thread: phase, fraction of that phase done (0..1), a short message.
using ProgressFn = std::function<void(Phase, double, const std::string&)>;

// Shared flag; copies refer to the same flag. Core code polls it between units of work and
// returns an Error with code "cancelled".
class CancelToken {
 public:
  CancelToken() : flag_(std::make_shared<std::atomic<bool>>(false)) {}
  void cancel() const { flag_->store(true); }
  bool cancelled() const { return flag_->load(); }
  void reset() const { flag_->store(false); }

 private:
  std::shared_ptr<std::atomic<bool>> flag_;
};

}  // namespace oxport
OXPORT_API_END
