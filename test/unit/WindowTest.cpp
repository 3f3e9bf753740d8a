//===- WindowTest.cpp - collMemAlloc and symmetric windows ----------------===//
//
// Ranks run as threads of this process over the shm transport; a window
// maps each rank's collMemAlloc allocation into every rank.
//
//===----------------------------------------------------------------------===//
#include "collrt.h"
#include "src/Comm.h"
#include "src/Memory.h"
#include "src/Windows.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

static const bool shortTimeout = setenv("COLL_TIMEOUT", "2", 1) == 0;

namespace {

constexpr int kRanks = 3;
constexpr size_t kBytes = 3 * 4096;

// Runs fn(rank, comm) on one thread per rank of a new communicator.
template <typename F> void onComms(F fn) {
  collUniqueId id;
  ASSERT_EQ(collGetUniqueId(&id), collSuccess) << collGetLastError(nullptr);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r)
    threads.emplace_back([&, r] {
      collComm_t comm = nullptr;
      ASSERT_EQ(collCommInitRank(&comm, kRanks, id, r), collSuccess) << collGetLastError(nullptr);
      fn(r, comm);
      EXPECT_EQ(collCommDestroy(comm), collSuccess);
    });
  for (std::thread &t : threads)
    t.join();
}

} // namespace

TEST(Memory, AllocationsAreFoundByAnyAddressInside) {
  void *p = nullptr;
  ASSERT_EQ(collMemAlloc(&p, 5000), collSuccess);
  collrt::Allocation a;
  ASSERT_TRUE(collrt::findAllocation(static_cast<char *>(p) + 100, 4900, a));
  EXPECT_EQ(a.base, p);
  EXPECT_EQ(a.size, 8192u); // whole pages
  EXPECT_GE(a.fd, 0);
  EXPECT_FALSE(collrt::findAllocation(static_cast<char *>(p) + 100, 8192, a));
  int local = 0;
  EXPECT_FALSE(collrt::findAllocation(&local, sizeof local, a));
  EXPECT_EQ(collMemFree(p), collSuccess);
  EXPECT_FALSE(collrt::findAllocation(p, 1, a));
  EXPECT_EQ(collMemFree(p), collInvalidArgument);
  EXPECT_EQ(collMemAlloc(&p, 0), collInvalidArgument);
  EXPECT_EQ(collMemAlloc(nullptr, 8), collInvalidArgument);
}

TEST(Windows, EveryRankMapsEveryRanksBuffer) {
  onComms([](int r, collComm_t comm) {
    void *memory = nullptr;
    ASSERT_EQ(collMemAlloc(&memory, kBytes), collSuccess);
    // Each rank registers a buffer at an offset of its own.
    char *buff = static_cast<char *>(memory) + 64 * r;
    memset(buff, 'a' + r, 4096);
    collWindow_t win = nullptr;
    ASSERT_EQ(collCommWindowRegister(comm, buff, 4096, &win), collSuccess)
        << collGetLastError(comm);
    const collrt::WindowPlace at = collrt::placeOf(comm, buff + 10, 100);
    EXPECT_EQ(at.id, win->window.id);
    EXPECT_EQ(at.offset, 64 * r + 10);
    EXPECT_EQ(collrt::placeOf(comm, buff + 4000, 200).id, -1); // past the registered part
    for (int q = 0; q < kRanks; ++q) {
      const char *theirs = collrt::peerAddress(comm, q, {win->window.id, 64 * q});
      ASSERT_NE(theirs, nullptr) << "rank " << q;
      EXPECT_EQ(theirs[0], 'a' + q);
      EXPECT_EQ(theirs[4095], 'a' + q);
    }
    // Peers map the memory: it stays until the window is deregistered.
    EXPECT_EQ(collMemFree(memory), collInvalidUsage);
    EXPECT_EQ(collCommWindowDeregister(comm, win), collSuccess) << collGetLastError(comm);
    EXPECT_EQ(collrt::placeOf(comm, buff, 1).id, -1);
    EXPECT_EQ(collrt::peerAddress(comm, (r + 1) % kRanks, {at.id, 0}), nullptr);
    EXPECT_EQ(collCommWindowDeregister(comm, win), collInvalidArgument);
    EXPECT_EQ(collMemFree(memory), collSuccess);
  });
}

TEST(Windows, EveryRankRefusesMemoryThatOneRankDidNotAllocate) {
  onComms([](int r, collComm_t comm) {
    void *memory = nullptr;
    ASSERT_EQ(collMemAlloc(&memory, kBytes), collSuccess);
    std::vector<char> heap(kBytes);
    collWindow_t win = nullptr;
    EXPECT_EQ(collCommWindowRegister(comm, r == 1 ? heap.data() : memory, kBytes, &win),
              collInvalidUsage);
    EXPECT_EQ(win, nullptr);
    const std::string why = collGetLastError(comm);
    EXPECT_NE(why.find("rank 1: the buffer is not memory from collMemAlloc"), std::string::npos)
        << why;
    // A null buffer is an argument error, on every rank alike.
    EXPECT_EQ(collCommWindowRegister(comm, r == 2 ? nullptr : memory, kBytes, &win),
              r == 2 ? collInvalidArgument : collInvalidUsage);
    EXPECT_TRUE(comm->windows.empty());
    EXPECT_EQ(collMemFree(memory), collSuccess);
  });
}
