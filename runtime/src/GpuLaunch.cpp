//===- GpuLaunch.cpp - Running an nvcc-built plan on the caller's GPU -----===//
//
// Every call of the driver goes through the table that CudaDriver.cpp
// loads; the kernel itself is launched by code that nvcc compiled into the
// application (PlanDesc::cuda), so collrt needs no CUDA runtime library.
//
// What a launch needs on the device, beyond the user's buffers:
// - its Args and progress counters, in one of a ring of slots, each reused
//   only after the event recorded behind its last launch has passed;
// - scratch buffers and staging for in-place layouts, grown on demand
//   (after the device is idle, as growing frees the old ones);
// - each threadblock's table, copied once per algorithm;
// - the abort flag and the error report, in host-mapped memory, so that
//   collCommAbort reaches running kernels and their errors reach the host.
//
//===----------------------------------------------------------------------===//
#include "src/GpuLaunch.h"

#include "src/BlockArgs.h"
#include "src/Comm.h"
#include "src/CudaDriver.h"
#include "src/Env.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <map>

#if __has_include(<cuda.h>)
#include "src/CudaApi.h"

using namespace collrt;
using collc::PlanDesc;

namespace collrt {

/// What a communicator keeps on its GPU between launches.
struct GpuState {
  struct Flags {
    int32_t abort;
    int32_t error;
    char text[256];
  };
  struct Slot {
    CUdeviceptr memory = 0;
    size_t bytes = 0;
    CUevent done = nullptr;
    bool pending = false;
  };

  const CudaApi *cu = nullptr;
  Flags *flags = nullptr; // host-mapped
  CUdeviceptr deviceFlags = 0;
  std::array<Slot, 8> slots;
  size_t next = 0;
  std::array<CUdeviceptr, collc::kMaxScratch> scratch{};
  std::array<size_t, collc::kMaxScratch> scratchBytes{};
  CUdeviceptr staging = 0;
  size_t stagingBytes = 0;
  // Per algorithm: this rank's threadblocks' tables on the device, by index
  // in the plan's table of threadblocks, per plan.
  std::map<const collc::AlgorithmDesc *, std::vector<std::vector<const int64_t *>>> tables;
  std::vector<CUdeviceptr> tableMemory;
};

} // namespace collrt

namespace {

collResult_t cudaFailed(collComm *comm, const CudaApi &cu, const char *call, CUresult r) {
  return comm->fail(collUnhandledCudaError, cu.describe(call, r));
}

#define COLLRT_CU(call, args)                                                                \
  do {                                                                                       \
    if (CUresult r_ = cu.call args)                                                          \
      return cudaFailed(comm, cu, #call, r_);                                                \
  } while (0)

int64_t inUnits(int32_t c, int r) { return c == collc::kReduceScatter || c == collc::kAllToAll ? r : 1; }
int64_t outUnits(int32_t c, int r) { return c == collc::kAllGather || c == collc::kAllToAll ? r : 1; }
bool reduces(int32_t c) { return c == collc::kAllReduce || c == collc::kReduceScatter || c == collc::kReduce; }

// Device memory of at least `need` bytes at `p`, which holds `have`.
collResult_t grow(collComm *comm, const CudaApi &cu, CUdeviceptr &p, size_t &have, size_t need) {
  if (need <= have)
    return collSuccess;
  if (p) {
    COLLRT_CU(cuCtxSynchronize, ()); // no kernel still reads the old memory
    cu.cuMemFree(p);
    p = 0;
    have = 0;
  }
  COLLRT_CU(cuMemAlloc, (&p, need));
  have = need;
  return collSuccess;
}

collResult_t state(collComm *comm, GpuState *&out) {
  if (comm->gpu) {
    out = comm->gpu;
    return collSuccess;
  }
  std::string why;
  const CudaApi *driver = cudaDriver(why);
  if (!driver)
    return comm->fail(collUnhandledCudaError, why);
  const CudaApi &cu = *driver;
  auto *s = new GpuState;
  s->cu = driver;
  comm->gpu = s; // releaseGpu frees what is made below, however far it gets
  void *host = nullptr;
  COLLRT_CU(cuMemHostAlloc, (&host, sizeof(GpuState::Flags),
                             CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
  s->flags = static_cast<GpuState::Flags *>(host);
  memset(host, 0, sizeof(GpuState::Flags));
  COLLRT_CU(cuMemHostGetDevicePointer, (&s->deviceFlags, host, 0));
  for (GpuState::Slot &slot : s->slots)
    COLLRT_CU(cuEventCreate, (&slot.done, CU_EVENT_DISABLE_TIMING));
  out = s;
  return collSuccess;
}

// The tables of this rank's threadblocks, on the device.
collResult_t tablesOf(collComm *comm, GpuState &s, const collc::AlgorithmDesc *alg,
                      CUstream stream, const std::vector<std::vector<const int64_t *>> *&out) {
  auto found = s.tables.find(alg);
  if (found != s.tables.end()) {
    out = &found->second;
    return collSuccess;
  }
  const CudaApi &cu = *s.cu;
  std::vector<std::vector<const int64_t *>> at(alg->numPlans);
  std::vector<int64_t> packed;
  std::vector<std::vector<size_t>> offset(alg->numPlans);
  for (int32_t p = 0; p < alg->numPlans; ++p) {
    const PlanDesc &plan = alg->plans[p];
    offset[p].assign(plan.numThreadblocks, SIZE_MAX);
    for (int32_t i = 0; i < plan.numThreadblocks; ++i) {
      const collc::ThreadblockDesc &tb = plan.threadblocks[i];
      if (tb.rank != comm->rank || !tb.table || tb.tableLength <= 0)
        continue;
      offset[p][i] = packed.size();
      packed.insert(packed.end(), tb.table, tb.table + tb.tableLength);
    }
  }
  CUdeviceptr memory = 0;
  if (!packed.empty()) {
    COLLRT_CU(cuMemAlloc, (&memory, packed.size() * sizeof(int64_t)));
    s.tableMemory.push_back(memory);
    // Pageable memory: the call returns once it has a copy of its own.
    COLLRT_CU(cuMemcpyHtoDAsync, (memory, packed.data(), packed.size() * sizeof(int64_t), stream));
  }
  for (int32_t p = 0; p < alg->numPlans; ++p) {
    at[p].assign(offset[p].size(), nullptr);
    for (size_t i = 0; i < offset[p].size(); ++i)
      if (offset[p][i] != SIZE_MAX)
        at[p][i] = reinterpret_cast<const int64_t *>(memory) + offset[p][i];
  }
  out = &(s.tables[alg] = std::move(at));
  return collSuccess;
}

} // namespace

collResult_t collrt::launchOnGpu(collComm *comm, const GpuLaunch &l) {
  GpuState *s = nullptr;
  if (collResult_t r = state(comm, s))
    return r;
  const CudaApi &cu = *s->cu;
  const PlanDesc &plan = *l.plan;
  const CUstream stream = static_cast<CUstream>(l.stream);
  // A kernel of an earlier launch that failed fails this one: its output,
  // and the counters of its connections, are not what the next expects.
  if (int32_t e = __atomic_load_n(&s->flags->error, __ATOMIC_ACQUIRE)) {
    char text[sizeof s->flags->text];
    memcpy(text, s->flags->text, sizeof text);
    text[sizeof text - 1] = 0;
    return comm->fail(collResult_t(e), std::string("an earlier launch failed on the GPU: ") + text);
  }
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  COLLRT_CU(cuStreamIsCapturing, (stream, &capture));
  if (capture != CU_STREAM_CAPTURE_STATUS_NONE)
    return comm->fail(collInvalidUsage, "collc launches cannot be captured in a CUDA graph yet");

  const int R = comm->nranks, me = comm->rank;
  const int32_t coll = plan.collective;
  const int64_t es = int64_t(collTypeSize(l.type)), E = l.count, unit = E * es;
  const int64_t inBytes = inUnits(coll, R) * unit, outBytes = outUnits(coll, R) * unit;

  // The buffers as the plan expects them, copies on the stream where the
  // caller's layout differs (as the host build does with memcpy).
  if (collResult_t r = grow(comm, cu, s->staging, s->stagingBytes,
                            size_t(2 * std::max(inBytes, outBytes) + 256)))
    return r;
  const CUdeviceptr stageIn = s->staging, stageOut = s->staging + ((std::max(inBytes, outBytes) + 127) & ~int64_t(127));
  auto at = [](const void *p) { return CUdeviceptr(reinterpret_cast<uintptr_t>(p)); };
  CUdeviceptr send = at(l.send), recv = at(l.recv), in = send, out = recv, copyBack = 0;
  auto overlap = [](CUdeviceptr a, int64_t na, CUdeviceptr b, int64_t nb) {
    return na && nb && a < b + nb && b < a + na;
  };
  // dst = src (n bytes), through staging where the two overlap.
  auto move = [&](CUdeviceptr dst, CUdeviceptr src, int64_t n) -> collResult_t {
    if (dst == src || !n)
      return collSuccess;
    if (overlap(dst, n, src, n)) {
      COLLRT_CU(cuMemcpyDtoDAsync, (stageOut, src, n, stream));
      src = stageOut;
    }
    COLLRT_CU(cuMemcpyDtoDAsync, (dst, src, n, stream));
    return collSuccess;
  };
  if (coll == collc::kBroadcast && me != plan.root && !send)
    in = send = stageIn;
  if (coll == collc::kReduce && me != plan.root && !recv)
    out = recv = stageOut;
  collResult_t moved = collSuccess;
  if (plan.inplace) {
    if (coll == collc::kAllGather) {
      in = recv + me * unit;
      moved = move(in, send, unit);
    } else if (coll == collc::kReduceScatter) {
      if (recv != send + me * unit) {
        in = stageIn;
        moved = move(in, send, inBytes);
        copyBack = recv;
      }
      out = in + me * unit;
    } else {
      moved = move(recv, send, inBytes);
      in = out = recv;
    }
  } else if (overlap(send, inBytes, recv, outBytes)) {
    in = stageIn;
    moved = move(in, send, inBytes);
  }
  if (moved != collSuccess)
    return moved;

  const int64_t loops = (E + plan.chunks * l.slice - 1) / (plan.chunks * l.slice);
  for (int32_t k = 0; k < plan.numScratch; ++k)
    if (collResult_t r = grow(comm, cu, s->scratch[k], s->scratchBytes[k],
                              size_t(loops * plan.scratchChunks[k] * l.slice * es)))
      return r;
  const std::vector<std::vector<const int64_t *>> *tables = nullptr;
  if (collResult_t r = tablesOf(comm, *s, l.algorithm, stream, tables))
    return r;
  const int32_t p = int32_t(l.plan - l.algorithm->plans);

  // Args and zeroed progress counters in the next slot.
  const int32_t tbs = plan.numThreadblocks;
  std::vector<collc::Args> args;
  const size_t progressBytes = (size_t(tbs) * l.shape.replicas * 8 + 127) & ~size_t(127);
  GpuState::Slot &slot = s->slots[s->next++ % s->slots.size()];
  if (slot.pending)
    COLLRT_CU(cuEventSynchronize, (slot.done));
  slot.pending = false;
  const auto flag = [&](size_t offset) { return s->deviceFlags + offset; };
  char *scratch[collc::kMaxScratch];
  for (int32_t k = 0; k < collc::kMaxScratch; ++k)
    scratch[k] = reinterpret_cast<char *>(s->scratch[k]);
  for (int32_t e = 0; e < tbs * l.shape.replicas; ++e) {
    const int32_t i = e % tbs, replica = e / tbs;
    const collc::ThreadblockDesc &tb = plan.threadblocks[i];
    if (tb.rank != me)
      continue;
    collc::Args a = blockArgs(*comm, plan, *l.setup, p, e, l.shape.replicas, l.type, l.op, E,
                              l.slice, reinterpret_cast<char *>(in),
                              reinterpret_cast<char *>(out), scratch);
    a.table = (*tables)[p][i];
    // Filled in below, once the slot's address is known.
    a.progress = reinterpret_cast<uint64_t *>(uintptr_t(replica) * tbs * 8);
    a.abort = reinterpret_cast<volatile int32_t *>(flag(offsetof(GpuState::Flags, abort)));
    a.timeoutSeconds = Env::get().timeoutSeconds;
    a.error = reinterpret_cast<int32_t *>(flag(offsetof(GpuState::Flags, error)));
    a.errorText = reinterpret_cast<char *>(flag(offsetof(GpuState::Flags, text)));
    args.push_back(a);
  }
  if (args.empty())
    return collSuccess;
  const size_t argsBytes = args.size() * sizeof(collc::Args);
  if (slot.bytes < progressBytes + argsBytes) {
    if (slot.memory)
      cu.cuMemFree(slot.memory);
    slot.memory = 0;
    slot.bytes = 0;
    COLLRT_CU(cuMemAlloc, (&slot.memory, progressBytes + argsBytes));
    slot.bytes = progressBytes + argsBytes;
  }
  for (collc::Args &a : args)
    a.progress = reinterpret_cast<uint64_t *>(slot.memory + reinterpret_cast<uintptr_t>(a.progress));
  COLLRT_CU(cuMemsetD8Async, (slot.memory, 0, progressBytes, stream));
  COLLRT_CU(cuMemcpyHtoDAsync, (slot.memory + progressBytes, args.data(), argsBytes, stream));

  const collc::DeviceLaunch launch{
      reinterpret_cast<const collc::Args *>(slot.memory + progressBytes), int32_t(args.size()),
      l.shape.threads > 0 ? l.shape.threads : 512, l.stream, 0};
  if (const char *e = plan.cuda.launch(launch))
    return comm->fail(collUnhandledCudaError, std::string("cudaLaunchKernel: ") + e);
  if (l.op == collAvg && reduces(coll) && (coll != collc::kReduce || me == plan.root))
    if (const char *e = plan.cuda.divide(reinterpret_cast<void *>(out), E, l.type, R, l.stream))
      return comm->fail(collUnhandledCudaError, std::string("collc's avg division: ") + e);
  if (copyBack)
    COLLRT_CU(cuMemcpyDtoDAsync, (copyBack, out, unit, stream));
  COLLRT_CU(cuEventRecord, (slot.done, stream));
  slot.pending = true;
  if (Env::get().debug && me == 0)
    fprintf(stderr, "collc INFO plan %s on the GPU: %zu threadblocks of %d threads, queued\n",
            plan.name, args.size(), launch.threads);
  return collSuccess;
}

void collrt::abortGpu(collComm *comm) {
  if (comm->gpu && comm->gpu->flags)
    __atomic_store_n(&comm->gpu->flags->abort, 1, __ATOMIC_RELEASE);
}

void collrt::releaseGpu(collComm *comm) {
  GpuState *s = comm->gpu;
  if (!s)
    return;
  const CudaApi &cu = *s->cu;
  cu.cuCtxSynchronize(); // the kernels end: done, aborted or timed out
  for (GpuState::Slot &slot : s->slots) {
    if (slot.memory)
      cu.cuMemFree(slot.memory);
    if (slot.done)
      cu.cuEventDestroy(slot.done);
  }
  for (CUdeviceptr p : s->scratch)
    if (p)
      cu.cuMemFree(p);
  if (s->staging)
    cu.cuMemFree(s->staging);
  for (CUdeviceptr p : s->tableMemory)
    cu.cuMemFree(p);
  if (s->flags)
    cu.cuMemFreeHost(s->flags);
  delete s;
  comm->gpu = nullptr;
}

#else // without <cuda.h>

namespace collrt {
struct GpuState {};
} // namespace collrt

collResult_t collrt::launchOnGpu(collComm *comm, const GpuLaunch &) {
  std::string why;
  cudaDriver(why);
  return comm->fail(collUnhandledCudaError, why);
}
void collrt::abortGpu(collComm *) {}
void collrt::releaseGpu(collComm *) {}

#endif
