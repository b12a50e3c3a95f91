// oxport/subprocess.h: the one place that forks, spawns, waits and decodes how a child ended.
#include "oxport/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

using namespace oxport;

TEST(Subprocess, ChildExitCodeAndMessageComeBack) {
  auto run = runInChild([](std::string& message) {
    message = "from the child";
    return 7;
  });
  ASSERT_TRUE(run.ok()) << run.error().message();
  EXPECT_TRUE(run->status.exited);
  EXPECT_EQ(run->status.code, 7);
  EXPECT_FALSE(run->status.ok());
  EXPECT_EQ(run->message, "from the child");
  EXPECT_FALSE(run->cancelled);
  EXPECT_EQ(run->status.describe(), "exit status 7");
}

TEST(Subprocess, ACrashEndsOnlyTheChild) {
  auto run = runInChild([](std::string&) -> int {
    ::raise(SIGSEGV);
    return 0;
  });
  ASSERT_TRUE(run.ok());
  EXPECT_FALSE(run->status.exited);
  EXPECT_EQ(run->status.signal, SIGSEGV);
  EXPECT_NE(run->status.describe().find("signal 11"), std::string::npos) << run->status.describe();
}

TEST(Subprocess, AnExceptionInTheChildIsItsMessage) {
  auto run = runInChild([](std::string&) -> int { throw std::runtime_error("bad archive"); });
  ASSERT_TRUE(run.ok());
  EXPECT_TRUE(run->status.exited);
  EXPECT_EQ(run->status.code, 125);
  EXPECT_EQ(run->message, "bad archive");
}

TEST(Subprocess, LongMessagesAreCut) {
  auto run = runInChild(
      [](std::string& message) {
        message.assign(200000, 'x');
        return 0;
      },
      {}, 1000);
  ASSERT_TRUE(run.ok());
  EXPECT_TRUE(run->status.ok());
  EXPECT_EQ(run->message.size(), 1000u);
}

TEST(Subprocess, CancellingKillsTheChild) {
  const auto start = std::chrono::steady_clock::now();
  std::atomic<int> polls{0};
  auto run = runInChild(
      [](std::string&) {
        ::sleep(60);
        return 0;
      },
      [&] { return ++polls > 2; });
  ASSERT_TRUE(run.ok());
  EXPECT_TRUE(run->cancelled);
  EXPECT_EQ(run->status.signal, SIGKILL);
  // Well under the child's 60 s: it was killed, not waited for.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

TEST(Subprocess, SpawnWritesTheProgramsOutputToTheLog) {
  const auto log = std::filesystem::temp_directory_path() / ("oxport-spawn-" + std::to_string(::getpid()) + ".log");
  auto status = spawnAndWait({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, log.string());
  ASSERT_TRUE(status.ok()) << status.error().message();
  EXPECT_TRUE(status->exited);
  EXPECT_EQ(status->code, 3);
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "out\nerr\n");
  std::filesystem::remove(log);
}

TEST(Subprocess, AProgramThatCannotStartIsAnError) {
  auto status = spawnAndWait({"/nonexistent/program"}, "/dev/null");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message().find("/nonexistent/program"), std::string::npos);
}

TEST(Subprocess, WaitingForSomethingNotOurChildIsAnError) {
  auto status = waitChild(999999);
  EXPECT_FALSE(status.ok());
}
