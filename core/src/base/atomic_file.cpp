// Atomic file writes: a temporary file beside the target (same directory, so same file system),
// written through a small fd-backed stream buffer (so the OS error of a failed write is kept) that
// keeps the page cache's dirty pages of a big file bounded (write-behind, below), fsync'ed, given the target's permissions, then renamed over the target. Until the rename
// succeeds the target is never opened; on any failure the temporary file is removed.
#include "oxport/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <fstream>
#include <ostream>
#include <streambuf>
#include <string>

namespace oxport {
namespace {

namespace fs = std::filesystem;

// Write-behind: every kWindow bytes the window just written is handed to the disk
// (sync_file_range WRITE, which does not wait), and the window kLag windows back is waited for and
// dropped from the page cache (posix_fadvise DONTNEED). Without it a multi-GB write piles up dirty
// pages until the kernel throttles every write(2) (balance_dirty_pages) and evicts other pages,
// the exported model's own weights among them: 1.4 GB in 4 MiB writes took 7.5-16.5 s at a
// load of ~12, against 2.9-4.3 s with write-behind, whose final fsync is then short (docs/BENCHMARKS.md,
// "The write at the disk's speed").
constexpr off_t kWindow = off_t(16) << 20;
constexpr off_t kLag = 2;

// std::streambuf over a POSIX file descriptor that remembers the first errno of a failed write.
class FdBuf : public std::streambuf {
 public:
  explicit FdBuf(int fd) : fd_(fd) { setp(buf_, buf_ + sizeof buf_); }
  int error() const { return errno_; }
  bool flushAll() { return drain(); }

 protected:
  int_type overflow(int_type ch) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n >= static_cast<std::streamsize>(sizeof buf_)) {
      if (!drain() || !writeAll(s, static_cast<size_t>(n))) return 0;
      return n;
    }
    return std::streambuf::xsputn(s, n);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    const size_t n = static_cast<size_t>(pptr() - pbase());
    const bool ok = writeAll(pbase(), n);
    setp(buf_, buf_ + sizeof buf_);
    return ok;
  }
  bool writeAll(const char* p, size_t n) {
    if (errno_) return false;
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        errno_ = errno;
        return false;
      }
      p += w;
      n -= static_cast<size_t>(w);
      written_ += w;
    }
    writeBehind();
    return true;
  }
  // Errors here are not the write's: fsync at the end reports any.
  void writeBehind() {
    while (written_ - kicked_ >= kWindow) {
#ifdef __linux__
      ::sync_file_range(fd_, kicked_, kWindow, SYNC_FILE_RANGE_WRITE);
#endif
      kicked_ += kWindow;
      while (kicked_ - dropped_ > kLag * kWindow) {
#ifdef __linux__
        ::sync_file_range(fd_, dropped_, kWindow,
                          SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
#endif
        ::posix_fadvise(fd_, dropped_, kWindow, POSIX_FADV_DONTNEED);
        dropped_ += kWindow;
      }
    }
  }

  int fd_;
  int errno_ = 0;
  off_t written_ = 0;  // bytes written so far (the file's size)
  off_t kicked_ = 0;   // handed to the disk up to here
  off_t dropped_ = 0;  // on disk and out of the page cache up to here
  char buf_[1 << 16];
};

std::string hintFor(int err) {
  switch (err) {
    case EACCES:
    case EPERM:
      return "check that you may write to that folder, or choose another output path";
    case EROFS:
      return "the file system is read-only; choose another output path";
    case ENOSPC:
    case EDQUOT:
      return "free some disk space, or choose another output path";
    case EFBIG:
      return "the file is too large for the file system or for the file-size limit of this process "
             "(ulimit -f): raise the limit, or choose another output path";
    case ENOENT:
    case ENOTDIR:
      return "the folder does not exist; create it first or choose another output path";
    default:
      return "check the output path and try again";
  }
}

Error ioError(const fs::path& target, const std::string& step, int err) {
  return Error("io.write-failed",
               "cannot write " + target.string() + ": " + step + ": " + std::strerror(err),
               hintFor(err));
}

// The mode a newly created file would get (0666 & ~umask), read without changing the umask.
mode_t defaultFileMode() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) == 0) {
      try {
        return static_cast<mode_t>(0666 & ~std::stoul(line.substr(6), nullptr, 8));
      } catch (...) {
        break;
      }
    }
  }
  return 0644;
}

// Closes the fd and removes the temporary file unless released.
struct TempFile {
  std::string path;
  int fd = -1;
  bool keep = false;
  ~TempFile() {
    if (fd >= 0) ::close(fd);
    if (!keep && !path.empty()) ::unlink(path.c_str());
  }
};

}  // namespace

Status writeFileAtomically(const fs::path& target_in,
                           const std::function<Status(std::ostream&)>& write) {
  fs::path target = target_in;
  std::error_code ec;
  // Replace the file a symlink points to, not the link.
  if (fs::is_symlink(target, ec)) {
    const fs::path resolved = fs::weakly_canonical(target, ec);
    if (!ec) target = resolved;
  }
  if (target.filename().empty())
    return Error("io.write-failed", "cannot write '" + target_in.string() + "': not a file name",
                 "give a file path, not a folder");
  if (fs::is_directory(target, ec))
    return Error("io.write-failed", "cannot write " + target.string() + ": it is a folder",
                 "give a file path, not a folder");

  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  TempFile tmp;
  {
    std::string tmpl = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
    tmp.fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
    if (tmp.fd < 0) {
      const int err = errno;
      return ioError(target, "cannot create a temporary file in " + dir.string(), err);
    }
    tmp.path = tmpl;
  }

  FdBuf buf(tmp.fd);
  std::ostream os(&buf);
  Status written = okStatus();
  try {
    written = write(os);
  } catch (const std::exception& e) {
    return Error("io.write-failed",
                 "cannot write " + target.string() + ": the writer failed: " + e.what(),
                 "the earlier file, if any, is unchanged");
  } catch (...) {
    return Error("io.write-failed",
                 "cannot write " + target.string() + ": the writer failed with an unknown exception",
                 "the earlier file, if any, is unchanged");
  }
  if (!written.ok()) return written.error();
  if (!buf.flushAll() || buf.error() || !os.good()) {
    const int err = buf.error() ? buf.error() : EIO;
    return ioError(target, "writing failed", err);
  }

  struct stat st {};
  const mode_t mode = ::stat(target.c_str(), &st) == 0 ? (st.st_mode & 07777) : defaultFileMode();
  if (::fchmod(tmp.fd, mode) != 0) {
    const int err = errno;
    return ioError(target, "cannot set the permissions of the temporary file", err);
  }
  if (::fsync(tmp.fd) != 0) {
    const int err = errno;
    return ioError(target, "flushing to disk (fsync) failed", err);
  }
  const int fd = tmp.fd;
  tmp.fd = -1;
  if (::close(fd) != 0) {
    const int err = errno;
    return ioError(target, "closing the temporary file failed", err);
  }
  if (::rename(tmp.path.c_str(), target.c_str()) != 0) {
    const int err = errno;
    return ioError(target, "cannot move the temporary file " + tmp.path + " over it", err);
  }
  tmp.keep = true;

  // Make the rename itself durable; a failure here does not undo a completed write.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return okStatus();
}

Status writeFileAtomically(const fs::path& target, std::string_view contents) {
  return writeFileAtomically(target, [contents](std::ostream& os) -> Status {
    os.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    return okStatus();
  });
}

}  // namespace oxport
