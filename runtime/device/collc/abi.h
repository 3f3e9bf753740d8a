//===- abi.h - What generated kernels and the runtime share ----------------===//
//
// Plain structs that describe a compiled plan (emitted by collc as constant
// tables) and the arguments a launch hands to each threadblock. Both the
// CUDA and the host builds of a generated file see exactly these layouts.
//
//===----------------------------------------------------------------------===//

#ifndef COLLC_DEVICE_ABI_H
#define COLLC_DEVICE_ABI_H

#include <stddef.h>
#include <stdint.h>

namespace collc {

// Values match coll::Collective and coll::Protocol in the dialect (collc's
// emitter checks this when it is compiled).
enum Collective : int32_t {
  kAllReduce = 0,
  kReduceScatter = 1,
  kAllGather = 2,
  kAllToAll = 3,
  kBroadcast = 4,
  kReduce = 5
};
enum Protocol : int32_t { kSimple = 0, kLL = 1, kLL128 = 2 };

// Buffers a step names: the user's input and output, then scratch buffers
// in the order the plan lists them.
enum Buffer : int32_t { kIn = 0, kOut = 1, kScratch0 = 2 };
constexpr int kMaxBuffers = 8;
constexpr int kMaxScratch = kMaxBuffers - kScratch0;

// FIFO slots of a connection when the plan asks for no more (NCCL_STEPS).
constexpr int32_t kMinSlots = 8;

// Bits of ThreadblockDesc::direct.
enum ThreadblockFlag : int32_t {
  kTbDirectRecv = 1, // receives on a direct connection
  kTbDirectSend = 2, // sends on a direct connection
  kTbPeerSteps = 4,  // has steps on other ranks' buffers (multimem or peer windows)
  kTbMultimem = 8,   // multimem among them
  kTbWaitedOn = 16,  // another threadblock of its rank waits for its steps
};

struct ThreadblockDesc {
  int32_t rank, id;
  int32_t recvPeer, sendPeer; // -1: none
  int32_t channel;
  int32_t protocol;
  int32_t direct; // ThreadblockFlag bits
  int32_t steps;  // steps per loop
  // The kernel code it runs (a coll.shape) and the operands that code reads
  // from a table: host memory, which a launch hands to the kernel where it
  // can read it (Args::table), so that a rank's device holds its own only.
  int32_t shape;
  int32_t tableLength;  // int64_t entries
  const int64_t *table; // null: none
};

struct Args;
using KernelFn = void (*)(const Args *);

// One launch of a plan's kernel on the GPU: `blocks` threadblocks of
// `threads`, each reading its Args from `args` (device memory), on a CUDA
// stream; cooperative where every block must be resident at once.
struct DeviceLaunch {
  const Args *args;
  int32_t blocks, threads;
  void *stream; // a cudaStream_t
  int32_t cooperative;
};
// Launches on the GPU from code that nvcc compiled, so that the runtime
// needs no CUDA runtime library of its own; returns null, or the name of
// CUDA's error.
using DeviceLaunchFn = const char *(*)(const DeviceLaunch &);
// avg on the GPU: the kernels sum, then this divides the `count` elements
// of `type` at `data` by `divisor` on the stream; null, or CUDA's error.
using DeviceDivideFn = const char *(*)(void *data, int64_t count, int32_t type, int32_t divisor,
                                       void *stream);
// Loads the plan's kernels (and avg's) into the current context now: CUDA
// loads modules lazily (CUDA_MODULE_LOADING=LAZY, the default from 12.2) at
// a kernel's first launch, which may wait for the whole device, and so
// hang behind a kernel of this process that spins on a peer. Null, or the
// name of CUDA's error.
using DeviceLoadFn = const char *(*)();
struct CudaEntry {
  const void *kernel; // the __global__ function
  DeviceLaunchFn launch;
  DeviceDivideFn divide;
  DeviceLoadFn load;
};

// The kernel compiled for one (type, op) of the plan: a launch with that
// collDataType_t and collRedOp_t (avg: sum, which the kernels compute for
// it) runs it instead of PlanDesc::cuda, the kernel for any pair.
constexpr int32_t kAnyType = -1, kAnyOp = -1;
struct TypedKernel {
  int32_t type, op;
  CudaEntry cuda;
};

// How many copies of its threadblocks a plan runs, and with how many
// threads each, for inputs of at least `minBytes` per rank (up to the next
// entry's). Replica i of a threadblock runs loops i, i + n, i + 2n, ... of
// the user buffer on connections of its own, as NCCL's channels split a
// buffer: few at small sizes for latency, many at large ones to fill the
// links. The host emulation runs one thread per replica and ignores
// `threads`.
struct LaunchShape {
  int64_t minBytes;
  int32_t replicas, threads;
};
constexpr int32_t kMaxReplicas = 32;

// One size range of an algorithm: a verified plan.
struct PlanDesc {
  const char *name;
  int32_t collective, ranks, chunks, root, inplace;
  int32_t scratchChunks[kMaxScratch];
  int32_t numScratch;
  int64_t minBytes, maxBytes; // bytes per rank of the input, [min, max)
  int32_t protocol;
  int32_t slots;           // FIFO slots every connection needs
  int32_t widest;          // chunks of the widest step
  int32_t numThreadblocks; // over all ranks
  const ThreadblockDesc *threadblocks;
  KernelFn hostKernel; // null in CUDA builds
  CudaEntry cuda;      // nulls in host builds
  int32_t wholeChunks; // counts must be multiples of `chunks`: the
                       // plan moves chunks between positions
  int32_t numLaunches; // by size, increasing; none: 1 replica
  const LaunchShape *launches;
  const char *why; // why this plan at these sizes (collc tune's
                   // winner and margin), for COLL_DEBUG; or null
  int32_t numTyped;
  const TypedKernel *typed;
};

// Whether the kernel compiled for (kernelType, kernelOp) runs a launch of
// (type, op): avg's kernels sum.
inline bool kernelRuns(int32_t kernelType, int32_t kernelOp, int32_t type, int32_t op) {
  const int32_t sum = 0, avg = 4; // collSum, collAvg
  return kernelType == type && (kernelOp == op || (kernelOp == sum && op == avg));
}
// The kernel that runs a launch of `plan` with this type and op.
inline const CudaEntry &cudaEntryFor(const PlanDesc &plan, int32_t type, int32_t op) {
  for (int32_t i = 0; i < plan.numTyped; ++i) {
    const TypedKernel &k = plan.typed[i];
    if (k.cuda.launch && kernelRuns(k.type, k.op, type, op))
      return k.cuda;
  }
  return plan.cuda;
}

// An algorithm: its plans, one per size range, in increasing order.
struct AlgorithmDesc {
  const char *name;
  const char *source;
  int32_t numPlans;
  const PlanDesc *plans;
};

// One end of a connection as a threadblock sees it. The FIFO lives in the
// receiver's memory; `head` is written only by the receiver and `tail` only by
// the sender, both count steps since the connection was made and persist
// across launches, so each side starts a launch from its own counter.
//
// Direct connections (NVLink Simple): the receiver posts `ready` = its step
// + 1 once it waits in that step, whose destination is then free. A sender
// that finds it posted may store the step straight into that destination
// in the receiver's buffers instead of the slot, and marks the slot's size
// kDirect; the counters move as for any step. `ready` is null on every other
// connection: code shared with direct threadblocks may name a direct
// destination there that is only a stand-in.
constexpr int64_t kDirect = -1;
struct Fifo {
  uint64_t *head;
  uint64_t *tail;
  int64_t *sizes; // bytes on the wire of the step in each slot (for
                  // proxies), or kDirect
  char *slots;    // `numSlots` slots of `slotBytes`, a power of two
                  // (step & (numSlots - 1) is a step's slot)
  int64_t slotBytes;
  int32_t numSlots;
  int32_t protocol;
  uint64_t *ready; // written by the receiver, like head
};

// Everything one threadblock of one rank needs for one launch.
struct Args {
  int32_t rank, nranks;
  int32_t tb;                // index into the plan's threadblock table
  int32_t shape;             // its ThreadblockDesc's, and its table where
  const int64_t *table;      // the kernel reads it (device memory on the GPU)
  int32_t replica, replicas; // loops replica, replica + replicas, ...
                             // (replicas 0 reads as 1)
  int32_t recvPeer, sendPeer;
  // Multicast addresses of the buffers (multimem steps on the GPU).
  char *multicast[kMaxBuffers];
  // Every rank's buffers as this rank maps them, rank-major (peer-window
  // steps, and multimem in the host emulation); null where the plan has none.
  char *const *peers;
  // The barrier that starts and ends a plan with steps on other ranks'
  // buffers on the GPU, as NCCL's LSA barrier (every poll local): this
  // rank's barrier words in its window, zero at first: an arrival count and
  // a generation, which this rank's threadblocks poll, then a word per rank
  // q that q sets to each generation it reaches; the arrivals that open it
  // (this rank's threadblocks), and every rank's barrier words as this rank
  // maps them. The host emulation has its own barriers and passes null.
  uint64_t *barrier;
  uint64_t barrierArrivals;
  uint64_t *const *barriers;
  int32_t datatype, op;
  int32_t elemSize;
  int64_t count;  // elements per unit of the user buffer (E)
  int64_t slice;  // elements per chunk per loop (s)
  int64_t chunks; // chunks per unit (C)
  int32_t numScratch;
  int32_t scratchChunks[kMaxScratch];
  char *buffers[kMaxBuffers]; // scratch: one row of chunks per loop
  Fifo recv, send;
  uint64_t *progress; // per threadblock of this rank and this
                      // replica: steps finished
  int32_t publishes;  // kTbWaitedOn: count this threadblock's steps
                      // in progress (nobody reads them otherwise)
  volatile int32_t *abort;
  double timeoutSeconds;
  int32_t *error;  // set to a nonzero code on failure
  char *errorText; // 256 bytes
};

} // namespace collc

#endif // COLLC_DEVICE_ABI_H
