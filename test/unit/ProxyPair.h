//===- ProxyPair.h - Two proxies of one process, ranks 0 and 1 ------------===//
//
// Rank 0 feeds one FIFO per protocol in rank 1's window through mirrors, and
// only the proxies and their wire join them: the harness for the proxy
// engine over each wire (ProxyTest.cpp, IbWireTest.cpp), copying steps or
// putting them.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TEST_UNIT_PROXYPAIR_H
#define COLLC_TEST_UNIT_PROXYPAIR_H

#include "WaitFor.h"
#include "collc/abi.h"
#include "transport/Proxy.h"
#include "transport/Transport.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace collrt::test {

// Both ends of a wire between ranks 0 and 1.
struct Link {
  std::unique_ptr<Wire> end[2];
};

constexpr int32_t kSlots = 2;
constexpr int64_t kSlotBytes = 256;
constexpr int32_t kProtocols[] = {collc::kSimple, collc::kLL, collc::kLL128};

// Step s of FIFO k: whole 8-byte words (as LL and LL128 lines are), of a
// size that changes from step to step.
inline int64_t stepBytes(int k, int64_t s) { return 8 * (1 + (s * 5 + k) % (kSlotBytes / 8)); }
inline char stepByte(int k, int64_t s, int64_t i) { return char(k * 31 + s * 7 + i); }

// Host memory that passes for a GPU's: no host address reaches it as far
// as the wire knows, so it is registered through a "dma-buf" (its memfd),
// and flushed after the NIC writes it.
class DeviceLikeMemory : public MemoryBackend {
public:
  const char *name() const override { return "device-like"; }
  bool hostAccessible() const override { return false; }
  collResult_t allocate(size_t bytes, Region &out, std::string &error) const override {
    return hostMemory().allocate(bytes, out, error);
  }
  collResult_t import(int fd, size_t bytes, Region &out, std::string &error) const override {
    return hostMemory().import(fd, bytes, out, error);
  }
  void unmap(Region &region) const override { hostMemory().unmap(region); }
  int dmabuf(const Region &region, std::string &) const override { return dup(region.fd); }
  bool flushWrites(std::string &error) const override {
    flushes.fetch_add(1);
    if (failFlush.load())
      error = "CUDA_ERROR_INVALID_CONTEXT";
    return !failFlush.load();
  }
  mutable std::atomic<int> flushes{0};
  std::atomic<bool> failFlush{false}; // flushes fail from now on
};

// How rank 0's steps reach rank 1's slots: copied by the proxies, put by
// the wire into the slots after their headers, or put into slots apart in
// device-like memory, as GPUDirect RDMA puts them into a GPU's.
enum class Puts { kNone, kInline, kApart };

// Rank 1's window with one FIFO per protocol, fed by rank 0 through the
// two proxies; the FIFOs and mirrors of each protocol, in kProtocols order.
struct Pair {
  explicit Pair(Link link, Puts puts = Puts::kNone) : link(std::move(link)) {
    std::string error;
    EXPECT_EQ(allocateWindow(3 * fifoBytes(kSlots, kSlotBytes), 1, 2, window, error), collSuccess)
        << error;
    window.id = 0;
    if (puts == Puts::kApart) {
      EXPECT_EQ(device.allocate(window.size[1], window.slots, error), collSuccess) << error;
      window.slotMemory = &device;
    }
    // Senders put once the wire is theirs.
    if (puts != Puts::kNone) {
      EXPECT_EQ(proxy[0].start(*this->link.end[0], error), collSuccess) << error;
      EXPECT_EQ(proxy[1].start(*this->link.end[1], error), collSuccess) << error;
      uint64_t key = 0;
      const Region part{window.base[1], window.size[1], -1, 0};
      EXPECT_TRUE(this->link.end[1]->expose(window.slots.base ? window.slots : part,
                                            window.slots.base ? device : hostMemory(), key, error))
          << error;
      proxy[0].addRemote(1, 0, uintptr_t(window.slots.base ? window.slots.base : part.base), key);
    }
    // Window 0 exists on both ranks (credits name it); rank 0's part is
    // empty.
    proxy[0].addWindow(0, nullptr, 0);
    proxy[1].addWindow(0, window.base[1], window.size[1], window.slots.base);
    for (int k = 0; k < 3; ++k) {
      uint64_t offset = uint64_t(k) * fifoBytes(kSlots, kSlotBytes);
      fifo[k] = fifoIn(window, 1, offset, kSlots, kSlotBytes, kProtocols[k]);
      proxy[1].addRecv(0, 0, offset, fifo[k]);
      EXPECT_EQ(proxy[0].addSend(1, 0, offset, kSlots, kSlotBytes, kProtocols[k], hostMemory(),
                                 mirror[k], error, window.slotMemory),
                collSuccess)
          << error;
    }
    if (puts == Puts::kNone) {
      EXPECT_EQ(proxy[0].start(*this->link.end[0], error), collSuccess) << error;
      EXPECT_EQ(proxy[1].start(*this->link.end[1], error), collSuccess) << error;
    }
  }
  ~Pair() {
    proxy[0].stop();
    proxy[1].stop();
    // Each end closes once the other has, as two processes would at once.
    std::thread first([this] { link.end[0].reset(); });
    link.end[1].reset();
    first.join();
    freeWindow(window, 1);
  }

  // What a sending threadblock does: step s into the mirror once a credit
  // leaves room, then the tail.
  void publish(int k, int64_t s) {
    const collc::Fifo &f = mirror[k];
    char *slot = f.slots + (s % kSlots) * kSlotBytes;
    for (int64_t i = 0; i < stepBytes(k, s); ++i)
      slot[i] = stepByte(k, s, i);
    f.sizes[s % kSlots] = stepBytes(k, s);
    __atomic_store_n(f.tail, uint64_t(s + 1), __ATOMIC_RELEASE);
  }

  // What a receiving threadblock does: waits for step s, checks it, frees
  // its slot. Empty if it arrived whole.
  std::string take(int k, int64_t s) {
    const collc::Fifo &f = fifo[k];
    if (!waitFor(f.tail, uint64_t(s + 1)))
      return "step " + std::to_string(s) + " never arrived";
    const char *slot = f.slots + (s % kSlots) * kSlotBytes;
    if (f.sizes[s % kSlots] != stepBytes(k, s))
      return "step " + std::to_string(s) + " arrived with the wrong size";
    for (int64_t i = 0; i < stepBytes(k, s); ++i)
      if (slot[i] != stepByte(k, s, i))
        return "step " + std::to_string(s) + " arrived wrong at byte " + std::to_string(i);
    __atomic_store_n(f.head, uint64_t(s + 1), __ATOMIC_RELEASE);
    return "";
  }

  DeviceLikeMemory device; // outlives the window and the mirrors
  Link link;               // outlives the proxies
  Window window;
  Proxy proxy[2] = {Proxy(2), Proxy(2)};
  collc::Fifo fifo[3], mirror[3];
};

// Every protocol's FIFO at once, many more steps than slots: most steps
// wait for a credit that only the proxies can bring back.
inline void crossSteps(Pair &pair) {
  const int64_t steps = 40;
  std::string failure[3][2];
  std::vector<std::thread> threads;
  for (int k = 0; k < 3; ++k) {
    threads.emplace_back([&, k] {
      for (int64_t s = 0; s < steps; ++s) {
        if (s >= kSlots && !waitFor(pair.mirror[k].head, uint64_t(s + 1 - kSlots))) {
          failure[k][0] = "no credit for step " + std::to_string(s);
          return;
        }
        pair.publish(k, s);
      }
      if (!waitFor(pair.mirror[k].head, steps))
        failure[k][0] = "the last credits never came back";
    });
    threads.emplace_back([&, k] {
      for (int64_t s = 0; s < steps && failure[k][1].empty(); ++s)
        failure[k][1] = pair.take(k, s);
    });
  }
  for (std::thread &t : threads)
    t.join();
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(failure[k][0], "") << "sender, protocol " << kProtocols[k];
    EXPECT_EQ(failure[k][1], "") << "receiver, protocol " << kProtocols[k];
  }
}

} // namespace collrt::test

#endif // COLLC_TEST_UNIT_PROXYPAIR_H
