//===- Frame.cpp - The socket transport's messages, parsed and checked ----===//
#include "transport/Frame.h"

#include "collc/wire.h"
#include "transport/Transport.h"

#include <cstring>

using namespace collrt;

namespace {

FrameStatus malformed(std::string &error, const char *why) {
  error = why;
  return FrameStatus::kMalformed;
}

} // namespace

FrameStatus collrt::parseFrame(const char *data, size_t size, const size_t *windowBytes,
                               size_t windows, Frame &frame, size_t &length, std::string &error) {
  FrameHeader &m = frame.header;
  if (size < sizeof m)
    return FrameStatus::kIncomplete;
  memcpy(&m, data, sizeof m);
  if (m.window < 0 || size_t(m.window) >= windows)
    return malformed(error, "names a window that does not exist");
  if (m.kind == kFrameCredit) {
    if (m.size != 0)
      return malformed(error, "a credit with a payload");
  } else if (m.kind == kFrameData || m.kind == kFrameLanded) {
    if (m.protocol != collc::kSimple && m.protocol != collc::kLL && m.protocol != collc::kLL128)
      return malformed(error, "data in an unknown protocol");
    if (m.slots < 1 || m.slots > kMaxFrameSlots)
      return malformed(error, "a FIFO with a number of slots out of range");
    if (m.slotBytes < 1 || m.slotBytes > kMaxFrameSlotBytes)
      return malformed(error, "a FIFO with slots of a size out of range");
    if (m.size < 0 || m.size > m.slotBytes)
      return malformed(error, "a step that does not fit its slot");
    // Head, tail and sizes are 8-byte words, and so are LL and LL128 lines.
    const bool lines = m.protocol != collc::kSimple;
    if (m.offset % 8 || (lines && (m.slotBytes % 8 || m.size % 8)))
      return malformed(error, "a FIFO or step that is not in whole 8-byte words");
    // Both terms are below 2^51 by the bounds above, and the offset is
    // compared with what is left, so nothing here wraps.
    const size_t fifo = fifoBytes(m.slots, m.slotBytes);
    const size_t have = windowBytes[m.window];
    if (fifo > have || m.offset > have - fifo)
      return malformed(error, "a FIFO that reaches past the end of its window");
  } else {
    return malformed(error, "a message of an unknown kind");
  }
  // m.size is in [0, 2^30] here: the sum cannot wrap.
  const size_t payload = payloadOf(m);
  if (size - sizeof m < payload)
    return FrameStatus::kIncomplete;
  frame.payload = data + sizeof m;
  length = sizeof m + payload;
  return FrameStatus::kComplete;
}

bool collrt::deliverFrame(char *window, const Frame &frame, std::string &error, bool putsOnly) {
  const FrameHeader &m = frame.header;
  if (m.kind == kFrameData && putsOnly) {
    error = "a copied step for a FIFO whose slots only RDMA writes fill";
    return false;
  }
  collc::Fifo f = fifoAt(window + m.offset, m.slots, m.slotBytes, m.protocol);
  // One sender feeds a FIFO, over one ordered connection: steps arrive in
  // order, each exactly once.
  if (m.step != __atomic_load_n(f.tail, __ATOMIC_RELAXED)) {
    error = "a step out of order";
    return false;
  }
  const uint64_t index = m.step % uint64_t(m.slots);
  char *slot = f.slots + index * uint64_t(m.slotBytes);
  if (m.kind == kFrameLanded) {
    // The wire put the bytes there before this message.
  } else if (m.protocol == collc::kSimple) {
    memcpy(slot, frame.payload, size_t(m.size));
  } else {
    auto *dst = reinterpret_cast<uint64_t *>(slot);
    const int64_t words = m.size / 8;
    for (int64_t i = 0; i < words; ++i) {
      uint64_t v;
      memcpy(&v, frame.payload + i * 8, 8);
      bool flag =
          m.protocol == collc::kLL128 && i % collc::kLL128LineWords == collc::kLL128FlagWord;
      __atomic_store_n(&dst[i], v, flag ? __ATOMIC_RELEASE : __ATOMIC_RELAXED);
    }
  }
  f.sizes[index] = m.size;
  __atomic_store_n(f.tail, m.step + 1, __ATOMIC_RELEASE);
  return true;
}
