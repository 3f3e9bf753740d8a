//===- SocketTest.cpp - The socket transport: steps and credits over TCP ---===//
//
// Two ranks as threads, each with its own bootstrap client and socket
// transport. The sender writes into its local mirror of the receiver's FIFO
// and never sees the receiver's memory; every step must still arrive, in
// order, and the receiver's credits must come back, or the sender stalls
// after two slots.
//
//===----------------------------------------------------------------------===//
#include "collc/kernel.h"
#include "src/Bootstrap.h"
#include "transport/Transport.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// Waits until *word >= goal; false after five seconds.
bool waitFor(const uint64_t *word, uint64_t goal) {
  auto deadline = Clock::now() + std::chrono::seconds(5);
  while (__atomic_load_n(word, __ATOMIC_ACQUIRE) < goal)
    if (Clock::now() > deadline)
      return false;
    else
      std::this_thread::yield();
  return true;
}

} // namespace

TEST(Socket, StepsAndCreditsCrossWithoutSharedMemory) {
  collrt::UniqueIdData id{};
  std::string error;
  ASSERT_EQ(collrt::startBootstrapRoot(id, error), collSuccess) << error;
  const int32_t slots = 2;
  const int64_t slotBytes = 256, steps = 7;
  std::vector<std::string> failures(2);

  auto rank = [&](int r) {
    std::string &fail = failures[r];
    std::string err;
    collrt::Bootstrap boot;
    if (boot.connect(id, r, 2, 5, err) != collSuccess) {
      fail = "bootstrap: " + err;
      return;
    }
    collResult_t res;
    auto net = collrt::makeSocketTransport(boot, r, 2, 5, res, err);
    if (!net) {
      fail = "transport: " + err;
      return;
    }
    EXPECT_STREQ(net->name(), "socket");
    collrt::Window w;
    if (net->exchangeWindow(collrt::fifoBytes(slots, slotBytes), w, err) != collSuccess) {
      fail = "window: " + err;
      return;
    }
    EXPECT_NE(w.base[r], nullptr);
    EXPECT_EQ(w.base[1 - r], nullptr) << "no rank maps another's memory";
    if (r == 1) {
      collc::Fifo f = collrt::fifoAt(w.base[1], slots, slotBytes, collc::kSimple);
      net->recvFifo(w, 0, 0, f, err);
      for (int64_t s = 0; s < steps; ++s) {
        if (!waitFor(f.tail, s + 1)) {
          fail = "step " + std::to_string(s) + " never arrived";
          break;
        }
        const char *slot = f.slots + (s % slots) * slotBytes;
        int64_t size = f.sizes[s % slots];
        EXPECT_EQ(size, 10 + s);
        for (int64_t i = 0; i < size; ++i)
          if (slot[i] != char('a' + s + i % 3)) {
            fail = "step " + std::to_string(s) + " arrived wrong at byte " + std::to_string(i);
            break;
          }
        __atomic_store_n(f.head, uint64_t(s + 1), __ATOMIC_RELEASE);
      }
    } else {
      collc::Fifo f;
      if (net->sendFifo(w, 1, 0, slots, slotBytes, collc::kSimple, f, err) != collSuccess) {
        fail = "sendFifo: " + err;
      }
      for (int64_t s = 0; s < steps && fail.empty(); ++s) {
        // Room only once the receiver's credit for step s - slots is back.
        if (s >= slots && !waitFor(f.head, s + 1 - slots)) {
          fail = "no credit for step " + std::to_string(s);
          break;
        }
        char *slot = f.slots + (s % slots) * slotBytes;
        for (int64_t i = 0; i < 10 + s; ++i)
          slot[i] = char('a' + s + i % 3);
        f.sizes[s % slots] = 10 + s;
        __atomic_store_n(f.tail, uint64_t(s + 1), __ATOMIC_RELEASE);
      }
      // Every credit comes back, the last one too.
      if (fail.empty() && !waitFor(f.head, steps))
        fail = "the last credits never came back";
    }
    EXPECT_EQ(boot.barrier(err), collSuccess) << err;
  };
  std::thread a(rank, 0), b(rank, 1);
  a.join();
  b.join();
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");
}
