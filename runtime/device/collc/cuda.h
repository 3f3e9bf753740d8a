//===- cuda.h - Device primitives on the GPU -------------------------------===//
//
// collc::Block for nvcc, with host.h's semantics and FIFO wire formats,
// split as NCCL splits its primitives: cuda_sync.h (counters, fences,
// waits), cuda_vec.h (arithmetic, 16-byte loads and stores, reduceCopy),
// cuda_chunks.h (where a step's elements lie), one header per protocol
// (cuda_simple.h, cuda_ll.h, cuda_ll128.h) and cuda_peer.h (multimem and
// peer-window steps). All threads of a CUDA block call every member.
//
// A step runs its protocol's loop for the element size. A kernel compiled
// for one (type, op) inlines its arithmetic in every loop; the kernel for
// the other pairs compiles plain-memory runs (Simple, local and peer
// steps) per common pair, chosen once per run, and otherwise chooses per
// word.
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
#include "collc/cuda_peer.h"
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
// Calls f(Size<kEs>{}) for the element size: the loops are compiled per size.
template <int kEs> struct Size {
  static constexpr int value = kEs;
};
template <class F> COLLC_DI void withSize(int32_t elemSize, F &&f) {
  switch (elemSize) {
  case 1:
    f(Size<1>{});
    break;
  case 2:
    f(Size<2>{});
    break;
  case 4:
    f(Size<4>{});
    break;
  default:
    f(Size<8>{});
    break;
  }
}
} // namespace cuda

// P: the protocol of every FIFO of the plan, where the emitter knows one,
// so that a step compiles that protocol's loop only; else kAnyProtocol.
// T, O: the (type, op) of every launch of this kernel (the runtime picks
// it by them), so that a step compiles that arithmetic only; else
// kAnyType and kAnyOp.
template <int32_t P, int32_t T = kAnyType, int32_t O = kAnyOp> class BlockOf {
public:
  // The block's Args in shared memory, as NCCL keeps its ncclShmem: the
  // steps read them after every fence and volatile access, which would
  // otherwise reload them from global memory.
  __device__ explicit BlockOf(const Args *args) : a(shared(args)) {
    perLoop = a->chunks * a->slice;
    loops = a->count == 0 ? 0 : (a->count + perLoop - 1) / perLoop;
    // Counters this threadblock wrote last launch: the same in every thread.
    if (a->recv.slots)
      recvStep = cuda::loadSys(a->recv.head);
    if (a->send.slots) {
      // The send FIFO's head lies in this GPU's memory (or the proxy's
      // mirror) and says how many sends fit, so the first send polls only
      // where the FIFO is full. The receiver may be moving it: one thread
      // reads it for all, which must agree on whether to wait.
      __shared__ uint64_t head;
      if (threadIdx.x == 0)
        head = cuda::loadSys(a->send.head);
      __syncthreads();
      sendStep = cuda::loadSys(a->send.tail);
      room = head + uint64_t(a->send.numSlots);
    }
  }

  // Starts the next loop over the user buffer; false after the last.
  // A plan with steps on other ranks' buffers starts and ends at a barrier
  // of every rank's threadblocks: inputs are in place before any peer reads
  // them, and every store has landed before any rank returns.
  __device__ bool nextLoop() {
    if (dead)
      return false;
    if (loop < 0 && a->barrier)
      arrive();
    if (dead)
      return false;
    loop = a->replica + ++iter * (a->replicas > 1 ? a->replicas : 1);
    if (loop >= loops) {
      if (a->barrier)
        arrive();
      // LL and LL128 receivers read flags, not the tail: without a proxy it
      // is written once per launch, for the next launch to start from.
      if (a->send.slots && (P != kAnyProtocol ? P : a->send.protocol) != kSimple &&
          threadIdx.x == 0)
        cuda::storeSys(a->send.tail, sendStep);
      return false;
    }
    int64_t rest = a->count - loop * perLoop;
    width = rest < perLoop ? rest : perLoop;
    q = (width + a->chunks - 1) / a->chunks;
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

  // NVLink multicast: Args::multicast[b] addresses buffer b of every rank.
  __device__ void multimemLdReduce(Ref src, Ref dst) { multimem(true, src, dst); }
  __device__ void multimemSt(Ref src, Ref dst) { multimem(false, src, dst); }
  // multimemLdReduce(src, mid) then multimemSt(mid, dst), as two steps
  // count: where every chunk is whole and 16-byte aligned and the (type,
  // op) has a 16-byte form, each unit goes from the load-reduce to the
  // store in registers, as NCCL's NVLS kernels do, with no barrier or
  // fence between (mid still gets it); otherwise the two steps.
  __device__ __noinline__ void multimemAllReduce(Ref src, Ref mid, Ref dst) {
    if (dead)
      return;
    const Args &A = *a;
    const int32_t es = A.elemSize;
    const cuda::Geometry g = geometry();
    const char *const from = A.multicast[src.buffer];
    char *const to = A.multicast[dst.buffer];
#if __CUDA_ARCH__ >= 900
    bool fused = from && to && multimemReduces16(A.datatype, A.op) && src.count == dst.count &&
                 mid.count == dst.count && g.q * es % 16 == 0;
#else
    bool fused = false; // no multimem before sm_90
#endif
    // Decided for the whole step before anything moves: in place, the
    // store overwrites what the load reduces.
    for (int32_t k = 0; k < dst.count && fused; ++k) {
      const cuda::Chunk s = chunkOf(src, k);
      const cuda::Chunk m = chunkOf(mid, k);
      const cuda::Chunk d = chunkOf(dst, k);
      fused = s.valid == g.q && m.valid == g.q && d.valid == g.q &&
              !((reinterpret_cast<uintptr_t>(s.p) | reinterpret_cast<uintptr_t>(m.p) |
                 reinterpret_cast<uintptr_t>(d.p)) &
                15);
    }
    if (!fused) {
      multimem(true, src, mid);
      multimem(false, mid, dst);
      return;
    }
    for (int32_t k = 0; k < dst.count; ++k) {
      const cuda::Chunk s = chunkOf(src, k);
      const cuda::Chunk m = chunkOf(mid, k);
      const cuda::Chunk d = chunkOf(dst, k);
      const char *x = from + (s.p - A.buffers[src.buffer]);
      char *y = to + (d.p - A.buffers[dst.buffer]);
      cuda::unitsInFlight(
          uint32_t(g.q * es / 16),
          [&](uint32_t i) { return cuda::multimemLoad16(A.datatype, A.op, x + 16 * size_t(i)); },
          [&](uint32_t i, cuda::U128 v) {
            cuda::st<cuda::U128>(m.p + 16 * size_t(i), v);
            cuda::multimemStore16(y + 16 * size_t(i), v);
          });
    }
    __syncthreads();
    if (poster()) {
      cuda::fenceSys(); // multicast stores come back to this GPU through the switch
      finished();
      finished();
    }
  }

  // Peer windows: Args::peers[r * kMaxBuffers + b] is buffer b of rank r.
  // dst = src reduced over every rank, all ranks' loads in flight at once.
  __device__ __noinline__ void readReduce(Ref src, Ref dst) {
    if (!peersMapped("read_reduce"))
      return;
    peerRun(src, dst, -1, true);
    peerDone();
  }
  // src stored to dst on every rank.
  __device__ __noinline__ void put(Ref src, Ref dst) {
    if (!peersMapped("put"))
      return;
    peerRun(src, dst, -1, false);
    peerDone();
  }
  // dst = src of rank `from`.
  __device__ __noinline__ void get(int32_t from, Ref src, Ref dst) {
    if (!peersMapped("get"))
      return;
    peerRun(src, dst, from, false);
    peerDone();
  }

  // Waits until threadblock `tb` (an index into the plan's table) has
  // finished step `index` of its `steps` per loop in this loop (of this
  // replica, whose progress counters these are).
  __device__ __noinline__ void wait(int32_t tb, int32_t index, int32_t steps) {
    if (dead)
      return;
    bool bad = false;
    if (threadIdx.x == 0)
      bad = cuda::waitAtLeast(*a, &a->progress[tb], uint64_t(iter) * steps + index + 1, false,
                              "threadblock", tb) == cuda::kGaveUp;
    dead = __syncthreads_or(bad);
  }

private:
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
  __device__ cuda::Geometry geometry() const { return {a->count, a->chunks, a->slice, width, q}; }
  // Calls f with how this kernel's steps reduce: its (type, op), or the
  // launch's chosen per word for its element size.
  template <class F> __device__ void withReduce(F &&f) const {
    if constexpr (T != kAnyType) {
      f(cuda::Typed<T, O>{});
    } else {
      const Args &A = *a;
      cuda::withSize(A.elemSize,
                     [&](auto size) { f(cuda::AnyType<decltype(size)::value>{A.datatype, A.op}); });
    }
  }
  // The thread that posts counters: not thread 0, which waits.
  __device__ bool poster() const { return threadIdx.x == blockDim.x - 1; }
  // Counts a step where another threadblock waits for this one's.
  __device__ void finished() {
    if (a->publishes)
      cuda::releaseGpu(&a->progress[a->tb], cuda::loadGpu(&a->progress[a->tb]) + 1);
  }

  // dst = src reduced over every rank (into this rank's dst), or src stored
  // to dst on every rank: through the multicast address where the runtime
  // gave one and multimem has the (type, op), else as the same step over
  // the peer windows (unicast), as NCCL falls back from NVLS. Stores of 1-
  // and 2-byte elements whose chunk edges miss 4-byte boundaries take the
  // unicast path chunk by chunk.
  __device__ __noinline__ void multimem(bool reduce, Ref src, Ref dst) {
    if (dead)
      return;
    const Args &A = *a;
    char *const mc = A.multicast[reduce ? src.buffer : dst.buffer];
#if __CUDA_ARCH__ >= 900
    const bool hw = mc && (!reduce || (A.elemSize > 1 && multimemReduces(A.datatype, A.op)));
#else
    const bool hw = false; // no multimem before sm_90
#endif
    const char *what = reduce ? "multimem_ld_reduce" : "multimem_st";
    if (!hw) {
      if (!peersMapped(what))
        return;
      peerRun(src, dst, -1, reduce);
      peerDone();
      return;
    }
    bool ok = true;
    for (int32_t k = 0; k < dst.count && ok; ++k) {
      cuda::Chunk s = chunkOf(src, k);
      cuda::Chunk d = chunkOf(dst, k);
      if (reduce) {
        cuda::multimemReduceChunk(A, mc + (s.p - A.buffers[src.buffer]), s, d);
      } else if (!cuda::multimemStoreChunk(A, mc + (d.p - A.buffers[dst.buffer]), s, d.valid)) {
        ok = A.peers != nullptr;
        if (ok)
          peerChunk(src, dst, -1, false, k);
      }
    }
    if (!ok && threadIdx.x == 0)
      cuda::refuse(A, what);
    if ((dead = __syncthreads_or(!ok)))
      return;
    if (poster()) {
      cuda::fenceSys(); // multicast stores come back to this GPU through the switch
      finished();
    }
  }
  // Chunk k of ref r, on this rank, in this loop.
  __device__ cuda::Chunk chunkOf(Ref r, int32_t k) const {
    return cuda::chunkOf(geometry(), row(r), r.buffer >= kScratch0, uint32_t(r.index + k),
                         a->elemSize);
  }
  // The loop row of a ref's buffer, on this rank or on rank `owner`.
  __device__ char *row(Ref r, int32_t owner = -1) const {
    int64_t first = r.buffer >= kScratch0 ? loop * a->scratchChunks[r.buffer - kScratch0] * a->slice
                                          : loop * perLoop;
    char *base = owner < 0 ? a->buffers[r.buffer] : a->peers[owner * kMaxBuffers + r.buffer];
    return base + first * a->elemSize;
  }
  __device__ void place(cuda::Places &at, int i, Ref r, int32_t owner = -1) const {
    at.row[i] = row(r, owner);
    at.index[i] = uint32_t(r.index);
    at.scratch[i] = r.buffer >= kScratch0;
  }
  // Every threadblock of every rank arrives at the barrier, as at NCCL's
  // LSA barrier, and every poll is of this GPU's memory: the threadblocks
  // of a rank count themselves in its own words; the last resets the count,
  // posts the next generation into every rank's word for this rank, waits
  // for every rank's post in its own, and moves the generation on, which
  // lets the others go. Each rank passes the same barriers, so the
  // generations agree; nothing depends on the launch, so a graph replays it.
  __device__ __noinline__ void arrive() {
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
    dead = __syncthreads_or(bad);
  }

  __device__ bool peersMapped(const char *what) {
    if (dead)
      return false;
    if (!a->peers && threadIdx.x == 0)
      cuda::refuse(*a, what);
    dead = !a->peers;
    return !dead;
  }
  __device__ void peerDone() {
    __syncthreads();
    if (poster()) {
      cuda::fenceSys(); // stores to peers are visible before the step counts
      finished();
    }
  }
  // Chunk by chunk: dst = src reduced over every rank (reduce), src stored
  // to dst on every rank (from < 0), or dst = src of rank `from`.
  __device__ void peerRun(Ref src, Ref dst, int32_t from, bool reduce) {
    for (int32_t k = 0; k < dst.count; ++k)
      peerChunk(src, dst, from, reduce, k);
  }
  // Chunk k of such a step; past the source's valid elements, zeros. Runs
  // of more ranks than a Run holds go in batches, the destination a source
  // of the next.
  __device__ __noinline__ void peerChunk(Ref src, Ref dst, int32_t from, bool reduce, int32_t k) {
    const Args &A = *a;
    const int32_t es = A.elemSize, n = A.nranks;
    const cuda::Geometry g = geometry();
    const bool sc = src.buffer >= kScratch0, dc = dst.buffer >= kScratch0;
    const uint32_t ks = uint32_t(src.index + k), kd = uint32_t(dst.index + k);
    const cuda::Chunk s = cuda::chunkOf(g, row(src, reduce ? 0 : from), sc, ks, es);
    const cuda::Chunk d = cuda::chunkOf(g, row(dst, reduce || from >= 0 ? -1 : 0), dc, kd, es);
    const uint32_t whole = s.valid < d.valid ? s.valid : d.valid;
    const int32_t ranks = reduce || from < 0 ? n : 1;
    for (int32_t p0 = 0; p0 < ranks && whole;) {
      cuda::Run run;
      run.nsrc = run.ndst = 0;
      if (reduce) {
        if (p0)
          run.src[run.nsrc++] = d.p;
        for (; p0 < ranks && run.nsrc < cuda::kMaxPtrs; ++p0)
          run.src[run.nsrc++] = cuda::chunkOf(g, row(src, p0), sc, ks, es).p;
        run.dst[run.ndst++] = d.p;
        if (p0 > run.nsrc) // a batch after the first reads what the last stored
          __syncthreads();
      } else {
        run.src[run.nsrc++] = s.p;
        if (from >= 0) {
          run.dst[run.ndst++] = d.p;
          p0 = ranks;
        }
        for (; p0 < ranks && run.ndst < cuda::kMaxPtrs; ++p0)
          run.dst[run.ndst++] = cuda::chunkOf(g, row(dst, p0), dc, kd, es).p;
      }
      withReduce([&](auto rd) { cuda::reduceCopy(rd, run, whole); });
    }
    // Zeros where the source has no elements: what any op makes of them.
    for (int32_t p = 0; p < (reduce || from >= 0 ? 1 : n) && whole < d.valid; ++p) {
      char *to = reduce || from >= 0 ? d.p : cuda::chunkOf(g, row(dst, p), dc, kd, es).p;
      for (uint32_t j = whole + threadIdx.x; j < d.valid; j += blockDim.x)
        memset(to + size_t(j) * es, 0, es);
    }
  }

  // One instance per primitive: its sources, destination and FIFO ends
  // are constants, and with the plan's protocol so is the loop it runs.
  template <int R, int32_t nsrc, bool hasDst, bool receives, bool sends>
  __device__ __noinline__ void step(const Ref (&refs)[R], const Ref *direct = nullptr) {
    if (dead)
      return;
    const Args &A = *a;
    cuda::Places at;
    at.g = geometry();
    for (int r = 0; r < nsrc; ++r)
      place(at, r, refs[r]);
    if (hasDst)
      place(at, cuda::kDst, refs[R - 1]);
    const Fifo &in = A.recv, &out = A.send;
    const int32_t protocol = !receives && !sends ? int32_t(kSimple)
                             : P != kAnyProtocol ? P
                             : receives          ? in.protocol
                                                 : out.protocol;
    const bool simple = protocol == kSimple;
    cuda::Step t;
    t.a = a;
    t.nsrc = nsrc;
    t.type = A.datatype;
    t.op = A.op;
    t.es = A.elemSize;
    t.hasDst = hasDst;
    t.receives = receives;
    t.sends = sends;
    t.recvFromDst = t.toPeer = false;
    t.q = uint32_t(q);
    t.count = uint32_t(hasDst ? refs[R - 1].count : nsrc ? refs[0].count : 0);
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
    const bool toPeerMay = sends && simple && direct && A.peers && out.ready;
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
      if ((dead = bits & 1))
        return;
      t.recvFromDst = bits & 2;
      if (bits & 4) {
        t.toPeer = true;
        t.sends = false;
        place(at, cuda::kPeer, *direct, A.sendPeer);
      }
    }

    bool ok = true;
    withReduce([&](auto rd) {
      if (protocol == kLL)
        ok = cuda::llMove(t, at, rd);
      else if (protocol == kLL128)
        ok = cuda::ll128Move(t, at, rd);
      else
        cuda::simpleMove(t, at, rd);
    });
    if ((dead = __syncthreads_or(!ok)))
      return;
    // The slot's loads have returned (their values were used before the
    // barrier), so the credit needs no fence, as in NCCL; the data a
    // Simple tail publishes does.
    if (poster()) {
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
      finished();
    }
    recvStep += receives;
    sendStep += sends;
  }

  const Args *a;
  int64_t perLoop = 0, loops = 0, loop = -1, iter = -1, width = 0, q = 0;
  uint64_t recvStep = 0, sendStep = 0;
  uint64_t room = 0; // sends up to this step fit: head, as last seen, + slots
  bool dead = false;
};
using Block = BlockOf<kAnyProtocol>;

} // namespace collc

#undef COLLC_DI

#endif // COLLC_DEVICE_CUDA_H
