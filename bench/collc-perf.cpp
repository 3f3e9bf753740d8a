//===- collc-perf.cpp - nccl-tests-style benchmark of a compiled algorithm ===//
//
// Times a compiled algorithm (the host build of a generated kernel) on
// emulated ranks over a range of sizes and prints nccl-tests' table: size,
// count, type, redop, root, then time, algbw, busbw and #wrong out of place
// and in place, and the average bus bandwidth at the end.
//
//   collc-perf KERNEL.so --algorithm NAME --ranks R [-b minbytes] [-e maxbytes]
//              [-f factor | -i stepbytes] [-d dtype|all] [-o op] [-n iters]
//              [-w warmup] [-c check] [-g 1] [-t 1] [--id-file PATH]
//
// Semantics follow nccl-tests: sizes are bytes (K, M, G, T suffixes, powers
// of 1024, read as collc reads them) of NCCL's count times the type size; the largest of the send
// and receive buffers is printed, with NCCL's count of the collective. Warm-up launches run at the
// largest and at the smallest size first. For each size and placement, one untimed launch, then -n
// timed launches: the time is their average, the maximum over ranks. With -c N the inputs are
// filled again and N more launches are checked bit-exactly against Expected.h's reference, and
// #wrong is the sum of wrong elements over ranks.
//
// Ranks: by default this program starts R processes (itself again, with
// --child/--id/--report) which send their results to it through a pipe, and
// it prints the table. Under mpirun (OMPI_COMM_WORLD_RANK/SIZE or
// PMI_RANK/SIZE in the environment) every process is one rank: rank 0 makes
// the unique id and writes it to --id-file PATH (atomically, by rename), the
// others poll for it; ranks append their results to PATH.rank<r>, which rank
// 0 reads to print the table. MPI itself is not used.
//
//===----------------------------------------------------------------------===//
#include "collc/abi.h"
#include "collrt.h"

#include "ranks/Expected.h"
#include "ranks/Memory.h"
#include "ranks/Names.h"
#include "ranks/Spawn.h"
#include "ranks/Watch.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace collc_check;
using namespace collc_launch;

namespace {

struct Options {
  std::string kernel, algorithm, idFile;
  int ranks = 0;
  int64_t minBytes = 32 << 20, maxBytes = 32 << 20, stepBytes = 1 << 20, factor = 1;
  collDataType_t dtype = collFloat32;
  collRedOp_t op = collSum;
  int iters = 20, warmup = 1, check = 1;
  // -d all: every type the host emulation has, one launch each.
  bool allTypes = false;
  bool help = false;
  // A rank this program started.
  int child = -1;
  int idFd = -1;
  int report = -1;
};

const char kUsage[] =
    "usage: collc-perf KERNEL.so --algorithm NAME --ranks R [-b minbytes] [-e maxbytes]\n"
    "         [-f stepfactor | -i stepbytes] [-d dtype|all] [-o op] [-n iters] [-w warmup]\n"
    "         [-c check] [-g 1] [-t 1] [--id-file PATH]\n"
    "  sizes take K, M, G, T suffixes (powers of 1024), as collc's do\n"
    "  dtype: int8 uint8 int32 uint32 int64 uint64 half float double bfloat16, or all\n"
    "     (every type the host emulation has, one table each)\n"
    "  op: sum prod max min avg\n"
    "  -g and -t: one rank per process, on one GPU and one thread, as nccl-tests'\n"
    "     -g 1 -t 1; --ranks sets how many ranks\n"
    "  under mpirun (one process per rank) --id-file names a file every rank sees\n";

int usage(const char *why) {
  fprintf(stderr, "collc-perf: %s\n%s", why, kUsage);
  return 2;
}

// Rows of the table, at most: each holds a result per rank and placement.
constexpr int64_t kMaxRows = 4096;

/// The size after `size`: times -f, or plus -i; past -e where that
/// would overflow.
int64_t nextSize(const Options &o, int64_t size) {
  if (o.factor > 1)
    return size > o.maxBytes / o.factor ? o.maxBytes + 1 : std::max(size * o.factor, size + 1);
  return size > o.maxBytes - o.stepBytes ? o.maxBytes + 1 : size + o.stepBytes;
}

/// How many sizes -b, -e and -f or -i make, counting no further than
/// kMaxRows + 1.
int64_t rowCount(const Options &o) {
  if (o.factor <= 1)
    return std::min((o.maxBytes - o.minBytes) / o.stepBytes + 1, kMaxRows + 1);
  int64_t rows = 0;
  for (int64_t size = o.minBytes; size <= o.maxBytes && rows <= kMaxRows; size = nextSize(o, size))
    ++rows;
  return rows;
}

bool parse(int argc, char **argv, Options &o, std::string &error) {
  ArgReader in(argc, argv, error);
  std::string a;
  // nccl-tests' sizes, read as collc reads them; a petabyte is past any
  // machine.
  auto size = [&](int64_t &out) { return in.count(out, int64_t(1e15)); };
  while (const char *arg = in.next()) {
    a = arg;
    bool ok = true;
    if (a == "--ranks")
      ok = in.integer(o.ranks, 1, 4096);
    else if (a == "-b" || a == "--minbytes")
      ok = size(o.minBytes);
    else if (a == "-e" || a == "--maxbytes")
      ok = size(o.maxBytes);
    else if (a == "-i" || a == "--stepbytes")
      ok = size(o.stepBytes);
    else if (a == "-f" || a == "--stepfactor")
      ok = in.integer(o.factor, 1);
    else if (a == "-n" || a == "--iters")
      ok = in.integer(o.iters, 1, 1000000);
    else if (a == "-w" || a == "--warmup_iters")
      ok = in.integer(o.warmup, 0, 1000000);
    else if (a == "-c" || a == "--check")
      ok = in.integer(o.check, 0, 1000);
    else if (a == "-d" || a == "--datatype" || a == "--dtype") {
      std::string v;
      ok = in.text(v);
      o.allTypes = ok && v == "all";
      if (ok && !o.allTypes && !parseType(v, o.dtype)) {
        error = "unknown data type '" + v + "'; expected one of the list below, or all";
        ok = false;
      }
    } else if (a == "-g" || a == "--ngpus" || a == "-t" || a == "--nthreads") {
      // nccl-tests drives several GPUs from threads of one process; here
      // every rank is a process of its own.
      int n;
      ok = in.integer(n, 1, 1 << 20);
      if (ok && n != 1) {
        error = a + " " + std::to_string(n) +
                ": collc-perf runs one rank per process, on one GPU and one thread (" + a +
                " 1); --ranks R sets how many ranks";
        ok = false;
      }
    } else if (a == "-r" || a == "--root") {
      error = a + ": the root of a broadcast or reduce is compiled into the algorithm; compile "
                  "it with collc -D root=R";
      ok = false;
    } else if (a == "-G" || a == "--cudagraph") {
      int n;
      ok = in.integer(n, 0, 1 << 20);
      if (ok && n != 0) {
        error = a + " " + std::to_string(n) +
                ": collc-perf times the host build of the kernels, which has no CUDA graphs";
        ok = false;
      }
    } else if (a == "-h" || a == "--help") {
      o.help = true;
      return true;
    } else if (a == "-o" || a == "--op")
      ok = in.op(o.op);
    else if (a == "--algorithm")
      ok = in.text(o.algorithm);
    else if (a == "--id-file")
      ok = in.text(o.idFile);
    else if (a == "--child")
      ok = in.integer(o.child, 0, 4096);
    else if (a == "--report")
      ok = in.integer(o.report, 0, 1 << 30);
    else if (a == "--id-fd")
      ok = in.integer(o.idFd, 0, 1 << 30);
    else if (!a.empty() && a[0] != '-' && o.kernel.empty())
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
  else if (o.algorithm.empty())
    error = "--algorithm is required";
  else if (o.maxBytes < o.minBytes)
    error = "-e (maxbytes) is smaller than -b (minbytes)";
  else if (o.factor <= 1 && o.stepBytes <= 0)
    error = "-i (stepbytes) must be positive when -f is 1";
  else if (o.factor > 1 && o.minBytes == 0)
    error = "-b 0 never grows by -f " + std::to_string(o.factor) + ": give -b of at least 1 byte";
  else if (rowCount(o) > kMaxRows)
    error = "-b " + std::to_string(o.minBytes) + " to -e " + std::to_string(o.maxBytes) +
            (o.factor > 1 ? " by -f " + std::to_string(o.factor)
                          : " by -i " + std::to_string(o.stepBytes)) +
            " makes more than " + std::to_string(kMaxRows) + " sizes; raise -i or -f";
  return error.empty();
}

//===----------------------------------------------------------------------===//
// Sizes, counts and bandwidths, as nccl-tests computes them.
//===----------------------------------------------------------------------===//

struct Row {
  int64_t bytes;     // printed: the larger of the send and receive buffers
  int64_t count;     // NCCL's count for the collective (what collLaunch takes)
  int64_t baseBytes; // what algbw divides by the time
};

struct Setup {
  int coll = 0, ranks = 0, root = -1;
  int64_t typeSize = 0;
  double busFactor = 1;
  std::vector<Row> rows;
  bool reducing() const {
    return coll == collc::kAllReduce || coll == collc::kReduceScatter || coll == collc::kReduce;
  }
  bool rooted() const { return coll == collc::kBroadcast || coll == collc::kReduce; }
};

Row rowFor(int coll, int R, int64_t typeSize, int64_t bytes) {
  const int64_t count = bytes / typeSize;
  const bool perRank =
      coll == collc::kAllGather || coll == collc::kReduceScatter || coll == collc::kAllToAll;
  const int64_t param = perRank ? count / R : count;
  const int64_t in = inUnits(coll, R) * param, out = outUnits(coll, R) * param;
  return {std::max(in, out) * typeSize, param, param * typeSize * (perRank ? R : 1)};
}

Setup makeSetup(const Options &o, const collc::PlanDesc &plan) {
  Setup s;
  s.coll = plan.collective;
  s.ranks = o.ranks;
  s.typeSize = int64_t(collTypeSize(o.dtype));
  s.root = s.rooted() ? plan.root : -1;
  const double R = o.ranks;
  switch (s.coll) {
  case collc::kAllReduce:
    s.busFactor = 2 * (R - 1) / R;
    break;
  case collc::kAllGather:
  case collc::kReduceScatter:
  case collc::kAllToAll:
    s.busFactor = (R - 1) / R;
    break;
  default:
    s.busFactor = 1;
    break;
  }
  for (int64_t size = o.minBytes; size <= o.maxBytes; size = nextSize(o, size))
    s.rows.push_back(rowFor(s.coll, o.ranks, s.typeSize, size));
  return s;
}

//===----------------------------------------------------------------------===//
// What ranks report, and the table rank 0 (or the launcher) prints.
//===----------------------------------------------------------------------===//

enum Kind : int32_t { kHello = 1, kResult = 2, kError = 3 };

// Small enough that a write to a pipe is atomic.
struct Record {
  uint64_t nonce; // the run this belongs to (files of an mpirun run)
  int32_t kind, rank;
  int32_t row, inplace;
  int32_t pid, pad;
  double seconds; // average of the timed launches
  int64_t wrong;
  char text[208]; // hello: the host; result: the first mismatch; error: why
};
static_assert(sizeof(Record) <= 512, "records must stay small");

class Table {
public:
  Table(const Options &o, const collc::AlgorithmDesc *alg, const Setup &s, const char *mode)
      : o(o), alg(alg), s(s), mode(mode), got(s.rows.size()), hellos(s.ranks) {}

  /// Takes one rank's record; prints whatever became complete.
  void add(const Record &r) {
    if (r.rank < 0 || r.rank >= s.ranks)
      return;
    if (r.kind == kError) {
      if (error.empty())
        error = std::string(r.text);
      return;
    }
    if (r.kind == kHello) {
      hellos[r.rank] = r;
      if (++numHellos == s.ranks)
        header();
      return;
    }
    if (r.kind != kResult || r.row < 0 || size_t(r.row) >= got.size() || r.inplace < 0 ||
        r.inplace > 1)
      return;
    Agg &a = got[r.row][r.inplace];
    ++a.ranks;
    a.seconds = std::max(a.seconds, r.seconds);
    a.wrong += r.wrong;
    if (r.wrong && r.text[0] && a.first.empty())
      a.first = r.text;
    while (printed < got.size() && got[printed][0].ranks == s.ranks &&
           got[printed][1].ranks == s.ranks)
      row(printed++);
  }

  bool allHellos() const { return numHellos == s.ranks; }
  bool rowDone(int i) const { return printed > size_t(i); }
  bool done() const { return printed == got.size(); }
  bool failed() const { return !error.empty(); }
  const std::string &why() const { return error; }

  /// nccl-tests' closing lines; the exit status.
  int finish() {
    printf("# Out of bounds values : %lld %s\n", (long long)wrongTotal,
           wrongTotal ? "FAILED" : "OK");
    printf("# Avg bus bandwidth    : %g \n", bwCount ? bwSum / bwCount : 0.0);
    printf("#\n");
    fflush(stdout);
    return wrongTotal ? 1 : 0;
  }

private:
  struct Agg {
    int ranks = 0;
    double seconds = 0;
    int64_t wrong = 0;
    std::string first;
  };

  void header() {
    printf("# collc-perf: algorithm %s (%s), %s on %d ranks, %s, host emulation\n", alg->name,
           alg->source ? alg->source : "?", collNames[s.coll], s.ranks, mode);
    printf("# plans:");
    for (int p = 0; p < alg->numPlans; ++p)
      printf(" %s [%lld, %lld)", alg->plans[p].name, (long long)alg->plans[p].minBytes,
             (long long)alg->plans[p].maxBytes);
    printf(" bytes per rank\n");
    if (const char *t = getenv("COLL_TRANSPORT"))
      printf("# COLL_TRANSPORT=%s\n", t);
    if (o.factor > 1)
      printf("# nRanks %d minBytes %lld maxBytes %lld step: %lld(factor) warmup iters: %d "
             "iters: %d validation: %d\n",
             s.ranks, (long long)o.minBytes, (long long)o.maxBytes, (long long)o.factor, o.warmup,
             o.iters, o.check);
    else
      printf("# nRanks %d minBytes %lld maxBytes %lld step: %lld(bytes) warmup iters: %d "
             "iters: %d validation: %d\n",
             s.ranks, (long long)o.minBytes, (long long)o.maxBytes, (long long)o.stepBytes,
             o.warmup, o.iters, o.check);
    printf("#\n# Using ranks\n");
    for (const Record &h : hellos)
      printf("#  Rank %2d Pid %6d on %10s\n", h.rank, h.pid, h.text);
    printf("#\n");
    // The columns of a row: 52 characters, then two groups of 32.
    std::string over(116, ' ');
    over[0] = '#';
    over.replace(52 + 10, 12, "out-of-place");
    over.replace(84 + 12, 8, "in-place");
    printf("%s\n", over.c_str());
    printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size", "count",
           "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
           "#wrong");
    printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "(B)",
           "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
           "");
    fflush(stdout);
  }

  void row(size_t i) {
    const Row &r = s.rows[i];
    printf("%12lld  %12lld  %8s  %6s  %6d", (long long)r.bytes, (long long)r.count,
           typeNames[o.dtype], s.reducing() ? opNames[o.op] : "none", s.root);
    for (int inplace = 0; inplace < 2; ++inplace) {
      const Agg &a = got[i][inplace];
      double us = a.seconds * 1e6;
      double algbw = a.seconds > 0 ? double(r.baseBytes) / 1e9 / a.seconds : 0;
      double busbw = algbw * s.busFactor;
      char time[32], wrong[32];
      snprintf(time, sizeof time, us >= 10000 ? "%7.0f" : us >= 100 ? "%7.1f" : "%7.2f", us);
      if (o.check)
        snprintf(wrong, sizeof wrong, "%lld", (long long)a.wrong);
      else
        snprintf(wrong, sizeof wrong, "N/A");
      printf("  %7s  %6.2f  %6.2f  %5s", time, algbw, busbw, wrong);
      bwSum += busbw;
      ++bwCount;
      wrongTotal += a.wrong;
      if (a.wrong)
        fprintf(stderr, "collc-perf: %lld bytes %s: %lld wrong, first: %s\n", (long long)r.bytes,
                inplace ? "in place" : "out of place", (long long)a.wrong, a.first.c_str());
    }
    printf("\n");
    fflush(stdout);
  }

  const Options &o;
  const collc::AlgorithmDesc *alg;
  const Setup &s;
  const char *mode;
  std::vector<std::array<Agg, 2>> got;
  std::vector<Record> hellos;
  int numHellos = 0;
  size_t printed = 0;
  double bwSum = 0;
  int bwCount = 0;
  int64_t wrongTotal = 0;
  std::string error;
};

//===----------------------------------------------------------------------===//
// Where a rank's records go.
//===----------------------------------------------------------------------===//

class Sink {
public:
  virtual ~Sink() = default;
  virtual void put(const Record &r) = 0;
};

/// A pipe or a file: one write per record.
class FdSink : public Sink {
public:
  explicit FdSink(int fd) : fd(fd) {}
  void put(const Record &r) override {
    if (write(fd, &r, sizeof r) != ssize_t(sizeof r))
      perror("collc-perf: report");
  }

private:
  int fd;
};

/// Rank 0 under mpirun: its records go straight into the table, the others'
/// come from their files next to the id file.
class CollectingSink : public Sink {
public:
  CollectingSink(Table &table, const std::string &idFile, int ranks, uint64_t nonce)
      : table(table), idFile(idFile), nonce(nonce), fds(ranks, -1), next(ranks, 0) {}
  ~CollectingSink() override {
    for (int fd : fds)
      if (fd >= 0)
        close(fd);
  }

  void put(const Record &r) override {
    table.add(r);
    if (r.kind == kHello)
      pump([&] { return table.allHellos(); });
    else if (r.kind == kResult && r.inplace == 1)
      pump([&] { return table.rowDone(r.row); });
  }

private:
  template <typename F> void pump(F ready) {
    double patience = 120;
    if (const char *t = getenv("COLL_TIMEOUT"))
      patience = std::max(patience, 2 * strtod(t, nullptr));
    auto last = std::chrono::steady_clock::now();
    while (!ready()) {
      bool progress = false;
      for (size_t p = 1; p < fds.size(); ++p)
        progress |= drain(int(p));
      if (table.failed()) {
        fprintf(stderr, "collc-perf: %s\n", table.why().c_str());
        fflush(stdout);
        _exit(1);
      }
      auto now = std::chrono::steady_clock::now();
      if (progress)
        last = now;
      else if (std::chrono::duration<double>(now - last).count() > patience) {
        fprintf(stderr, "collc-perf: no word from the other ranks in %.0f s (see %s.rank*)\n",
                patience, idFile.c_str());
        _exit(1);
      }
      if (!progress)
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
  }

  /// Reads what rank p has appended; false if nothing new.
  bool drain(int p) {
    if (fds[p] < 0) {
      fds[p] = open((idFile + ".rank" + std::to_string(p)).c_str(), O_RDONLY | O_CLOEXEC);
      if (fds[p] < 0)
        return false;
    }
    bool any = false;
    Record r;
    while (pread(fds[p], &r, sizeof r, off_t(next[p] * sizeof r)) == ssize_t(sizeof r)) {
      if (r.nonce != nonce) { // a file of an earlier run, not yet replaced
        close(fds[p]);
        fds[p] = -1;
        next[p] = 0;
        return any;
      }
      ++next[p];
      any = true;
      table.add(r);
    }
    return any;
  }

  Table &table;
  std::string idFile;
  uint64_t nonce;
  std::vector<int> fds;
  std::vector<int64_t> next;
};

//===----------------------------------------------------------------------===//
// One rank.
//===----------------------------------------------------------------------===//

struct Rank {
  const Options &o;
  const collc::AlgorithmDesc *alg;
  const Setup &s;
  collComm_t comm;
  int rank;
  uint64_t nonce;
  Sink &sink;

  Record record(Kind kind) const {
    Record r{};
    r.nonce = nonce;
    r.kind = kind;
    r.rank = rank;
    r.pid = int32_t(getpid());
    return r;
  }

  bool fail(collResult_t res, const char *what) {
    Record r = record(kError);
    snprintf(r.text, sizeof r.text, "rank %d: %s: %s: %s", rank, what, collGetErrorString(res),
             collGetLastError(comm));
    sink.put(r);
    return false;
  }

  template <typename T> bool run() {
    const int R = s.ranks, coll = s.coll;
    // Buffers for the largest size, as nccl-tests allocates them; the in-place
    // runs use the receive buffer, which holds the larger of the two sides.
    int64_t maxE = 0;
    for (const Row &r : s.rows)
      maxE = std::max(maxE, r.count);
    const int64_t maxIn = inUnits(coll, R) * maxE, maxOut = outUnits(coll, R) * maxE;
    std::vector<T> sendbuf(std::max<int64_t>(maxIn, 1));
    std::vector<T> recvbuf(std::max<int64_t>(std::max(maxIn, maxOut), 1));
    fillInput(sendbuf.data(), rank, maxIn, o.op);
    fillInput(recvbuf.data(), rank, maxIn, o.op);

    struct Place {
      T *send, *recv, *poison;
      int64_t poisonN;
    };
    auto place = [&](int64_t E, bool inplace) {
      const int64_t inN = inUnits(coll, R) * E, outN = outUnits(coll, R) * E;
      if (!inplace)
        return Place{sendbuf.data(), recvbuf.data(), recvbuf.data(), outN};
      // NCCL's in-place offsets: allgather's input is this rank's block of
      // the output, reducescatter's output this rank's block of the input.
      T *base = recvbuf.data();
      return Place{coll == collc::kAllGather ? base + rank * E : base,
                   coll == collc::kReduceScatter ? base + rank * E : base, base,
                   std::max(inN, outN)};
    };
    auto launch = [&](const Place &p, int64_t E) {
      return collLaunch(comm, alg, p.send, p.recv, size_t(E), o.dtype, o.op, nullptr);
    };

    // Warm-up at the largest, then at the smallest size.
    for (int64_t E : {maxE, s.rows.front().count})
      for (int w = 0; w < o.warmup; ++w)
        if (collResult_t res = launch(place(E, false), E))
          return fail(res, "warm-up");

    std::vector<T> want;
    std::vector<char> checked;
    for (size_t i = 0; i < s.rows.size(); ++i) {
      const int64_t E = s.rows[i].count, inN = inUnits(coll, R) * E;
      if (o.check)
        want = reference<T>(coll, R, s.root < 0 ? 0 : s.root, rank, E, o.op, checked);
      for (int inplace = 0; inplace < 2; ++inplace) {
        Place p = place(E, inplace);
        auto init = [&] {
          memset(static_cast<void *>(p.poison), 0xA5, size_t(p.poisonN) * sizeof(T));
          fillInput(p.send, rank, inN, o.op);
        };
        if (o.check)
          init();
        // One launch to line the ranks up, then the timed ones.
        if (collResult_t res = launch(p, E))
          return fail(res, "launch");
        auto start = std::chrono::steady_clock::now();
        for (int it = 0; it < o.iters; ++it)
          if (collResult_t res = launch(p, E))
            return fail(res, "launch");
        double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
            o.iters;
        Record r = record(kResult);
        r.row = int32_t(i);
        r.inplace = inplace;
        r.seconds = seconds;
        // Checked after filling the inputs again, as nccl-tests does.
        for (int c = 0; c < o.check; ++c) {
          init();
          if (collResult_t res = launch(p, E))
            return fail(res, "checked launch");
          std::string first;
          int64_t wrong = compare(p.recv, want, checked, first);
          if (wrong && !r.wrong)
            snprintf(r.text, sizeof r.text, "rank %d, %s", rank, first.c_str());
          r.wrong += wrong;
        }
        sink.put(r);
      }
    }
    return true;
  }
};

std::string hostName() {
  char host[64] = "?";
  gethostname(host, sizeof host - 1);
  host[sizeof host - 1] = 0;
  return host;
}

/// Joins the communicator and runs every size; false (after reporting) on failure.
bool runRank(const Options &o, const collc::AlgorithmDesc *alg, const Setup &s,
             const collUniqueId &id, int rank, uint64_t nonce, Sink &sink) {
  collComm_t comm = nullptr;
  Rank me{o, alg, s, nullptr, rank, nonce, sink};
  if (collResult_t res = collCommInitRank(&comm, s.ranks, id, rank)) {
    Record r = me.record(kError);
    snprintf(r.text, sizeof r.text, "rank %d: collCommInitRank: %s: %s", rank,
             collGetErrorString(res), collGetLastError(nullptr));
    sink.put(r);
    return false;
  }
  me.comm = comm;
  Record hello = me.record(kHello);
  snprintf(hello.text, sizeof hello.text, "%s", hostName().c_str());
  sink.put(hello);
  bool ok = false;
  dispatchType(o.dtype, [&](auto tag) { ok = me.run<decltype(tag)>(); });
  collCommDestroy(comm);
  return ok;
}

/// Checks the options against the algorithm; prints why not.
bool compatible(const Options &o, const collc::AlgorithmDesc *alg) {
  if (alg->plans[0].ranks != o.ranks) {
    fprintf(stderr, "collc-perf: algorithm %s is compiled for %d ranks, not %d\n", alg->name,
            alg->plans[0].ranks, o.ranks);
    return false;
  }
  if (!dispatchType(o.dtype, [](auto) {})) {
    fprintf(stderr, "collc-perf: %s needs a GPU; the host emulation has no fp8\n",
            typeNames[o.dtype]);
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Self-launched: this process starts the ranks and prints their results.
//===----------------------------------------------------------------------===//

int child(const Options &o) {
  FdSink sink(o.report);
  std::string error;
  collUniqueId id;
  const collc::AlgorithmDesc *alg = loadAlgorithm(o.kernel, o.algorithm, error);
  Record r{};
  r.kind = kError;
  r.rank = o.child;
  if (!alg)
    snprintf(r.text, sizeof r.text, "rank %d: %s", o.child, error.c_str());
  else if (!readIdFd(o.idFd, id, error))
    snprintf(r.text, sizeof r.text, "rank %d: %s", o.child, error.c_str());
  else {
    Setup s = makeSetup(o, alg->plans[0]);
    return runRank(o, alg, s, id, o.child, 0, sink) ? 0 : 1;
  }
  sink.put(r);
  return 1;
}

/// Every rank holds its send and receive buffers at the largest size, and
/// with validation the expected result too, and the runtime its FIFOs;
/// refuses (printing why) what would not fit, before any rank starts.
bool fitsInMemory(const Options &o, const Setup &s, const collc::AlgorithmDesc &alg) {
  const double largest = s.rows.empty() ? 0 : double(s.rows.back().bytes);
  const int buffers = o.check ? 3 : 2;
  const double fifos = collc_launch::fifoMemory(alg);
  const double need = largest * buffers * o.ranks + fifos;
  const double available = collc_launch::availableMemory();
  if (need <= available)
    return true;
  fprintf(stderr,
          "collc-perf: -e %lld needs about %s (%d ranks x %d buffers of %s, %s of FIFOs), "
          "more than the %s available\n",
          (long long)o.maxBytes, collc_launch::showBytes(need).c_str(), o.ranks, buffers,
          collc_launch::showBytes(largest).c_str(), collc_launch::showBytes(fifos).c_str(),
          collc_launch::showBytes(available).c_str());
  return false;
}

int launcher(const Options &o, int argc, char **argv) {
  std::string error;
  const collc::AlgorithmDesc *alg = loadAlgorithm(o.kernel, o.algorithm, error);
  if (!alg)
    return usage(error.c_str());
  if (o.ranks < 1)
    return usage("--ranks is required");
  if (!compatible(o, alg))
    return 2;
  Setup s = makeSetup(o, alg->plans[0]);
  if (!fitsInMemory(o, s, *alg))
    return 2;
  int from = -1; // the ranks' reports
  std::vector<pid_t> pids = spawnRanks(argc, argv, o.ranks, from, error);
  if (pids.empty()) {
    fprintf(stderr, "collc-perf: %s\n", error.c_str());
    return 1;
  }

  Table table(o, alg, s, "self-launched");
  std::string problem;
  {
    RankWatch watch(std::move(pids), from, sizeof(Record));
    Record rec;
    while (watch.next(&rec)) {
      table.add(rec);
      if (table.failed())
        break; // the others may wait for the failed rank: stop them all
    }
    watch.stopAll();
    problem = watch.problem();
  }
  if (!problem.empty()) {
    fflush(stdout);
    fprintf(stderr, "collc-perf: FAIL %s\n", problem.c_str());
    return 1;
  }
  if (table.failed()) {
    fflush(stdout);
    fprintf(stderr, "collc-perf: FAIL %s\n", table.why().c_str());
    return 1;
  }
  if (!table.done()) {
    fflush(stdout);
    fprintf(stderr, "collc-perf: FAIL a rank ended without reporting every size\n");
    return 1;
  }
  return table.finish();
}

//===----------------------------------------------------------------------===//
// Under mpirun: this process is one rank.
//===----------------------------------------------------------------------===//

bool envInt(const char *name, int &out) {
  const char *v = getenv(name);
  if (!v || !*v)
    return false;
  char *end;
  long n = strtol(v, &end, 10);
  if (*end || n < 0)
    return false;
  out = int(n);
  return true;
}

/// The launcher's rank and size, if a launcher started this process.
bool mpiRank(int &rank, int &size) {
  if (envInt("OMPI_COMM_WORLD_RANK", rank) && envInt("OMPI_COMM_WORLD_SIZE", size))
    return true;
  if (envInt("PMI_RANK", rank) && envInt("PMI_SIZE", size))
    return true;
  return false;
}

/// Something every rank of this job shares and another job does not, to
/// tell this run's id file from a stale one.
std::string jobToken() {
  for (const char *name :
       {"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "PMI_JOBID", "SLURM_JOB_ID"})
    if (const char *v = getenv(name); v && *v)
      return std::string(name) + "=" + v;
  return "ppid=" + std::to_string(getppid()); // one node: the same launcher daemon
}

bool writeIdFile(const std::string &path, const std::string &contents) {
  // The id holds the communicator's secret: only this user may read it,
  // and a file someone made beforehand must never receive it. mkostemp
  // makes a new file (O_CREAT | O_EXCL) of mode 0600 under a random name.
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = mkostemp(tmp.data(), O_CLOEXEC);
  FILE *f = fd < 0 ? nullptr : fdopen(fd, "w");
  if (!f) {
    if (fd >= 0)
      close(fd);
    return false;
  }
  bool ok = fputs(contents.c_str(), f) >= 0;
  ok &= fflush(f) == 0 && fsync(fileno(f)) == 0;
  ok &= fclose(f) == 0;
  if (ok && rename(tmp.c_str(), path.c_str()) == 0)
    return true;
  unlink(tmp.c_str());
  return false;
}

/// Polls until rank 0 of this job has written the id file.
bool readIdFile(const std::string &path, const std::string &token, collUniqueId &id,
                uint64_t &nonce, std::string &error) {
  double patience = 120;
  if (const char *t = getenv("COLL_TIMEOUT"))
    patience = std::max(patience, strtod(t, nullptr));
  auto start = std::chrono::steady_clock::now();
  for (;;) {
    if (FILE *f = fopen(path.c_str(), "r")) {
      char tok[256], nonceHex[32], idHex[2 * sizeof(collUniqueId) + 2];
      int n = fscanf(f, "collc-perf %255s %31s %257s", tok, nonceHex, idHex);
      fclose(f);
      if (n == 3 && token == tok && unhex(idHex, &id, sizeof id)) {
        nonce = strtoull(nonceHex, nullptr, 16);
        return true;
      }
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >
        patience) {
      error = "no id from rank 0 in " + path + " after " + std::to_string(int(patience)) +
              " s (job " + token + ")";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

int mpiMain(Options o, int rank, int size) {
  if (o.idFile.empty())
    return usage("started by mpirun: --id-file PATH (seen by every rank) is required");
  if (o.ranks && o.ranks != size) {
    fprintf(stderr, "collc-perf: --ranks %d, but mpirun started %d ranks\n", o.ranks, size);
    return 2;
  }
  o.ranks = size;
  std::string error;
  const collc::AlgorithmDesc *alg = loadAlgorithm(o.kernel, o.algorithm, error);
  if (!alg) {
    fprintf(stderr, "collc-perf: rank %d: %s\n", rank, error.c_str());
    return 2;
  }
  if (!compatible(o, alg))
    return 2;
  Setup s = makeSetup(o, alg->plans[0]);
  const std::string token = jobToken();
  collUniqueId id;
  uint64_t nonce = 0;
  if (rank == 0) {
    if (collResult_t r = collGetUniqueId(&id)) {
      fprintf(stderr, "collc-perf: %s: %s\n", collGetErrorString(r), collGetLastError(nullptr));
      return 1;
    }
    nonce = std::random_device{}();
    nonce = nonce << 32 ^ std::random_device{}() ^ uint64_t(getpid());
    char nonceHex[32];
    snprintf(nonceHex, sizeof nonceHex, "%016llx", (unsigned long long)nonce);
    if (!writeIdFile(o.idFile,
                     "collc-perf " + token + " " + nonceHex + " " + hex(&id, sizeof id) + "\n")) {
      fprintf(stderr, "collc-perf: cannot write %s: %s\n", o.idFile.c_str(), strerror(errno));
      return 1;
    }
    Table table(o, alg, s, "under mpirun");
    CollectingSink sink(table, o.idFile, size, nonce);
    bool ok = runRank(o, alg, s, id, 0, nonce, sink);
    if (!ok) {
      fflush(stdout);
      fprintf(stderr, "collc-perf: FAIL %s\n", table.why().c_str());
    }
    // Everyone has read the id and reported: tidy up.
    unlink(o.idFile.c_str());
    for (int r = 1; r < size; ++r)
      unlink((o.idFile + ".rank" + std::to_string(r)).c_str());
    return ok ? table.finish() : 1;
  }
  if (!readIdFile(o.idFile, token, id, nonce, error)) {
    fprintf(stderr, "collc-perf: rank %d: %s\n", rank, error.c_str());
    return 1;
  }
  std::string mine = o.idFile + ".rank" + std::to_string(rank);
  // Never through a link that someone else left under the name.
  int fd =
      open(mine.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    fprintf(stderr, "collc-perf: rank %d: cannot write %s: %s\n", rank, mine.c_str(),
            strerror(errno));
    return 1;
  }
  FdSink sink(fd);
  bool ok = runRank(o, alg, s, id, rank, nonce, sink);
  close(fd);
  return ok ? 0 : 1;
}

} // namespace

/// -d all: one table per type the host emulation has, each launch's ranks
/// told their type by a -d after the others, which the last -d overrides.
int everyType(Options o, int argc, char **argv) {
  int status = 0;
  for (int t = 0; t < collNumTypes; ++t) {
    if (!dispatchType(collDataType_t(t), [](auto) {}))
      continue; // fp8 needs a GPU
    o.dtype = collDataType_t(t);
    o.allTypes = false;
    std::vector<char *> args(argv, argv + argc);
    std::string flag = "-d", name = typeNames[t];
    args.push_back(flag.data());
    args.push_back(name.data());
    args.push_back(nullptr);
    if (int s = launcher(o, argc + 2, args.data()))
      status = status ? status : s;
    fflush(stdout);
  }
  return status;
}

int main(int argc, char **argv) {
  Options o;
  std::string error;
  if (!parse(argc, argv, o, error))
    return usage(error.c_str());
  if (o.help) {
    fputs(kUsage, stdout);
    return 0;
  }
  if (o.child >= 0)
    return child(o);
  int rank, size;
  if (mpiRank(rank, size) && (size > 1 || !o.idFile.empty())) {
    if (o.allTypes)
      return usage("-d all runs a launch per type, which mpirun cannot repeat: give one type");
    return mpiMain(o, rank, size);
  }
  if (o.allTypes)
    return everyType(o, argc, argv);
  return launcher(o, argc, argv);
}
