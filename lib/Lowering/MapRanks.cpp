//===- MapRanks.cpp - Place logical ranks on physical GPUs ----------------===//
//
// After this pass every algorithm carries `rank_map`: logical rank r runs on
// physical GPU rank_map[r] of the topology, placed to keep heavy traffic on
// fast links (a ring over two nodes crosses the network twice, whatever the
// GPU numbering; traffic between nodes stays on one rail where it can).
//
//===----------------------------------------------------------------------===//

#include "dialect/CollOps.h"
#include "lib/Analysis/Traffic.h"
#include "lib/Lowering/Passes.h"
#include "lib/Lowering/TopologyAnalysis.h"
#include "lib/Topology/CostModel.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <numeric>

namespace coll {
#define GEN_PASS_DEF_COLLMAPRANKSPASS
#include "lib/Lowering/Passes.h.inc"
} // namespace coll

using namespace mlir;
using namespace coll;

namespace {

/// Chunks sent between each pair of logical ranks, both directions summed.
using Traffic = std::vector<SmallVector<std::pair<int64_t, double>, 4>>;

Traffic trafficOf(AlgorithmOp alg) {
  Traffic traffic(alg.getRanks());
  for (auto &[key, chunks] : rankPairTraffic(alg)) {
    traffic[key.first].push_back({key.second, chunks});
    traffic[key.second].push_back({key.first, chunks});
  }
  return traffic;
}

struct CollMapRanksPass : coll::impl::CollMapRanksPassBase<CollMapRanksPass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto alg : getOperation().getOps<AlgorithmOp>())
      if (failed(map(alg)))
        return signalPassFailure();
  }

  LogicalResult map(AlgorithmOp alg) {
    int64_t ranks = alg.getRanks();
    std::string spec = topology;
    // A bare preset grows to as many nodes as the algorithm needs.
    if (spec.find(':') == std::string::npos) {
      llvm::Expected<Topology> one = presetTopology(spec);
      if (one) {
        int64_t nodes = (ranks + one->gpusPerNode - 1) / one->gpusPerNode;
        if (nodes > one->nodes)
          spec += ":nodes=" + std::to_string(nodes);
      } else {
        llvm::consumeError(one.takeError());
      }
    }
    std::string error;
    const Topology *topo = getAnalysis<TopologyAnalysis>().get(spec, error);
    if (!topo)
      return alg.emitError() << "topology: " << error;
    if (topo->size() < ranks)
      return alg.emitError() << "topology " << topo->name << " has " << topo->size()
                             << " GPUs but the algorithm needs " << ranks << " ranks";
    CostModel cost(*topo);

    // Start node-major: consecutive ranks on consecutive GPUs of one node.
    std::vector<int> gpus(topo->size());
    std::iota(gpus.begin(), gpus.end(), 0);
    std::stable_sort(gpus.begin(), gpus.end(), [&](int a, int b) {
      const Gpu &x = topo->gpus[a], &y = topo->gpus[b];
      return std::tie(x.node, x.local) < std::tie(y.node, y.local);
    });
    std::vector<int> place(gpus.begin(), gpus.begin() + ranks);

    // Then swap pairs while that lowers the cost of the traffic.
    Traffic traffic = trafficOf(alg);
    auto costOf = [&](int64_t r, int at, int64_t skip) {
      double c = 0;
      for (auto [peer, chunks] : traffic[r])
        c += chunks * cost.byteCost(at, peer == skip ? place[r] : place[peer]);
      return c;
    };
    if (ranks <= 256) {
      for (int pass = 0; pass < 4; ++pass) {
        bool improved = false;
        for (int64_t a = 0; a < ranks; ++a)
          for (int64_t b = a + 1; b < ranks; ++b) {
            double before = costOf(a, place[a], -1) + costOf(b, place[b], -1);
            double after = costOf(a, place[b], b) + costOf(b, place[a], a);
            if (after < before - 1e-12) {
              std::swap(place[a], place[b]);
              improved = true;
            }
          }
        if (!improved)
          break;
      }
    }
    alg.setRankMapAttr(
        DenseI64ArrayAttr::get(&getContext(), SmallVector<int64_t>(place.begin(), place.end())));
    alg.setTopologyAttr(StringAttr::get(&getContext(), spec));
    return success();
  }
};

} // namespace
