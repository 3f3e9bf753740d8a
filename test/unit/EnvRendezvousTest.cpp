//===- EnvRendezvousTest.cpp - collCommInitEnv from torchrun's variables --===//
//
// Ranks run as threads, each with its own variables, as the processes that
// torchrun starts would have them.
//
//===----------------------------------------------------------------------===//
#include "collrt.h"
#include "src/Comm.h"
#include "support/EnvRendezvous.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

using Vars = std::map<std::string, std::string>;

namespace {

collrt::Lookup lookup(const Vars &vars) {
  return [&vars](const char *name) -> const char * {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

// A TCP port on the loopback that nobody listens on now.
int freePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

Vars torchrun(int rank, int world, int masterPort) {
  return {{"RANK", std::to_string(rank)},
          {"WORLD_SIZE", std::to_string(world)},
          {"MASTER_ADDR", "127.0.0.1"},
          {"MASTER_PORT", std::to_string(masterPort)}};
}

} // namespace

TEST(EnvRendezvous, TorchrunVariablesMakeOneGroup) {
  const int n = 3, port = freePort(); // collrt takes MASTER_PORT + 1
  std::vector<Vars> vars;
  for (int r = 0; r < n; ++r)
    vars.push_back(torchrun(r, n, port - 1));
  std::vector<collComm_t> comms(n, nullptr);
  std::vector<collResult_t> res(n);
  std::vector<std::thread> ranks;
  for (int r = 0; r < n; ++r)
    ranks.emplace_back([&, r] {
      res[r] = collrt::initFromVars(&comms[r], lookup(vars[r]), collrt::localPeerInfo());
    });
  for (std::thread &t : ranks)
    t.join();
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(res[r], collSuccess) << "rank " << r << ": " << collGetLastError(nullptr);
    int count = -1, rank = -1;
    EXPECT_EQ(collCommCount(comms[r], &count), collSuccess);
    EXPECT_EQ(collCommUserRank(comms[r], &rank), collSuccess);
    EXPECT_EQ(count, n);
    EXPECT_EQ(rank, r);
  }
  for (collComm_t c : comms)
    EXPECT_EQ(collCommDestroy(c), collSuccess);
}

TEST(EnvRendezvous, EveryRankComputesTheSameId) {
  collrt::Rendezvous a, b, other;
  std::string error;
  Vars va = torchrun(0, 4, 29500), vb = torchrun(3, 4, 29500), vo = torchrun(0, 4, 29500);
  vo["TORCHELASTIC_RUN_ID"] = "another-job";
  ASSERT_EQ(collrt::rendezvousFromVars(lookup(va), a, error), collSuccess) << error;
  ASSERT_EQ(collrt::rendezvousFromVars(lookup(vb), b, error), collSuccess) << error;
  ASSERT_EQ(collrt::rendezvousFromVars(lookup(vo), other, error), collSuccess) << error;
  EXPECT_EQ(a.rank, 0);
  EXPECT_EQ(b.rank, 3);
  EXPECT_EQ(a.nranks, 4);
  EXPECT_EQ(memcmp(&a.id, &b.id, sizeof a.id), 0);
  EXPECT_EQ(ntohs(a.id.port), 29501);
  EXPECT_EQ(a.id.addr, htonl(INADDR_LOOPBACK));
  // Another job on the same address is another group, with another secret.
  EXPECT_NE(a.id.magic, other.id.magic);
  EXPECT_NE(memcmp(a.id.secret, other.id.secret, sizeof a.id.secret), 0);
  // COLL_SECRET replaces the secret, and COLL_BOOTSTRAP_PORT the port.
  Vars vs = va;
  vs["COLL_SECRET"] = "s3";
  vs["COLL_BOOTSTRAP_PORT"] = "4000";
  collrt::Rendezvous s;
  ASSERT_EQ(collrt::rendezvousFromVars(lookup(vs), s, error), collSuccess) << error;
  EXPECT_NE(memcmp(a.id.secret, s.id.secret, sizeof a.id.secret), 0);
  EXPECT_EQ(ntohs(s.id.port), 4000);
}

// A secret computed from the variables is one anyone who knows them can
// compute too: that is said, unless COLL_SECRET gives one.
TEST(EnvRendezvous, WarnsOfASecretFromPublicValues) {
  collrt::Rendezvous meet;
  std::string error;
  Vars vars = torchrun(1, 4, 29500);
  ASSERT_EQ(collrt::rendezvousFromVars(lookup(vars), meet, error), collSuccess) << error;
  EXPECT_EQ(meet.warning.rfind("COLL_SECRET is unset, so the group's secret comes from", 0), 0u)
      << meet.warning;
  vars["COLL_SECRET"] = "4f1c9a";
  ASSERT_EQ(collrt::rendezvousFromVars(lookup(vars), meet, error), collSuccess) << error;
  EXPECT_EQ(meet.warning, "");
}

TEST(EnvRendezvous, BadVariablesNameThemselves) {
  struct Case {
    const char *var, *value, *message;
  } cases[] = {
      {"WORLD_SIZE", nullptr, "WORLD_SIZE must be"},
      {"WORLD_SIZE", "0", "WORLD_SIZE must be"},
      {"RANK", "4", "RANK must be a number in 0 .. WORLD_SIZE - 1 = 3"},
      {"RANK", "x", "RANK must be"},
      {"MASTER_ADDR", "", "MASTER_ADDR must name"},
      {"MASTER_ADDR", "no-such-host.invalid", "MASTER_ADDR=no-such-host.invalid"},
      {"MASTER_PORT", "65535", "MASTER_PORT must be a port"},
      {"COLL_BOOTSTRAP_PORT", "70000", "COLL_BOOTSTRAP_PORT must be a port"},
  };
  for (const Case &c : cases) {
    Vars vars = torchrun(0, 4, 29500);
    if (c.value)
      vars[c.var] = c.value;
    else
      vars.erase(c.var);
    collComm_t comm = nullptr;
    EXPECT_EQ(collrt::initFromVars(&comm, lookup(vars), collrt::localPeerInfo()),
              collInvalidArgument)
        << c.var;
    EXPECT_NE(std::string(collGetLastError(nullptr)).find(c.message), std::string::npos)
        << c.var << ": " << collGetLastError(nullptr);
    EXPECT_EQ(comm, nullptr);
  }
}
