//===- harness.cu - Every rank of a compiled algorithm on one GPU ---------===//
//
// All ranks live in one process on one GPU: peer buffers and FIFOs are plain
// device allocations, and one launch runs every threadblock of every rank,
// all co-resident, so the plan's waits between ranks resolve on the device.
// Every launch gets fresh inputs (Expected.h's values, at indices shifted
// per launch), starts from outputs, scratch and FIFO slots poisoned with
// values no right result holds, and is checked bit-exactly on the device
// before the next. One table row per plan and size: result, time, bus
// bandwidth (nccl-tests' definitions) and the GPU's own device-to-device
// cudaMemcpy bandwidth at that size, the yardstick where every link is HBM.
// Built together with a generated kernel file; COLLC_ALGORITHM names the
// algorithm's descriptor (collc_algorithm_<name>). --self-test checks the
// logic that needs no GPU, without one.
//
//===----------------------------------------------------------------------===//
#include "collc/abi.h"
#include "collc/kernel.h"
#include "collrt.h"
#include "src/Replicas.h"
#include "support/FifoLayout.h"

#include "ranks/Expected.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

extern "C" const collc::AlgorithmDesc COLLC_ALGORITHM;

using namespace collc_check;

namespace {

#define CHECK_CUDA(call)                                                                           \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));       \
      exit(2);                                                                                     \
    }                                                                                              \
  } while (0)

//===----------------------------------------------------------------------===//
// What needs no GPU (--self-test checks it)
//===----------------------------------------------------------------------===//

// NCCL's step sizes, as the runtime's defaults.
int64_t slotBytes(int32_t p) {
  return p == collc::kLL ? 65536 : p == collc::kLL128 ? 614400 : 524288;
}
const char *protocolName(int32_t p) {
  return p == collc::kLL ? "LL" : p == collc::kLL128 ? "LL128" : "Simple";
}

const char *const typeNames[] = {"int8",   "uint8", "int32", "uint32", "int64",
                                 "uint64", "half",  "float", "double", "bfloat16"};
const char *const opNames[] = {"sum", "prod", "max", "min", "avg"};

/// nccl-tests' bus bandwidth: busbw = algbw * factor, algbw being the size
/// of a rank's largest buffer over the time.
double busFactor(int32_t coll, int ranks) {
  switch (coll) {
  case collc::kAllReduce:
    return 2.0 * (ranks - 1) / ranks;
  case collc::kReduceScatter:
  case collc::kAllGather:
  case collc::kAllToAll:
    return double(ranks - 1) / ranks;
  default:
    return 1; // broadcast, reduce
  }
}

/// A sweep's sizes: min, min * step, ... while below max, then max.
std::vector<int64_t> sweepSizes(int64_t min, int64_t max, int64_t step) {
  std::vector<int64_t> sizes;
  for (int64_t s = min; s < max; s *= step)
    sizes.push_back(s);
  sizes.push_back(max);
  return sizes;
}

/// Launches at one size, the first untimed: many where a launch is short,
/// three from 256 MiB up, so that one plan's sweep to 1 GiB takes seconds.
int launchesFor(int64_t bytes) {
  return int(std::clamp<int64_t>((int64_t(512) << 20) / std::max<int64_t>(bytes, 1), 3, 20));
}

/// Element i of a buffer holds Expected.h's value at global index
/// (i + shift) mod kPeriod, so that references of kPeriod elements cover
/// every size, and a new shift gives every launch new inputs. Prime, so no
/// power-of-two distance (a unit, a chunk, a slice) is a multiple of it:
/// data in the wrong place still differs.
constexpr int64_t kPeriod = 1048573; // 2^20 - 3

/// Where element i = u * unit + j of a buffer finds its value: in table
/// `table` (or, when negative, table u) at index (off + j + shift) mod
/// kPeriod. Tables 0 .. R-1 hold each rank's inputs, table R their reduction.
struct Layout {
  int64_t unit, off, shift;
  int32_t table;
  __host__ __device__ int64_t at(int64_t i) const {
    const int64_t u = i < unit ? 0 : i / unit, j = i - u * unit; // most have one unit
    return (table >= 0 ? table : u) * kPeriod + (off + j + shift) % kPeriod;
  }
};

Layout inputLayout(int rank, int64_t n, int64_t shift) {
  return {std::max<int64_t>(n, 1), 0, shift, rank};
}

/// A rank's output as Expected.h's reference() defines it.
Layout outputLayout(int32_t coll, int ranks, int root, int rank, int64_t E, int64_t shift) {
  E = std::max<int64_t>(E, 1);
  switch (coll) {
  case collc::kReduceScatter:
    return {E, rank * E, shift, ranks};
  case collc::kAllGather:
    return {E, 0, shift, -1};
  case collc::kAllToAll:
    return {E, rank * E, shift, -1};
  case collc::kBroadcast:
    return {E, 0, shift, root};
  default:
    return {E, 0, shift, ranks}; // allreduce, reduce
  }
}
bool definesOutput(int32_t coll, int root, int rank) {
  return coll != collc::kReduce || rank == root;
}

/// Tables 0 .. R-1: every rank's inputs; table R: their reduction; the
/// first `filled` indices of each (all unless a test asks for fewer). The
/// kernels compute avg as a sum (the runtime divides afterwards, on the
/// host) and avg's inputs are sum's (--self-test checks), so avg is checked
/// against the sum: the undivided bits say more.
template <typename T> std::vector<T> makeTables(int R, collRedOp_t op, int64_t filled = kPeriod) {
  std::vector<T> t(size_t(R + 1) * kPeriod);
  const collRedOp_t reduceOp = op == collAvg ? collSum : op;
  for (int64_t j = 0; j < filled; ++j) {
    for (int r = 0; r < R; ++r)
      t[r * kPeriod + j] = input<T>(r, j, op);
    t[R * kPeriod + j] = reduced<T>(R, j, reduceOp);
  }
  return t;
}

// Poison, written before every launch. Outputs: for floating types 0xFF
// bytes, a NaN in every format, which no reference holds and which sums and
// products that read it keep; for integers, where every pattern is some
// value, the complement of the right value, element by element. Scratch and
// FIFO slots: 0xFF bytes, NaN again for floating types; for integers
// (inputs are hashes) reading them instead of data changes a result unless
// that data was all ones, a chance of 2^-bits per element. In LL and LL128
// slots all ones is no step's flag: flags count steps from 1, and LL's
// all-ones flag is step 2^32 - 2's, far beyond a run.
constexpr int kPoisonByte = 0xFF;
template <typename T> constexpr bool poisonByComplement = std::is_integral_v<T>;

template <typename T> bool allOnes(T v) {
  unsigned char b[sizeof(T)];
  memcpy(b, &v, sizeof b);
  return std::all_of(b, b + sizeof b, [](unsigned char c) { return c == kPoisonByte; });
}
template <typename T> bool sameBits(T x, T y) { return !memcmp(&x, &y, sizeof(T)); }

/// What a wrong value suggests, beyond being wrong.
template <typename T> const char *hint(T got, T want) {
  if constexpr (poisonByComplement<T>) {
    if (sameBits(got, T(~want)))
      return " (the poison: never written)";
  } else {
    if (allOnes(got))
      return " (the poison: never written)";
    if (std::isnan(toDouble(got)))
      return " (NaN: poison from scratch or a FIFO slot read)";
  }
  return "";
}

std::string showBytes(int64_t b) {
  const char *units = "KMG";
  int k = 0;
  while (k < 3 && b >= 1024 && b % 1024 == 0 && ((b & (b - 1)) == 0)) {
    b /= 1024;
    ++k;
  }
  return std::to_string(b) + (k ? std::string(1, units[k - 1]) : "");
}

/// One row of the table; test/gpu/run.sh prints the header and its own
/// rows with the same widths, and reads column 2.
void printRow(const std::string &plan, const char *result, const char *proto,
              const std::string &what, const std::string &bytes, const std::string &seconds,
              const std::string &algbw, const std::string &busbw, const std::string &copy,
              const std::string &ratio, std::string note) {
  std::replace(note.begin(), note.end(), '\n', ' '); // one line a row
  printf("%-46s %-6s %-6s %-14s %7s %10s %8s %8s %8s %6s  %s\n", plan.c_str(), result, proto,
         what.c_str(), bytes.c_str(), seconds.c_str(), algbw.c_str(), busbw.c_str(), copy.c_str(),
         ratio.c_str(), note.c_str());
}
std::string fixed(double v, int digits) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

int selfTest() {
  int bad = 0;
  auto expect = [&](bool ok, const std::string &what) {
    if (!ok) {
      fprintf(stderr, "self-test: %s\n", what.c_str());
      ++bad;
    }
  };
  expect(busFactor(collc::kAllReduce, 8) == 1.75, "allreduce busbw factor");
  for (int32_t c : {collc::kAllGather, collc::kReduceScatter, collc::kAllToAll})
    expect(busFactor(c, 8) == 0.875, "busbw factor of collective " + std::to_string(c));
  expect(busFactor(collc::kBroadcast, 8) == 1 && busFactor(collc::kReduce, 8) == 1,
         "broadcast and reduce busbw factor");
  const std::vector<int64_t> s = sweepSizes(8, int64_t(1) << 30, 4);
  expect(s.size() == 15 && s.front() == 8 && s.back() == int64_t(1) << 30 &&
             std::is_sorted(s.begin(), s.end()) &&
             std::adjacent_find(s.begin(), s.end()) == s.end(),
         "sweep 8 B .. 1 GiB by 4");
  expect(launchesFor(8) == 20 && launchesFor(int64_t(1) << 30) == 3, "launches per size");
  expect(showBytes(8) == "8" && showBytes(4 << 20) == "4M" && showBytes(4000012) == "4000012",
         "size names");

  // At a shift that wraps, each output element still comes from the input
  // elements the collective defines: the same index of the table of its
  // source rank (data movement), or of every rank and of the reduction.
  for (int32_t c = 0; c < 6; ++c) {
    const int R = 8, root = 1;
    const int64_t E = 37, shift = kPeriod - 5, inN = inUnits(c, R) * E;
    for (int r = 0; r < R; ++r) {
      const Layout lo = outputLayout(c, R, root, r, E, shift);
      int64_t wrong = 0;
      for (int64_t i = 0; i < outUnits(c, R) * E; ++i) {
        const int64_t u = i / E, j = i % E;
        const bool reduces =
            c == collc::kAllReduce || c == collc::kReduceScatter || c == collc::kReduce;
        const int64_t q = c == collc::kReduceScatter || c == collc::kAllToAll ? r * E + j : j;
        const int from = c == collc::kBroadcast ? root : u;
        if (reduces)
          for (int p = 0; p < R; ++p)
            wrong += lo.at(i) - R * kPeriod != inputLayout(p, inN, shift).at(q) - p * kPeriod;
        else
          wrong += lo.at(i) != inputLayout(from, inN, shift).at(q);
      }
      expect(!wrong,
             "shifted layout of collective " + std::to_string(c) + ", rank " + std::to_string(r));
    }
  }

  // Layouts against Expected.h's reference and inputs at shift 0, every
  // type, op but avg, collective and (for rooted ones) root.
  for (int type = 0; type < 10; ++type)
    collrt::dispatchType(collDataType_t(type), [&](auto tag) {
      using T = decltype(tag);
      for (int R : {3, 8})
        for (collRedOp_t op : {collSum, collProd, collMax, collMin}) {
          const int64_t E = 37;
          const std::vector<T> t = makeTables<T>(R, op, R * E);
          for (int32_t c = 0; c < 6; ++c) {
            const int root = c >= collc::kBroadcast ? 1 : -1;
            for (int r = 0; r < R; ++r) {
              std::vector<char> checked;
              const std::vector<T> want = reference<T>(c, R, root, r, E, op, checked);
              const Layout l = outputLayout(c, R, root, r, E, 0);
              int64_t wrong = 0;
              for (size_t i = 0; i < want.size(); ++i)
                wrong += checked[i] && !sameBits(t[l.at(i)], want[i]);
              const bool any = std::count(checked.begin(), checked.end(), 1) > 0;
              std::vector<T> in(inUnits(c, R) * E);
              fillInput(in.data(), r, int64_t(in.size()), op);
              const Layout li = inputLayout(r, int64_t(in.size()), 0);
              for (size_t i = 0; i < in.size(); ++i)
                wrong += !sameBits(t[li.at(i)], in[i]);
              expect(!wrong && any == definesOutput(c, root, r),
                     std::string(typeNames[type]) + "/" + opNames[op] + ": layout of collective " +
                         std::to_string(c) + ", rank " + std::to_string(r) + " of " +
                         std::to_string(R));
            }
          }
        }
      int64_t differ = 0;
      for (int r = 0; r < 8; ++r)
        for (int64_t j = 0; j < 4096; ++j)
          differ += !sameBits(input<T>(r, j, collAvg), input<T>(r, j, collSum));
      expect(!differ, std::string(typeNames[type]) + ": avg's inputs are not sum's");
      if constexpr (!poisonByComplement<T>) {
        T p;
        memset(&p, kPoisonByte, sizeof p);
        expect(std::isnan(toDouble(p)), std::string(typeNames[type]) + ": poison is no NaN");
      }
    });
  // No reference of the sweep's type and op holds the poison.
  const std::vector<float> t = makeTables<float>(8, collSum);
  expect(std::none_of(t.begin(), t.end(), [](float v) { return std::isnan(v); }),
         "a float reference is NaN");
  fprintf(stderr, "self-test: %s\n", bad ? "FAILED" : "passed");
  return bad ? 1 : 0;
}

//===----------------------------------------------------------------------===//
// Device side: inputs, poison and the check, as bits
//===----------------------------------------------------------------------===//

template <size_t N> struct BitsOf;
template <> struct BitsOf<1> {
  using type = uint8_t;
};
template <> struct BitsOf<2> {
  using type = uint16_t;
};
template <> struct BitsOf<4> {
  using type = uint32_t;
};
template <> struct BitsOf<8> {
  using type = uint64_t;
};
template <typename T> using Bits = typename BitsOf<sizeof(T)>::type;

/// Element i from the tables, or its complement (the integer poison).
template <typename W>
__global__ void writeFromTables(W *dst, int64_t n, Layout l, const W *tables, bool complement) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const W v = tables[l.at(i)];
    dst[i] = complement ? W(~v) : v;
  }
}

/// tally[0] counts elements that differ from the tables; tally[1] keeps
/// the least such index.
template <typename W>
__global__ void checkAgainstTables(const W *got, int64_t n, Layout l, const W *tables,
                                   unsigned long long *tally) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    if (got[i] != tables[l.at(i)]) {
      atomicAdd(&tally[0], 1ull);
      atomicMin(&tally[1], static_cast<unsigned long long>(i));
    }
}

unsigned gridFor(int64_t n) { return unsigned(std::clamp<int64_t>((n + 255) / 256, 1, 4096)); }

/// Device-to-device cudaMemcpy bandwidth at `bytes` (GB/s), measured once
/// per size in this process.
double copyBandwidth(int64_t bytes) {
  static std::map<int64_t, double> measured;
  auto found = measured.find(bytes);
  if (found != measured.end())
    return found->second;
  void *src = nullptr, *dst = nullptr;
  CHECK_CUDA(cudaMalloc(&src, bytes));
  CHECK_CUDA(cudaMalloc(&dst, bytes));
  CHECK_CUDA(cudaMemset(src, 1, bytes));
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  float best = 1e30f;
  for (int k = 0, n = launchesFor(bytes); k < n; ++k) {
    CHECK_CUDA(cudaEventRecord(start));
    CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice));
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    if (k)
      best = std::min(best, ms);
  }
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  CHECK_CUDA(cudaFree(src));
  CHECK_CUDA(cudaFree(dst));
  return measured[bytes] = double(bytes) / (best / 1e3) / 1e9;
}

//===----------------------------------------------------------------------===//
// One plan
//===----------------------------------------------------------------------===//

int64_t launchesSoFar = 0; // in this process

struct Outcome {
  enum Kind { kPass, kFail, kSkip } kind = kPass;
  double seconds = 0; // best timed launch
  std::string note;
  bool stop = false; // the FIFOs are out of step: run no more of this plan
};

/// Why `plan` cannot run in this process, or "".
std::string cannotRun(const collc::PlanDesc &plan, int threads) {
  for (int32_t i = 0; i < plan.numThreadblocks; ++i)
    if (plan.threadblocks[i].direct & collc::kTbMultimem)
      return "multimem needs multicast objects over several GPUs";
  // Every threadblock of every rank and replica must be resident at once.
  int perSm = 0, sms = 0, dev = 0;
  CHECK_CUDA(cudaGetDevice(&dev));
  CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, plan.cuda.kernel,
                                                           threads ? threads : 512, 0));
  const int64_t blocks = int64_t(plan.numThreadblocks) * collrt::maxReplicas(plan);
  if (perSm * sms < blocks)
    return std::to_string(blocks) + " threadblocks (of every replica) do not fit at once (" +
           std::to_string(perSm) + " per SM x " + std::to_string(sms) + " SMs)";
  return "";
}

/// A plan's buffers, FIFOs and counters, for counts up to `maxCount`.
template <typename T> class PlanRun {
  using W = Bits<T>;

public:
  PlanRun(const collc::PlanDesc &plan, int threads, int64_t maxCount, const std::vector<T> &host,
          const W *tables)
      : plan(plan), threads(threads), host(host), tables(tables), R(plan.ranks),
        coll(plan.collective), inU(inUnits(coll, R)), outU(outUnits(coll, R)),
        slice(collrt::sliceElements(plan, es, slotBytes)), user(R), in(R), out(R), scratch(R) {
    for (int r = 0; r < R; ++r) {
      if (plan.inplace) {
        user[r] = zeros(std::max(inU, outU) * maxCount * es);
      } else {
        in[r] = zeros(inU * maxCount * es);
        out[r] = zeros(outU * maxCount * es);
      }
      for (int32_t k = 0; k < plan.numScratch; ++k)
        // A launch with replicas may cut its loops smaller: one loop more
        // than at the plan's slice bounds it.
        scratch[r].push_back(
            zeros((loops(maxCount, slice) + 1) * plan.scratchChunks[k] * slice * es));
    }
    // FIFOs in device memory, one per receiving threadblock and replica
    // (entry x * tbs + i is replica x of i); head and tail persist across
    // launches, as the ABI has them.
    const int32_t tbs = plan.numThreadblocks;
    recv.assign(size_t(tbs) * replicas, collc::Fifo{});
    send.assign(size_t(tbs) * replicas, collc::Fifo{});
    for (size_t e = 0; e < recv.size(); ++e) {
      const collc::ThreadblockDesc &tb = plan.threadblocks[e % tbs];
      if (tb.recvPeer < 0)
        continue;
      const int64_t sb = slotBytes(tb.protocol);
      recv[e] =
          collrt::fifoAt(zeros(collrt::fifoBytes(plan.slots, sb)), plan.slots, sb, tb.protocol);
    }
    for (size_t e = 0; e < send.size(); ++e) {
      const collc::ThreadblockDesc &tb = plan.threadblocks[e % tbs];
      const size_t replica = e - e % tbs;
      for (int32_t j = 0; j < tbs && tb.sendPeer >= 0; ++j) {
        const collc::ThreadblockDesc &o = plan.threadblocks[j];
        if (o.rank == tb.sendPeer && o.recvPeer == tb.rank && o.channel == tb.channel)
          send[e] = recv[replica + j];
      }
    }
    for (int32_t i = 0; i < plan.numThreadblocks; ++i) {
      peerSteps |= (plan.threadblocks[i].direct & collc::kTbPeerSteps) != 0;
      direct |= (plan.threadblocks[i].direct & (collc::kTbDirectRecv | collc::kTbDirectSend)) != 0;
    }
    // Each threadblock's table in device memory, where its kernel reads it.
    deviceTable.assign(tbs, nullptr);
    for (int32_t i = 0; i < tbs; ++i) {
      const collc::ThreadblockDesc &tb = plan.threadblocks[i];
      if (!tb.tableLength)
        continue;
      const size_t bytes = size_t(tb.tableLength) * sizeof(int64_t);
      deviceTable[i] = reinterpret_cast<const int64_t *>(zeros(bytes));
      CHECK_CUDA(cudaMemcpy(const_cast<int64_t *>(deviceTable[i]), tb.table, bytes,
                            cudaMemcpyHostToDevice));
    }
    // Progress counters: a rank's threadblocks of one replica share one
    // array, indexed by table.
    progress = reinterpret_cast<uint64_t *>(zeros(progressBytes()));
    // Each rank's barrier words (a count, a generation, a word per rank)
    // and the table of them that every threadblock gets.
    barrier = reinterpret_cast<uint64_t *>(zeros(R * (2 + R) * sizeof(uint64_t)));
    barriers = reinterpret_cast<uint64_t **>(zeros(R * sizeof(uint64_t *)));
    std::vector<uint64_t *> each(R);
    for (int r = 0; r < R; ++r)
      each[r] = barrier + r * (2 + R);
    CHECK_CUDA(cudaMemcpy(barriers, each.data(), R * sizeof(uint64_t *), cudaMemcpyHostToDevice));
    flags = reinterpret_cast<int32_t *>(zeros(2 * sizeof(int32_t))); // abort, error
    errorText = zeros(256);
    args = reinterpret_cast<collc::Args *>(
        zeros(size_t(plan.numThreadblocks) * replicas * sizeof(collc::Args)));
    peers = reinterpret_cast<char **>(zeros(R * collc::kMaxBuffers * sizeof(char *)));
    tally = reinterpret_cast<unsigned long long *>(zeros(4 * R * sizeof(unsigned long long)));
  }
  ~PlanRun() {
    for (void *p : allocations)
      cudaFree(p);
  }
  /// Replicas and threads of the last launch, as "16 x 512".
  std::string launchShape() const {
    return std::to_string(shape.replicas) + " x " + std::to_string(blockThreads());
  }
  PlanRun(const PlanRun &) = delete;
  PlanRun &operator=(const PlanRun &) = delete;

  /// `launches` launches at count E, each with new inputs and poison and
  /// checked; the first is not timed unless it is the only one.
  Outcome run(int64_t E, int launches, collDataType_t dtype, collRedOp_t op) {
    Outcome o;
    if (plan.wholeChunks && E % plan.chunks) {
      o.kind = Outcome::kSkip;
      o.note = "count " + std::to_string(E) + " is no multiple of the plan's " +
               std::to_string(plan.chunks) + " chunks";
      return o;
    }
    place(E, dtype, op);
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    void *params[] = {&args};
    float best = 1e30f;
    for (int k = 0; k < launches && o.kind == Outcome::kPass; ++k) {
      // Prime steps spread the shifts over the period; the process's first
      // launch has collc-launch's inputs.
      const int64_t shift = launchesSoFar++ * 104729 % kPeriod;
      poisonAndFill(E, shift);
      CHECK_CUDA(cudaMemset(progress, 0, progressBytes()));
      CHECK_CUDA(cudaMemset(flags, 0, 2 * sizeof(int32_t)));
      CHECK_CUDA(cudaMemset(errorText, 0, 256));
      CHECK_CUDA(cudaEventRecord(start));
      // Every rank's threadblocks wait for each other: a cooperative launch
      // fails, instead of hanging, where they cannot all be resident.
      CHECK_CUDA(cudaLaunchCooperativeKernel(collc::cudaEntryFor(plan, dtype, op).kernel,
                                             dim3(plan.numThreadblocks * shape.replicas),
                                             dim3(blockThreads()), params, 0, nullptr));
      CHECK_CUDA(cudaEventRecord(stop));
      CHECK_CUDA(cudaEventSynchronize(stop));
      CHECK_CUDA(cudaGetLastError());
      float ms = 0;
      CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
      int32_t hostFlags[2];
      char text[256];
      CHECK_CUDA(cudaMemcpy(hostFlags, flags, sizeof hostFlags, cudaMemcpyDeviceToHost));
      CHECK_CUDA(cudaMemcpy(text, errorText, sizeof text, cudaMemcpyDeviceToHost));
      text[255] = 0;
      if (hostFlags[1]) {
        o.kind = Outcome::kFail;
        o.note = "launch " + std::to_string(k + 1) + ": " + text;
        o.stop = true;
      } else if (std::string wrong = check(E, shift); !wrong.empty()) {
        o.kind = Outcome::kFail;
        o.note = "launch " + std::to_string(k + 1) + ": " + wrong;
      } else if (k || launches == 1) {
        best = std::min(best, ms);
      }
    }
    CHECK_CUDA(cudaEventDestroy(start));
    CHECK_CUDA(cudaEventDestroy(stop));
    o.seconds = best / 1e3;
    return o;
  }

private:
  char *zeros(int64_t bytes) {
    void *p = nullptr;
    CHECK_CUDA(cudaMalloc(&p, bytes ? bytes : 16));
    CHECK_CUDA(cudaMemset(p, 0, bytes ? bytes : 16));
    allocations.push_back(p);
    return static_cast<char *>(p);
  }
  int64_t loops(int64_t E, int64_t s) const {
    return E ? (E + plan.chunks * s - 1) / (plan.chunks * s) : 0;
  }

  /// Buffers at count E (in place at NCCL's offsets), the peer table and
  /// every threadblock's arguments.
  void place(int64_t E, collDataType_t dtype, collRedOp_t op) {
    for (int r = 0; r < R && plan.inplace; ++r) {
      in[r] = out[r] = user[r];
      if (coll == collc::kAllGather)
        in[r] += r * E * es;
      if (coll == collc::kReduceScatter)
        out[r] += r * E * es;
    }
    // Every rank's buffers, rank-major, for peer steps and direct
    // connections, and the barrier that starts and ends a plan with peer
    // steps (every threadblock arrives twice).
    std::vector<char *> table(size_t(R) * collc::kMaxBuffers, nullptr);
    for (int r = 0; r < R; ++r) {
      table[r * collc::kMaxBuffers + collc::kIn] = in[r];
      table[r * collc::kMaxBuffers + collc::kOut] = out[r];
      for (int32_t k = 0; k < plan.numScratch; ++k)
        table[r * collc::kMaxBuffers + collc::kScratch0 + k] = scratch[r][k];
    }
    CHECK_CUDA(
        cudaMemcpy(peers, table.data(), table.size() * sizeof(char *), cudaMemcpyHostToDevice));
    const int32_t tbs = plan.numThreadblocks;
    shape = collrt::launchFor(plan, inU * E * es);
    runSlice = collrt::replicaSlice(slice, E, plan.chunks, shape.replicas, es);
    std::vector<collc::Args> hostArgs(size_t(tbs) * shape.replicas);
    for (size_t e = 0; e < hostArgs.size(); ++e) {
      const int32_t i = int32_t(e % tbs), replica = int32_t(e / tbs);
      const collc::ThreadblockDesc &tb = plan.threadblocks[i];
      collc::Args &a = hostArgs[e];
      memset(&a, 0, sizeof a);
      a.rank = tb.rank;
      a.nranks = R;
      a.tb = i;
      a.shape = tb.shape;
      a.table = deviceTable[i];
      a.replica = replica;
      a.replicas = shape.replicas;
      a.recvPeer = tb.recvPeer;
      a.sendPeer = tb.sendPeer;
      a.datatype = dtype;
      a.op = op;
      a.elemSize = int32_t(es);
      a.count = E;
      a.slice = runSlice;
      a.chunks = plan.chunks;
      a.numScratch = plan.numScratch;
      a.buffers[collc::kIn] = in[tb.rank];
      a.buffers[collc::kOut] = out[tb.rank];
      for (int32_t k = 0; k < plan.numScratch; ++k) {
        a.scratchChunks[k] = plan.scratchChunks[k];
        a.buffers[collc::kScratch0 + k] = scratch[tb.rank][k];
      }
      a.recv = recv[e];
      a.send = send[e];
      a.progress = progress + (size_t(replica) * R + tb.rank) * tbs;
      a.publishes = (tb.direct & collc::kTbWaitedOn) != 0;
      a.peers = peerSteps || direct ? peers : nullptr;
      if (peerSteps) {
        a.barrier = barrier + tb.rank * (2 + R);
        a.barrierArrivals = 0;
        for (int32_t j = 0; j < tbs; ++j)
          a.barrierArrivals += plan.threadblocks[j].rank == tb.rank ? shape.replicas : 0;
        a.barriers = barriers;
      }
      a.abort = flags;
      a.error = flags + 1;
      a.errorText = errorText;
      a.timeoutSeconds = 20;
    }
    CHECK_CUDA(cudaMemcpy(args, hostArgs.data(), hostArgs.size() * sizeof(collc::Args),
                          cudaMemcpyHostToDevice));
  }

  /// Before a launch: poison in outputs, scratch and FIFO slots, then the
  /// inputs at `shift` (in place, over the poison where they share memory).
  void poisonAndFill(int64_t E, int64_t shift) {
    const int64_t inN = inU * E, outN = outU * E;
    for (int r = 0; r < R; ++r) {
      const bool allInput = plan.inplace && coll != collc::kAllGather;
      if (!allInput) {
        if (poisonByComplement<T> && definesOutput(coll, plan.root, r) && outN)
          writeFromTables<W><<<gridFor(outN), 256>>>(reinterpret_cast<W *>(out[r]), outN,
                                                     outputLayout(coll, R, plan.root, r, E, shift),
                                                     tables, true);
        else
          CHECK_CUDA(cudaMemset(out[r], kPoisonByte, outN * es));
      }
      if (inN)
        writeFromTables<W><<<gridFor(inN), 256>>>(reinterpret_cast<W *>(in[r]), inN,
                                                  inputLayout(r, inN, shift), tables, false);
      for (int32_t k = 0; k < plan.numScratch; ++k)
        CHECK_CUDA(cudaMemset(scratch[r][k], kPoisonByte,
                              loops(E, runSlice) * plan.scratchChunks[k] * runSlice * es));
    }
    // Slots only: the counters and sizes in front of them are the
    // connection's state (and an all-ones size would read as kDirect).
    for (const collc::Fifo &f : recv)
      if (f.slots)
        CHECK_CUDA(cudaMemset(f.slots, kPoisonByte, size_t(f.numSlots) * f.slotBytes));
    CHECK_CUDA(cudaGetLastError());
  }

  /// After a launch: every defined output, and every input out of place
  /// (read-only there), against the tables; "" if all are right.
  std::string check(int64_t E, int64_t shift) {
    const int64_t inN = inU * E, outN = outU * E;
    std::vector<unsigned long long> counts(4 * R);
    for (int k = 0; k < 2 * R; ++k) {
      counts[2 * k] = 0;
      counts[2 * k + 1] = ~0ull;
    }
    CHECK_CUDA(cudaMemcpy(tally, counts.data(), counts.size() * 8, cudaMemcpyHostToDevice));
    std::vector<Layout> layouts(2 * R);
    for (int r = 0; r < R; ++r) {
      layouts[2 * r] = outputLayout(coll, R, plan.root, r, E, shift);
      layouts[2 * r + 1] = inputLayout(r, inN, shift);
      if (definesOutput(coll, plan.root, r) && outN)
        checkAgainstTables<W><<<gridFor(outN), 256>>>(reinterpret_cast<const W *>(out[r]), outN,
                                                      layouts[2 * r], tables, tally + 4 * r);
      if (!plan.inplace && inN)
        checkAgainstTables<W><<<gridFor(inN), 256>>>(reinterpret_cast<const W *>(in[r]), inN,
                                                     layouts[2 * r + 1], tables, tally + 4 * r + 2);
    }
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaMemcpy(counts.data(), tally, counts.size() * 8, cudaMemcpyDeviceToHost));
    unsigned long long wrong = 0;
    std::string first;
    for (int k = 0; k < 2 * R; ++k) {
      wrong += counts[2 * k];
      if (!counts[2 * k] || !first.empty())
        continue;
      const int r = k / 2;
      const bool output = k % 2 == 0;
      const int64_t i = int64_t(counts[2 * k + 1]);
      T got, want = host[layouts[k].at(i)];
      CHECK_CUDA(cudaMemcpy(&got, (output ? out[r] : in[r]) + i * es, es, cudaMemcpyDeviceToHost));
      first = "rank " + std::to_string(r) + (output ? " out[" : " in[") + std::to_string(i) + "]" +
              (output && outU > 1 ? " (unit " + std::to_string(i / E) + ")" : "") + ": got " +
              show(got) + ", want " + show(want) + hint(got, want) +
              (output ? "" : "; out of place, a plan must not write its input");
    }
    if (!wrong)
      return "";
    return first + "; " + std::to_string(wrong) + " wrong in all";
  }

  size_t progressBytes() const { return size_t(R) * plan.numThreadblocks * replicas * 8; }
  int blockThreads() const { return threads ? threads : shape.threads ? shape.threads : 512; }

  static constexpr int64_t es = sizeof(T);
  const collc::PlanDesc &plan;
  const int threads; // forced by --threads, or 0: the plan's choice
  const int32_t replicas = collrt::maxReplicas(plan);
  collc::LaunchShape shape{0, 1, 0}; // at the count placed last
  int64_t runSlice = 0;              // and its slice
  const std::vector<T> &host;
  const W *tables;
  const int R;
  const int32_t coll;
  const int64_t inU, outU, slice;
  std::vector<void *> allocations;
  std::vector<char *> user, in, out;
  std::vector<std::vector<char *>> scratch;
  std::vector<collc::Fifo> recv, send;
  std::vector<const int64_t *> deviceTable;
  bool peerSteps = false, direct = false;
  uint64_t *progress = nullptr, *barrier = nullptr, **barriers = nullptr;
  int32_t *flags = nullptr;
  char *errorText = nullptr;
  collc::Args *args = nullptr;
  char **peers = nullptr;
  unsigned long long *tally = nullptr;
};

//===----------------------------------------------------------------------===//
// Runs: cases at one count, and the sweep
//===----------------------------------------------------------------------===//

struct Run {
  collDataType_t dtype = collFloat32;
  collRedOp_t op = collSum;
  int64_t count = 0;                            // a case: elements per unit
  int64_t minBytes = 0, maxBytes = 0, step = 0; // a sweep: a rank's largest buffer
};

struct Options {
  std::string label;
  std::vector<std::string> plans;
  std::vector<Run> runs;
  int threads = 0, iters = 5; // threads 0: each plan's launch table
};

int failures = 0;

template <typename T>
void runAll(const collc::AlgorithmDesc &alg, const std::vector<int32_t> &plans, const Run &run,
            const Options &o) {
  using W = Bits<T>;
  const std::string what = std::string(typeNames[run.dtype]) + "/" + opNames[run.op];
  const std::vector<T> host = makeTables<T>(alg.plans[plans[0]].ranks, run.op);
  void *tables = nullptr;
  CHECK_CUDA(cudaMalloc(&tables, host.size() * sizeof(T)));
  CHECK_CUDA(cudaMemcpy(tables, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  for (int32_t p : plans) {
    const collc::PlanDesc &plan = alg.plans[p];
    const std::string name = (o.label.empty() ? alg.name : o.label) + "/" + plan.name;
    const char *proto = protocolName(plan.protocol);
    std::string why = cannotRun(plan, o.threads);
    if (why.empty() && collrt::sliceElements(plan, sizeof(T), slotBytes) < 1)
      why = "its widest step does not fit a FIFO slot"; // as collLaunch refuses it
    if (!why.empty()) {
      printRow(name, "SKIP", proto, what, "-", "-", "-", "-", "-", "-", why);
      continue;
    }
    // Counts: a case's, or each sweep size's where it holds an element per unit.
    const int64_t units =
        std::max(inUnits(plan.collective, plan.ranks), outUnits(plan.collective, plan.ranks));
    std::vector<int64_t> counts;
    if (run.maxBytes)
      for (int64_t b : sweepSizes(run.minBytes, run.maxBytes, run.step)) {
        if (b / (units * int64_t(sizeof(T))))
          counts.push_back(b / (units * int64_t(sizeof(T))));
      }
    else
      counts.push_back(run.count);
    if (counts.empty()) {
      printRow(name, "SKIP", proto, what, "-", "-", "-", "-", "-", "-",
               "no size of the sweep holds an element per unit");
      continue;
    }
    PlanRun<T> runner(plan, o.threads, counts.back(), host, static_cast<const W *>(tables));
    for (int64_t E : counts) {
      const int64_t bytes = units * E * int64_t(sizeof(T));
      const Outcome r =
          runner.run(E, run.maxBytes ? launchesFor(bytes) : o.iters, run.dtype, run.op);
      if (r.kind != Outcome::kPass) {
        failures += r.kind == Outcome::kFail;
        printRow(name, r.kind == Outcome::kFail ? "FAIL" : "SKIP", proto, what, showBytes(bytes),
                 "-", "-", "-", "-", "-",
                 r.note + (r.stop ? "; the plan's other sizes not run" : ""));
        if (r.stop)
          break;
        continue;
      }
      const double algbw = double(bytes) / r.seconds / 1e9;
      const double busbw = algbw * busFactor(plan.collective, plan.ranks);
      const double copy = copyBandwidth(bytes);
      printRow(name, "PASS", proto, what, showBytes(bytes), fixed(r.seconds * 1e6, 1),
               fixed(algbw, 2), fixed(busbw, 2), fixed(copy, 2), fixed(busbw / copy, 3),
               "blocks " + runner.launchShape());
    }
  }
  CHECK_CUDA(cudaFree(tables));
}

/// 4096, 64K, 1M, 1G.
bool parseBytes(const std::string &s, int64_t &v) {
  char *end = nullptr;
  v = strtoll(s.c_str(), &end, 10);
  if (end == s.c_str())
    return false;
  const std::string unit = end;
  const int shift = unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : unit.empty() ? 0 : -1;
  v <<= std::max(shift, 0);
  return shift >= 0 && v >= 0;
}

template <size_t N> int indexOf(const char *const (&names)[N], const std::string &s) {
  for (size_t k = 0; k < N; ++k)
    if (s == names[k])
      return int(k);
  return -1;
}

std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> parts(1);
  for (char c : s)
    if (c == ':')
      parts.emplace_back();
    else
      parts.back() += c;
  return parts;
}

const char *const usage =
    "usage: harness [--label NAME] [--plan NAME]... [--case COUNT:TYPE:OP]...\n"
    "               [--sweep MIN:MAX:STEP[:TYPE:OP]] [--iters N] [--threads N] | --self-test\n"
    "  a case runs N launches at COUNT elements per unit; the sweep, sizes of a rank's\n"
    "  largest buffer from MIN to MAX bytes (4K, 1G), launches bounded by size\n";

bool parse(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc)
      return false;
    const std::string v = argv[++i];
    const std::vector<std::string> p = split(v);
    if (a == "--label") {
      o.label = v;
    } else if (a == "--plan") {
      o.plans.push_back(v);
    } else if (a == "--iters" || a == "--threads") {
      (a == "--iters" ? o.iters : o.threads) = atoi(v.c_str());
      if (o.iters < 1 || (a == "--threads" &&
                          (o.threads < 32 || o.threads % 32 || o.threads > COLLC_CUDA_MAX_THREADS)))
        return false;
    } else if (a == "--case" && p.size() == 3) {
      Run r;
      const int t = indexOf(typeNames, p[1]), op = indexOf(opNames, p[2]);
      if (!parseBytes(p[0], r.count) || r.count < 1 || t < 0 || op < 0)
        return false;
      r.dtype = collDataType_t(t);
      r.op = collRedOp_t(op);
      o.runs.push_back(r);
    } else if (a == "--sweep" && (p.size() == 3 || p.size() == 5)) {
      Run r;
      const int t = p.size() == 5 ? indexOf(typeNames, p[3]) : int(collFloat32);
      const int op = p.size() == 5 ? indexOf(opNames, p[4]) : int(collSum);
      if (!parseBytes(p[0], r.minBytes) || !parseBytes(p[1], r.maxBytes) ||
          !parseBytes(p[2], r.step) || r.minBytes < 1 || r.maxBytes < r.minBytes || r.step < 2 ||
          t < 0 || op < 0)
        return false;
      r.dtype = collDataType_t(t);
      r.op = collRedOp_t(op);
      o.runs.push_back(r);
    } else {
      return false;
    }
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0); // rows survive a crash
  if (argc == 2 && std::string(argv[1]) == "--self-test")
    return selfTest();
  Options o;
  if (!parse(argc, argv, o)) {
    fputs(usage, stderr);
    return 2;
  }
  if (o.runs.empty()) {
    Run r;
    r.count = 1 << 20;
    o.runs.push_back(r);
  }
  const collc::AlgorithmDesc &alg = COLLC_ALGORITHM;
  const std::string label = o.label.empty() ? alg.name : o.label;
  // The requested plans, every one unless named; a name not there fails.
  std::vector<int32_t> plans;
  for (int32_t p = 0; p < alg.numPlans && o.plans.empty(); ++p)
    plans.push_back(p);
  for (const std::string &name : o.plans) {
    int32_t found = -1;
    for (int32_t p = 0; p < alg.numPlans; ++p)
      if (name == alg.plans[p].name)
        found = p;
    if (found < 0) {
      printRow(label + "/" + name, "FAIL", "-", "-", "-", "-", "-", "-", "-", "-",
               std::string("no such plan in ") + alg.source);
      ++failures;
    } else {
      plans.push_back(found);
    }
  }
  for (const Run &run : o.runs)
    if (!plans.empty()) // the types parse() takes, none of them fp8
      collrt::dispatchType(run.dtype, [&](auto tag) { runAll<decltype(tag)>(alg, plans, run, o); });
  return failures ? 1 : 0;
}
