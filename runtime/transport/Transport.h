//===- Transport.h - How ranks see each other's memory ---------------------===//
//
// One interface for every transport. Setup is collective: each rank offers
// a window of its own memory (where its receive FIFOs live) and gets a
// pointer to every peer's. The host transports deliver `shm` (memfd shared
// memory, descriptors passed over Unix sockets like CUDA VMM POSIX-fd
// handles) and `socket` (TCP and a proxy thread, standing in for RDMA); GPU
// transports implement the same calls with device memory.
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_TRANSPORT_H
#define COLLRT_TRANSPORT_H

#include "collc/abi.h"
#include "collrt.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace collrt {

class Bootstrap;

struct Window {
  int id = -1;              // the same on every rank: windows are made collectively
  std::vector<char *> base; // every rank's window where mapped here, else null
  std::vector<size_t> size;
};

/// A FIFO's layout in memory: head and ready (the receiver's) and tail (the
/// sender's) on their own cache lines, the wire size of each slot's step,
/// then the slots. Slots and FIFOs start on 128-byte boundaries, so that
/// each LL128 line is one whole L2 line.
inline size_t fifoHeaderBytes(int32_t slots) { return 128 + ((size_t(slots) * 8 + 127) & ~size_t(127)); }
inline size_t fifoBytes(int32_t slots, int64_t slotBytes) {
  return fifoHeaderBytes(slots) + ((size_t(slots) * size_t(slotBytes) + 127) & ~size_t(127));
}
inline collc::Fifo fifoAt(char *base, int32_t slots, int64_t slotBytes, int32_t protocol) {
  return collc::Fifo{reinterpret_cast<uint64_t *>(base), reinterpret_cast<uint64_t *>(base + 64),
                     reinterpret_cast<int64_t *>(base + 128), base + fifoHeaderBytes(slots),
                     slotBytes, slots, protocol, reinterpret_cast<uint64_t *>(base + 8)};
}

/// Payload bytes a slot of `slotBytes` carries: LL spends half on flags,
/// LL128 one word in 16.
inline int64_t payloadBytes(int32_t protocol, int64_t slotBytes) {
  return protocol == collc::kLL ? slotBytes / 2
         : protocol == collc::kLL128 ? slotBytes / 128 * 120
                                     : slotBytes;
}

/// Elements of one chunk per loop: what the smallest slot of the plan holds
/// for its widest step, in whole 16-byte units where it can. The same on
/// every rank, since it decides where every chunk's slice lies. 0: too wide.
template <typename SlotBytes>
int64_t sliceElements(const collc::PlanDesc &plan, int64_t elemSize, SlotBytes slotBytes) {
  int64_t capacity = INT64_MAX;
  for (int32_t i = 0; i < plan.numThreadblocks; ++i) {
    int32_t p = plan.threadblocks[i].protocol;
    capacity = std::min(capacity, payloadBytes(p, slotBytes(p)));
  }
  int64_t slice = capacity / (plan.widest * elemSize);
  if (slice >= 16 / elemSize)
    slice -= slice % (16 / elemSize);
  return slice;
}

class Transport {
public:
  virtual ~Transport() = default;
  virtual const char *name() const = 0;
  /// Collective: allocates `bytes` of zeroed memory on this rank and maps
  /// what the transport can of the other ranks' windows.
  virtual collResult_t exchangeWindow(size_t bytes, Window &window, std::string &error) = 0;
  /// The FIFO at `offset` in `owner`'s window, as this rank's sender uses it.
  virtual collResult_t sendFifo(Window &window, int owner, size_t offset, int32_t slots,
                                int64_t slotBytes, int32_t protocol, collc::Fifo &fifo,
                                std::string &error) = 0;
  /// Announces this rank's receive FIFO at `offset`, fed by `peer`.
  virtual collResult_t recvFifo(Window & /*window*/, int /*peer*/, size_t /*offset*/,
                                const collc::Fifo & /*fifo*/, std::string & /*error*/) {
    return collSuccess;
  }
  virtual void release(Window &window) = 0;
};

std::unique_ptr<Transport> makeShmTransport(Bootstrap &bootstrap, int rank, int nranks,
                                            double timeout, collResult_t &result,
                                            std::string &error);
std::unique_ptr<Transport> makeSocketTransport(Bootstrap &bootstrap, int rank, int nranks,
                                               double timeout, collResult_t &result,
                                               std::string &error);

} // namespace collrt

#endif // COLLRT_TRANSPORT_H
