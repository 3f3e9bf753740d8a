//===- TopologyTest.cpp - Presets, JSON and the cost model ----------------===//
#include "lib/Topology/CostModel.h"
#include "lib/Topology/Topology.h"

#include <gtest/gtest.h>

using namespace coll;

namespace {
Topology preset(const char *spec) {
  llvm::Expected<Topology> t = presetTopology(spec);
  EXPECT_TRUE(bool(t)) << (t ? "" : llvm::toString(t.takeError()));
  return t ? std::move(*t) : Topology();
}
} // namespace

TEST(Topology, HgxNodesAreNVLinkInsideAndRailsAcross) {
  Topology t = preset("hgx-h100:nodes=2");
  ASSERT_EQ(t.size(), 16);
  EXPECT_EQ(t.linkClass(0, 7), LinkClass::NVLink);
  EXPECT_EQ(t.linkClass(0, 8), LinkClass::Net);
  EXPECT_TRUE(t.sameRail(3, 11));
  EXPECT_FALSE(t.sameRail(3, 12));
  EXPECT_DOUBLE_EQ(t.bandwidth(0, 1), 450);
  EXPECT_DOUBLE_EQ(t.bandwidth(0, 8), 50);
  EXPECT_TRUE(t.allowsLL128(0, 1));
  EXPECT_FALSE(t.allowsLL128(0, 8));
  // Crossing rails costs a second (spine) hop.
  EXPECT_DOUBLE_EQ(t.latency(3, 12, 0), 2 * t.latency(3, 11, 0));
}

TEST(Topology, Nvl72IsOneNVLinkDomainAcrossTrays) {
  Topology t = preset("gb200-nvl72");
  ASSERT_EQ(t.size(), 72);
  EXPECT_EQ(t.linkClass(0, 71), LinkClass::NVLink);
  EXPECT_DOUBLE_EQ(t.bandwidth(0, 71), 900);
}

TEST(Topology, PcieHasNoNVLink) {
  Topology t = preset("pcie-8");
  EXPECT_EQ(t.linkClass(0, 1), LinkClass::PCIe);
  EXPECT_FALSE(t.allowsLL128(0, 1));
}

TEST(Topology, JsonErrorsNamePositionOrPath) {
  llvm::Expected<Topology> bad = parseTopology("{\n  \"nodes\": 2,\n  \"x\" 1\n}");
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("[3:7"), std::string::npos);
  llvm::Expected<Topology> value = parseTopology("{\"gpusPerNode\": -1}");
  ASSERT_FALSE(bool(value));
  EXPECT_EQ(llvm::toString(value.takeError()),
            "at $.gpusPerNode: expected an integer in 1 .. 1024");
}

// A bandwidth must be above 0 (transfer times divide by it), and the
// message says so; minima print as given, not rounded to two decimals.
TEST(Topology, JsonMinimaReadAsTheyAre) {
  auto errorOf = [](llvm::StringRef json) {
    llvm::Expected<Topology> t = parseTopology(json);
    return t ? std::string("accepted") : llvm::toString(t.takeError());
  };
  EXPECT_EQ(errorOf(R"({"nvlink": {"bandwidth": 0}})"),
            "at $.nvlink.bandwidth: expected a finite number > 0");
  EXPECT_EQ(errorOf(R"({"protocols": {"LL": {"maxBandwidth": 0}}})"),
            "at $.protocols.LL.maxBandwidth: expected a finite number > 0");
  EXPECT_EQ(errorOf(R"({"protocols": {"LL": {"efficiency": 0}}})"),
            "at $.protocols.LL.efficiency: expected a finite number >= 0.001");
  EXPECT_EQ(errorOf(R"({"network": {"oversubscription": 0.5}})"),
            "at $.network.oversubscription: expected a finite number >= 1");
  EXPECT_EQ(errorOf(R"({"nvlink": {"bandwidth": 1e-6}})"), "accepted");
}

TEST(Topology, JsonGpuListDescribesScrambledNumbering) {
  llvm::Expected<Topology> t = parseTopology(
      R"({"nodes": 2, "gpusPerNode": 2, "gpus": [{"node": 0, "local": 0},
          {"node": 1, "local": 0}, {"node": 0, "local": 1}, {"node": 1, "local": 1}]})");
  ASSERT_TRUE(bool(t)) << llvm::toString(t.takeError());
  EXPECT_EQ(t->linkClass(0, 2), LinkClass::NVLink);
  EXPECT_EQ(t->linkClass(0, 1), LinkClass::Net);
  llvm::Expected<Topology> dup = parseTopology(
      R"({"nodes": 1, "gpusPerNode": 2, "gpus": [{"node": 0, "local": 1}, {"node": 0, "local": 1}]})");
  ASSERT_FALSE(bool(dup));
  EXPECT_EQ(llvm::toString(dup.takeError()),
            "at $.gpus[1]: two GPUs have the same node and local index");
}

TEST(CostModel, ConcurrentTransfersShareAPort) {
  Topology t = preset("hgx-h100:nodes=2");
  CostModel cost(t);
  double bytes = 450e3; // 1 µs at 450 GB/s
  double one = cost.roundTime({{0, 1, bytes}}, /*Simple*/ 0);
  EXPECT_NEAR(one, t.latency(0, 1, 0) + 1.0, 1e-9);
  // Two transfers out of GPU 0 share its port: twice the time on the wire.
  double two = cost.roundTime({{0, 1, bytes}, {0, 2, bytes}}, 0);
  EXPECT_NEAR(two, t.latency(0, 1, 0) + 2.0, 1e-9);
  // Disjoint pairs run in parallel.
  double apart = cost.roundTime({{0, 1, bytes}, {2, 3, bytes}}, 0);
  EXPECT_NEAR(apart, one, 1e-9);
  // LL carries half as much payload per byte on the wire (225 GB/s here),
  // capped over NVLink by NCCL's llMaxBw for Hopper, 141 GB/s (tuning.cc).
  double ll = cost.roundTime({{0, 1, bytes}}, /*LL*/ 1);
  EXPECT_NEAR(ll, t.latency(0, 1, 1) + bytes / 141e3, 1e-6);
}
