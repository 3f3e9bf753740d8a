//===- harness.cu - Every rank of a compiled algorithm on one GPU ---------===//
//
// All ranks live in one process on one GPU: peer buffers and FIFOs are plain
// device allocations, and one launch runs every threadblock of every rank,
// all co-resident, so the plan's waits between ranks resolve on the device.
// Inputs and the bit-exact check are those of collc-launch (Expected.h).
// Built together with a generated kernel file; COLLC_ALGORITHM names the
// algorithm's descriptor (collc_algorithm_<name>).
//
//===----------------------------------------------------------------------===//
#include "collc/abi.h"
#include "collc/kernel.h"
#include "collrt.h"
#include "transport/Transport.h"

#include "ranks/Expected.h"

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" const collc::AlgorithmDesc COLLC_ALGORITHM;

using namespace collc_check;

namespace {

#define CHECK_CUDA(call)                                                                  \
  do {                                                                                    \
    cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess) {                                                              \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      exit(2);                                                                            \
    }                                                                                     \
  } while (0)

// NCCL's step sizes, as the runtime's defaults.
int64_t slotBytes(int32_t p) { return p == collc::kLL ? 65536 : p == collc::kLL128 ? 614400 : 524288; }
const char *protocolName(int32_t p) { return p == collc::kLL ? "LL" : p == collc::kLL128 ? "LL128" : "Simple"; }

struct Options {
  int64_t count = 1 << 20;
  collDataType_t dtype = collFloat32;
  collRedOp_t op = collSum;
  int iters = 5, threads = 512;
};

void *deviceZeros(size_t bytes) {
  void *p = nullptr;
  CHECK_CUDA(cudaMalloc(&p, bytes ? bytes : 16));
  CHECK_CUDA(cudaMemset(p, 0, bytes ? bytes : 16));
  return p;
}

template <typename T>
bool runPlan(const collc::PlanDesc &plan, const Options &o, double &seconds) {
  const int R = plan.ranks, coll = plan.collective;
  const int64_t E = o.count, es = sizeof(T);
  const int64_t inN = inUnits(coll, R) * E, outN = outUnits(coll, R) * E;
  int64_t slice = collrt::sliceElements(plan, es, slotBytes);
  int64_t loops = E ? (E + plan.chunks * slice - 1) / (plan.chunks * slice) : 0;

  // Buffers per rank: in place where the plan is (NCCL's offsets).
  std::vector<char *> in(R), out(R);
  std::vector<std::vector<char *>> scratch(R);
  for (int r = 0; r < R; ++r) {
    if (plan.inplace) {
      char *buf = static_cast<char *>(deviceZeros(std::max(inN, outN) * es));
      in[r] = out[r] = buf;
      if (coll == collc::kAllGather)
        in[r] = buf + r * E * es;
      if (coll == collc::kReduceScatter)
        out[r] = buf + r * E * es;
    } else {
      in[r] = static_cast<char *>(deviceZeros(inN * es));
      out[r] = static_cast<char *>(deviceZeros(outN * es));
    }
    for (int32_t k = 0; k < plan.numScratch; ++k)
      scratch[r].push_back(
          static_cast<char *>(deviceZeros(loops * plan.scratchChunks[k] * slice * es)));
    std::vector<T> host(inN);
    fillInput(host.data(), r, inN, o.op);
    CHECK_CUDA(cudaMemcpy(in[r], host.data(), inN * es, cudaMemcpyHostToDevice));
  }

  // FIFOs in device memory, one per receiving threadblock.
  std::vector<collc::Fifo> recvFifo(plan.numThreadblocks), sendFifo(plan.numThreadblocks);
  for (int32_t i = 0; i < plan.numThreadblocks; ++i) {
    const collc::ThreadblockDesc &tb = plan.threadblocks[i];
    if (tb.recvPeer < 0)
      continue;
    char *base = static_cast<char *>(deviceZeros(collrt::fifoBytes(plan.slots, slotBytes(tb.protocol))));
    recvFifo[i] = collrt::fifoAt(base, plan.slots, slotBytes(tb.protocol), tb.protocol);
  }
  for (int32_t i = 0; i < plan.numThreadblocks; ++i) {
    const collc::ThreadblockDesc &tb = plan.threadblocks[i];
    for (int32_t j = 0; j < plan.numThreadblocks && tb.sendPeer >= 0; ++j) {
      const collc::ThreadblockDesc &o2 = plan.threadblocks[j];
      if (o2.rank == tb.sendPeer && o2.recvPeer == tb.rank && o2.channel == tb.channel)
        sendFifo[i] = recvFifo[j];
    }
  }
  // Progress counters: a rank's threadblocks share one array, indexed by table.
  auto *progress = static_cast<uint64_t *>(deviceZeros(R * plan.numThreadblocks * 8));
  // Peer windows: every rank's buffers, rank-major, for peer steps and
  // direct connections, and the barrier that starts and ends a plan with
  // peer steps (every threadblock arrives twice).
  bool peerSteps = false, direct = false;
  for (int32_t i = 0; i < plan.numThreadblocks; ++i) {
    peerSteps |= (plan.threadblocks[i].direct & 4) != 0;
    direct |= (plan.threadblocks[i].direct & 3) != 0;
  }
  char **peers = nullptr;
  auto *barrier = static_cast<uint64_t *>(deviceZeros(8));
  if (peerSteps || direct) {
    std::vector<char *> table(size_t(R) * collc::kMaxBuffers, nullptr);
    for (int r = 0; r < R; ++r) {
      table[r * collc::kMaxBuffers + collc::kIn] = in[r];
      table[r * collc::kMaxBuffers + collc::kOut] = out[r];
      for (int32_t k = 0; k < plan.numScratch; ++k)
        table[r * collc::kMaxBuffers + collc::kScratch0 + k] = scratch[r][k];
    }
    CHECK_CUDA(cudaMalloc(&peers, table.size() * sizeof(char *)));
    CHECK_CUDA(cudaMemcpy(peers, table.data(), table.size() * sizeof(char *),
                          cudaMemcpyHostToDevice));
  }
  auto *flags = static_cast<int32_t *>(deviceZeros(2 * sizeof(int32_t))); // abort, error
  auto *errorText = static_cast<char *>(deviceZeros(256));

  std::vector<collc::Args> args(plan.numThreadblocks);
  for (int32_t i = 0; i < plan.numThreadblocks; ++i) {
    const collc::ThreadblockDesc &tb = plan.threadblocks[i];
    collc::Args &a = args[i];
    memset(&a, 0, sizeof a);
    a.rank = tb.rank;
    a.nranks = R;
    a.tb = i;
    a.recvPeer = tb.recvPeer;
    a.sendPeer = tb.sendPeer;
    a.datatype = o.dtype;
    a.op = o.op;
    a.elemSize = int32_t(es);
    a.count = E;
    a.slice = slice;
    a.chunks = plan.chunks;
    a.numScratch = plan.numScratch;
    a.buffers[collc::kIn] = in[tb.rank];
    a.buffers[collc::kOut] = out[tb.rank];
    for (int32_t k = 0; k < plan.numScratch; ++k) {
      a.scratchChunks[k] = plan.scratchChunks[k];
      a.buffers[collc::kScratch0 + k] = scratch[tb.rank][k];
    }
    a.recv = recvFifo[i];
    a.send = sendFifo[i];
    a.progress = progress + tb.rank * plan.numThreadblocks;
    a.peers = peers;
    if (peerSteps) {
      a.barrier = barrier;
      a.barrierStart = uint64_t(plan.numThreadblocks);
      a.barrierGoal = 2 * uint64_t(plan.numThreadblocks);
    }
    a.abort = flags;
    a.error = flags + 1;
    a.errorText = errorText;
    a.timeoutSeconds = 20;
  }
  collc::Args *dArgs = nullptr;
  CHECK_CUDA(cudaMalloc(&dArgs, args.size() * sizeof(collc::Args)));
  CHECK_CUDA(cudaMemcpy(dArgs, args.data(), args.size() * sizeof(collc::Args),
                        cudaMemcpyHostToDevice));

  // Every threadblock of every rank must be resident at once.
  int perSm = 0, sms = 0, dev = 0;
  CHECK_CUDA(cudaGetDevice(&dev));
  CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &perSm, reinterpret_cast<const void *>(plan.cudaKernel), o.threads, 0));
  if (perSm * sms < plan.numThreadblocks) {
    printf("  %-14s SKIP: %d threadblocks do not fit at once (%d per SM x %d SMs)\n", plan.name,
           plan.numThreadblocks, perSm, sms);
    return true;
  }
  void *params[] = {&dArgs};
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  float best = 1e30f;
  for (int it = 0; it < o.iters; ++it) {
    // Re-seed the inputs an in-place plan overwrote.
    if (plan.inplace && it)
      for (int r = 0; r < R; ++r) {
        std::vector<T> host(inN);
        fillInput(host.data(), r, inN, o.op);
        CHECK_CUDA(cudaMemcpy(in[r], host.data(), inN * es, cudaMemcpyHostToDevice));
      }
    CHECK_CUDA(cudaMemset(progress, 0, R * plan.numThreadblocks * 8));
    CHECK_CUDA(cudaMemset(barrier, 0, 8));
    CHECK_CUDA(cudaEventRecord(start));
    CHECK_CUDA(cudaLaunchKernel(plan.cudaKernel, dim3(plan.numThreadblocks), dim3(o.threads),
                                params, 0, nullptr));
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    CHECK_CUDA(cudaGetLastError());
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    best = std::min(best, ms);
  }
  seconds = best / 1e3;
  int32_t hostFlags[2];
  char text[256];
  CHECK_CUDA(cudaMemcpy(hostFlags, flags, sizeof hostFlags, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(text, errorText, sizeof text, cudaMemcpyDeviceToHost));
  if (hostFlags[1]) {
    printf("  %-14s FAIL: %s\n", plan.name, text);
    return false;
  }

  int64_t wrong = 0;
  std::string first;
  for (int r = 0; r < R; ++r) {
    std::vector<T> got(outN);
    CHECK_CUDA(cudaMemcpy(got.data(), out[r], outN * es, cudaMemcpyDeviceToHost));
    bool reducesHere = coll == collc::kAllReduce || coll == collc::kReduceScatter ||
                       (coll == collc::kReduce && r == plan.root);
    if (o.op == collAvg && reducesHere)
      for (int64_t j = 0; j < E; ++j)
        got[j] = collrt::Arith<T>::div(got[j], R);
    std::vector<char> checked;
    std::vector<T> want = reference<T>(coll, R, plan.root, r, E, o.op, checked);
    std::string f;
    int64_t w = compare(got.data(), want, checked, f);
    if (w && first.empty())
      first = "rank " + std::to_string(r) + ", " + f;
    wrong += w;
  }
  double bytes = double(std::max(inN, outN) * es);
  printf("  %-14s %-6s %s  %10.1f us  %8.2f GB/s algbw%s%s\n", plan.name,
         protocolName(plan.protocol), wrong ? "FAIL" : "PASS", seconds * 1e6,
         bytes / seconds / 1e9, wrong ? "  " : "", wrong ? first.c_str() : "");
  cudaFree(peers);
  cudaFree(barrier);
  for (int r = 0; r < R; ++r) {
    cudaFree(in[r]);
    if (!plan.inplace)
      cudaFree(out[r]);
    for (char *s : scratch[r])
      cudaFree(s);
  }
  return wrong == 0;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--count")
      o.count = atoll(v.c_str());
    else if (a == "--iters")
      o.iters = std::max(1, atoi(v.c_str()));
    else if (a == "--threads")
      o.threads = atoi(v.c_str());
    else if (a == "--op") {
      const char *ops[] = {"sum", "prod", "max", "min", "avg"};
      for (int k = 0; k < 5; ++k)
        if (v == ops[k])
          o.op = collRedOp_t(k);
    } else if (a == "--dtype") {
      const char *types[] = {"int8", "uint8", "int32", "uint32", "int64", "uint64",
                             "half", "float", "double", "bfloat16"};
      for (int k = 0; k < 10; ++k)
        if (v == types[k])
          o.dtype = collDataType_t(k);
    }
  }
  const collc::AlgorithmDesc &alg = COLLC_ALGORITHM;
  printf("%s (%s), %lld elements, type %d, op %d\n", alg.name, alg.source,
         (long long)o.count, int(o.dtype), int(o.op));
  bool ok = true;
  for (int32_t p = 0; p < alg.numPlans; ++p) {
    const collc::PlanDesc &plan = alg.plans[p];
    bool multimem = false;
    for (int32_t i = 0; i < plan.numThreadblocks; ++i)
      multimem |= (plan.threadblocks[i].direct & 8) != 0;
    if (multimem) {
      printf("  %-14s SKIP: multimem needs multicast objects over several GPUs\n", plan.name);
      continue;
    }
    double seconds = 0;
    collrt::dispatchType(o.dtype, [&](auto tag) {
      ok &= runPlan<decltype(tag)>(plan, o, seconds);
    });
  }
  return ok ? 0 : 1;
}
