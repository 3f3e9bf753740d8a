//===- Expected.h - Inputs and reference results, the nccl-tests way ------===//
//
// Inputs are small integers (and ±1, 2 for products) so that every sum and
// product is exact in every type, in any order: a result is right only if
// it is bit-identical to the reference, which is computed here from the
// definition of the collective, independently of any plan.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_LAUNCH_EXPECTED_H
#define COLLC_LAUNCH_EXPECTED_H

#include "src/Numeric.h"

#include <cstdio>
#include <cstring>
#include <type_traits>
#include <string>
#include <vector>

namespace collc_check {

using namespace collrt;

inline int64_t inUnits(int coll, int ranks) { return coll == 1 || coll == 3 ? ranks : 1; }
inline int64_t outUnits(int coll, int ranks) { return coll == 2 || coll == 3 ? ranks : 1; }

/// Input element `j` of rank `rank`.
inline int64_t inputValue(int rank, int64_t j, collRedOp_t op, bool isUnsigned) {
  uint64_t h = uint64_t(rank) * 0x9E3779B97F4A7C15ull + uint64_t(j) * 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  if (op == collProd) // powers of two stay exact; only ranks < 8 double
    return rank < 8 && h % 3 == 0 ? 2 : (!isUnsigned && h % 5 == 0) ? -1 : 1;
  if (op == collMax || op == collMin)
    return isUnsigned ? int64_t(h % 100) : int64_t(h % 101) - 50;
  return isUnsigned ? int64_t(h % 9) : int64_t(h % 9) - 4;
}

template <typename T> T input(int rank, int64_t j, collRedOp_t op) {
  constexpr bool isUnsigned = std::is_integral_v<T> && std::is_unsigned_v<T>;
  return Arith<T>::fromInt(inputValue(rank, j, op, isUnsigned));
}

template <typename T> void fillInput(T *data, int rank, int64_t n, collRedOp_t op) {
  for (int64_t j = 0; j < n; ++j)
    data[j] = input<T>(rank, j, op);
}

template <typename T> T combine(T a, T b, collRedOp_t op) {
  switch (op) {
  case collProd: return Arith<T>::mul(a, b);
  case collMax: return Arith<T>::less(a, b) ? b : a;
  case collMin: return Arith<T>::less(b, a) ? b : a;
  default: return Arith<T>::add(a, b);
  }
}

/// The output of `rank`; `checked` says which elements the collective defines.
template <typename T>
std::vector<T> reference(int coll, int ranks, int root, int rank, int64_t E, collRedOp_t op,
                         std::vector<char> &checked) {
  int64_t outN = outUnits(coll, ranks) * E;
  auto in = [&](int p, int64_t j) { return input<T>(p, j, op); };
  std::vector<T> out(outN);
  checked.assign(outN, 1);
  auto reduceAt = [&](int64_t j) {
    T acc = in(0, j);
    for (int p = 1; p < ranks; ++p)
      acc = combine(acc, in(p, j), op);
    return op == collAvg ? Arith<T>::div(acc, ranks) : acc;
  };
  for (int64_t j = 0; j < E; ++j) {
    switch (coll) {
    case 0: out[j] = reduceAt(j); break;
    case 1: out[j] = reduceAt(rank * E + j); break;
    case 2: for (int p = 0; p < ranks; ++p) out[p * E + j] = in(p, j); break;
    case 3: for (int p = 0; p < ranks; ++p) out[p * E + j] = in(p, rank * E + j); break;
    case 4: out[j] = in(root, j); break;
    case 5:
      if (rank == root)
        out[j] = reduceAt(j);
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
    snprintf(buf, sizeof buf, "%.9g (0x%04x)", double(Arith<T>::val(v)), v.bits);
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

#endif // COLLC_LAUNCH_EXPECTED_H
