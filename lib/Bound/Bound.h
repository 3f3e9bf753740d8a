//===- Bound.h - Lower bounds on a collective's time on a topology --------===//
//
// No schedule, however clever, beats these: the bandwidth bound is the
// time to push the data that must cross the tightest cut of the switch
// graph (ForestColl's cut bound for all-gather and reduce-scatter), the
// latency bound the rounds every schedule needs at the cheapest per-hop
// latency. docs/synthesis.md gives the formulas and the argument.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_BOUND_BOUND_H
#define COLLC_BOUND_BOUND_H

#include "dialect/CollOps.h"
#include "lib/Bound/SwitchGraph.h"

#include "llvm/Support/Error.h"

#include <algorithm>
#include <string>
#include <vector>

namespace coll {

/// A cut S of a switch graph and what crosses it.
struct Cut {
  std::vector<bool> inside;
  int ranksInside = 0;
  double bandwidthGBps = 0; // leaving S (or entering it, for reversed bounds)
};

/// The cut S, with some rank outside, that maximizes
/// |S ∩ ranks| / B+(S): parametric minimum cuts (Dinkelbach's method), one
/// maximum flow per rank per step. Exact: the answer is a real cut, and no
/// cut has a larger ratio (up to a relative 1e-9). Needs two ranks or more.
Cut maxRatioCut(const SwitchGraph &g);

/// The smallest maximum flow from `root` to another rank, and its cut.
/// Needs two ranks or more.
Cut rootCut(const SwitchGraph &g, int root);

struct CollectiveBound {
  double bandwidthUs = 0;
  /// How bandwidthUs arises: "2 x (M/N) x 8 / 400 GB/s".
  std::string bandwidthFormula;
  /// The critical cut, for allreduce that of the reduce-scatter half.
  std::string cutDescription;
  /// Rounds when each rank sends and receives one message per round.
  int rounds = 0;
  /// The cheapest protocol's base latency plus max(rounds x its cheapest
  /// hop, the farthest pair's path): the one-port latency bound.
  double latencyUs = 0;
  /// The same for a schedule of any fan-out: one round to the farthest pair.
  double fanoutLatencyUs = 0;
  Protocol latencyProtocol = Protocol::LL;
  double baseUs = 0, hopUs = 0, farthestUs = 0; // of latencyProtocol
  /// max(bandwidth, fan-out latency): holds for every schedule.
  double lowerUs() const { return std::max(bandwidthUs, fanoutLatencyUs); }
};

/// The bounds of `collective` on the first `ranks` GPUs of `topo` for
/// `bytes`, the larger of a rank's input and output buffer (M of the
/// docs: all-gather's output, reduce-scatter's input, allreduce's buffer).
/// An error where a bound is not a finite number (a cut with no bandwidth,
/// or a time past the range of a double), so that no NaN or infinity
/// passes for a bound.
llvm::Expected<CollectiveBound> computeBound(Collective collective, const Topology &topo, int ranks,
                                             double bytes, int root = 0);

} // namespace coll

#endif // COLLC_BOUND_BOUND_H
