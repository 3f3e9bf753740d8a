//===- ProgramCost.h - Alpha-beta time of a global-view program -----------===//
//
// An estimate that needs no lowering: every chunk operation runs one step
// after the last operation it depends on (it reads what that one wrote, or
// overwrites what that one read or wrote); the operations of a step run at
// once and cost what CostModel says for them together. Rank r sits on GPU r.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_SIM_PROGRAMCOST_H
#define COLLC_SIM_PROGRAMCOST_H

#include "dialect/CollOps.h"
#include "lib/Topology/Topology.h"

namespace coll {

struct ProgramCost {
  double micros = 0;
  Protocol protocol = Protocol::Simple; // the cheapest one for the program
  int steps = 0;                        // the longest chain of dependent operations
};

/// The time of `alg` on `topo` for `bytes` per rank (of the larger of its
/// `in` and `out`): the cheapest protocol's base latency plus the sum of
/// its steps. LL128 counts only where every transfer runs on NVLink.
/// Requires `alg.getRanks() <= topo.size()`.
ProgramCost estimateProgram(AlgorithmOp alg, const Topology &topo, double bytes);
/// The same at each of `sizes`, reading the program once.
std::vector<ProgramCost> estimateProgram(AlgorithmOp alg, const Topology &topo,
                                         llvm::ArrayRef<double> sizes);

} // namespace coll

#endif // COLLC_SIM_PROGRAMCOST_H
