//===- BarrierTest.cpp - The peer barrier of GPU plans, on the host -------===//
//
// Plans with steps on other ranks' buffers start and end at a barrier of
// every threadblock of every rank (Args::barrier): each rank counts its
// own threadblocks in its own words and posts each generation it reaches
// into every rank's, so that every poll is local. Here the host build of
// collc::Block runs it (as on collrt's GPU path over the fake driver),
// ranks' threadblocks as threads, over many launches on the same words.
//
//===----------------------------------------------------------------------===//
#include "collc/kernel.h"
#include "collrt.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace collc;

namespace {

constexpr int kRanks = 3, kMaxBlocks = 2;

// What the threadblocks of one launch saw.
std::atomic<int> started{0}, finished{0}, earlyStarts{0}, earlyEnds{0}, total{0};

// One loop: between the barriers every threadblock has started, and after
// the last every threadblock has finished its loop.
COLLC_KERNEL(countingKernel) {
  ++started;
  Block b(COLLC_BLOCK_ARGS);
  while (b.nextLoop()) {
    earlyStarts += started.load() != total.load();
    ++finished;
  }
  earlyEnds += finished.load() != total.load();
}

struct Ranks {
  explicit Ranks(int blocks, int absent = -1, double timeout = 20)
      : blocks(blocks), absent(absent) {
    for (int r = 0; r < kRanks; ++r)
      table[r] = words[r];
    for (int r = 0; r < kRanks; ++r)
      for (int t = 0; t < blocks; ++t) {
        Args &a = args[r][t];
        a.rank = r;
        a.nranks = kRanks;
        a.tb = t;
        a.recvPeer = a.sendPeer = -1;
        a.datatype = collUint8;
        a.op = collSum;
        a.elemSize = 1;
        a.count = a.slice = a.chunks = 1;
        a.progress = &progress[r][t];
        a.abort = &abort;
        a.timeoutSeconds = timeout;
        a.error = &error;
        a.errorText = text;
        a.barrier = words[r];
        a.barrierArrivals = uint64_t(blocks);
        a.barriers = table;
      }
  }
  // One launch: every threadblock of every rank but `absent` on a thread.
  void launch() {
    started = finished = 0;
    total = (kRanks - (absent >= 0)) * blocks;
    std::vector<std::thread> threads;
    for (int r = 0; r < kRanks; ++r)
      for (int t = 0; t < blocks && r != absent; ++t)
        threads.emplace_back(countingKernel, &args[r][t]);
    for (std::thread &t : threads)
      t.join();
  }

  uint64_t words[kRanks][2 + kRanks] = {};
  uint64_t *table[kRanks];
  Args args[kRanks][kMaxBlocks] = {};
  uint64_t progress[kRanks][kMaxBlocks] = {};
  volatile int32_t abort = 0;
  int32_t error = 0;
  char text[256] = "";
  const int blocks, absent;
};

} // namespace

TEST(PeerBarrier, NoThreadblockPassesBeforeAllHaveArrived) {
  Ranks ranks(kMaxBlocks);
  earlyStarts = earlyEnds = 0;
  for (int launch = 0; launch < 300 && !HasFailure(); ++launch) {
    ranks.launch();
    ASSERT_EQ(ranks.error, 0) << ranks.text;
  }
  EXPECT_EQ(earlyStarts, 0) << "a threadblock started before every threadblock had";
  EXPECT_EQ(earlyEnds, 0) << "a threadblock returned before every threadblock had finished";
  // Two barriers a launch; each rank's words hold its generation and every
  // rank's post of it, the count back at zero.
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(ranks.words[r][0], 0u);
    for (int q = 0; q < 1 + kRanks; ++q)
      EXPECT_EQ(ranks.words[r][1 + q], 600u) << "rank " << r << " word " << 1 + q;
  }
}

// A rank's one threadblock is the one that waits for the others' posts.
TEST(PeerBarrier, ARankThatNeverArrivesIsNamed) {
  Ranks ranks(/*blocks=*/1, /*absent=*/2, /*timeout=*/0.3);
  ranks.launch();
  EXPECT_EQ(ranks.error, collTimeout);
  EXPECT_NE(strstr(ranks.text, "every rank at the peer barrier, rank 2"), nullptr) << ranks.text;
}
