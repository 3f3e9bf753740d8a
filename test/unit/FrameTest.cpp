//===- FrameTest.cpp - The socket transport's messages, parsed and checked ===//
//
// Every header field that becomes a length or an offset, at and past its
// bounds, and the sums of them that used to wrap. A message is either
// whole and safe to deliver, incomplete (and then bounded: a peer cannot
// make the receiver wait for more than a slot), or malformed, with a reason.
//
//===----------------------------------------------------------------------===//
#include "collc/abi.h"
#include "transport/Frame.h"
#include "transport/Transport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace collrt;

namespace {

// The receiver's windows: 0 holds two FIFOs of 2 x 256 bytes, 1 is small.
const std::vector<size_t> kWindows = {2 * fifoBytes(2, 256), 64};

FrameHeader data(uint64_t offset = 0, int64_t size = 16) {
  return FrameHeader{kFrameData, collc::kSimple, 2, 0, offset, 256, 0, size};
}

std::string bytes(const FrameHeader &m, const std::string &payload = std::string(16, 'x')) {
  return std::string(reinterpret_cast<const char *>(&m), sizeof m) + payload;
}

struct Parsed {
  FrameStatus status;
  Frame frame;
  size_t length = 0;
  std::string error;
};

Parsed parse(const std::string &in) {
  Parsed p;
  p.status = parseFrame(in.data(), in.size(), kWindows.data(), kWindows.size(), p.frame, p.length,
                        p.error);
  return p;
}

// Parses `m` with as much payload as it claims (at most a few KiB) and
// expects it malformed for a reason that mentions `why`.
void expectMalformed(const FrameHeader &m, const char *why) {
  size_t payload = m.size > 0 && m.size < 4096 ? size_t(m.size) : 0;
  Parsed p = parse(bytes(m, std::string(payload, 'x')));
  EXPECT_EQ(p.status, FrameStatus::kMalformed) << why;
  EXPECT_NE(p.error.find(why), std::string::npos) << p.error;
}

} // namespace

TEST(Frame, WholeDataAndCreditsParse) {
  // The frame points into its input, which must outlive it.
  const std::string in = bytes(data(fifoBytes(2, 256))) + "next";
  Parsed p = parse(in);
  ASSERT_EQ(p.status, FrameStatus::kComplete) << p.error;
  EXPECT_EQ(p.length, sizeof(FrameHeader) + 16);
  EXPECT_EQ(std::string(p.frame.payload, 16), std::string(16, 'x'));

  FrameHeader credit{kFrameCredit, 0, 0, 1, 12345, 0, 7, 0};
  p = parse(bytes(credit, ""));
  ASSERT_EQ(p.status, FrameStatus::kComplete) << p.error;
  EXPECT_EQ(p.length, sizeof(FrameHeader));
}

TEST(Frame, PartsOfAMessageAreIncomplete) {
  std::string whole = bytes(data());
  for (size_t n :
       {size_t(0), size_t(1), sizeof(FrameHeader) - 1, sizeof(FrameHeader), whole.size() - 1})
    EXPECT_EQ(parse(whole.substr(0, n)).status, FrameStatus::kIncomplete) << n << " bytes";
}

TEST(Frame, AFifoMustLieInsideItsWindow) {
  // The last FIFO that fits ends exactly at the window's end.
  EXPECT_EQ(parse(bytes(data(fifoBytes(2, 256)))).status, FrameStatus::kComplete);
  expectMalformed(data(fifoBytes(2, 256) + 8), "past the end of its window");
  expectMalformed(data(std::numeric_limits<uint64_t>::max() - 7), "past the end");
  // Offsets just below 2^64 once made offset + FIFO size wrap to a small
  // number that passed the old check; so did slot counts and sizes whose
  // product wraps.
  FrameHeader wrap = data(uint64_t(0) - (uint64_t(1) << 40));
  wrap.slots = 1;
  wrap.slotBytes = int64_t(1) << 40;
  expectMalformed(wrap, "slots of a size out of range");
  wrap.slotBytes = kMaxFrameSlotBytes;
  wrap.offset = uint64_t(0) - fifoBytes(1, kMaxFrameSlotBytes) + 64;
  expectMalformed(wrap, "past the end of its window");
  FrameHeader tooSmall = data();
  tooSmall.window = 1; // 64 bytes: not even a FIFO's header
  expectMalformed(tooSmall, "past the end of its window");
}

TEST(Frame, SlotsAndTheirSizeAreBounded) {
  FrameHeader m = data();
  for (int32_t slots : {0, -1, std::numeric_limits<int32_t>::min(), kMaxFrameSlots + 1}) {
    m.slots = slots;
    expectMalformed(m, "number of slots out of range");
  }
  m = data(0, 0);
  for (int64_t slotBytes : {int64_t(0), int64_t(-256), std::numeric_limits<int64_t>::min(),
                            kMaxFrameSlotBytes + 1, std::numeric_limits<int64_t>::max()}) {
    m.slotBytes = slotBytes;
    expectMalformed(m, "slots of a size out of range");
  }
}

TEST(Frame, AStepFitsItsSlotAndNeverWaitsForMore) {
  expectMalformed(data(0, 257), "does not fit its slot");
  expectMalformed(data(0, -1), "does not fit its slot");
  expectMalformed(data(0, std::numeric_limits<int64_t>::min()), "does not fit its slot");
  // A huge size with no payload behind it is refused at once, not waited for.
  expectMalformed(data(0, int64_t(1) << 62), "does not fit its slot");
}

TEST(Frame, WordsStayAligned) {
  expectMalformed(data(4), "whole 8-byte words");
  FrameHeader ll = data(0, 16);
  ll.protocol = collc::kLL;
  EXPECT_EQ(parse(bytes(ll)).status, FrameStatus::kComplete);
  ll.size = 12;
  expectMalformed(ll, "whole 8-byte words");
  ll.size = 16;
  ll.slotBytes = 252;
  expectMalformed(ll, "whole 8-byte words");
}

TEST(Frame, UnknownKindsProtocolsAndWindowsAreMalformed) {
  FrameHeader m = data();
  m.kind = 4;
  expectMalformed(m, "unknown kind");
  m = data();
  m.protocol = 3;
  expectMalformed(m, "unknown protocol");
  for (int32_t window : {-1, 2, std::numeric_limits<int32_t>::max()}) {
    m = data();
    m.window = window;
    expectMalformed(m, "window that does not exist");
  }
  FrameHeader credit{kFrameCredit, 0, 0, 0, 0, 0, 1, 8};
  expectMalformed(credit, "a credit with a payload");
}

TEST(Frame, DeliveryTakesStepsInOrderOnly) {
  std::vector<char> window(kWindows[0], 0);
  const size_t second = fifoBytes(2, 256);
  collc::Fifo f = fifoAt(window.data() + second, 2, 256, collc::kSimple);
  for (uint64_t step : {0, 1, 2}) {
    FrameHeader m = data(second, 10);
    m.step = step;
    std::string in = bytes(m, std::string(10, char('a' + step)));
    Parsed p = parse(in);
    ASSERT_EQ(p.status, FrameStatus::kComplete) << p.error;
    std::string error;
    ASSERT_TRUE(deliverFrame(window.data(), p.frame, error)) << error;
    EXPECT_EQ(*f.tail, step + 1);
    EXPECT_EQ(f.sizes[step % 2], 10);
    EXPECT_EQ(f.slots[(step % 2) * 256], char('a' + step));
  }
  // A step again, or one skipped ahead, is refused and writes nothing.
  for (uint64_t step : {2, 4}) {
    FrameHeader m = data(second, 10);
    m.step = step;
    std::string in = bytes(m, std::string(10, 'z'));
    Parsed p = parse(in);
    ASSERT_EQ(p.status, FrameStatus::kComplete) << p.error;
    std::string error;
    EXPECT_FALSE(deliverFrame(window.data(), p.frame, error));
    EXPECT_EQ(error, "a step out of order");
    EXPECT_EQ(*f.tail, 3u);
    EXPECT_EQ(f.slots[0], 'c');
  }
  // The first FIFO of the window was never touched.
  EXPECT_TRUE(std::all_of(window.begin(), window.begin() + second, [](char c) { return !c; }));
}

// A landed step's bytes were put into its slot already: its message is the
// header alone, checked as data is, and delivering it moves only the size
// and the tail. A window whose slots only puts fill refuses copied data.
TEST(Frame, LandedStepsCarryNoPayloadAndCopyNothing) {
  std::vector<char> window(kWindows[0], 0);
  collc::Fifo f = fifoAt(window.data(), 2, 256, collc::kSimple);
  FrameHeader m = data(0, 200);
  m.kind = kFrameLanded;
  Parsed p = parse(bytes(m, std::string(200, 'x')));
  ASSERT_EQ(p.status, FrameStatus::kComplete) << p.error;
  EXPECT_EQ(p.length, sizeof m);
  std::string error;
  ASSERT_TRUE(deliverFrame(window.data(), p.frame, error, true)) << error;
  EXPECT_EQ(*f.tail, 1u);
  EXPECT_EQ(f.sizes[0], 200);
  EXPECT_TRUE(std::all_of(f.slots, f.slots + 2 * 256, [](char c) { return !c; }));
  m.size = 257;
  expectMalformed(m, "does not fit its slot");
  m = data(fifoBytes(2, 256));
  m.kind = kFrameLanded;
  m.offset += 8;
  expectMalformed(m, "past the end of its window");

  FrameHeader copied = data(0, 16);
  copied.step = 1;
  p = parse(bytes(copied));
  ASSERT_EQ(p.status, FrameStatus::kComplete) << p.error;
  EXPECT_FALSE(deliverFrame(window.data(), p.frame, error, true));
  EXPECT_NE(error.find("only RDMA writes fill"), std::string::npos) << error;
  EXPECT_EQ(*f.tail, 1u);
}
