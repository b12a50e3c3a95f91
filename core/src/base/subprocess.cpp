#include "oxport/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

extern char** environ;

namespace oxport {

ExitStatus ExitStatus::decode(int wait_status) {
  ExitStatus e;
  if (WIFEXITED(wait_status)) {
    e.exited = true;
    e.code = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    e.signal = WTERMSIG(wait_status);
  }
  return e;
}

std::string ExitStatus::describe() const {
  if (exited) return "exit status " + std::to_string(code);
  if (signal) return "killed by signal " + std::to_string(signal) + " (" + ::strsignal(signal) + ")";
  return "ended abnormally";
}

Result<ExitStatus> waitChild(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    return Error("internal", std::string("waiting for a child process failed: ") + std::strerror(err));
  }
  return ExitStatus::decode(status);
}

namespace {

void writeAll(int fd, const std::string& s) {
  for (size_t off = 0; off < s.size();) {
    const ssize_t w = ::write(fd, s.data() + off, s.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    off += static_cast<size_t>(w);
  }
}

}  // namespace

Result<ChildRun> runInChild(const std::function<int(std::string& message)>& fn,
                            const std::function<bool()>& cancelled, size_t max_message) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return Error("internal", std::string("cannot make a pipe for a child process: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return Error("internal", std::string("cannot start a child process: ") + std::strerror(err));
  }
  if (pid == 0) {
    ::close(fds[0]);
    std::string message;
    int code = 125;
    try {
      code = fn(message);
    } catch (const std::exception& e) {
      message = e.what();
    } catch (...) {
      message = "unknown exception";
    }
    writeAll(fds[1], message);
    ::_exit(code);
  }

  ::close(fds[1]);
  ChildRun run;
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    const int r = ::poll(&p, 1, 100);
    if (cancelled && cancelled()) {
      run.cancelled = true;
      ::kill(pid, SIGKILL);
      break;
    }
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0) {
      if (run.message.size() < max_message)
        run.message.append(buf, std::min(static_cast<size_t>(n), max_message - run.message.size()));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;  // end of file: the child has ended or closed the pipe
  }
  ::close(fds[0]);
  auto status = waitChild(pid);
  if (!status.ok()) return status.error();
  run.status = *status;
  return run;
}

Result<ExitStatus> spawnAndWait(const std::vector<std::string>& args, const std::string& log) {
  if (args.empty()) return Error("internal", "spawnAndWait: no program given");
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return Error("runtime-failed", "cannot start " + args[0] + ": " + std::strerror(rc));
  return waitChild(pid);
}

}  // namespace oxport
