//===- SwitchGraph.cpp - A topology as a graph of GPUs, switches and NICs -===//
#include "lib/Bound/SwitchGraph.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

using namespace coll;

namespace {

std::array<double, kNumProtocols> scaled(const std::array<double, kNumProtocols> &lat,
                                         double factor) {
  std::array<double, kNumProtocols> r;
  for (int p = 0; p < kNumProtocols; ++p)
    r[p] = lat[p] * factor;
  return r;
}

class Builder {
public:
  Builder(const Topology &topo, int ranks) : topo(topo) { g.ranks = ranks; }

  SwitchGraph build() {
    for (int r = 0; r < g.ranks; ++r)
      g.vertices.push_back({VertexKind::Gpu, topo.gpus[r].node});
    addNVLink();
    addPCIe();
    addNetwork();
    // GPU-NIC arcs were added with bandwidth 0 as placeholders.
    double finite = 0;
    for (const SwitchGraph::Arc &a : g.arcs)
      finite += a.bandwidth;
    g.unboundedGBps = (g.ranks + 1) * std::max(finite, 1.0);
    for (int a : unboundedArcs)
      g.arcs[a].bandwidth = g.unboundedGBps;
    return std::move(g);
  }

private:
  const Topology &topo;
  SwitchGraph g;
  std::vector<int> unboundedArcs;
  std::map<std::tuple<VertexKind, int, int>, int> named; // (kind, a, b) -> vertex

  int vertex(VertexKind kind, int node, int a, int b = 0) {
    auto [it, fresh] = named.try_emplace({kind, a, b}, g.size());
    if (fresh)
      g.vertices.push_back({kind, node});
    return it->second;
  }

  /// Both directions of a link; `latency` is what crossing it costs.
  void link(int u, int v, double bandwidth, const std::array<double, kNumProtocols> &latency) {
    g.arcs.push_back({u, v, bandwidth, latency});
    g.arcs.push_back({v, u, bandwidth, latency});
  }

  int domain(int r) const {
    const Gpu &x = topo.gpus[r];
    return (x.node * topo.gpusPerNode + x.local) / topo.nvlinkDomain;
  }

  void addNVLink() {
    const LinkParams &nv = topo.nvlinkParams;
    if (topo.nvlink == Topology::NVLinkKind::Switch) {
      // A GPU -> switch -> GPU path costs one NVLink hop.
      for (int r = 0; r < g.ranks; ++r) {
        int node = topo.nvlinkDomain <= topo.gpusPerNode ? topo.gpus[r].node : -1;
        link(r, vertex(VertexKind::NVSwitch, node, domain(r)), nv.bandwidthGBps,
             scaled(nv.latencyUs, 0.5));
      }
      return;
    }
    if (topo.nvlink != Topology::NVLinkKind::PointToPoint)
      return;
    for (int a = 0; a < g.ranks; ++a)
      for (int b = 0; b < g.ranks; ++b) {
        const Gpu &x = topo.gpus[a], &y = topo.gpus[b];
        if (a != b && x.node == y.node && topo.nvlinkLinks[x.local][y.local] > 0)
          g.arcs.push_back(
              {a, b, nv.bandwidthGBps * topo.nvlinkLinks[x.local][y.local], nv.latencyUs});
      }
  }

  /// A PCIe switch per node where two of its ranks talk over PCIe.
  void addPCIe() {
    llvm::DenseMap<int, llvm::SmallVector<int>> byNode;
    for (int r = 0; r < g.ranks; ++r)
      byNode[topo.gpus[r].node].push_back(r);
    for (auto &[node, members] : byNode) {
      bool needed = false;
      for (int a : members)
        for (int b : members)
          needed |= topo.linkClass(a, b) == LinkClass::PCIe;
      if (!needed)
        continue;
      int sw = vertex(VertexKind::PCIeSwitch, node, node);
      for (int r : members)
        link(r, sw, topo.pcieParams.bandwidthGBps, scaled(topo.pcieParams.latencyUs, 0.5));
    }
  }

  /// NICs, one switch per rail, and a spine between the rails whose
  /// bandwidth the oversubscription divides.
  void addNetwork() {
    bool spans = false;
    for (int r = 1; r < g.ranks; ++r)
      spans |= topo.gpus[r].node != topo.gpus[0].node;
    if (!spans)
      return;
    const LinkParams &net = topo.netParams;
    std::array<double, kNumProtocols> none{};
    llvm::DenseMap<int, int> nicsOnRail;
    for (int r = 0; r < g.ranks; ++r) {
      const Gpu &x = topo.gpus[r];
      size_t before = g.vertices.size();
      int nic = vertex(VertexKind::Nic, x.node, x.node, x.nic);
      // Half the network hop on each GPU-NIC path: GPU, NIC, rail, NIC,
      // GPU is one hop; through the spine, two.
      unboundedArcs.push_back(int(g.arcs.size()));
      unboundedArcs.push_back(int(g.arcs.size()) + 1);
      link(r, nic, 0, scaled(net.latencyUs, 0.5));
      if (g.vertices.size() > before) {
        link(nic, vertex(VertexKind::Rail, -1, x.nic), net.bandwidthGBps, none);
        ++nicsOnRail[x.nic];
      }
    }
    if (nicsOnRail.size() < 2)
      return;
    int spine = vertex(VertexKind::Spine, -1, 0);
    for (auto &[rail, count] : nicsOnRail)
      link(vertex(VertexKind::Rail, -1, rail), spine,
           count * net.bandwidthGBps / topo.oversubscription, scaled(net.latencyUs, 0.5));
  }
};

const char *linkName(VertexKind a, VertexKind b) {
  if (a == VertexKind::Spine || b == VertexKind::Spine)
    return "spine";
  if (a == VertexKind::Rail || b == VertexKind::Rail)
    return "network";
  if (a == VertexKind::Nic || b == VertexKind::Nic)
    return "GPU-NIC";
  if (a == VertexKind::PCIeSwitch || b == VertexKind::PCIeSwitch)
    return "PCIe";
  return "NVLink";
}

} // namespace

SwitchGraph coll::buildSwitchGraph(const Topology &topo, int ranks) {
  return Builder(topo, ranks).build();
}

double SwitchGraph::leaving(const std::vector<bool> &inside) const {
  double sum = 0;
  for (const Arc &a : arcs)
    if (inside[a.from] && !inside[a.to])
      sum += a.bandwidth;
  return sum;
}

double SwitchGraph::entering(const std::vector<bool> &inside) const {
  double sum = 0;
  for (const Arc &a : arcs)
    if (!inside[a.from] && inside[a.to])
      sum += a.bandwidth;
  return sum;
}

SwitchGraph SwitchGraph::reversed() const {
  SwitchGraph r = *this;
  for (Arc &a : r.arcs)
    std::swap(a.from, a.to);
  return r;
}

bool SwitchGraph::symmetric() const {
  std::vector<std::tuple<int, int, double>> fwd, back;
  for (const Arc &a : arcs) {
    fwd.emplace_back(a.from, a.to, a.bandwidth);
    back.emplace_back(a.to, a.from, a.bandwidth);
  }
  llvm::sort(fwd);
  llvm::sort(back);
  return fwd == back;
}

std::vector<int> SwitchGraph::representativeRanks(int keep) const {
  std::vector<int> all(ranks);
  std::iota(all.begin(), all.end(), 0);
  // Each node's vertices in creation order; a swap maps the i-th of one
  // node to the i-th of the other and fixes every vertex outside both.
  std::map<int, std::vector<int>> members;
  std::vector<int> position(size(), -1);
  for (int v = 0; v < size(); ++v)
    if (vertices[v].node >= 0) {
      position[v] = int(members[vertices[v].node].size());
      members[vertices[v].node].push_back(v);
    }
  // A node's signature: its vertices' kinds and its arcs, with its own
  // vertices by position and others by id. Equal signatures make the swap
  // an automorphism, as long as no arc joins two nodes directly.
  using Key = std::tuple<int, int, int, int, double, double, double, double>;
  std::map<int, std::vector<Key>> signature;
  for (auto &[node, vs] : members)
    for (int v : vs)
      signature[node].push_back({-1, position[v], int(vertices[v].kind), 0, 0, 0, 0, 0});
  for (const Arc &a : arcs) {
    int from = vertices[a.from].node, to = vertices[a.to].node;
    if (from >= 0 && to >= 0 && from != to)
      return all;
    int node = from >= 0 ? from : to;
    if (node < 0)
      continue;
    auto local = [&](int v) { return vertices[v].node >= 0 ? 0 : 1; };
    auto id = [&](int v) { return vertices[v].node >= 0 ? position[v] : v; };
    signature[node].push_back({local(a.from), id(a.from), local(a.to), id(a.to), a.bandwidth,
                               a.latencyUs[0], a.latencyUs[1], a.latencyUs[2]});
  }
  std::map<std::vector<Key>, int> firstOfClass;
  std::set<int> chosen;
  for (auto &[node, keys] : signature) {
    llvm::sort(keys);
    if (node == keep || firstOfClass.try_emplace(keys, node).second)
      chosen.insert(node);
  }
  std::vector<int> reps;
  for (int r = 0; r < ranks; ++r)
    if (chosen.count(vertices[r].node))
      reps.push_back(r);
  return reps;
}

std::string SwitchGraph::describeCut(const std::vector<bool> &inside, bool entering) const {
  std::string s;
  llvm::raw_string_ostream os(s);
  int in = 0;
  std::map<int, std::pair<int, int>> nodes; // node -> (ranks inside, ranks)
  for (int r = 0; r < ranks; ++r) {
    in += inside[r];
    auto &n = nodes[vertices[r].node];
    n.first += inside[r];
    ++n.second;
  }
  int whole = 0;
  for (auto &[node, n] : nodes)
    whole += n.first == n.second;
  os << in << " of " << ranks << " GPUs";
  if (nodes.size() > 1)
    os << " (" << whole << (whole == 1 ? " whole node)" : " whole nodes)");
  // Crossing arcs grouped by kind and bandwidth, in a stable order.
  std::map<std::pair<std::string, double>, int> groups;
  for (const Arc &a : arcs)
    if (inside[a.from] != entering && inside[a.to] == entering)
      ++groups[{linkName(vertices[a.from].kind, vertices[a.to].kind), a.bandwidth}];
  os << (entering ? "; entering:" : "; leaving:");
  bool first = true;
  for (auto &[key, count] : groups) {
    os << (first ? " " : " + ") << count << " x " << key.first << " "
       << llvm::format("%g", key.second) << " GB/s";
    first = false;
  }
  return s;
}
