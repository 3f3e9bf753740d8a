//===- cuda_ll128.h - The LL128 protocol on the GPU ------------------------===//
//
// A 128-byte line, aligned to 128 bytes, carries 120 payload bytes in words
// 0-14 and the step's flag in word 15 (host.h's layout). Eight lanes write
// a line with one 16-byte volatile store each, lane 7 the flag in the upper
// half of its own: the warp's store reaches the peer as whole lines, in
// order, over NVLink, so a reader that sees the flag in lane 7 sees the
// line. No fences; a warp reloads until every flag lane is satisfied
// (__any_sync), then loads its lines once more and uses only those: a line
// can become visible in pieces (seen on Hopper; NCCL reloads since 2.17.1),
// so the load that saw the flag may hold older words. Lanes reconverge
// (__syncwarp) before the stores, so that a line leaves in one warp store.
// A warp keeps 8 lines (1 KiB) in flight, its lanes' local sources loaded
// before it waits for them (16, as NCCL, spill registers).
//
//===----------------------------------------------------------------------===//

#ifndef COLLC_DEVICE_CUDA_LL128_H
#define COLLC_DEVICE_CUDA_LL128_H

#include "collc/cuda_ll.h"

namespace collc {
namespace cuda {

// One LL128 step (either end LL128), reduced by rd; false if a receive
// gave up. Every lane of a warp runs the same iterations: lanes past the
// payload idle in them.
template <class Sh, class Rd> COLLC_DI bool ll128Move(const Step &s, const Places &at, Rd rd) {
  constexpr int kEs = Rd::kEs;
  constexpr uint32_t kGroups = 2, kLines = 4 * kGroups; // groups of 4 lines, a warp's lines
  Words<kEs, Rd::kInline> w(s, at);
  const uint32_t lane = threadIdx.x & 31, col = lane & 7, nw = blockDim.x / 32;
  const bool flagLane = col == kLL128FlagWord / 2;
  const uint32_t lines = uint32_t(ll128Lines(s.bytes));
  for (uint32_t block = threadIdx.x / 32; block * kLines < lines; block += nw) {
    // Group u: line block * kLines + 4u + lane / 8; this lane's payload words
    // x and x + 1 in it (the flag lane has only x).
    const uint32_t line0 = block * kLines + lane / 8;
    uint64_t lo[kGroups], hi[kGroups];
#pragma unroll
    for (uint32_t u = 0; u < kGroups; ++u) {
      const uint32_t x = kLL128PayloadWords * (line0 + 4 * u) + 2 * col;
      lo[u] = x < s.words && Sh::nsrc ? w.get(x) : 0;
      hi[u] = x + 1 < s.words && !flagLane && Sh::nsrc ? w.get(x + 1) : 0;
    }
    if (Sh::receives) {
      uint64_t in[kGroups], inHi[kGroups];
      Patience patience(*s.a);
      for (;;) {
        bool stale = false;
#pragma unroll
        for (uint32_t u = 0; u < kGroups; ++u) {
          if (line0 + 4 * u >= lines)
            break;
          loadLine(s.recvSlot + kLL128LineBytes * size_t(line0 + 4 * u) + 16 * col, in[u], inHi[u]);
          stale |= flagLane && inHi[u] != s.recvFlag;
        }
        if (!__any_sync(~0u, stale))
          break;
        // Lane 0 decides for the warp, which must stay converged.
        const bool late = lane == 0 && !patience.keepWaiting("data from rank", s.a->recvPeer);
        if (__shfl_sync(~0u, late, 0))
          return false;
      }
#pragma unroll
      for (uint32_t u = 0; u < kGroups; ++u)
        if (line0 + 4 * u < lines)
          loadLine(s.recvSlot + kLL128LineBytes * size_t(line0 + 4 * u) + 16 * col, in[u], inHi[u]);
#pragma unroll
      for (uint32_t u = 0; u < kGroups; ++u) {
        if (line0 + 4 * u >= lines)
          break;
        lo[u] = Sh::nsrc ? rd(in[u], lo[u]) : in[u];
        hi[u] = Sh::nsrc ? rd(inHi[u], hi[u]) : inHi[u];
      }
    }
#pragma unroll
    for (uint32_t u = 0; u < kGroups; ++u) {
      const uint32_t line = line0 + 4 * u, x = kLL128PayloadWords * line + 2 * col;
      if (line >= lines)
        break;
      const bool two = !flagLane && x + 1 < s.words;
      if (x < s.words) {
#pragma unroll
        for (int r = 1; r < Sh::nsrc; ++r) {
          lo[u] = rd(lo[u], w.get(r, x));
          if (two)
            hi[u] = rd(hi[u], w.get(r, x + 1));
        }
        if (Sh::hasDst) {
          w.put(x, lo[u]);
          if (two)
            w.put(x + 1, hi[u]);
        }
      }
    }
    if constexpr (Sh::sends) {
      __syncwarp();
#pragma unroll
      for (uint32_t u = 0; u < kGroups; ++u) {
        const uint32_t line = line0 + 4 * u, x = kLL128PayloadWords * line + 2 * col;
        const bool two = !flagLane && x + 1 < s.words;
        const uint64_t a = x < s.words ? w.trim(x, lo[u]) : 0;
        const uint64_t b = flagLane ? s.sendFlag : two ? w.trim(x + 1, hi[u]) : 0;
        if (line < lines)
          storeLine(s.sendSlot + kLL128LineBytes * size_t(line) + 16 * col, a, b);
      }
    }
  }
  return true;
}

} // namespace cuda
} // namespace collc

#endif // COLLC_DEVICE_CUDA_LL128_H
