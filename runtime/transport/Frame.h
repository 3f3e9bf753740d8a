//===- Frame.h - The socket transport's messages, parsed and checked ------===//
//
// A message on a socket-transport connection is a fixed header and, for
// data, one step's payload, which the receiver writes into its own memory
// at the place the header names. So every field that becomes a length or an
// offset is checked here, in arithmetic that cannot wrap, before anything
// is written: after parseFrame accepts a data message, deliverFrame stays
// inside the window it names. Both are pure (no I/O, no state besides the
// window they write), so that a fuzzer can feed them anything.
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_FRAME_H
#define COLLRT_FRAME_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace collrt {

/// Data carries a step's bytes; landed says that a step's bytes were put
/// into the slot already (Wire::put) and carries none; a credit moves the
/// sender's head.
enum FrameKind : uint32_t { kFrameData = 1, kFrameCredit = 2, kFrameLanded = 3 };

/// Every message says where it goes, so that data may arrive before the
/// receiver has looked at its FIFO.
struct FrameHeader {
  uint32_t kind;
  int32_t protocol, slots, window;
  uint64_t offset; // of the FIFO in the receiver's window
  int64_t slotBytes;
  uint64_t step; // data: the step; credit: the new head
  int64_t size;  // bytes of the step (for data, the payload that follows)
};

/// Bytes of payload that follow the header on the wire.
inline size_t payloadOf(const FrameHeader &m) {
  return m.kind == kFrameData && m.size > 0 ? size_t(m.size) : 0;
}

/// Bounds far above any plan's (8 or so slots of at most COLL_*_SLOT's
/// maximum), low enough that no product of them overflows.
constexpr int32_t kMaxFrameSlots = 1 << 20;
constexpr int64_t kMaxFrameSlotBytes = int64_t(1) << 30;

/// A checked message. Data: the FIFO of `header.slots` slots of
/// `header.slotBytes` at `header.offset` lies inside window `header.window`,
/// suitably aligned, and `payload` holds `header.size` bytes, no more than a
/// slot. Landed: the same, with no payload. Credit: `header.window` is a
/// window, and there is no payload.
struct Frame {
  FrameHeader header;
  const char *payload;
};

enum class FrameStatus { kComplete, kIncomplete, kMalformed };

/// Parses the message at the start of `data`, for a receiver whose window w
/// has `windowBytes[w]` bytes. kComplete sets `frame` and `length` (the bytes
/// the message takes); kIncomplete means a valid header whose payload has
/// not all arrived (or not even the header); kMalformed says why in `error`.
FrameStatus parseFrame(const char *data, size_t size, const size_t *windowBytes, size_t windows,
                       Frame &frame, size_t &length, std::string &error);

/// Writes a data message's step into its FIFO in `window` (the receiver's
/// memory for `frame.header.window`), LL and LL128 lines word by word so that
/// their flags stay atomic, and then moves the tail; a landed message moves
/// only the size and tail. False, with nothing written, when it is not the
/// step the FIFO expects next, or is data for a window that `putsOnly`
/// says takes its steps' bytes only from the wire's puts.
bool deliverFrame(char *window, const Frame &frame, std::string &error, bool putsOnly = false);

} // namespace collrt

#endif // COLLRT_FRAME_H
