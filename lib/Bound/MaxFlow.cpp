//===- MaxFlow.cpp - Maximum flow and minimum cut (Dinic) -----------------===//
#include "lib/Bound/MaxFlow.h"

#include <algorithm>
#include <deque>
#include <limits>

using namespace coll;

int FlowNetwork::addVertex() {
  out.emplace_back();
  return size() - 1;
}

int FlowNetwork::addArc(int u, int v, double capacity) {
  int id = static_cast<int>(arcs.size());
  arcs.push_back({v, capacity, 0});
  arcs.push_back({u, 0, 0});
  out[u].push_back(id);
  out[v].push_back(id + 1);
  return id;
}

bool FlowNetwork::buildLevels(int s, int t) {
  level.assign(size(), -1);
  level[s] = 0;
  std::deque<int> queue{s};
  while (!queue.empty()) {
    int u = queue.front();
    queue.pop_front();
    for (int a : out[u])
      if (level[arcs[a].to] < 0 && residual(a) > epsilon) {
        level[arcs[a].to] = level[u] + 1;
        queue.push_back(arcs[a].to);
      }
  }
  return level[t] >= 0;
}

// One augmenting path along the level graph; `next` skips arcs that are
// saturated or lead nowhere, so a phase costs O(V E).
double FlowNetwork::push(int u, int t, double limit) {
  if (u == t)
    return limit;
  for (int &i = next[u]; i < int(out[u].size()); ++i) {
    int a = out[u][i];
    int v = arcs[a].to;
    if (level[v] != level[u] + 1 || residual(a) <= epsilon)
      continue;
    double pushed = push(v, t, std::min(limit, residual(a)));
    if (pushed > 0) {
      arcs[a].flow += pushed;
      arcs[a ^ 1].flow -= pushed;
      return pushed;
    }
  }
  return 0;
}

// An arc's flow is a signed sum of the augmentations through it, so it is
// at most the total pushed, and so is the rounding in any residual that
// can reach zero: a fraction of the total is the scale of noise. A
// tolerance from the capacities would grow with the widest arc (a GPU's
// unbounded path to its NIC) and hide every path narrower than it.
double FlowNetwork::maxFlow(int s, int t) {
  for (Arc &a : arcs)
    a.flow = 0;
  epsilon = 0;
  double total = 0;
  while (buildLevels(s, t)) {
    next.assign(size(), 0);
    while (double pushed = push(s, t, std::numeric_limits<double>::infinity())) {
      total += pushed;
      epsilon = total * kRelativeTolerance;
    }
  }
  return total;
}

std::vector<bool> FlowNetwork::sourceSide(int s) const {
  std::vector<bool> seen(size(), false);
  seen[s] = true;
  std::vector<int> stack{s};
  while (!stack.empty()) {
    int u = stack.back();
    stack.pop_back();
    for (int a : out[u])
      if (!seen[arcs[a].to] && residual(a) > epsilon) {
        seen[arcs[a].to] = true;
        stack.push_back(arcs[a].to);
      }
  }
  return seen;
}
