//===- cuda_peer.h - Multimem and peer-window steps on the GPU ------------===//
//
// Steps on other ranks' buffers. Multimem (NVLink multicast, sm_90+): one
// ld_reduce returns an element reduced over every rank, one st stores to
// every rank; both in their 16-byte .v4 forms where the type has one and
// the chunk is aligned, one element (or aligned pair of 2-byte ones) at a
// time otherwise. Peer windows: reduceCopy over every rank's chunk at
// once, loaded in one pass.
//
//===----------------------------------------------------------------------===//

#ifndef COLLC_DEVICE_CUDA_PEER_H
#define COLLC_DEVICE_CUDA_PEER_H

#include "collc/cuda_chunks.h"
#include "collc/multimem.h"

namespace collc {
namespace cuda {

// The element (the aligned 4-byte pair of 2-byte ones) at multicast
// address x, reduced over every rank.
COLLC_DI uint64_t multimemLoad(int32_t type, int32_t op, const char *x) {
  uint64_t v = 0;
#if __CUDA_ARCH__ >= 900
  uint32_t r = 0;
  float f = 0;
  double d = 0;
#define COLLC_LD(what, cons, out)                                                                  \
  asm volatile("multimem.ld_reduce.relaxed.sys.global." what " %0, [%1];"                          \
               : "=" cons(out)                                                                     \
               : "l"(x)                                                                            \
               : "memory")
#define COLLC_LD3(sum, min, max, cons, out)                                                        \
  do {                                                                                             \
    if (op == collMin)                                                                             \
      COLLC_LD(min, cons, out);                                                                    \
    else if (op == collMax)                                                                        \
      COLLC_LD(max, cons, out);                                                                    \
    else                                                                                           \
      COLLC_LD(sum, cons, out);                                                                    \
  } while (0)
  switch (type) {
  case collFloat32:
    COLLC_LD("add.f32", "f", f);
    return __float_as_uint(f);
  case collFloat64:
    COLLC_LD("add.f64", "d", d);
    return uint64_t(__double_as_longlong(d));
  case collFloat16:
    COLLC_LD3("add.acc::f32.f16x2", "min.f16x2", "max.f16x2", "r", r);
    return r;
  case collBfloat16:
    COLLC_LD3("add.acc::f32.bf16x2", "min.bf16x2", "max.bf16x2", "r", r);
    return r;
  case collInt32:
    COLLC_LD3("add.s32", "min.s32", "max.s32", "r", r);
    return r;
  case collUint32:
    COLLC_LD3("add.u32", "min.u32", "max.u32", "r", r);
    return r;
  case collInt64:
    COLLC_LD3("add.u64", "min.s64", "max.s64", "l", v);
    return v;
  default:
    COLLC_LD3("add.u64", "min.u64", "max.u64", "l", v);
    return v;
  }
#undef COLLC_LD3
#undef COLLC_LD
#endif
  return v;
}
// 16 bytes at multicast address x (16-byte aligned) reduced over every
// rank, for the types and ops of multimemReduces16.
COLLC_DI U128 multimemLoad16(int32_t type, int32_t op, const char *x) {
  uint32_t r[4] = {0, 0, 0, 0};
#if __CUDA_ARCH__ >= 900
#define COLLC_LD4(what)                                                                            \
  asm volatile("multimem.ld_reduce.relaxed.sys.global." what " {%0, %1, %2, %3}, [%4];"            \
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])                                    \
               : "l"(x)                                                                            \
               : "memory")
  const bool half = type == collFloat16;
  if (type == collFloat32)
    COLLC_LD4("add.v4.f32");
  else if (op == collMin && half)
    COLLC_LD4("min.v4.f16x2");
  else if (op == collMin)
    COLLC_LD4("min.v4.bf16x2");
  else if (op == collMax && half)
    COLLC_LD4("max.v4.f16x2");
  else if (op == collMax)
    COLLC_LD4("max.v4.bf16x2");
  else if (half)
    COLLC_LD4("add.acc::f32.v4.f16x2");
  else
    COLLC_LD4("add.acc::f32.v4.bf16x2");
#undef COLLC_LD4
#endif
  return {r[0] | uint64_t(r[1]) << 32, r[2] | uint64_t(r[3]) << 32};
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
COLLC_DI void multimemStore16(char *x, U128 v) {
#if __CUDA_ARCH__ >= 900
  asm volatile("multimem.st.relaxed.sys.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(x),
               "f"(__uint_as_float(uint32_t(v.x))), "f"(__uint_as_float(uint32_t(v.x >> 32))),
               "f"(__uint_as_float(uint32_t(v.y))), "f"(__uint_as_float(uint32_t(v.y >> 32)))
               : "memory");
#endif
}

// store(i, load(i)) for the 16-byte units i in [0, n), 4 per thread in
// flight: all their loads are issued before the first store.
template <class Load, class Store> COLLC_DI void unitsInFlight(uint32_t n, Load load, Store store) {
  constexpr int kU = 4;
  const uint32_t nt = blockDim.x;
  uint32_t i = threadIdx.x;
  for (; i + (kU - 1) * nt < n; i += kU * nt) {
    U128 v[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u)
      v[u] = load(i + u * nt);
#pragma unroll
    for (int u = 0; u < kU; ++u)
      store(i + u * nt, v[u]);
  }
  for (; i < n; i += nt)
    store(i, load(i));
}

// dst = the chunk at multicast address x reduced over every rank: `whole`
// elements that every rank has, then zeros up to the destination's valid
// ones. 2-byte elements are reduced in aligned pairs.
static __device__ __noinline__ void multimemReduceChunk(const Args &A, const char *x, Chunk s,
                                                        Chunk d) {
  const int32_t es = A.elemSize;
  const uint32_t whole = s.valid < d.valid ? s.valid : d.valid;
  uint32_t head = 0, body = 0; // elements before the 16-byte units, units
  if (multimemReduces16(A.datatype, A.op) &&
      !((reinterpret_cast<uintptr_t>(x) ^ reinterpret_cast<uintptr_t>(d.p)) & 15)) {
    head = uint32_t((16 - reinterpret_cast<uintptr_t>(x) % 16) % 16) / es;
    head = head < whole ? head : whole;
    body = (whole - head) * es / 16;
    const char *from = x + size_t(head) * es;
    char *to = d.p + size_t(head) * es;
    unitsInFlight(
        body, [&](uint32_t i) { return multimemLoad16(A.datatype, A.op, from + 16 * size_t(i)); },
        [&](uint32_t i, U128 v) { st<U128>(to + 16 * size_t(i), v); });
  }
  const uint32_t tail = head + body * 16 / es;
  for (uint32_t j = threadIdx.x; j < d.valid; j += blockDim.x) {
    if (j >= head && j < tail)
      continue;
    uint64_t v = 0;
    if (j < s.valid && es == 2) {
      uintptr_t at = uintptr_t(x + 2 * j);
      v = multimemLoad(A.datatype, A.op, x + 2 * j - (at & 2)) >> 8 * (at & 2);
    } else if (j < s.valid) {
      v = multimemLoad(A.datatype, A.op, x + size_t(j) * es);
    }
    memcpy(d.p + size_t(j) * es, &v, es);
  }
}

// The chunk s stored to multicast address x, zeros past its valid elements
// up to n; false if 1- and 2-byte elements do not fill whole 4-byte words.
static __device__ __noinline__ bool multimemStoreChunk(const Args &A, char *x, Chunk s,
                                                       uint32_t n) {
  const int32_t es = A.elemSize;
  const int32_t unit = es < 4 ? 4 : es, per = unit / es;
  if ((uintptr_t(x) | n * es) % unit)
    return false;
  uint32_t head = 0, body = 0;
  if (!((reinterpret_cast<uintptr_t>(x) ^ reinterpret_cast<uintptr_t>(s.p)) & 15)) {
    const uint32_t whole = s.valid < n ? s.valid : n;
    head = uint32_t((16 - reinterpret_cast<uintptr_t>(x) % 16) % 16) / es;
    head = head < whole ? head : whole;
    body = (whole - head) * es / 16;
    const char *from = s.p + size_t(head) * es;
    char *to = x + size_t(head) * es;
    unitsInFlight(
        body, [&](uint32_t i) { return ld<U128>(from + 16 * size_t(i)); },
        [&](uint32_t i, U128 v) { multimemStore16(to + 16 * size_t(i), v); });
  }
  // Elements outside the units, in words of `unit` bytes (head and tail
  // are whole words: x is unit-aligned, 16 a multiple of unit).
  const uint32_t first = head / per, last = (head + body * 16 / es) / per;
  for (uint32_t w = threadIdx.x; w < n / per; w += blockDim.x) {
    if (w >= first && w < last)
      continue;
    uint64_t v = 0;
    for (int32_t i = 0; i < per; ++i) {
      uint64_t e = 0;
      if (w * per + i < s.valid)
        memcpy(&e, s.p + size_t(w * per + i) * es, es);
      v |= e << 8 * es * i;
    }
    multimemStore(x + size_t(w) * unit, v, unit);
  }
  return true;
}

} // namespace cuda
} // namespace collc

#endif // COLLC_DEVICE_CUDA_PEER_H
