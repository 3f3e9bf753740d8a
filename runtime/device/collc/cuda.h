//===- cuda.h - Device primitives on the GPU -------------------------------===//
//
// collc::Block for nvcc, with host.h's semantics and FIFO wire formats. All
// threads of a CUDA block call every member. A step moves its payload in
// 8-byte words, a word per thread at a time, so that the protocols share one
// element path: Simple stores the word, LL spreads it over the two {data,
// flag} words of a 16-byte line, LL128 gives a warp two 128-byte lines, 15
// data lanes each, and lane 15 fences once and sets both flag words. Thread
// 0 waits on and publishes the counters between block barriers, and
// __syncthreads_or makes a failure every thread's. Loops are templates on
// the element size only, the (type, op) a warp-uniform switch per word:
// ptxas compiles a kernel's whole call graph once per kernel, and loops per
// (type, op) cost it about a minute per kernel. Steps and waits are calls so
// that each generated call site stays small. Multimem steps (sm_90+) use
// Args::multicast, peer-window steps the peers' buffers in Args::peers; a
// plan with either starts and ends at Args::barrier.
// Launch with blockDim.x a multiple of 32, at most COLLC_CUDA_MAX_THREADS,
// and every block resident at once (blocks of a rank wait for each other).
//
//===----------------------------------------------------------------------===//

#ifndef COLLC_DEVICE_CUDA_H
#define COLLC_DEVICE_CUDA_H

#include "collrt.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>

#ifndef COLLC_CUDA_MAX_THREADS
#define COLLC_CUDA_MAX_THREADS 512
#endif

#define COLLC_DEVICE static __device__ __forceinline__
#define COLLC_KERNEL(name)                                                                   \
  __global__ void __launch_bounds__(COLLC_CUDA_MAX_THREADS, 1)                              \
      name(const ::collc::Args *collcArgs)
#define COLLC_BLOCK_ARGS (collcArgs + blockIdx.x)
#define COLLC_HOST_FN(name) nullptr
#define COLLC_CUDA_FN(name) ((const void *)&name)

namespace collc {
namespace cuda {

#define COLLC_DI __device__ __forceinline__

// Counters and flags: relaxed polls, then a fence, make an acquire.
COLLC_DI uint64_t loadSys(const uint64_t *p) {
  uint64_t v;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
COLLC_DI uint64_t loadGpu(const uint64_t *p) {
  uint64_t v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
COLLC_DI void fenceSys() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }
COLLC_DI void fenceGpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
COLLC_DI void releaseSys(uint64_t *p, uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
COLLC_DI void releaseGpu(uint64_t *p, uint64_t v) {
  asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
// FIFO payload: volatile, so no stale L1 line of an earlier use of the slot.
COLLC_DI uint64_t loadVolatile(const void *p) {
  uint64_t v;
  asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
COLLC_DI void storeVolatile(void *p, uint64_t v) {
  asm volatile("st.volatile.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
// An LL line: two 8-byte {data, flag} words, each single-copy atomic.
COLLC_DI void loadLine(const void *p, uint64_t &lo, uint64_t &hi) {
  asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];"
               : "=l"(lo), "=l"(hi)
               : "l"(p)
               : "memory");
}
COLLC_DI void storeLine(void *p, uint64_t lo, uint64_t hi) {
  asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(lo), "l"(hi) : "memory");
}
COLLC_DI uint64_t globalTimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Appends to Args::errorText (256 bytes, NUL-terminated).
struct Text {
  char *p;
  int n = 0;
  __device__ Text &operator<<(const char *s) {
    while (*s && n < 255)
      p[n++] = *s++;
    p[n] = 0;
    return *this;
  }
  __device__ Text &operator<<(uint64_t v) {
    char d[20];
    int k = 0;
    do
      d[k++] = char('0' + v % 10);
    while (v /= 10);
    while (k && n < 255)
      p[n++] = d[--k];
    p[n] = 0;
    return *this;
  }
};

// What a wait does every 1024 polls: gives up, returning kGaveUp, once the
// communicator is aborted or the wait has outlasted Args::timeoutSeconds;
// the first failure of a launch names itself in Args::error and errorText,
// as collcHostWait does. Returns when the wait began (globaltimer).
constexpr uint64_t kGaveUp = ~uint64_t(0);
static __device__ __noinline__ uint64_t checkIn(const Args &a, uint64_t since,
                                                const char *what, int64_t peer) {
  int code = 0;
  if (*a.abort)
    code = collAborted;
  else if (a.timeoutSeconds > 0 && since && double(globalTimer() - since) > a.timeoutSeconds * 1e9)
    code = collTimeout;
  if (!code)
    return since ? since : globalTimer();
  if (atomicCAS(reinterpret_cast<int *>(a.error), 0, code) == 0) {
    Text t{a.errorText};
    t << "rank " << uint64_t(a.rank) << " threadblock " << uint64_t(a.tb);
    if (code == collAborted)
      t << ": the communicator was aborted";
    else
      t << " waited " << uint64_t(a.timeoutSeconds + 0.5) << " s for " << what << " "
        << uint64_t(peer) << "; a peer may have died or the plan does not match";
    __threadfence_system();
  }
  return kGaveUp;
}
// One thread's wait; its state stays in registers.
class Patience {
public:
  __device__ explicit Patience(const Args &a) : a(&a) {}
  COLLC_DI bool keepWaiting(const char *what, int64_t peer) {
    if (++spins & 1023)
      return true;
    since = checkIn(*a, since, what, peer);
    return since != kGaveUp;
  }

private:
  const Args *a;
  uint32_t spins = 0;
  uint64_t since = 0;
};

// Waits until *word >= goal (sys: written from another device or the host).
static __device__ __noinline__ bool waitAtLeast(const Args &a, const uint64_t *word, uint64_t goal,
                                                bool sys, const char *what, int64_t peer) {
  Patience patience(a);
  while ((sys ? loadSys(word) : loadGpu(word)) < goal)
    if (!patience.keepWaiting(what, peer))
      return false;
  sys ? fenceSys() : fenceGpu();
  return true;
}

// Arithmetic on the bits of one element, as runtime/src/Numeric.h does on
// the host: integers wrap, narrow floats compute in float and round after
// each operation (fp8 saturates to the largest finite value).
template <typename B, typename C> struct IntArith { // B: unsigned bits, C: the type
  using Bits = B;
  static COLLC_DI B add(B x, B y) { return B(x + 0u + y); }
  static COLLC_DI B mul(B x, B y) { return B((x + 0u) * (y + 0u)); }
  static COLLC_DI bool less(B x, B y) { return C(x) < C(y); }
};
template <typename F> struct FloatArith : F {
  using typename F::Bits;
  static COLLC_DI Bits add(Bits x, Bits y) { return F::make(F::val(x) + F::val(y)); }
  static COLLC_DI Bits mul(Bits x, Bits y) { return F::make(F::val(x) * F::val(y)); }
  static COLLC_DI bool less(Bits x, Bits y) { return F::val(x) < F::val(y); }
};
struct F32 {
  using Bits = uint32_t;
  static COLLC_DI float val(Bits b) { return __uint_as_float(b); }
  static COLLC_DI Bits make(float f) { return __float_as_uint(f); }
};
struct F64 {
  using Bits = uint64_t;
  static COLLC_DI double val(Bits b) { return __longlong_as_double((long long)b); }
  static COLLC_DI Bits make(double f) { return Bits(__double_as_longlong(f)); }
};
struct F16 {
  using Bits = uint16_t;
  static COLLC_DI float val(Bits b) { return __half2float(__ushort_as_half(b)); }
  static COLLC_DI Bits make(float f) { return __half_as_ushort(__float2half_rn(f)); }
};
struct BF16 {
  using Bits = uint16_t;
  static COLLC_DI float val(Bits b) { return __bfloat162float(__ushort_as_bfloat16(b)); }
  static COLLC_DI Bits make(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
};
template <__nv_fp8_interpretation_t I> struct F8 {
  using Bits = uint8_t;
  static COLLC_DI float val(Bits b) { return __half2float(__half(__nv_cvt_fp8_to_halfraw(b, I))); }
  static COLLC_DI Bits make(float f) { return __nv_cvt_float_to_fp8(f, __NV_SATFINITE, I); }
};

// The ops; avg is a sum here (the runtime divides afterwards). Max keeps x
// unless x < y, as the host does, NaNs included.
struct Sum {
  template <class A, class B> static COLLC_DI B apply(B x, B y) { return A::add(x, y); }
};
struct Prod {
  template <class A, class B> static COLLC_DI B apply(B x, B y) { return A::mul(x, y); }
};
struct Max {
  template <class A, class B> static COLLC_DI B apply(B x, B y) { return A::less(x, y) ? y : x; }
};
struct Min {
  template <class A, class B> static COLLC_DI B apply(B x, B y) { return A::less(y, x) ? y : x; }
};

// x (op) y in every lane of two 8-byte words.
template <class A, class Op> COLLC_DI uint64_t lanes(uint64_t x, uint64_t y) {
  using B = typename A::Bits;
  constexpr int kBits = 8 * sizeof(B);
  uint64_t v = 0;
#pragma unroll
  for (int i = 0; i < 64 / kBits; ++i)
    v |= uint64_t(Op::template apply<A>(B(x >> (i * kBits)), B(y >> (i * kBits)))) << (i * kBits);
  return v;
}
template <class A> COLLC_DI uint64_t reduceAs(int32_t op, uint64_t x, uint64_t y) {
  switch (op) {
  case collProd: return lanes<A, Prod>(x, y);
  case collMax: return lanes<A, Max>(x, y);
  case collMin: return lanes<A, Min>(x, y);
  default: return lanes<A, Sum>(x, y); // sum, and avg
  }
}
// The step's data type, of kEs bytes, picks the arithmetic.
template <int kEs> COLLC_DI uint64_t reduceWords(int32_t type, int32_t op, uint64_t x, uint64_t y) {
  if constexpr (kEs == 1) {
    switch (type) {
    case collInt8: return reduceAs<IntArith<uint8_t, int8_t>>(op, x, y);
    case collUint8: return reduceAs<IntArith<uint8_t, uint8_t>>(op, x, y);
    case collFloat8e4m3: return reduceAs<FloatArith<F8<__NV_E4M3>>>(op, x, y);
    default: return reduceAs<FloatArith<F8<__NV_E5M2>>>(op, x, y);
    }
  } else if constexpr (kEs == 2) {
    if (type == collBfloat16)
      return reduceAs<FloatArith<BF16>>(op, x, y);
    return reduceAs<FloatArith<F16>>(op, x, y);
  } else if constexpr (kEs == 4) {
    switch (type) {
    case collInt32: return reduceAs<IntArith<uint32_t, int32_t>>(op, x, y);
    case collUint32: return reduceAs<IntArith<uint32_t, uint32_t>>(op, x, y);
    default: return reduceAs<FloatArith<F32>>(op, x, y);
    }
  } else {
    switch (type) {
    case collInt64: return reduceAs<IntArith<uint64_t, int64_t>>(op, x, y);
    case collUint64: return reduceAs<IntArith<uint64_t, uint64_t>>(op, x, y);
    default: return reduceAs<FloatArith<F64>>(op, x, y);
    }
  }
}

// Where the chunks of a ref lie in this loop; see chunkOf.
struct Geometry {
  int64_t count, chunks, slice, width, q;
};
struct Chunk {
  char *p;        // element 0 of the chunk
  uint32_t valid; // elements before the end of the user's buffer
};

// Chunk `index` of a buffer whose row for this loop starts at `row`:
// scratch rows hold `slice` elements per chunk, the user's buffers `count`
// per unit, as Block::offset and valid in host.h. A call: it divides.
static __device__ __noinline__ Chunk chunkOf(const Geometry &g, char *row, bool scratch,
                                             uint32_t index, int32_t elemSize) {
  if (scratch)
    return {row + int64_t(index) * g.slice * elemSize, uint32_t(g.q)};
  uint32_t unit = index / uint32_t(g.chunks), pos = index - unit * uint32_t(g.chunks);
  int64_t left = g.width - pos * g.q;
  return {row + (unit * g.count + pos * g.q) * elemSize,
          uint32_t(left < 0 ? 0 : left < g.q ? left : g.q)};
}

// What one step moves, as every thread sees it.
struct Transfer {
  const Args *a;
  int32_t nsrc, type, op;
  bool hasDst, receives, sends;
  bool recvFromDst; // a direct sender stored what arrives in the destination
  int32_t recvProtocol, sendProtocol;
  uint32_t q, n, bytes, words; // elements per chunk, payload elements, bytes, 8-byte words
  const char *recvSlot;
  char *sendSlot;
  uint64_t recvFlag, sendFlag; // llFlag(step) for LL, step + 1 for LL128
};
// Where its refs lie: refs[0, nsrc) are the sources, refs[R - 1] the
// destination; chunk k of ref r is chunkOf(g, row[r], scratch[r], index[r] + k).
template <int R> struct Places {
  Geometry g;
  char *row[R];
  uint32_t index[R];
  bool scratch[R];
};

template <int kEs> struct BitsOf;
template <> struct BitsOf<1> { using type = uint8_t; };
template <> struct BitsOf<2> { using type = uint16_t; };
template <> struct BitsOf<4> { using type = uint32_t; };
template <> struct BitsOf<8> { using type = uint64_t; };

// Moves one step's payload: each thread takes 8-byte words of it in turn;
// under LL128 a warp takes two 128-byte lines at a time, lanes 0-14 and
// 16-30 the data words, lane 15 the flags of both (one fence per pair).
template <int kEs, int R> class Mover {
  static_assert(R >= 2, "sources, then the destination");
  using B = typename BitsOf<kEs>::type;
  static constexpr int kV = 8 / kEs, kBits = 8 * kEs;

public:
  // False if a receive gave up.
  static __device__ __noinline__ bool run(const Transfer &t, const Places<R> &at) {
    Mover m(t, at);
    return m.go();
  }

private:
  __device__ Mover(const Transfer &t, const Places<R> &at) : s(t), at(at), patience(*t.a) {}

  COLLC_DI bool go() {
    const bool ll128 = s.recvProtocol == kLL128 || s.sendProtocol == kLL128;
    const uint32_t lane = threadIdx.x & 31, lines = (s.bytes + 119) / 120;
    const uint32_t first = ll128 ? threadIdx.x / 32 : threadIdx.x;
    const uint32_t stride = ll128 ? blockDim.x / 32 : blockDim.x;
    const uint32_t limit = ll128 ? (lines + 1) / 2 : s.words;
    for (uint32_t it = first; it < limit; it += stride) {
      const uint32_t col = lane & 15, w = ll128 ? (2 * it + lane / 16) * 15 + col : it;
      const bool data = !ll128 || (col < 15 && w < s.words), second = 2 * it + 1 < lines;
      uint64_t in = 0;
      if (s.receives && s.recvProtocol == kLL128) {
        const uint64_t *l = reinterpret_cast<const uint64_t *>(s.recvSlot) + 32 * it;
        if (lane == 15) {
          while (!bad && (loadVolatile(l + 15) != s.recvFlag ||
                          (second && loadVolatile(l + 31) != s.recvFlag)))
            bad = !patience.keepWaiting("data from rank", s.a->recvPeer);
          fenceSys();
        }
        __syncwarp();
        const bool late = __shfl_sync(~0u, bad, 15); // every lane must take part
        if (data && !late)
          in = loadVolatile(l + 16 * (lane / 16) + col);
      } else if (s.receives && data && !s.recvFromDst) {
        in = receiveWord(w);
      }
      if (ll128 ? __any_sync(~0u, bad) : bad)
        return false;
      uint64_t out = data ? compute(w, in) : 0;
      if (s.sends && s.sendProtocol == kLL128) {
        uint64_t *l = reinterpret_cast<uint64_t *>(s.sendSlot) + 32 * it;
        if (data)
          storeVolatile(l + 16 * (lane / 16) + col, out);
        __syncwarp();
        if (lane == 15) {
          fenceSys();
          storeVolatile(l + 15, s.sendFlag);
          if (second)
            storeVolatile(l + 31, s.sendFlag);
        }
      } else if (s.sends && data) {
        sendWord(w, out);
      }
    }
    return true;
  }

  // Word w of a Simple or LL payload.
  COLLC_DI uint64_t receiveWord(uint32_t w) {
    if (s.recvProtocol == kSimple)
      return loadVolatile(s.recvSlot + 8 * size_t(w));
    const char *line = s.recvSlot + 16 * size_t(w);
    const uint32_t flag = uint32_t(s.recvFlag);
    const bool hi = 8 * w + 4 < s.bytes; // host senders stop at the last 4-byte word
    uint64_t x, y;
    for (;;) {
      loadLine(line, x, y);
      if (uint32_t(x >> 32) == flag && (!hi || uint32_t(y >> 32) == flag))
        return (x & 0xffffffffu) | y << 32;
      if (!patience.keepWaiting("data from rank", s.a->recvPeer)) {
        bad = true;
        return 0;
      }
    }
  }
  COLLC_DI void sendWord(uint32_t w, uint64_t v) {
    if (s.sendProtocol == kSimple) {
      *reinterpret_cast<uint64_t *>(s.sendSlot + 8 * size_t(w)) = v;
      return;
    }
    const uint64_t flag = s.sendFlag << 32;
    storeLine(s.sendSlot + 16 * size_t(w), flag | (v & 0xffffffffu), flag | v >> 32);
  }

  // Points the views at chunk `chunk` of every ref of the step.
  COLLC_DI void enter(uint32_t chunk) {
    k = chunk;
    start = chunk * s.q;
#pragma unroll
    for (int r = 0; r < R; ++r)
      if (r < s.nsrc || (r == R - 1 && s.hasDst))
        view[r] = chunkOf(at.g, at.row[r], at.scratch[r], at.index[r] + chunk, kEs);
  }
  // kV elements from element j of a chunk, zeros past its valid ones.
  static COLLC_DI uint64_t load(const Chunk &c, uint32_t j) {
    const char *p = c.p + size_t(j) * kEs;
    if (j + kV <= c.valid && !(reinterpret_cast<uintptr_t>(p) & 7))
      return *reinterpret_cast<const uint64_t *>(p);
    uint64_t v = 0;
#pragma unroll 1
    for (uint32_t i = 0; i < kV && j + i < c.valid; ++i)
      v |= uint64_t(reinterpret_cast<const B *>(p)[i]) << (i * kBits);
    return v;
  }
  static COLLC_DI void store(const Chunk &c, uint32_t j, uint64_t v) {
    char *p = c.p + size_t(j) * kEs;
    if (j + kV <= c.valid && !(reinterpret_cast<uintptr_t>(p) & 7)) {
      *reinterpret_cast<uint64_t *>(p) = v;
      return;
    }
#pragma unroll 1
    for (uint32_t i = 0; i < kV && j + i < c.valid; ++i)
      reinterpret_cast<B *>(p)[i] = B(v >> (i * kBits));
  }
  // The same for a word that spans chunks or ends the payload (rare).
  static __device__ __noinline__ uint64_t gather(const Places<R> &at, int r, uint32_t e0,
                                                 uint32_t n) {
    uint64_t v = 0;
    for (uint32_t i = 0; i < kV && e0 + i < n; ++i) {
      uint32_t e = e0 + i, chunk = e / uint32_t(at.g.q), j = e - chunk * uint32_t(at.g.q);
      Chunk c = chunkOf(at.g, at.row[r], at.scratch[r], at.index[r] + chunk, kEs);
      if (j < c.valid)
        v |= uint64_t(reinterpret_cast<const B *>(c.p)[j]) << (i * kBits);
    }
    return v;
  }
  static __device__ __noinline__ void scatter(const Places<R> &at, uint32_t e0, uint32_t n,
                                              uint64_t v) {
    for (uint32_t i = 0; i < kV && e0 + i < n; ++i) {
      uint32_t e = e0 + i, chunk = e / uint32_t(at.g.q), j = e - chunk * uint32_t(at.g.q);
      Chunk c = chunkOf(at.g, at.row[R - 1], at.scratch[R - 1], at.index[R - 1] + chunk, kEs);
      if (j < c.valid)
        reinterpret_cast<B *>(c.p)[j] = B(v >> (i * kBits));
    }
  }

  // Payload word w: what arrived (`in`, if the step receives) reduced with
  // the sources and stored to the destination; lanes past the payload are 0.
  COLLC_DI uint64_t compute(uint32_t w, uint64_t in) {
    const uint32_t e0 = w * kV;
    if (k == ~0u || e0 - start >= s.q) // a thread's words only move forward
      enter(e0 / s.q);
    const uint32_t j = e0 - start;
    const bool whole = j + kV <= s.q && e0 + kV <= s.n;
    uint64_t acc = in;
    if (s.recvFromDst)
      acc = whole ? load(view[R - 1], j) : gather(at, R - 1, e0, s.n);
#pragma unroll
    for (int r = 0; r < R - 1; ++r) {
      if (r < s.nsrc) {
        uint64_t x = whole ? load(view[r], j) : gather(at, r, e0, s.n);
        acc = r > 0 || s.receives ? reduceWords<kEs>(s.type, s.op, acc, x) : x;
      }
    }
    if (s.hasDst) {
      if (whole)
        store(view[R - 1], j, acc);
      else
        scatter(at, e0, s.n, acc);
    }
    if (e0 + kV > s.n)
      acc &= (uint64_t(1) << (s.n - e0) * kBits) - 1;
    return acc;
  }

  const Transfer s;     // a copy: registers, whatever the stores alias
  const Places<R> &at; // read in place, only when a thread changes chunks
  Patience patience;
  Chunk view[R];
  uint32_t k = ~0u, start = 0; // the chunk the views show, its first element
  bool bad = false;
};

// NVLink multicast (NVLS, sm_90 and later). The reductions multimem has:
// sums of fp32, fp64, fp16 and bf16 (these two in pairs, summed in fp32) and
// of 32- and 64-bit integers, min and max of the integers, fp16 and bf16.
COLLC_DI bool multimemReduces(int32_t type, int32_t op) {
  const bool sum = op == collSum || op == collAvg, order = op == collMin || op == collMax;
  switch (type) {
  case collFloat32: case collFloat64: return sum;
  case collFloat16: case collBfloat16: case collInt32: case collUint32: case collInt64:
  case collUint64: return sum || order;
  default: return false;
  }
}
// The element (the aligned 4-byte pair of 2-byte ones) at multicast
// address x, reduced over every rank.
COLLC_DI uint64_t multimemLoad(int32_t type, int32_t op, const char *x) {
  uint64_t v = 0;
#if __CUDA_ARCH__ >= 900
  uint32_t r = 0;
  float f = 0;
  double d = 0;
#define COLLC_LD(what, cons, out)                                                          \
  asm volatile("multimem.ld_reduce.relaxed.sys.global." what " %0, [%1];"                  \
               : "=" cons(out) : "l"(x) : "memory")
#define COLLC_LD3(sum, min, max, cons, out)                                                \
  do {                                                                                     \
    if (op == collMin)                                                                     \
      COLLC_LD(min, cons, out);                                                            \
    else if (op == collMax)                                                                \
      COLLC_LD(max, cons, out);                                                            \
    else                                                                                   \
      COLLC_LD(sum, cons, out);                                                            \
  } while (0)
  switch (type) {
  case collFloat32: COLLC_LD("add.f32", "f", f); return __float_as_uint(f);
  case collFloat64: COLLC_LD("add.f64", "d", d); return uint64_t(__double_as_longlong(d));
  case collFloat16: COLLC_LD3("add.acc::f32.f16x2", "min.f16x2", "max.f16x2", "r", r); return r;
  case collBfloat16: COLLC_LD3("add.acc::f32.bf16x2", "min.bf16x2", "max.bf16x2", "r", r); return r;
  case collInt32: COLLC_LD3("add.s32", "min.s32", "max.s32", "r", r); return r;
  case collUint32: COLLC_LD3("add.u32", "min.u32", "max.u32", "r", r); return r;
  case collInt64: COLLC_LD3("add.u64", "min.s64", "max.s64", "l", v); return v;
  default: COLLC_LD3("add.u64", "min.u64", "max.u64", "l", v); return v;
  }
#undef COLLC_LD3
#undef COLLC_LD
#endif
  return v;
}
COLLC_DI void multimemStore(char *x, uint64_t v, int32_t bytes) {
#if __CUDA_ARCH__ >= 900
  if (bytes == 8)
    asm volatile("multimem.st.relaxed.sys.global.b64 [%0], %1;" ::"l"(x), "l"(v) : "memory");
  else
    asm volatile("multimem.st.relaxed.sys.global.b32 [%0], %1;" ::"l"(x), "r"(uint32_t(v))
                 : "memory");
#endif
}
// Fails the launch for a multimem or peer step this GPU, data type or
// launch cannot do.
static __device__ __noinline__ void refuse(const Args &a, const char *what) {
  if (atomicCAS(reinterpret_cast<int *>(a.error), 0, collInvalidUsage) == 0) {
    Text t{a.errorText};
    t << "rank " << uint64_t(a.rank) << " threadblock " << uint64_t(a.tb) << ": " << what
      << " cannot run here (data type, op, chunk layout or unmapped peers); compile with "
         "--no-multimem";
    __threadfence_system();
  }
}

#undef COLLC_DI
} // namespace cuda

class Block {
public:
  __device__ explicit Block(const Args *args) : a(args) {
    perLoop = a->chunks * a->slice;
    loops = a->count == 0 ? 0 : (a->count + perLoop - 1) / perLoop;
    if (a->recv.slots)
      recvStep = cuda::loadSys(a->recv.head);
    if (a->send.slots)
      sendStep = cuda::loadSys(a->send.tail);
  }

  // Starts the next loop over the user buffer; false after the last.
  // A plan with steps on other ranks' buffers starts and ends at a barrier
  // of every rank's threadblocks: inputs are in place before any peer reads
  // them, and every store has landed before any rank returns.
  __device__ bool nextLoop() {
    if (dead)
      return false;
    if (loop < 0 && a->barrier)
      arrive(a->barrierStart);
    if (dead)
      return false;
    if (++loop >= loops) {
      if (a->barrier)
        arrive(a->barrierGoal);
      return false;
    }
    int64_t rest = a->count - loop * perLoop;
    width = rest < perLoop ? rest : perLoop;
    q = (width + a->chunks - 1) / a->chunks;
    return true;
  }

  // The destination, if any, is always the last ref of a step.
  __device__ void send(Ref src) { step<2>({src, {}}, 1, false, false, true); }
  __device__ void recv(Ref dst) { step<2>({{}, dst}, 0, true, true, false); }
  __device__ void recvCopySend(Ref dst) { step<2>({{}, dst}, 0, true, true, true); }
  __device__ void recvReduceSend(Ref src) { step<2>({src, {}}, 1, false, true, true); }
  __device__ void recvReduceCopy(Ref src, Ref dst) { step<2>({src, dst}, 1, true, true, false); }
  __device__ void recvReduceCopySend(Ref src, Ref dst) { step<2>({src, dst}, 1, true, true, true); }
  __device__ void copy(Ref src, Ref dst) { step<2>({src, dst}, 1, true, false, false); }
  // The same on a direct connection: `to` is where the receiver stores.
  __device__ void send(Ref src, Direct to) { step<2>({src, {}}, 1, false, false, true, &to.ref); }
  __device__ void recvCopySend(Ref dst, Direct to) {
    step<2>({{}, dst}, 0, true, true, true, &to.ref);
  }
  __device__ void recvReduceSend(Ref src, Direct to) {
    step<2>({src, {}}, 1, false, true, true, &to.ref);
  }
  __device__ void recvReduceCopySend(Ref src, Ref dst, Direct to) {
    step<2>({src, dst}, 1, true, true, true, &to.ref);
  }
  // Called as b.reduce({in(1), in(2)}, out(3)): N is the length of the list.
  template <int N> __device__ void reduce(const Ref (&srcs)[N], Ref dst) {
    Ref refs[N + 1];
    for (int i = 0; i < N; ++i)
      refs[i] = srcs[i];
    refs[N] = dst;
    step<N + 1>(refs, N, true, false, false);
  }

  // NVLink multicast: Args::multicast[b] addresses buffer b of every rank.
  __device__ void multimemLdReduce(Ref src, Ref dst) { multimem(true, src, dst); }
  __device__ void multimemSt(Ref src, Ref dst) { multimem(false, src, dst); }

  // Peer windows: Args::peers[r * kMaxBuffers + b] is buffer b of rank r.
  // dst = src reduced over every rank, one rank's loads at a time.
  __device__ __noinline__ void readReduce(Ref src, Ref dst) {
    if (!peersMapped("read_reduce"))
      return;
    peerMove<2>({src, dst}, 1, {0, -1});
    for (int32_t p = 1; p < a->nranks; ++p) {
      __syncthreads();
      peerMove<3>({dst, src, dst}, 2, {-1, p, -1});
    }
    peerDone();
  }
  // src stored to dst on every rank.
  __device__ __noinline__ void put(Ref src, Ref dst) {
    if (!peersMapped("put"))
      return;
    for (int32_t p = 0; p < a->nranks; ++p)
      peerMove<2>({src, dst}, 1, {-1, p == a->rank ? -1 : p});
    peerDone();
  }
  // dst = src of rank `from`.
  __device__ __noinline__ void get(int32_t from, Ref src, Ref dst) {
    if (!peersMapped("get"))
      return;
    peerMove<2>({src, dst}, 1, {from, -1});
    peerDone();
  }

  // Waits until threadblock `tb` (an index into the plan's table) has
  // finished step `index` of its `steps` per loop in this loop.
  __device__ __noinline__ void wait(int32_t tb, int32_t index, int32_t steps) {
    if (dead)
      return;
    bool bad = false;
    if (threadIdx.x == 0)
      bad = !cuda::waitAtLeast(*a, &a->progress[tb], uint64_t(loop) * steps + index + 1, false,
                               "threadblock", tb);
    dead = __syncthreads_or(bad);
  }

private:
  // dst = src reduced over every rank (into this rank's dst), or src stored
  // to dst on every rank; 2-byte elements are reduced in aligned pairs, and
  // stores of 1- and 2-byte elements need chunk edges on 4-byte boundaries.
  __device__ __noinline__ void multimem(bool reduce, Ref src, Ref dst) {
    if (dead)
      return;
    const Args &A = *a;
    const int32_t es = A.elemSize;
    const cuda::Geometry g{A.count, A.chunks, A.slice, width, q};
#if __CUDA_ARCH__ >= 900
    bool ok = !reduce || (es > 1 && cuda::multimemReduces(A.datatype, A.op));
#else
    bool ok = false; // no multimem before sm_90
#endif
    for (int32_t k = 0; k < dst.count && ok; ++k) {
      cuda::Chunk s = cuda::chunkOf(g, row(src), src.buffer >= kScratch0, src.index + k, es);
      cuda::Chunk d = cuda::chunkOf(g, row(dst), dst.buffer >= kScratch0, dst.index + k, es);
      if (reduce) {
        const char *x = A.multicast[src.buffer] + (s.p - A.buffers[src.buffer]);
        for (uint32_t j = threadIdx.x; j < d.valid; j += blockDim.x) {
          uint64_t v = 0;
          if (j < s.valid && es == 2) {
            uintptr_t at = uintptr_t(x + 2 * j);
            v = cuda::multimemLoad(A.datatype, A.op, x + 2 * j - (at & 2)) >> 8 * (at & 2);
          } else if (j < s.valid) {
            v = cuda::multimemLoad(A.datatype, A.op, x + size_t(j) * es);
          }
          memcpy(d.p + size_t(j) * es, &v, es);
        }
        continue;
      }
      char *x = A.multicast[dst.buffer] + (d.p - A.buffers[dst.buffer]);
      const int32_t unit = es < 4 ? 4 : es, per = unit / es;
      ok = (uintptr_t(x) | d.valid * es) % unit == 0;
      for (uint32_t w = threadIdx.x; ok && w < d.valid / per; w += blockDim.x) {
        uint64_t v = 0;
        for (int32_t i = 0; i < per; ++i) {
          uint64_t e = 0;
          if (w * per + i < s.valid)
            memcpy(&e, s.p + size_t(w * per + i) * es, es);
          v |= e << 8 * es * i;
        }
        cuda::multimemStore(x + size_t(w) * unit, v, unit);
      }
    }
    if (!ok && threadIdx.x == 0)
      cuda::refuse(A, reduce ? "multimem_ld_reduce" : "multimem_st");
    if ((dead = __syncthreads_or(!ok)))
      return;
    if (threadIdx.x == 0) {
      cuda::fenceSys(); // multicast stores come back to this GPU through the switch
      cuda::releaseGpu(&A.progress[A.tb], cuda::loadGpu(&A.progress[A.tb]) + 1);
    }
  }
  // The loop row of a ref's buffer, on this rank or on rank `owner`.
  __device__ char *row(Ref r, int32_t owner = -1) const {
    int64_t first = r.buffer >= kScratch0
                        ? loop * a->scratchChunks[r.buffer - kScratch0] * a->slice
                        : loop * perLoop;
    char *base = owner < 0 ? a->buffers[r.buffer] : a->peers[owner * kMaxBuffers + r.buffer];
    return base + first * a->elemSize;
  }
  // Every threadblock of every rank arrives at Args::barrier; all go on once
  // it reaches `goal` (the runtime counts arrivals over launches).
  __device__ __noinline__ void arrive(uint64_t goal) {
    __syncthreads();
    bool bad = false;
    if (threadIdx.x == 0) {
      cuda::fenceSys();
      atomicAdd_system(reinterpret_cast<unsigned long long *>(a->barrier), 1ull);
      bad = !cuda::waitAtLeast(*a, a->barrier, goal, true,
                               "every rank at the peer barrier, rank", a->rank);
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
    if (threadIdx.x == 0) {
      cuda::fenceSys(); // stores to peers are visible before the step counts
      cuda::releaseGpu(&a->progress[a->tb], cuda::loadGpu(&a->progress[a->tb]) + 1);
    }
  }
  // refs[0, nsrc) reduced into refs[R - 1], each on the rank `owner` names
  // (-1: this one), through the same element path as FIFO steps.
  template <int R>
  __device__ __noinline__ void peerMove(const Ref (&refs)[R], int32_t nsrc,
                                        const int32_t (&owner)[R]) {
    const Args &A = *a;
    cuda::Places<R> at;
    at.g = {A.count, A.chunks, A.slice, width, q};
    for (int r = 0; r < R; ++r) {
      at.row[r] = row(refs[r], owner[r]);
      at.index[r] = uint32_t(refs[r].index);
      at.scratch[r] = refs[r].buffer >= kScratch0;
    }
    cuda::Transfer t{};
    t.a = a;
    t.nsrc = nsrc;
    t.type = A.datatype;
    t.op = A.op;
    t.hasDst = true;
    t.recvProtocol = t.sendProtocol = -1;
    t.q = uint32_t(q);
    t.n = uint32_t(refs[R - 1].count * q);
    t.bytes = t.n * uint32_t(A.elemSize);
    t.words = (t.bytes + 7) / 8;
    switch (A.elemSize) {
    case 1: cuda::Mover<1, R>::run(t, at); break;
    case 2: cuda::Mover<2, R>::run(t, at); break;
    case 4: cuda::Mover<4, R>::run(t, at); break;
    default: cuda::Mover<8, R>::run(t, at); break;
    }
  }

  template <int R>
  __device__ __noinline__ void step(const Ref (&refs)[R], int32_t nsrc, bool hasDst,
                                    bool receives, bool sends, const Ref *direct = nullptr) {
    if (dead)
      return;
    const Args &A = *a;
    cuda::Places<R> at;
    at.g = {A.count, A.chunks, A.slice, width, q};
    for (int r = 0; r < R; ++r) {
      const Ref &ref = refs[r];
      if (r >= nsrc && !(r == R - 1 && hasDst))
        continue;
      at.row[r] = row(ref);
      at.index[r] = uint32_t(ref.index);
      at.scratch[r] = ref.buffer >= kScratch0;
    }
    const Fifo &in = A.recv, &out = A.send;
    cuda::Transfer t;
    t.a = a;
    t.nsrc = nsrc;
    t.type = A.datatype;
    t.op = A.op;
    t.hasDst = hasDst;
    t.receives = receives;
    t.sends = sends;
    t.recvProtocol = receives ? in.protocol : -1;
    t.sendProtocol = sends ? out.protocol : -1;
    t.q = uint32_t(q);
    t.n = uint32_t((hasDst ? refs[R - 1].count : nsrc ? refs[0].count : 0) * q);
    t.bytes = t.n * uint32_t(A.elemSize);
    t.words = (t.bytes + 7) / 8;
    t.recvSlot = receives ? in.slots + (recvStep % in.numSlots) * in.slotBytes : nullptr;
    t.sendSlot = sends ? out.slots + (sendStep % out.numSlots) * out.slotBytes : nullptr;
    t.recvFlag = receives && in.protocol == kLL ? llFlag(recvStep) : recvStep + 1;
    t.sendFlag = sends && out.protocol == kLL ? llFlag(sendStep) : sendStep + 1;

    // Thread 0 waits for room to send and, for Simple, for the data; the
    // step may hold its receive slot meanwhile (the runtime sizes FIFOs).
    // On direct connections it posts that this step waits, and learns
    // whether the data came straight to the destination or may go straight
    // to the receiver's.
    bool fromDst = false, toPeer = false;
    if (sends || (receives && in.protocol == kSimple)) {
      bool bad = false;
      if (threadIdx.x == 0) {
        uint64_t slots = uint64_t(out.numSlots);
        if (sends && sendStep + 1 > slots)
          bad = !cuda::waitAtLeast(A, out.head, sendStep + 1 - slots, true,
                                   "room to send to rank", A.sendPeer);
        if (!bad && receives && in.protocol == kSimple) {
          if (A.peers && in.ready)
            cuda::releaseSys(in.ready, recvStep + 1);
          bad = !cuda::waitAtLeast(A, in.tail, recvStep + 1, true, "data from rank",
                                   A.recvPeer);
          fromDst = !bad && hasDst && in.sizes && in.sizes[recvStep % in.numSlots] == kDirect;
        }
        toPeer = !bad && sends && direct && A.peers && out.ready && out.protocol == kSimple &&
                 cuda::loadSys(out.ready) >= sendStep + 1;
      }
      if ((dead = __syncthreads_or(bad)))
        return;
      if (direct || A.peers) {
        fromDst = __syncthreads_or(fromDst);
        toPeer = __syncthreads_or(toPeer);
      }
    }
    t.recvFromDst = fromDst;
    if (toPeer) {
      t.sends = false;
      t.sendProtocol = -1;
      if (!hasDst) { // the receiver's destination is this step's
        t.hasDst = true;
        at.row[R - 1] = row(*direct, A.sendPeer);
        at.index[R - 1] = uint32_t(direct->index);
        at.scratch[R - 1] = direct->buffer >= kScratch0;
      }
    }
    bool ok;
    switch (A.elemSize) {
    case 1: ok = cuda::Mover<1, R>::run(t, at); break;
    case 2: ok = cuda::Mover<2, R>::run(t, at); break;
    case 4: ok = cuda::Mover<4, R>::run(t, at); break;
    default: ok = cuda::Mover<8, R>::run(t, at); break;
    }
    if ((dead = __syncthreads_or(!ok)))
      return;
    if (toPeer && hasDst) { // and a copy of this step's destination to it
      peerMove<2>({refs[R - 1], *direct}, 1, {-1, A.sendPeer});
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      if (receives)
        cuda::releaseSys(in.head, recvStep + 1);
      if (sends) {
        if (toPeer)
          cuda::fenceSys(); // the stores reach the peer before the tail
        if (out.sizes)
          out.sizes[sendStep % out.numSlots] =
              toPeer                  ? kDirect
              : out.protocol == kSimple ? t.bytes
              : out.protocol == kLL   ? (t.bytes + 3) / 4 * 8
                                      : (t.bytes + 119) / 120 * 128;
        cuda::releaseSys(out.tail, sendStep + 1);
      }
      cuda::releaseGpu(&A.progress[A.tb], cuda::loadGpu(&A.progress[A.tb]) + 1);
    }
    recvStep += receives;
    sendStep += sends;
  }

  const Args *a;
  int64_t perLoop = 0, loops = 0, loop = -1, width = 0, q = 0;
  uint64_t recvStep = 0, sendStep = 0;
  bool dead = false;
};

} // namespace collc

#endif // COLLC_DEVICE_CUDA_H
