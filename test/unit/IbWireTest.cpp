//===- IbWireTest.cpp - The proxy engine over the ib wire, in memory ------===//
//
// The ib transport's wire under the proxy engine, as ProxyTest runs it over
// TCP, with the in-memory verbs of LoopbackVerbs.h in place of a NIC: rings
// large and small (smaller than one message), writes that land late, a
// queue pair that fails, a shutdown that must drain through credits, steps
// put straight into the receiver's slots (GPUDirect RDMA's path), a flush
// of them that fails, the path MTU of ends that differ. And
// libibverbs itself, on a machine without an RDMA device: a clear error.
//
//===----------------------------------------------------------------------===//
#include "LoopbackVerbs.h"
#include "ProxyPair.h"
#include "support/Bootstrap.h"
#include "transport/PeerTransports.h"
#include "transport/Verbs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

using namespace collrt;
using namespace collrt::test;

namespace {

// Ranks 0 and 1 joined by the ib wire over `fabric`, set up as the transport
// does it: make both ends, then each connects with the other's endpoint.
Link ibLink(const std::shared_ptr<LoopbackFabric> &fabric, size_t ringBytes) {
  std::string error;
  std::unique_ptr<IbWire> a = makeIbWire(0, fabric->open(0), {false, true}, ringBytes, error);
  EXPECT_TRUE(a) << error;
  std::unique_ptr<IbWire> b = makeIbWire(1, fabric->open(1), {true, false}, ringBytes, error);
  EXPECT_TRUE(b) << error;
  if (!a || !b)
    return {};
  EXPECT_TRUE(a->connect(1, b->endpoint(0), error)) << error;
  EXPECT_TRUE(b->connect(0, a->endpoint(1), error)) << error;
  return {{std::move(a), std::move(b)}};
}

// The largest message: a header and a full slot.
constexpr size_t kLargest = sizeof(FrameHeader) + kSlotBytes;

} // namespace

TEST(IbWire, StepsAndCreditsCrossInEveryProtocol) {
  auto fabric = std::make_shared<LoopbackFabric>();
  {
    Link link = ibLink(fabric, 1 << 20);
    ASSERT_TRUE(link.end[0] && link.end[1]);
    Pair pair(std::move(link));
    crossSteps(pair);
  }
  // Steps one way, FIFO credits the other, each answered by ring space.
  EXPECT_GE(fabric->landed(0).bytes, 3 * 40 * sizeof(FrameHeader));
  EXPECT_GT(fabric->landed(1).writes, 0u);
  EXPECT_GT(fabric->landed(0).empty, 0u);
  EXPECT_GT(fabric->landed(1).empty, 0u);
}

TEST(IbWire, ARingOfAFewMessagesWrapsAndWaitsForItsSpace) {
  // 1000 bytes hold three messages at most and are no multiple of any, so
  // the ring's end cuts messages in two; late landings make senders wait.
  for (uint64_t delay : {0, 30}) {
    SCOPED_TRACE("delay " + std::to_string(delay));
    const size_t ring = 1000;
    auto fabric = std::make_shared<LoopbackFabric>();
    fabric->setDelay(delay);
    {
      Link link = ibLink(fabric, ring);
      ASSERT_TRUE(link.end[0] && link.end[1]);
      Pair pair(std::move(link));
      crossSteps(pair);
    }
    LoopbackFabric::Landed sent = fabric->landed(0), returned = fabric->landed(1);
    EXPECT_GT(sent.bytes, 10 * ring) << "the ring went round many times";
    EXPECT_LE(sent.largest, ring);
    EXPECT_GE(returned.empty * ring, sent.bytes - ring) << "its space came back as it went";
  }
}

TEST(IbWire, MessagesLargerThanTheRingGoInPieces) {
  const size_t ring = 200;
  static_assert(kLargest > 200, "some messages must not fit");
  auto fabric = std::make_shared<LoopbackFabric>();
  fabric->setDelay(5);
  {
    Link link = ibLink(fabric, ring);
    ASSERT_TRUE(link.end[0] && link.end[1]);
    Pair pair(std::move(link));
    crossSteps(pair);
  }
  // Every step went whole, none in one write.
  uint64_t steps = 0;
  for (int k = 0; k < 3; ++k)
    for (int64_t s = 0; s < 40; ++s)
      steps += sizeof(FrameHeader) + stepBytes(k, s);
  LoopbackFabric::Landed sent = fabric->landed(0);
  EXPECT_GE(sent.bytes, steps);
  EXPECT_LE(sent.largest, ring);
}

TEST(IbWire, StopShipsWhatTheLastLaunchPublished) {
  // Rank 0's last launch publishes two steps of every protocol, more than
  // its ring holds, and its communicator is destroyed at once: its proxy
  // must keep going until rank 1 has returned the space for the rest.
  auto fabric = std::make_shared<LoopbackFabric>();
  fabric->setDelay(20);
  Link link = ibLink(fabric, 200);
  ASSERT_TRUE(link.end[0] && link.end[1]);
  Pair pair(std::move(link));
  for (int k = 0; k < 3; ++k) {
    pair.publish(k, 0);
    pair.publish(k, 1);
  }
  pair.proxy[0].stop();
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(pair.take(k, 0), "") << "protocol " << kProtocols[k];
    EXPECT_EQ(pair.take(k, 1), "") << "protocol " << kProtocols[k];
  }
}

TEST(IbWire, APeerWhoseQueuePairFailsIsDropped) {
  auto fabric = std::make_shared<LoopbackFabric>();
  Link link = ibLink(fabric, 4096);
  ASSERT_TRUE(link.end[0] && link.end[1]);
  Pair pair(std::move(link));
  pair.publish(0, 0);
  ASSERT_EQ(pair.take(0, 0), "");

  testing::internal::CaptureStderr();
  fabric->failNextWrite(0);
  pair.publish(0, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // Nothing is owed to a dropped peer: rank 0 stops at once instead of
  // draining for its two seconds.
  auto start = std::chrono::steady_clock::now();
  pair.proxy[0].stop();
  pair.proxy[1].stop();
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string said = testing::internal::GetCapturedStderr();
  EXPECT_LT(took, 1.0);
  EXPECT_EQ(*pair.fifo[0].tail, 1u) << "step 1 went down with the queue pair";
  EXPECT_NE(said.find("collrt: rank 0 drops its ib connection to rank 1: its queue pair failed "
                      "(transport retry counter exceeded)"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("collrt: rank 1 drops its ib connection to rank 0: its queue pair failed "
                      "(work request flushed error)"),
            std::string::npos)
      << said;
}

// A packet must pass both ports: each end joins its queue pair with the
// smaller active MTU, whichever end has it.
TEST(IbWire, BothEndsUseTheSmallerActiveMtu) {
  for (uint8_t mtu0 : {5, 3}) {
    const uint8_t mtu1 = mtu0 == 5 ? 3 : 5;
    auto fabric = std::make_shared<LoopbackFabric>();
    fabric->setMtu(0, mtu0); // 4096 bytes, or 1024
    fabric->setMtu(1, mtu1);
    Link link = ibLink(fabric, 4096);
    ASSERT_TRUE(link.end[0] && link.end[1]);
    EXPECT_EQ(fabric->connectedMtu(0, 1), 3) << "rank 0 at " << int(mtu0);
    EXPECT_EQ(fabric->connectedMtu(1, 0), 3) << "rank 1 at " << int(mtu1);
  }
  EXPECT_EQ(pathMtu(0, 4), 4) << "an end that does not say";
  EXPECT_EQ(pathMtu(2, 0), 2);
}

// A flush of the GPU's view that fails (no context on the proxy's thread)
// drops the peer, saying so, rather than move a tail over bytes the
// kernels may not see.
TEST(IbWire, AFailedFlushOfGpuMemoryDropsThePeer) {
  auto fabric = std::make_shared<LoopbackFabric>();
  Link link = ibLink(fabric, 1 << 20);
  ASSERT_TRUE(link.end[0] && link.end[1]);
  Pair pair(std::move(link), Puts::kApart);
  pair.publish(0, 0);
  ASSERT_EQ(pair.take(0, 0), "");
  const int flushed = pair.device.flushes.load();
  EXPECT_GT(flushed, 0);

  testing::internal::CaptureStderr();
  pair.device.failFlush = true;
  pair.publish(0, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  pair.proxy[0].stop();
  pair.proxy[1].stop();
  std::string said = testing::internal::GetCapturedStderr();
  EXPECT_GT(pair.device.flushes.load(), flushed);
  EXPECT_EQ(*pair.fifo[0].tail, 1u) << "step 1's tail never moved";
  // Both ends flush what lands in their memory (steps, returned credits),
  // and the device is shared: whichever flushes first drops its peer.
  EXPECT_NE(said.find("drops its ib connection to rank"), std::string::npos) << said;
  EXPECT_NE(said.find(": the GPU cannot see what the NIC wrote (CUDA_ERROR_INVALID_CONTEXT)"),
            std::string::npos)
      << said;
}

// Where rank 1 exposed its slots, every step's bytes go as a put straight
// into them, and only the headers take the ring: into the slots after the
// headers, or into slots apart in device-like memory registered through
// its descriptor, which the receiver flushes before moving a tail.
TEST(IbWire, StepsArePutStraightIntoTheReceiversSlots) {
  uint64_t stepped = 0;
  for (int k = 0; k < 3; ++k)
    for (int64_t s = 0; s < 40; ++s)
      stepped += uint64_t(stepBytes(k, s));
  for (Puts puts : {Puts::kInline, Puts::kApart}) {
    SCOPED_TRACE(puts == Puts::kApart ? "apart" : "inline");
    auto fabric = std::make_shared<LoopbackFabric>();
    {
      Link link = ibLink(fabric, 1 << 20);
      ASSERT_TRUE(link.end[0] && link.end[1]);
      Pair pair(std::move(link), puts);
      crossSteps(pair);
      if (puts == Puts::kApart) {
        EXPECT_GT(pair.device.flushes.load(), 0);
        for (int k = 0; k < 3; ++k) { // the slots by the headers stay as made
          const char *by =
              pair.window.base[1] + k * fifoBytes(kSlots, kSlotBytes) + fifoHeaderBytes(kSlots);
          EXPECT_TRUE(std::all_of(by, by + kSlots * kSlotBytes, [](char c) { return !c; }));
        }
      }
    }
    const LoopbackFabric::Landed sent = fabric->landed(0);
    EXPECT_EQ(sent.puts, 3u * 40);
    EXPECT_EQ(sent.putBytes, stepped);
    EXPECT_EQ(sent.bytes - sent.putBytes, 3 * 40 * sizeof(FrameHeader));
  }
}

// A put goes before the header that follows it even when the header waits
// for ring space, and steps still arrive whole when writes land late.
TEST(IbWire, PutsKeepTheirPlaceInAStreamThatWaitsForRingSpace) {
  auto fabric = std::make_shared<LoopbackFabric>();
  fabric->setDelay(7);
  Link link = ibLink(fabric, sizeof(FrameHeader) + 8);
  ASSERT_TRUE(link.end[0] && link.end[1]);
  Pair pair(std::move(link), Puts::kApart);
  crossSteps(pair);
}

//===----------------------------------------------------------------------===//
// libibverbs on this machine
//===----------------------------------------------------------------------===//

TEST(IbVerbs, WithoutAnRdmaDeviceSaysWhy) {
  std::string error;
  std::unique_ptr<Verbs> verbs = openIbVerbs("", error);
  if (verbs)
    GTEST_SKIP() << "this machine has an RDMA device, " << verbs->device();
  EXPECT_TRUE(error.rfind("no RDMA device", 0) == 0 || error.rfind("libibverbs not found", 0) == 0)
      << error;
  std::string why;
  EXPECT_EQ(rdmaDevice(why), "");
  EXPECT_EQ(why, error);
  EXPECT_EQ(localPeerInfo().noRdma, error);

  // A named device that is not there, and a port that is no number.
  EXPECT_FALSE(openIbVerbs("nosuch_hca0", error));
  EXPECT_TRUE(error.rfind("no RDMA device", 0) == 0 || error.rfind("libibverbs not found", 0) == 0)
      << error;
  EXPECT_FALSE(openIbVerbs("mlx5_0:x", error));
  EXPECT_NE(error, "");
}

TEST(IbVerbs, ForcingIbWithoutADeviceFailsAtInitSayingWhy) {
  PeerInfo self = localPeerInfo();
  if (!self.rdma.empty())
    GTEST_SKIP() << "this machine has an RDMA device, " << self.rdma;
  // The choice refuses it...
  std::vector<std::vector<int>> choice;
  std::string error;
  EXPECT_FALSE(chooseTransports(transportTable(), {self, self}, "ib", choice, error));
  EXPECT_NE(error.find("COLL_TRANSPORT=ib cannot join rank 0"), std::string::npos) << error;
  EXPECT_NE(error.find(": " + self.noRdma), std::string::npos) << error;

  // ...and the transport itself, made anyway, fails on every rank, none
  // left waiting for another.
  UniqueIdData id{};
  ASSERT_EQ(startBootstrapRoot(id, error), collSuccess) << error;
  std::string failure[2];
  collResult_t result[2];
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.emplace_back([&, r] {
      Bootstrap boot;
      std::string err;
      if (boot.connect(id, r, 2, 5, err) != collSuccess) {
        failure[r] = "bootstrap: " + err;
        return;
      }
      auto t = ibTransport.make(boot, r, {r == 1, r == 0}, 5, result[r], err);
      failure[r] = t ? "" : err;
    });
  for (std::thread &t : ranks)
    t.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(result[r], collSystemError) << "rank " << r;
    EXPECT_EQ(failure[r], "ib: " + self.noRdma) << "rank " << r;
  }
}
