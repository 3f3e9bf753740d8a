//===- RankWatchTest.cpp - Which rank the launcher names ------------------===//
//
// RankWatch (tools/ranks/Watch.h) names the rank that a signal killed, as
// the cause of the others' failures, however late it is reaped.
//
//===----------------------------------------------------------------------===//

#include "ranks/Watch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <thread>
#include <unistd.h>

using collc_launch::RankWatch;

namespace {

/// Forks a rank that closes its ends of the report pipe, waits `delayMs`,
/// then raises `sig`, or exits 0 without one.
pid_t spawnRank(const int fds[2], int delayMs, int sig) {
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    close(fds[1]);
    usleep(useconds_t(delayMs) * 1000);
    if (sig)
      raise(sig);
    _exit(0);
  }
  return pid;
}

} // namespace

// Killed during setup, a rank closes its end of the pipe before it can be
// reaped: once every end is closed it must still be named.
TEST(RankWatch, NamesARankKilledAfterEveryPipeClosed) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t fine = spawnRank(fds, 0, 0);
  pid_t killed = spawnRank(fds, 300, SIGKILL);
  ASSERT_GT(fine, 0);
  ASSERT_GT(killed, 0);
  close(fds[1]);
  RankWatch watch({fine, killed}, fds[0], 8);
  char record[8];
  EXPECT_FALSE(watch.next(record));
  EXPECT_EQ(watch.problem(), "rank 1 killed by signal 9 (Killed)");
}

TEST(RankWatch, NamesNoRankWhenEveryOneExits) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t a = spawnRank(fds, 0, 0);
  pid_t b = spawnRank(fds, 100, 0);
  close(fds[1]);
  RankWatch watch({a, b}, fds[0], 8);
  char record[8];
  EXPECT_FALSE(watch.next(record));
  EXPECT_EQ(watch.problem(), "");
  EXPECT_EQ(watch.exitOf(1), "exited with status 0");
}

// With every rank stopped none ends or fails, so no deadline that starts at
// a rank's end or failure ever comes: the launch must still end and name
// them. A watchdog kills them after 30 s, so that without that deadline the
// test fails rather than hangs.
TEST(RankWatch, EndsWhenEveryRankIsStopped) {
  setenv("COLL_TIMEOUT", "0.5", 1);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  // They keep their end of the pipe open, as ranks do until they exit.
  auto stoppedRank = [&] {
    pid_t pid = fork();
    if (pid == 0) {
      raise(SIGSTOP);
      _exit(0);
    }
    return pid;
  };
  pid_t a = stoppedRank(), b = stoppedRank();
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  close(fds[1]);
  std::atomic<bool> ended{false};
  std::thread watchdog([&] {
    for (int i = 0; i < 300 && !ended; ++i)
      usleep(100000);
    if (!ended) {
      kill(a, SIGKILL);
      kill(b, SIGKILL);
    }
  });
  RankWatch watch({a, b}, fds[0], 8);
  char record[8];
  EXPECT_FALSE(watch.next(record));
  ended = true;
  watchdog.join();
  unsetenv("COLL_TIMEOUT");
  EXPECT_EQ(watch.problem(), "ranks 0, 1 are stopped (SIGSTOP or a debugger) and did not finish: "
                             "stopped for 3.5 s (COLL_TIMEOUT + 3 s)");
}
