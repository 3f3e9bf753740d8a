//===- PeerLayout.h - Each rank's buffers in its symmetric window ---------===//
//
// A plan with steps on other ranks' buffers (multimem, peer windows) runs
// on one window per rank, mapped by every rank, with the same offsets on
// each: the rank's input and output (copies of the user's, unless they lie
// in registered windows), then one region per scratch buffer. The window
// starts with the GPU kernels' barrier words (Args::barrier: a count, a
// generation and a word per rank). The host and the GPU launch share this
// layout.
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_PEERLAYOUT_H
#define COLLRT_PEERLAYOUT_H

#include "collc/abi.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace collrt {

struct PeerLayout {
  /// The barrier words of R ranks, in whole 128-byte lines.
  static int64_t header(int R) { return (8 * (2 + int64_t(R)) + 127) & ~int64_t(127); }
  std::vector<int64_t> inAt, outAt; // of each rank's input and output
  std::vector<int64_t> scratchAt;   // of each scratch buffer
  int64_t total = 0;                // bytes of the window
};

/// The layout of a launch of `plan` on R ranks: `unit` bytes per rank of
/// the user's buffer, `loops` loops of `slice` elements of `es` bytes per
/// chunk. With `registered` input and output, the window holds the rest.
inline PeerLayout peerLayout(const collc::PlanDesc &plan, int R, int64_t unit, int64_t inBytes,
                             int64_t outBytes, int64_t loops, int64_t slice, int64_t es,
                             bool registered) {
  auto align = [](int64_t b) { return (b + 63) & ~int64_t(63); };
  const int32_t coll = plan.collective;
  const int64_t start = PeerLayout::header(R);
  PeerLayout l;
  l.inAt.assign(R, start);
  l.outAt.assign(R, start);
  for (int q = 0; q < R; ++q) {
    if (plan.inplace && coll == collc::kAllGather)
      l.inAt[q] += q * unit;
    else if (plan.inplace && coll == collc::kReduceScatter)
      l.outAt[q] += q * unit;
    else if (!plan.inplace)
      l.outAt[q] += align(inBytes);
  }
  l.total = start + (registered     ? 0
                     : plan.inplace ? align(std::max(inBytes, outBytes))
                                    : align(inBytes) + align(outBytes));
  l.scratchAt.resize(plan.numScratch);
  for (int32_t k = 0; k < plan.numScratch; ++k) {
    l.scratchAt[k] = l.total;
    l.total += align(loops * plan.scratchChunks[k] * slice * es);
  }
  return l;
}

/// Every rank's buffers in its window at `base` (as this rank maps them),
/// rank-major, kMaxBuffers each: Args::peers.
inline std::vector<char *> peerTable(const PeerLayout &l, const std::vector<char *> &base,
                                     int32_t numScratch) {
  std::vector<char *> peers(base.size() * collc::kMaxBuffers, nullptr);
  for (size_t q = 0; q < base.size(); ++q) {
    char **of = &peers[q * collc::kMaxBuffers];
    of[collc::kIn] = base[q] + l.inAt[q];
    of[collc::kOut] = base[q] + l.outAt[q];
    for (int32_t k = 0; k < numScratch; ++k)
      of[collc::kScratch0 + k] = base[q] + l.scratchAt[k];
  }
  return peers;
}

} // namespace collrt

#endif // COLLRT_PEERLAYOUT_H
