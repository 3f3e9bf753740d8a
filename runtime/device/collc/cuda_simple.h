//===- cuda_simple.h - The Simple protocol on the GPU ---------------------===//
//
// A Simple slot holds the payload as plain bytes, published by the tail
// (fence, then store) and read after the receiver's acquire of it, so the
// data moves with plain 16-byte loads and stores: per chunk of the step,
// one reduceCopy from the slot and the local sources to the destination
// and the next slot (or the receiver's destination, on a direct
// connection). Elements past the end of a user's buffer (the last
// loop's chunks only) go one at a time, as zeros.
//
//===----------------------------------------------------------------------===//

#ifndef COLLC_DEVICE_CUDA_SIMPLE_H
#define COLLC_DEVICE_CUDA_SIMPLE_H

#include "collc/cuda_chunks.h"

namespace collc {
namespace cuda {

// Elements [from, q) of chunk k, which some ref lacks: sources read as zeros
// there, the destination takes only its valid ones, the slot all.
template <class Rd>
static __device__ __noinline__ void simpleEdge(const Step &s, const Places &at, uint32_t k,
                                               uint32_t from, Rd rd) {
  constexpr int kEs = Rd::kEs;
  using B = typename UnitOf<kEs>::type;
  const size_t at0 = size_t(k) * s.q * kEs;
  const Chunk d = s.hasDst || s.recvFromDst ? at.chunk(kDst, k, kEs) : Chunk{};
  const Chunk p = s.toPeer ? at.chunk(kPeer, k, kEs) : Chunk{};
  for (uint32_t j = from + threadIdx.x; j < s.q; j += blockDim.x) {
    B v = 0;
    bool have = false;
    if (s.recvFromDst || s.receives) {
      v = s.recvFromDst ? (j < d.valid ? reinterpret_cast<const B *>(d.p)[j] : B(0))
                        : reinterpret_cast<const B *>(s.recvSlot + at0)[j];
      have = true;
    }
    for (int r = 0; r < s.nsrc; ++r) {
      const Chunk c = at.chunk(r, k, kEs);
      const B x = j < c.valid ? reinterpret_cast<const B *>(c.p)[j] : B(0);
      v = have ? rd(v, x) : x;
      have = true;
    }
    if (s.hasDst && j < d.valid)
      reinterpret_cast<B *>(d.p)[j] = v;
    if (s.sends)
      reinterpret_cast<B *>(s.sendSlot + at0)[j] = v;
    if (s.toPeer && j < p.valid)
      reinterpret_cast<B *>(p.p)[j] = v;
  }
}

// One Simple step, both ends Simple (or none: local and peer steps),
// reduced by rd.
template <class Rd>
static __device__ __noinline__ void simpleMove(const Step &step, const Places &at, Rd rd) {
  constexpr int kEs = Rd::kEs;
  const Step s = step;
  for (uint32_t k = 0; k < s.count; ++k) {
    const size_t at0 = size_t(k) * s.q * kEs;
    Run run;
    run.nsrc = run.ndst = 0;
    uint32_t whole = s.q; // elements every ref has
    Chunk d{};
    if (s.hasDst || s.recvFromDst) {
      d = at.chunk(kDst, k, kEs);
      whole = d.valid < whole ? d.valid : whole;
    }
    if (s.recvFromDst)
      run.src[run.nsrc++] = d.p;
    else if (s.receives)
      run.src[run.nsrc++] = s.recvSlot + at0;
    for (int r = 0; r < s.nsrc; ++r) {
      const Chunk c = at.chunk(r, k, kEs);
      run.src[run.nsrc++] = c.p;
      whole = c.valid < whole ? c.valid : whole;
    }
    if (s.hasDst)
      run.dst[run.ndst++] = d.p;
    if (s.sends)
      run.dst[run.ndst++] = s.sendSlot + at0;
    if (s.toPeer) {
      const Chunk p = at.chunk(kPeer, k, kEs);
      run.dst[run.ndst++] = p.p;
      whole = p.valid < whole ? p.valid : whole;
    }
    if (whole && run.ndst && !(s.recvFromDst && run.nsrc == 1 && run.ndst == 1 && s.hasDst))
      reduceCopy(rd, run, whole);
    if (whole < s.q)
      simpleEdge(s, at, k, whole, rd);
  }
}

} // namespace cuda
} // namespace collc

#endif // COLLC_DEVICE_CUDA_SIMPLE_H
