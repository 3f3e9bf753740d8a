//===- cuda_ll.h - The LL protocol on the GPU ------------------------------===//
//
// A 16-byte line carries 8 payload bytes: {data lo, flag, data hi, flag},
// the flag after the data in each 8-byte half, which is all that is assumed
// to land whole. One volatile 16-byte store sends a line; a receiver spins
// on the line until both flags are the step's. No fences: the flags order
// everything. Each thread keeps kLines lines in flight, its local sources
// loaded before it waits for them.
//
//===----------------------------------------------------------------------===//

#ifndef COLLC_DEVICE_CUDA_LL_H
#define COLLC_DEVICE_CUDA_LL_H

#include "collc/cuda_chunks.h"
#include "collc/wire.h"

namespace collc {
namespace cuda {

COLLC_DI void loadLine(const char *p, uint64_t &lo, uint64_t &hi) {
  asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];"
               : "=l"(lo), "=l"(hi)
               : "l"(p)
               : "memory");
}
COLLC_DI void storeLine(char *p, uint64_t lo, uint64_t hi) {
  asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(lo), "l"(hi) : "memory");
}

// One LL step (either end LL), reduced by rd; false if a receive gave up.
template <class Sh, class Rd> COLLC_DI bool llMove(const Step &s, const Places &at, Rd rd) {
  constexpr int kLines = 2, kEs = Rd::kEs;
  Words<kEs, Rd::kInline> w(s, at);
  const uint32_t nt = blockDim.x, flag = uint32_t(s.recvFlag), sendFlag = uint32_t(s.sendFlag);
  for (uint32_t base = threadIdx.x; base < s.words; base += kLines * nt) {
    uint64_t v[kLines];
#pragma unroll
    for (int u = 0; u < kLines; ++u) {
      const uint32_t x = base + u * nt;
      v[u] = x < s.words && Sh::nsrc ? w.get(x) : 0;
    }
    if (Sh::receives) {
      uint64_t lo[kLines], hi[kLines];
#pragma unroll
      for (int u = 0; u < kLines; ++u)
        if (base + u * nt < s.words)
          loadLine(s.recvSlot + 16 * size_t(base + u * nt), lo[u], hi[u]);
#pragma unroll
      for (int u = 0; u < kLines; ++u) {
        const uint32_t x = base + u * nt;
        if (x >= s.words)
          break;
        const bool two = 8 * x + 4 < s.bytes; // host senders stop at the last 4-byte word
        Patience patience(*s.a);
        while (llWordFlag(lo[u]) != flag || (two && llWordFlag(hi[u]) != flag)) {
          if (!patience.keepWaiting("data from rank", s.a->recvPeer))
            return false;
          loadLine(s.recvSlot + 16 * size_t(x), lo[u], hi[u]);
        }
        const uint64_t in = llWordData(lo[u]) | uint64_t(llWordData(hi[u])) << 32;
        v[u] = Sh::nsrc ? rd(in, v[u]) : in;
      }
    }
#pragma unroll
    for (int u = 0; u < kLines; ++u) {
      const uint32_t x = base + u * nt;
      if (x >= s.words)
        break;
#pragma unroll
      for (int r = 1; r < Sh::nsrc; ++r)
        v[u] = rd(v[u], w.get(r, x));
      if (Sh::hasDst)
        w.put(x, v[u]);
      if (Sh::sends) {
        const uint64_t out = w.trim(x, v[u]);
        storeLine(s.sendSlot + 16 * size_t(x), llWord(uint32_t(out), sendFlag),
                  llWord(uint32_t(out >> 32), sendFlag));
      }
    }
  }
  for (uint32_t x = s.words + threadIdx.x; x < s.cleanTo; x += nt) // see llCleans
    storeLine(s.sendSlot + 16 * size_t(x), llWord(0, sendFlag), llWord(0, sendFlag));
  return true;
}

} // namespace cuda
} // namespace collc

#endif // COLLC_DEVICE_CUDA_LL_H
