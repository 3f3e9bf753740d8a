//===- Spawn.h - Flags, kernels and ranks of collc-launch and collc-perf ===//
//
// Both read a command line of flags with values, load a generated kernel
// library and start one child process per rank: this program again, with
// `--child R --id-fd FD --report FD` appended, reporting over a pipe. The
// unique id (which holds the communicator's secret) travels in an inherited
// memfd, never on a command line, where `ps` would show it. Ranks die with
// their launcher.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RANKS_SPAWN_H
#define COLLC_RANKS_SPAWN_H

#include "collc/abi.h"
#include "collrt.h"

#include "ranks/Names.h"
#include "support/ByteCount.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace collc_launch {

/// Walks argv; each accessor takes the value of the current flag and says
/// what is wrong with it in `error`.
class ArgReader {
public:
  ArgReader(int argc, char **argv, std::string &error) : argc(argc), argv(argv), error(error) {}

  /// The next argument, or null after the last.
  const char *next() { return ++i < argc ? argv[i] : nullptr; }
  const char *value() {
    if (i + 1 >= argc) {
      error = std::string(argv[i]) + " needs a value";
      return nullptr;
    }
    return argv[++i];
  }
  bool integer(int64_t &out, int64_t lo) {
    const char *flag = argv[i], *v = value();
    if (!v)
      return false;
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (end == v || *end || errno || n < lo) {
      error =
          std::string(flag) + " expects an integer >= " + std::to_string(lo) + ", got '" + v + "'";
      return false;
    }
    out = n;
    return true;
  }
  /// An integer in [lo, hi]; above hi is an error that names the maximum.
  bool integer(int &out, int64_t lo, int64_t hi) {
    int64_t n;
    const char *flag = argv[i];
    if (!integer(n, lo))
      return false;
    if (n > hi) {
      error = std::string(flag) + " is " + std::to_string(n) + ", above the maximum of " +
              std::to_string(hi);
      return false;
    }
    out = int(n);
    return true;
  }
  /// A number of elements or bytes with an optional K, M, G or T, as collc
  /// reads sizes (support/ByteCount.h).
  bool count(int64_t &out, int64_t max = INT64_MAX) {
    const char *flag = argv[i], *v = value();
    if (!v)
      return false;
    std::optional<int64_t> n = collrt::parseWholeCount(v, max);
    if (!n) {
      error = std::string(flag) + " expects a whole number, K, M, G or T (powers of 1024) " +
              "may follow, at most " + std::to_string(max) + ", got '" + v + "'";
      return false;
    }
    out = *n;
    return true;
  }
  bool text(std::string &out) {
    const char *v = value();
    if (v)
      out = v;
    return v;
  }
  bool dtype(collDataType_t &out) {
    const char *v = value();
    if (v && !parseType(v, out))
      error = std::string("unknown data type '") + v + "'";
    return v && error.empty();
  }
  bool op(collRedOp_t &out) {
    const char *v = value();
    if (v && !parseOp(v, out))
      error = std::string("unknown reduction op '") + v + "'";
    return v && error.empty();
  }

private:
  int argc;
  char **argv;
  int i = 0;
  std::string &error;
};

/// The algorithm `collc_algorithm_<name>` of a generated kernel library.
inline const collc::AlgorithmDesc *loadAlgorithm(const std::string &kernel, const std::string &name,
                                                 std::string &error) {
  void *lib = dlopen(kernel.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    error = dlerror();
    // The loader's own words ("failed to map segment") do not say why.
    struct statvfs mount;
    if (!statvfs(kernel.c_str(), &mount) && (mount.f_flag & ST_NOEXEC))
      error += " (its file system is mounted noexec: put the library, or TMPDIR for collc "
               "run, on one that allows executables)";
    return nullptr;
  }
  std::string symbol = "collc_algorithm_" + name;
  auto *alg = static_cast<const collc::AlgorithmDesc *>(dlsym(lib, symbol.c_str()));
  if (!alg)
    error = "no algorithm '" + name + "' (symbol " + symbol + ") in " + kernel;
  else if (alg->numPlans < 1)
    error = std::string("algorithm ") + alg->name + " has no plan";
  return error.empty() ? alg : nullptr;
}

/// Reads the unique id that spawnRanks left in the descriptor `fd`.
inline bool readIdFd(int fd, collUniqueId &id, std::string &error) {
  ssize_t n = pread(fd, &id, sizeof id, 0);
  if (n != ssize_t(sizeof id)) {
    error = "cannot read the unique id from descriptor " + std::to_string(fd) + ": " +
            (n < 0 ? strerror(errno) : "too short");
    return false;
  }
  close(fd);
  return true;
}

/// Makes the communicator's unique id and starts `ranks` copies of this
/// program with argv and the child's flags; they report on the pipe whose
/// read end is `reports`. Empty, with `error` set, if that fails (the ranks
/// started are killed).
inline std::vector<pid_t> spawnRanks(int argc, char **argv, int ranks, int &reports,
                                     std::string &error) {
  collUniqueId uid;
  if (collResult_t r = collGetUniqueId(&uid)) {
    error = std::string(collGetErrorString(r)) + ": " + collGetLastError(nullptr);
    return {};
  }
  int idFd = memfd_create("collc-unique-id", 0); // inherited, so no MFD_CLOEXEC
  if (idFd < 0 || write(idFd, &uid, sizeof uid) != ssize_t(sizeof uid)) {
    error = std::string("memfd for the unique id: ") + strerror(errno);
    if (idFd >= 0)
      close(idFd);
    return {};
  }
  int fds[2];
  if (pipe(fds)) {
    error = std::string("pipe: ") + strerror(errno);
    close(idFd);
    return {};
  }
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  std::vector<pid_t> pids;
  const pid_t launcher = getpid();
  fflush(stdout);
  fflush(stderr);
  for (int r = 0; r < ranks; ++r) {
    pid_t pid = fork();
    if (pid < 0) {
      error = std::string("fork: ") + strerror(errno);
      for (pid_t p : pids)
        kill(p, SIGKILL);
      for (pid_t p : pids)
        waitpid(p, nullptr, 0);
      close(fds[0]);
      close(fds[1]);
      close(idFd);
      return {};
    }
    if (pid == 0) {
      // Die with the launcher, even if it dies before this line runs.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != launcher)
        _exit(127);
      std::vector<std::string> args(argv, argv + argc);
      for (std::string extra :
           {std::string("--child"), std::to_string(r), std::string("--id-fd"), std::to_string(idFd),
            std::string("--report"), std::to_string(fds[1])})
        args.push_back(extra);
      std::vector<char *> cargs;
      for (std::string &a : args)
        cargs.push_back(a.data());
      cargs.push_back(nullptr);
      execv("/proc/self/exe", cargs.data());
      _exit(127);
    }
    pids.push_back(pid);
  }
  close(fds[1]);
  close(idFd);
  reports = fds[0];
  return pids;
}

/// For a launcher that another program started and waits for (as `collc
/// run` does, naming itself in COLLC_PARENT_PID): die with that program.
inline void dieWithParent() {
  const char *parent = getenv("COLLC_PARENT_PID");
  if (!parent)
    return;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  const pid_t now = getppid();
  if (now == pid_t(atoll(parent)))
    return;
  // That program is gone already, or the variable was left over from
  // another one (an exported shell variable): never fail without a word.
  fprintf(stderr,
          "collc-launch: COLLC_PARENT_PID=%s, but this process's parent is %d: the program "
          "that started it has ended, or the variable is stale (unset it)\n",
          parent, int(now));
  _exit(1);
}

} // namespace collc_launch

#endif // COLLC_RANKS_SPAWN_H
