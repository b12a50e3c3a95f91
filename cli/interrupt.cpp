#include "interrupt.h"

#include <signal.h>

#include <atomic>
#include <cstdlib>

#ifdef __linux__
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

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

#ifdef __linux__
int g_exit_pipe = -1;  // the helper's end: EOF once the process has exited

// Runs on the process's memory, in a process of its own: system calls only (no libc state), on a
// stack of its own. It closes every descriptor but its pipe's read end, waits for EOF there (the
// process's end, the only writer, has ended) and exits, dropping the last hold on the memory.
int memoryHolder(void*) {
  const long keep = g_exit_pipe;
  if (keep > 0) ::syscall(SYS_close_range, 0, keep - 1, 0);
  if (::syscall(SYS_close_range, keep + 1, ~0U, 0) != 0)
    for (long fd = 0; fd < 65536; ++fd)
      if (fd != keep) ::syscall(SYS_close, fd);
  char c;
  for (int interrupted = 0; interrupted < 1000;)  // a failed read (EINTR) retried, not forever
    if (const long r = ::syscall(SYS_read, keep, &c, 1); r == 0) break;
    else if (r < 0) ++interrupted;
  ::syscall(SYS_exit, 0);
  return 0;
}
#endif

}  // namespace

[[noreturn]] void exitLeavingMemoryBehind(int rc) {
#ifdef __linux__
  int fds[2];
  constexpr size_t kStack = size_t(64) << 10;
  if (::pipe(fds) == 0) {
    g_exit_pipe = fds[0];
    void* stack = ::mmap(nullptr, kStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (stack != MAP_FAILED)
      (void)::clone(memoryHolder, static_cast<char*>(stack) + kStack, CLONE_VM | SIGCHLD, nullptr);
  }
#endif
  std::_Exit(rc);
}

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
