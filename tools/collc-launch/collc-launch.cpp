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

#include "Graph.h"
#include "ranks/Expected.h"
#include "ranks/Memory.h"
#include "ranks/Names.h"
#include "ranks/Spawn.h"
#include "ranks/Watch.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
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
  int repeat = 1; // start the ranks this many times, each a new communicator
  std::string transport = "shm";
  // Ranks split into this many emulated machines (COLL_HOSTID), joined by
  // the transport collrt picks for each pair unless --transport names one.
  int machines = 1;
  bool transportGiven = false;
  // Register the algorithm and call the entry point of its collective
  // (collAllReduce ...) instead of collLaunch; another collective's or
  // another root (-1: the plan's) checks that dispatch refuses them.
  bool api = false;
  int apiCollective = -1, apiRoot = -1;
  // Input and output in collMemAlloc memory registered as a window.
  bool registered = false;
  // Capture the first launch into a CUDA graph and replay it (plans built
  // for the GPU, with a driver that reaches host memory: the fake one).
  bool graph = false;
  // Child only.
  int child = -1;
  int idFd = -1;
  int report = -1;
};

struct Report {
  int32_t rank, ok;
  int32_t result; // the runtime's, when a call failed
  double seconds;
  int64_t wrong;
  char message[400];
};

int usage(const char *why) {
  fprintf(stderr,
          "collc-launch: %s\n"
          "usage: collc-launch KERNEL.so --ranks R [--algorithm NAME] [--count N]\n"
          "         [--dtype T] [--op OP] [--inplace] [--iters K] [--repeat K]\n"
          "         [--transport shm|socket] [--machines M]\n"
          "         [--api [--api-as COLL] [--api-root R]] [--registered] [--graph]\n"
          "  T: int8 uint8 int32 uint32 int64 uint64 half float double bfloat16\n"
          "     (float16, float32, float64 too); OP: sum prod max min avg\n"
          "  --machines M: split the ranks into M emulated machines (rank r on machine\n"
          "     r * M / R, by COLL_HOSTID); collrt picks each pair's transport unless\n"
          "     --transport names one\n"
          "  --api: register the algorithm, call collAllReduce, collBroadcast ... (the\n"
          "     collective's entry point) instead of collLaunch; --api-as COLL calls\n"
          "     another collective's, --api-root R passes another root\n"
          "  --registered: input and output in collMemAlloc memory registered as a\n"
          "     window (collCommWindowRegister)\n"
          "  --graph: capture a launch into a CUDA graph on a stream of its own, check\n"
          "     that nothing ran, then replay it on even iterations and launch plainly\n"
          "     on odd ones, checking every result (the driver COLL_CUDA_LIBRARY\n"
          "     names must reach host memory)\n",
          why);
  return 2;
}

bool parse(int argc, char **argv, Options &o, std::string &error) {
  ArgReader in(argc, argv, error);
  while (const char *arg = in.next()) {
    std::string a = arg;
    bool ok = true;
    if (a == "--ranks")
      ok = in.integer(o.ranks, 1, 4096);
    else if (a == "--count")
      ok = in.count(o.count);
    else if (a == "--iters")
      ok = in.integer(o.iters, 1, 1000000);
    else if (a == "--repeat")
      ok = in.integer(o.repeat, 1, 1000000);
    else if (a == "--child")
      ok = in.integer(o.child, 0, 4096);
    else if (a == "--report")
      ok = in.integer(o.report, 0, 1 << 30);
    else if (a == "--id-fd")
      ok = in.integer(o.idFd, 0, 1 << 30);
    else if (a == "--algorithm")
      ok = in.text(o.algorithm);
    else if (a == "--dtype")
      ok = in.dtype(o.dtype);
    else if (a == "--op")
      ok = in.op(o.op);
    else if (a == "--machines")
      ok = in.integer(o.machines, 1, 4096);
    else if (a == "--transport") {
      o.transportGiven = true;
      ok = in.text(o.transport);
      if (ok && o.transport != "shm" && o.transport != "socket" && o.transport != "ib") {
        error = "unknown transport '" + o.transport + "'; expected shm, socket or ib";
        ok = false;
      }
    } else if (a == "--inplace")
      o.inplace = true;
    else if (a == "--api")
      o.api = true;
    else if (a == "--registered")
      o.registered = true;
    else if (a == "--graph")
      o.graph = true;
    else if (a == "--api-root") {
      o.api = true;
      ok = in.integer(o.apiRoot, 0, 4095);
    } else if (a == "--api-as") {
      std::string name;
      ok = in.text(name);
      o.api = true;
      for (int c = 0; c < 6; ++c)
        if (name == collNames[c])
          o.apiCollective = c;
      if (ok && o.apiCollective < 0) {
        error = "unknown collective '" + name + "'";
        ok = false;
      }
    } else if (!a.empty() && a[0] != '-' && o.kernel.empty())
      o.kernel = a;
    else {
      error = "unknown argument '" + a + "'";
      ok = false;
    }
    if (!ok)
      return false;
  }
  if (o.kernel.empty())
    error = "no kernel library given";
  else if (o.ranks < 1)
    error = "--ranks is required (at least 1)";
  return error.empty();
}

/// --registered: memory from collMemAlloc, registered as a window of the
/// communicator for as long as this lives.
struct Window {
  explicit Window(collComm_t comm) : comm(comm) {}
  ~Window() {
    if (window)
      collCommWindowDeregister(comm, window);
    collMemFree(memory);
  }
  bool make(size_t bytes, Report &rep) {
    int rank = -1;
    collCommUserRank(comm, &rank);
    collResult_t res = collMemAlloc(&memory, bytes);
    if (res == collSuccess)
      res = collCommWindowRegister(comm, memory, bytes, &window);
    if (res != collSuccess) {
      rep.result = res;
      snprintf(rep.message, sizeof rep.message, "rank %d: window: %s: %s", rank,
               collGetErrorString(res), collGetLastError(comm));
    }
    return res == collSuccess;
  }
  collComm_t comm;
  void *memory = nullptr;
  collWindow_t window = nullptr;
};

/// One rank's run of the algorithm: its buffers, the launch as the options
/// ask for it, and the checks of every result.
template <typename T> struct RankRun {
  RankRun(const Options &o, const collc::AlgorithmDesc *alg, collComm_t comm, Report &rep)
      : o(o), alg(alg), comm(comm), rep(rep), plan(alg->plans[0]), R(o.ranks), r(o.child),
        coll(plan.collective), E(o.count), inN(inUnits(coll, R) * E), outN(outUnits(coll, R) * E),
        // In place follows NCCL: allgather's input is this rank's block of
        // the output, reducescatter's output this rank's block of the input.
        aN(size_t(std::max<int64_t>(o.inplace ? std::max(inN, outN) : inN, 1))),
        bN(size_t(o.inplace ? 1 : std::max<int64_t>(outN, 1))), window(comm) {}

  const Options &o;
  const collc::AlgorithmDesc *alg;
  collComm_t comm;
  Report &rep;
  const collc::PlanDesc &plan;
  const int R, r, coll;
  const int64_t E, inN, outN;
  const size_t aN, bN;
  std::vector<T> heapA, heapB;
  T *a = nullptr, *b = nullptr;
  Window window;
  T *send = nullptr, *recv = nullptr;
  std::vector<char> checked;
  std::vector<T> want;
  int apiColl = 0, apiRoot = 0;
  void *stream = nullptr;
  GraphDriver cuda;
  // A plan built for the GPU runs asynchronously to this thread: each
  // launch is waited for on its stream before its result is read.
  bool onGpu = false;
  void *graph = nullptr, *exec = nullptr;

  // After: `send` and `recv` lie where the options ask, and `want` holds
  // the reference; false, with the reason in `rep`, where that failed.
  bool makeBuffers() {
    if (o.registered) {
      if (!window.make((aN + bN) * sizeof(T), rep))
        return false;
      a = static_cast<T *>(window.memory);
      b = a + aN;
    } else {
      heapA.resize(aN);
      heapB.resize(bN);
      a = heapA.data();
      b = heapB.data();
    }
    send = a;
    recv = o.inplace ? a : b;
    if (o.inplace && coll == collc::kAllGather)
      send = recv + r * E;
    if (o.inplace && coll == collc::kReduceScatter)
      recv = send + r * E;
    want = reference<T>(coll, R, plan.root, r, E, o.op, checked);
    // The NCCL-style entry points pick the registered algorithm themselves.
    apiColl = o.apiCollective >= 0 ? o.apiCollective : coll;
    apiRoot = o.apiRoot >= 0 ? o.apiRoot : plan.root;
    // Where no driver loads, collrt's launch says why.
    std::string error;
    onGpu = !plan.hostKernel && cuda.open(error);
    return true;
  }
  // After: the launches queued on the stream are done.
  void finish() {
    if (onGpu)
      cuda.streamSynchronize(stream);
  }

  collResult_t launch(const T *in, T *out) {
    const size_t n = size_t(E);
    if (!o.api)
      return collLaunch(comm, alg, in, out, n, o.dtype, o.op, stream);
    switch (apiColl) {
    case collc::kAllReduce:
      return collAllReduce(in, out, n, o.dtype, o.op, comm, stream);
    case collc::kReduceScatter:
      return collReduceScatter(in, out, n, o.dtype, o.op, comm, stream);
    case collc::kAllGather:
      return collAllGather(in, out, n, o.dtype, comm, stream);
    case collc::kAllToAll:
      return collAlltoAll(in, out, n, o.dtype, comm, stream);
    case collc::kBroadcast:
      return collBroadcast(in, out, n, o.dtype, apiRoot, comm, stream);
    default:
      return collReduce(in, out, n, o.dtype, o.op, apiRoot, comm, stream);
    }
  }
  void failed(collResult_t res) {
    rep.result = res;
    snprintf(rep.message, sizeof rep.message, "rank %d: %s: %s", r, collGetErrorString(res),
             collGetLastError(comm));
  }
  void refill() {
    memset(static_cast<void *>(o.inplace ? a : b), 0xA5, (o.inplace ? aN : bN) * sizeof(T));
    fillInput(send, r, inN, o.op);
  }
  bool wrong(const char *when) {
    std::string first;
    rep.wrong = compare(recv, want, checked, first);
    if (rep.wrong)
      snprintf(rep.message, sizeof rep.message, "rank %d, %s%s (%lld wrong)", r, when,
               first.c_str(), (long long)rep.wrong);
    return rep.wrong != 0;
  }

  // After (--graph): `exec` replays one launch captured on `stream`, which
  // did not run while being captured; false, with the reason in `rep`.
  bool capture() {
    std::string error;
    auto driverFailed = [&](const char *call, int res) {
      snprintf(rep.message, sizeof rep.message, "rank %d: %s failed (CUDA error %d)", r, call, res);
      return false;
    };
    if (!cuda.open(error)) {
      snprintf(rep.message, sizeof rep.message, "rank %d: %s", r, error.c_str());
      return false;
    }
    if (int res = cuda.streamCreate(&stream, 0))
      return driverFailed("cuStreamCreate", res);
    refill();
    const std::vector<T> before(o.inplace ? a : b, (o.inplace ? a : b) + (o.inplace ? aN : bN));
    if (int res = cuda.beginCapture(stream, 0))
      return driverFailed("cuStreamBeginCapture", res);
    collResult_t res = launch(send, recv);
    int ended = cuda.endCapture(stream, &graph);
    if (res != collSuccess) {
      failed(res);
      return false;
    }
    if (ended)
      return driverFailed("cuStreamEndCapture", ended);
    if (memcmp(before.data(), o.inplace ? a : b, before.size() * sizeof(T))) {
      snprintf(rep.message, sizeof rep.message,
               "rank %d: the captured launch ran while "
               "being captured",
               r);
      return false;
    }
    if (int res = cuda.instantiate(&exec, graph, 0))
      return driverFailed("cuGraphInstantiate", res);
    return true;
  }

  // After: every iteration ran and was right, and `best` is the fastest;
  // false, with the reason in `rep`, at the first that was not.
  bool iterate(double &best) {
    for (int it = 0; it < o.iters; ++it) {
      refill();
      auto start = std::chrono::steady_clock::now();
      // With --graph, replays and plain launches take turns: each starts
      // from the FIFO counters the other left.
      collResult_t res = collSuccess;
      if (exec && it % 2 == 0) {
        if (int e = cuda.graphLaunch(exec, stream)) {
          snprintf(rep.message, sizeof rep.message,
                   "rank %d: cuGraphLaunch failed (CUDA error "
                   "%d)",
                   r, e);
          return false;
        }
      } else {
        res = launch(send, recv);
      }
      finish();
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (res != collSuccess) {
        failed(res);
        return false;
      }
      best = std::min(best, s);
      if (o.graph && wrong(it % 2 == 0 ? "after a graph replay, " : "after a plain launch, "))
        return false;
    }
    return true;
  }

  // After (--graph): the graph is gone, and the launch after it, which
  // frees the graph's memory in collrt, was still right.
  bool afterGraph() {
    // The graph's memory goes back to collrt, which frees it at the next
    // launch: that launch must still be right.
    cuda.execDestroy(exec);
    cuda.graphDestroy(graph);
    refill();
    if (collResult_t res = launch(send, recv)) {
      failed(res);
      return false;
    }
    finish();
    if (wrong("after the graph was destroyed, "))
      return false;
    cuda.streamDestroy(stream);
    return true;
  }

  void run() {
    if (!makeBuffers())
      return;
    if (o.api) {
      if (collResult_t res = collRegisterAlgorithm(comm, alg))
        return failed(res);
    }
    if (o.graph && !capture())
      return;
    double best = 1e30;
    if (!iterate(best))
      return;
    if (o.graph && !afterGraph())
      return;
    rep.seconds = best;
    rep.ok = !wrong("");
  }
};

template <typename T>
void runRank(const Options &o, const collc::AlgorithmDesc *alg, collComm_t comm, Report &rep) {
  RankRun<T>(o, alg, comm, rep).run();
}

int child(const Options &o) {
  Report rep{};
  rep.rank = o.child;
  std::string error;
  collUniqueId id;
  collComm_t comm = nullptr;
  const collc::AlgorithmDesc *alg = loadAlgorithm(o.kernel, o.algorithm, error);
  if (!alg) {
    snprintf(rep.message, sizeof rep.message, "rank %d: %s", o.child, error.c_str());
  } else if (!readIdFd(o.idFd, id, error)) {
    snprintf(rep.message, sizeof rep.message, "rank %d: %s", o.child, error.c_str());
  } else if (o.machines > 1 &&
             setenv("COLL_HOSTID",
                    ("machine-" + std::to_string(o.child * o.machines / o.ranks)).c_str(), 1)) {
    snprintf(rep.message, sizeof rep.message, "rank %d: cannot set COLL_HOSTID", o.child);
  } else if (collResult_t r = collCommInitRank(&comm, o.ranks, id, o.child)) {
    rep.result = r;
    snprintf(rep.message, sizeof rep.message, "rank %d: %s: %s", o.child, collGetErrorString(r),
             collGetLastError(nullptr));
  } else {
    // The parent checked the memory a run needs, but other processes may
    // take it meanwhile: a failed allocation is this rank's failure.
    try {
      dispatchType(o.dtype, [&](auto tag) { runRank<decltype(tag)>(o, alg, comm, rep); });
    } catch (const std::bad_alloc &) {
      rep.ok = 0;
      snprintf(rep.message, sizeof rep.message, "rank %d: out of memory for --count %lld", o.child,
               (long long)o.count);
    } catch (const std::length_error &) {
      rep.ok = 0;
      snprintf(rep.message, sizeof rep.message, "rank %d: --count %lld is too large", o.child,
               (long long)o.count);
    }
    collCommDestroy(comm);
  }
  if (write(o.report, &rep, sizeof rep) != ssize_t(sizeof rep))
    return 3;
  return rep.ok ? 0 : 1;
}

/// Starts the ranks once and waits for them. Empty if every rank passed;
/// otherwise why not, naming the rank that caused it where one did.
std::string launchOnce(const Options &o, int argc, char **argv, double &slowest) {
  std::string error;
  int from = -1; // the ranks' reports
  std::vector<pid_t> pids = spawnRanks(argc, argv, o.ranks, from, error);
  if (pids.empty())
    return error;
  RankWatch watch(std::move(pids), from, sizeof(Report));
  std::vector<bool> reported(o.ranks, false);
  std::string failure;
  bool failureIsConsequence = false;
  Report rep;
  while (watch.next(&rep)) {
    if (rep.rank < 0 || rep.rank >= o.ranks || reported[rep.rank])
      continue;
    reported[rep.rank] = true;
    watch.finished(rep.rank);
    slowest = std::max(slowest, rep.seconds);
    if (rep.ok)
      continue;
    watch.sawFailure();
    // A rank that lost a peer or timed out waiting for one reports a
    // consequence: name the cause where a rank reported one.
    rep.message[sizeof rep.message - 1] = 0;
    bool consequence = rep.result == collRemoteError || rep.result == collTimeout;
    if (failure.empty() || (failureIsConsequence && !consequence)) {
      failure = rep.message;
      failureIsConsequence = consequence;
    }
  }
  watch.stopAll();
  // A rank that died or stopped explains the others' failures: name it first.
  if (!watch.problem().empty())
    return watch.problem();
  for (int r = 0; r < o.ranks && failure.empty(); ++r)
    if (!reported[r])
      failure = "rank " + std::to_string(r) + " " + watch.exitOf(r) + " without a report";
  return failure;
}

/// Why the ranks' buffers (those of RankRun), the runtime's scratch and
/// FIFOs do not fit in the memory available; empty if they do. In doubles:
/// the element counts of a request can exceed int64_t.
std::string checkMemory(const Options &o, const collc::AlgorithmDesc &alg) {
  const collc::PlanDesc &plan = alg.plans[0];
  double size = 0;
  dispatchType(o.dtype, [&](auto t) { size = sizeof t; });
  const double R = o.ranks, E = double(o.count);
  const double in = double(inUnits(plan.collective, o.ranks)) * E;
  const double out = double(outUnits(plan.collective, o.ranks)) * E;
  double scratch = 0;
  for (int i = 0; i < plan.numScratch && i < collc::kMaxScratch; ++i)
    scratch += double(plan.scratchChunks[i]) * std::ceil(E / std::max(plan.chunks, 1));
  // Input and output (one buffer in place), the reference and which of its
  // elements are checked, and scratch.
  const double buffers = o.inplace ? std::max(in, out) : in + out;
  const double perRank = (buffers + out + scratch) * size + out;
  const double fifos = fifoMemory(alg);
  const double need = R * perRank + fifos, available = availableMemory();
  if (need <= available)
    return "";
  return "the run needs about " + showBytes(need) + " of memory (" + std::to_string(o.ranks) +
         " ranks x " + showBytes(perRank) + " of buffers for --count " + std::to_string(o.count) +
         ", " + showBytes(fifos) + " of FIFOs), more than the " + showBytes(available) +
         " available";
}

int parent(const Options &o, int argc, char **argv) {
  std::string error;
  const collc::AlgorithmDesc *alg = loadAlgorithm(o.kernel, o.algorithm, error);
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
  if (std::string why = checkMemory(o, *alg); !why.empty()) {
    fprintf(stderr, "collc-launch: %s\n", why.c_str());
    return 2;
  }
  // Ranks inherit the environment, where the runtime reads its knobs.
  const bool pick = o.machines > 1 && !o.transportGiven;
  if (pick)
    unsetenv("COLL_TRANSPORT");
  else
    setenv("COLL_TRANSPORT", o.transport.c_str(), 1);
  const std::string over = pick ? std::to_string(o.machines) + " machines" : o.transport;
  printf("%s (%s): %s on %d ranks, %lld x %s %s, %s, %s\n", alg->name, alg->source,
         collNames[plan.collective], o.ranks, (long long)o.count, typeNames[o.dtype], opNames[o.op],
         o.inplace ? "in place" : "out of place", over.c_str());
  double slowest = 0;
  int failed = 0;
  for (int run = 0; run < o.repeat; ++run) {
    std::string failure = launchOnce(o, argc, argv, slowest);
    if (failure.empty())
      continue;
    if (o.repeat == 1) {
      printf("FAIL %s\n", failure.c_str());
      return 1;
    }
    if (++failed <= 5) // a stress run counts every failure, showing the first few
      printf("FAIL in run %d of %d: %s\n", run + 1, o.repeat, failure.c_str());
    fflush(stdout);
  }
  if (failed) {
    printf("FAIL %d of %d runs\n", failed, o.repeat);
    return 1;
  }
  if (o.repeat > 1)
    printf("PASS %d runs, slowest rank %.3f ms (best of %d)\n", o.repeat, slowest * 1e3, o.iters);
  else
    printf("PASS in %.3f ms (slowest rank, best of %d)\n", slowest * 1e3, o.iters);
  return 0;
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
  if (o.child >= 0)
    return child(o);
  dieWithParent();
  return parent(o, argc, argv);
}
