//===- PlanTopology.cpp - The machine a plan runs on ----------------------===//

#include "lib/Lowering/PlanTopology.h"

using namespace mlir;

const coll::Topology *coll::planTopology(PlanOp plan, StringRef fallback,
                                         TopologyAnalysis &analysis,
                                         SmallVectorImpl<int64_t> &map) {
  std::string spec = fallback.str();
  if (std::optional<StringRef> own = plan.getTopology())
    spec = own->str();
  if (spec.empty())
    spec = "hgx-h100:nodes=" + std::to_string((plan.getRanks() + 7) / 8);
  std::string error;
  const Topology *topo = analysis.get(spec, error);
  if (!topo) {
    plan.emitError() << "topology: " << error;
    return nullptr;
  }
  map.clear();
  if (auto m = plan.getRankMapAttr())
    map.assign(m.asArrayRef().begin(), m.asArrayRef().end());
  else
    for (int64_t r = 0; r < int64_t(plan.getRanks()); ++r)
      map.push_back(r);
  if (int64_t(topo->size()) <= *llvm::max_element(map)) {
    plan.emitError() << "topology " << topo->name << " has " << topo->size()
                     << " GPUs but the plan needs " << map.size();
    return nullptr;
  }
  return topo;
}
