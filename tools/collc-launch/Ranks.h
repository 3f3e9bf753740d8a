//===- Ranks.h - What collc-launch and collc-perf do the same way ---------===//
//
// Both read a command line of flags with values, load a generated kernel
// library and start one child process per rank: this program again, with
// `--child R --id HEX --report FD` appended, reporting over a pipe.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_LAUNCH_RANKS_H
#define COLLC_LAUNCH_RANKS_H

#include "collc/abi.h"
#include "collrt.h"

#include "Names.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <string>
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
      error = std::string(flag) + " expects an integer >= " + std::to_string(lo) + ", got '" +
              v + "'";
      return false;
    }
    out = n;
    return true;
  }
  /// An integer >= lo, capped at hi.
  bool integer(int &out, int64_t lo, int64_t hi) {
    int64_t n;
    if (!integer(n, lo))
      return false;
    out = int(n < hi ? n : hi);
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
inline const collc::AlgorithmDesc *loadAlgorithm(const std::string &kernel,
                                                 const std::string &name, std::string &error) {
  void *lib = dlopen(kernel.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    error = dlerror();
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
  const std::string id = hex(&uid, sizeof uid);
  int fds[2];
  if (pipe(fds)) {
    error = std::string("pipe: ") + strerror(errno);
    return {};
  }
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  std::vector<pid_t> pids;
  fflush(stdout);
  for (int r = 0; r < ranks; ++r) {
    pid_t pid = fork();
    if (pid < 0) {
      error = std::string("fork: ") + strerror(errno);
      for (pid_t p : pids)
        kill(p, SIGKILL);
      close(fds[0]);
      close(fds[1]);
      return {};
    }
    if (pid == 0) {
      std::vector<std::string> args(argv, argv + argc);
      for (std::string extra : {std::string("--child"), std::to_string(r), std::string("--id"),
                                id, std::string("--report"), std::to_string(fds[1])})
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
  reports = fds[0];
  return pids;
}

} // namespace collc_launch

#endif // COLLC_LAUNCH_RANKS_H
