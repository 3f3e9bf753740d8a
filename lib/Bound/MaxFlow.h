//===- MaxFlow.h - Maximum flow and minimum cut (Dinic) -------------------===//
//
// A directed network with real capacities, for the cut bounds of Bound.h:
// the maximum flow between two vertices and the source side of a minimum
// cut. Capacities are real, so a residual below a 1e-12 fraction of the
// flow pushed so far counts as zero: exact up to that fraction whatever
// the spread of the capacities.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_BOUND_MAXFLOW_H
#define COLLC_BOUND_MAXFLOW_H

#include <vector>

namespace coll {

class FlowNetwork {
public:
  explicit FlowNetwork(int vertices) : out(vertices) {}

  int size() const { return static_cast<int>(out.size()); }
  int addVertex();
  /// Adds the arc u -> v; returns its id for setCapacity.
  int addArc(int u, int v, double capacity);
  void setCapacity(int arc, double capacity) { arcs[arc].capacity = capacity; }

  /// The maximum flow from s to t (earlier flows are discarded first).
  double maxFlow(int s, int t);
  /// After maxFlow(s, t): the vertices s still reaches through arcs with
  /// residual capacity, the source side of a minimum s-t cut.
  std::vector<bool> sourceSide(int s) const;

private:
  struct Arc {
    int to;
    double capacity, flow;
  };
  // Arc i's reverse is arc i ^ 1 (capacity 0), so pushing back is a push.
  std::vector<Arc> arcs;
  std::vector<std::vector<int>> out;
  std::vector<int> level, next;
  static constexpr double kRelativeTolerance = 1e-12;
  double epsilon = 0; // kRelativeTolerance x the flow so far

  double residual(int arc) const { return arcs[arc].capacity - arcs[arc].flow; }
  bool buildLevels(int s, int t);
  double push(int u, int t, double limit);
};

} // namespace coll

#endif // COLLC_BOUND_MAXFLOW_H
