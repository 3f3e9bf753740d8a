//===- GpuLaunch.cpp - Running an nvcc-built plan on the caller's GPU -----===//
//
// Every call of the driver goes through the table that
// support/CudaDriver.cpp loads; the kernel itself is launched by code that
// nvcc compiled into the application (PlanDesc::cuda), so collrt needs no
// CUDA runtime library.
//
// No launch makes a call that may synchronise the device (cuMemAlloc,
// cuMemFree, cuCtxSynchronize), nor waits on the host for its own kernels
// (but where the symmetric window grows, which every rank does together):
// in a process whose ranks are threads of one context, another rank's
// kernel may spin until this thread queues its part, so such a wait would
// never end.
// Instead, a communicator's plain launches run in the order they were
// made, whichever streams they are on (each waits on its stream for the
// event behind the one before), and what they share is reused and grown
// in that order, on the stream:
// - its Args and progress counters, in one of a ring of slots;
// - scratch buffers and staging for in-place layouts, grown on demand
//   (the old ones freed once the launches before are done, with
//   cuMemFreeAsync, and the new ones made with cuMemAllocAsync);
// - each threadblock's table, copied once per algorithm;
// - the abort flag and the error report, in host-mapped memory, so that
//   collCommAbort reaches running kernels and their errors reach the host;
// - for plans with steps on other ranks' buffers, a symmetric window per
//   rank in CUDA VMM memory that every rank maps (PeerLayout.h): the user's
//   buffers are copied in and out on the stream, and the kernels start and
//   end at a barrier that every threadblock of every rank arrives at,
//   whose words lie at the start of each rank's window (cuda.h's arrive:
//   each rank polls only its own);
//   where the plan has multimem steps and the GPUs NVLink multicast, every
//   rank's window is bound to one multicast object (Nvls.h) whose address
//   the kernels get in Args::multicast.
//
// A launch captured into a CUDA graph runs again on every replay, long
// after the call returned, so it cannot share the ring of slots, scratch
// or staging with later launches: it gets memory of its own, Args copied
// from pinned host memory on each replay, and no event or host wait. The
// graph owns that memory (from the stream-ordered pool, allocated on a
// stream of the communicator's own) through a user object; CUDA calls its
// destructor once the graph is gone, and the next launch frees it on its
// stream (a destructor may make no CUDA call). The kernels read where
// their FIFOs stand from the FIFOs themselves, so replays and plain
// launches interleave freely.
//
//===----------------------------------------------------------------------===//
#include "src/GpuLaunch.h"

#include "src/BlockArgs.h"
#include "src/Comm.h"
#include "src/Multicast.h"
#include "src/PeerLayout.h"
#include "src/Windows.h"
#include "support/CudaDriver.h"
#include "support/Env.h"
#include "transport/MemoryBackend.h"
#include "transport/Nvls.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#if __has_include(<cuda.h>)
#include "support/CudaApi.h"

using namespace collrt;
using collc::PlanDesc;

namespace collrt {

/// The memory of one captured launch, which its graph reads on replay.
struct GraphMemory {
  std::vector<CUdeviceptr> device;
  std::vector<void *> host; // pinned
};

/// The graphs CUDA has destroyed, told by their user objects' destructors
/// (on a thread of CUDA's) and read by the next launch.
struct GraphReclaim {
  std::mutex mutex;
  std::vector<uint64_t> destroyed;
  bool closed = false; // the communicator freed everything itself
};

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
    std::vector<char> uploaded; // the Args and peers its memory holds
  };

  const CudaApi *cu = nullptr;
  Flags *flags = nullptr; // host-mapped
  CUdeviceptr deviceFlags = 0;
  std::array<Slot, 8> slots;
  size_t next = 0;
  // The slot of the latest plain launch and its stream, which the next
  // plain launch waits for where its stream differs.
  Slot *last = nullptr;
  CUstream lastStream = nullptr;
  // Where captured launches' memory is allocated: a stream of its own,
  // non-blocking, that holds nothing else.
  CUstream side = nullptr;
  std::array<CUdeviceptr, collc::kMaxScratch> scratch{};
  std::array<size_t, collc::kMaxScratch> scratchBytes{};
  CUdeviceptr staging = 0;
  size_t stagingBytes = 0;
  // Per algorithm: this rank's threadblocks' tables on the device, by index
  // in the plan's table of threadblocks, per plan.
  std::map<const collc::AlgorithmDesc *, std::vector<std::vector<const int64_t *>>> tables;
  std::vector<CUdeviceptr> tableMemory;
  std::vector<void *> tableSource; // pinned: a captured copy reads it on replay
  // Captured launches' memory, by graph, until CUDA destroys the graph.
  std::map<uint64_t, GraphMemory> graphs;
  uint64_t lastGraph = 0;
  // Plans with steps on other ranks' buffers: the window, the multicast
  // object bound over it, whether a graph has captured a launch on them,
  // and the windows (and objects) such graphs may still use.
  Window symmetric;
  MulticastMapping multicast;
  size_t symmetricBytes = 0;
  bool symmetricCaptured = false;
  std::vector<std::pair<Window, MulticastMapping>> retired;
  // Whether the group can bind multicast objects: -1 not asked yet (the
  // first plan with multimem steps asks), 0 no, for `noMulticast`, 1 yes.
  int canMulticast = -1;
  std::string noMulticast;
  std::shared_ptr<GraphReclaim> reclaim = std::make_shared<GraphReclaim>();
};

} // namespace collrt

namespace {

collResult_t cudaFailed(collComm *comm, const CudaApi &cu, const char *call, CUresult r) {
  return comm->fail(collUnhandledCudaError, cu.describe(call, r));
}

#define COLLRT_CU(call, args)                                                                      \
  do {                                                                                             \
    if (CUresult r_ = cu.call args)                                                                \
      return cudaFailed(comm, cu, #call, r_);                                                      \
  } while (0)

int64_t inUnits(int32_t c, int r) {
  return c == collc::kReduceScatter || c == collc::kAllToAll ? r : 1;
}
int64_t outUnits(int32_t c, int r) {
  return c == collc::kAllGather || c == collc::kAllToAll ? r : 1;
}
bool reduces(int32_t c) {
  return c == collc::kAllReduce || c == collc::kReduceScatter || c == collc::kReduce;
}

// Waits for this communicator's launches so far, whose kernels may use
// its memory. Not the whole context: in a process where ranks are threads,
// another rank's kernel may be waiting for this rank's next launch.
collResult_t idle(collComm *comm, GpuState &s) {
  const CudaApi &cu = *s.cu;
  for (GpuState::Slot &slot : s.slots)
    if (slot.pending) {
      COLLRT_CU(cuEventSynchronize, (slot.done));
      slot.pending = false;
    }
  return collSuccess;
}

// Device memory of at least `need` bytes at `p`, which holds `have`, for
// a plain launch on `stream`: the old memory is freed once the launches
// queued before on the stream, which are all that may read it, are done.
collResult_t grow(collComm *comm, GpuState &s, CUstream stream, CUdeviceptr &p, size_t &have,
                  size_t need) {
  const CudaApi &cu = *s.cu;
  if (need <= have)
    return collSuccess;
  if (p) {
    COLLRT_CU(cuMemFreeAsync, (p, stream));
    p = 0;
    have = 0;
  }
  COLLRT_CU(cuMemAllocAsync, (&p, need, stream));
  have = need;
  return collSuccess;
}

// Device memory of `bytes` at `p` for a launch on `stream`, from the
// stream-ordered pool: for a plain launch on its stream, and for a captured
// one (whose capture may make no allocation) on the side stream, ready
// once made (the side stream holds nothing else to wait for).
collResult_t allocate(collComm *comm, GpuState &s, CUstream stream, bool captured, size_t bytes,
                      CUdeviceptr &p) {
  const CudaApi &cu = *s.cu;
  if (!captured) {
    COLLRT_CU(cuMemAllocAsync, (&p, bytes, stream));
    return collSuccess;
  }
  if (!s.side)
    COLLRT_CU(cuStreamCreate, (&s.side, CU_STREAM_NON_BLOCKING));
  COLLRT_CU(cuMemAllocAsync, (&p, bytes, s.side));
  COLLRT_CU(cuStreamSynchronize, (s.side));
  return collSuccess;
}

// Collective: whether the group can bind multicast objects, asked once.
collResult_t askMulticast(collComm *comm, GpuState &s) {
  if (s.canMulticast >= 0)
    return collSuccess;
  std::string error;
  // Rank 0 hands the multicast object out as a descriptor, which reaches
  // only processes of its own host; across an NVLink domain that would take
  // a fabric handle of the object, which collrt does not make yet.
  if (!comm->transport->passesFdsEverywhere()) {
    s.canMulticast = 0;
    s.noMulticast = "its ranks span hosts, and the multicast object's descriptor cannot";
    return collSuccess;
  }
  if (collResult_t r = multicastSupport(*s.cu, comm->bootstrap, s.noMulticast, error))
    return comm->fail(r, error);
  s.canMulticast = s.noMulticast.empty();
  return collSuccess;
}

// The symmetric window, of at least `bytes` on every rank, bound to a
// multicast object where `multicast` asks and the group can (collective:
// the ranks launch the same plans at the same sizes, so they grow it
// together).
collResult_t symmetricWindow(collComm *comm, GpuState &s, size_t bytes, bool multicast) {
  const bool bind = multicast && s.canMulticast == 1;
  if (s.symmetricBytes >= bytes && (!bind || s.multicast.base))
    return collSuccess;
  std::string error;
  size_t granularity = 1;
  if (bind)
    if (collResult_t r = multicastGranularity(*s.cu, comm->nranks, granularity, error))
      return comm->fail(r, error);
  if (s.symmetricBytes) {
    // Every rank's kernels are done with the old window: this rank's here,
    // the others' once they reach the barrier.
    if (collResult_t r = idle(comm, s))
      return r;
    if (collResult_t r = comm->bootstrap.barrier(error))
      return comm->fail(r, error);
    if (s.symmetricCaptured) { // a graph replays on it: it lives as long as the communicator
      s.retired.emplace_back(std::move(s.symmetric), s.multicast);
    } else {
      unbindMulticast(*s.cu, s.multicast);
      comm->transport->release(s.symmetric);
    }
    // Doubling at least, where it grows: retired windows add up to less
    // than the last.
    bytes = std::max(bytes, s.symmetricBytes < bytes ? 2 * s.symmetricBytes : s.symmetricBytes);
    s.symmetric = Window{};
    s.multicast = MulticastMapping{};
    s.symmetricBytes = 0;
    s.symmetricCaptured = false;
  }
  bytes = (bytes + granularity - 1) / granularity * granularity;
  const MemoryBackend *memory = cudaMemory(error);
  if (!memory)
    return comm->fail(collUnhandledCudaError, error);
  // Zeroed: every rank's barrier words start with no arrivals, at generation 0.
  if (collResult_t r = comm->transport->exchangeWindow(bytes, s.symmetric, error, memory))
    return comm->fail(r, error);
  s.symmetricBytes = bytes;
  if (!bind)
    return collSuccess;
  std::string why;
  if (collResult_t r = bindMulticast(*s.cu, comm->bootstrap, *comm->transport, comm->rank,
                                     comm->nranks, s.symmetric, bytes, s.multicast, why, error))
    return comm->fail(r, error);
  if (!why.empty()) { // the unicast form from now on, as NCCL does where NVLS fails
    s.canMulticast = 0;
    s.noMulticast = "binding NVLink multicast failed (" + why + ")";
  }
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
  COLLRT_CU(cuMemHostAlloc,
            (&host, sizeof(GpuState::Flags), CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
  s->flags = static_cast<GpuState::Flags *>(host);
  memset(host, 0, sizeof(GpuState::Flags));
  COLLRT_CU(cuMemHostGetDevicePointer, (&s->deviceFlags, host, 0));
  for (GpuState::Slot &slot : s->slots)
    COLLRT_CU(cuEventCreate, (&slot.done, CU_EVENT_DISABLE_TIMING));
  out = s;
  return collSuccess;
}

// The tables of this rank's threadblocks, on the device.
collResult_t tablesOf(collComm *comm, GpuState &s, const collc::AlgorithmDesc *alg, CUstream stream,
                      bool captured, const std::vector<std::vector<const int64_t *>> *&out) {
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
    const size_t bytes = packed.size() * sizeof(int64_t);
    if (collResult_t r = allocate(comm, s, stream, captured, bytes, memory))
      return r;
    s.tableMemory.push_back(memory);
    void *source = nullptr;
    COLLRT_CU(cuMemHostAlloc, (&source, bytes, CU_MEMHOSTALLOC_PORTABLE));
    s.tableSource.push_back(source);
    memcpy(source, packed.data(), bytes);
    COLLRT_CU(cuMemcpyHtoDAsync, (memory, source, bytes, stream));
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

// Frees a captured launch's memory, which no kernel uses any more: on
// `stream`, in its order, or where it is null at once.
void freeGraphMemory(const CudaApi &cu, GraphMemory &m, const CUstream *stream) {
  for (CUdeviceptr p : m.device)
    if (stream)
      cu.cuMemFreeAsync(p, *stream);
    else
      cu.cuMemFree(p);
  for (void *p : m.host)
    cu.cuMemFreeHost(p);
  m = GraphMemory{};
}

// What a graph's user object points to: whom to tell, and which graph.
struct GraphTicket {
  std::shared_ptr<GraphReclaim> reclaim;
  uint64_t graph;
};

void graphDestroyed(void *p) {
  auto *t = static_cast<GraphTicket *>(p);
  {
    std::lock_guard<std::mutex> lock(t->reclaim->mutex);
    if (!t->reclaim->closed)
      t->reclaim->destroyed.push_back(t->graph);
  }
  delete t;
}

// Frees the memory of the graphs CUDA has destroyed since the last launch
// (their launches are done), in the order of `stream`.
void reclaimGraphs(GpuState &s, CUstream stream) {
  std::vector<uint64_t> destroyed;
  {
    std::lock_guard<std::mutex> lock(s.reclaim->mutex);
    destroyed.swap(s.reclaim->destroyed);
  }
  for (uint64_t g : destroyed) {
    auto it = s.graphs.find(g);
    if (it == s.graphs.end())
      continue;
    freeGraphMemory(*s.cu, it->second, &stream);
    s.graphs.erase(it);
  }
}

// Hands `owned` to the graph that `stream` is capturing into.
collResult_t adopt(collComm *comm, GpuState &s, CUstream stream, GraphMemory &owned) {
  const CudaApi &cu = *s.cu;
  CUstreamCaptureStatus status;
  cuuint64_t id;
  CUgraph graph = nullptr;
  const CUgraphNode *deps = nullptr;
  size_t numDeps = 0;
  COLLRT_CU(cuStreamGetCaptureInfo_v2, (stream, &status, &id, &graph, &deps, &numDeps));
  auto *ticket = new GraphTicket{s.reclaim, ++s.lastGraph};
  CUuserObject object;
  if (CUresult r = cu.cuUserObjectCreate(&object, ticket, &graphDestroyed, 1,
                                         CU_USER_OBJECT_NO_DESTRUCTOR_SYNC)) {
    delete ticket;
    return cudaFailed(comm, cu, "cuUserObjectCreate", r);
  }
  s.graphs[ticket->graph] = std::move(owned); // the destructor may run from here on
  if (CUresult r = cu.cuGraphRetainUserObject(graph, object, 1, CU_GRAPH_USER_OBJECT_MOVE)) {
    cu.cuUserObjectRelease(object, 1);
    return cudaFailed(comm, cu, "cuGraphRetainUserObject", r);
  }
  return collSuccess;
}

collResult_t enqueue(collComm *comm, GpuState *s, const GpuLaunch &l, bool captured,
                     GraphMemory &owned);

} // namespace

collResult_t collrt::launchOnGpu(collComm *comm, const GpuLaunch &l) {
  GpuState *s = nullptr;
  if (collResult_t r = state(comm, s))
    return r;
  const CudaApi &cu = *s->cu;
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
  if (capture == CU_STREAM_CAPTURE_STATUS_INVALIDATED)
    return comm->fail(collInvalidUsage, "the stream's capture into a CUDA graph was "
                                        "invalidated before this launch");
  const bool captured = capture == CU_STREAM_CAPTURE_STATUS_ACTIVE;
  if (!captured) // frees on the stream, which a capture would record
    reclaimGraphs(*s, stream);
  GraphMemory owned;
  collResult_t r = enqueue(comm, s, l, captured, owned);
  if (r == collSuccess && captured)
    return adopt(comm, *s, stream, owned);
  freeGraphMemory(cu, owned, &s->side);
  return r;
}

collResult_t collrt::bindWindow(collComm *comm, collWindow *window) {
  GpuState *s = nullptr;
  if (collResult_t r = state(comm, s))
    return r;
  if (collResult_t r = askMulticast(comm, *s))
    return r;
  if (s->canMulticast != 1)
    return collSuccess;
  std::string error, why;
  size_t granularity = 0;
  if (collResult_t r = multicastGranularity(*s->cu, comm->nranks, granularity, error))
    return comm->fail(r, error);
  // The same bytes of every rank's allocation: what the smallest holds.
  const std::vector<size_t> &size = window->window.size;
  const size_t bytes = *std::min_element(size.begin(), size.end()) / granularity * granularity;
  if (!bytes)
    return collSuccess;
  if (collResult_t r =
          bindMulticast(*s->cu, comm->bootstrap, *comm->transport, comm->rank, comm->nranks,
                        window->window, bytes, window->multicast, why, error))
    return comm->fail(r, error);
  if (!why.empty() && Env::get().debug && comm->rank == 0)
    fprintf(stderr,
            "collc INFO collCommWindowRegister: no multicast object over the window: "
            "%s\n",
            why.c_str());
  return collSuccess;
}

void collrt::unbindWindow(collWindow *window) {
  std::string why;
  if (window->multicast.handle)
    if (const CudaApi *cu = cudaDriver(why))
      unbindMulticast(*cu, window->multicast);
}

namespace {

CUdeviceptr addressOf(const void *p) { return CUdeviceptr(reinterpret_cast<uintptr_t>(p)); }
bool overlap(CUdeviceptr a, int64_t na, CUdeviceptr b, int64_t nb) {
  return na && nb && a < b + nb && b < a + na;
}

/// One launch being queued on its stream, as its stages fill it in; a
/// captured one's memory goes to `owned`.
struct StreamLaunch {
  collComm *comm;
  GpuState *s;
  const GpuLaunch &l;
  const bool captured;
  GraphMemory &owned;
  const CudaApi &cu;
  const PlanDesc &plan;
  const CUstream stream;
  const int R, me;
  const int32_t coll;
  const int64_t es, E, unit, inBytes, outBytes;

  // The buffers as the plan expects them, and the staging behind them.
  CUdeviceptr staging = 0;
  collResult_t staged = collSuccess;
  int64_t half = 0;
  CUdeviceptr in = 0, out = 0, copyBack = 0;
  int64_t loops = 0;
  char *scratch[collc::kMaxScratch] = {};
  // Steps on other ranks' buffers.
  std::vector<char *> peers;
  CUdeviceptr userOut = 0;
  uint64_t *barrier = nullptr;
  size_t barriersAt = 0; // in `peers`
  char *multicast[collc::kMaxBuffers] = {};
  bool multimem = false;
  std::string note; // why multimem steps run unicast, if they do
  // The threadblocks' Args and where they go.
  std::vector<collc::Args> args;
  size_t progressBytes = 0;
  GpuState::Slot own;
  GpuState::Slot *slot = nullptr;
  int32_t threads = 0;

  StreamLaunch(collComm *comm, GpuState *s, const GpuLaunch &l, bool captured, GraphMemory &owned)
      : comm(comm), s(s), l(l), captured(captured), owned(owned), cu(*s->cu), plan(*l.plan),
        stream(static_cast<CUstream>(l.stream)), R(comm->nranks), me(comm->rank),
        coll(plan.collective), es(int64_t(collTypeSize(l.type))), E(l.count), unit(E * es),
        inBytes(inUnits(coll, R) * unit), outBytes(outUnits(coll, R) * unit) {}

  collResult_t run();
  collResult_t memoryFor(CUdeviceptr &shared, size_t &have, size_t need, CUdeviceptr &at);
  CUdeviceptr stage(int which);
  collResult_t move(CUdeviceptr dst, CUdeviceptr src, int64_t n);
  collResult_t layOutBuffers();
  collResult_t allocateScratch();
  collResult_t placeInWindow();
  collResult_t fillArgs();
  collResult_t upload();
  collResult_t launch();
  void report() const;
};

// Device memory of at least `need` bytes: the communicator's, grown, or
// for a captured launch its own.
collResult_t StreamLaunch::memoryFor(CUdeviceptr &shared, size_t &have, size_t need,
                                     CUdeviceptr &at) {
  if (!captured) {
    collResult_t r = grow(comm, *s, stream, shared, have, need);
    at = shared;
    return r;
  }
  at = 0;
  if (need) {
    if (collResult_t r = allocate(comm, *s, stream, true, need, at))
      return r;
    owned.device.push_back(at);
  }
  return collSuccess;
}

// Staging, in two halves, made on first use (a captured launch's is its
// own, so it is made only where the layout needs it); 0 where making it
// failed, as `staged` says.
CUdeviceptr StreamLaunch::stage(int which) {
  if (!staging && staged == collSuccess)
    staged = memoryFor(s->staging, s->stagingBytes, size_t(2 * half + 128), staging);
  return staging ? staging + which * half : 0;
}

// dst = src (n bytes), through staging where the two overlap.
collResult_t StreamLaunch::move(CUdeviceptr dst, CUdeviceptr src, int64_t n) {
  if (dst == src || !n)
    return collSuccess;
  if (overlap(dst, n, src, n)) {
    const CUdeviceptr via = stage(1);
    if (staged != collSuccess)
      return staged;
    COLLRT_CU(cuMemcpyDtoDAsync, (via, src, n, stream));
    src = via;
  }
  COLLRT_CU(cuMemcpyDtoDAsync, (dst, src, n, stream));
  return collSuccess;
}

// After: `in` and `out` are the buffers as the plan expects them, copies
// queued on the stream where the caller's layout differs (as the host
// build does with memcpy).
collResult_t StreamLaunch::layOutBuffers() {
  half = (std::max(inBytes, outBytes) + 127) & ~int64_t(127);
  CUdeviceptr send = addressOf(l.send), recv = addressOf(l.recv);
  in = send;
  out = recv;
  if (coll == collc::kBroadcast && me != plan.root && !send)
    in = send = stage(0);
  if (coll == collc::kReduce && me != plan.root && !recv)
    out = recv = stage(1);
  if (staged != collSuccess)
    return staged;
  collResult_t moved = collSuccess;
  if (plan.inplace) {
    if (coll == collc::kAllGather) {
      in = recv + me * unit;
      moved = move(in, send, unit);
    } else if (coll == collc::kReduceScatter) {
      if (recv != send + me * unit) {
        in = stage(0);
        moved = staged != collSuccess ? staged : move(in, send, inBytes);
        copyBack = recv;
      }
      out = in + me * unit;
    } else {
      moved = move(recv, send, inBytes);
      in = out = recv;
    }
  } else if (overlap(send, inBytes, recv, outBytes)) {
    in = stage(0);
    moved = staged != collSuccess ? staged : move(in, send, inBytes);
  }
  return moved;
}

// After: `scratch` holds this launch's loops of every scratch buffer,
// unless the plan's scratch lies in the symmetric window.
collResult_t StreamLaunch::allocateScratch() {
  loops = (E + plan.chunks * l.slice - 1) / (plan.chunks * l.slice);
  for (int32_t k = 0; k < plan.numScratch && !l.windows; ++k) {
    CUdeviceptr at = 0;
    if (collResult_t r = memoryFor(s->scratch[k], s->scratchBytes[k],
                                   size_t(loops * plan.scratchChunks[k] * l.slice * es), at))
      return r;
    scratch[k] = reinterpret_cast<char *>(at);
  }
  return collSuccess;
}

// After: steps on other ranks' buffers have this rank's buffers in a
// registered window or copied into the runtime's, every rank's in
// `peers`, the multicast addresses of those bound to a multicast object,
// and the barrier.
collResult_t StreamLaunch::placeInWindow() {
  // The user's own buffers where every rank's lie in registered windows
  // of GPU memory, else copies in the runtime's window.
  std::string error;
  LaunchPlaces places;
  const MemoryBackend *gpu = cudaMemory(error);
  if (collResult_t r =
          launchPlaces(comm, reinterpret_cast<void *>(in), size_t(inBytes),
                       reinterpret_cast<void *>(out), size_t(outBytes), gpu, places, error))
    return comm->fail(r, error);
  const bool registered = places.registered;
  const PeerLayout layout =
      peerLayout(plan, R, unit, inBytes, outBytes, loops, l.slice, es, registered);
  if (multimem)
    if (collResult_t r = askMulticast(comm, *s))
      return r;
  if (collResult_t r = symmetricWindow(comm, *s, size_t(layout.total), multimem))
    return r;
  const std::vector<char *> &base = s->symmetric.base;
  peers = peerTable(layout, base, plan.numScratch);
  if (registered && !pointAtUserBuffers(comm, places, peers, error))
    return comm->fail(collInvalidUsage, error);
  for (int32_t k = 0; k < plan.numScratch; ++k)
    scratch[k] = base[me] + layout.scratchAt[k];
  // Through a multicast object, a buffer that lies at the same offset of
  // every rank's memory bound to it: the runtime's window (not the input
  // of an in-place all-gather, say, whose steps then run unicast), or a
  // registered window bound at registration.
  auto same = [](const std::vector<int64_t> &at) {
    return std::all_of(at.begin(), at.end(), [&](int64_t o) { return o == at[0]; });
  };
  auto through = [&](const std::vector<WindowPlace> &at, int64_t bytes) -> char * {
    const collWindow *w = windowById(comm, at[0].id);
    const bool ok = w && w->multicast.base && int64_t(w->multicast.size) >= at[0].offset + bytes &&
                    std::all_of(at.begin(), at.end(), [&](const WindowPlace &p) {
                      return p.id == at[0].id && p.offset == at[0].offset;
                    });
    return ok ? w->multicast.base + at[0].offset : nullptr;
  };
  char *const mc = multimem ? s->multicast.base : nullptr; // null: the group has none
  if (mc && registered) {
    multicast[collc::kIn] = through(places.in, inBytes);
    multicast[collc::kOut] = through(places.out, outBytes);
    if (!multicast[collc::kIn] || !multicast[collc::kOut])
      note = "the steps on the user's buffers, whose registered windows are not bound to a "
             "multicast object at the same offset on every rank";
  } else if (mc) {
    if (same(layout.inAt))
      multicast[collc::kIn] = mc + layout.inAt[0];
    if (same(layout.outAt))
      multicast[collc::kOut] = mc + layout.outAt[0];
  }
  for (int32_t k = 0; k < plan.numScratch && mc; ++k)
    multicast[collc::kScratch0 + k] = mc + layout.scratchAt[k];
  if (Env::get().debug && me == 0)
    fprintf(stderr, "collc INFO plan %s: steps on other ranks' buffers run %s\n", plan.name,
            registered ? "on the registered windows, without copies"
                       : ("on copies in the runtime's window: " + places.why).c_str());
  if (!registered) {
    const CUdeviceptr windowIn = addressOf(base[me] + layout.inAt[me]),
                      windowOut = addressOf(base[me] + layout.outAt[me]);
    if (!plan.inplace) // what the plan leaves alone comes back unchanged
      COLLRT_CU(cuMemcpyDtoDAsync, (windowOut, out, outBytes, stream));
    if (inBytes)
      COLLRT_CU(cuMemcpyDtoDAsync, (windowIn, in, inBytes, stream));
    userOut = out;
    in = windowIn;
    out = windowOut;
  }
  barrier = reinterpret_cast<uint64_t *>(base[me]);
  // Every rank's barrier words, after the buffers' table (Args::barriers).
  barriersAt = peers.size();
  peers.insert(peers.end(), base.begin(), base.end());
  s->symmetricCaptured |= captured;
  return collSuccess;
}

// After: `args` holds this rank's threadblocks' Args, their progress
// counters as offsets into `slot`, the next of the ring (free now) or for
// a captured launch memory of its own.
collResult_t StreamLaunch::fillArgs() {
  const std::vector<std::vector<const int64_t *>> *tables = nullptr;
  if (collResult_t r = tablesOf(comm, *s, l.algorithm, stream, captured, tables))
    return r;
  const int32_t p = int32_t(l.plan - l.algorithm->plans);
  const int32_t tbs = plan.numThreadblocks;
  progressBytes = (size_t(tbs) * l.shape.replicas * 8 + 127) & ~size_t(127);
  // Reused in stream order: the launch that used it last is queued
  // before this one (run's wait).
  slot = captured ? &own : &s->slots[s->next++ % s->slots.size()];
  const auto flag = [&](size_t offset) { return s->deviceFlags + offset; };
  for (int32_t e = 0; e < tbs * l.shape.replicas; ++e) {
    const int32_t i = e % tbs, replica = e / tbs;
    const collc::ThreadblockDesc &tb = plan.threadblocks[i];
    if (tb.rank != me)
      continue;
    collc::Args a =
        blockArgs(*comm, plan, *l.setup, p, e, l.shape.replicas, l.type, l.op, E, l.slice,
                  reinterpret_cast<char *>(in), reinterpret_cast<char *>(out), scratch);
    a.table = (*tables)[p][i];
    a.barrier = barrier;
    std::copy(multicast, multicast + collc::kMaxBuffers, a.multicast);
    // Filled in by upload, once the slot's address is known.
    a.progress = reinterpret_cast<uint64_t *>(uintptr_t(replica) * tbs * 8);
    a.abort = reinterpret_cast<volatile int32_t *>(flag(offsetof(GpuState::Flags, abort)));
    a.timeoutSeconds = Env::get().timeoutSeconds;
    a.error = reinterpret_cast<int32_t *>(flag(offsetof(GpuState::Flags, error)));
    a.errorText = reinterpret_cast<char *>(flag(offsetof(GpuState::Flags, text)));
    args.push_back(a);
  }
  for (collc::Args &a : args) // the barrier opens once this rank's threadblocks are in
    a.barrierArrivals = args.size();
  if (args.empty() && l.windows) // it could not tell when the peers' stores are done
    return comm->fail(collInvalidUsage,
                      "rank " + std::to_string(me) + " has no threadblock in plan " + plan.name +
                          ", whose steps reach other ranks' buffers: on the GPU every rank takes "
                          "part in its barriers");
  return collSuccess;
}

// After: the slot's memory holds zeroed progress counters (where a
// threadblock waits for another), the Args and the peers' windows, copied
// on the stream unless it holds them already.
collResult_t StreamLaunch::upload() {
  const size_t argsBytes = args.size() * sizeof(collc::Args),
               peersBytes = peers.size() * sizeof(char *);
  const size_t need = progressBytes + argsBytes + peersBytes;
  if (captured) {
    if (collResult_t r = allocate(comm, *s, stream, true, need, slot->memory))
      return r;
    owned.device.push_back(slot->memory);
    slot->bytes = need;
  } else {
    const CUdeviceptr had = slot->memory;
    if (collResult_t r = grow(comm, *s, stream, slot->memory, slot->bytes, need))
      return r;
    if (slot->memory != had)
      slot->uploaded.clear();
  }
  const CUdeviceptr peersAt = slot->memory + progressBytes + argsBytes;
  for (collc::Args &a : args) {
    a.progress =
        reinterpret_cast<uint64_t *>(slot->memory + reinterpret_cast<uintptr_t>(a.progress));
    if (!peers.empty())
      a.peers = reinterpret_cast<char *const *>(peersAt);
    if (a.barrier)
      a.barriers = reinterpret_cast<uint64_t *const *>(peersAt + barriersAt * sizeof(char *));
  }

  // Counters start at zero where a threadblock waits for another's.
  if (std::any_of(args.begin(), args.end(), [](const collc::Args &a) { return a.publishes; }))
    COLLRT_CU(cuMemsetD8Async, (slot->memory, 0, progressBytes, stream));
  // Args, then the peers' windows: from pageable memory, copied before the
  // call returns, or for a graph from pinned memory read on every replay.
  const auto bytesOf = [](const auto &v) { return reinterpret_cast<const char *>(v.data()); };
  std::vector<char> bytes(bytesOf(args), bytesOf(args) + argsBytes);
  bytes.insert(bytes.end(), bytesOf(peers), bytesOf(peers) + peersBytes);
  const char *source = bytes.data();
  if (captured) {
    void *pinned = nullptr;
    COLLRT_CU(cuMemHostAlloc, (&pinned, bytes.size(), CU_MEMHOSTALLOC_PORTABLE));
    owned.host.push_back(pinned);
    memcpy(pinned, bytes.data(), bytes.size());
    source = static_cast<const char *>(pinned);
  }
  // A plain launch like the last one in its slot (the same plan, buffers
  // and count, as a training loop makes) finds its Args there already.
  if (!captured && bytes == slot->uploaded)
    return collSuccess;
  COLLRT_CU(cuMemcpyHtoDAsync, (slot->memory + progressBytes, source, bytes.size(), stream));
  if (!captured)
    slot->uploaded = std::move(bytes);
  return collSuccess;
}

// After: the kernel, the copy of the output back to the user's buffer,
// avg's division and, for a plain launch, the slot's event are queued.
collResult_t StreamLaunch::launch() {
  const collc::DeviceLaunch kernel{
      reinterpret_cast<const collc::Args *>(slot->memory + progressBytes), int32_t(args.size()),
      l.shape.threads > 0 ? l.shape.threads : 512, l.stream, 0};
  threads = kernel.threads;
  if (const char *e = collc::cudaEntryFor(plan, l.type, l.op).launch(kernel))
    return comm->fail(collUnhandledCudaError, std::string("cudaLaunchKernel: ") + e);
  if (userOut) {
    COLLRT_CU(cuMemcpyDtoDAsync, (userOut, out, outBytes, stream));
    out = userOut;
  }
  if (l.op == collAvg && reduces(coll) && (coll != collc::kReduce || me == plan.root))
    if (const char *e = plan.cuda.divide(reinterpret_cast<void *>(out), E, l.type, R, l.stream))
      return comm->fail(collUnhandledCudaError, std::string("collc's avg division: ") + e);
  if (copyBack)
    COLLRT_CU(cuMemcpyDtoDAsync, (copyBack, out, unit, stream));
  if (!captured) {
    COLLRT_CU(cuEventRecord, (slot->done, stream));
    slot->pending = true;
    s->last = slot;
    s->lastStream = stream;
  }
  return collSuccess;
}

// Says, under COLL_DEBUG, how the launch runs and how its multimem steps do.
void StreamLaunch::report() const {
  if (!Env::get().debug || me != 0)
    return;
  fprintf(stderr, "collc INFO plan %s on the GPU: %zu threadblocks of %d threads, %s\n", plan.name,
          args.size(), threads, captured ? "captured into a CUDA graph" : "queued");
  const std::string why =
      s->canMulticast == 0 ? s->noMulticast : unicastReason(true, l.type, l.op, reduces(coll));
  if (multimem && why.empty())
    fprintf(stderr,
            "collc INFO plan %s: multimem steps run on NVLink multicast, over "
            "every rank's window bound to one multicast object%s%s\n",
            plan.name, note.empty() ? "" : ", except ", note.c_str());
  else if (multimem)
    fprintf(stderr,
            "collc INFO plan %s: multimem steps run as loads and stores over the "
            "peer windows: %s\n",
            plan.name, why.c_str());
}

collResult_t StreamLaunch::run() {
  // After the communicator's plain launches before it, whichever their
  // streams. (A capture cannot wait for work outside it: a graph's launch
  // has memory of its own, and the FIFOs order its kernels.)
  if (!captured && s->last && s->last->pending && s->lastStream != stream)
    COLLRT_CU(cuStreamWaitEvent, (stream, s->last->done, 0));
  if (collResult_t r = layOutBuffers())
    return r;
  if (collResult_t r = allocateScratch())
    return r;
  for (int32_t i = 0; i < plan.numThreadblocks; ++i)
    multimem |= (plan.threadblocks[i].direct & collc::kTbMultimem) != 0;
  if (l.windows)
    if (collResult_t r = placeInWindow())
      return r;
  if (collResult_t r = fillArgs())
    return r;
  if (args.empty())
    return collSuccess;
  if (collResult_t r = upload())
    return r;
  if (collResult_t r = launch())
    return r;
  report();
  return collSuccess;
}

// Queues the launch on its stream; a captured one's memory goes to `owned`.
collResult_t enqueue(collComm *comm, GpuState *s, const GpuLaunch &l, bool captured,
                     GraphMemory &owned) {
  StreamLaunch e(comm, s, l, captured, owned);
  return e.run();
}

} // namespace

collrt::RelaxedCapture::RelaxedCapture() {
  std::string why;
  if (const CudaApi *cu = cudaDriver(why)) {
    CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
    changed = cu->cuThreadExchangeStreamCaptureMode(&m) == CUDA_SUCCESS;
    mode = int(m);
  }
}

collrt::RelaxedCapture::~RelaxedCapture() {
  std::string why;
  if (changed) {
    CUstreamCaptureMode m = CUstreamCaptureMode(mode);
    cudaDriver(why)->cuThreadExchangeStreamCaptureMode(&m);
  }
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
  // This communicator's kernels end (done, aborted or timed out). Not the
  // whole context's: another rank's may wait for work this thread queues
  // next. The frees below may then wait for the context, as all its work
  // can end.
  idle(comm, *s); // a failure is reported on the communicator
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
  for (void *p : s->tableSource)
    cu.cuMemFreeHost(p);
  // Graphs that outlive the communicator have nothing left to run on.
  {
    std::lock_guard<std::mutex> lock(s->reclaim->mutex);
    s->reclaim->closed = true;
  }
  for (auto &[graph, memory] : s->graphs)
    freeGraphMemory(cu, memory, nullptr);
  unbindMulticast(cu, s->multicast);
  if (s->symmetricBytes)
    comm->transport->release(s->symmetric);
  for (auto &[window, multicast] : s->retired) {
    unbindMulticast(cu, multicast);
    comm->transport->release(window);
  }
  if (s->side)
    cu.cuStreamDestroy(s->side);
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
collResult_t collrt::bindWindow(collComm *, collWindow *) { return collSuccess; }
void collrt::unbindWindow(collWindow *) {}
collrt::RelaxedCapture::RelaxedCapture() {}
collrt::RelaxedCapture::~RelaxedCapture() {}
void collrt::abortGpu(collComm *) {}
void collrt::releaseGpu(collComm *) {}

#endif
