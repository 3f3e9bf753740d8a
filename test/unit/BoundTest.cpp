//===- BoundTest.cpp - Cut and latency bounds against hand and brute force ===//
#include "lib/Bound/Bound.h"
#include "lib/Bound/MaxFlow.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>

using namespace coll;

namespace {

Topology topology(const char *spec) {
  llvm::Expected<Topology> t = spec[0] == '{' ? parseTopology(spec) : presetTopology(spec);
  EXPECT_TRUE(bool(t)) << (t ? "" : llvm::toString(t.takeError()));
  return t ? std::move(*t) : Topology();
}

double ratio(const Cut &c) { return c.ranksInside / c.bandwidthGBps; }

/// max over every S with a rank outside of |S ∩ ranks| / B+(S).
double bruteForceRatio(const SwitchGraph &g) {
  double best = 0;
  for (uint32_t mask = 1; mask < (1u << g.size()); ++mask) {
    std::vector<bool> inside(g.size());
    int in = 0;
    for (int v = 0; v < g.size(); ++v) {
      inside[v] = mask >> v & 1;
      in += v < g.ranks && inside[v];
    }
    if (in == 0 || in == g.ranks)
      continue;
    best = std::max(best, in / g.leaving(inside));
  }
  return best;
}

/// N GPUs on one switch, B GB/s each way per GPU.
SwitchGraph star(int n, double b) {
  SwitchGraph g;
  g.ranks = n;
  for (int r = 0; r < n; ++r)
    g.vertices.push_back({VertexKind::Gpu, r});
  g.vertices.push_back({VertexKind::NVSwitch, -1});
  for (int r = 0; r < n; ++r) {
    g.arcs.push_back({r, n, b, {}});
    g.arcs.push_back({n, r, b, {}});
  }
  return g;
}

constexpr double kGiB = 1 << 30;

/// computeBound, failing the test where it gives no bound.
CollectiveBound finiteBound(Collective c, const Topology &t, int ranks, double bytes) {
  llvm::Expected<CollectiveBound> b = computeBound(c, t, ranks, bytes);
  EXPECT_TRUE(bool(b)) << (b ? "" : llvm::toString(b.takeError()));
  return b ? *b : CollectiveBound();
}

} // namespace

TEST(Bound, MaxFlowOfADiamond) {
  FlowNetwork net(4);
  net.addArc(0, 1, 3);
  net.addArc(0, 2, 2);
  net.addArc(1, 2, 5);
  net.addArc(1, 3, 2);
  net.addArc(2, 3, 3);
  EXPECT_DOUBLE_EQ(net.maxFlow(0, 3), 5);
  std::vector<bool> side = net.sourceSide(0);
  EXPECT_TRUE(side[0]);
  EXPECT_FALSE(side[3]);
}

// Three ranks fed at 1e-3 from the source, joined to one NIC by arcs of
// 1e12 each way (a GPU's unbounded path to its NIC), the NIC to the sink:
// a tolerance of the widest arc x 1e-12 (= 1) saw no path at all, and
// its cut held no rank, the 0/0 behind a NaN bound.
TEST(Bound, MaxFlowMixesHugeAndTinyCapacities) {
  FlowNetwork net(6);
  int s = 0, nic = 4, t = 5;
  std::vector<int> feeds;
  for (int r = 1; r <= 3; ++r) {
    feeds.push_back(net.addArc(s, r, 1e-3));
    net.addArc(r, nic, 1e12);
    net.addArc(nic, r, 1e12);
  }
  int uplink = net.addArc(nic, t, 1);
  // The feeds are the minimum cut.
  EXPECT_NEAR(net.maxFlow(s, t), 3e-3, 1e-15);
  EXPECT_EQ(net.sourceSide(s), (std::vector<bool>{true, false, false, false, false, false}));
  // The NIC's uplink, narrower still than the feeds, is.
  net.setCapacity(uplink, 2e-4);
  EXPECT_NEAR(net.maxFlow(s, t), 2e-4, 1e-16);
  EXPECT_EQ(net.sourceSide(s), (std::vector<bool>{true, true, true, true, true, false}));
  // And a feed of 1e-9 still counts, beside arcs 21 orders wider.
  for (int f : feeds)
    net.setCapacity(f, 1e-9);
  EXPECT_NEAR(net.maxFlow(s, t), 3e-9, 1e-20);
}

// One switch: the tightest cut holds N-1 GPUs and the switch, and only the
// last GPU's link leaves it: all-gather >= (M/N) (N-1) / B.
TEST(Bound, StarCutIsAllButOneGpu) {
  SwitchGraph g = star(8, 100);
  Cut c = maxRatioCut(g);
  EXPECT_EQ(c.ranksInside, 7);
  EXPECT_DOUBLE_EQ(c.bandwidthGBps, 100);
  EXPECT_DOUBLE_EQ(ratio(c), bruteForceRatio(g));
}

TEST(Bound, HgxNodeMatchesTheRingFormula) {
  Topology t = topology("hgx-h100");
  CollectiveBound ag = finiteBound(Collective::allgather, t, 8, kGiB);
  EXPECT_NEAR(ag.bandwidthUs, kGiB / 8 * 7 / 450e3, 1e-6);
  // Its switches reduce and multicast (NVLS): M leaves and enters each GPU
  // once, not the ring's 2 (N-1)/N M.
  CollectiveBound ar = finiteBound(Collective::allreduce, t, 8, kGiB);
  EXPECT_NEAR(ar.bandwidthUs, kGiB / 450e3, 1e-6);
  CollectiveBound bc = finiteBound(Collective::broadcast, t, 8, kGiB);
  EXPECT_NEAR(bc.bandwidthUs, kGiB / 450e3, 1e-6);
  // LL: base 6.6 + 3 rounds x 0.6 per NVLink hop.
  EXPECT_EQ(ag.rounds, 3);
  EXPECT_EQ(ag.latencyProtocol, Protocol::LL);
  EXPECT_NEAR(ag.latencyUs, 6.6 + 3 * 0.6, 1e-9);
  EXPECT_NEAR(ag.fanoutLatencyUs, 6.6 + 0.6, 1e-9);
}

// Switches that only forward: allreduce is reduce-scatter then all-gather,
// twice the cut (the ring formula on one switch).
TEST(Bound, AllreduceWithoutMulticastIsTwiceAllGather) {
  Topology t = topology("dgx-a100");
  CollectiveBound ag = finiteBound(Collective::allgather, t, 8, kGiB);
  CollectiveBound ar = finiteBound(Collective::allreduce, t, 8, kGiB);
  EXPECT_NEAR(ar.bandwidthUs, 2 * ag.bandwidthUs, 1e-6);
  EXPECT_NEAR(ar.bandwidthUs, 2 * kGiB / 8 * 7 / 300e3, 1e-6);
}

// NVLS nodes across a network that neither reduces nor multicasts: M over
// one node's NICs on two nodes; on sixteen, the doubled cut around fifteen
// whole nodes, larger than M over the NICs.
TEST(Bound, NvlsNodesKeepTheNetworksDoubledCut) {
  CollectiveBound two = finiteBound(Collective::allreduce, topology("hgx-h100:nodes=2"), 16, kGiB);
  EXPECT_NEAR(two.bandwidthUs, kGiB / 400e3, 1e-6);
  CollectiveBound many =
      finiteBound(Collective::allreduce, topology("hgx-h100:nodes=16"), 128, kGiB);
  EXPECT_NEAR(many.bandwidthUs, 2 * kGiB / 128 * 120 / 400e3, 1e-6);
}

// Two nodes: a GPU takes 450 GB/s over NVLink and 50 over its NIC, so the
// cut around one GPU (15 shards in, 500 GB/s) beats the cut around one node
// (8 shards out over 8 NICs, 400 GB/s): 15/500 > 8/400.
TEST(Bound, TwoHgxNodesAreBoundByOneGpusIngress) {
  Topology t = topology("hgx-h100:nodes=2");
  CollectiveBound ag = finiteBound(Collective::allgather, t, 16, kGiB);
  EXPECT_NEAR(ag.bandwidthUs, kGiB / 16 * 15 / 500e3, 1e-6);
  // Farthest pair: NIC to the same rail, then NVLink: 2.7 + 0.6.
  EXPECT_NEAR(ag.fanoutLatencyUs, 6.6 + 3.3, 1e-9);
}

// From eight nodes on the NICs dominate: the cut of all but one node holds
// 56 shards that leave over 8 NICs, and 56/400 > 63/500.
TEST(Bound, EightHgxNodesAreBoundByTheNics) {
  Topology t = topology("hgx-h100:nodes=8");
  CollectiveBound ar = finiteBound(Collective::allreduce, t, 64, kGiB);
  EXPECT_NEAR(ar.bandwidthUs, 2 * kGiB / 64 * 56 / 400e3, 1e-6);
  EXPECT_NE(ar.cutDescription.find("56 of 64 GPUs (7 whole nodes); entering: 8 x network 50"),
            std::string::npos)
      << ar.cutDescription;
  // Alltoall: one node sends 8 x 56 shards over its 8 NICs.
  CollectiveBound a2a = finiteBound(Collective::alltoall, t, 64, kGiB);
  EXPECT_NEAR(a2a.bandwidthUs, kGiB / 64 * 8 * 56 / 400e3, 1e-6);
}

// Small machines whose every cut can be listed: the flow answer is the
// largest ratio of all.
TEST(Bound, SmallMachinesMatchBruteForce) {
  for (const char *spec :
       {R"({"nodes": 2, "gpusPerNode": 2, "network": {"nicsPerNode": 2}})",
        R"({"nodes": 2, "gpusPerNode": 2, "network": {"nicsPerNode": 2, "oversubscription": 4}})",
        R"({"nodes": 2, "gpusPerNode": 2, "nvlink": {"kind": "none"},
            "network": {"nicsPerNode": 1, "bandwidth": 25}})",
        R"({"nodes": 3, "gpusPerNode": 2, "nvlink": {"bandwidth": 40},
            "network": {"nicsPerNode": 1}})"}) {
    Topology t = topology(spec);
    SwitchGraph g = buildSwitchGraph(t, t.size());
    ASSERT_LE(g.size(), 20) << spec;
    EXPECT_NEAR(ratio(maxRatioCut(g)), bruteForceRatio(g), 1e-12) << spec;
  }
}

// Random directed capacities, no symmetry: flow against brute force, both
// ways round.
TEST(Bound, RandomGraphsMatchBruteForce) {
  std::mt19937 rng(13);
  for (int trial = 0; trial < 40; ++trial) {
    SwitchGraph g;
    g.ranks = 2 + trial % 4;
    int n = g.ranks + 1 + trial % 5;
    for (int v = 0; v < n; ++v)
      g.vertices.push_back({v < g.ranks ? VertexKind::Gpu : VertexKind::NVSwitch, v});
    for (int u = 0; u < n; ++u)
      for (int v = 0; v < n; ++v)
        if (u != v && rng() % 3 != 0)
          g.arcs.push_back({u, v, double(1 + rng() % 9), {}});
    for (const SwitchGraph &h : {g, g.reversed()}) {
      if (bruteForceRatio(h) == INFINITY)
        continue;
      EXPECT_NEAR(ratio(maxRatioCut(h)), bruteForceRatio(h), 1e-12) << "trial " << trial;
    }
  }
}

TEST(Bound, InterchangeableNodesShareRepresentatives) {
  Topology t = topology("hgx-h100:nodes=3");
  SwitchGraph full = buildSwitchGraph(t, 24);
  EXPECT_EQ(full.representativeRanks(), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  // A partial last node is a class of its own; a kept node stays whole.
  SwitchGraph partial = buildSwitchGraph(t, 20);
  std::vector<int> reps = partial.representativeRanks(1);
  EXPECT_EQ(reps.size(), 20u);
}

// Well under a second on 128 nodes: one flow per rank of one node, not of
// every node.
TEST(Bound, ThousandRanksAreQuick) {
  Topology t = topology("hgx-h100:nodes=128");
  auto start = std::chrono::steady_clock::now();
  CollectiveBound ar = finiteBound(Collective::allreduce, t, 1024, kGiB);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NEAR(ar.bandwidthUs, 2 * kGiB / 1024 * 1016 / 400e3, 1e-6);
  EXPECT_EQ(ar.rounds, 10);
  EXPECT_LT(seconds, 2.0);
}
