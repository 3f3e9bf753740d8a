//===- Bound.cpp - Lower bounds on a collective's time on a topology ------===//
#include "lib/Bound/Bound.h"

#include "lib/Bound/MaxFlow.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <map>
#include <numeric>
#include <queue>
#include <set>

using namespace coll;

namespace {

Cut makeCut(const SwitchGraph &g, std::vector<bool> inside, bool entering = false) {
  Cut c;
  c.ranksInside = static_cast<int>(std::count(inside.begin(), inside.begin() + g.ranks, true));
  c.bandwidthGBps = entering ? g.entering(inside) : g.leaving(inside);
  c.inside = std::move(inside);
  return c;
}

double ratio(const Cut &c) { return c.ranksInside / c.bandwidthGBps; }

/// The graph's arcs in a flow network with one more vertex, the source.
FlowNetwork flowNetwork(const SwitchGraph &g) {
  FlowNetwork net(g.size() + 1);
  for (const SwitchGraph::Arc &a : g.arcs)
    net.addArc(a.from, a.to, a.bandwidth);
  return net;
}

/// Microseconds to move `bytes` at `gbps` (1 GB/s is 1e3 bytes per µs).
double micros(double bytes, double gbps) { return bytes / (gbps * 1e3); }

std::string fmt(double v) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%g", v);
  return s;
}

/// How B+(S) changes if switch v changes sides.
double flipDelta(const SwitchGraph &g, const std::vector<int> &arcs,
                 const std::vector<bool> &inside, int v) {
  double delta = 0;
  for (int i : arcs) {
    const SwitchGraph::Arc &a = g.arcs[i];
    bool from = a.from == v ? !inside[v] : inside[a.from];
    bool to = a.to == v ? !inside[v] : inside[a.to];
    delta += (double(from && !to) - double(inside[a.from] && !inside[a.to])) * a.bandwidth;
  }
  return delta;
}

/// Calls `visit` on the cut of the first k ranks for k = 1 .. n-1 (rank
/// order is node-major, so these are whole nodes and parts of one), each
/// switch put on the side where less leaves: the shapes that the switch
/// structure makes tight, found without a flow; B+ summed per bandwidth,
/// which makeCut sums again in arc order for the cut kept. Each cut starts from the
/// one before with rank k-1 moved in, and only switches next to a vertex
/// that moved are looked at again, in sweeps in vertex order, so the work
/// grows with the graph, not with ranks times the graph.
void prefixCuts(const SwitchGraph &g, llvm::function_ref<void(const Cut &)> visit) {
  int n = g.ranks;
  std::vector<std::vector<int>> arcsAt(g.size());
  for (int i = 0; i < int(g.arcs.size()); ++i) {
    arcsAt[g.arcs[i].from].push_back(i);
    arcsAt[g.arcs[i].to].push_back(i);
  }
  std::vector<bool> inside(g.size(), false);
  // B+(S) as the number of arcs leaving S per bandwidth.
  std::map<double, int64_t> leaving;
  std::set<int> sweep, next; // switches to look at again
  auto move = [&](int v) {
    for (int i : arcsAt[v]) {
      const SwitchGraph::Arc &a = g.arcs[i];
      leaving[a.bandwidth] -= inside[a.from] && !inside[a.to];
    }
    inside[v] = !inside[v];
    for (int i : arcsAt[v]) {
      const SwitchGraph::Arc &a = g.arcs[i];
      leaving[a.bandwidth] += inside[a.from] && !inside[a.to];
      int w = a.from == v ? a.to : a.from;
      if (w >= n)
        (w > v ? sweep : next).insert(w);
    }
  };
  for (int k = 1; k < n; ++k) {
    move(k - 1);
    while (!sweep.empty()) {
      while (!sweep.empty()) {
        int v = *sweep.begin();
        sweep.erase(sweep.begin());
        if (flipDelta(g, arcsAt[v], inside, v) < -1e-9)
          move(v);
      }
      std::swap(sweep, next);
    }
    Cut c;
    c.inside = inside;
    c.ranksInside = k;
    for (auto [bandwidth, arcs] : leaving)
      c.bandwidthGBps += bandwidth * double(arcs);
    visit(c);
  }
}

} // namespace

Cut coll::maxRatioCut(const SwitchGraph &g) {
  int n = g.ranks;
  if (n < 2)
    return {};
  // Start from the best prefix cut: on the presets it is the answer, and
  // the first step only confirms it.
  Cut best;
  prefixCuts(g, [&](const Cut &c) {
    if (best.inside.empty() || ratio(c) > ratio(best))
      best = c;
  });
  best = makeCut(g, std::move(best.inside));

  // For a price x per rank, min over S of B+(S) - x |S ∩ ranks| with rank
  // t outside S is the minimum s-t cut minus x n, where s feeds every rank
  // at capacity x: a rank outside S cuts its feed. A negative minimum is a
  // cut of ratio above 1/x; none means 1/x is the largest.
  FlowNetwork net = flowNetwork(g);
  int s = g.size();
  std::vector<int> feeds;
  for (int r = 0; r < n; ++r)
    feeds.push_back(net.addArc(s, r, 0));
  // Swapping interchangeable nodes keeps every cut's value, so one node of
  // each kind serves as the sinks.
  std::vector<int> sinks = g.representativeRanks();
  for (int step = 0; step < 64; ++step) {
    double x = 1 / ratio(best);
    for (int f : feeds)
      net.setCapacity(f, x);
    double deepest = -1e-9 * x * n;
    std::vector<bool> found;
    for (int t : sinks) {
      double gap = net.maxFlow(s, t) - x * n;
      if (gap < deepest) {
        deepest = gap;
        found = net.sourceSide(s);
        found.pop_back();
      }
    }
    if (found.empty())
      break;
    Cut c = makeCut(g, std::move(found));
    if (!(ratio(c) > ratio(best)))
      break; // rounding: no real improvement
    best = std::move(c);
  }
  return best;
}

Cut coll::rootCut(const SwitchGraph &g, int root) {
  FlowNetwork net = flowNetwork(g);
  Cut best;
  best.bandwidthGBps = -1;
  for (int t : g.representativeRanks(g.vertices[root].node)) {
    if (t == root)
      continue;
    double flow = net.maxFlow(root, t);
    if (best.bandwidthGBps < 0 || flow < best.bandwidthGBps) {
      std::vector<bool> side = net.sourceSide(root);
      side.pop_back();
      best = makeCut(g, std::move(side));
    }
  }
  return best;
}

namespace {

/// The alltoall cut bound, max over S of k (n - k) / B+(S) with k ranks in
/// S, taken over the prefix cuts: a valid bound, not always the tightest.
Cut alltoallCut(const SwitchGraph &g) {
  int n = g.ranks;
  Cut best;
  double bestValue = -1;
  prefixCuts(g, [&](const Cut &c) {
    double value = double(c.ranksInside) * (n - c.ranksInside) / c.bandwidthGBps;
    if (value > bestValue) {
      bestValue = value;
      best = c;
    }
  });
  return makeCut(g, std::move(best.inside));
}

/// Shortest-path latencies between ranks with protocol p: the farthest
/// pair's and the nearest pair's.
std::pair<double, double> pathLatencies(const SwitchGraph &g, int p) {
  std::vector<std::vector<std::pair<int, double>>> adj(g.size());
  for (const SwitchGraph::Arc &a : g.arcs)
    adj[a.from].push_back({a.to, a.latencyUs[p]});
  double farthest = 0, nearest = INFINITY;
  std::vector<double> dist;
  using Item = std::pair<double, int>;
  for (int src : g.representativeRanks()) {
    dist.assign(g.size(), INFINITY);
    dist[src] = 0;
    std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
    queue.push({0, src});
    while (!queue.empty()) {
      auto [d, u] = queue.top();
      queue.pop();
      if (d > dist[u])
        continue;
      for (auto [v, w] : adj[u])
        if (d + w < dist[v]) {
          dist[v] = d + w;
          queue.push({dist[v], v});
        }
    }
    for (int r = 0; r < g.ranks; ++r)
      if (r != src) {
        farthest = std::max(farthest, dist[r]);
        nearest = std::min(nearest, dist[r]);
      }
  }
  return {farthest, nearest};
}

/// Whether the ranks reach each other over NVLink alone (LL128 needs it).
bool nvlinkConnected(const SwitchGraph &g) {
  std::vector<int> parent(g.size());
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int v) {
    while (parent[v] != v)
      v = parent[v] = parent[parent[v]];
    return v;
  };
  auto nvlink = [&](int v) {
    return g.vertices[v].kind == VertexKind::Gpu || g.vertices[v].kind == VertexKind::NVSwitch;
  };
  for (const SwitchGraph::Arc &a : g.arcs)
    if (nvlink(a.from) && nvlink(a.to))
      parent[find(a.from)] = find(a.to);
  for (int r = 1; r < g.ranks; ++r)
    if (find(r) != find(0))
      return false;
  return true;
}

void latencyBound(CollectiveBound &b, const SwitchGraph &g, const Topology &topo) {
  int n = g.ranks;
  b.rounds = 0;
  while ((1 << b.rounds) < n)
    ++b.rounds;
  bool ll128 = nvlinkConnected(g);
  b.latencyUs = INFINITY;
  b.fanoutLatencyUs = INFINITY;
  auto allowed = [&](int p) { return p != int(Protocol::LL128) || ll128; };
  // A protocol no cheaper than another on the base and on every hop cannot
  // set the bound (LL beats Simple on every preset): skip its paths.
  auto dominated = [&](int p) {
    for (int q = 0; q < kNumProtocols; ++q) {
      if (q == p || !allowed(q) || topo.baseLatencyUs[q] > topo.baseLatencyUs[p])
        continue;
      bool cheaper = llvm::all_of(
          g.arcs, [&](const SwitchGraph::Arc &a) { return a.latencyUs[q] <= a.latencyUs[p]; });
      if (cheaper &&
          (q < p || topo.baseLatencyUs[q] < topo.baseLatencyUs[p] ||
           llvm::any_of(
               g.arcs, [&](const SwitchGraph::Arc &a) { return a.latencyUs[q] < a.latencyUs[p]; })))
        return true;
    }
    return false;
  };
  for (Protocol p : {Protocol::Simple, Protocol::LL, Protocol::LL128}) {
    if (!allowed(int(p)) || dominated(int(p)))
      continue;
    auto [farthest, nearest] = pathLatencies(g, int(p));
    double base = topo.baseLatencyUs[int(p)];
    double oneport = base + std::max(b.rounds * nearest, farthest);
    b.fanoutLatencyUs = std::min(b.fanoutLatencyUs, base + farthest);
    if (oneport < b.latencyUs) {
      b.latencyUs = oneport;
      b.latencyProtocol = p;
      b.baseUs = base;
      b.hopUs = nearest;
      b.farthestUs = farthest;
    }
  }
}

struct Term {
  double us = 0;
  std::string formula, cut;
};

std::string cutFormula(const Cut &c) {
  return "(M/N) x " + std::to_string(c.ranksInside) + " / " + fmt(c.bandwidthGBps) + " GB/s";
}

/// Reduce-scatter's cut bound (what must enter a set of ranks), then
/// all-gather's (what must leave one): twice one cut on symmetric graphs,
/// as the presets' are, else the sum. `half` gets the larger of the two.
Term bothHalves(const SwitchGraph &g, double shard, Term &half) {
  bool symmetric = g.symmetric();
  Cut rs = maxRatioCut(symmetric ? g : g.reversed());
  half = {micros(shard * rs.ranksInside, rs.bandwidthGBps), cutFormula(rs),
          g.describeCut(rs.inside, /*entering=*/true)};
  if (symmetric)
    return {2 * half.us, "2 x " + half.formula, half.cut};
  Cut ag = maxRatioCut(g);
  Term gather{micros(shard * ag.ranksInside, ag.bandwidthGBps), cutFormula(ag),
              g.describeCut(ag.inside)};
  Term sum{half.us + gather.us, half.formula + " + " + gather.formula, half.cut};
  if (gather.us > half.us)
    half = gather;
  return sum;
}

/// `g` with the GPUs of each multicast domain joined by arcs wider than
/// the whole graph: the cuts worth taking keep every domain whole. GPUs are
/// numbered node by node, so each domain's GPUs are consecutive ranks; each
/// is joined to the first of its domain. `domains` gets their number.
SwitchGraph wholeDomains(const SwitchGraph &g, const Topology &topo, int &domains) {
  double wide = 1;
  for (const SwitchGraph::Arc &a : g.arcs)
    wide += a.bandwidth;
  SwitchGraph w = g;
  domains = g.ranks > 0;
  for (int a = 1, first = 0; a < g.ranks; ++a) {
    if (!topo.sharesMulticast(first, a)) {
      first = a;
      ++domains;
      continue;
    }
    w.arcs.push_back({first, a, wide, {}});
    w.arcs.push_back({a, first, wide, {}});
  }
  return w;
}

/// Allreduce: reduce-scatter then all-gather. Where switches reduce and
/// multicast (NVLS), the doubling no longer holds for a cut inside a
/// multicast domain: it counts every byte a switch forwards as received
/// once, and a switch that multicasts delivers one send to many GPUs. What
/// still holds for every set S of GPUs with a rank on each side: S takes in
/// one reduced copy of what the others give to S's shards and the others'
/// shards once, M in all, and as much leaves it. So the bound is the larger
/// of M over the narrowest cut and the doubled bound over the cuts that
/// keep each domain whole (one half of it, when one domain holds every rank).
Term allreduceBound(const SwitchGraph &g, const Topology &topo, double bytes) {
  const double shard = bytes / g.ranks;
  Term half;
  if (!topo.multicast)
    return bothHalves(g, shard, half);
  int domains = 0;
  SwitchGraph whole = wholeDomains(g, topo, domains);
  if (whole.arcs.size() == g.arcs.size())
    return bothHalves(g, shard, half); // no two ranks share a multicast domain
  Cut out = rootCut(g, 0);
  Cut in = rootCut(g.reversed(), 0);
  bool entering = in.bandwidthGBps < out.bandwidthGBps;
  const Cut &c = entering ? in : out;
  Term once{micros(bytes, c.bandwidthGBps),
            "M / " + fmt(c.bandwidthGBps) + " GB/s (switches reduce and multicast)",
            g.describeCut(c.inside, entering)};
  Term kept;
  if (domains == 1) {
    bothHalves(g, shard, kept);
    kept.formula += " (one half: switches reduce and multicast)";
  } else {
    kept = bothHalves(whole, shard, half);
    kept.formula += " (multicast domains whole)";
  }
  return kept.us > once.us ? kept : once;
}

} // namespace

llvm::Expected<CollectiveBound> coll::computeBound(Collective collective, const Topology &topo,
                                                   int ranks, double bytes, int root) {
  CollectiveBound b;
  SwitchGraph g = buildSwitchGraph(topo, ranks);
  double shard = bytes / ranks;
  switch (collective) {
  case Collective::allgather: {
    Cut ag = maxRatioCut(g);
    b.bandwidthUs = micros(shard * ag.ranksInside, ag.bandwidthGBps);
    b.bandwidthFormula = cutFormula(ag);
    b.cutDescription = g.describeCut(ag.inside);
    break;
  }
  case Collective::reducescatter: {
    // All-gather on the reversed graph: what must enter S instead of leave it.
    Cut rs = maxRatioCut(g.symmetric() ? g : g.reversed());
    b.bandwidthUs = micros(shard * rs.ranksInside, rs.bandwidthGBps);
    b.bandwidthFormula = cutFormula(rs);
    b.cutDescription = g.describeCut(rs.inside, /*entering=*/true);
    break;
  }
  case Collective::allreduce: {
    Term t = allreduceBound(g, topo, bytes);
    b.bandwidthUs = t.us;
    b.bandwidthFormula = t.formula;
    b.cutDescription = t.cut;
    break;
  }
  case Collective::alltoall: {
    Cut c = alltoallCut(g);
    b.bandwidthUs = micros(shard * c.ranksInside * (ranks - c.ranksInside), c.bandwidthGBps);
    b.bandwidthFormula = "(M/N) x " + std::to_string(c.ranksInside) + " x " +
                         std::to_string(ranks - c.ranksInside) + " / " + fmt(c.bandwidthGBps) +
                         " GB/s";
    b.cutDescription = g.describeCut(c.inside);
    break;
  }
  case Collective::broadcast:
  case Collective::reduce: {
    bool up = collective == Collective::reduce;
    Cut c = rootCut(up ? g.reversed() : g, root);
    b.bandwidthUs = micros(bytes, c.bandwidthGBps);
    b.bandwidthFormula = "M / " + fmt(c.bandwidthGBps) + " GB/s";
    b.cutDescription = g.describeCut(c.inside, /*entering=*/up);
    break;
  }
  }
  latencyBound(b, g, topo);
  // A cut that nothing crosses, or ranks no path joins, leaves no finite
  // bound; a NaN is a fault in the search. Neither is a number to print.
  for (auto [what, us] : {std::pair<const char *, double>{"bandwidth", b.bandwidthUs},
                          {"latency", b.latencyUs},
                          {"fan-out latency", b.fanoutLatencyUs}})
    if (!std::isfinite(us))
      return llvm::createStringError(
          llvm::Twine("the ") + what + " bound of " + stringifyCollective(collective) + " on " +
          llvm::Twine(ranks) + " ranks of " + topo.name + " is " +
          (std::isnan(us) ? "not a number" : "infinite") + "; bandwidth: " + b.bandwidthFormula +
          ", cut: " + b.cutDescription);
  return b;
}
