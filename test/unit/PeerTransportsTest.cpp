//===- PeerTransportsTest.cpp - One transport for each pair of ranks ------===//
//
// The choice per pair from what ranks say at init, and a group whose ranks
// claim two hosts: shm joins the ranks of a host, socket the rest (or nvl,
// in one NVLink domain), and a ring allreduce across the mix is bit-exact.
// Ranks run as threads.
//
//===----------------------------------------------------------------------===//
#include "collc/kernel.h"
#include "collrt.h"
#include "src/Comm.h"
#include "support/Env.h"
#include "transport/PeerTransports.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace collrt;

namespace {

std::vector<PeerInfo> onHosts(std::vector<std::string> hosts) {
  std::vector<PeerInfo> ranks;
  for (std::string &h : hosts)
    ranks.push_back(PeerInfo{h});
  return ranks;
}

bool choose(const std::vector<const TransportKind *> &table, const std::vector<PeerInfo> &ranks,
            const std::string &forced, std::vector<std::vector<int>> &choice, std::string &error) {
  return chooseTransports(table, ranks, forced, choice, error);
}

const int kShm = 0, kNvl = 1, kIb = 2, kSocket = 3; // rows of transportTable()

bool never(const PeerInfo &, const PeerInfo &) { return false; }
const TransportKind kNever = {"never", true, never, nullptr};

} // namespace

TEST(PeerTransports, ShmOnOneHostSocketBetweenHosts) {
  const std::vector<const TransportKind *> &table = transportTable();
  ASSERT_EQ(table.size(), 4u);
  EXPECT_STREQ(table[kShm]->name, "shm");
  EXPECT_STREQ(table[kNvl]->name, "nvl");
  EXPECT_STREQ(table[kIb]->name, "ib");
  EXPECT_STREQ(table[kSocket]->name, "socket");
  std::vector<std::vector<int>> choice;
  std::string error;
  ASSERT_TRUE(choose(table, onHosts({"a", "a", "b", "b", "a"}), "", choice, error)) << error;
  const int S = kShm, N = kSocket;
  EXPECT_EQ(choice, (std::vector<std::vector<int>>{{-1, S, N, N, S},
                                                   {S, -1, N, N, S},
                                                   {N, N, -1, S, N},
                                                   {N, N, S, -1, N},
                                                   {S, S, N, N, -1}}));
}

TEST(PeerTransports, FirstTransportOfTheTableThatCanWins) {
  std::vector<std::vector<int>> choice;
  std::string error;
  // One that can join nobody is passed over.
  ASSERT_TRUE(choose({&kNever, &shmTransport, &socketTransport}, onHosts({"a", "a", "b"}), "",
                     choice, error))
      << error;
  EXPECT_EQ(choice, (std::vector<std::vector<int>>{{-1, 1, 2}, {1, -1, 2}, {2, 2, -1}}));
  // A network transport first takes every pair.
  ASSERT_TRUE(choose({&socketTransport, &shmTransport}, onHosts({"a", "a"}), "", choice, error));
  EXPECT_EQ(choice, (std::vector<std::vector<int>>{{-1, 0}, {0, -1}}));
  // With none that can, the pair is named.
  EXPECT_FALSE(choose({&kNever}, onHosts({"a", "b"}), "", choice, error));
  EXPECT_EQ(error, "no transport can join rank 0 (host a) and rank 1 (host b)");
}

TEST(PeerTransports, TheEnvironmentForcesOneForEveryPair) {
  const std::vector<const TransportKind *> &table = transportTable();
  std::vector<std::vector<int>> choice;
  std::string error;
  ASSERT_TRUE(choose(table, onHosts({"a", "a", "b"}), "socket", choice, error)) << error;
  EXPECT_EQ(choice, (std::vector<std::vector<int>>{
                        {-1, kSocket, kSocket}, {kSocket, -1, kSocket}, {kSocket, kSocket, -1}}));
  ASSERT_TRUE(choose(table, onHosts({"a", "a"}), "shm", choice, error)) << error;
  EXPECT_EQ(choice, (std::vector<std::vector<int>>{{-1, 0}, {0, -1}}));
  // Forcing what cannot join a pair fails at init, naming the pair.
  EXPECT_FALSE(choose(table, onHosts({"a", "a", "b"}), "shm", choice, error));
  EXPECT_EQ(error, "COLL_TRANSPORT=shm cannot join rank 0 (host a) and rank 2 (host b)");
  EXPECT_FALSE(choose(table, onHosts({"a"}), "verbs", choice, error));
  EXPECT_EQ(error, "COLL_TRANSPORT='verbs': expected shm or nvl or ib or socket (or unset, to "
                   "choose per pair of ranks)");
}

TEST(PeerTransports, IbBetweenHostsWhereBothRanksOpenAnRdmaDevice) {
  const std::vector<const TransportKind *> &table = transportTable();
  std::vector<PeerInfo> ranks = {{"a", "mlx5_0:1", ""},
                                 {"b", "mlx5_1:1", ""},
                                 {"b", "", "no RDMA device: libibverbs sees none"}};
  std::vector<std::vector<int>> choice;
  std::string error;
  ASSERT_TRUE(choose(table, ranks, "", choice, error)) << error;
  const int S = kShm, I = kIb, N = kSocket;
  EXPECT_EQ(choice, (std::vector<std::vector<int>>{{-1, I, N}, {I, -1, S}, {N, S, -1}}));
  // Forced, it fails at init, saying why.
  EXPECT_FALSE(choose(table, ranks, "ib", choice, error));
  EXPECT_EQ(error, "COLL_TRANSPORT=ib cannot join rank 0 (host a) and rank 2 (host b): no RDMA "
                   "device: libibverbs sees none");
}

TEST(PeerTransports, NvlBetweenHostsOfOneNvlinkDomain) {
  const std::vector<const TransportKind *> &table = transportTable();
  std::vector<PeerInfo> ranks = {{"a", "", "", "rack1"},
                                 {"b", "", "", "rack1"},
                                 {"c", "mlx5_0:1", "", "rack2"},
                                 {"b", "mlx5_0:1", "", "rack1"},
                                 {"d", "", "", ""}};
  std::vector<std::vector<int>> choice;
  std::string error;
  ASSERT_TRUE(choose(table, ranks, "", choice, error)) << error;
  const int S = kShm, V = kNvl, I = kIb, N = kSocket;
  EXPECT_EQ(choice, (std::vector<std::vector<int>>{{-1, V, N, V, N},
                                                   {V, -1, N, S, N},
                                                   {N, N, -1, I, N},
                                                   {V, S, I, -1, N},
                                                   {N, N, N, N, -1}}));
  EXPECT_FALSE(choose(table, ranks, "nvl", choice, error));
  EXPECT_EQ(error, "COLL_TRANSPORT=nvl cannot join rank 0 (host a) and rank 2 (host c): their "
                   "NVLink domains differ ('rack1', 'rack2')");
}

TEST(PeerTransports, ThisMachineIsOneHost) {
  PeerInfo a = localPeerInfo(), b = localPeerInfo();
  EXPECT_FALSE(a.host.empty());
  EXPECT_EQ(a.host, b.host);
  EXPECT_TRUE(shmTransport.canConnect(a, b));
}

//===----------------------------------------------------------------------===//
// A group on two (claimed) hosts
//===----------------------------------------------------------------------===//

namespace {

template <typename F> void onRanks(int n, F fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back(fn, r);
  for (std::thread &t : threads)
    t.join();
}

// Ranks 0 and 1 on host "a", 2 and 3 on host "b".
// Ranks 0-1 on host a, 2-3 on b, all in NVLink domain `nvlink` if given.
std::vector<collComm_t> initOnTwoHosts(const std::string &nvlink = "") {
  collUniqueId id;
  EXPECT_EQ(collGetUniqueId(&id), collSuccess) << collGetLastError(nullptr);
  std::vector<collComm_t> comms(4, nullptr);
  std::vector<collResult_t> res(4);
  onRanks(4, [&](int r) {
    res[r] = initComm(&comms[r], 4, id, r, PeerInfo{r < 2 ? "a" : "b", "", "", nvlink});
  });
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(res[r], collSuccess) << "rank " << r << ": " << collGetLastError(nullptr);
  return comms;
}

void destroy(std::vector<collComm_t> &comms) {
  for (collComm_t c : comms)
    if (c) {
      EXPECT_EQ(collCommDestroy(c), collSuccess);
    }
}

// Ring allreduce on four ranks, one threadblock each: reduce-scatter, then
// all-gather, chunk r + 1 finished on rank r.
COLLC_KERNEL(ringKernel) {
  collc::Block b(COLLC_BLOCK_ARGS);
  const int r = COLLC_BLOCK_ARGS->rank, n = COLLC_BLOCK_ARGS->nranks;
  auto chunk = [n](int c) { return ((c % n) + n) % n; };
  while (b.nextLoop()) {
    b.send(collc::in(chunk(r)));
    for (int s = 1; s < n - 1; ++s)
      b.recvReduceSend(collc::in(chunk(r - s)));
    b.recvReduceCopySend(collc::in(chunk(r + 1)), collc::out(chunk(r + 1)));
    for (int s = 1; s < n - 1; ++s)
      b.recvCopySend(collc::out(chunk(r + 1 - s)));
    b.recv(collc::out(chunk(r + 2)));
  }
}

struct RingAlgorithm {
  RingAlgorithm(int32_t protocol, int32_t flags = 0) {
    for (int r = 0; r < 4; ++r)
      tbs[r] = {r, 0, (r + 3) % 4, (r + 1) % 4, 0, protocol, flags, 2 * 4 - 1};
    plan.name = "ring";
    plan.collective = collc::kAllReduce;
    plan.ranks = 4;
    plan.chunks = 4;
    plan.root = -1;
    plan.maxBytes = INT64_MAX;
    plan.protocol = protocol;
    plan.slots = 2;
    plan.widest = 1;
    plan.numThreadblocks = 4;
    plan.threadblocks = tbs;
    plan.hostKernel = &ringKernel;
    alg = {"ring", "PeerTransportsTest.cpp", 1, &plan};
  }
  collc::ThreadblockDesc tbs[4];
  collc::PlanDesc plan{};
  collc::AlgorithmDesc alg;
};

// Runs `ring` on the four ranks over `count` int32s and checks the sums,
// bit-exact on every rank.
void expectSums(std::vector<collComm_t> &comms, RingAlgorithm &ring, size_t count) {
  std::vector<std::vector<int32_t>> in(4, std::vector<int32_t>(count)), out = in;
  std::vector<int32_t> want(count, 0);
  for (int r = 0; r < 4; ++r)
    for (size_t i = 0; i < count; ++i) {
      in[r][i] = int32_t(i * 2654435761u + r * 40503u);
      want[i] = int32_t(uint32_t(want[i]) + uint32_t(in[r][i]));
    }
  std::vector<collResult_t> res(4);
  onRanks(4, [&](int r) {
    res[r] = collLaunch(comms[r], &ring.alg, in[r].data(), out[r].data(), count, collInt32, collSum,
                        nullptr);
  });
  for (int r = 0; r < 4; ++r) {
    ASSERT_EQ(res[r], collSuccess) << "rank " << r << ": " << collGetLastError(comms[r]);
    EXPECT_EQ(out[r], want) << "rank " << r;
  }
}

} // namespace

TEST(PeerTransports, RanksOnTwoHostsMixShmAndSocket) {
  if (!Env::get().transport.empty())
    GTEST_SKIP() << "COLL_TRANSPORT forces one transport";
  std::vector<collComm_t> comms = initOnTwoHosts();
  ASSERT_EQ(comms.size(), 4u);
  for (collComm_t c : comms)
    ASSERT_NE(c, nullptr);
  const char *expected[4][4] = {{"self", "shm", "socket", "socket"},
                                {"shm", "self", "socket", "socket"},
                                {"socket", "socket", "self", "shm"},
                                {"socket", "socket", "shm", "self"}};
  for (int r = 0; r < 4; ++r)
    for (int p = 0; p < 4; ++p)
      EXPECT_STREQ(comms[r]->transport->nameOf(p), expected[r][p]) << r << " to " << p;
  EXPECT_EQ(comms[0]->transport->describe(), "shm to 1, socket to 2-3");
  EXPECT_EQ(comms[2]->transport->describe(), "shm to 3, socket to 0-1");
  EXPECT_FALSE(comms[0]->transport->mapsEveryRank());

  // A window maps the peers of the same host only.
  std::vector<Window> windows(4);
  onRanks(4, [&](int r) {
    std::string error;
    ASSERT_EQ(comms[r]->transport->exchangeWindow(5000, windows[r], error), collSuccess) << error;
  });
  for (int r = 0; r < 4; ++r)
    for (int p = 0; p < 4; ++p)
      EXPECT_EQ(windows[r].base[p] != nullptr, r / 2 == p / 2) << r << " maps " << p;
  for (int r = 0; r < 4; ++r)
    comms[r]->transport->release(windows[r]);

  // The ring crosses hosts twice (1 to 2, 3 to 0): every protocol, several
  // launches, a count that leaves a short last loop, bit-exact sums.
  for (int32_t protocol : {collc::kSimple, collc::kLL, collc::kLL128}) {
    RingAlgorithm ring(protocol);
    for (size_t count : {size_t(1), size_t(100003), size_t(4096)}) {
      SCOPED_TRACE("protocol " + std::to_string(protocol) + ", count " + std::to_string(count));
      expectSums(comms, ring, count);
    }
  }

  // Peer steps need every rank's buffers mapped everywhere: refused here,
  // on every rank alike.
  RingAlgorithm peers(collc::kSimple, collc::kTbPeerSteps);
  std::vector<int32_t> buf(64);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(collLaunch(comms[r], &peers.alg, buf.data(), buf.data(), buf.size(), collInt32,
                         collSum, nullptr),
              collInvalidUsage);
    std::string why = collGetLastError(comms[r]);
    EXPECT_NE(why.find("use the shm transport between every pair of ranks"), std::string::npos)
        << why;
  }
  destroy(comms);
}

// The same two hosts in one NVLink domain: nvl joins them, every rank maps
// every other's windows through fabric handles (the emulation's), and the
// ring and a plan of peer steps run bit-exact across them.
TEST(PeerTransports, RanksOfOneNvlinkDomainMapEachOther) {
  if (!Env::get().transport.empty())
    GTEST_SKIP() << "COLL_TRANSPORT forces one transport";
  std::vector<collComm_t> comms = initOnTwoHosts("rack1");
  ASSERT_EQ(comms.size(), 4u);
  for (collComm_t c : comms)
    ASSERT_NE(c, nullptr);
  EXPECT_EQ(comms[0]->transport->describe(), "shm to 1, nvl to 2-3");
  EXPECT_EQ(comms[3]->transport->describe(), "shm to 2, nvl to 0-1");
  EXPECT_TRUE(comms[0]->transport->mapsEveryRank());
  EXPECT_FALSE(comms[0]->transport->passesFdsEverywhere());

  std::vector<Window> windows(4);
  onRanks(4, [&](int r) {
    std::string error;
    ASSERT_EQ(comms[r]->transport->exchangeWindow(5000, windows[r], error), collSuccess) << error;
    int32_t stamp = 1000 + r;
    memcpy(windows[r].base[r], &stamp, sizeof stamp);
  });
  for (int r = 0; r < 4; ++r)
    for (int p = 0; p < 4; ++p) {
      ASSERT_NE(windows[r].base[p], nullptr) << r << " maps " << p;
      int32_t stamp;
      memcpy(&stamp, windows[r].base[p], sizeof stamp);
      EXPECT_EQ(stamp, 1000 + p) << r << " sees " << p << "'s memory";
    }
  for (int r = 0; r < 4; ++r)
    comms[r]->transport->release(windows[r]);

  for (int32_t flags : {0, int32_t(collc::kTbPeerSteps)}) {
    SCOPED_TRACE("flags " + std::to_string(flags));
    RingAlgorithm ring(collc::kSimple, flags);
    expectSums(comms, ring, 100003);
  }
  destroy(comms);
}
