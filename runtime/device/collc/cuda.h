//===- cuda.h - Device primitives on the GPU -------------------------------===//
//
// collc::Block for nvcc, with host.h's semantics and FIFO wire formats. All
// threads of a CUDA block call every member. A step moves its payload in
// 8-byte words, one per thread at a time, so that the three protocols share
// one element path: Simple stores the word, LL splits it over two {data, flag}
// words of a 16-byte line, LL128 gives each half-warp a 128-byte line (15 data
// lanes, a flag lane). Counters are waited on and published by thread 0 behind
// block barriers; failures become block-uniform through __syncthreads_or.
// The element path is a template per (type, op), picked once per step; steps
// and waits are calls, not inlined, so that generated call sites stay small.
// A launch needs blockDim.x a multiple of 32 and at most
// COLLC_CUDA_MAX_THREADS, and every block resident at once (blocks wait for
// each other).
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
  __global__ void __launch_bounds__(COLLC_CUDA_MAX_THREADS)                                \
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
  asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(lo), "=l"(hi) : "l"(p) : "memory");
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
  __device__ Text &operator<<(int64_t v) {
    char d[20];
    int k = 0;
    uint64_t u = v < 0 ? 0 - uint64_t(v) : uint64_t(v);
    do
      d[k++] = char('0' + u % 10);
    while (u /= 10);
    if (v < 0)
      *this << "-";
    while (k && n < 255)
      p[n++] = d[--k];
    p[n] = 0;
    return *this;
  }
};

// One thread's wait: false once the communicator is aborted or the wait
// outlasts Args::timeoutSeconds; the first failure of a launch names itself
// in Args::error and errorText, as collcHostWait does.
class Patience {
public:
  __device__ explicit Patience(const Args &a) : a(a) {}
  __device__ bool keepWaiting(const char *what, int64_t peer) {
    if (++spins & 1023)
      return true;
    if (*a.abort)
      return fail(collAborted, "the communicator was aborted while waiting for ", what, peer);
    if (a.timeoutSeconds > 0) {
      uint64_t now = globalTimer();
      if (!start)
        start = now;
      else if (double(now - start) > a.timeoutSeconds * 1e9)
        return fail(collTimeout, "waited too long for ", what, peer);
    }
    return true;
  }

private:
  __device__ bool fail(int code, const char *why, const char *what, int64_t peer) {
    if (atomicCAS(reinterpret_cast<int *>(a.error), 0, code) == 0) {
      Text t{a.errorText};
      t << "rank " << int64_t(a.rank) << " threadblock " << int64_t(a.tb) << ": " << why << what
        << " " << peer;
      if (code == collTimeout)
        t << " (" << int64_t(a.timeoutSeconds + 0.5)
          << " s); a peer may have died or the plan does not match";
      __threadfence_system();
    }
    return false;
  }
  const Args &a;
  uint32_t spins = 0;
  uint64_t start = 0;
};

// Waits until *word >= goal (sys: written from another device or the host).
__device__ __noinline__ bool waitAtLeast(const Args &a, const uint64_t *word, uint64_t goal,
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
template <typename B> struct RawBits { using Bits = B; }; // copies only

// Reduction ops; avg is a sum here (the runtime divides afterwards).
struct Sum { template <class A, class B> static COLLC_DI B apply(B x, B y) { return A::add(x, y); } };
struct Prod { template <class A, class B> static COLLC_DI B apply(B x, B y) { return A::mul(x, y); } };
struct Max { template <class A, class B> static COLLC_DI B apply(B x, B y) { return A::less(x, y) ? y : x; } };
struct Min { template <class A, class B> static COLLC_DI B apply(B x, B y) { return A::less(y, x) ? y : x; } };
struct Copy { template <class A, class B> static COLLC_DI B apply(B, B y) { return y; } };

// Where the chunks of a ref lie in this loop; see chunkOf.
struct Geometry {
  int64_t count, chunks, slice, width, q;
};
struct Chunk {
  char *p;         // element 0 of the chunk
  uint32_t valid;  // elements before the end of the user's buffer
};

// Chunk `index` of a buffer whose loop row starts at `row`: scratch rows
// hold `slice` elements per chunk, the user's buffers `count` per unit, as
// Block::offset and valid do in host.h. A call: this divides.
__device__ __noinline__ Chunk chunkOf(const Geometry &g, char *row, bool scratch,
                                      uint32_t index, int32_t elemSize) {
  if (scratch)
    return {row + int64_t(index) * g.slice * elemSize, uint32_t(g.q)};
  uint32_t unit = index / uint32_t(g.chunks), pos = index - unit * uint32_t(g.chunks);
  int64_t left = g.width - pos * g.q;
  return {row + (unit * g.count + pos * g.q) * elemSize,
          uint32_t(left < 0 ? 0 : left < g.q ? left : g.q)};
}

// One step as every thread sees it: refs[0, nsrc) are the sources,
// refs[R - 1] the destination when hasDst.
template <int R> struct StepWork {
  const Args *a;
  Geometry g;
  char *row[R];
  uint32_t index[R];
  bool scratch[R];
  int32_t nsrc;
  bool hasDst, receives, sends;
  uint32_t n, bytes, words; // payload elements, bytes, 8-byte words
  const char *recvSlot;
  char *sendSlot;
  int32_t recvProtocol, sendProtocol;
  uint64_t recvFlag, sendFlag; // step + 1
};

// Moves one step's payload: each thread takes 8-byte words of it in turn;
// under LL128 a warp takes two 128-byte lines at a time, lanes 0-14 and
// 16-30 the data words, lane 15 the flags of both (one fence per pair).
template <class A, class Op, int R> class Mover {
  static_assert(R >= 2, "sources, then the destination");
  using B = typename A::Bits;
  static constexpr int kEs = sizeof(B), kV = 8 / kEs, kBits = 8 * kEs;

public:
  // False if a receive gave up. One call per (type, op, R).
  static __device__ __noinline__ bool run(const StepWork<R> &work) {
    Mover m(work);
    return m.go();
  }

private:
  __device__ explicit Mover(const StepWork<R> &s)
      : s(s), patience(*s.a), q(uint32_t(s.g.q)), n(s.n), nsrc(s.nsrc), hasDst(s.hasDst),
        receives(s.receives) {}

  COLLC_DI bool go() {
    const bool ll128 = s.recvProtocol == kLL128 || s.sendProtocol == kLL128;
    const uint32_t lane = threadIdx.x & 31, lines = (s.bytes + 119) / 120;
    const uint32_t first = ll128 ? threadIdx.x / 32 : threadIdx.x;
    const uint32_t stride = ll128 ? blockDim.x / 32 : blockDim.x;
    const uint32_t limit = ll128 ? (lines + 1) / 2 : s.words;
    for (uint32_t it = first; it < limit; it += stride) {
      const uint32_t slot = lane & 15, w = ll128 ? (2 * it + lane / 16) * 15 + slot : it;
      const bool data = !ll128 || (slot < 15 && w < s.words), second = 2 * it + 1 < lines;
      uint64_t in = 0;
      if (receives && s.recvProtocol == kLL128) {
        const uint64_t *l = reinterpret_cast<const uint64_t *>(s.recvSlot) + 32 * it;
        if (lane == 15) {
          while (!bad && (loadVolatile(l + 15) != s.recvFlag ||
                          (second && loadVolatile(l + 31) != s.recvFlag)))
            bad = !patience.keepWaiting("data from rank", s.a->recvPeer);
          fenceSys();
        }
        __syncwarp();
        if (data && !__shfl_sync(~0u, bad, 15))
          in = loadVolatile(l + 16 * (lane / 16) + slot);
      } else if (receives && data) {
        in = receiveWord(w);
      }
      if (ll128 ? __any_sync(~0u, bad) : bad)
        return false;
      uint64_t out = data ? compute(w, in) : 0;
      if (s.sends && s.sendProtocol == kLL128) {
        uint64_t *l = reinterpret_cast<uint64_t *>(s.sendSlot) + 32 * it;
        if (data)
          storeVolatile(l + 16 * (lane / 16) + slot, out);
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
    start = chunk * q;
#pragma unroll
    for (int r = 0; r < R; ++r)
      if (r < nsrc || (r == R - 1 && hasDst))
        view[r] = chunkOf(s.g, s.row[r], s.scratch[r], s.index[r] + chunk, kEs);
  }
  // kV elements from element j of a chunk, zeros past its valid ones.
  static COLLC_DI uint64_t load(const Chunk &c, uint32_t j) {
    const char *p = c.p + size_t(j) * kEs;
    if (j + kV <= c.valid && !(reinterpret_cast<uintptr_t>(p) & 7))
      return *reinterpret_cast<const uint64_t *>(p);
    uint64_t v = 0;
#pragma unroll
    for (int i = 0; i < kV; ++i)
      if (j + i < c.valid)
        v |= uint64_t(reinterpret_cast<const B *>(p)[i]) << (i * kBits);
    return v;
  }
  static COLLC_DI void store(const Chunk &c, uint32_t j, uint64_t v) {
    char *p = c.p + size_t(j) * kEs;
    if (j + kV <= c.valid && !(reinterpret_cast<uintptr_t>(p) & 7)) {
      *reinterpret_cast<uint64_t *>(p) = v;
      return;
    }
#pragma unroll
    for (int i = 0; i < kV; ++i)
      if (j + i < c.valid)
        reinterpret_cast<B *>(p)[i] = B(v >> (i * kBits));
  }
  static COLLC_DI uint64_t apply(uint64_t x, uint64_t y) {
    uint64_t v = 0;
#pragma unroll
    for (int i = 0; i < kV; ++i)
      v |= uint64_t(Op::template apply<A>(B(x >> (i * kBits)), B(y >> (i * kBits))))
           << (i * kBits);
    return v;
  }

  // Payload word w: what arrived (`in`, if the step receives) reduced with
  // the sources and stored to the destination; elements past the payload
  // are 0 on the wire.
  COLLC_DI uint64_t compute(uint32_t w, uint64_t in) {
    const uint32_t e0 = w * kV;
    if (k == ~0u || e0 - start >= q) // a thread's words only move forward
      enter(e0 / q);
    uint32_t j = e0 - start;
    if (j + kV <= q && e0 + kV <= n) { // the common case: one chunk, whole words
      uint64_t acc = in;
#pragma unroll
      for (int r = 0; r < R - 1; ++r) {
        if (r < nsrc) {
          uint64_t x = load(view[r], j);
          acc = r > 0 || receives ? apply(acc, x) : x;
        }
      }
      if (hasDst)
        store(view[R - 1], j, acc);
      return acc;
    }
    uint64_t acc = 0;
#pragma unroll 1
    for (uint32_t i = 0; i < kV && e0 + i < n; ++i, ++j) {
      if (j == q) {
        enter(k + 1);
        j = 0;
      }
      B v = B(in >> (i * kBits));
#pragma unroll
      for (int r = 0; r < R - 1; ++r) {
        if (r < nsrc) {
          B x = j < view[r].valid ? reinterpret_cast<const B *>(view[r].p)[j] : B(0);
          v = r > 0 || receives ? Op::template apply<A>(v, x) : x;
        }
      }
      if (hasDst && j < view[R - 1].valid)
        reinterpret_cast<B *>(view[R - 1].p)[j] = v;
      acc |= uint64_t(v) << (i * kBits);
    }
    return acc;
  }

  const StepWork<R> &s; // read where it is, outside the element path
  Patience patience;
  const uint32_t q, n;
  const int32_t nsrc;
  const bool hasDst, receives;
  Chunk view[R];
  uint32_t k = ~0u, start = 0; // the chunk the views show, its first element
  bool bad = false;
};

template <class A, int R> COLLC_DI bool reduceAs(const StepWork<R> &s, int32_t op) {
  switch (op) {
  case collProd: return Mover<A, Prod, R>::run(s);
  case collMax: return Mover<A, Max, R>::run(s);
  case collMin: return Mover<A, Min, R>::run(s);
  default: return Mover<A, Sum, R>::run(s); // sum, and avg
  }
}

template <int R> COLLC_DI bool move(const StepWork<R> &s, int32_t datatype, int32_t op,
                                    int32_t elemSize) {
  if (s.nsrc + (s.receives ? 1 : 0) < 2) {
    switch (elemSize) {
    case 1: return Mover<RawBits<uint8_t>, Copy, R>::run(s);
    case 2: return Mover<RawBits<uint16_t>, Copy, R>::run(s);
    case 4: return Mover<RawBits<uint32_t>, Copy, R>::run(s);
    default: return Mover<RawBits<uint64_t>, Copy, R>::run(s);
    }
  }
  switch (datatype) {
  case collInt8: return reduceAs<IntArith<uint8_t, int8_t>>(s, op);
  case collUint8: return reduceAs<IntArith<uint8_t, uint8_t>>(s, op);
  case collInt32: return reduceAs<IntArith<uint32_t, int32_t>>(s, op);
  case collUint32: return reduceAs<IntArith<uint32_t, uint32_t>>(s, op);
  case collInt64: return reduceAs<IntArith<uint64_t, int64_t>>(s, op);
  case collUint64: return reduceAs<IntArith<uint64_t, uint64_t>>(s, op);
  case collFloat16: return reduceAs<FloatArith<F16>>(s, op);
  case collFloat32: return reduceAs<FloatArith<F32>>(s, op);
  case collFloat64: return reduceAs<FloatArith<F64>>(s, op);
  case collBfloat16: return reduceAs<FloatArith<BF16>>(s, op);
  case collFloat8e4m3: return reduceAs<FloatArith<F8<__NV_E4M3>>>(s, op);
  case collFloat8e5m2: return reduceAs<FloatArith<F8<__NV_E5M2>>>(s, op);
  default: return false;
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
  __device__ bool nextLoop() {
    if (dead || ++loop >= loops)
      return false;
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
  // Called as b.reduce({in(1), in(2)}, out(3)): N is the length of the list.
  template <int N> __device__ void reduce(const Ref (&srcs)[N], Ref dst) {
    Ref refs[N + 1];
    for (int i = 0; i < N; ++i)
      refs[i] = srcs[i];
    refs[N] = dst;
    step<N + 1>(refs, N, true, false, false);
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
  template <int R>
  __device__ __noinline__ void step(const Ref (&refs)[R], int32_t nsrc, bool hasDst,
                                    bool receives, bool sends) {
    if (dead)
      return;
    const Args &A = *a;
    cuda::StepWork<R> s;
    s.a = a;
    s.g = {A.count, A.chunks, A.slice, width, q};
    for (int r = 0; r < R; ++r) {
      const Ref &ref = refs[r];
      if (r >= nsrc && !(r == R - 1 && hasDst))
        continue;
      bool scratch = ref.buffer >= kScratch0;
      int64_t row = scratch ? loop * A.scratchChunks[ref.buffer - kScratch0] * A.slice
                            : loop * perLoop;
      s.row[r] = A.buffers[ref.buffer] + row * A.elemSize;
      s.index[r] = uint32_t(ref.index);
      s.scratch[r] = scratch;
    }
    s.nsrc = nsrc;
    s.hasDst = hasDst;
    s.receives = receives;
    s.sends = sends;
    int64_t chunks = hasDst ? refs[R - 1].count : nsrc ? refs[0].count : 0;
    s.n = uint32_t(chunks * q);
    s.bytes = s.n * uint32_t(A.elemSize);
    s.words = (s.bytes + 7) / 8;
    const Fifo &in = A.recv, &out = A.send;
    s.recvProtocol = receives ? in.protocol : -1;
    s.sendProtocol = sends ? out.protocol : -1;
    s.recvSlot = receives ? in.slots + (recvStep % in.numSlots) * in.slotBytes : nullptr;
    s.sendSlot = sends ? out.slots + (sendStep % out.numSlots) * out.slotBytes : nullptr;
    s.recvFlag = recvStep + 1;
    s.sendFlag = sendStep + 1;

    // Thread 0 waits for room to send and, for Simple, for the data; the
    // step may hold its receive slot meanwhile (the runtime sizes FIFOs).
    if (sends || (receives && in.protocol == kSimple)) {
      bool bad = false;
      if (threadIdx.x == 0) {
        uint64_t slots = uint64_t(out.numSlots);
        if (sends && sendStep + 1 > slots)
          bad = !cuda::waitAtLeast(A, out.head, sendStep + 1 - slots, true,
                                   "room to send to rank", A.sendPeer);
        if (!bad && receives && in.protocol == kSimple)
          bad = !cuda::waitAtLeast(A, in.tail, recvStep + 1, true, "data from rank",
                                   A.recvPeer);
      }
      if ((dead = __syncthreads_or(bad)))
        return;
    }
    bool ok = cuda::move(s, A.datatype, A.op, A.elemSize);
    if ((dead = __syncthreads_or(!ok)))
      return;
    if (threadIdx.x == 0) {
      if (receives)
        cuda::releaseSys(in.head, recvStep + 1);
      if (sends) {
        if (out.sizes)
          out.sizes[sendStep % out.numSlots] =
              out.protocol == kSimple ? s.bytes
              : out.protocol == kLL   ? (s.bytes + 3) / 4 * 8
                                      : (s.bytes + 119) / 120 * 128;
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
