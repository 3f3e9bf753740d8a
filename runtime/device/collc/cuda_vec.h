//===- cuda_vec.h - Arithmetic and vector memory access on the GPU --------===//
//
// Element arithmetic as runtime/support/Numeric.h does it on the host, applied
// to whole words of packed elements, and reduceCopy, the loop of every step
// on plain memory: 16-byte accesses, several per thread in flight, with a
// short head and tail where the pointers are not aligned. A kernel
// compiled for one (type, op) reduces with Typed, inlined in every loop;
// the kernel for every other pair with AnyType, which runs loops compiled
// for copies and the common sums, chosen once per run, and otherwise
// chooses per 8-byte word (a loop per pair would cost ptxas minutes).
//
//===----------------------------------------------------------------------===//

#ifndef COLLC_DEVICE_CUDA_VEC_H
#define COLLC_DEVICE_CUDA_VEC_H

#include "collc/cuda_sync.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace collc {
namespace cuda {

// Arithmetic on the bits of one element: integers wrap, narrow floats
// compute in float and round after each operation (fp8 saturates to the
// largest finite value).
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

// x (op) y in every element of a word W of packed elements.
template <class A, class Op, typename W> COLLC_DI W apply(W x, W y) {
  using B = typename A::Bits;
  constexpr int kBits = 8 * sizeof(B);
  static_assert(sizeof(W) >= sizeof(B), "a word holds whole elements");
  if constexpr (sizeof(W) == sizeof(B)) {
    return W(Op::template apply<A>(B(x), B(y)));
  } else {
    W v = 0;
#pragma unroll
    for (int i = 0; i < int(sizeof(W) / sizeof(B)); ++i)
      v |= W(Op::template apply<A>(B(x >> (i * kBits)), B(y >> (i * kBits)))) << (i * kBits);
    return v;
  }
}

// Steps that reduce nothing: the same loop for every type.
template <int kEs> struct CopyOf;
template <> struct CopyOf<1> {
  using type = IntArith<uint8_t, uint8_t>;
};
template <> struct CopyOf<2> {
  using type = IntArith<uint16_t, uint16_t>;
};
template <> struct CopyOf<4> {
  using type = IntArith<uint32_t, uint32_t>;
};
template <> struct CopyOf<8> {
  using type = IntArith<uint64_t, uint64_t>;
};

// x (op) y in every element of two words of kEs-byte elements, the (type,
// op) chosen per word, for the LL and LL128 loops and the less common
// pairs. A call: inlined, its sixteen cases would crowd every loop's
// registers.
template <class A> COLLC_DI uint64_t applyAs(int32_t op, uint64_t x, uint64_t y) {
  switch (op) {
  case collProd:
    return apply<A, Prod>(x, y);
  case collMax:
    return apply<A, Max>(x, y);
  case collMin:
    return apply<A, Min>(x, y);
  default:
    return apply<A, Sum>(x, y); // sum, and avg
  }
}
template <int kEs>
static __device__ __noinline__ uint64_t reduceWords(int32_t type, int32_t op, uint64_t x,
                                                    uint64_t y) {
  if constexpr (kEs == 1) {
    switch (type) {
    case collInt8:
      return applyAs<IntArith<uint8_t, int8_t>>(op, x, y);
    case collUint8:
      return applyAs<IntArith<uint8_t, uint8_t>>(op, x, y);
    case collFloat8e4m3:
      return applyAs<FloatArith<F8<__NV_E4M3>>>(op, x, y);
    default:
      return applyAs<FloatArith<F8<__NV_E5M2>>>(op, x, y);
    }
  } else if constexpr (kEs == 2) {
    if (type == collBfloat16)
      return applyAs<FloatArith<BF16>>(op, x, y);
    return applyAs<FloatArith<F16>>(op, x, y);
  } else if constexpr (kEs == 4) {
    switch (type) {
    case collInt32:
      return applyAs<IntArith<uint32_t, int32_t>>(op, x, y);
    case collUint32:
      return applyAs<IntArith<uint32_t, uint32_t>>(op, x, y);
    default:
      return applyAs<FloatArith<F32>>(op, x, y);
    }
  } else {
    switch (type) {
    case collInt64:
      return applyAs<IntArith<uint64_t, int64_t>>(op, x, y);
    case collUint64:
      return applyAs<IntArith<uint64_t, uint64_t>>(op, x, y);
    default:
      return applyAs<FloatArith<F64>>(op, x, y);
    }
  }
}

// The arithmetic and op of collDataType_t T and collRedOp_t O.
template <int32_t T> struct ArithOf;
#define COLLC_ARITH(T, ...)                                                                        \
  template <> struct ArithOf<T> {                                                                  \
    using type = __VA_ARGS__;                                                                      \
  };
COLLC_ARITH(collInt8, IntArith<uint8_t, int8_t>)
COLLC_ARITH(collUint8, IntArith<uint8_t, uint8_t>)
COLLC_ARITH(collInt32, IntArith<uint32_t, int32_t>)
COLLC_ARITH(collUint32, IntArith<uint32_t, uint32_t>)
COLLC_ARITH(collInt64, IntArith<uint64_t, int64_t>)
COLLC_ARITH(collUint64, IntArith<uint64_t, uint64_t>)
COLLC_ARITH(collFloat16, FloatArith<F16>)
COLLC_ARITH(collFloat32, FloatArith<F32>)
COLLC_ARITH(collFloat64, FloatArith<F64>)
COLLC_ARITH(collBfloat16, FloatArith<BF16>)
COLLC_ARITH(collFloat8e4m3, FloatArith<F8<__NV_E4M3>>)
COLLC_ARITH(collFloat8e5m2, FloatArith<F8<__NV_E5M2>>)
#undef COLLC_ARITH
template <int32_t O> struct OpOf {
  using type = Sum; // sum, and avg
};
template <> struct OpOf<collProd> {
  using type = Prod;
};
template <> struct OpOf<collMax> {
  using type = Max;
};
template <> struct OpOf<collMin> {
  using type = Min;
};

// How a step reduces two words of packed elements (W of 1 to 16 bytes):
// Typed for the (type, op) its kernel is compiled for, inlined; AnyType for
// any other, a call per 8-byte word. kEs: the element size.
template <int32_t T, int32_t O> struct Typed {
  using A = typename ArithOf<T>::type;
  using Op = typename OpOf<O>::type;
  static constexpr int kEs = sizeof(typename A::Bits);
  static constexpr bool kInline = true; // the loops' helpers too
  template <typename W> COLLC_DI W operator()(W x, W y) const { return apply<A, Op>(x, y); }
};
template <int kEsOf> struct AnyType {
  static constexpr int kEs = kEsOf;
  static constexpr bool kInline = false;
  int32_t type, op;
  template <typename W> COLLC_DI W operator()(W x, W y) const {
    if constexpr (sizeof(W) == 16)
      return {reduceWords<kEs>(type, op, x.x, y.x), reduceWords<kEs>(type, op, x.y, y.y)};
    else
      return W(reduceWords<kEs>(type, op, x, y));
  }
};

// Calls f(Constant<n>{}) for the one of Ns that n is (the last where it
// is none): a value known only at run time made a constant, so that the
// loops are compiled per value.
template <int N> struct Constant {
  static constexpr int value = N;
};
template <int... Ns, class F> COLLC_DI void withConstant(int32_t n, F &&f) {
  constexpr int all[] = {Ns...}, last = all[sizeof...(Ns) - 1];
  if (!((n == Ns && (f(Constant<Ns>{}), true)) || ...))
    f(Constant<last>{});
}
// The element size: 1, 2, 4 or 8 bytes. A switch: the kernel for any pair
// inlines each step once per size, and behind withConstant's chain of
// tests the ring's Simple kernel took 192 bytes of stack, not 64.
template <class F> COLLC_DI void withSize(int32_t elemSize, F &&f) {
  switch (elemSize) {
  case 1:
    return f(Constant<1>{});
  case 2:
    return f(Constant<2>{});
  case 4:
    return f(Constant<4>{});
  default:
    return f(Constant<8>{});
  }
}
// Calls f with how a kernel compiled for (T, O) reduces: that pair, or
// for kAnyType the launch's chosen per word for its element size.
template <int32_t T, int32_t O, class F> COLLC_DI void withReduce(const Args &a, F &&f) {
  if constexpr (T != kAnyType)
    f(Typed<T, O>{});
  else
    withSize(a.elemSize, [&](auto size) { f(AnyType<decltype(size)::value>{a.datatype, a.op}); });
}

// Plain memory, in units of 1 to 16 bytes. Ordered by the barriers and
// fences around a step, so plain (weak) global accesses: FIFO slots are
// only read after an acquire, which leaves no stale L1 line behind.
struct alignas(16) U128 {
  uint64_t x, y;
};
template <int N> struct UnitOf;
template <> struct UnitOf<1> {
  using type = uint8_t;
};
template <> struct UnitOf<2> {
  using type = uint16_t;
};
template <> struct UnitOf<4> {
  using type = uint32_t;
};
template <> struct UnitOf<8> {
  using type = uint64_t;
};
template <> struct UnitOf<16> {
  using type = U128;
};

template <typename W> COLLC_DI W ld(const char *p) {
  W v;
  if constexpr (sizeof(W) == 16)
    asm volatile("ld.global.v2.u64 {%0, %1}, [%2];" : "=l"(v.x), "=l"(v.y) : "l"(p) : "memory");
  else if constexpr (sizeof(W) == 8)
    asm volatile("ld.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  else
    v = *reinterpret_cast<const W *>(p);
  return v;
}
template <typename W> COLLC_DI void st(char *p, W v) {
  if constexpr (sizeof(W) == 16)
    asm volatile("st.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(v.x), "l"(v.y) : "memory");
  else if constexpr (sizeof(W) == 8)
    asm volatile("st.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
  else
    *reinterpret_cast<W *>(p) = v;
}
template <class A, class Op> COLLC_DI U128 apply(U128 a, U128 b) {
  return {apply<A, Op>(a.x, b.x), apply<A, Op>(a.y, b.y)};
}

// 8 bytes at p, which is only element-aligned: two aligned loads, shifted
// together (an aligned 8-byte word never crosses a page, so the second may
// read past the end of the buffer but not past its last page).
COLLC_DI uint64_t ldWord(const char *p) {
  const uint32_t shift = 8 * uint32_t(reinterpret_cast<uintptr_t>(p) & 7);
  if (!shift)
    return ld<uint64_t>(p);
  const char *q = p - shift / 8;
  return ld<uint64_t>(q) >> shift | ld<uint64_t>(q + 8) << (64 - shift);
}
// The store of ldWord: in the widest units p's alignment allows.
COLLC_DI void stWord(char *p, uint64_t v) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  if (!(at & 7)) {
    st<uint64_t>(p, v);
  } else if (!(at & 3)) {
    st<uint32_t>(p, uint32_t(v));
    st<uint32_t>(p + 4, uint32_t(v >> 32));
  } else if (!(at & 1)) {
#pragma unroll
    for (int i = 0; i < 4; ++i)
      st<uint16_t>(p + 2 * i, uint16_t(v >> 16 * i));
  } else {
#pragma unroll
    for (int i = 0; i < 8; ++i)
      st<uint8_t>(p + i, uint8_t(v >> 8 * i));
  }
}

// Pointers to the sources and destinations of one run of elements, as
// many as a step's shape fixes at compile time: once the loops unroll,
// every index is a constant and the arrays live in registers.
constexpr int kMaxPtrs = 8;
template <int NS, int ND> struct Ptrs {
  static constexpr int32_t nsrc = NS, ndst = ND;
  const char *src[NS > 0 ? NS : 1];
  char *dst[ND > 0 ? ND : 1];
};
// The same, counted at run time.
struct Run {
  int32_t nsrc, ndst;
  const char *src[kMaxPtrs];
  char *dst[kMaxPtrs];
};
// How many sources R has where it is a Ptrs; 0 for a Run.
template <class R> constexpr int kFixedSources = 0;
template <int NS, int ND> constexpr int kFixedSources<Ptrs<NS, ND>> = NS;
// A count of pointers, in [1, kMaxPtrs].
template <class F> COLLC_DI void withCount(int32_t n, F &&f) {
  withConstant<1, 2, 3, 4, 5, 6, 7, kMaxPtrs>(n, f);
}

// 16-byte units [0, n) from run offset `off`: every destination gets the
// sources reduced, compiled for one (type, op). As NCCL's reduceCopyPacks:
// a warp takes hunks of kU * 32 consecutive units, lane l units l, l + 32,
// ..., so that a thread's kU accesses per pointer are one address and
// constant offsets, its kU loads of source 0 in flight together, then
// those of each other source; with more than two sources, counted at
// compile time, and registers for all, every source's at once.
template <class A, class Op, int kU = 4, class R>
COLLC_DI void reduceUnits16(const R &r, size_t off, uint32_t n) {
  constexpr bool kAllFirst = kFixedSources<R> > 2 && kFixedSources<R> * kU <= 16;
  constexpr uint32_t kHunk = kU * 32, kStride = 32 * 16;
  const uint32_t lane = threadIdx.x % 32, nw = blockDim.x / 32, hunks = n / kHunk;
  for (uint32_t h = threadIdx.x / 32; h < hunks; h += nw) {
    const size_t at = off + 16 * (size_t(h) * kHunk + lane);
    U128 v[kU];
    if constexpr (kAllFirst) {
      // Every source's loads in flight before the first is reduced (a
      // wide run reads every rank's window over NVLink).
      U128 w[kFixedSources<R>][kU];
#pragma unroll
      for (int s = 0; s < kFixedSources<R>; ++s)
#pragma unroll
        for (int u = 0; u < kU; ++u)
          w[s][u] = ld<U128>(r.src[s] + at + kStride * u);
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        v[u] = w[0][u];
#pragma unroll
        for (int s = 1; s < kFixedSources<R>; ++s)
          v[u] = apply<A, Op>(v[u], w[s][u]);
      }
    } else {
      U128 w[kU];
#pragma unroll
      for (int u = 0; u < kU; ++u)
        v[u] = ld<U128>(r.src[0] + at + kStride * u);
#pragma unroll
      for (int s = 1; s < r.nsrc; ++s) {
#pragma unroll
        for (int u = 0; u < kU; ++u)
          w[u] = ld<U128>(r.src[s] + at + kStride * u);
#pragma unroll
        for (int u = 0; u < kU; ++u)
          v[u] = apply<A, Op>(v[u], w[u]);
      }
    }
#pragma unroll
    for (int d = 0; d < r.ndst; ++d)
#pragma unroll
      for (int u = 0; u < kU; ++u)
        st<U128>(r.dst[d] + at + kStride * u, v[u]);
  }
  for (uint32_t i = hunks * kHunk + threadIdx.x; i < n; i += blockDim.x) {
    const size_t at = off + 16 * size_t(i);
    U128 v = ld<U128>(r.src[0] + at);
#pragma unroll
    for (int s = 1; s < r.nsrc; ++s)
      v = apply<A, Op>(v, ld<U128>(r.src[s] + at));
#pragma unroll
    for (int d = 0; d < r.ndst; ++d)
      st<U128>(r.dst[d] + at, v);
  }
}
// The same in units of kUnit (16 bytes, or one element for what no wider
// unit fits), reduced by Rd: for AnyType, chosen per 8-byte word.
template <int kUnit, class Rd, class R>
COLLC_DI void reduceUnits(Rd rd, const R &r, size_t off, uint32_t n) {
  using W = typename UnitOf<kUnit>::type;
  constexpr int kU = 4;
  const uint32_t nt = blockDim.x;
  for (uint32_t i = threadIdx.x; i < n; i += kU * nt) {
    W v[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u)
      if (i + u * nt < n)
        v[u] = ld<W>(r.src[0] + off + size_t(i + u * nt) * kUnit);
    auto reduceFrom = [&](int s) {
#pragma unroll
      for (int u = 0; u < kU; ++u)
        if (i + u * nt < n)
          v[u] = rd(v[u], ld<W>(r.src[s] + off + size_t(i + u * nt) * kUnit));
    };
    // AnyType calls per word: a loop over its sources keeps one pointer,
    // not all, live across the calls.
    if constexpr (Rd::kInline) {
#pragma unroll
      for (int s = 1; s < r.nsrc; ++s)
        reduceFrom(s);
    } else {
#pragma unroll 1
      for (int s = 1; s < r.nsrc; ++s)
        reduceFrom(s);
    }
#pragma unroll
    for (int d = 0; d < r.ndst; ++d)
#pragma unroll
      for (int u = 0; u < kU; ++u)
        if (i + u * nt < n)
          st<W>(r.dst[d] + off + size_t(i + u * nt) * kUnit, v[u]);
  }
}

// The 16-byte units of a run: copies in a loop of their own; a typed
// kernel's pair in its loop; for any other kernel, the reductions that
// dominate training (fp32, fp16 and bf16 sums) in theirs and the rest
// chosen per word.
// A typed kernel's loops have the registers for 8 units in flight, as
// NCCL's Simple on sm_90, where a run has at most 4 pointers; 4 where
// more (peer-window steps over every rank) would need them; with more
// than two sources, 16 units of all sources together.
template <class R>
constexpr int kSourceUnits = R::nsrc > 2 ? (R::nsrc < 16 ? 16 / R::nsrc : 1) : 16;
#if __CUDA_ARCH__ >= 900
template <class R>
constexpr int kTypedUnits = R::nsrc + R::ndst > 4 ? (kSourceUnits<R> < 4 ? kSourceUnits<R> : 4)
                                                  : (kSourceUnits<R> < 8 ? kSourceUnits<R> : 8);
#else
template <class R> constexpr int kTypedUnits = kSourceUnits<R> < 4 ? kSourceUnits<R> : 4;
#endif
template <int32_t T, int32_t O, class R>
COLLC_DI void reduceUnits16(Typed<T, O>, const R &r, size_t off, uint32_t n) {
  using Rd = Typed<T, O>;
  if (r.nsrc == 1)
    reduceUnits16<CopyOf<1>::type, Sum, kTypedUnits<R>>(r, off, n);
  else
    reduceUnits16<typename Rd::A, typename Rd::Op, kTypedUnits<R>>(r, off, n);
}
template <int kEs, class R>
COLLC_DI void reduceUnits16(AnyType<kEs> rd, const R &r, size_t off, uint32_t n) {
  const bool sum = rd.op == collSum || rd.op == collAvg;
  if (r.nsrc == 1)
    reduceUnits16<CopyOf<1>::type, Sum>(r, off, n);
  else if (kEs == 4 && sum && rd.type == collFloat32)
    reduceUnits16<FloatArith<F32>, Sum>(r, off, n);
  else if (kEs == 2 && sum && rd.type == collFloat16)
    reduceUnits16<FloatArith<F16>, Sum>(r, off, n);
  else if (kEs == 2 && sum && rd.type == collBfloat16)
    reduceUnits16<FloatArith<BF16>, Sum>(r, off, n);
  else
    reduceUnits<16>(rd, r, off, n);
}

// dst = the sources reduced, n elements of Rd::kEs bytes: 16-byte units
// where every pointer is as far from 16-byte alignment; the elements
// before and after them, or all where the pointers differ, one at a time.
template <class Rd, class R> COLLC_DI void reduceCopyAt(Rd rd, const R &r, uint32_t n) {
  constexpr int kEs = Rd::kEs;
  uintptr_t first = reinterpret_cast<uintptr_t>(r.src[0]), differ = 0;
#pragma unroll
  for (int s = 1; s < r.nsrc; ++s)
    differ |= reinterpret_cast<uintptr_t>(r.src[s]) ^ first;
#pragma unroll
  for (int d = 0; d < r.ndst; ++d)
    differ |= reinterpret_cast<uintptr_t>(r.dst[d]) ^ first;
  uint32_t head = n, body = 0;
  if (!(differ & 15)) {
    const uint32_t lead = uint32_t((16 - first % 16) % 16) / kEs;
    head = lead < n ? lead : n;
    body = (n - head) * kEs / 16;
    reduceUnits16(rd, r, size_t(head) * kEs, body);
  }
  const uint32_t done = head + body * 16 / kEs;
  if (head)
    reduceUnits<kEs>(rd, r, 0, head);
  if (done < n)
    reduceUnits<kEs>(rd, r, size_t(done) * kEs, n - done);
}
// The same as a call, the pointers passed by value (in registers): the
// loops then have the registers to themselves, not shared with the step
// that calls them.
template <class Rd, class R>
static __device__ __noinline__ void reduceCopy(Rd rd, const R r, uint32_t n) {
  reduceCopyAt(rd, r, n);
}
// Inlined in a typed kernel, a call in the other (whose loops per common
// pair would crowd its caller).
template <class Rd, class R> COLLC_DI void reduceCopyIn(Rd rd, const R &r, uint32_t n) {
  if constexpr (Rd::kInline)
    reduceCopyAt(rd, r, n);
  else
    reduceCopy(rd, r, n);
}

} // namespace cuda
} // namespace collc

#endif // COLLC_DEVICE_CUDA_VEC_H
