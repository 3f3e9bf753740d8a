//===- ProgramCost.cpp - Alpha-beta time of a global-view program ---------===//
#include "lib/Synthesis/ProgramCost.h"

#include "lib/Synthesis/CostModel.h"

#include "llvm/ADT/SmallVector.h"

#include <map>
#include <tuple>

using namespace coll;

namespace {

using Slot = std::tuple<std::string, int64_t, int64_t>; // buffer, rank, chunk

/// The step after which each chunk slot was last written and last read.
struct SlotHistory {
  std::map<Slot, std::pair<int, int>> last;

  template <typename F> void forEach(const PhysicalRange &r, F f) {
    for (int64_t i = r.begin; i < r.end; ++i)
      f(last[Slot{r.buffer.str(), r.rank, i}]);
  }
};

} // namespace

std::vector<ProgramCost> coll::estimateProgram(AlgorithmOp alg, const Topology &topo,
                                               llvm::ArrayRef<double> sizes) {
  Collective c = alg.getCollective();
  int64_t chunks = alg.getChunks();
  bool inplace = alg.getInplace();
  int64_t in = *bufferSize(c, alg.getRanks(), chunks, alg.getScratchAttr(), "in");
  int64_t out = *bufferSize(c, alg.getRanks(), chunks, alg.getScratchAttr(), "out");

  // Which step each transfer falls in; its bytes in chunks.
  SlotHistory history;
  std::vector<llvm::SmallVector<Transfer>> steps;
  for (mlir::Operation &op : alg.getBody().front()) {
    std::optional<TransferChunks> t = transferChunks(&op);
    if (!t)
      continue;
    PhysicalRange dst = physicalRange(c, chunks, inplace, t->dst);
    int step = 0;
    for (ChunkAttr src : t->srcs)
      history.forEach(physicalRange(c, chunks, inplace, src),
                      [&](auto &h) { step = std::max(step, h.first); });
    history.forEach(dst, [&](auto &h) { step = std::max({step, h.first, h.second}); });
    ++step;
    for (ChunkAttr src : t->srcs)
      history.forEach(physicalRange(c, chunks, inplace, src),
                      [&](auto &h) { h.second = std::max(h.second, step); });
    history.forEach(dst, [&](auto &h) { h.first = step; });
    if (int(steps.size()) < step)
      steps.resize(step);
    for (ChunkAttr src : t->srcs)
      if (src.getRank() != t->dst.getRank())
        steps[step - 1].push_back(
            {int(src.getRank()), int(t->dst.getRank()), double(t->dst.getCount())});
  }

  bool allNVLink = true;
  for (auto &step : steps)
    for (const Transfer &t : step)
      allNVLink &= topo.allowsLL128(t.from, t.to);
  CostModel model(topo);
  std::vector<ProgramCost> costs;
  llvm::SmallVector<Transfer> scaled;
  for (double bytes : sizes) {
    double chunkBytes = bytes / double(std::max(in, out));
    ProgramCost best;
    best.micros = -1;
    best.steps = int(steps.size());
    for (Protocol p : {Protocol::Simple, Protocol::LL, Protocol::LL128}) {
      if (p == Protocol::LL128 && !allNVLink)
        continue;
      double micros = topo.baseLatencyUs[int(p)];
      for (auto &step : steps) {
        scaled.assign(step.begin(), step.end());
        for (Transfer &t : scaled)
          t.bytes *= chunkBytes;
        micros += model.roundTime(scaled, int(p));
      }
      if (best.micros < 0 || micros < best.micros) {
        best.micros = micros;
        best.protocol = p;
      }
    }
    costs.push_back(best);
  }
  return costs;
}

ProgramCost coll::estimateProgram(AlgorithmOp alg, const Topology &topo, double bytes) {
  return estimateProgram(alg, topo, llvm::ArrayRef<double>(bytes)).front();
}
