//===- Watch.h - Wait for the ranks, and never forever ---------------------===//
//
// The launcher reads the ranks' fixed-size records from one pipe while it
// reaps them. A rank killed by a signal is named at once and the others are
// stopped. After a rank reports failure the rest get a grace period; after
// a rank finishes, the rest get the runtime's timeout (COLL_TIMEOUT, within
// which every wait of theirs ends) and the grace period. Then the ones
// still running are killed, and a stopped one is named. A rank that stays
// stopped for that long ends the launch too, whatever the others do: with
// every rank stopped, none would ever end or fail. So a launch always ends,
// and its ranks never outlive it as zombies.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RANKS_WATCH_H
#define COLLC_RANKS_WATCH_H

#include "support/Env.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace collc_launch {

/// COLL_TIMEOUT as the runtime reads it: seconds any wait of a rank may last
/// (the default where the value is refused, as the ranks then fail at once).
inline double rankTimeout() {
  return collrt::Env::read([](const char *name) { return getenv(name); }).timeoutSeconds;
}

/// "killed by signal 9 (Killed)" or "exited with status 3".
inline std::string describeExit(int status) {
  if (WIFSIGNALED(status))
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

/// True if the process is stopped (SIGSTOP, SIGTSTP, a debugger).
inline bool isStopped(pid_t pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/stat";
  FILE *f = fopen(path.c_str(), "r");
  if (!f)
    return false;
  char line[512] = "";
  size_t n = fread(line, 1, sizeof line - 1, f);
  fclose(f);
  line[n] = 0;
  const char *state = strrchr(line, ')'); // the name may hold spaces and parens
  return state && (state[2] == 'T' || state[2] == 't');
}

class RankWatch {
public:
  using Clock = std::chrono::steady_clock;

  RankWatch(std::vector<pid_t> pids, int reports, size_t recordSize)
      : pids(std::move(pids)), status(this->pids.size(), -1), done(this->pids.size(), false),
        stoppedSince(this->pids.size()), reports(reports), recordSize(recordSize),
        timeout(rankTimeout()) {
    fcntl(reports, F_SETFL, fcntl(reports, F_GETFL) | O_NONBLOCK);
  }
  RankWatch(const RankWatch &) = delete;
  RankWatch &operator=(const RankWatch &) = delete;
  ~RankWatch() {
    stopAll();
    close(reports);
  }

  /// The next record, or false when no more will come: every rank has ended,
  /// or the launch must stop, and then problem() says why.
  bool next(void *record) {
    for (;;) {
      if (inbox.size() >= recordSize) {
        memcpy(record, inbox.data(), recordSize);
        inbox.erase(0, recordSize);
        return true;
      }
      if (over || !why.empty() || (eof && running() == 0))
        return false;
      reap();
      if (!why.empty())
        continue;
      checkStopped();
      if (!over)
        checkDeadline();
      if (over)
        continue;
      if (eof) { // every rank closed its end: they are exiting
        // reap() names one a signal killed, which closes its end before it
        // can be reaped; never blocking, as one may stop on its way out.
        usleep(10000);
        continue;
      }
      pollfd p{reports, POLLIN, 0};
      if (poll(&p, 1, 100) > 0) {
        char buffer[1 << 14];
        ssize_t n = read(reports, buffer, sizeof buffer);
        if (n > 0)
          inbox.append(buffer, size_t(n));
        else if (n == 0)
          eof = true;
      }
    }
  }

  /// A rank reported failure: the others may wait for it until their
  /// timeout, then they are stopped.
  void sawFailure() {
    if (failedAt == Clock::time_point{})
      failedAt = Clock::now();
  }
  /// Every record of `rank` is in.
  void finished(int rank) {
    if (rank >= 0 && rank < int(done.size()) && !done[rank]) {
      done[rank] = true;
      if (finishedAt == Clock::time_point{})
        finishedAt = Clock::now();
    }
  }
  /// Why the launch ended early, naming the rank; empty if it did not.
  const std::string &problem() const { return why; }
  /// How `rank` ended, once it has: "exited with status 3".
  std::string exitOf(int rank) const {
    return status[rank] < 0 ? "is running" : describeExit(status[rank]);
  }
  /// Kills every rank still running and reaps them all.
  void stopAll() {
    for (size_t r = 0; r < pids.size(); ++r)
      if (status[r] < 0)
        kill(pids[r], SIGKILL); // a stopped process dies of SIGKILL too
    waitAll();
  }

private:
  int running() const {
    int n = 0;
    for (int s : status)
      n += s < 0;
    return n;
  }

  void reap() {
    for (size_t r = 0; r < pids.size(); ++r) {
      if (status[r] >= 0)
        continue;
      int s = 0;
      if (waitpid(pids[r], &s, WNOHANG) != pids[r])
        continue;
      status[r] = s;
      if (blame(r))
        stopAll();
    }
  }

  /// Names rank `r`, just reaped, if a signal killed it and nothing was
  /// named before.
  bool blame(size_t r) {
    if (!WIFSIGNALED(status[r]) || !why.empty())
      return false;
    why = "rank " + std::to_string(r) + " " + describeExit(status[r]);
    return true;
  }

  /// Reaps every rank.
  void waitAll() {
    for (size_t r = 0; r < pids.size(); ++r)
      while (status[r] < 0) {
        int s = 0;
        pid_t got = waitpid(pids[r], &s, 0);
        if (got == pids[r])
          status[r] = s;
        else if (got < 0 && errno != EINTR)
          status[r] = 0;
      }
  }

  // After the first failure the launch has failed: the others get a grace
  // period to report too (their waits for the failed rank end about when
  // its own did), then stop. After the first rank's end, the others have
  // the runtime's timeout as well, for their last waits.
  void checkDeadline() {
    const bool failed = failedAt != Clock::time_point{};
    Clock::time_point since = failed ? failedAt : finishedAt;
    double allowed = failed ? kGraceSeconds : timeout + kGraceSeconds;
    if (since == Clock::time_point{} ||
        Clock::now() - since < std::chrono::duration<double>(allowed))
      return;
    std::string stopped, stuck;
    for (size_t r = 0; r < pids.size(); ++r) {
      if (status[r] >= 0 || done[r])
        continue;
      std::string &list = isStopped(pids[r]) ? stopped : stuck;
      list += (list.empty() ? "" : ", ") + std::to_string(r);
    }
    if (stopped.empty() && stuck.empty())
      return;
    if (!stopped.empty())
      why = "rank " + stopped + " is stopped (SIGSTOP or a debugger) and holds up the others";
    else if (!failed)
      why = "rank " + stuck + " did not finish within " + std::to_string(int(timeout)) +
            " s (COLL_TIMEOUT) of the first rank's end";
    over = true;
    stopAll();
  }

  // A rank seen stopped for the runtime's timeout and the grace period, the
  // longest any wait of its peers lasts, ends the launch whether or not they
  // noticed. Sampled once a second: /proc is read per rank.
  void checkStopped() {
    const Clock::time_point now = Clock::now();
    if (now - lastSample < std::chrono::seconds(1))
      return;
    lastSample = now;
    const auto allowed = std::chrono::duration<double>(timeout + kGraceSeconds);
    bool expired = false;
    std::string stopped;
    int count = 0;
    for (size_t r = 0; r < pids.size(); ++r) {
      if (status[r] >= 0 || done[r] || !isStopped(pids[r])) {
        stoppedSince[r] = Clock::time_point{};
        continue;
      }
      if (stoppedSince[r] == Clock::time_point{})
        stoppedSince[r] = now;
      expired |= now - stoppedSince[r] >= allowed;
      stopped += (stopped.empty() ? "" : ", ") + std::to_string(r);
      ++count;
    }
    if (!expired)
      return;
    char limit[32];
    snprintf(limit, sizeof limit, "%g", timeout + kGraceSeconds);
    why = (count > 1 ? "ranks " + stopped + " are" : "rank " + stopped + " is") +
          " stopped (SIGSTOP or a debugger) and did not finish: stopped for " + limit +
          " s (COLL_TIMEOUT + 3 s)";
    over = true;
    stopAll();
  }

  static constexpr double kGraceSeconds = 3;
  std::vector<pid_t> pids;
  std::vector<int> status; // waitpid's, or -1 while running
  std::vector<bool> done;
  std::vector<Clock::time_point> stoppedSince; // while seen stopped
  int reports;
  size_t recordSize;
  double timeout;
  std::string inbox, why;
  bool eof = false, over = false;
  Clock::time_point failedAt{}, finishedAt{}, lastSample{};
};

} // namespace collc_launch

#endif // COLLC_RANKS_WATCH_H
