//===- ProxyTest.cpp - The proxy engine over the socket wire and in memory --===//
//
// Two proxies of one process play ranks 0 and 1: rank 0 feeds FIFOs in rank
// 1's window through mirrors, and only the proxies and their wire join them.
// The same engine runs over the socket transport's TCP wire and over a wire
// that hands over whole messages, as an RDMA NIC's completions would, so
// that what the engine does not owe to TCP is checked apart from it.
//
//===----------------------------------------------------------------------===//
#include "collc/abi.h"
#include "support/Socket.h"
#include "transport/Frame.h"
#include "transport/Proxy.h"
#include "transport/Transport.h"
#include "ProxyPair.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace collrt;
using namespace collrt::test;

namespace {

// One TCP connection over loopback, as the socket transport makes them.
Link socketLink() {
  std::string error;
  const uint32_t loopback = htonl(INADDR_LOOPBACK);
  int listener = listenTcp(loopback, error);
  EXPECT_GE(listener, 0) << error;
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  getsockname(listener, reinterpret_cast<sockaddr *>(&bound), &len);
  int a = connectTcp(loopback, bound.sin_port, 5, error);
  int b = acceptWithin(listener, 5, error);
  close(listener);
  EXPECT_GE(a, 0) << error;
  EXPECT_GE(b, 0) << error;
  return {{makeSocketWire(0, {-1, a}), makeSocketWire(1, {b, -1})}};
}

// Whole messages through memory: each arrives as one unit and must be
// taken whole, as a completion of an RDMA write would be.
struct Mailbox {
  std::mutex mutex;
  std::deque<std::string> to[2];
  std::string failure[2];
};

class MemoryWire : public Wire {
public:
  MemoryWire(int rank, std::shared_ptr<Mailbox> box) : rank(rank), box(std::move(box)) {}
  void post(int peer, const FrameHeader &m, const char *payload) override {
    std::string message(reinterpret_cast<const char *>(&m), sizeof m);
    message.append(payload ? payload : "", payload ? size_t(m.size) : 0);
    std::lock_guard<std::mutex> lock(box->mutex);
    box->to[peer].push_back(std::move(message));
  }
  bool progress(Proxy &proxy, int) override {
    std::deque<std::string> arrived;
    {
      std::lock_guard<std::mutex> lock(box->mutex);
      arrived.swap(box->to[rank]);
    }
    for (const std::string &m : arrived) {
      size_t used = 0;
      std::string error;
      if (!proxy.receive(1 - rank, m.data(), m.size(), used, error) || used != m.size()) {
        std::lock_guard<std::mutex> lock(box->mutex);
        box->failure[rank] = error.empty() ? "a message not taken whole" : error;
      }
    }
    return !arrived.empty();
  }
  bool flushed() const override { return true; }

private:
  int rank;
  std::shared_ptr<Mailbox> box;
};

Link memoryLink(std::shared_ptr<Mailbox> box) {
  return {{std::make_unique<MemoryWire>(0, box), std::make_unique<MemoryWire>(1, box)}};
}

} // namespace

TEST(Proxy, StepsAndCreditsCrossTheSocketWireInEveryProtocol) {
  Pair pair(socketLink());
  crossSteps(pair);
}

TEST(Proxy, StepsAndCreditsCrossAWireOfWholeMessages) {
  auto box = std::make_shared<Mailbox>();
  {
    Pair pair(memoryLink(box));
    crossSteps(pair);
  }
  EXPECT_EQ(box->failure[0], "");
  EXPECT_EQ(box->failure[1], "");
}

TEST(Proxy, StopShipsWhatTheLastLaunchPublished) {
  // Rank 0's last launch fills both slots and returns; its communicator is
  // destroyed at once. Rank 1 must still get both steps.
  Pair pair(socketLink());
  pair.publish(0, 0);
  pair.publish(0, 1);
  pair.proxy[0].stop();
  EXPECT_EQ(pair.take(0, 0), "");
  EXPECT_EQ(pair.take(0, 1), "");
}

//===----------------------------------------------------------------------===//
// What arrives, checked by the engine whatever the wire
//===----------------------------------------------------------------------===//

namespace {

std::string message(const FrameHeader &m, const std::string &payload = "") {
  return std::string(reinterpret_cast<const char *>(&m), sizeof m) + payload;
}

FrameHeader data(uint64_t step, int64_t size) {
  return {kFrameData, collc::kSimple, kSlots, 0, 0, kSlotBytes, step, size};
}
FrameHeader credit(uint64_t head) { return {kFrameCredit, 0, 0, 0, 0, 0, head, 0}; }

} // namespace

TEST(Proxy, TakesOnlyWholeMessagesAndSaysHowMuch) {
  Proxy proxy(2);
  Window w;
  std::string error;
  ASSERT_EQ(allocateWindow(fifoBytes(kSlots, kSlotBytes), 1, 2, w, error), collSuccess) << error;
  proxy.addWindow(0, w.base[1], w.size[1]);
  collc::Fifo f = fifoAt(w.base[1], kSlots, kSlotBytes, collc::kSimple);
  proxy.addRecv(0, 0, 0, f);

  // Two steps and the first half of a third: the two land, the half waits.
  std::string bytes = message(data(0, 3), "abc") + message(data(1, 2), "de");
  const size_t whole = bytes.size();
  bytes += message(data(2, 4), "fghi").substr(0, sizeof(FrameHeader) + 1);
  size_t used = 99;
  ASSERT_TRUE(proxy.receive(0, bytes.data(), bytes.size(), used, error)) << error;
  EXPECT_EQ(used, whole);
  EXPECT_EQ(*f.tail, 2u);
  EXPECT_EQ(std::string(f.slots, 3), "abc");
  EXPECT_EQ(std::string(f.slots + kSlotBytes, 2), "de");

  // A step out of order is refused, and nothing of it is written.
  bytes = message(data(5, 3), "xyz");
  EXPECT_FALSE(proxy.receive(0, bytes.data(), bytes.size(), used, error));
  EXPECT_EQ(error, "a step out of order");
  EXPECT_EQ(*f.tail, 2u);
  EXPECT_EQ(std::string(f.slots + kSlotBytes, 2), "de");
  freeWindow(w, 1);
}

TEST(Proxy, RefusesCreditsForStepsNeverSent) {
  Proxy proxy(2);
  collc::Fifo mirror;
  std::string error;
  ASSERT_EQ(proxy.addSend(1, 0, 0, kSlots, kSlotBytes, collc::kSimple, hostMemory(), mirror, error),
            collSuccess)
      << error;
  proxy.addWindow(0, nullptr, 0);
  size_t used = 0;
  // Nothing was shipped yet: no credit can be due.
  std::string bytes = message(credit(1));
  EXPECT_FALSE(proxy.receive(1, bytes.data(), bytes.size(), used, error));
  EXPECT_EQ(error, "a credit for steps that were never sent");
  EXPECT_EQ(*mirror.head, 0u);
  // Nor from a rank this one does not feed.
  EXPECT_FALSE(proxy.receive(0, bytes.data(), bytes.size(), used, error));
  EXPECT_EQ(error, "a credit for a FIFO that this rank does not feed");
}
