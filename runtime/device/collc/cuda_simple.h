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
template <class Sh, class Rd>
COLLC_DI void simpleEdge(const Step &s, const Places &at, uint32_t k, uint32_t from, Rd rd) {
  constexpr int kEs = Rd::kEs;
  using B = typename UnitOf<kEs>::type;
  const size_t at0 = size_t(k) * s.q * kEs;
  const Chunk d = Sh::hasDst ? at.chunk<true>(kDst, k, kEs) : Chunk{};
  const Chunk p = s.toPeer ? at.chunk<true>(kPeer, k, kEs) : Chunk{};
  for (uint32_t j = from + threadIdx.x; j < s.q; j += blockDim.x) {
    B v = 0;
    bool have = false;
    if (Sh::receives) {
      v = s.recvFromDst ? (j < d.valid ? reinterpret_cast<const B *>(d.p)[j] : B(0))
                        : reinterpret_cast<const B *>(s.recvSlot + at0)[j];
      have = true;
    }
#pragma unroll
    for (int r = 0; r < Sh::nsrc; ++r) {
      const Chunk c = at.chunk<true>(r, k, kEs);
      const B x = j < c.valid ? reinterpret_cast<const B *>(c.p)[j] : B(0);
      v = have ? rd(v, x) : x;
      have = true;
    }
    if (Sh::hasDst && j < d.valid)
      reinterpret_cast<B *>(d.p)[j] = v;
    if (s.sends)
      reinterpret_cast<B *>(s.sendSlot + at0)[j] = v;
    if (s.toPeer && j < p.valid)
      reinterpret_cast<B *>(p.p)[j] = v;
  }
}

// One Simple step of shape Sh, both ends Simple (or none: local and peer
// steps), reduced by rd. Inlined into the step, so that its refs and
// pointers stay in registers.
template <class Sh, class Rd> COLLC_DI void simpleMove(const Step &s, const Places &at, Rd rd) {
  constexpr int kEs = Rd::kEs;
  for (uint32_t k = 0; k < s.count; ++k) {
    const size_t at0 = size_t(k) * s.q * kEs;
    typename Sh::Pointers run;
    uint32_t whole = s.q; // elements every ref has
    Chunk d{};
    if (Sh::hasDst) {
      d = at.chunk<true>(kDst, k, kEs);
      whole = d.valid < whole ? d.valid : whole;
    }
    if (Sh::receives)
      run.src[0] = s.recvFromDst ? d.p : s.recvSlot + at0;
#pragma unroll
    for (int r = 0; r < Sh::nsrc; ++r) {
      const Chunk c = at.chunk<true>(r, k, kEs);
      run.src[Sh::receives + r] = c.p;
      whole = c.valid < whole ? c.valid : whole;
    }
    if (Sh::hasDst)
      run.dst[0] = d.p;
    if (Sh::sends) {
      char *to = s.sendSlot + at0;
      if (s.toPeer) {
        const Chunk p = at.chunk<true>(kPeer, k, kEs);
        to = p.p;
        whole = p.valid < whole ? p.valid : whole;
      }
      run.dst[Sh::hasDst] = to;
    }
    // What a direct sender stored in the destination needs no copy there.
    const bool stored = Sh::nsrc == 0 && !Sh::sends && s.recvFromDst;
    if (whole && run.ndst && !stored)
      reduceCopyAt(rd, run, whole);
    if (whole < s.q)
      simpleEdge<Sh>(s, at, k, whole, rd);
  }
}

} // namespace cuda
} // namespace collc

#endif // COLLC_DEVICE_CUDA_SIMPLE_H
