//===- Numeric.h - Arithmetic of NCCL's data types on the CPU ---------------===//
//
// Integers wrap (computed unsigned, so that overflow is defined and every
// order of a sum gives the same bits); fp16 and bf16 compute in float and
// round to nearest even after each operation, as the GPU's reduce does.
// Deliberately shared beyond the runtime: the checks of tools/ranks and the
// fake driver of test/e2e take Half, BFloat16 and dispatchType from here.
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_NUMERIC_H
#define COLLRT_NUMERIC_H

#include "collrt.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace collrt {

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

inline float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000 | (man << 13);
  } else if (exp) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (!man) {
    bits = sign;
  } else { // subnormal: normalise
    int e = -1;
    do {
      ++e;
      man <<= 1;
    } while (!(man & 0x400));
    bits = sign | (uint32_t(112 - e) << 23) | ((man & 0x3ff) << 13);
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t floatToHalf(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t abs = x & 0x7fffffff;
  if (abs > 0x7f800000) // NaN
    return uint16_t(sign | 0x7e00);
  if (abs >= 0x477ff000) // rounds to infinity
    return uint16_t(sign | 0x7c00);
  if (abs < 0x38800000) { // subnormal or zero in half
    if (abs < 0x33000000)
      return uint16_t(sign);
    uint32_t e = abs >> 23, man = (abs & 0x7fffff) | 0x800000;
    uint32_t shift = 126 - e; // 14..24
    uint32_t half = man >> shift, rest = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1)))
      ++half;
    return uint16_t(sign | half);
  }
  uint32_t v = abs - 0x38000000; // rebias 127 -> 15
  uint32_t half = v >> 13, rest = v & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half;
  return uint16_t(sign | half);
}

inline float bf16ToFloat(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t floatToBf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000)
    return uint16_t((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}

template <typename T, typename = void> struct Arith {
  // Integers.
  using U = std::make_unsigned_t<T>;
  static T add(T x, T y) { return T(U(U(x) + U(y))); }
  static T mul(T x, T y) {
    if constexpr (sizeof(T) < sizeof(unsigned))
      return T(U(unsigned(U(x)) * unsigned(U(y))));
    else
      return T(U(U(x) * U(y)));
  }
  static bool less(T x, T y) { return x < y; }
  static T div(T x, int n) { return T(x / T(n)); }
  static T fromInt(int64_t v) { return T(v); }
};

template <typename T> struct Arith<T, std::enable_if_t<std::is_floating_point_v<T>>> {
  static T add(T x, T y) { return x + y; }
  static T mul(T x, T y) { return x * y; }
  static bool less(T x, T y) { return x < y; }
  static T div(T x, int n) { return x / T(n); }
  static T fromInt(int64_t v) { return T(v); }
};

// 16-bit floats: stored as bits, computed in float, rounded after each op.
// The conversions come as a type, not as function-pointer template
// arguments, which would give the specializations below a narrower
// visibility than the types they derive from.
template <typename T, typename Bits> struct Arith16 {
  static T make(float f) { return {Bits::fromFloat(f)}; }
  static float val(T h) { return Bits::toFloat(h.bits); }
  static T add(T x, T y) { return make(val(x) + val(y)); }
  static T mul(T x, T y) { return make(val(x) * val(y)); }
  static bool less(T x, T y) { return val(x) < val(y); }
  static T div(T x, int n) { return make(val(x) / float(n)); }
  static T fromInt(int64_t v) { return make(float(v)); }
};
struct HalfBits {
  static float toFloat(uint16_t h) { return halfToFloat(h); }
  static uint16_t fromFloat(float f) { return floatToHalf(f); }
};
struct BFloat16Bits {
  static float toFloat(uint16_t b) { return bf16ToFloat(b); }
  static uint16_t fromFloat(float f) { return floatToBf16(f); }
};
template <> struct Arith<Half> : Arith16<Half, HalfBits> {};
template <> struct Arith<BFloat16> : Arith16<BFloat16, BFloat16Bits> {};

/// Calls f(T{}) with the storage type of `type`; false for types the host
/// cannot compute (fp8).
template <typename F> bool dispatchType(collDataType_t type, F &&f) {
  switch (type) {
  case collInt8:
    f(int8_t{});
    return true;
  case collUint8:
    f(uint8_t{});
    return true;
  case collInt32:
    f(int32_t{});
    return true;
  case collUint32:
    f(uint32_t{});
    return true;
  case collInt64:
    f(int64_t{});
    return true;
  case collUint64:
    f(uint64_t{});
    return true;
  case collFloat16:
    f(Half{});
    return true;
  case collFloat32:
    f(float{});
    return true;
  case collFloat64:
    f(double{});
    return true;
  case collBfloat16:
    f(BFloat16{});
    return true;
  default:
    return false;
  }
}

} // namespace collrt

#endif // COLLRT_NUMERIC_H
