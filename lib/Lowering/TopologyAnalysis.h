//===- TopologyAnalysis.h - Each topology parsed once per run ---*- C++ -*-===//
//
// coll-map-ranks, coll-multimem and coll-select-protocol all need the
// machine a `topology` attribute or option names. This module analysis
// parses each spec (a preset or a JSON file) the first time a pass asks and
// keeps it for the rest of the pipeline: a topology depends on its spec, not
// on the IR, so no transformation invalidates it.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_LOWERING_TOPOLOGYANALYSIS_H
#define COLLC_LOWERING_TOPOLOGYANALYSIS_H

#include "lib/Topology/Topology.h"

#include "mlir/IR/Operation.h"
#include "mlir/Pass/AnalysisManager.h"
#include "llvm/ADT/StringMap.h"

#include <memory>
#include <mutex>
#include <string>

namespace coll {

class TopologyAnalysis {
public:
  explicit TopologyAnalysis(mlir::Operation *) {}

  /// The topology `spec` names, or null with the reason in `error`.
  const Topology *get(llvm::StringRef spec, std::string &error) {
    std::lock_guard<std::mutex> lock(mutex);
    auto [it, inserted] = parsed.try_emplace(spec);
    if (inserted) {
      llvm::Expected<Topology> topo = loadTopology(spec);
      if (topo)
        it->second.topology = std::make_unique<Topology>(std::move(*topo));
      else
        it->second.error = llvm::toString(topo.takeError());
    }
    error = it->second.error;
    return it->second.topology.get();
  }

  bool isInvalidated(const mlir::AnalysisManager::PreservedAnalyses &) { return false; }

private:
  struct Entry {
    std::unique_ptr<Topology> topology;
    std::string error;
  };
  std::mutex mutex;
  llvm::StringMap<Entry> parsed;
};

} // namespace coll

#endif // COLLC_LOWERING_TOPOLOGYANALYSIS_H
