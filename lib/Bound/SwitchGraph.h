//===- SwitchGraph.h - A topology as a graph of GPUs, switches and NICs ---===//
//
// The graph the cut bounds of Bound.h are taken on: the ranks' GPUs (the
// compute vertices, rank r on GPU r), NVSwitches, PCIe switches, NICs, one
// switch per rail and a spine above the rails (the switch vertices), with
// each direction of a link as an arc carrying its bandwidth and a share of
// the cost model's per-hop latency. docs/synthesis.md draws it.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_BOUND_SWITCHGRAPH_H
#define COLLC_BOUND_SWITCHGRAPH_H

#include "lib/Topology/Topology.h"

#include "llvm/Support/Error.h"

#include <array>
#include <string>
#include <vector>

namespace coll {

enum class VertexKind { Gpu, NVSwitch, PCIeSwitch, Nic, Rail, Spine };

struct SwitchGraph {
  struct Vertex {
    VertexKind kind;
    int node; // the node it sits in; -1 for rails and the spine
  };
  struct Arc {
    int from, to;
    double bandwidth; // GB/s
    /// µs per protocol; a path's sum between two GPUs is the cost model's
    /// latency of a transfer between them (a GPU on the path relays).
    std::array<double, kNumProtocols> latencyUs;
  };
  /// Vertices 0 .. ranks-1 are the ranks' GPUs.
  int ranks = 0;
  std::vector<Vertex> vertices;
  std::vector<Arc> arcs;

  int size() const { return static_cast<int>(vertices.size()); }
  /// Bandwidth of the arcs from `inside` to the rest (B+), or into it (B-).
  double leaving(const std::vector<bool> &inside) const;
  double entering(const std::vector<bool> &inside) const;
  /// The same graph with every arc turned around.
  SwitchGraph reversed() const;
  /// Whether every arc has a reverse of the same bandwidth.
  bool symmetric() const;
  /// The bandwidth of a GPU's path to its NIC, which the topology does not
  /// give: more than any cut that avoids such paths, so no maximal cut
  /// crosses one.
  double unboundedGBps = 0;
  /// The ranks up to symmetry: those of one node of each class of nodes
  /// that the graph cannot tell apart (swapping two such nodes maps the
  /// graph onto itself), and every rank of node `keep`. A cut value that is
  /// the same under such swaps needs only these ranks as sinks or sources.
  std::vector<int> representativeRanks(int keep = -1) const;
  /// "8 of 16 GPUs (1 whole node); leaving: 8 x network 50 GB/s", or the
  /// arcs entering.
  std::string describeCut(const std::vector<bool> &inside, bool entering = false) const;
};

/// The graph of `topo` with its first `ranks` GPUs as the compute vertices.
/// Only switches and NICs that serve those GPUs are vertices; other GPUs do
/// not relay. The network (NICs, rails, spine) is there when the ranks span
/// more than one node.
SwitchGraph buildSwitchGraph(const Topology &topo, int ranks);

} // namespace coll

#endif // COLLC_BOUND_SWITCHGRAPH_H
