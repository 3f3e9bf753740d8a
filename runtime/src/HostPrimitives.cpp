//===- HostPrimitives.cpp - What the host emulation's primitives call -----===//
//
// The arithmetic of every NCCL data type and reduction op, and the wait
// that lets eight ranks share two cores: spin a little, then yield, then
// sleep, and give up with a message at the deadline or on abort.
//
//===----------------------------------------------------------------------===//
#include "collc/kernel.h"
#include "support/Numeric.h"

#include <chrono>
#include <cstdio>
#include <thread>

using namespace collrt;

namespace {

template <typename T, typename Op> void apply(void *acc, const void *src, int64_t n, Op op) {
  T *a = static_cast<T *>(acc);
  const T *s = static_cast<const T *>(src);
  for (int64_t i = 0; i < n; ++i)
    a[i] = op(a[i], s[i]);
}

template <typename T> void reduceAs(int32_t op, void *acc, const void *src, int64_t n) {
  using A = Arith<T>;
  switch (op) {
  case collProd:
    return apply<T>(acc, src, n, [](T x, T y) { return A::mul(x, y); });
  case collMax:
    return apply<T>(acc, src, n, [](T x, T y) { return A::less(x, y) ? y : x; });
  case collMin:
    return apply<T>(acc, src, n, [](T x, T y) { return A::less(y, x) ? y : x; });
  default: // sum, and avg, which divides once the sum is complete
    return apply<T>(acc, src, n, [](T x, T y) { return A::add(x, y); });
  }
}

} // namespace

extern "C" void collcHostReduce(int32_t datatype, int32_t op, void *acc, const void *src,
                                int64_t n) {
  dispatchType(collDataType_t(datatype),
               [&](auto tag) { reduceAs<decltype(tag)>(op, acc, src, n); });
}

extern "C" int collcHostWait(const collc::Args *a, const uint64_t *word, uint64_t goal, int mode,
                             const char *what, int64_t peer) {
  auto ready = [&] {
    uint64_t v = __atomic_load_n(word, __ATOMIC_ACQUIRE);
    if (mode == collc::kLLFlag)
      return collc::llWordFlag(v) == uint32_t(goal);
    if (mode == collc::kLL128Flag)
      return v == goal;
    return v >= goal;
  };
  for (int i = 0; i < 64; ++i)
    if (ready())
      return 1;
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  for (uint64_t i = 0;; ++i) {
    if (ready())
      return 1;
    if (i < 256)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(i < 4096 ? 5 : 50));
    if (__atomic_load_n(a->abort, __ATOMIC_ACQUIRE))
      return 0;
    if ((i & 63) == 0 &&
        std::chrono::duration<double>(Clock::now() - start).count() > a->timeoutSeconds) {
      if (__atomic_exchange_n(a->error, int32_t(collTimeout), __ATOMIC_ACQ_REL) == 0)
        snprintf(a->errorText, 256,
                 "rank %d threadblock %d waited %g s for %s %lld; a peer may have "
                 "died or the plan does not match",
                 a->rank, a->tb, a->timeoutSeconds, what, (long long)peer);
      return 0;
    }
  }
}
