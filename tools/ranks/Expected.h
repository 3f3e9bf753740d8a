//===- Expected.h - Inputs and reference results, the nccl-tests way ------===//
//
// The reference is computed from the definition of the collective,
// independently of any plan and of the runtime's arithmetic (the runtime's
// shared support/Numeric.h lends only the storage of fp16 and bf16):
// integers in 64-bit arithmetic that wraps as the C types do, floating types
// in double, rounded to the type by a conversion of this file. A result is
// right only if it is bit-identical to the reference.
//
// Every reduction order must give the same bits, so the inputs are chosen:
// integers wrap, any values do. Floating types hold small integers (and
// ±1, 2 for products), whose sums and products are exact, except in every
// fourth element (j % 4 == 1), where two ranks hold values whose sum or
// product needs rounding and the others hold 0 (1 for products): any order
// rounds once, there, so a reduce that does not round to nearest even, in
// the runtime or on the GPU, gives other bits.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RANKS_EXPECTED_H
#define COLLC_RANKS_EXPECTED_H

#include "support/Numeric.h" // Half, BFloat16 and dispatchType; none of its arithmetic

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <type_traits>
#include <string>
#include <vector>

namespace collc_check {

using namespace collrt;

inline int64_t inUnits(int coll, int ranks) { return coll == 1 || coll == 3 ? ranks : 1; }
inline int64_t outUnits(int coll, int ranks) { return coll == 2 || coll == 3 ? ranks : 1; }

//===----------------------------------------------------------------------===//
// Floating-point formats
//===----------------------------------------------------------------------===//

/// A binary format: `p` significand bits (the hidden one included) and
/// `ebits` exponent bits.
template <typename T> struct Format;
template <> struct Format<Half> {
  static constexpr int p = 11, ebits = 5;
};
template <> struct Format<BFloat16> {
  static constexpr int p = 8, ebits = 8;
};
template <> struct Format<float> {
  static constexpr int p = 24, ebits = 8;
};
template <> struct Format<double> {
  static constexpr int p = 53, ebits = 11;
};

/// The bits of `v` in a format narrower than double, rounded to nearest
/// even; magnitudes past the largest finite value give infinity.
inline uint64_t encode(double v, int p, int ebits) {
  uint64_t x;
  memcpy(&x, &v, sizeof x);
  const uint64_t sign = (x >> 63) << (p - 1 + ebits);
  const int bias = (1 << (ebits - 1)) - 1, emin = 1 - bias;
  const uint64_t inf = ((uint64_t(1) << ebits) - 1) << (p - 1);
  const int biased = int((x >> 52) & 0x7ff);
  if (biased == 0x7ff) // NaN stays NaN
    return sign | inf | ((x << 12) ? uint64_t(1) << (p - 2) : 0);
  // v is m units of 2^(e - 52); the result counts units of 2^(max(e, emin) - p + 1).
  const uint64_t m = (x & ((uint64_t(1) << 52) - 1)) | uint64_t(1) << 52;
  const int e = biased - 1023, drop = std::min(53 - p + std::max(0, emin - e), 54);
  const uint64_t rest = m & ((uint64_t(1) << drop) - 1), half = uint64_t(1) << (drop - 1);
  const uint64_t down = drop < 54 ? m >> drop : 0;
  const uint64_t kept = down + (rest > half || (rest == half && (down & 1)));
  // Adding the significand to the exponent field less one carries a
  // rounding up to 2^p into the next binade, and leaves subnormals at 0.
  const uint64_t bits = (uint64_t(std::max(e, emin) + bias - 1) << (p - 1)) + kept;
  // Zero, and double subnormals, far below the least subnormal of the format.
  return sign | (biased == 0 ? 0 : std::min(bits, inf));
}

inline double decode(uint64_t bits, int p, int ebits) {
  const int bias = (1 << (ebits - 1)) - 1;
  const uint64_t mant = bits & ((uint64_t(1) << (p - 1)) - 1);
  const int field = int((bits >> (p - 1)) & ((uint64_t(1) << ebits) - 1));
  double v;
  if (field == (1 << ebits) - 1)
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (field == 0)
    v = std::ldexp(double(mant), 1 - bias - (p - 1));
  else
    v = std::ldexp(double(mant | uint64_t(1) << (p - 1)), field - bias - (p - 1));
  return (bits >> (p - 1 + ebits)) & 1 ? -v : v;
}

template <typename T> T fromDouble(double v) {
  if constexpr (std::is_same_v<T, double>) {
    return v;
  } else {
    const uint64_t bits = encode(v, Format<T>::p, Format<T>::ebits);
    T t;
    if constexpr (std::is_same_v<T, float>) {
      const uint32_t b = uint32_t(bits);
      memcpy(&t, &b, sizeof t);
    } else {
      t.bits = uint16_t(bits);
    }
    return t;
  }
}

template <typename T> double toDouble(T v) {
  if constexpr (std::is_same_v<T, double>) {
    return v;
  } else if constexpr (std::is_same_v<T, float>) {
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return decode(b, 24, 8);
  } else {
    return decode(v.bits, Format<T>::p, Format<T>::ebits);
  }
}

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

inline uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
inline uint64_t hashOf(int rank, int64_t j) {
  return mix(uint64_t(rank) * 0x9E3779B97F4A7C15ull + uint64_t(j) * 0xD1B54A32D192ED03ull);
}

/// Elements where two ranks' values meet with a rounding (floating types).
inline bool roundingElement(int64_t j) { return (j & 3) == 1; }

/// The rank that holds the wide value of rounding element `j` and the one
/// that holds the narrow value: ranks 0 and 1 for half of the elements
/// (every communicator has them), two of ranks 0 .. 7 for the others. They
/// do not depend on the rank count, which fillInput does not know; where a
/// rank is missing the element holds one value and is exact.
inline void roundingPair(int64_t j, int &wide, int &narrow) {
  const uint64_t h = mix(uint64_t(j) ^ 0x5851F42D4C957F2Dull);
  // Without branches: the bits are random, a branch would mispredict.
  const int a = int((h >> 1) % 8), b = (a + 1 + int((h >> 4) % 7)) % 8;
  const int x = h & 1 ? 0 : a, y = h & 1 ? 1 : b;
  wide = h & 128 ? y : x;
  narrow = h & 128 ? x : y;
}

/// 2^e for the exponents of inputs, all of them normal in double.
inline double pow2(int e) {
  const uint64_t bits = uint64_t(1023 + e) << 52;
  double v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

/// ±(1 + k 2^(1-p)) 2^s for s in -2 .. 2 (s = 0 if `unitScale`): every
/// significand bit of the format in use.
template <int P> double wideValue(uint64_t h, bool unitScale) {
  const int64_t k = int64_t((h >> 8) & ((uint64_t(1) << (P - 1)) - 1));
  const int s = unitScale ? 0 : int(h % 5) - 2;
  const double sign = (h >> 7) & 1 ? -1.0 : 1.0;
  return sign * double(int64_t(1) << (P - 1) | k) * pow2(1 - P + s);
}

/// -50 .. 50 in a 16-bit format, converted once.
template <typename T> std::vector<T> makeSmallValues() {
  std::vector<T> v;
  for (int n = -50; n <= 50; ++n)
    v.push_back(fromDouble<T>(n));
  return v;
}
template <typename T> inline const std::vector<T> smallValues = makeSmallValues<T>();

/// Element `j` of a floating type on every rank: what each holds, exactly
/// representable in the type.
template <typename T> class FloatElement {
public:
  FloatElement(int64_t j, collRedOp_t op) : j(j), op(op) {
    if (roundingElement(j) && op != collMax && op != collMin) {
      roundingPair(j, wide, narrow);
      e = mix(uint64_t(j) * 0x2545F4914F6CDD1Dull + 1);
    }
  }

  /// What `rank` holds, as stored.
  T stored(int rank) const {
    if (roundingElement(j))
      return fromDouble<T>(at(rank));
    const int64_t n = smallAt(rank);
    if constexpr (std::is_floating_point_v<T>)
      return T(n);
    else
      return smallValues<T>[n + 50];
  }

  double at(int rank) const {
    if (!roundingElement(j))
      return double(smallAt(rank));
    if (wide >= 0) {
      if (op == collProd) // two significands of P bits: a product of 2P bits
        return rank == wide     ? wideValue<P>(e, true)
               : rank == narrow ? wideValue<P>(mix(e), true)
                                : 1;
      if (rank == wide)
        return wideValue<P>(e, false);
      if (rank != narrow)
        return 0;
      // t quarters of the unit in the last place of the wide value: ties
      // for t = 2 and 6, the nearest neighbour otherwise, of either sign.
      const double sign = (e >> 50) & 1 ? -1.0 : 1.0;
      return sign * double(int64_t(1 + (e >> 40) % 7)) * pow2(1 - P - 2 + int(e % 5) - 2);
    }
    return wideValue<P>(hashOf(rank, j), false); // max and min
  }

private:
  // Outside rounding elements, integers in -50 .. 50.
  int64_t smallAt(int rank) const {
    const uint64_t h = hashOf(rank, j);
    switch (op) {
    case collProd: // powers of two stay exact; only ranks < 8 double
      return rank < 8 && h % 3 == 0 ? 2 : h % 5 == 0 ? -1 : 1;
    case collMax:
    case collMin:
      return int64_t(h % 101) - 50;
    default: // |sum| <= 256 up to 208 ranks: exact in bf16
      return rank < 16 ? int64_t(h % 9) - 4 : int64_t(h % 3) - 1;
    }
  }

  static constexpr int P = Format<T>::p;
  int64_t j;
  collRedOp_t op;
  int wide = -1, narrow = -1;
  uint64_t e = 0;
};

template <typename T> T input(int rank, int64_t j, collRedOp_t op) {
  if constexpr (std::is_integral_v<T>) {
    uint64_t h = hashOf(rank, j);
    // Products of odd values stay odd, so that most do not wrap to 0.
    if (op == collProd && !roundingElement(j))
      h |= 1;
    return T(std::make_unsigned_t<T>(h));
  } else {
    return FloatElement<T>(j, op).stored(rank);
  }
}

template <typename T> void fillInput(T *data, int rank, int64_t n, collRedOp_t op) {
  for (int64_t j = 0; j < n; ++j)
    data[j] = input<T>(rank, j, op);
}

//===----------------------------------------------------------------------===//
// Reference
//===----------------------------------------------------------------------===//

/// Element `j` reduced over every rank. The runtime divides a complete sum
/// for avg; fp16 and bf16 divide in float, as they compute.
template <typename T> T reduced(int ranks, int64_t j, collRedOp_t op) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    T best = input<T>(0, j, op);
    uint64_t acc = uint64_t(best); // wraps modulo 2^64, so modulo T's width too
    for (int p = 1; p < ranks; ++p) {
      const T v = input<T>(p, j, op);
      if (op == collProd)
        acc *= uint64_t(v);
      else
        acc += uint64_t(v);
      if (op == collMax ? best < v : v < best)
        best = v;
    }
    if (op == collMax || op == collMin)
      return best;
    const T sum = T(U(acc));
    if (op != collAvg)
      return sum;
    if constexpr (std::is_signed_v<T>)
      return T(int64_t(sum) / int64_t(ranks));
    else
      return T(uint64_t(sum) / uint64_t(ranks));
  } else {
    const FloatElement<T> in(j, op);
    double acc = in.at(0);
    for (int p = 1; p < ranks; ++p) {
      const double v = in.at(p);
      switch (op) {
      case collProd:
        acc *= v;
        break;
      case collMax:
        acc = acc < v ? v : acc;
        break;
      case collMin:
        acc = v < acc ? v : acc;
        break;
      default:
        acc += v;
        break;
      }
    }
    const T r = fromDouble<T>(acc);
    if (op != collAvg)
      return r;
    if constexpr (std::is_same_v<T, double>)
      return acc / double(ranks);
    else
      return fromDouble<T>(double(float(toDouble(r)) / float(ranks)));
  }
}

/// The output of `rank`; `checked` says which elements the collective defines.
template <typename T>
std::vector<T> reference(int coll, int ranks, int root, int rank, int64_t E, collRedOp_t op,
                         std::vector<char> &checked) {
  int64_t outN = outUnits(coll, ranks) * E;
  std::vector<T> out(outN);
  checked.assign(outN, 1);
  // Every rank's value of element j of the input, one element at a time.
  auto gather = [&](int64_t j, int64_t at) {
    if constexpr (std::is_integral_v<T>) {
      for (int p = 0; p < ranks; ++p)
        out[p * E + at] = input<T>(p, j, op);
    } else {
      const FloatElement<T> in(j, op);
      for (int p = 0; p < ranks; ++p)
        out[p * E + at] = in.stored(p);
    }
  };
  for (int64_t j = 0; j < E; ++j) {
    switch (coll) {
    case 0:
      out[j] = reduced<T>(ranks, j, op);
      break;
    case 1:
      out[j] = reduced<T>(ranks, rank * E + j, op);
      break;
    case 2:
      gather(j, j);
      break;
    case 3:
      gather(rank * E + j, j);
      break;
    case 4:
      out[j] = input<T>(root, j, op);
      break;
    case 5:
      if (rank == root)
        out[j] = reduced<T>(ranks, j, op);
      else
        checked[j] = 0;
      break;
    }
  }
  return out;
}

template <typename T> std::string show(T v) {
  char buf[64];
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
    snprintf(buf, sizeof buf, "%.9g (0x%04x)", toDouble(v), v.bits);
  else if constexpr (std::is_floating_point_v<T>)
    snprintf(buf, sizeof buf, "%.17g", double(v));
  else if constexpr (std::is_signed_v<T>)
    snprintf(buf, sizeof buf, "%lld", (long long)v);
  else
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
  return buf;
}

/// Number of wrong elements; the first is described in `first`.
template <typename T>
int64_t compare(const T *got, const std::vector<T> &want, const std::vector<char> &checked,
                std::string &first) {
  int64_t wrong = 0;
  for (size_t j = 0; j < want.size(); ++j) {
    if (!checked[j] || !memcmp(&got[j], &want[j], sizeof(T)))
      continue;
    if (!wrong++)
      first = "index " + std::to_string(j) + ": got " + show(got[j]) + ", want " + show(want[j]);
  }
  return wrong;
}

} // namespace collc_check

#endif // COLLC_RANKS_EXPECTED_H
