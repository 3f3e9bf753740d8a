//===- SimulatorTest.cpp - The simulator against hand-derived times -------===//
//
// Plans built by hand (where the expected time follows from the model's
// rules) and plans compiled from the examples (where it must respect the
// lower bound and NCCL's latency formula), plus NCCL's model itself.
//
//===----------------------------------------------------------------------===//
#include "lib/Frontend/Elaborate.h"
#include "lib/Lowering/Pipelines.h"
#include "lib/Bound/Bound.h"
#include "lib/Synthesis/Generators.h"
#include "lib/Sim/NcclModel.h"
#include "lib/Sim/SimFold.h"
#include "lib/Sim/SimPlan.h"
#include "lib/Sim/Simulator.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/SourceMgr.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>

using namespace coll;

namespace {

Topology topology(const char *spec) {
  llvm::Expected<Topology> t = presetTopology(spec);
  EXPECT_TRUE(bool(t)) << (t ? "" : llvm::toString(t.takeError()));
  return t ? std::move(*t) : Topology();
}

/// computeBound, failing the test where it gives no bound.
CollectiveBound finiteBound(Collective c, const Topology &t, int ranks, double bytes) {
  llvm::Expected<CollectiveBound> b = computeBound(c, t, ranks, bytes);
  EXPECT_TRUE(bool(b)) << (b ? "" : llvm::toString(b.takeError()));
  return b ? *b : CollectiveBound();
}

double simulated(const SimPlan &plan, const Topology &topo, double bytes,
                 const SimOptions &options = {}) {
  llvm::Expected<SimResult> r = simulate(plan, topo, bytes, options);
  EXPECT_TRUE(bool(r)) << (r ? "" : llvm::toString(r.takeError()));
  return r ? r->micros : 0;
}

/// `t` with threadblocks so fast that only the links limit a flow.
Topology linksOnly(Topology t) {
  t.threadblockGBps = {1e6, 1e6, 1e6};
  return t;
}

/// Plans by hand: threadblocks of steps, then connections.
struct PlanBuilder {
  SimPlan plan;
  enum Kind { Send, Recv, RecvSend };

  explicit PlanBuilder(int ranks, int64_t chunks = 1) {
    plan.name = "test";
    plan.ranks = ranks;
    plan.inChunks = plan.outChunks = chunks;
    for (int r = 0; r < ranks; ++r)
      plan.gpus.push_back(r);
  }
  int threadblock(int rank, Protocol p, const std::vector<Kind> &kinds, bool direct = true) {
    SimPlan::Threadblock tb;
    tb.rank = rank;
    tb.protocol = int(p);
    tb.directRecv = direct;
    tb.stepBegin = int32_t(plan.steps.size());
    for (Kind k : kinds) {
      SimPlan::Step s;
      s.receives = k != Send;
      s.sends = k != Recv;
      if (s.receives)
        s.recvOrdinal = tb.recvsPerLoop++;
      if (s.sends)
        s.sendOrdinal = tb.sendsPerLoop++;
      plan.steps.push_back(s);
    }
    tb.stepEnd = int32_t(plan.steps.size());
    plan.threadblocks.push_back(tb);
    return int(plan.threadblocks.size()) - 1;
  }
  void connect(int sender, int receiver) {
    int c = int(plan.connections.size());
    plan.connections.push_back({sender, receiver});
    plan.threadblocks[sender].sendConn = c;
    plan.threadblocks[receiver].recvConn = c;
  }
};

/// One rank's threadblock of a ring allreduce on n ranks: a send, 2n - 3
/// receive-and-sends, a receive.
std::vector<PlanBuilder::Kind> ringKinds(int n) {
  using K = PlanBuilder::Kind;
  std::vector<K> kinds = {K::Send};
  kinds.insert(kinds.end(), 2 * n - 3, K::RecvSend);
  kinds.push_back(K::Recv);
  return kinds;
}

/// NCCL's ring allreduce on n ranks (runRing), `channels` rings of one
/// threadblock per rank each, every ring with its share of the chunks.
SimPlan ringAllreduce(int n, Protocol p, int channels = 1) {
  PlanBuilder b(n, int64_t(n) * channels);
  const std::vector<PlanBuilder::Kind> kinds = ringKinds(n);
  for (int c = 0; c < channels; ++c) {
    for (int r = 0; r < n; ++r)
      b.threadblock(r, p, kinds);
    for (int r = 0; r < n; ++r)
      b.connect(c * n + r, c * n + (r + 1) % n);
  }
  b.plan.collective = Collective::allreduce;
  return b.plan;
}

//===----------------------------------------------------------------------===//
// Plans by hand
//===----------------------------------------------------------------------===//

TEST(Simulator, OneTransferIsLatencyPlusBytesOverBandwidth) {
  Topology t = topology("hgx-h100");
  PlanBuilder b(2);
  b.connect(b.threadblock(0, Protocol::Simple, {PlanBuilder::Send}),
            b.threadblock(1, Protocol::Simple, {PlanBuilder::Recv}));
  double bytes = 256 * 1024; // one loop: less than a Simple slot
  // NCCL's Simple ring latencies (tuning.cc: base 8.4 us, 3.4 us an NVLink
  // hop) and NVLink 4 as NCCL counts it: 18 links of 20.6 GB/s (topo.h).
  double expected = 8.4 + 3.4 + bytes / (18 * 20.6 * 1e3);
  EXPECT_NEAR(simulated(b.plan, linksOnly(t), bytes), expected, 1e-9 * expected);
  // A threadblock, not the link, limits one channel by default: 65 GB/s,
  // NCCL's smBw before sm100 (sym_kernels.cc).
  EXPECT_NEAR(simulated(b.plan, t, bytes), 8.4 + 3.4 + bytes / (65 * 1e3), 1e-6);
}

TEST(Simulator, TwoTransfersIntoOnePortShareIt) {
  Topology t = topology("hgx-h100");
  double bytes = 256 * 1024, alone = bytes / (18 * 20.6 * 1e3);
  PlanBuilder one(3), two(3);
  one.connect(one.threadblock(0, Protocol::Simple, {PlanBuilder::Send}),
              one.threadblock(2, Protocol::Simple, {PlanBuilder::Recv}));
  for (int from : {0, 1})
    two.connect(two.threadblock(from, Protocol::Simple, {PlanBuilder::Send}),
                two.threadblock(2, Protocol::Simple, {PlanBuilder::Recv}));
  double t1 = simulated(one.plan, linksOnly(t), bytes);
  double t2 = simulated(two.plan, linksOnly(t), bytes);
  // Each gets half of rank 2's NVLink port: both finish at twice the time.
  EXPECT_NEAR(t2 - t1, alone, 1e-9 * t2);
}

TEST(Simulator, TransfersShareOnlyTheLinksTheyCross) {
  Topology t = topology("hgx-h100:nodes=2");
  // Rank 0 sends to rank 1 over NVLink and to rank 8 over its NIC: no
  // shared port, so each goes at its own link's rate.
  PlanBuilder b(16);
  b.connect(b.threadblock(0, Protocol::Simple, {PlanBuilder::Send}),
            b.threadblock(1, Protocol::Simple, {PlanBuilder::Recv}));
  b.connect(b.threadblock(0, Protocol::Simple, {PlanBuilder::Send}),
            b.threadblock(8, Protocol::Simple, {PlanBuilder::Recv}));
  double bytes = 256 * 1024;
  // A ConnectX-7 NIC: 400 Gb/s, 50 GB/s; NCCL's Simple network hop 14 us.
  double net = 14.0 + bytes / (50 * 1e3);
  EXPECT_NEAR(simulated(b.plan, linksOnly(t), bytes), 8.4 + net, 1e-6);
  // Ranks 0 and 1 both send to rank 8: rank 1's message crosses rails
  // (two network hops) and both share rank 8's NIC.
  PlanBuilder c(16);
  for (int from : {0, 1})
    c.connect(c.threadblock(from, Protocol::Simple, {PlanBuilder::Send}),
              c.threadblock(8, Protocol::Simple, {PlanBuilder::Recv}));
  double shared = simulated(c.plan, linksOnly(t), bytes);
  EXPECT_NEAR(shared, 8.4 + 2 * 14.0 + 2 * bytes / (50 * 1e3), 1e-6);
}

TEST(Simulator, RingIsLatencyBoundWhenSmall) {
  Topology t = topology("hgx-h100");
  for (Protocol p : {Protocol::LL, Protocol::LL128, Protocol::Simple}) {
    SimPlan ring = ringAllreduce(8, p);
    double small = simulated(ring, t, 8);
    // 2(n-1) hops one after the other, as NCCL's ring latency counts them
    // (tuning.cc: base and NVLink hop latencies of Simple, LL, LL128).
    const double base[] = {8.4, 6.6, 14.0}, hop[] = {3.4, 0.6, 1.9};
    double hops = base[int(p)] + 14 * hop[int(p)];
    EXPECT_NEAR(small, hops, 0.01 * hops) << stringifyProtocol(p).str();
    EXPECT_NEAR(simulated(ring, t, 512), small, 0.01 * small);
  }
}

TEST(Simulator, RingRunsAtNcclsNVLinkRateWhenLinksAloneLimit) {
  Topology t = topology("hgx-h100");
  for (int p = 0; p < kNumProtocols; ++p)
    t.nvlinkParams.latencyUs[p] = t.baseLatencyUs[p] = 0;
  SimPlan ring = ringAllreduce(8, Protocol::Simple);
  double bytes = 4.0 * (1 << 30);
  CollectiveBound bound = finiteBound(Collective::allreduce, t, 8, bytes);
  double time = simulated(ring, linksOnly(t), bytes);
  EXPECT_GE(time, bound.lowerUs() * (1 - 1e-9));
  // NVLink at the rate NCCL counts it, 18 x 20.6 GB/s (topo.h), not the
  // vendor's 450 that the bound keeps.
  double busbw = bytes / (1000 * time) * 14 / 8;
  EXPECT_NEAR(busbw, 18 * 20.6, 0.02 * 18 * 20.6);
}

/// `channels` LL rings over `nodes` H100 nodes, NCCL's way: each channel
/// leaves a node from another GPU, so the NICs share the traffic.
SimPlan staggeredRings(int nodes, int channels, Protocol p) {
  int n = 8 * nodes;
  PlanBuilder b(n, int64_t(n) * channels);
  const std::vector<PlanBuilder::Kind> kinds = ringKinds(n);
  for (int c = 0; c < channels; ++c) {
    std::vector<int> order;
    for (int node = 0; node < nodes; ++node)
      for (int k = 0; k < 8; ++k)
        order.push_back(node * 8 + (c + k) % 8);
    for (int r = 0; r < n; ++r)
      b.threadblock(r, p, kinds);
    for (int i = 0; i < n; ++i)
      b.connect(c * n + order[i], c * n + order[(i + 1) % n]);
  }
  b.plan.collective = Collective::allreduce;
  return b.plan;
}

TEST(Simulator, LLIsCappedForTheWholeCollectiveAsNcclCapsIt) {
  // NCCL's llMaxBws (tuning.cc) cap LL's busbw, not a channel's: 141 GB/s
  // on one Hopper node; across nodes, on an Intel host, 39 GB/s on two and
  // 20.4 on more. Eight LL rings would move far more (8 x 32.5 GB/s).
  // Without latencies, so that only bandwidth limits the rings.
  double bytes = 256.0 * (1 << 20);
  for (auto [nodes, cap] : {std::pair{1, 141.0}, {2, 39.0}, {4, 20.4}}) {
    std::string spec = "hgx-h100:nodes=" + std::to_string(nodes);
    Topology t = topology(spec.c_str());
    for (int p = 0; p < kNumProtocols; ++p)
      t.nvlinkParams.latencyUs[p] = t.netParams.latencyUs[p] = t.baseLatencyUs[p] = 0;
    SimPlan rings = staggeredRings(nodes, 8, Protocol::LL);
    double busbw = bytes / (1000 * simulated(rings, t, bytes)) *
                   busBandwidthFactor(Collective::allreduce, 8 * nodes);
    EXPECT_NEAR(busbw, cap, 0.03 * cap) << spec;
  }
}

TEST(Simulator, NcclsRingChannelsMeetNcclsModel) {
  // NCCL's ring on one H100 node: 12 channels (its graph search), each a
  // ring of Simple steps. Its own model says 12 x 30 = 360 GB/s of busbw,
  // and nccl-tests measures about that. The simulator runs NVLink at NCCL's
  // 370.8 GB/s but puts each step's hop latency (3.4 us) on the ring's
  // critical path, where NCCL's model counts it once per hop of the whole
  // collective: about 307 GB/s, 15% under.
  Topology t = topology("hgx-h100");
  SimPlan rings = ringAllreduce(8, Protocol::Simple, 12);
  NcclModel model(t, rings.gpus);
  double bytes = double(1 << 30);
  std::optional<double> nccl =
      model.time(Collective::allreduce, NcclAlgorithm::Ring, Protocol::Simple, bytes);
  ASSERT_TRUE(nccl);
  double time = simulated(rings, t, bytes);
  EXPECT_NEAR(time, *nccl, 0.2 * *nccl);
  // More channels than the links carry add nothing.
  EXPECT_GT(time, 0.9 * simulated(ringAllreduce(8, Protocol::Simple, 24), t, bytes));
}

TEST(Simulator, ReplicasRunLikeChannels) {
  // The launch's replicas each take every 12th loop on connections of
  // their own: twelve rings by another name.
  Topology t = topology("hgx-h100");
  SimPlan replicated = ringAllreduce(8, Protocol::Simple);
  replicated.launches = {{0, 1, 512}, {1 << 20, 12, 512}};
  double bytes = double(1 << 30);
  llvm::Expected<SimResult> r = simulate(replicated, t, bytes);
  ASSERT_TRUE(bool(r));
  EXPECT_EQ(r->replicas, 12);
  double channels = simulated(ringAllreduce(8, Protocol::Simple, 12), t, bytes);
  EXPECT_NEAR(r->micros, channels, 0.02 * channels);
  // Below the table's second size one replica runs it, at a twelfth of the
  // rate where threadblocks limit it.
  double small = 512 * 1024;
  EXPECT_GT(simulated(replicated, t, small),
            simulated(ringAllreduce(8, Protocol::Simple, 12), t, small));
  // Fewer threads move less.
  SimPlan thin = ringAllreduce(8, Protocol::Simple);
  thin.launches = {{0, 1, 64}};
  EXPECT_GT(simulated(thin, t, 64 << 20),
            4 * simulated(ringAllreduce(8, Protocol::Simple), t, 64 << 20));
}

TEST(Simulator, SimpleBeatsLLWhenLargeAndLosesWhenSmall) {
  Topology t = topology("hgx-h100");
  SimPlan simple = ringAllreduce(8, Protocol::Simple), ll = ringAllreduce(8, Protocol::LL);
  double big = 256.0 * (1 << 20);
  EXPECT_GT(simulated(ll, t, big), 1.5 * simulated(simple, t, big));
  EXPECT_LT(simulated(ll, t, 1024), simulated(simple, t, 1024));
}

TEST(Simulator, FifoSlotsBoundWhatIsInFlight) {
  // Sixteen sends and then the receiver's sixteen receives: with eight
  // slots, the sender waits for the receiver, who runs its own copy.
  Topology t = topology("hgx-h100");
  using K = PlanBuilder::Kind;
  PlanBuilder b(2, 16);
  std::vector<K> sends = {K::Send, K::Send, K::Send, K::Send, K::Send, K::Send, K::Send, K::Send,
                          K::Send, K::Send, K::Send, K::Send, K::Send, K::Send, K::Send, K::Send};
  std::vector<K> recvs = {K::Recv, K::Recv, K::Recv, K::Recv, K::Recv, K::Recv, K::Recv, K::Recv,
                          K::Recv, K::Recv, K::Recv, K::Recv, K::Recv, K::Recv, K::Recv, K::Recv};
  b.connect(b.threadblock(0, Protocol::Simple, sends), b.threadblock(1, Protocol::Simple, recvs));
  double deep = simulated(b.plan, t, 16 * 4096);
  b.plan.slots = 1;
  double shallow = simulated(b.plan, t, 16 * 4096);
  // One slot: each message waits for the last one's hop latency.
  EXPECT_GT(shallow - deep, 12 * 3.4);
}

TEST(Simulator, ExtrapolatedLoopsMatchRunningThemAll) {
  Topology t = topology("hgx-h100");
  for (Protocol p : {Protocol::Simple, Protocol::LL}) {
    SimPlan ring = ringAllreduce(8, p);
    SimOptions all, extrapolate;
    all.exactLoops = 1 << 20;
    extrapolate.exactSteps = 0;
    // 256 loops of Simple, 4096 of LL.
    double bytes = 1024.0 * (1 << 20);
    llvm::Expected<SimResult> fast = simulate(ring, t, bytes, extrapolate);
    ASSERT_TRUE(bool(fast));
    EXPECT_TRUE(fast->extrapolated);
    double exact = simulated(ring, t, bytes, all);
    EXPECT_NEAR(fast->micros, exact, 0.01 * exact) << stringifyProtocol(p).str();
    // Loops times steps this few run loop by loop by default.
    llvm::Expected<SimResult> cheap = simulate(ring, t, bytes);
    ASSERT_TRUE(bool(cheap));
    EXPECT_FALSE(cheap->extrapolated);
    EXPECT_DOUBLE_EQ(cheap->micros, exact) << stringifyProtocol(p).str();
  }
}

TEST(Simulator, AThousandRanksInSeconds) {
  Topology t = topology("hgx-h100:nodes=128");
  SimPlan ring = ringAllreduce(1024, Protocol::Simple);
  auto start = std::chrono::steady_clock::now();
  double time = simulated(ring, t, 1 << 30);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 30);
  CollectiveBound bound = finiteBound(Collective::allreduce, t, 1024, 1 << 30);
  EXPECT_GE(time, bound.lowerUs());
}

TEST(Simulator, StallIsAnError) {
  Topology t = topology("hgx-h100");
  PlanBuilder b(2);
  // Both ranks receive first: neither sends.
  int a = b.threadblock(0, Protocol::Simple, {PlanBuilder::Recv, PlanBuilder::Send});
  int c = b.threadblock(1, Protocol::Simple, {PlanBuilder::Recv, PlanBuilder::Send});
  b.connect(a, c);
  b.connect(c, a);
  llvm::Expected<SimResult> r = simulate(b.plan, t, 1024);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("stalls"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// Compiled plans
//===----------------------------------------------------------------------===//

/// The plans of program `text`, lowered as collc lowers them.
std::vector<SimPlan> compileText(const std::string &text, const std::string &example,
                                 const std::string &topo, int64_t ranks,
                                 std::optional<Protocol> protocol = {}, bool multimem = false) {
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, example), llvm::SMLoc());
  mlir::DialectRegistry registry;
  registry.insert<CollDialect>();
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  mlir::DefaultTimingManager timing;
  mlir::TimingScope scope = timing.getRootScope();
  ElaborateOptions options;
  options.defines.emplace_back("ranks", ranks);
  std::string unused;
  mlir::OwningOpRef<mlir::ModuleOp> module = importColl(sources, &context, options, scope, &unused);
  EXPECT_TRUE(module) << example;
  if (!module)
    return {};
  CollLoweringOptions lowering;
  lowering.topology = topo;
  lowering.multimem = multimem;
  lowering.protocol = protocol;
  mlir::PassManager pm(&context);
  buildCollLoweringPipeline(pm, lowering);
  EXPECT_TRUE(mlir::succeeded(pm.run(*module))) << example;
  std::vector<SimPlan> plans;
  for (auto plan : module->getOps<PlanOp>()) {
    llvm::Expected<SimPlan> sim = buildSimPlan(plan);
    EXPECT_TRUE(bool(sim)) << (sim ? "" : llvm::toString(sim.takeError()));
    if (sim)
      plans.push_back(std::move(*sim));
  }
  return plans;
}

/// The plans of an example.
std::vector<SimPlan> compile(const std::string &example, const std::string &topo, int64_t ranks,
                             std::optional<Protocol> protocol = {}) {
  std::ifstream in(std::string(COLLC_EXAMPLES) + "/" + example);
  std::stringstream text;
  text << in.rdbuf();
  return compileText(text.str(), example, topo, ranks, protocol);
}

/// The plans of generator `name`'s program for `collective`.
std::vector<SimPlan> synthesize(const char *name, Collective collective, const std::string &topo,
                                int64_t ranks, bool multimem = false) {
  const synth::Generator *generator = synth::findGenerator(name);
  EXPECT_TRUE(generator) << name;
  if (!generator)
    return {};
  synth::Target target;
  target.collective = collective;
  target.ranks = ranks;
  return compileText(generator->generate(target), name, topo, ranks, {}, multimem);
}

TEST(Simulator, CompiledPlansNeverBeatTheBound) {
  struct Case {
    const char *example;
    const char *topo;
    int64_t ranks;
  };
  for (Case c : {Case{"ring_allreduce.coll", "hgx-h100", 8},
                 Case{"ring_allreduce.coll", "hgx-h100:nodes=2", 16},
                 Case{"ring_allgather.coll", "hgx-h100", 8},
                 Case{"ring_reducescatter.coll", "hgx-h100:nodes=2", 16},
                 Case{"recdoubling_allgather.coll", "hgx-h100:nodes=2", 16},
                 Case{"rechalving_allreduce.coll", "hgx-h100", 8},
                 Case{"pairwise_alltoall.coll", "hgx-h100:nodes=2", 16},
                 Case{"twoshot_allreduce.coll", "hgx-h100", 8},
                 Case{"tree_broadcast.coll", "hgx-h100:nodes=2", 16}}) {
    Topology t = topology(c.topo);
    for (const SimPlan &plan : compile(c.example, c.topo, c.ranks)) {
      ASSERT_EQ(plan.ranks, c.ranks) << c.example;
      for (double bytes = 64; bytes <= double(1 << 30); bytes *= 64) {
        CollectiveBound bound = finiteBound(plan.collective, t, int(plan.ranks), bytes);
        EXPECT_GE(simulated(plan, t, bytes), bound.lowerUs() * (1 - 1e-9))
            << c.example << " " << plan.name << " at " << bytes << " B";
      }
    }
  }
}

// Multimem moves through the switch at NVLS's efficiency of the counted
// NVLink, as NCCL's model runs NVLS. The two-shot's load-reduces fill each
// GPU's NVLink out with every rank's share, and its stores each GPU's
// NVLink in: with its shots on channels of their own they overlap, and
// each port carries (1 + 1/8) of the buffer per allreduce.
TEST(Simulator, MultimemRunsAtNvlsEfficiency) {
  Topology t = topology("hgx-h100");
  const double port = t.nvlinkParams.bandwidthGBps * t.nvlinkCounted();
  ASSERT_NEAR(t.multicastEfficiency(), 0.85, 1e-12);
  const double bytes = double(1 << 30);
  const double expected =
      port * t.multicastEfficiency() / (1 + 1.0 / 8) * busBandwidthFactor(Collective::allreduce, 8);
  int checked = 0;
  for (const SimPlan &plan : synthesize("two-shot", Collective::allreduce, "hgx-h100", 8, true)) {
    if (plan.inputBytes(bytes) < double(plan.minBytes) ||
        plan.inputBytes(bytes) >= double(plan.maxBytes))
      continue;
    const double busbw =
        bytes / simulated(plan, t, bytes) / 1e3 * busBandwidthFactor(Collective::allreduce, 8);
    EXPECT_NEAR(busbw, expected, 0.03 * expected) << plan.name;
    ++checked;
  }
  EXPECT_EQ(checked, 1);
}

TEST(Simulator, CompiledPlansExtrapolateAsTheyRun) {
  // The hierarchical all-gather's stages run ahead of each other for many
  // loops before its pace settles.
  Topology t = topology("pcie-8:nodes=2");
  SimOptions all, extrapolate;
  all.exactLoops = 1 << 20;
  extrapolate.exactSteps = 0;
  double bytes = double(1 << 30);
  for (const SimPlan &plan : compile("hier_allgather.coll", "pcie-8:nodes=2", 8)) {
    if (plan.inputBytes(bytes) < double(plan.minBytes) ||
        plan.inputBytes(bytes) >= double(plan.maxBytes))
      continue;
    double exact = simulated(plan, t, bytes, all);
    EXPECT_NEAR(simulated(plan, t, bytes, extrapolate), exact, 0.02 * exact) << plan.name;
    CollectiveBound bound = finiteBound(plan.collective, t, int(plan.ranks), bytes);
    EXPECT_GE(simulated(plan, t, bytes, extrapolate), bound.lowerUs());
  }
}

TEST(Simulator, FoldedPlansRunAsTheWholePlan) {
  struct Case {
    const char *example, *topo;
    int64_t ranks;
    bool folds;
  };
  for (Case c : {Case{"ring_allreduce.coll", "hgx-h100:nodes=4", 32, true},
                 Case{"ring_allgather.coll", "dgx-a100:nodes=4", 32, true},
                 Case{"pairwise_alltoall.coll", "hgx-h100:nodes=4", 32, true},
                 // Repeats under xors of the GPU, not shifts.
                 Case{"recursive-doubling", "hgx-h100:nodes=4", 32, true},
                 // Ranks of several threadblocks run each level's sends
                 // first, so that the rank where a ring wraps is no
                 // different; recursive halving's ranks sit on GPUs a
                 // permutation of the rank's bits apart.
                 Case{"hierarchical", "hgx-h100:nodes=4", 32, true},
                 Case{"recursive-halving", "hgx-h100:nodes=4", 32, true},
                 Case{"bidir-ring", "hgx-h100:nodes=4", 32, true},
                 Case{"tree_broadcast.coll", "hgx-h100:nodes=4", 32, false}}) {
    Topology t = topology(c.topo);
    bool example = llvm::StringRef(c.example).ends_with(".coll");
    for (const SimPlan &plan :
         example ? compile(c.example, c.topo, c.ranks)
                 : synthesize(c.example, Collective::allreduce, c.topo, c.ranks)) {
      std::optional<SimPlan> folded = foldPlan(plan, t);
      ASSERT_EQ(bool(folded), c.folds) << c.example << " " << plan.name;
      if (!folded)
        continue;
      EXPECT_LT(folded->threadblocks.size(), plan.threadblocks.size());
      EXPECT_EQ(t.size() % folded->foldGpus, 0) << plan.name;
      for (double bytes = 8; bytes <= double(1 << 30); bytes *= 32) {
        double whole = simulated(plan, t, bytes);
        EXPECT_NEAR(simulated(*folded, t, bytes), whole, 1e-9 * whole)
            << c.example << " " << plan.name << " at " << bytes << " B";
      }
    }
  }
}

TEST(Simulator, PlansThatDifferFromNodeToNodeDoNotFold) {
  Topology t = topology("hgx-h100:nodes=4");
  std::vector<SimPlan> plans = compile("ring_allreduce.coll", "hgx-h100:nodes=4", 32);
  ASSERT_FALSE(plans.empty());
  SimPlan &plan = plans.front();
  std::optional<SimPlan> folded = foldPlan(plan, t);
  ASSERT_TRUE(folded);
  // One step of a rank past the first period moves more: the plan no
  // longer repeats at that period, and a fold there would hide the change.
  int64_t period = folded->foldGpus;
  for (const SimPlan::Threadblock &tb : plan.threadblocks)
    if (plan.gpus[tb.rank] == period + 1 && tb.steps() > 1) {
      ++plan.steps[tb.stepBegin + 1].chunks;
      break;
    }
  std::optional<SimPlan> changed = foldPlan(plan, t);
  EXPECT_TRUE(!changed || changed->foldGpus > period);
}

TEST(Simulator, CompiledRingMatchesNcclsLatencyWhenSmall) {
  Topology t = topology("hgx-h100");
  std::vector<SimPlan> plans = compile("ring_allreduce.coll", "hgx-h100", 8, Protocol::LL);
  ASSERT_EQ(plans.size(), 1u);
  std::optional<double> nccl =
      NcclModel(t, plans[0].gpus).time(Collective::allreduce, NcclAlgorithm::Ring, Protocol::LL, 8);
  ASSERT_TRUE(nccl);
  EXPECT_NEAR(simulated(plans[0], t, 8), *nccl, 0.01 * *nccl);
}

// Across nodes no hop is faster than a proxy's post to the network, 1 µs
// for LL (NCCL's netOverhead, which its model applies to its rings the
// same way): a 16-rank LL ring on two nodes pays it for each of its 26
// hops inside a node, and 2.7 µs for each of the 4 across.
TEST(Simulator, HopsOfAPlanAcrossNodesPayTheNetworkPost) {
  Topology t = topology("hgx-h100:nodes=2");
  EXPECT_DOUBLE_EQ(t.netPostUs[int(Protocol::LL)], 1.0);
  std::vector<SimPlan> plans = compile("ring_allreduce.coll", "hgx-h100:nodes=2", 16, Protocol::LL);
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_NEAR(simulated(plans[0], t, 8), 6.6 + 26 * 1.0 + 4 * 2.7, 0.05);
  // One node: NVLink's 0.6 µs per hop.
  std::vector<SimPlan> one = compile("ring_allreduce.coll", "hgx-h100", 8, Protocol::LL);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_NEAR(simulated(one[0], topology("hgx-h100"), 8), 6.6 + 14 * 0.6, 0.05);
}

//===----------------------------------------------------------------------===//
// NCCL's model
//===----------------------------------------------------------------------===//

TEST(NcclModel, OneNodeOfH100) {
  Topology t = topology("hgx-h100");
  NcclModel m(t, {0, 1, 2, 3, 4, 5, 6, 7});
  // 18 links of 20.6 GB/s: six channels of 60 GB/s, split into twelve of 30.
  EXPECT_EQ(m.ringChannels(), 12);
  EXPECT_DOUBLE_EQ(m.ringChannelGBps(), 30);
  std::optional<NcclChoice> small = m.choose(Collective::allreduce, 8);
  ASSERT_TRUE(small);
  EXPECT_EQ(small->algorithm, NcclAlgorithm::Ring);
  EXPECT_EQ(small->protocol, Protocol::LL);
  EXPECT_NEAR(small->micros, 6.6 + 14 * 0.6, 1e-3);
  std::optional<NcclChoice> big = m.choose(Collective::allreduce, 1 << 30);
  ASSERT_TRUE(big);
  EXPECT_EQ(big->algorithm, NcclAlgorithm::NVLS);
  // Ring Simple: 12 x 30 GB/s of busbw, algbw n / (2 (n-1)) of it.
  std::optional<double> ring =
      m.time(Collective::allreduce, NcclAlgorithm::Ring, Protocol::Simple, 1 << 30);
  ASSERT_TRUE(ring);
  EXPECT_NEAR(*ring, 8.4 + 14 * 3.4 + double(1 << 30) / (1000 * 360 * 8 / 14.0), 1e-3);
  EXPECT_FALSE(m.choose(Collective::alltoall, 1024));
  // PAT needs one GPU per node.
  EXPECT_FALSE(m.time(Collective::allgather, NcclAlgorithm::PAT, Protocol::Simple, 1024));
}

TEST(NcclModel, NVLSOnAnH100NodeAsNcclSearchesIt) {
  // NCCL's graph search on an 8 x H100 node logs `Pattern 5, nChannels 8,
  // bw 40.000000/60.000000` (NCCL_DEBUG_SUBSYS=GRAPH): eight NVLS channels
  // at bwIntra 40 and bwInter 60 GB/s.
  Topology t = topology("hgx-h100");
  NcclModel m(t, {0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_EQ(m.nvlsChannels(), 8);
  EXPECT_DOUBLE_EQ(m.nvlsIntraGBps(), 40);
  EXPECT_DOUBLE_EQ(m.nvlsInterGBps(), 60);
  // On that graph NCCL's tuning.cc predicts 476 GB/s of busbw for the NVLS
  // allreduce; nccl-tests measures about 480 on 8 x H100. At 256 MiB the
  // 25 us of NVLS latency takes less than 3% off.
  double bytes = 256.0 * (1 << 20);
  std::optional<double> nvls =
      m.time(Collective::allreduce, NcclAlgorithm::NVLS, Protocol::Simple, bytes);
  ASSERT_TRUE(nvls);
  double busbw = bytes / (1000 * *nvls) * 14 / 8;
  EXPECT_NEAR(busbw, 476, 0.03 * 476);
  EXPECT_NEAR(busbw, 480, 0.05 * 480);
  std::optional<NcclChoice> big = m.choose(Collective::allreduce, bytes);
  ASSERT_TRUE(big);
  EXPECT_EQ(big->algorithm, NcclAlgorithm::NVLS);
  // Without multicast there is no NVLS graph.
  EXPECT_EQ(NcclModel(topology("dgx-a100"), {0, 1, 2, 3, 4, 5, 6, 7}).nvlsChannels(), 0);
}

TEST(NcclModel, GenerationsFollowNVLink) {
  NcclModel a100(topology("dgx-a100"), {0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_EQ(a100.generationName(), "Ampere");
  // 12 links of 20 GB/s: six channels of 40, split in two (Ampere splits
  // any channel of 25 GB/s or more).
  EXPECT_EQ(a100.ringChannels(), 12);
  EXPECT_DOUBLE_EQ(a100.ringChannelGBps(), 20);
  EXPECT_FALSE(a100.time(Collective::allreduce, NcclAlgorithm::NVLS, Protocol::Simple, 1 << 30));
  // One NVL72 domain of 8 GPUs over two trays is one node to NCCL.
  NcclModel gb200(topology("gb200-nvl72"), {0, 1, 2, 3, 4, 5, 6, 7});
  EXPECT_EQ(gb200.generationName(), "Blackwell");
  EXPECT_EQ(gb200.nodes(), 1);
  EXPECT_EQ(gb200.ringChannels(), 16);
  EXPECT_DOUBLE_EQ(gb200.ringChannelGBps(), 45);
  EXPECT_TRUE(gb200.time(Collective::allreduce, NcclAlgorithm::NVLS, Protocol::Simple, 1 << 30));
}

TEST(NcclModel, RingsAcrossH100NodesAsNcclLogsThem) {
  // NCCL on 3 nodes of 8 x H100 with 8 NICs logs `Channel 00/16 : 0 7 6 5
  // 4 3 2 1 8 15 ...` (NVIDIA/nccl issue 1453): 16 channels, each entering
  // a node at one GPU and leaving at another. The graph search finds 8 at
  // 48 GB/s, one per NIC (a GPU's NVLink carries 7 of them each way, 336 of
  // its 370.8 GB/s); connect.cc duplicates them to 16.
  for (int nodes : {2, 3}) {
    Topology t = topology(("hgx-h100:nodes=" + std::to_string(nodes)).c_str());
    std::vector<int64_t> gpus;
    for (int g = 0; g < 8 * nodes; ++g)
      gpus.push_back(g);
    NcclModel m(t, gpus);
    EXPECT_EQ(m.ringChannels(), 8) << nodes << " nodes";
    EXPECT_DOUBLE_EQ(m.ringChannelGBps(), 48) << nodes << " nodes";
    EXPECT_EQ(m.commChannels(), 16) << nodes << " nodes";
  }
}

TEST(NcclModel, LLAcrossNodesIsCappedByTheHost) {
  // Ring LL's busbw: min(llMaxBw, half the ring's); an Intel host's
  // ceiling across two nodes is 39 GB/s, so LL's time at 1 GiB shows it.
  Topology t = topology("hgx-h100:nodes=2");
  std::vector<int64_t> gpus;
  for (int g = 0; g < 16; ++g)
    gpus.push_back(g);
  NcclModel m(t, gpus);
  std::optional<double> ll =
      m.time(Collective::allgather, NcclAlgorithm::Ring, Protocol::LL, double(1 << 30));
  std::optional<double> tiny = m.time(Collective::allgather, NcclAlgorithm::Ring, Protocol::LL, 0);
  ASSERT_TRUE(ll && tiny);
  double algbw = double(1 << 30) / (1000 * (*ll - *tiny));
  EXPECT_NEAR(algbw, 39.0 * 16 / 15, 1e-6);
}

TEST(NcclModel, NoLL128OrNVLSWithoutNVLink) {
  Topology t = topology("pcie-8");
  NcclModel m(t, {0, 1, 2, 3, 4, 5, 6, 7});
  for (double bytes = 8; bytes < 1e10; bytes *= 8) {
    std::optional<NcclChoice> c = m.choose(Collective::allreduce, bytes);
    ASSERT_TRUE(c);
    EXPECT_NE(c->protocol, Protocol::LL128);
    EXPECT_NE(c->algorithm, NcclAlgorithm::NVLS);
  }
}

TEST(NcclModel, NodesOfH100) {
  Topology t = topology("hgx-h100:nodes=2");
  std::vector<int64_t> gpus;
  for (int g = 0; g < 16; ++g)
    gpus.push_back(g);
  NcclModel m(t, gpus);
  EXPECT_EQ(m.nodes(), 2);
  std::optional<NcclChoice> big = m.choose(Collective::allreduce, 1 << 30);
  ASSERT_TRUE(big);
  EXPECT_EQ(big->algorithm, NcclAlgorithm::NVLSTree);
  // Time grows with size for every pair it models.
  for (int a = 0; a < kNumNcclAlgorithms; ++a)
    for (int p = 0; p < kNumProtocols; ++p) {
      std::optional<double> lo =
          m.time(Collective::allreduce, NcclAlgorithm(a), Protocol(p), 1 << 20);
      std::optional<double> hi =
          m.time(Collective::allreduce, NcclAlgorithm(a), Protocol(p), 1 << 24);
      EXPECT_EQ(bool(lo), bool(hi));
      if (lo && hi) {
        EXPECT_LT(*lo, *hi);
      }
    }
  // One GPU per node: PAT for all-gather.
  NcclModel spread(t, {0, 8});
  EXPECT_TRUE(spread.time(Collective::allgather, NcclAlgorithm::PAT, Protocol::Simple, 1024));
}

TEST(BusBandwidth, NcclTestsFactors) {
  EXPECT_DOUBLE_EQ(busBandwidthFactor(Collective::allreduce, 8), 14.0 / 8);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(Collective::allgather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(Collective::alltoall, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(Collective::broadcast, 8), 1);
}

} // namespace
