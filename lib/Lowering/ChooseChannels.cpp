//===- ChooseChannels.cpp - Replicas and threads per message size ---------===//
//
// One threadblock moves at most what one SM can, about NCCL's per-channel
// rate, so a plan with one threadblock per connection cannot fill NVLink;
// NCCL runs 16 to 32 channels there. The runtime can run several replicas
// of a plan's threadblocks, each on every replicas-th loop of the buffer and
// on connections of its own. This pass decides how many, and the threads of
// each, per size: enough at large sizes for the busiest link, and fewer at
// small ones, where each replica's share would be too small to pay for
// itself (NCCL's rule in enqueue.cc, with its thresholds).
//
//===----------------------------------------------------------------------===//

#include "dialect/CollOps.h"
#include "dialect/PeerSteps.h"
#include "lib/Lowering/Passes.h"
#include "lib/Lowering/PlanTopology.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

#include <map>

namespace coll {
#define GEN_PASS_DEF_COLLCHOOSECHANNELSPASS
#include "lib/Lowering/Passes.h.inc"
} // namespace coll

using namespace mlir;
using namespace coll;

namespace {

// Threads per threadblock: the most generated kernels are built for
// (COLLC_CUDA_MAX_THREADS) and the least the rule halves to.
constexpr int64_t kMaxThreads = 512, kMinThreads = 64;
// Threadblocks of one rank over all replicas: NCCL's channel limit; and
// the runtime's limit on replicas (collc::kMaxReplicas).
constexpr int64_t kMaxBlocksPerRank = 64, kMaxReplicas = 32;
// Bytes each thread must have per step before another replica or more
// threads pay off (NCCL_SIMPLE/LL/LL128_THREAD_THRESHOLD).
int64_t threshold(Protocol p) { return p == Protocol::Simple ? 64 : 8; }

struct CollChooseChannelsPass : coll::impl::CollChooseChannelsPassBase<CollChooseChannelsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (maxReplicas < 1 || maxReplicas > kMaxReplicas) {
      getOperation().emitError() << "max-replicas must be in 1 .. " << kMaxReplicas;
      return signalPassFailure();
    }
    // The variants of one algorithm differ in protocols, not in who sends
    // to whom: they fill their links with the same replicas.
    llvm::StringMap<int64_t> fillOf;
    for (auto plan : getOperation().getOps<PlanOp>())
      if (failed(choose(plan, fillOf)))
        return signalPassFailure();
  }

  /// Replicas that fill the busiest link: each sending threadblock gets its
  /// share of its GPU's link of that class. A threadblock with multimem or
  /// peer-window steps moves its bytes over the GPU's NVLink (to the
  /// switch, or to every peer at once) and counts as sending on it, as
  /// NCCL gives its NVLS and symmetric kernels many channels; replicas of
  /// such a plan work on loops of their own, which touch disjoint chunks.
  int64_t replicasToFill(PlanOp plan, const Topology &topo, ArrayRef<int64_t> map) {
    // (rank, link class) -> sending threadblocks
    std::map<std::pair<int64_t, LinkClass>, int64_t> sharing;
    SmallVector<std::tuple<int64_t, int64_t>> sends; // (from GPU, to GPU)
    int64_t perRank = 1;
    for (auto rank : plan.getBody().getOps<RankOp>()) {
      int64_t tbs = 0;
      for (auto tb : rank.getBody().getOps<ThreadblockOp>()) {
        ++tbs;
        std::optional<int64_t> to = tb.getSend();
        if (usesPeers(tb) && map.size() > 1)
          to = rank.getRank() ? 0 : 1; // any other rank: they share one NVLink domain
        if (!to)
          continue;
        int64_t a = map[rank.getRank()], b = map[*to];
        ++sharing[{a, topo.linkClass(a, b)}];
        sends.push_back({a, b});
      }
      perRank = std::max(perRank, tbs);
    }
    // What one threadblock moves: the LL128 rate, taken for every protocol
    // before its efficiency.
    double perBlock = topo.threadblockGBps[int(Protocol::LL128)];
    double need = 1;
    for (auto [a, b] : sends)
      need = std::max(need, topo.bandwidth(a, b) / (sharing[{a, topo.linkClass(a, b)}] * perBlock));
    int64_t fill = int64_t(llvm::PowerOf2Ceil(uint64_t(std::ceil(need))));
    int64_t room =
        std::max<int64_t>(1, int64_t(llvm::bit_floor(uint64_t(kMaxBlocksPerRank / perRank))));
    return std::min({fill, room, int64_t(maxReplicas)});
  }

  LogicalResult choose(PlanOp plan, llvm::StringMap<int64_t> &fillOf) {
    SmallVector<int64_t> map;
    const Topology *topo = planTopology(plan, topology, getAnalysis<TopologyAnalysis>(), map);
    if (!topo)
      return failure();
    // The smallest threshold of the plan's protocols: a plan of Simple
    // threadblocks with one LL connection is latency-bound there.
    Protocol p = Protocol::Simple;
    for (auto rank : plan.getBody().getOps<RankOp>())
      for (auto tb : rank.getBody().getOps<ThreadblockOp>())
        if (tb.getProtocol() && threshold(*tb.getProtocol()) < threshold(p))
          p = *tb.getProtocol();

    // From the largest launch down: each state is taken by sizes whose
    // chunks hold replicas x threads x threshold bytes.
    struct State {
      int64_t from, replicas, threads;
    };
    SmallVector<State> states;
    int64_t chunks = *plan.getBufferSize("in");
    StringRef algorithm = plan.getAlgorithm().value_or(plan.getSymName());
    auto [fill, fresh] = fillOf.try_emplace(algorithm, 0);
    if (fresh)
      fill->second = replicasToFill(plan, *topo, map);
    for (int64_t n = fill->second; n >= 1; n /= 2)
      states.push_back({0, n, kMaxThreads});
    for (int64_t t = kMaxThreads / 2; t >= kMinThreads; t /= 2)
      states.push_back({0, 1, t});
    for (State &s : states)
      s.from = chunks * s.replicas * s.threads * threshold(p);
    states.back().from = 0;

    int64_t lo = plan.getMinBytes().value_or(0);
    int64_t hi = plan.getMaxBytes().value_or(INT64_MAX);
    SmallVector<LaunchRange> launch;
    for (size_t i = states.size(); i-- > 0;) {
      const State &s = states[i];
      int64_t next = i ? states[i - 1].from : INT64_MAX;
      if (next <= lo || s.from >= hi)
        continue;
      launch.push_back({std::max(s.from, lo), s.replicas, s.threads});
    }
    plan.setLaunchAttr(LaunchAttr::get(&getContext(), launch));
    return success();
  }
};

} // namespace
