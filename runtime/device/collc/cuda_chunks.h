//===- cuda_chunks.h - Where a step's elements lie, on the GPU ------------===//
//
// A step moves a payload of `count` chunks of q elements each; chunk k of a
// ref lies in its buffer where chunkOf says, with elements past the end of
// the user's buffer read as zeros and not stored. Words gives the LL and
// LL128 loops the 8-byte words of that payload; a thread asks for its
// words in increasing order, so it finds each chunk once.
//
//===----------------------------------------------------------------------===//

#ifndef COLLC_DEVICE_CUDA_CHUNKS_H
#define COLLC_DEVICE_CUDA_CHUNKS_H

#include "collc/cuda_vec.h"

namespace collc {
namespace cuda {

// Where the chunks of a ref lie in this loop.
struct Geometry {
  int64_t count, chunks, slice, width, q;
};
struct Chunk {
  char *p;        // element 0 of the chunk
  uint32_t valid; // elements before the end of the user's buffer
};

// Chunk `index` of a buffer whose row for this loop starts at `row`:
// scratch rows hold `slice` elements per chunk, the user's buffers `count`
// per unit, as Block::offset and valid in host.h. chunkOf is a call (it
// divides), chunkAt the same inlined. Both take the geometry by value:
// an address passed to a call would keep the caller's copy in memory.
COLLC_DI Chunk chunkAt(Geometry g, char *row, bool scratch, uint32_t index, int32_t elemSize) {
  if (scratch)
    return {row + int64_t(index) * g.slice * elemSize, uint32_t(g.q)};
  uint32_t unit = index / uint32_t(g.chunks), pos = index - unit * uint32_t(g.chunks);
  int64_t left = g.width - pos * g.q;
  return {row + (unit * g.count + pos * g.q) * elemSize, uint32_t(left < 0     ? 0
                                                                  : left < g.q ? left
                                                                               : g.q)};
}
static __device__ __noinline__ Chunk chunkOf(Geometry g, char *row, bool scratch, uint32_t index,
                                             int32_t elemSize) {
  return chunkAt(g, row, scratch, index, elemSize);
}

// Where a ref's chunks start in this loop: its buffer's row, its first
// chunk, and whether the buffer is scratch.
struct Place {
  char *row;
  uint32_t index;
  bool scratch;
};
COLLC_DI Chunk chunkAt(Geometry g, Place p, uint32_t k, int32_t es) {
  return chunkAt(g, p.row, p.scratch, p.index + k, es);
}

// A block's loop as a call sees it, passed by value: the Args, where the
// chunks lie, and the loop's index.
struct LoopAt {
  const Args *a;
  Geometry g;
  int64_t loop;
  // The loop row of a ref's buffer, on this rank or on rank `owner`.
  COLLC_DI char *row(Ref r, int32_t owner = -1) const {
    const int64_t first = r.buffer >= kScratch0
                              ? loop * a->scratchChunks[r.buffer - kScratch0] * a->slice
                              : loop * a->chunks * a->slice;
    char *base = owner < 0 ? a->buffers[r.buffer] : a->peers[owner * kMaxBuffers + r.buffer];
    return base + first * a->elemSize;
  }
  // Chunk k of ref r, on this rank or on rank `owner`.
  COLLC_DI Chunk chunk(Ref r, int32_t k, int32_t owner = -1) const {
    return chunkAt(g, row(r, owner), r.buffer >= kScratch0, uint32_t(r.index + k), a->elemSize);
  }
};

// A step's refs, passed by value, and the block's FIFO positions, which a
// step takes and returns: the next step on each FIFO, the sends that fit,
// and whether the block gave up.
template <int R> struct Refs {
  Ref ref[R];
};
struct Cursor {
  uint64_t recvStep, sendStep, room;
  bool dead;
};

// The refs of a step: sources in [0, nsrc), the destination at kDst, and
// at kPeer the receiver's destination that a direct Simple sender stores.
// Indexed by constants only (the steps are inlined and their loops over
// refs unrolled), so that they stay in registers.
constexpr int kMaxRefs = kMaxPtrs;
constexpr int kDst = kMaxRefs - 1, kPeer = kMaxRefs - 2, kMaxSources = kPeer;
struct Places {
  Geometry g;
  Place ref[kMaxRefs];
  template <bool kInline = false> COLLC_DI Chunk chunk(int r, uint32_t k, int32_t es) const {
    const Place p = ref[r];
    return kInline ? chunkAt(g, p, k, es) : chunkOf(g, p.row, p.scratch, p.index + k, es);
  }
};

// The shape of a step, fixed by the primitive it is: nsrc local sources,
// a destination or not, a receive and a send or not.
template <int32_t NSrc, bool HasDst, bool Receives, bool Sends> struct Shape {
  static constexpr int32_t nsrc = NSrc;
  static constexpr bool hasDst = HasDst, receives = Receives, sends = Sends;
  // The pointers of a run: the receive (or the destination a direct sender
  // filled) and the local sources; the destination and the send slot (or
  // the receiver's destination, on a direct connection).
  using Pointers = Ptrs<NSrc + Receives, HasDst + Sends>;
};

// What one step moves, as every thread sees it (its Shape says the rest).
struct Step {
  const Args *a;
  bool sends;                         // false where toPeer replaces the send
  bool recvFromDst;                   // a direct sender stored what arrives in the destination
  bool toPeer;                        // stores to kPeer instead of sending (direct, Simple)
  uint32_t q, count, n, bytes, words; // elements per chunk, chunks, elements, bytes, 8-byte words
  const char *recvSlot;
  char *sendSlot;
  uint64_t recvFlag, sendFlag; // llFlag(step) for LL, step + 1 for LL128
  uint32_t cleanTo;            // LL: lines of the send slot to fill (llCleans), or 0
};

// The 8-byte words of a step's payload in one thread's refs: word x holds
// elements [x * 8 / kEs, (x + 1) * 8 / kEs).
template <int kEs, bool kInline = false> class Words {
  using B = typename UnitOf<kEs>::type;
  static constexpr uint32_t kV = 8 / kEs, kBits = 8 * kEs;

public:
  COLLC_DI Words(const Step &s, const Places &at) : s(s), at(at) {}

  // Word x of source 0, or of ref r (another source: rare, slow), zeros
  // past its valid elements.
  COLLC_DI uint64_t get(uint32_t x) {
    const uint32_t j = src.locate(s, at, 0, x * kV);
    if (j + kV <= src.c.valid)
      return ldWord(src.c.p + size_t(j) * kEs);
    return gather(at.g, at.ref[0], x * kV, s.n);
  }
  COLLC_DI uint64_t get(int r, uint32_t x) const { return gather(at.g, at.ref[r], x * kV, s.n); }
  // Stores word x to the destination, up to its valid elements.
  COLLC_DI void put(uint32_t x, uint64_t v) {
    const uint32_t j = dst.locate(s, at, kDst, x * kV);
    if (j + kV <= dst.c.valid)
      stWord(dst.c.p + size_t(j) * kEs, v);
    else
      scatter(at.g, at.ref[kDst], x * kV, s.n, v);
  }
  // The payload's bytes of word x: what follows the last element is zero.
  COLLC_DI uint64_t trim(uint32_t x, uint64_t v) const {
    const uint32_t e0 = x * kV;
    return e0 + kV <= s.n ? v : v & ((uint64_t(1) << (s.n - e0) * kBits) - 1);
  }

private:
  // The chunk of one ref that a thread is in.
  struct View {
    Chunk c{};
    uint32_t k = ~0u, start = 0; // its index in the step, its first element
    // Element e0's place in its chunk, entered if need be; past the end of
    // the valid elements for a word that spans chunks (the slow path).
    COLLC_DI uint32_t locate(const Step &s, const Places &at, int r, uint32_t e0) {
      if (k == ~0u || e0 - start >= s.q) {
        k = e0 / s.q;
        start = k * s.q;
        c = at.chunk<kInline>(r, k, kEs);
      }
      const uint32_t j = e0 - start;
      return j + kV <= s.q ? j : ~0u - kV;
    }
  };

  // The same for a word that spans chunks or the end of the valid elements
  // (calls, given their ref by value).
  static __device__ __noinline__ uint64_t gather(Geometry g, Place p, uint32_t e0, uint32_t n) {
    uint64_t v = 0;
    for (uint32_t i = 0; i < kV && e0 + i < n; ++i) {
      uint32_t e = e0 + i, chunk = e / uint32_t(g.q), j = e - chunk * uint32_t(g.q);
      Chunk c = chunkAt(g, p, chunk, kEs);
      if (j < c.valid)
        v |= uint64_t(reinterpret_cast<const B *>(c.p)[j]) << (i * kBits);
    }
    return v;
  }
  static __device__ __noinline__ void scatter(Geometry g, Place p, uint32_t e0, uint32_t n,
                                              uint64_t v) {
    for (uint32_t i = 0; i < kV && e0 + i < n; ++i) {
      uint32_t e = e0 + i, chunk = e / uint32_t(g.q), j = e - chunk * uint32_t(g.q);
      Chunk c = chunkAt(g, p, chunk, kEs);
      if (j < c.valid)
        reinterpret_cast<B *>(c.p)[j] = B(v >> (i * kBits));
    }
  }

  const Step &s;
  const Places &at;
  View src, dst; // of source 0 and of the destination
};

} // namespace cuda
} // namespace collc

#endif // COLLC_DEVICE_CUDA_CHUNKS_H
