//===- PlanTopology.h - The machine a plan runs on --------------*- C++ -*-===//
//
// coll-select-protocol and coll-choose-channels cost a plan on its machine:
// the plan's own `topology` (from coll-map-ranks, which may have grown it),
// else the pass's option, else enough hgx-h100 nodes for its ranks; and
// each rank on the GPU its `rank_map` names, or on GPU r.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_LOWERING_PLANTOPOLOGY_H
#define COLLC_LOWERING_PLANTOPOLOGY_H

#include "dialect/CollOps.h"
#include "lib/Lowering/TopologyAnalysis.h"

namespace coll {

/// The topology of `plan` and, in `map`, the GPU of each rank; null after
/// reporting the error on the plan.
const Topology *planTopology(PlanOp plan, llvm::StringRef fallback, TopologyAnalysis &analysis,
                             llvm::SmallVectorImpl<int64_t> &map);

} // namespace coll

#endif // COLLC_LOWERING_PLANTOPOLOGY_H
