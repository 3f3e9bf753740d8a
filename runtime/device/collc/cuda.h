//===- cuda.h - Device primitives on the GPU -------------------------------===//
//
// collc::Block for nvcc, with host.h's semantics and FIFO wire formats,
// split as NCCL splits its primitives: cuda_sync.h (counters, fences,
// waits), cuda_vec.h (arithmetic, 16-byte loads and stores, reduceCopy),
// cuda_chunks.h (where a step's elements lie), one header per protocol
// (cuda_simple.h, cuda_ll.h, cuda_ll128.h), cuda_peer.h (multimem and
// peer-window chunks) and cuda_peer_steps.h (those steps). All threads of
// a CUDA block call every member.
//
// A FIFO or local step is inlined into the kernel, specialised on its
// primitive's shape (cuda::Shape: sources, destination, receive, send) and
// the plan's protocol, as NCCL compiles a kernel per primitive: its refs
// and pointers are constants of unrolled loops and live in registers; the
// block's state lives in shared memory, as NCCL's ncclShmem; the steps on
// peers' buffers are calls (or hold calls) that take the loop by value, and
// nothing else is live across them. A step runs its protocol's loop for the element
// size. A kernel compiled for one (type, op) inlines its arithmetic in
// every loop; the kernel for the other pairs compiles plain-memory runs
// (Simple, local and peer steps) per common pair, chosen once per run, and
// otherwise chooses per word.
// Waits are one thread's: the sender polls the receiver's head only when
// its cached copy says the FIFO is full, a Simple receiver the tail; LL and
// LL128 receivers wait on the flags in the data instead. A step then has
// one block barrier after its data, and another before it only when a
// thread waited. The last thread posts the counters, so that its fence
// overlaps thread 0's next wait. Multimem steps (sm_90+) use
// Args::multicast, peer-window steps the peers' buffers in Args::peers; a
// plan with either starts and ends at Args::barrier.
// Launch with blockDim.x a multiple of 32, at most COLLC_CUDA_MAX_THREADS,
// and every block resident at once (blocks of a rank wait for each other).
//
//===----------------------------------------------------------------------===//

#ifndef COLLC_DEVICE_CUDA_H
#define COLLC_DEVICE_CUDA_H

#include "collc/cuda_ll128.h"
#include "collc/cuda_divide.h"
#include "collc/cuda_peer_steps.h"
#include "collc/cuda_simple.h"

#ifndef COLLC_CUDA_MAX_THREADS
#define COLLC_CUDA_MAX_THREADS 512
#endif

#define COLLC_DEVICE static __device__ __forceinline__
#define COLLC_KERNEL(name)                                                                         \
  __global__ void __launch_bounds__(COLLC_CUDA_MAX_THREADS, 1) name(const ::collc::Args *collcArgs)
#define COLLC_BLOCK_ARGS (collcArgs + blockIdx.x)
// A kernel that runs body (run<T, O>: a plan's loop for one type and op).
#define COLLC_TYPED_KERNEL(name, ...)                                                              \
  COLLC_KERNEL(name) { __VA_ARGS__(COLLC_BLOCK_ARGS); }
#define COLLC_HOST_FN(name) nullptr
#define COLLC_CUDA_FN(name)                                                                        \
  (::collc::CudaEntry{(const void *)&name, &::collc::cuda::launch<&name>, &::collc::cuda::divide,  \
                      &::collc::cuda::load<&name>})

namespace collc {
namespace cuda {
// DeviceLaunchFn for kernel K.
template <void (*K)(const Args *)> const char *launch(const DeviceLaunch &l) {
  const Args *args = l.args;
  void *params[] = {&args};
  const cudaStream_t stream = static_cast<cudaStream_t>(l.stream);
  const cudaError_t e =
      l.cooperative
          ? cudaLaunchCooperativeKernel((const void *)K, dim3(l.blocks), dim3(l.threads), params, 0,
                                        stream)
          : cudaLaunchKernel((const void *)K, dim3(l.blocks), dim3(l.threads), params, 0, stream);
  return e == cudaSuccess ? nullptr : cudaGetErrorName(e);
}
// DeviceLoadFn for kernel K: asking for a function's attributes loads its
// module, as NCCL does for its kernels at init.
template <void (*K)(const Args *)> const char *load() {
  cudaFuncAttributes attr;
  cudaError_t e = cudaFuncGetAttributes(&attr, (const void *)K);
  if (e == cudaSuccess)
    e = cudaFuncGetAttributes(&attr, (const void *)&divideKernel);
  return e == cudaSuccess ? nullptr : cudaGetErrorName(e);
}
} // namespace cuda

// P: the protocol of every FIFO of the plan, where the emitter knows one,
// so that a step compiles that protocol's loop only; else kAnyProtocol.
// T, O: the (type, op) of every launch of this kernel (the runtime picks
// it by them), so that a step compiles that arithmetic only; else
// kAnyType and kAnyOp.
// C: how many primitive calls the plan's shapes make. With few, every
// step is inlined into the kernel; with more (hundreds, in plans that do
// not reroll into loops), each step shape is one call, whose inlined
// copies would cost nvcc minutes.
template <int32_t P, int32_t T = kAnyType, int32_t O = kAnyOp, int32_t C = 0> class BlockOf {
  static constexpr bool kInlineSteps = C <= 32;
  static constexpr uint32_t kWarps = COLLC_CUDA_MAX_THREADS / 32;

public:
  // The block's Args in shared memory, as NCCL keeps its ncclShmem: the
  // steps read them after every fence and volatile access, which would
  // otherwise reload them from global memory.
  __device__ explicit BlockOf(const Args *args) : a(shared(args)), s(state()) {
    // One thread sets the state up for all. The counters are those this
    // threadblock wrote last launch; the send FIFO's head lies in this
    // GPU's memory (or the proxy's mirror) and says how many sends fit, so
    // the first send polls only where the FIFO is full.
    if (threadIdx.x == 0) {
      const int64_t perLoop = a->chunks * a->slice;
      s.loops = a->count == 0 ? 0 : (a->count + perLoop - 1) / perLoop;
      s.recvStep = a->recv.slots ? cuda::loadSys(a->recv.head) : 0;
      s.sendStep = a->send.slots ? cuda::loadSys(a->send.tail) : 0;
      s.room = a->send.slots ? cuda::loadSys(a->send.head) + uint64_t(a->send.numSlots) : 0;
    }
    for (uint32_t w = threadIdx.x; w < kWarps; w += blockDim.x)
      s.iter[w] = -1;
    __syncthreads();
  }

  // What generated code reads per loop, from the shared copy of Args: a
  // value held in a register would be live across the steps' calls.
  __device__ int64_t rank() const { return a->rank; }
  __device__ const int64_t *table() const { return a->table; }

  // Starts the next loop over the user buffer; false after the last.
  // A plan with steps on other ranks' buffers starts and ends at a barrier
  // of every rank's threadblocks: inputs are in place before any peer reads
  // them, and every store has landed before any rank returns.
  __device__ bool nextLoop() {
    if (dead)
      return false;
    // The warp's lanes all read the count before any stores the next.
    int64_t &count = s.iter[threadIdx.x / 32];
    const int64_t iter = count + 1;
    __syncwarp();
    count = iter;
    if (iter == 0 && a->barrier)
      dead = arrive(a);
    if (dead)
      return false;
    const int64_t loop = a->replica + iter * (a->replicas > 1 ? a->replicas : 1);
    if (loop >= s.loops) {
      if (a->barrier)
        dead = arrive(a);
      // LL and LL128 receivers read flags, not the tail: without a proxy it
      // is written once per launch, for the next launch to start from.
      if (a->send.slots && (P != kAnyProtocol ? P : a->send.protocol) != kSimple &&
          threadIdx.x == 0)
        cuda::storeSys(a->send.tail, s.sendStep);
      return false;
    }
    const int64_t perLoop = a->chunks * a->slice, rest = a->count - loop * perLoop;
    s.loop = loop;
    s.width = rest < perLoop ? rest : perLoop;
    s.q = (s.width + a->chunks - 1) / a->chunks;
    return true;
  }

  // The destination, if any, is always the last ref of a step.
  __device__ void send(Ref src) { step<2, 1, false, false, true>({src, {}}); }
  __device__ void recv(Ref dst) { step<2, 0, true, true, false>({{}, dst}); }
  __device__ void recvCopySend(Ref dst) { step<2, 0, true, true, true>({{}, dst}); }
  __device__ void recvReduceSend(Ref src) { step<2, 1, false, true, true>({src, {}}); }
  __device__ void recvReduceCopy(Ref src, Ref dst) { step<2, 1, true, true, false>({src, dst}); }
  __device__ void recvReduceCopySend(Ref src, Ref dst) { step<2, 1, true, true, true>({src, dst}); }
  __device__ void copy(Ref src, Ref dst) { step<2, 1, true, false, false>({src, dst}); }
  // The same on a direct connection: `to` is where the receiver stores.
  __device__ void send(Ref src, Direct to) { step<2, 1, false, false, true>({src, {}}, &to.ref); }
  __device__ void recvCopySend(Ref dst, Direct to) {
    step<2, 0, true, true, true>({{}, dst}, &to.ref);
  }
  __device__ void recvReduceSend(Ref src, Direct to) {
    step<2, 1, false, true, true>({src, {}}, &to.ref);
  }
  __device__ void recvReduceCopySend(Ref src, Ref dst, Direct to) {
    step<2, 1, true, true, true>({src, dst}, &to.ref);
  }
  // Called as b.reduce({in(1), in(2)}, out(3)): N is the length of the list.
  template <int N> __device__ void reduce(const Ref (&srcs)[N], Ref dst) {
    static_assert(N <= cuda::kMaxSources, "reduce of more chunks than a step takes");
    Ref refs[N + 1];
    for (int i = 0; i < N; ++i)
      refs[i] = srcs[i];
    refs[N] = dst;
    step<N + 1, N, true, false, false>(refs);
  }

  // NVLink multicast: Args::multicast[b] addresses buffer b of every rank
  // (cuda_peer_steps.h has these steps).
  __device__ void multimemLdReduce(Ref src, Ref dst) {
    if (!dead)
      dead = cuda::multimemStepCall<T, O>(here(), true, src, dst);
  }
  __device__ void multimemSt(Ref src, Ref dst) {
    if (!dead)
      dead = cuda::multimemStepCall<T, O>(here(), false, src, dst);
  }
  // multimemLdReduce(src, mid) then multimemSt(mid, dst), fused where it can.
  __device__ void multimemAllReduce(Ref src, Ref mid, Ref dst) {
    if (!dead)
      dead = cuda::multimemAllReduceStep<T, O>(here(), src, mid, dst);
  }

  // Peer windows: Args::peers[r * kMaxBuffers + b] is buffer b of rank r.
  // dst = src reduced over every rank.
  __device__ void readReduce(Ref src, Ref dst) {
    if (!dead)
      dead = cuda::peerStepAt<T, O>(here(), "read_reduce", src, dst, -1, true);
  }
  // src stored to dst on every rank.
  __device__ void put(Ref src, Ref dst) {
    if (!dead)
      dead = cuda::peerStepAt<T, O>(here(), "put", src, dst, -1, false);
  }
  // dst = src of rank `from`.
  __device__ void get(int32_t from, Ref src, Ref dst) {
    if (!dead)
      dead = cuda::peerStepAt<T, O>(here(), "get", src, dst, from, false);
  }

  // Waits until threadblock `tb` (an index into the plan's table) has
  // finished step `index` of its `steps` per loop in this loop (of this
  // replica, whose progress counters these are).
  __device__ __forceinline__ void wait(int32_t tb, int32_t index, int32_t steps) {
    if constexpr (kInlineSteps)
      waitHere(tb, index, steps);
    else
      waitCall(tb, index, steps);
  }

private:
  __device__ __forceinline__ void waitHere(int32_t tb, int32_t index, int32_t steps) {
    if (dead)
      return;
    bool bad = false;
    if (threadIdx.x == 0)
      bad = cuda::waitAtLeast(*a, &a->progress[tb], uint64_t(s.iter[0]) * steps + index + 1, false,
                              "threadblock", tb) == cuda::kGaveUp;
    dead = __syncthreads_or(bad);
  }
  __device__ __noinline__ void waitCall(int32_t tb, int32_t index, int32_t steps) {
    waitHere(tb, index, steps);
  }
  static __device__ const Args *shared(const Args *global) {
    __shared__ Args copy;
    static_assert(sizeof(Args) % 8 == 0 && alignof(Args) == 8, "Args copy in 8-byte words");
    const uint64_t *from = reinterpret_cast<const uint64_t *>(global);
    uint64_t *to = reinterpret_cast<uint64_t *>(&copy);
    for (uint32_t i = threadIdx.x; i < sizeof(Args) / 8; i += blockDim.x)
      to[i] = from[i];
    __syncthreads();
    return &copy;
  }
  __device__ cuda::Geometry geometry() const {
    return {a->count, a->chunks, a->slice, s.width, s.q};
  }
  // This loop, as the calls of cuda_peer_steps.h take it.
  __device__ cuda::LoopAt here() const { return {a, geometry(), s.loop}; }
  // Every threadblock of every rank arrives at the barrier, as at NCCL's
  // LSA barrier, and every poll is of this GPU's memory: the threadblocks
  // of a rank count themselves in its own words; the last resets the count,
  // posts the next generation into every rank's word for this rank, waits
  // for every rank's post in its own, and moves the generation on, which
  // lets the others go. Each rank passes the same barriers, so the
  // generations agree; nothing depends on the launch, so a graph replays it.
  static __device__ __noinline__ bool arrive(const Args *a) {
    __syncthreads();
    bool bad = false;
    if (threadIdx.x == 0) {
      uint64_t *count = a->barrier, *generation = a->barrier + 1, *posts = a->barrier + 2;
      const uint64_t g = cuda::loadGpu(generation); // before arriving: it cannot move yet
      cuda::fenceSys(); // this block's stores to peers land before its rank's post
      auto *c = reinterpret_cast<unsigned long long *>(count);
      if (atomicAdd(c, 1ull) + 1 == a->barrierArrivals) {
        atomicExch(c, 0ull); // the next barrier counts from zero
        cuda::fenceSys();
        for (int32_t q = 0; q < a->nranks; ++q)
          cuda::releaseSys(a->barriers[q] + 2 + a->rank, g + 1);
        for (int32_t q = 0; q < a->nranks && !bad; ++q)
          bad = cuda::waitAtLeast(*a, posts + q, g + 1, true,
                                  "every rank at the peer barrier, rank", q) == cuda::kGaveUp;
        cuda::releaseGpu(generation, g + 1);
      } else {
        bad = cuda::waitAtLeast(*a, generation, g + 1, false,
                                "every threadblock at the peer barrier, rank",
                                a->rank) == cuda::kGaveUp;
      }
    }
    return __syncthreads_or(bad);
  }

  // One instance per primitive: its sources, destination and FIFO ends
  // are constants, and with the plan's protocol so is the loop it runs.
  // Inlined into the kernel (stepHere), it takes the block's FIFO positions
  // and loop by value and returns the positions, so that no pointer into
  // the block escapes and its state stays in registers. A plan with many
  // calls gets one call per step shape (stepCall), the block in memory.
  template <int R, int32_t nsrc, bool hasDst, bool receives, bool sends>
  __device__ __forceinline__ void step(const Ref (&refs)[R], const Ref *direct = nullptr) {
    if constexpr (kInlineSteps)
      stepHere<R, nsrc, hasDst, receives, sends>(refs, direct);
    else
      stepCall<R, nsrc, hasDst, receives, sends>(refs, direct);
  }
  template <int R, int32_t nsrc, bool hasDst, bool receives, bool sends>
  __device__ __noinline__ void stepCall(const Ref (&refs)[R], const Ref *direct) {
    stepHere<R, nsrc, hasDst, receives, sends>(refs, direct);
  }
  template <int R, int32_t nsrc, bool hasDst, bool receives, bool sends>
  __device__ __forceinline__ void stepHere(const Ref (&refs)[R], const Ref *direct) {
    if (dead)
      return;
    cuda::Refs<R> r;
    for (int i = 0; i < R; ++i)
      r.ref[i] = refs[i];
    const cuda::Cursor c =
        stepAt<R, nsrc, hasDst, receives, sends>(here(), {s.recvStep, s.sendStep, s.room, false}, r,
                                                 direct ? *direct : Ref{}, direct != nullptr);
    // stepAt ends at a barrier, after every thread read the old positions.
    s.recvStep = c.recvStep;
    s.sendStep = c.sendStep;
    s.room = c.room;
    dead = c.dead;
  }
  template <int R, int32_t nsrc, bool hasDst, bool receives, bool sends>
  static __device__ __forceinline__ cuda::Cursor stepAt(const cuda::LoopAt &here, cuda::Cursor c,
                                                        const cuda::Refs<R> &refs,
                                                        const Ref &direct, bool hasDirect) {
    const Args &A = *here.a;
    uint64_t &recvStep = c.recvStep, &sendStep = c.sendStep, &room = c.room;
    cuda::Places at;
    at.g = here.g;
    auto place = [&](int i, Ref r, int32_t owner = -1) {
      at.ref[i] = {here.row(r, owner), uint32_t(r.index), r.buffer >= kScratch0};
    };
    for (int r = 0; r < nsrc; ++r)
      place(r, refs.ref[r]);
    if (hasDst)
      place(cuda::kDst, refs.ref[R - 1]);
    const Fifo &in = A.recv, &out = A.send;
    const int32_t protocol = !receives && !sends ? int32_t(kSimple)
                             : P != kAnyProtocol ? P
                             : receives          ? in.protocol
                                                 : out.protocol;
    const bool simple = protocol == kSimple;
    cuda::Step t;
    t.a = here.a;
    t.sends = sends;
    t.recvFromDst = t.toPeer = false;
    t.q = uint32_t(here.g.q);
    t.count = uint32_t(hasDst ? refs.ref[R - 1].count : nsrc ? refs.ref[0].count : 0);
    t.n = t.count * t.q;
    t.bytes = t.n * uint32_t(A.elemSize);
    t.words = (t.bytes + 7) / 8;
    t.recvSlot =
        receives ? in.slots + (recvStep & uint64_t(in.numSlots - 1)) * in.slotBytes : nullptr;
    t.sendSlot =
        sends ? out.slots + (sendStep & uint64_t(out.numSlots - 1)) * out.slotBytes : nullptr;
    t.recvFlag = protocol == kLL ? llFlag(recvStep) : ll128Flag(recvStep);
    t.sendFlag = protocol == kLL ? llFlag(sendStep) : ll128Flag(sendStep);
    t.cleanTo = sends && protocol == kLL && llCleans(sendStep, out.numSlots)
                    ? uint32_t(out.slotBytes / 16)
                    : 0;

    // Thread 0 waits for room to send if the cached head says the FIFO is
    // full, for a Simple step's data, and on direct connections posts that
    // this step waits and learns whether the data came straight to the
    // destination or may go straight to the receiver's. The step may hold
    // its receive slot meanwhile (the runtime sizes FIFOs).
    const bool full = sends && sendStep + 1 > room;
    const bool toPeerMay = sends && simple && hasDirect && A.peers && out.ready;
    if (full || (receives && simple) || toPeerMay) {
      __shared__ uint64_t said[2]; // room, then bits: gave up, from dst, to peer
      if (threadIdx.x == 0) {
        uint64_t seen = room, bits = 0;
        const uint64_t slots = uint64_t(out.numSlots);
        if (full) {
          seen = cuda::waitAtLeast(A, out.head, sendStep + 1 > slots ? sendStep + 1 - slots : 0,
                                   true, "room to send to rank", A.sendPeer);
          bits = seen == cuda::kGaveUp;
          seen += slots;
        }
        if (!bits && receives && simple) {
          if (A.peers && in.ready)
            cuda::releaseSys(in.ready, recvStep + 1);
          bits = cuda::waitAtLeast(A, in.tail, recvStep + 1, true, "data from rank", A.recvPeer) ==
                 cuda::kGaveUp;
          if (!bits && hasDst && in.sizes &&
              in.sizes[recvStep & uint64_t(in.numSlots - 1)] == kDirect)
            bits |= 2;
        }
        if (!bits && toPeerMay && cuda::loadSys(out.ready) >= sendStep + 1)
          bits |= 4;
        said[0] = seen;
        said[1] = bits;
      }
      __syncthreads();
      room = said[0];
      const uint64_t bits = said[1];
      if ((c.dead = bits & 1))
        return c;
      t.recvFromDst = bits & 2;
      if (bits & 4) {
        t.toPeer = true;
        t.sends = false;
        place(cuda::kPeer, direct, A.sendPeer);
      }
    }

    using Sh = cuda::Shape<nsrc, hasDst, receives, sends>;
    bool ok = true;
    cuda::withReduce<T, O>(A, [&](auto rd) {
      if (protocol == kLL)
        ok = cuda::llMove<Sh>(t, at, rd);
      else if (protocol == kLL128)
        ok = cuda::ll128Move<Sh>(t, at, rd);
      else
        cuda::simpleMove<Sh>(t, at, rd);
    });
    if ((c.dead = __syncthreads_or(!ok)))
      return c;
    // The slot's loads have returned (their values were used before the
    // barrier), so the credit needs no fence, as in NCCL; the data a
    // Simple tail publishes does.
    if (cuda::poster()) {
      if (receives)
        cuda::storeSys(in.head, recvStep + 1);
      // LL and LL128 publish a tail and a size per step only for a proxy,
      // which ships whole steps (the runtime leaves them `sizes` only then).
      if (sends && (simple || out.sizes)) {
        if (out.sizes)
          out.sizes[sendStep & uint64_t(out.numSlots - 1)] =
              t.toPeer ? kDirect : wireBytes(protocol, t.bytes, t.cleanTo != 0, out.slotBytes);
        cuda::releaseSys(out.tail, sendStep + 1);
      }
      cuda::finished(A);
    }
    recvStep += receives;
    sendStep += sends;
    return c;
  }

  // The block's loop and FIFO positions, the same in every thread, in
  // shared memory as NCCL keeps its ncclShmem: across the calls of peer
  // steps they hold no registers. Thread 0 sets them up before a barrier;
  // after it, every thread stores the same value, and only after a barrier
  // that every read of the value it replaces precedes: each step ends at
  // one, and each warp counts the loops in a word of its own, read and
  // stored on either side of a warp barrier (nextLoop).
  struct State {
    int64_t loops, loop, width, q;
    uint64_t recvStep, sendStep;
    uint64_t room;        // sends up to this step fit: head, as last seen, + slots
    int64_t iter[kWarps]; // loops started, less one
  };
  static __device__ State &state() {
    __shared__ State shared;
    return shared;
  }

  const Args *a;
  State &s;
  bool dead = false;
};
using Block = BlockOf<kAnyProtocol>;

} // namespace collc

#undef COLLC_DI

#endif // COLLC_DEVICE_CUDA_H
