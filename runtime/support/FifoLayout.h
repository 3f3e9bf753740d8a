//===- FifoLayout.h - Where a FIFO's words and slots lie in memory --------===//
//
// The layout of one FIFO (its header words, then its slots) and what a slot
// carries per protocol: arithmetic on offsets, below every transport, which
// all place their FIFOs this way. Deliberately shared beyond the runtime:
// tools (collc run's memory estimate) and the GPU harness size FIFOs with it.
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_FIFOLAYOUT_H
#define COLLRT_FIFOLAYOUT_H

#include "collc/abi.h"
#include "collc/wire.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace collrt {

/// A FIFO's layout in memory: head and ready (the receiver's) and tail (the
/// sender's) on their own cache lines, the wire size of each slot's step,
/// then the slots. A connection without a proxy keeps head and ready in the
/// sender's window instead (Launch.cpp), where the sender polls them. Slots and FIFOs start on
/// 128-byte boundaries, so that each LL128 line is one whole L2 line. Where a window keeps its
/// slots apart (Window::slots), they sit at the same offsets there.
inline size_t fifoHeaderBytes(int32_t slots) {
  return 128 + ((size_t(slots) * 8 + 127) & ~size_t(127));
}
inline size_t fifoBytes(int32_t slots, int64_t slotBytes) {
  return fifoHeaderBytes(slots) + ((size_t(slots) * size_t(slotBytes) + 127) & ~size_t(127));
}
inline collc::Fifo fifoAt(char *base, int32_t slots, int64_t slotBytes, int32_t protocol) {
  return collc::Fifo{reinterpret_cast<uint64_t *>(base),
                     reinterpret_cast<uint64_t *>(base + 64),
                     reinterpret_cast<int64_t *>(base + 128),
                     base + fifoHeaderBytes(slots),
                     slotBytes,
                     slots,
                     protocol,
                     reinterpret_cast<uint64_t *>(base + 8)};
}

/// Elements of one chunk per loop: what the smallest slot of the plan holds
/// for its widest step, in whole 16-byte units where it can. The same on
/// every rank, since it decides where every chunk's slice lies. 0: too wide.
template <typename SlotBytes>
int64_t sliceElements(const collc::PlanDesc &plan, int64_t elemSize, SlotBytes slotBytes) {
  int64_t capacity = INT64_MAX;
  for (int32_t i = 0; i < plan.numThreadblocks; ++i) {
    int32_t p = plan.threadblocks[i].protocol;
    capacity = std::min(capacity, collc::payloadBytes(p, slotBytes(p)));
  }
  int64_t slice = capacity / (plan.widest * elemSize);
  if (slice >= 16 / elemSize)
    slice -= slice % (16 / elemSize);
  return slice;
}

} // namespace collrt

#endif // COLLRT_FIFOLAYOUT_H
