//===- cuda_peer_steps.h - Multimem and peer-window steps as calls --------===//
//
// The steps on other ranks' buffers (cuda_peer.h's chunks, and reduceCopy
// over the peer windows), one call each, given the block's loop by value
// (LoopAt) and returning whether the block gave up, the same in every
// thread. As calls that hold no pointer into the block, they leave its
// state in the registers of the kernel, which inlines every FIFO step.
//
//===----------------------------------------------------------------------===//

#ifndef COLLC_DEVICE_CUDA_PEER_STEPS_H
#define COLLC_DEVICE_CUDA_PEER_STEPS_H

#include "collc/cuda_peer.h"

namespace collc {
namespace cuda {

// Whether the peer windows are mapped; a step that needs them is refused
// where they are not.
COLLC_DI bool peersMapped(const Args &a, const char *what) {
  if (!a.peers && threadIdx.x == 0)
    refuse(a, what);
  return a.peers != nullptr;
}
// Ends a step with stores to peers: they are visible before it counts.
COLLC_DI void peerDone(const Args &a) {
  __syncthreads();
  if (poster()) {
    fenceSys();
    finished(a);
  }
}

// Chunk k of a peer-window step: dst = src reduced over every rank
// (reduce), src stored to dst on every rank (from < 0), or dst = src of
// rank `from`; past the source's valid elements, zeros. Ranks go in
// batches of at most kMaxPtrs pointers, the destination a source of every
// batch after the first; in a typed kernel a batch's count is a constant
// of the loop it runs (withCount), so that its pointers stay in registers.
template <int32_t T, int32_t O>
static __device__ __noinline__ void peerChunk(LoopAt at, Ref src, Ref dst, int32_t from,
                                              bool reduce, int32_t k) {
  const Args &A = *at.a;
  const int32_t n = A.nranks;
  const Chunk s = at.chunk(src, k, reduce ? 0 : from);
  const Chunk d = at.chunk(dst, k, reduce || from >= 0 ? -1 : 0);
  const uint32_t whole = s.valid < d.valid ? s.valid : d.valid;
  if (whole && !reduce && from >= 0) {
    const Ptrs<1, 1> run{{s.p}, {d.p}};
    withReduce<T, O>(A, [&](auto rd) { reduceCopyIn(rd, run, whole); });
  }
  for (int32_t p0 = 0; p0 < (from < 0 ? n : 0) && whole;) {
    const int32_t carry = reduce && p0 ? 1 : 0; // what the last batch stored
    const int32_t take = n - p0 < kMaxPtrs - carry ? n - p0 : kMaxPtrs - carry;
    if (carry) // the last batch's stores are read now
      __syncthreads();
    auto move = [&](auto run) {
#pragma unroll
      for (int i = 0; i < (reduce ? run.nsrc : run.ndst); ++i) {
        if (reduce)
          run.src[i] = i < carry ? d.p : at.chunk(src, k, p0 + i - carry).p;
        else
          run.dst[i] = at.chunk(dst, k, p0 + i).p;
      }
      if (reduce)
        run.dst[0] = d.p;
      else
        run.src[0] = s.p;
      withReduce<T, O>(A, [&](auto rd) { reduceCopyIn(rd, run, whole); });
    };
    if constexpr (T != kAnyType) {
      withCount(take + carry, [&](auto count) {
        constexpr int N = decltype(count)::value;
        if (reduce)
          move(Ptrs<N, 1>{});
        else
          move(Ptrs<1, N>{});
      });
    } else { // one loop for every count: its calls per word dominate
      Run run;
      run.nsrc = reduce ? take + carry : 1;
      run.ndst = reduce ? 1 : take;
      move(run);
    }
    p0 += take;
  }
  // Zeros where the source has no elements: what any op makes of them.
  const int32_t es = A.elemSize;
  for (int32_t p = 0; p < (reduce || from >= 0 ? 1 : n) && whole < d.valid; ++p) {
    char *to = reduce || from >= 0 ? d.p : at.chunk(dst, k, p).p;
    for (uint32_t j = whole + threadIdx.x; j < d.valid; j += blockDim.x)
      memset(to + size_t(j) * es, 0, es);
  }
}

// A peer-window step (see peerChunk), chunk by chunk; `what` names it
// where the windows are not mapped.
template <int32_t T, int32_t O>
COLLC_DI bool peerStep(LoopAt at, const char *what, Ref src, Ref dst, int32_t from, bool reduce) {
  if (!peersMapped(*at.a, what))
    return true;
  for (int32_t k = 0; k < dst.count; ++k)
    peerChunk<T, O>(at, src, dst, from, reduce, k);
  peerDone(*at.a);
  return false;
}

// dst = src reduced over every rank (into this rank's dst), or src stored
// to dst on every rank: through the multicast address where the runtime
// gave one and multimem has the (type, op), else as the same step over
// the peer windows (unicast), as NCCL falls back from NVLS. Stores of 1-
// and 2-byte elements whose chunk edges miss 4-byte boundaries take the
// unicast path chunk by chunk.
template <int32_t T, int32_t O>
COLLC_DI bool multimemStep(LoopAt at, bool reduce, Ref src, Ref dst) {
  const Args &A = *at.a;
  char *const mc = A.multicast[reduce ? src.buffer : dst.buffer];
#if __CUDA_ARCH__ >= 900
  const bool hw = mc && (!reduce || (A.elemSize > 1 && multimemReduces(A.datatype, A.op)));
#else
  const bool hw = false; // no multimem before sm_90
#endif
  const char *what = reduce ? "multimem_ld_reduce" : "multimem_st";
  if (!hw)
    return peerStep<T, O>(at, what, src, dst, -1, reduce);
  bool ok = true;
  for (int32_t k = 0; k < dst.count && ok; ++k) {
    const Chunk s = at.chunk(src, k), d = at.chunk(dst, k);
    if (reduce) {
      multimemReduceChunk(A, mc + (s.p - A.buffers[src.buffer]), s, d);
    } else if (!multimemStoreChunk(A, mc + (d.p - A.buffers[dst.buffer]), s, d.valid)) {
      ok = A.peers != nullptr;
      if (ok)
        peerChunk<T, O>(at, src, dst, -1, false, k);
    }
  }
  if (!ok && threadIdx.x == 0)
    refuse(A, what);
  if (__syncthreads_or(!ok))
    return true;
  if (poster()) {
    fenceSys(); // multicast stores come back to this GPU through the switch
    finished(A);
  }
  return false;
}

// multimemStep(reduce, src, mid) then multimemStep(store, mid, dst), as
// two steps count: where every chunk is whole and 16-byte aligned and the
// (type, op) has a 16-byte form, each unit goes from the load-reduce to the
// store in registers, as NCCL's NVLS kernels do, with no barrier or fence
// between (mid still gets it); otherwise the two steps.
template <int32_t T, int32_t O>
static __device__ __noinline__ bool multimemAllReduceStep(LoopAt at, Ref src, Ref mid, Ref dst) {
  const Args &A = *at.a;
  const int32_t es = A.elemSize;
  const char *const from = A.multicast[src.buffer];
  char *const to = A.multicast[dst.buffer];
#if __CUDA_ARCH__ >= 900
  bool fused = from && to && multimemReduces16(A.datatype, A.op) && src.count == dst.count &&
               mid.count == dst.count && at.g.q * es % 16 == 0;
#else
  bool fused = false; // no multimem before sm_90
#endif
  // Decided for the whole step before anything moves: in place, the
  // store overwrites what the load reduces.
  for (int32_t k = 0; k < dst.count && fused; ++k) {
    const Chunk s = at.chunk(src, k), m = at.chunk(mid, k), d = at.chunk(dst, k);
    fused = s.valid == at.g.q && m.valid == at.g.q && d.valid == at.g.q &&
            !((reinterpret_cast<uintptr_t>(s.p) | reinterpret_cast<uintptr_t>(m.p) |
               reinterpret_cast<uintptr_t>(d.p)) &
              15);
  }
  if (!fused)
    return multimemStep<T, O>(at, true, src, mid) || multimemStep<T, O>(at, false, mid, dst);
  for (int32_t k = 0; k < dst.count; ++k) {
    const Chunk s = at.chunk(src, k), m = at.chunk(mid, k), d = at.chunk(dst, k);
    const char *x = from + (s.p - A.buffers[src.buffer]);
    char *y = to + (d.p - A.buffers[dst.buffer]);
    unitsInFlight(
        uint32_t(at.g.q * es / 16),
        [&](uint32_t i) { return multimemLoad16(A.datatype, A.op, x + 16 * size_t(i)); },
        [&](uint32_t i, U128 v) {
          st<U128>(m.p + 16 * size_t(i), v);
          multimemStore16(y + 16 * size_t(i), v);
        });
  }
  __syncthreads();
  if (poster()) {
    fenceSys(); // multicast stores come back to this GPU through the switch
    finished(A);
    finished(A);
  }
  return false;
}

// The steps a block calls: each one call, with the others inlined in it.
// A typed kernel inlines its peer-window steps, whose chunks are calls:
// with the block's state in shared memory, nothing else is then live across
// a call (the two-shot's spills); the kernel for any pair keeps the step a
// call, as its inlined copies spill more.
template <int32_t T, int32_t O>
static __device__ __noinline__ bool peerStepCall(LoopAt at, const char *what, Ref src, Ref dst,
                                                 int32_t from, bool reduce) {
  return peerStep<T, O>(at, what, src, dst, from, reduce);
}
template <int32_t T, int32_t O>
COLLC_DI bool peerStepAt(LoopAt at, const char *what, Ref src, Ref dst, int32_t from, bool reduce) {
  if constexpr (T == kAnyType)
    return peerStepCall<T, O>(at, what, src, dst, from, reduce);
  else
    return peerStep<T, O>(at, what, src, dst, from, reduce);
}
template <int32_t T, int32_t O>
static __device__ __noinline__ bool multimemStepCall(LoopAt at, bool reduce, Ref src, Ref dst) {
  return multimemStep<T, O>(at, reduce, src, dst);
}

} // namespace cuda
} // namespace collc

#endif // COLLC_DEVICE_CUDA_PEER_STEPS_H
