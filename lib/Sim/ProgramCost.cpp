//===- ProgramCost.cpp - Alpha-beta time of a global-view program ---------===//
#include "lib/Sim/ProgramCost.h"

#include "lib/Topology/CostModel.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <utility>

using namespace coll;

namespace {

/// The step after which each chunk slot was last written and last read,
/// in a flat array per buffer and rank: a thousand-rank program has
/// millions of operations, and a map keyed by name was most of its cost.
class SlotHistory {
public:
  template <typename F> void forEach(const PhysicalRange &r, F f) {
    std::vector<std::pair<int, int>> &slots = rankSlots(r.buffer, r.rank);
    if (int64_t(slots.size()) < r.end)
      slots.resize(r.end);
    for (int64_t i = r.begin; i < r.end; ++i)
      f(slots[i]);
  }

private:
  std::vector<std::pair<int, int>> &rankSlots(llvm::StringRef buffer, int64_t rank) {
    auto it = llvm::find_if(buffers, [&](const auto &b) { return b.first == buffer; });
    if (it == buffers.end()) {
      buffers.emplace_back(buffer, std::vector<std::vector<std::pair<int, int>>>());
      it = std::prev(buffers.end());
    }
    if (int64_t(it->second.size()) <= rank)
      it->second.resize(rank + 1);
    return it->second[rank];
  }

  llvm::SmallVector<std::pair<llvm::StringRef, std::vector<std::vector<std::pair<int, int>>>>, 4>
      buffers;
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
  // A step's time is a line in the bytes of a chunk (RoundCost), so each
  // protocol costs every step once, whatever the number of sizes.
  CostModel model(topo);
  struct Line {
    Protocol protocol;
    double latency = 0, perChunkByte = 0;
  };
  llvm::SmallVector<Line, 3> lines;
  for (Protocol p : {Protocol::Simple, Protocol::LL, Protocol::LL128}) {
    if (p == Protocol::LL128 && !allNVLink)
      continue;
    Line &line = lines.emplace_back();
    line.protocol = p;
    line.latency = topo.baseLatencyUs[int(p)];
    for (auto &step : steps) {
      RoundCost cost = model.roundCost(step, int(p));
      line.latency += cost.latency;
      line.perChunkByte += cost.busiest;
    }
  }
  std::vector<ProgramCost> costs;
  for (double bytes : sizes) {
    double chunkBytes = bytes / double(std::max(in, out));
    ProgramCost best;
    best.micros = -1;
    best.steps = int(steps.size());
    for (const Line &line : lines) {
      double micros = line.latency + line.perChunkByte * chunkBytes;
      if (best.micros < 0 || micros < best.micros) {
        best.micros = micros;
        best.protocol = line.protocol;
      }
    }
    costs.push_back(best);
  }
  return costs;
}

ProgramCost coll::estimateProgram(AlgorithmOp alg, const Topology &topo, double bytes) {
  return estimateProgram(alg, topo, llvm::ArrayRef<double>(bytes)).front();
}
