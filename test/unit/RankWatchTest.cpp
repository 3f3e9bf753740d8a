//===- RankWatchTest.cpp - Which rank the launcher names ------------------===//
//
// RankWatch (tools/ranks/Watch.h) names the rank that a signal killed, as
// the cause of the others' failures, however late it is reaped.
//
//===----------------------------------------------------------------------===//

#include "ranks/Watch.h"

#include <gtest/gtest.h>

#include <csignal>
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
