// Child processes: the one place that forks or spawns, waits (retrying on EINTR) and decodes how
// a child ended. The core reads models and loads op libraries in a child first (a crash ends the
// child, not the caller), runs ONNX Runtime as a program, and the CLI supervises its export.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "oxport/diagnostic.h"
#include "oxport/export.h"

OXPORT_API_BEGIN
namespace oxport {

// How a child ended, decoded from waitpid's status.
struct ExitStatus {
  bool exited = false;  // it returned or called exit: `code` is its exit code
  int code = 0;
  int signal = 0;  // it was killed by this signal (0 when it exited)

  static ExitStatus decode(int wait_status);
  bool ok() const { return exited && code == 0; }
  // "exit status 3", "killed by signal 11 (Segmentation fault)"
  std::string describe() const;
};

// Waits for `pid` to end, retrying when a signal interrupts the wait. An error only when waitpid
// itself fails (the pid is not our child).
Result<ExitStatus> waitChild(pid_t pid);

// What runInChild brings back.
struct ChildRun {
  ExitStatus status;
  std::string message;     // what the child's function put in its `message` (at most max_message bytes)
  bool cancelled = false;  // `cancelled` said so while it ran: the child was killed
};

// Runs `fn` in a forked child and returns its result: the exit code `fn` returns (an exception out
// of `fn` ends the child with code 125 and its what() as the message), the message it sets, or
// the signal that ended it. The child leaves with _exit (no destructors, no atexit handlers).
// `cancelled`, when given, is polled every 100 ms; true kills the child. An error when the
// process cannot fork (the caller then does the work in-process, or reports it).
Result<ChildRun> runInChild(const std::function<int(std::string& message)>& fn,
                            const std::function<bool()>& cancelled = {}, size_t max_message = 65536);

// Starts the program args[0] (a path; no PATH search) with stdin from /dev/null and stdout and
// stderr into the file `log`, and waits for it.
Result<ExitStatus> spawnAndWait(const std::vector<std::string>& args, const std::string& log);

}  // namespace oxport
OXPORT_API_END
