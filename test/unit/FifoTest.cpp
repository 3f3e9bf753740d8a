//===- FifoTest.cpp - The host emulation's FIFO protocols ------------------===//
//
// Threadblocks of hand-written kernels, each on its own thread, talk over
// FIFOs in plain memory laid out as Launch.cpp lays them out in a window.
// No communicator is involved: what is tested is collc::Block and the wait
// it calls in collrt.
//
//===----------------------------------------------------------------------===//
#include "collc/kernel.h"
#include "collrt.h"
#include "transport/Transport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace collc;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

uint64_t loadWord(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }

// One connection in the receiver's memory, at counters `start` on both ends.
class Link {
public:
  Link(int32_t protocol, int32_t numSlots = 4, int64_t slotBytes = 256, uint64_t start = 0)
      : protocol(protocol), numSlots(numSlots), slotBytes(slotBytes),
        mem((collrt::fifoBytes(numSlots, slotBytes) + 7) / 8, 0) {
    *fifo().head = *fifo().tail = start;
  }
  Fifo fifo() {
    return collrt::fifoAt(reinterpret_cast<char *>(mem.data()), numSlots, slotBytes, protocol);
  }
  uint64_t head() { return loadWord(fifo().head); }
  uint64_t tail() { return loadWord(fifo().tail); }
  // User bytes one slot carries: LL spends half on flags, LL128 a word in 16.
  int64_t payload() const {
    return protocol == kLL ? slotBytes / 2 : protocol == kLL128 ? slotBytes / 128 * 120 : slotBytes;
  }
  // Elements per step, rounded as collLaunch rounds them.
  int64_t slice(int64_t es) const {
    int64_t s = payload() / es;
    return s >= 16 / es ? s - s % (16 / es) : s;
  }
  // Fills each slot as the last step before `start` that used it left it:
  // garbage under that step's flags, so that a receiver which mistakes a
  // stale slot for a fresh one reads garbage.
  void primeHistory(uint64_t start) {
    for (uint64_t s = start - numSlots; s != start; ++s) {
      uint64_t *w = reinterpret_cast<uint64_t *>(fifo().slots + s % numSlots * slotBytes);
      for (int64_t i = 0; i < slotBytes / 8; ++i) {
        w[i] = 0x5a5a5a5a5a5a5a5aull;
        if (protocol == kLL)
          w[i] = uint64_t(collc::llFlag(s)) << 32 | 0xdeadbeef;
        else if (protocol == kLL128 && i % 16 == 15)
          w[i] = s + 1;
      }
    }
  }

  const int32_t protocol, numSlots;
  const int64_t slotBytes;

private:
  std::vector<uint64_t> mem;
};

// One threadblock's arguments and what collLaunch keeps beside them.
struct Tb {
  // Every legitimate wait here is a few milliseconds; a broken FIFO should
  // fail the test soon rather than hang it.
  Tb(int32_t rank, collDataType_t type, int64_t count, int64_t slice, double timeout = 3) {
    a.rank = rank;
    a.nranks = 3;
    a.recvPeer = a.sendPeer = -1;
    a.datatype = type;
    a.op = collSum;
    a.elemSize = int32_t(collTypeSize(type));
    a.count = count;
    a.slice = slice;
    a.chunks = 1;
    a.progress = &progress;
    a.publishes = 1; // the tests count steps
    a.abort = &abort;
    a.timeoutSeconds = timeout;
    a.error = &error;
    a.errorText = text;
  }
  Tb(const Tb &) = delete;
  Tb &from(int32_t peer, Link &l) {
    a.recvPeer = peer;
    a.recv = l.fifo();
    return *this;
  }
  Tb &to(int32_t peer, Link &l) {
    a.sendPeer = peer;
    a.send = l.fifo();
    return *this;
  }
  Tb &in(void *p) {
    a.buffers[kIn] = static_cast<char *>(p);
    return *this;
  }
  Tb &out(void *p) {
    a.buffers[kOut] = static_cast<char *>(p);
    return *this;
  }

  Args a{};
  uint64_t progress = 0;
  volatile int32_t abort = 0;
  int32_t error = 0;
  char text[256] = "";
};

COLLC_KERNEL(sender) {
  Block b(COLLC_BLOCK_ARGS);
  while (b.nextLoop())
    b.send(in(0));
}
COLLC_KERNEL(receiver) {
  Block b(COLLC_BLOCK_ARGS);
  while (b.nextLoop())
    b.recv(out(0));
}
COLLC_KERNEL(copier) {
  Block b(COLLC_BLOCK_ARGS);
  while (b.nextLoop())
    b.copy(in(0), out(0));
}
COLLC_KERNEL(float32SumCopier) {
  BlockOf<kSimple, collFloat32, collSum> b(COLLC_BLOCK_ARGS);
  while (b.nextLoop())
    b.copy(in(0), out(0));
}
COLLC_KERNEL(relay) {
  Block b(COLLC_BLOCK_ARGS);
  while (b.nextLoop())
    b.recvReduceSend(in(0));
}
COLLC_KERNEL(sink) {
  Block b(COLLC_BLOCK_ARGS);
  while (b.nextLoop())
    b.recvReduceCopy(in(0), out(0));
}
// A sender on a direct connection: its receiver stores into out(0).
COLLC_KERNEL(directSender) {
  Block b(COLLC_BLOCK_ARGS);
  while (b.nextLoop())
    b.send(in(0), direct(out(0)));
}

// Runs each threadblock on its own thread, as collLaunch does.
void run(std::vector<std::pair<KernelFn, Tb *>> blocks) {
  std::vector<std::thread> threads;
  for (auto [fn, tb] : blocks)
    threads.emplace_back(fn, &tb->a);
  for (std::thread &t : threads)
    t.join();
}

std::vector<uint8_t> pattern(size_t bytes, unsigned seed) {
  std::vector<uint8_t> v(bytes);
  for (size_t i = 0; i < bytes; ++i)
    v[i] = uint8_t(i * 131 + seed * 17 + 7);
  return v;
}

// Sends `count` elements over `link` and checks that they arrive exactly,
// that nothing lands past the end of the receiver's buffer and that both
// counters moved by one per loop.
void expectTransfer(Link &link, int64_t count, collDataType_t type = collUint8) {
  SCOPED_TRACE("count " + std::to_string(count));
  const int64_t es = int64_t(collTypeSize(type)), slice = link.slice(es);
  const size_t bytes = size_t(count * es);
  std::vector<uint8_t> src = pattern(bytes, unsigned(count)), dst(bytes + 64, 0xee);
  uint64_t start = link.tail();
  Tb s(0, type, count, slice), r(1, type, count, slice);
  s.to(1, link).in(src.data());
  r.from(0, link).out(dst.data());
  run({{sender, &s}, {receiver, &r}});
  ASSERT_EQ(s.error, 0) << s.text;
  ASSERT_EQ(r.error, 0) << r.text;
  auto bad = std::mismatch(src.begin(), src.end(), dst.begin());
  EXPECT_EQ(bad.first, src.end()) << "first wrong byte at " << (bad.first - src.begin());
  EXPECT_TRUE(std::all_of(dst.begin() + bytes, dst.end(), [](uint8_t b) { return b == 0xee; }))
      << "the receiver wrote past the end of its buffer";
  uint64_t steps = uint64_t((count + slice - 1) / slice);
  EXPECT_EQ(link.tail(), start + steps);
  EXPECT_EQ(link.head(), start + steps);
  EXPECT_EQ(s.progress, steps);
  EXPECT_EQ(r.progress, steps);
}

const char *protocolName(int32_t p) { return p == kLL ? "LL" : p == kLL128 ? "LL128" : "Simple"; }

class Protocols : public ::testing::TestWithParam<int32_t> {};

} // namespace

// A threadblock counts its steps in its progress counter only where
// another of its rank waits for them (kTbWaitedOn): nobody reads the
// counter otherwise, and on the GPU each count is a release.
TEST(Progress, OnlyThreadblocksWaitedOnCountTheirSteps) {
  std::vector<float> data(1000), out(1000);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = float(i);
  for (int32_t publishes : {0, 1}) {
    Tb t(0, collFloat32, 1000, 100); // 10 loops of one step
    t.in(data.data()).out(out.data());
    t.a.publishes = publishes;
    copier(&t.a);
    EXPECT_EQ(t.progress, publishes ? 10u : 0u) << "publishes " << publishes;
    EXPECT_EQ(out, data);
    EXPECT_EQ(t.error, 0) << t.text;
  }
}

// A kernel compiled for one (type, op) runs launches of that pair (avg:
// sum's) and refuses the others, naming both, so that a runtime that
// picked the wrong kernel fails instead of computing in the wrong type.
TEST(TypedKernels, RunOnlyLaunchesOfTheirPair) {
  struct Case {
    collDataType_t type;
    collRedOp_t op;
    bool runs;
  };
  for (Case c : {Case{collFloat32, collSum, true}, Case{collFloat32, collAvg, true},
                 Case{collInt32, collSum, false}, Case{collFloat32, collMax, false}}) {
    std::vector<float> data(100, 2.5f), out(100, 0.0f);
    Tb t(0, c.type, 100, 100);
    t.a.op = c.op;
    t.in(data.data()).out(out.data());
    float32SumCopier(&t.a);
    EXPECT_EQ(t.error == 0, c.runs) << c.type << "/" << c.op << ": " << t.text;
    EXPECT_EQ(out == data, c.runs) << c.type << "/" << c.op;
    if (!c.runs) {
      EXPECT_NE(std::string(t.text).find("the kernel for type 7, op 0 ran a launch of type"),
                std::string::npos)
          << t.text;
    }
  }
}

TEST_P(Protocols, UnalignedCountsArriveExactly) {
  const int64_t slice = Link(GetParam()).slice(1);
  for (int64_t count : {1, 2, 3, 5, 7, 13, 121, int(slice) - 1, int(slice), int(slice) + 1}) {
    Link link(GetParam());
    expectTransfer(link, count);
    if (HasFailure())
      break;
  }
}

TEST_P(Protocols, ManyLoopsCycleThroughTheSlots) {
  Link bytes(GetParam(), 2);
  expectTransfer(bytes, 37 * bytes.slice(1) + 11);
  // Two-byte elements in an odd count leave half a word (LL) at the end.
  Link halves(GetParam(), 4);
  expectTransfer(halves, 5 * halves.slice(2) + 3, collFloat16);
}

TEST_P(Protocols, CountersCarryOverToTheNextLaunch) {
  // Shrinking launches leave stale lines of the earlier, longer steps in the
  // slots; the receiver must still wait for this launch's own.
  Link link(GetParam(), 4);
  for (int64_t count : {9 * link.slice(1) + 100, 4 * link.slice(1) + 1, int64_t(5), int64_t(1)}) {
    expectTransfer(link, count);
    if (HasFailure())
      break;
  }
}

TEST_P(Protocols, FlagsWrapPast32Bits) {
  // LL's 32-bit flag wraps (back to 1) on the fourth step here, and must
  // not repeat the flag a slot's stale line still carries.
  const uint64_t start = 0xFFFFFFFFull - 3;
  Link link(GetParam(), 4, 256, start);
  link.primeHistory(start);
  expectTransfer(link, 10 * link.slice(1) + 3);
  EXPECT_GT(link.head(), 0xFFFFFFFFull);
}

TEST_P(Protocols, FullFifoStopsTheSender) {
  Link link(GetParam(), 4);
  const int64_t slice = link.slice(1), count = (link.numSlots + 3) * slice;
  std::vector<uint8_t> src = pattern(size_t(count), 1), dst(src.size());
  Tb s(0, collUint8, count, slice), r(1, collUint8, count, slice);
  s.to(1, link).in(src.data());
  r.from(0, link).out(dst.data());
  std::atomic<bool> sent{false};
  std::thread st([&] {
    sender(&s.a);
    sent = true;
  });
  auto t0 = Clock::now();
  while (link.tail() < uint64_t(link.numSlots) && since(t0) < 5)
    std::this_thread::yield();
  EXPECT_EQ(link.tail(), uint64_t(link.numSlots));
  // Every slot is taken and nobody frees one: the sender has to stay put.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(link.tail(), uint64_t(link.numSlots)) << "the sender overwrote unread slots";
  EXPECT_FALSE(sent);
  std::thread rt(receiver, &r.a);
  st.join();
  rt.join();
  EXPECT_TRUE(sent);
  EXPECT_EQ(s.error, 0) << s.text;
  EXPECT_EQ(r.error, 0) << r.text;
  EXPECT_EQ(src, dst);
  EXPECT_EQ(link.head(), uint64_t(link.numSlots + 3));
}

TEST_P(Protocols, RecvReduceSendChainSumsFloats) {
  // a -> b -> c, where b adds its input on the way and c adds its own into
  // the output. The second link uses the next protocol, as a plan may mix
  // them; the slice is the one both carry.
  Link ab(GetParam(), 2, 512), bc((GetParam() + 1) % 3, 4, 512);
  const int64_t slice = std::min(ab.slice(4), bc.slice(4)), count = 4 * slice + 5;
  std::vector<float> a(count), b(count), c(count), got(count, -1);
  for (int64_t i = 0; i < count; ++i) {
    a[i] = float(i);
    b[i] = 0.5f * float(i % 1000);
    c[i] = -0.25f * float(i);
  }
  Tb ta(0, collFloat32, count, slice), tb(1, collFloat32, count, slice),
      tc(2, collFloat32, count, slice);
  ta.to(1, ab).in(a.data());
  tb.from(0, ab).to(2, bc).in(b.data());
  tc.from(1, bc).in(c.data()).out(got.data());
  run({{sender, &ta}, {relay, &tb}, {sink, &tc}});
  ASSERT_EQ(tb.error, 0) << tb.text;
  ASSERT_EQ(tc.error, 0) << tc.text;
  for (int64_t i = 0; i < count; ++i)
    ASSERT_EQ(got[i], 0.75f * float(i) + 0.5f * float(i % 1000)) << "element " << i;
  EXPECT_EQ(bc.head(), uint64_t(5));
}

TEST_P(Protocols, ReceiverWithoutSenderTimesOut) {
  Link link(GetParam());
  std::vector<uint8_t> dst(100, 0xee);
  Tb r(1, collUint8, 100, link.slice(1), 0.3);
  r.from(5, link).out(dst.data());
  auto t0 = Clock::now();
  receiver(&r.a);
  double took = since(t0);
  EXPECT_GE(took, 0.3);
  EXPECT_LT(took, 2.0);
  EXPECT_EQ(r.error, collTimeout);
  EXPECT_NE(strstr(r.text, "data from rank 5"), nullptr) << r.text;
  EXPECT_EQ(link.head(), 0u);
  EXPECT_EQ(r.progress, 0u);
  EXPECT_EQ(dst, std::vector<uint8_t>(100, 0xee));
}

INSTANTIATE_TEST_SUITE_P(Fifo, Protocols, ::testing::Values(kSimple, kLL, kLL128),
                         [](const ::testing::TestParamInfo<int32_t> &p) {
                           return std::string(protocolName(p.param));
                         });

TEST(FifoWait, SenderIntoAFullFifoTimesOut) {
  Link link(kSimple, 2);
  const int64_t slice = link.slice(1), count = 3 * slice;
  std::vector<uint8_t> src(static_cast<size_t>(count));
  Tb s(0, collUint8, count, slice, 0.3);
  s.to(7, link).in(src.data());
  auto t0 = Clock::now();
  sender(&s.a);
  EXPECT_LT(since(t0), 2.0);
  EXPECT_EQ(s.error, collTimeout);
  EXPECT_NE(strstr(s.text, "room to send to rank 7"), nullptr) << s.text;
  EXPECT_EQ(link.tail(), 2u);
}

TEST(FifoWait, AbortStopsAWaitingReceiver) {
  Link link(kLL);
  std::vector<uint8_t> dst(64);
  Tb r(1, collUint8, 64, link.slice(1), 30);
  r.from(0, link).out(dst.data());
  std::atomic<bool> done{false};
  std::thread rt([&] {
    receiver(&r.a);
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(done) << "the receiver returned with nothing sent";
  auto t0 = Clock::now();
  __atomic_store_n(&r.abort, 1, __ATOMIC_RELEASE);
  rt.join();
  EXPECT_LT(since(t0), 1.0);
  // An abort is not a timeout: collLaunch reports it from the flag.
  EXPECT_EQ(r.error, 0) << r.text;
  EXPECT_EQ(r.progress, 0u);
}

TEST(FifoWait, AbortStopsABlockedSender) {
  Link link(kLL128, 2);
  const int64_t slice = link.slice(1), count = 5 * slice;
  std::vector<uint8_t> src(static_cast<size_t>(count));
  Tb s(0, collUint8, count, slice, 30);
  s.to(1, link).in(src.data());
  std::thread st(sender, &s.a);
  auto t0 = Clock::now();
  while (link.tail() < 2 && since(t0) < 5)
    std::this_thread::yield();
  t0 = Clock::now();
  __atomic_store_n(&s.abort, 1, __ATOMIC_RELEASE);
  st.join();
  EXPECT_LT(since(t0), 1.0);
  EXPECT_EQ(link.tail(), 2u);
  EXPECT_EQ(s.progress, 2u);
}

// Where LL's flag wraps, words that no step has written since the window
// was zeroed (the steps before were shorter) must not look sent: flags are
// never 0.
TEST(FifoWait, LLWordsNeverWrittenAreNotSentWhenTheFlagWraps) {
  const uint64_t start = 0xFFFFFFFFull; // this step's flag wraps
  Link link(kLL, 2, 256, start);
  // The steps before carried 4 bytes each: only word 0 of a slot was written.
  for (uint64_t s = start - 2; s != start; ++s)
    reinterpret_cast<uint64_t *>(link.fifo().slots + s % 2 * 256)[0] =
        uint64_t(collc::llFlag(s)) << 32 | 1;
  // The sender has stored word 0 of a 16-byte step (bytes 1 2 3 4) and not
  // yet words 1 to 3.
  uint64_t *words = reinterpret_cast<uint64_t *>(link.fifo().slots + start % 2 * 256);
  __atomic_store_n(&words[0], uint64_t(collc::llFlag(start)) << 32 | 0x04030201, __ATOMIC_RELEASE);
  std::vector<uint8_t> dst(16, 0xee);
  Tb r(1, collUint8, 16, link.slice(1), 0.3);
  r.from(0, link).out(dst.data());
  receiver(&r.a);
  EXPECT_EQ(r.error, collTimeout) << "the receiver took unsent words for data";
  EXPECT_EQ(link.head(), start) << "the step was consumed before it was sent";
}

// A line that shorter steps never rewrite would keep its flag until the
// flag comes round again (2^32 - 1 steps) and then pass for sent data. The
// first steps of every 2^31 fill their whole slot, so no line gets that old.
TEST(FifoWait, LLStepsAtTheCleanWindowFillTheirSlots) {
  const uint64_t start = 0x80000000ull - 2; // steps 2^31 to 2^31 + 3 clean
  Link link(kLL, 4, 256, start);
  const uint32_t stale = 0x12345678; // what a step 2^32 - 1 later would use
  for (int i = 0; i < 4 * 256 / 8; ++i)
    reinterpret_cast<uint64_t *>(link.fifo().slots)[i] = uint64_t(stale) << 32 | 0xdeadbeef;
  // Four steps of 4 bytes (one word of a slot's 32): two before 2^31, two after.
  std::vector<uint8_t> src = pattern(16, 3), dst(16);
  Tb s(0, collUint8, 16, 4), r(1, collUint8, 16, 4);
  s.to(1, link).in(src.data());
  r.from(0, link).out(dst.data());
  run({{sender, &s}, {receiver, &r}});
  ASSERT_EQ(s.error, 0) << s.text;
  ASSERT_EQ(r.error, 0) << r.text;
  EXPECT_EQ(dst, src);
  const Fifo f = link.fifo();
  for (uint64_t step = start; step != start + 4; ++step) {
    const uint64_t *w = reinterpret_cast<const uint64_t *>(f.slots + step % 4 * 256);
    const bool cleans = step >= 0x80000000ull;
    EXPECT_EQ(f.sizes[step % 4], cleans ? 256 : 8) << "step " << step;
    for (int i = 1; i < 32; ++i)
      EXPECT_EQ(uint32_t(w[i] >> 32), cleans ? collc::llFlag(step) : stale)
          << "step " << step << " word " << i;
  }
}

// Direct connections: a receiver that waits in its step posts `ready`; the
// sender then stores into the receiver's destination, marks the slot
// kDirect and leaves the slot alone. The receiver reduces what it finds
// there with its own input.
namespace {
struct DirectPair {
  explicit DirectPair(unsigned seed)
      : src(pattern(count, seed)), mine(pattern(count, seed + 1)), dst(count, 0xee),
        s(0, collUint8, count, link.slice(1)), r(1, collUint8, count, link.slice(1)),
        peers(2 * kMaxBuffers, nullptr) {
    peers[1 * kMaxBuffers + kOut] = reinterpret_cast<char *>(dst.data());
    s.to(1, link).in(src.data());
    r.from(0, link).in(mine.data()).out(dst.data());
    s.a.peers = r.a.peers = peers.data();
  }
  void expectSum() {
    for (int64_t i = 0; i < count; ++i)
      ASSERT_EQ(dst[i], uint8_t(src[i] + mine[i])) << "element " << i;
  }
  Link link{kSimple};
  const int64_t count = 100;
  std::vector<uint8_t> src, mine, dst;
  Tb s, r;
  std::vector<char *> peers;
};
} // namespace

TEST(FifoDirect, SenderStoresIntoTheWaitingReceiversBuffer) {
  DirectPair d(1);
  std::thread rt(sink, &d.r.a);
  auto t0 = Clock::now();
  while (loadWord(d.link.fifo().ready) < 1 && since(t0) < 5)
    std::this_thread::yield();
  ASSERT_EQ(loadWord(d.link.fifo().ready), 1u) << "the receiver did not post its step";
  directSender(&d.s.a);
  rt.join();
  ASSERT_EQ(d.s.error, 0) << d.s.text;
  ASSERT_EQ(d.r.error, 0) << d.r.text;
  EXPECT_EQ(d.link.fifo().sizes[0], kDirect);
  const uint8_t *slot = reinterpret_cast<const uint8_t *>(d.link.fifo().slots);
  EXPECT_TRUE(std::all_of(slot, slot + d.count, [](uint8_t b) { return b == 0; }))
      << "a direct step went through the slot";
  d.expectSum();
  EXPECT_EQ(d.link.tail(), 1u);
  EXPECT_EQ(d.link.head(), 1u);
}

// A receiver that is not there yet gets the step through the slot.
TEST(FifoDirect, SenderUsesTheSlotWhenTheReceiverIsLate) {
  DirectPair d(3);
  directSender(&d.s.a); // room for the step: it does not wait
  ASSERT_EQ(d.s.error, 0) << d.s.text;
  EXPECT_EQ(d.link.fifo().sizes[0], d.count);
  EXPECT_TRUE(std::all_of(d.dst.begin(), d.dst.end(), [](uint8_t b) { return b == 0xee; }))
      << "the sender stored into a receiver that was not waiting";
  sink(&d.r.a);
  ASSERT_EQ(d.r.error, 0) << d.r.text;
  d.expectSum();
}
