// Atomic writes: the old file survives every failure (writer error or exception, unwritable
// folder, a write the OS refuses half way), no temporary file is left behind, and the error
// names the path, the OS reason and what to do.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "oxport/atomic_file.h"

namespace fs = std::filesystem;
using namespace oxport;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int entries(const fs::path& dir) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

// Runs `body` in a child process and returns what it wrote to the pipe; `ok` is false when the
// child did not exit 0. Used for things that must not leak into the test process (dropped
// privileges, resource limits).
std::string inChild(const std::function<std::string()>& body, bool& ok) {
  int fds[2];
  if (::pipe(fds) != 0) {
    ok = false;
    return "pipe failed";
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    std::string out = body();
    (void)!::write(fds[1], out.data(), out.size());
    ::close(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return out;
}

std::string describe(const Status& s) {
  if (s.ok()) return "OK";
  return s.error().code() + "|" + s.error().first().message + "|" + s.error().first().hint;
}

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "oxport-atomic-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    target_ = dir_ / "model.onnx";
  }
  void TearDown() override {
    fs::permissions(dir_, fs::perms::owner_all);
    fs::remove_all(dir_);
  }

  fs::path dir_, target_;
};

}  // namespace

TEST_F(AtomicFileTest, CreatesFileWithUmaskPermissions) {
  const mode_t old = ::umask(022);
  auto s = writeFileAtomically(target_, "new contents");
  ::umask(old);
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(slurp(target_), "new contents");
  EXPECT_EQ(entries(dir_), 1) << "a temporary file was left behind";
  struct stat st {};
  ASSERT_EQ(::stat(target_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST_F(AtomicFileTest, ReplacesAndKeepsTheOldPermissions) {
  ASSERT_TRUE(writeFileAtomically(target_, "old").ok());
  ASSERT_EQ(::chmod(target_.c_str(), 0600), 0);
  const std::string big(3 << 20, 'x');  // larger than the stream buffer
  auto s = writeFileAtomically(target_, [&](std::ostream& os) -> Status {
    os << big.substr(0, 100);
    os.write(big.data() + 100, static_cast<std::streamsize>(big.size() - 100));
    return okStatus();
  });
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(slurp(target_), big);
  struct stat st {};
  ASSERT_EQ(::stat(target_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(entries(dir_), 1);
}

// Past a few 16 MiB windows of write-behind (handed to the disk, then dropped from the page cache
// behind the writer): the file is still exactly what was written, in pieces of any size.
TEST_F(AtomicFileTest, BigFileWrittenBehindIsExact) {
  std::string big(size_t(70) << 20, '\0');
  uint32_t x = 7;
  for (auto& c : big) c = static_cast<char>((x = x * 1103515245u + 12345u) >> 24);
  auto s = writeFileAtomically(target_, [&](std::ostream& os) -> Status {
    size_t off = 0;
    for (size_t n = 1; off < big.size(); n = n * 3 + 1) {
      const size_t k = std::min(n % (size_t(5) << 20) + 1, big.size() - off);
      os.write(big.data() + off, static_cast<std::streamsize>(k));
      off += k;
    }
    return okStatus();
  });
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_TRUE(slurp(target_) == big);
  EXPECT_EQ(entries(dir_), 1);
}

TEST_F(AtomicFileTest, WriterErrorKeepsOldFile) {
  ASSERT_TRUE(writeFileAtomically(target_, "old model").ok());
  auto s = writeFileAtomically(target_, [](std::ostream& os) -> Status {
    os << "half a new model";
    return Error("cancelled", "export cancelled");
  });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code(), "cancelled");  // the writer's own error comes back unchanged
  EXPECT_EQ(slurp(target_), "old model");
  EXPECT_EQ(entries(dir_), 1) << "the temporary file was not removed";
}

TEST_F(AtomicFileTest, WriterExceptionKeepsOldFile) {
  ASSERT_TRUE(writeFileAtomically(target_, "old model").ok());
  auto s = writeFileAtomically(target_, [](std::ostream& os) -> Status {
    os << "partial";
    throw std::runtime_error("serializer exploded");
  });
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().first().message.find("serializer exploded"), std::string::npos);
  EXPECT_NE(s.error().first().message.find(target_.string()), std::string::npos);
  EXPECT_EQ(slurp(target_), "old model");
  EXPECT_EQ(entries(dir_), 1);
}

TEST_F(AtomicFileTest, UnwritableFolderKeepsOldFileAndExplains) {
  ASSERT_TRUE(writeFileAtomically(target_, "old model").ok());
  ASSERT_EQ(::chmod(target_.c_str(), 0644), 0);
  ASSERT_EQ(::chmod(dir_.c_str(), 0555), 0);
  bool ok = false;
  // root ignores permission bits, so as root the attempt runs as user "nobody".
  const std::string result = inChild(
      [&]() -> std::string {
        if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) return "setuid failed";
        return describe(writeFileAtomically(target_, "new model"));
      },
      ok);
  ASSERT_TRUE(ok);
  ASSERT_NE(result, "OK");
  ASSERT_NE(result, "setuid failed");
  EXPECT_EQ(result.substr(0, result.find('|')), "io.write-failed");
  EXPECT_NE(result.find(target_.string()), std::string::npos) << result;
  EXPECT_NE(result.find("Permission denied"), std::string::npos) << result;
  EXPECT_NE(result.find("choose another output path"), std::string::npos) << result;
  EXPECT_EQ(slurp(target_), "old model");
  EXPECT_EQ(entries(dir_), 1);
}

TEST_F(AtomicFileTest, OsWriteFailureKeepsOldFileAndRemovesTemp) {
  ASSERT_TRUE(writeFileAtomically(target_, "old model").ok());
  bool ok = false;
  // A file-size limit makes write(2) fail with EFBIG part way, like a full disk would.
  const std::string result = inChild(
      [&]() -> std::string {
        ::signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl {1 << 16, 1 << 16};
        if (::setrlimit(RLIMIT_FSIZE, &rl) != 0) return "setrlimit failed";
        return describe(writeFileAtomically(target_, std::string(1 << 20, 'y')));
      },
      ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(result.substr(0, result.find('|')), "io.write-failed") << result;
  EXPECT_NE(result.find("File too large"), std::string::npos) << result;
  EXPECT_NE(result.find(target_.string()), std::string::npos) << result;
  EXPECT_EQ(slurp(target_), "old model");
  EXPECT_EQ(entries(dir_), 1) << "the temporary file was not removed";
}

TEST_F(AtomicFileTest, MissingFolderAndFolderTarget) {
  auto s = writeFileAtomically(dir_ / "missing" / "out.onnx", "x");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().first().message.find("missing/out.onnx"), std::string::npos);
  EXPECT_NE(s.error().first().message.find("No such file or directory"), std::string::npos);
  EXPECT_NE(s.error().first().hint.find("does not exist"), std::string::npos);

  fs::create_directory(dir_ / "sub");
  auto d = writeFileAtomically(dir_ / "sub", "x");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().first().message.find("folder"), std::string::npos);
  EXPECT_TRUE(fs::is_directory(dir_ / "sub"));
}

TEST_F(AtomicFileTest, WritesThroughSymlink) {
  ASSERT_TRUE(writeFileAtomically(target_, "old").ok());
  fs::create_symlink(target_, dir_ / "link.onnx");
  ASSERT_TRUE(writeFileAtomically(dir_ / "link.onnx", "new").ok());
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.onnx"));
  EXPECT_EQ(slurp(target_), "new");
}
