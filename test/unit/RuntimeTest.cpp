//===- RuntimeTest.cpp - collrt: bootstrap, shm windows, launches, reduce --===//
//
// Ranks run as threads of this process, each calling the C API as a process
// of its own would. FIFO protocols are tested on their own in FifoTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "collc/kernel.h"
#include "collrt.h"
#include "PairPlan.h"
#include "src/Comm.h"
#include "support/Env.h"
#include "support/Socket.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using Clock = std::chrono::steady_clock;

// Every wait of the runtime lasts at most COLL_TIMEOUT seconds. Env reads
// it once, at its first use, so it is set before main: a rank that never
// arrives then costs two seconds, not sixty.
static const bool shortTimeout = setenv("COLL_TIMEOUT", "2", 1) == 0;

namespace {

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Runs fn(rank) on one thread per rank, as n processes would.
template <typename F> void onRanks(int n, F fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back(fn, r);
  for (std::thread &t : threads)
    t.join();
}

std::vector<collComm_t> initComms(int n) {
  collUniqueId id;
  EXPECT_EQ(collGetUniqueId(&id), collSuccess) << collGetLastError(nullptr);
  std::vector<collComm_t> comms(n, nullptr);
  std::vector<collResult_t> res(n);
  onRanks(n, [&](int r) { res[r] = collCommInitRank(&comms[r], n, id, r); });
  for (int r = 0; r < n; ++r)
    EXPECT_EQ(res[r], collSuccess) << "rank " << r << ": " << collGetLastError(nullptr);
  return comms;
}

void destroy(std::vector<collComm_t> &comms) {
  for (collComm_t c : comms)
    if (c) {
      EXPECT_EQ(collCommDestroy(c), collSuccess);
    }
  comms.clear();
}

} // namespace

//===----------------------------------------------------------------------===//
// Bootstrap
//===----------------------------------------------------------------------===//

TEST(Bootstrap, TimeoutComesFromTheEnvironment) {
  ASSERT_TRUE(shortTimeout);
  EXPECT_EQ(collrt::Env::get().timeoutSeconds, 2.0);
}

TEST(Bootstrap, RanksAsThreadsMakeOneCommunicator) {
  std::vector<collComm_t> comms = initComms(4);
  ASSERT_EQ(comms.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    ASSERT_NE(comms[r], nullptr);
    int count = -1, rank = -1;
    EXPECT_EQ(collCommCount(comms[r], &count), collSuccess);
    EXPECT_EQ(collCommUserRank(comms[r], &rank), collSuccess);
    EXPECT_EQ(count, 4);
    EXPECT_EQ(rank, r);
  }
  destroy(comms);
}

TEST(Bootstrap, TwoGroupsAtOnceStayApart) {
  // Peers find each other by names made from the id, so two groups in one
  // process (or machine) must not meet.
  collUniqueId a, b;
  ASSERT_EQ(collGetUniqueId(&a), collSuccess);
  ASSERT_EQ(collGetUniqueId(&b), collSuccess);
  std::vector<collComm_t> comms(4, nullptr);
  std::vector<collResult_t> res(4);
  onRanks(4, [&](int i) { res[i] = collCommInitRank(&comms[i], 2, i < 2 ? a : b, i % 2); });
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(res[i], collSuccess) << collGetLastError(nullptr);
    int count = 0;
    collCommCount(comms[i], &count);
    EXPECT_EQ(count, 2);
  }
  destroy(comms);
}

TEST(Bootstrap, MissingRankFailsWithinTheTimeout) {
  collUniqueId id;
  ASSERT_EQ(collGetUniqueId(&id), collSuccess);
  // Ranks 0 and 1 of 3 call in, rank 2 never does. They run detached, on
  // state they share, so that a hang fails this test instead of the run.
  struct Pending {
    std::mutex m;
    std::condition_variable cv;
    int done = 0;
    collResult_t res[2] = {collSuccess, collSuccess};
    collComm_t comms[2] = {nullptr, nullptr};
  };
  auto p = std::make_shared<Pending>();
  const double limit = 2 * collrt::Env::get().timeoutSeconds + 2;
  for (int r = 0; r < 2; ++r)
    std::thread([p, id, r] {
      collComm_t c = nullptr;
      collResult_t res = collCommInitRank(&c, 3, id, r);
      std::lock_guard<std::mutex> lock(p->m);
      p->res[r] = res;
      p->comms[r] = c;
      ++p->done;
      p->cv.notify_all();
    }).detach();
  std::unique_lock<std::mutex> lock(p->m);
  ASSERT_TRUE(
      p->cv.wait_for(lock, std::chrono::duration<double>(limit), [&] { return p->done == 2; }))
      << "collCommInitRank still waits after " << limit << " s for a rank that never came";
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(p->res[r], collSuccess) << "rank " << r;
    EXPECT_EQ(p->comms[r], nullptr);
  }
  std::string why = collGetLastError(nullptr);
  EXPECT_NE(why.find("bootstrap"), std::string::npos) << why;
  EXPECT_NE(why.find("never arrived"), std::string::npos) << why;
}

TEST(Bootstrap, RejectsARankOutOfRange) {
  collUniqueId id;
  ASSERT_EQ(collGetUniqueId(&id), collSuccess);
  collComm_t comm = nullptr;
  EXPECT_EQ(collCommInitRank(&comm, 2, id, 2), collInvalidArgument);
  EXPECT_EQ(comm, nullptr);
  EXPECT_NE(std::string(collGetLastError(nullptr)).find("rank 2 of 2"), std::string::npos);
}

TEST(Bootstrap, RefusesMoreRanksThanTheLimitBeforeAllocating) {
  collUniqueId id;
  ASSERT_EQ(collGetUniqueId(&id), collSuccess);
  collComm_t comm = nullptr;
  EXPECT_EQ(collCommInitRank(&comm, 1 << 30, id, 0), collInvalidArgument);
  EXPECT_EQ(comm, nullptr);
  EXPECT_NE(std::string(collGetLastError(nullptr)).find("at most 1048576"), std::string::npos)
      << collGetLastError(nullptr);
}

TEST(Comm, DestroyAfterAbortIsAnErrorNotACrash) {
  std::vector<collComm_t> comms = initComms(1);
  ASSERT_EQ(comms.size(), 1u);
  ASSERT_NE(comms[0], nullptr);
  EXPECT_EQ(collCommAbort(comms[0]), collSuccess);
  EXPECT_EQ(collCommDestroy(comms[0]), collInvalidUsage);
  EXPECT_NE(std::string(collGetLastError(nullptr)).find("destroyed or aborted already"),
            std::string::npos);
  EXPECT_EQ(collCommAbort(comms[0]), collInvalidUsage);
  comms.clear();
}

// Each refusal leaves its own message, never the text of an earlier failure.
TEST(Comm, EveryRefusalSaysWhy) {
  auto lastIs = [](collComm_t comm, const std::string &want) {
    std::string got = collGetLastError(comm);
    EXPECT_EQ(got, want);
  };
  collUniqueId id;
  ASSERT_EQ(collGetUniqueId(&id), collSuccess);
  collComm_t none = nullptr;
  int n = 0;
  ASSERT_EQ(collCommInitRank(&none, 2, id, 2), collInvalidArgument); // an earlier failure
  EXPECT_EQ(collCommCount(nullptr, &n), collInvalidArgument);
  lastIs(nullptr, "collCommCount: comm is NULL");
  EXPECT_EQ(collCommDestroy(nullptr), collInvalidArgument);
  lastIs(nullptr, "collCommDestroy: comm is NULL");
  EXPECT_EQ(collCommAbort(nullptr), collInvalidArgument);
  lastIs(nullptr, "collCommAbort: comm is NULL");
  EXPECT_EQ(collGetUniqueId(nullptr), collInvalidArgument);
  lastIs(nullptr, "collGetUniqueId: id is NULL");
  EXPECT_EQ(collCommInitRank(nullptr, 1, id, 0), collInvalidArgument);
  lastIs(nullptr, "collCommInitRank: comm is NULL");
  EXPECT_EQ(collAllReduce(&n, &n, 1, collInt32, collSum, nullptr, nullptr), collInvalidArgument);
  lastIs(nullptr, "collAllReduce: comm is NULL");
  EXPECT_EQ(collMemAlloc(nullptr, 8), collInvalidArgument);
  lastIs(nullptr, "collMemAlloc: ptr is NULL");
  void *p = nullptr;
  EXPECT_EQ(collMemAlloc(&p, 0), collInvalidArgument);
  lastIs(nullptr, "collMemAlloc: a size of 0");
  EXPECT_EQ(collMemFree(&n), collInvalidArgument);
  lastIs(nullptr, "collMemFree: the pointer is not one that collMemAlloc returned");

  std::vector<collComm_t> comms = initComms(1);
  ASSERT_EQ(comms.size(), 1u);
  ASSERT_NE(comms[0], nullptr);
  collComm_t comm = comms[0];
  EXPECT_EQ(collAllReduce(&n, &n, 1, collInt32, collSum, comm, nullptr), collInvalidUsage);
  EXPECT_EQ(collLaunch(comm, nullptr, &n, &n, 1, collInt32, collSum, nullptr), collInvalidArgument);
  lastIs(comm, "collLaunch: algorithm is NULL");
  EXPECT_EQ(collCommUserRank(comm, nullptr), collInvalidArgument);
  lastIs(comm, "collCommUserRank: rank is NULL");
  EXPECT_EQ(collRegisterAlgorithm(comm, nullptr), collInvalidArgument);
  lastIs(comm, "collRegisterAlgorithm: algorithm is NULL");
  EXPECT_EQ(collCommWindowRegister(comm, &n, sizeof n, nullptr), collInvalidArgument);
  lastIs(comm, "collCommWindowRegister: win is NULL");
  EXPECT_EQ(collCommWindowDeregister(comm, nullptr), collInvalidArgument);
  lastIs(comm, "collCommWindowDeregister: win is NULL");
  destroy(comms);
}

//===----------------------------------------------------------------------===//
// Shared-memory windows
//===----------------------------------------------------------------------===//

TEST(Shm, WindowsAreSharedBetweenRanks) {
  const int n = 3;
  std::vector<collComm_t> comms = initComms(n);
  ASSERT_EQ(comms.size(), size_t(n));
  ASSERT_STREQ(comms[0]->transport->nameOf(1), "shm");
  std::vector<collrt::Window> windows(n);
  auto asked = [](int r) { return size_t(1000 + 5000 * r); };
  onRanks(n, [&](int r) {
    collComm &c = *comms[r];
    collrt::Window &w = windows[r];
    std::string error;
    ASSERT_EQ(c.transport->exchangeWindow(asked(r), w, error), collSuccess) << error;
    ASSERT_EQ(w.base.size(), size_t(n));
    // Each rank writes its own window, then reads everyone's.
    memset(w.base[r], 'a' + r, asked(r));
    ASSERT_EQ(c.bootstrap.barrier(error), collSuccess) << error;
    for (int p = 0; p < n; ++p) {
      ASSERT_NE(w.base[p], nullptr);
      EXPECT_EQ(w.size[p], (asked(p) + 4095) / 4096 * 4096) << "rank " << r << " of " << p;
      EXPECT_EQ(w.base[p][0], 'a' + p);
      EXPECT_EQ(w.base[p][asked(p) - 1], 'a' + p);
      EXPECT_EQ(w.base[p][asked(p)], 0) << "windows start zeroed";
    }
    // A sender writes its counter into the receiver's window.
    ASSERT_EQ(c.bootstrap.barrier(error), collSuccess) << error;
    int next = (r + 1) % n;
    __atomic_store_n(reinterpret_cast<uint64_t *>(w.base[next] + 64), 1000 + r, __ATOMIC_RELEASE);
    ASSERT_EQ(c.bootstrap.barrier(error), collSuccess) << error;
    int prev = (r + n - 1) % n;
    EXPECT_EQ(*reinterpret_cast<uint64_t *>(w.base[r] + 64), uint64_t(1000 + prev));
    ASSERT_EQ(c.bootstrap.barrier(error), collSuccess) << error;
  });
  // Each rank has mappings of its own: the sharing is the kernel's, not an
  // alias of one pointer.
  for (int r = 0; r < n; ++r)
    for (int p = 0; p < n; ++p)
      if (p != r && windows[r].base.size() == size_t(n) && windows[p].base.size() == size_t(n)) {
        EXPECT_NE(windows[r].base[p], windows[p].base[p]);
      }
  for (int r = 0; r < n; ++r) {
    comms[r]->transport->release(windows[r]);
    EXPECT_TRUE(windows[r].base.empty());
  }
  destroy(comms);
}

// Abstract Unix socket names are anyone's to bind first. A local process
// that takes every name it can compute from the group's public values (the
// id's magic, which collCommInitEnv derives from MASTER_ADDR and the rest,
// and the ranks) once broke the group; the ranks' own are random.
TEST(Shm, GroupFormsWhereSquattersHoldTheNamesOfPublicValues) {
  collUniqueId id;
  ASSERT_EQ(collGetUniqueId(&id), collSuccess) << collGetLastError(nullptr);
  collrt::UniqueIdData data;
  memcpy(&data, id.internal, sizeof data);
  const int n = 2;
  std::vector<int> squatted;
  std::string error;
  for (int r = 0; r < n; ++r) {
    squatted.push_back(
        collrt::listenUnix("collc-" + std::to_string(data.magic) + "-" + std::to_string(r), error));
    ASSERT_GE(squatted.back(), 0) << error;
  }
  std::vector<collComm_t> comms(n, nullptr);
  std::vector<collResult_t> res(n);
  onRanks(n, [&](int r) { res[r] = collCommInitRank(&comms[r], n, id, r); });
  for (int r = 0; r < n; ++r)
    EXPECT_EQ(res[r], collSuccess) << "rank " << r << ": " << collGetLastError(nullptr);
  ASSERT_TRUE(comms[0] && comms[1]);
  EXPECT_STREQ(comms[0]->transport->nameOf(1), "shm");
  PairAlgorithm pair(collc::kSimple);
  std::vector<uint8_t> src(4096, 7), out0(4096), out1(4096);
  onRanks(n, [&](int r) {
    EXPECT_EQ(collLaunch(comms[r], &pair.alg, src.data(), r ? out1.data() : out0.data(), 4096,
                         collUint8, collSum, nullptr),
              collSuccess)
        << collGetLastError(comms[r]);
  });
  EXPECT_EQ(out1, src);
  destroy(comms);
  for (int fd : squatted)
    close(fd);
}

//===----------------------------------------------------------------------===//
// Launches of a hand-made plan: rank 0 broadcasts to rank 1
//===----------------------------------------------------------------------===//

namespace {

std::vector<uint8_t> pattern(size_t bytes, unsigned seed) {
  std::vector<uint8_t> v(bytes);
  for (size_t i = 0; i < bytes; ++i)
    v[i] = uint8_t(i * 7 + seed);
  return v;
}

} // namespace

TEST(Launch, BroadcastsThroughShmFifosWithEveryProtocol) {
  std::vector<collComm_t> comms = initComms(2);
  ASSERT_EQ(comms.size(), 2u);
  for (int32_t protocol : {collc::kSimple, collc::kLL, collc::kLL128}) {
    PairAlgorithm pair(protocol);
    // Several launches: the FIFO counters carry over from one to the next.
    for (size_t bytes : {size_t(100003), size_t(1), size_t(40000)}) {
      SCOPED_TRACE("protocol " + std::to_string(protocol) + ", " + std::to_string(bytes));
      std::vector<uint8_t> src = pattern(bytes, unsigned(bytes)), out0(bytes), out1(bytes + 1, 9);
      collResult_t res[2];
      onRanks(2, [&](int r) {
        // The non-root may pass no input, as with NCCL.
        res[r] = collLaunch(comms[r], &pair.alg, r ? nullptr : src.data(),
                            r ? out1.data() : out0.data(), bytes, collUint8, collSum, nullptr);
      });
      ASSERT_EQ(res[0], collSuccess) << collGetLastError(comms[0]);
      ASSERT_EQ(res[1], collSuccess) << collGetLastError(comms[1]);
      EXPECT_EQ(out0, src);
      EXPECT_TRUE(std::equal(src.begin(), src.end(), out1.begin()));
      EXPECT_EQ(out1[bytes], 9);
    }
  }
  destroy(comms);
}

TEST(Launch, LonePeerTimesOutNamingTheSilentRank) {
  std::vector<collComm_t> comms = initComms(2);
  ASSERT_EQ(comms.size(), 2u);
  PairAlgorithm pair(collc::kLL);
  std::vector<uint8_t> src(64, 1), out(64), out0(64);
  // The first launch connects the FIFOs, which takes both ranks (each with
  // an output of its own, as separate processes would have).
  onRanks(2, [&](int r) {
    EXPECT_EQ(collLaunch(comms[r], &pair.alg, src.data(), r ? out.data() : out0.data(), 64,
                         collUint8, collSum, nullptr),
              collSuccess);
  });
  auto t0 = Clock::now();
  EXPECT_EQ(collLaunch(comms[1], &pair.alg, nullptr, out.data(), 64, collUint8, collSum, nullptr),
            collTimeout);
  EXPECT_LT(since(t0), collrt::Env::get().timeoutSeconds + 2);
  std::string why = collGetLastError(comms[1]);
  EXPECT_NE(why.find("data from rank 0"), std::string::npos) << why;
  destroy(comms);
}

TEST(Launch, AbortStopsAWaitingLaunch) {
  std::vector<collComm_t> comms = initComms(2);
  ASSERT_EQ(comms.size(), 2u);
  PairAlgorithm pair(collc::kSimple);
  std::vector<uint8_t> src(64, 1), out(64), out0(64);
  onRanks(2, [&](int r) {
    EXPECT_EQ(collLaunch(comms[r], &pair.alg, src.data(), r ? out.data() : out0.data(), 64,
                         collUint8, collSum, nullptr),
              collSuccess);
  });
  // Rank 1 waits for data rank 0 never sends; the abort must not wait for
  // the timeout. It also destroys the communicator, once the launch is out.
  int before = kernelsEntered;
  collResult_t res = collSuccess;
  std::thread lone([&] {
    res = collLaunch(comms[1], &pair.alg, nullptr, out.data(), 64, collUint8, collSum, nullptr);
  });
  auto t0 = Clock::now();
  while (kernelsEntered == before && since(t0) < 5)
    std::this_thread::yield();
  t0 = Clock::now();
  EXPECT_EQ(collCommAbort(comms[1]), collSuccess);
  double took = since(t0);
  lone.join();
  EXPECT_EQ(res, collAborted);
  EXPECT_LT(took, 1.0);
  comms[1] = nullptr;
  destroy(comms);
}

//===----------------------------------------------------------------------===//
// collcHostReduce
//===----------------------------------------------------------------------===//

namespace {
template <typename T, size_t N>
std::vector<T> reduce(collDataType_t type, collRedOp_t op, const T (&acc)[N], const T (&src)[N]) {
  std::vector<T> out(acc, acc + N);
  collcHostReduce(type, op, out.data(), src, N);
  return out;
}
using U16 = std::vector<uint16_t>;
} // namespace

TEST(HostReduce, IntegersWrapAround) {
  EXPECT_EQ(reduce<int8_t>(collInt8, collSum, {100, -128, 127}, {100, -1, 1}),
            (std::vector<int8_t>{-56, 127, -128}));
  EXPECT_EQ(reduce<uint8_t>(collUint8, collProd, {16, 3, 255}, {16, 200, 255}),
            (std::vector<uint8_t>{0, 88, 1}));
  EXPECT_EQ(reduce<int32_t>(collInt32, collSum, {INT32_MAX}, {1}), std::vector<int32_t>{INT32_MIN});
  EXPECT_EQ(reduce<int64_t>(collInt64, collProd, {INT64_MAX}, {2}), std::vector<int64_t>{-2});
}

TEST(HostReduce, MaxAndMinCompareValuesNotBits) {
  EXPECT_EQ(reduce<int32_t>(collInt32, collMax, {-5, 7}, {3, -9}), (std::vector<int32_t>{3, 7}));
  EXPECT_EQ(reduce<uint32_t>(collUint32, collMax, {4000000000u, 1}, {1, 4000000000u}),
            (std::vector<uint32_t>{4000000000u, 4000000000u}));
  EXPECT_EQ(reduce<int64_t>(collInt64, collMin, {-1, 5}, {2, -7}), (std::vector<int64_t>{-1, -7}));
  EXPECT_EQ(reduce<float>(collFloat32, collMin, {-0.5f, 2}, {0.25f, -3}),
            (std::vector<float>{-0.5f, -3}));
  // bf16 -1 is 0xBF80, 0.5 is 0x3F00: as raw bits -1 would be the larger.
  EXPECT_EQ(reduce<uint16_t>(collBfloat16, collMax, {0xBF80}, {0x3F00}), U16{0x3F00});
  EXPECT_EQ(reduce<uint16_t>(collBfloat16, collMin, {0xBF80}, {0x3F00}), U16{0xBF80});
  EXPECT_EQ(reduce<uint16_t>(collFloat16, collMax, {0xBC00}, {0x3800}), U16{0x3800});
}

TEST(HostReduce, HalfSumsRoundToNearestEven) {
  // 1 + 2^-11 and (1 + 2^-10) + 2^-11 are ties: they round to the even
  // neighbour, 1 and 1 + 2^-9. Then overflow to inf, subnormals, signs.
  EXPECT_EQ(reduce<uint16_t>(collFloat16, collSum, {0x3C00, 0x3C01, 0x7BFF, 0x0001, 0xC000},
                             {0x1000, 0x1000, 0x7BFF, 0x0001, 0x3800}),
            (U16{0x3C00, 0x3C02, 0x7C00, 0x0002, 0xBE00}));
  EXPECT_EQ(reduce<uint16_t>(collFloat16, collProd, {0x4200}, {0x3800}), U16{0x3E00}); // 3 * .5
}

TEST(HostReduce, Bfloat16SumsRoundToNearestEven) {
  // 1 + 2^-8 and (1 + 2^-7) + 2^-8 are ties, as above with bf16's 7 bits.
  EXPECT_EQ(
      reduce<uint16_t>(collBfloat16, collSum, {0x3F80, 0x3F81, 0x4040}, {0x3B80, 0x3B80, 0xBF80}),
      (U16{0x3F80, 0x3F82, 0x4000})); // and 3 + -1 == 2
}

TEST(HostReduce, FloatProductsAndAverages) {
  EXPECT_EQ(reduce<float>(collFloat32, collProd, {1.5f, -2, 7}, {2, 3, -1}),
            (std::vector<float>{3, -6, -7}));
  // Avg adds here: collLaunch divides once every rank's share is in.
  EXPECT_EQ(reduce<double>(collFloat64, collAvg, {1.5, 2}, {2.25, 3}),
            (std::vector<double>{3.75, 5}));
}

TEST(HostReduce, TouchesOnlyTheFirstNElements) {
  float acc[3] = {1, 2, 3}, src[3] = {10, 20, 30};
  collcHostReduce(collFloat32, collSum, acc, src, 2);
  EXPECT_EQ(acc[1], 22);
  EXPECT_EQ(acc[2], 3);
}
