#include "interrupt.h"

#include <signal.h>

#include <atomic>

namespace oxport {
namespace {

// The handler only stores to lock-free atomics: async-signal-safe. The token outlives the
// installed handler (SigintCancels is destroyed, and the handler removed, before it).
static_assert(std::atomic<bool>::is_always_lock_free, "the cancel flag must be lock-free in a signal handler");
const CancelToken* g_token = nullptr;
volatile sig_atomic_t g_fired = 0;
volatile sig_atomic_t* g_shared_flag = nullptr;
struct sigaction g_previous {};

void onSigint(int) {
  g_fired = 1;
  if (g_shared_flag) *g_shared_flag = 1;
  if (g_token) g_token->cancel();
}

}  // namespace

SigintCancels::SigintCancels(const CancelToken& token) {
  struct sigaction old {};
  if (::sigaction(SIGINT, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) return;
  g_token = &token;
  g_fired = 0;
  struct sigaction sa {};
  sa.sa_handler = onSigint;
  sigemptyset(&sa.sa_mask);
  // The handler runs once; the second SIGINT finds the default action and ends the process.
  sa.sa_flags = SA_RESETHAND;
  installed_ = ::sigaction(SIGINT, &sa, &g_previous) == 0;
  if (!installed_) g_token = nullptr;
}

SigintCancels::~SigintCancels() {
  if (!installed_) return;
  ::sigaction(SIGINT, &g_previous, nullptr);
  g_token = nullptr;
}

bool SigintCancels::fired() const { return g_fired != 0; }

void SigintCancels::alsoFlag(volatile sig_atomic_t* flag) { g_shared_flag = flag; }

}  // namespace oxport
