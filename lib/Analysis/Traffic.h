//===- Traffic.h - Which ranks an algorithm makes talk, and how much ------===//
#ifndef COLLC_ANALYSIS_TRAFFIC_H
#define COLLC_ANALYSIS_TRAFFIC_H

#include "dialect/CollOps.h"

#include <map>

namespace coll {

/// Chunks moved between each unordered pair of ranks (lower rank first),
/// both directions summed.
inline std::map<std::pair<int64_t, int64_t>, double> rankPairTraffic(AlgorithmOp alg) {
  std::map<std::pair<int64_t, int64_t>, double> pairs;
  for (mlir::Operation &op : alg.getBody().front())
    if (std::optional<TransferChunks> t = transferChunks(&op))
      for (ChunkAttr src : t->srcs)
        if (src.getRank() != t->dst.getRank())
          pairs[{std::min(src.getRank(), t->dst.getRank()),
                 std::max(src.getRank(), t->dst.getRank())}] += t->dst.getCount();
  return pairs;
}

} // namespace coll

#endif // COLLC_ANALYSIS_TRAFFIC_H
