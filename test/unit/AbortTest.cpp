//===- AbortTest.cpp - collCommAbort ends every wait at once --------------===//
//
// COLL_TIMEOUT is 60 s here, so that an abort that waits for any timeout
// shows; Env reads it once, at its first use, so it is set before main.
// Ranks run as threads of this process, each calling the C API as a process
// of its own would.
//
//===----------------------------------------------------------------------===//
#include "PairPlan.h"
#include "collrt.h"
#include "src/Comm.h"
#include "support/Env.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

using Clock = std::chrono::steady_clock;

static const bool longTimeout = setenv("COLL_TIMEOUT", "60", 1) == 0;

namespace {

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Two ranks on this host (joined by shm), or claiming two hosts (socket).
std::vector<collComm_t> initPair(bool socket) {
  collUniqueId id;
  EXPECT_EQ(collGetUniqueId(&id), collSuccess) << collGetLastError(nullptr);
  std::vector<collComm_t> comms(2, nullptr);
  std::vector<collResult_t> res(2);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.emplace_back([&, r] {
      collrt::PeerInfo self = socket ? collrt::PeerInfo{r ? "b" : "a"} : collrt::localPeerInfo();
      res[r] = collrt::initComm(&comms[r], 2, id, r, self);
    });
  for (std::thread &t : ranks)
    t.join();
  for (int r = 0; r < 2; ++r)
    EXPECT_EQ(res[r], collSuccess) << "rank " << r << ": " << collGetLastError(nullptr);
  return comms;
}

// Rank 1 never launches, so rank 0's first launch waits for it while making
// the algorithm's FIFOs (over shm for its window's descriptor, over socket
// at the bootstrap): the abort must end that wait, not outlast it.
void abortTheFirstLaunch(bool socket) {
  ASSERT_EQ(collrt::Env::get().timeoutSeconds, 60.0);
  std::vector<collComm_t> comms = initPair(socket);
  ASSERT_TRUE(comms[0] && comms[1]);
  ASSERT_EQ(comms[0]->transport->nameOf(1), std::string(socket ? "socket" : "shm"));
  PairAlgorithm pair(collc::kSimple);
  std::vector<uint8_t> src(64, 1), out(64);
  const int entered = kernelsEntered;
  std::atomic<bool> returned{false};
  collResult_t res = collSuccess;
  std::thread first([&] {
    res = collLaunch(comms[0], &pair.alg, src.data(), out.data(), 64, collUint8, collSum, nullptr);
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300)); // into the wait
  EXPECT_FALSE(returned) << "the launch did not wait for rank 1";
  EXPECT_EQ(kernelsEntered, entered) << "the launch got past making its FIFOs";
  auto t0 = Clock::now();
  EXPECT_EQ(collCommAbort(comms[0]), collSuccess);
  const double took = since(t0);
  first.join();
  EXPECT_EQ(res, collAborted);
  EXPECT_LT(took, 2.0) << "collCommAbort waited for the launch's timeout";

  // Rank 1 sees rank 0 gone, and closes at once too.
  t0 = Clock::now();
  EXPECT_EQ(collCommDestroy(comms[1]), collSuccess);
  EXPECT_LT(since(t0), 2.0);
}

} // namespace

TEST(Abort, EndsTheFirstLaunchWaitingForAPeerOverShm) { abortTheFirstLaunch(false); }

TEST(Abort, EndsTheFirstLaunchWaitingForAPeerOverSocket) { abortTheFirstLaunch(true); }
