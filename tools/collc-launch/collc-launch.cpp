//===- collc-launch.cpp - Run a compiled algorithm on emulated ranks ------===//
//
// Starts one process per rank (this program again, with --child), which
// loads the host build of a generated kernel, joins the communicator, runs
// the algorithm and checks its output bit-exactly against the reference.
// Prints PASS or FAIL with the first mismatch, and the time. `collc run`
// compiles the kernel and calls this.
//
//===----------------------------------------------------------------------===//
#include "collc/abi.h"
#include "collrt.h"

#include "Expected.h"
#include "Names.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace collc_check;
using namespace collc_launch;

namespace {

struct Options {
  std::string kernel, algorithm;
  int ranks = 0;
  int64_t count = 1 << 20;
  collDataType_t dtype = collFloat32;
  collRedOp_t op = collSum;
  bool inplace = false;
  int iters = 1;
  std::string transport = "shm";
  // Child only.
  int child = -1;
  std::string id;
  int report = -1;
};

struct Report {
  int32_t rank, ok;
  double seconds;
  int64_t wrong;
  char message[400];
};



int usage(const char *why) {
  fprintf(stderr,
          "collc-launch: %s\n"
          "usage: collc-launch KERNEL.so --ranks R [--algorithm NAME] [--count N]\n"
          "         [--dtype T] [--op OP] [--inplace] [--iters K] [--transport shm|socket]\n"
          "  T: int8 uint8 int32 uint32 int64 uint64 half float double bfloat16\n"
          "     (float16, float32, float64 too); OP: sum prod max min avg\n",
          why);
  return 2;
}

bool parse(int argc, char **argv, Options &o, std::string &error) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc) {
        error = a + " needs a value";
        return nullptr;
      }
      return argv[++i];
    };
    auto integer = [&](int64_t &out, int64_t lo) {
      const char *v = value();
      if (!v)
        return false;
      char *end;
      long long n = strtoll(v, &end, 10);
      if (*end || n < lo) {
        error = a + " expects an integer >= " + std::to_string(lo) + ", got '" + v + "'";
        return false;
      }
      out = n;
      return true;
    };
    int64_t n;
    if (a == "--ranks") {
      if (!integer(n, 1))
        return false;
      o.ranks = int(std::min<int64_t>(n, 4096));
    } else if (a == "--count") {
      if (!integer(o.count, 0))
        return false;
    } else if (a == "--iters") {
      if (!integer(n, 1))
        return false;
      o.iters = int(std::min<int64_t>(n, 1000000));
    } else if (a == "--child") {
      if (!integer(n, 0))
        return false;
      o.child = int(n);
    } else if (a == "--report") {
      if (!integer(n, 0))
        return false;
      o.report = int(n);
    } else if (a == "--id") {
      const char *v = value();
      if (!v)
        return false;
      o.id = v;
    } else if (a == "--algorithm") {
      const char *v = value();
      if (!v)
        return false;
      o.algorithm = v;
    } else if (a == "--dtype") {
      const char *v = value();
      if (!v)
        return false;
      if (!parseType(v, o.dtype)) {
        error = std::string("unknown data type '") + v + "'";
        return false;
      }
    } else if (a == "--op") {
      const char *v = value();
      if (!v)
        return false;
      if (!parseOp(v, o.op)) {
        error = std::string("unknown reduction op '") + v + "'";
        return false;
      }
    } else if (a == "--transport") {
      const char *v = value();
      if (!v)
        return false;
      o.transport = v;
      if (o.transport != "shm" && o.transport != "socket") {
        error = "unknown transport '" + o.transport + "'; expected shm or socket";
        return false;
      }
    } else if (a == "--inplace") {
      o.inplace = true;
    } else if (!a.empty() && a[0] != '-' && o.kernel.empty()) {
      o.kernel = a;
    } else {
      error = "unknown argument '" + a + "'";
      return false;
    }
  }
  if (o.kernel.empty())
    error = "no kernel library given";
  else if (o.ranks < 1)
    error = "--ranks is required";
  return error.empty();
}

const collc::AlgorithmDesc *loadAlgorithm(const Options &o, std::string &error) {
  void *lib = dlopen(o.kernel.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    error = dlerror();
    return nullptr;
  }
  std::string symbol = "collc_algorithm_" + o.algorithm;
  auto *alg = static_cast<const collc::AlgorithmDesc *>(dlsym(lib, symbol.c_str()));
  if (!alg)
    error = "no algorithm '" + o.algorithm + "' in " + o.kernel;
  return alg;
}


template <typename T>
void runRank(const Options &o, const collc::AlgorithmDesc *alg, collComm_t comm, Report &rep) {
  const collc::PlanDesc &plan = alg->plans[0];
  const int R = o.ranks, r = o.child, coll = plan.collective;
  const int64_t E = o.count, inN = inUnits(coll, R) * E, outN = outUnits(coll, R) * E;
  // In place follows NCCL: allgather's input is this rank's block of the
  // output, reducescatter's output this rank's block of the input.
  std::vector<T> a(std::max<int64_t>(o.inplace ? std::max(inN, outN) : inN, 1));
  std::vector<T> b(o.inplace ? 1 : std::max<int64_t>(outN, 1));
  T *send = a.data(), *recv = o.inplace ? a.data() : b.data();
  if (o.inplace && coll == collc::kAllGather)
    send = recv + r * E;
  if (o.inplace && coll == collc::kReduceScatter)
    recv = send + r * E;
  std::vector<char> checked;
  std::vector<T> want = reference<T>(coll, R, plan.root, r, E, o.op, checked);
  double best = 1e30;
  for (int it = 0; it < o.iters; ++it) {
    memset(static_cast<void *>(o.inplace ? a.data() : b.data()), 0xA5,
           (o.inplace ? a.size() : b.size()) * sizeof(T));
    fillInput(send, r, inN, o.op);
    auto start = std::chrono::steady_clock::now();
    collResult_t res = collLaunch(comm, alg, send, recv, size_t(E), o.dtype, o.op, nullptr);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (res != collSuccess) {
      snprintf(rep.message, sizeof rep.message, "rank %d: %s: %s", r, collGetErrorString(res),
               collGetLastError(comm));
      return;
    }
    best = std::min(best, s);
  }
  std::string first;
  rep.wrong = compare(recv, want, checked, first);
  rep.seconds = best;
  rep.ok = rep.wrong == 0;
  if (!rep.ok)
    snprintf(rep.message, sizeof rep.message, "rank %d, %s (%lld wrong)", r, first.c_str(),
             (long long)rep.wrong);
}

int child(const Options &o) {
  Report rep{};
  rep.rank = o.child;
  std::string error;
  collUniqueId id;
  collComm_t comm = nullptr;
  const collc::AlgorithmDesc *alg = loadAlgorithm(o, error);
  if (!alg) {
    snprintf(rep.message, sizeof rep.message, "rank %d: %s", o.child, error.c_str());
  } else if (!unhex(o.id, &id, sizeof id)) {
    snprintf(rep.message, sizeof rep.message, "rank %d: bad --id", o.child);
  } else if (collResult_t r = collCommInitRank(&comm, o.ranks, id, o.child)) {
    snprintf(rep.message, sizeof rep.message, "rank %d: %s: %s", o.child,
             collGetErrorString(r), collGetLastError(nullptr));
  } else {
    dispatchType(o.dtype, [&](auto tag) { runRank<decltype(tag)>(o, alg, comm, rep); });
    collCommDestroy(comm);
  }
  if (write(o.report, &rep, sizeof rep) != ssize_t(sizeof rep))
    return 3;
  return rep.ok ? 0 : 1;
}

int parent(const Options &o, char **argv) {
  std::string error;
  const collc::AlgorithmDesc *alg = loadAlgorithm(o, error);
  if (!alg)
    return usage(error.c_str()), 2;
  const collc::PlanDesc &plan = alg->plans[0];
  if (plan.ranks != o.ranks) {
    fprintf(stderr, "collc-launch: algorithm %s is compiled for %d ranks, not %d\n", alg->name,
            plan.ranks, o.ranks);
    return 2;
  }
  if (!dispatchType(o.dtype, [](auto) {})) {
    fprintf(stderr, "collc-launch: %s needs a GPU; the host emulation has no fp8\n",
            typeNames[o.dtype]);
    return 2;
  }
  // Ranks inherit the environment, where the runtime reads its knobs.
  setenv("COLL_TRANSPORT", o.transport.c_str(), 1);
  collUniqueId id;
  if (collResult_t r = collGetUniqueId(&id)) {
    fprintf(stderr, "collc-launch: %s: %s\n", collGetErrorString(r), collGetLastError(nullptr));
    return 1;
  }
  int fds[2];
  if (pipe(fds))
    return perror("pipe"), 1;
  std::string idHex = hex(&id, sizeof id);
  std::vector<pid_t> pids;
  for (int r = 0; r < o.ranks; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      std::vector<std::string> args = {argv[0],     o.kernel,          "--algorithm",
                                       o.algorithm, "--ranks",         std::to_string(o.ranks),
                                       "--count",   std::to_string(o.count), "--dtype",
                                       typeNames[o.dtype], "--op",     opNames[o.op],
                                       "--iters",   std::to_string(o.iters), "--child",
                                       std::to_string(r), "--id",      idHex,
                                       "--report",  std::to_string(fds[1])};
      if (o.inplace)
        args.push_back("--inplace");
      std::vector<char *> cargs;
      for (std::string &s : args)
        cargs.push_back(s.data());
      cargs.push_back(nullptr);
      execv("/proc/self/exe", cargs.data());
      _exit(127);
    }
    pids.push_back(pid);
  }
  close(fds[1]);
  std::vector<Report> reports;
  Report rep;
  while (read(fds[0], &rep, sizeof rep) == ssize_t(sizeof rep))
    reports.push_back(rep);
  close(fds[0]);
  int crashed = 0;
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status))
      ++crashed;
  }
  bool ok = int(reports.size()) == o.ranks && !crashed;
  double worst = 0;
  std::string first;
  for (const Report &r : reports) {
    ok &= bool(r.ok);
    worst = std::max(worst, r.seconds);
    if (!r.ok && first.empty())
      first = r.message;
  }
  printf("%s (%s): %s on %d ranks, %lld x %s %s, %s, %s\n", alg->name, alg->source,
         collNames[plan.collective], o.ranks, (long long)o.count, typeNames[o.dtype],
         opNames[o.op], o.inplace ? "in place" : "out of place", o.transport.c_str());
  if (ok) {
    printf("PASS in %.3f ms (slowest rank, best of %d)\n", worst * 1e3, o.iters);
    return 0;
  }
  if (first.empty())
    first = std::to_string(o.ranks - int(reports.size())) + " rank(s) died without a report";
  printf("FAIL %s\n", first.c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  std::string error;
  if (!parse(argc, argv, o, error))
    return usage(error.c_str());
  if (o.algorithm.empty()) {
    // The only algorithm of the file: collc names the symbol after it.
    return usage("--algorithm is required");
  }
  return o.child >= 0 ? child(o) : parent(o, argv);
}
