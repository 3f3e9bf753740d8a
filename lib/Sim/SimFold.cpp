//===- SimFold.cpp - Simulate one period of a plan that repeats -----------===//
//
// A shift by F GPUs maps rank r to shift(r), the rank on GPU gpus[r] + F
// (modulo the machine), or on GPU gpus[r] xor F where F is a power of two:
// rings repeat under the first, recursive doubling and halving under the
// second. The plan repeats under a shift when each threadblock has an image
// on the shifted rank that does the same: the image talks to the shifts of
// its peers (the k-th threadblock of a rank with given peers maps to the
// k-th of the shifted rank with the shifted peers, since threadblocks are
// often ordered by peer), runs the same steps, and waits on the images of
// its deps. A period P stands for the whole machine when the plan repeats
// under the shifts that generate a group moving every GPU g onto exactly
// those congruent to g modulo P: the shift by P, or the xors by P, 2P, 4P
// and on. That group moves every rank, link and flow (none is its own
// shift), which is what lets a link of the period count the flows of all
// its shifts.
//
//===----------------------------------------------------------------------===//
#include "lib/Sim/SimFold.h"

#include "llvm/ADT/STLExtras.h"

#include <map>
#include <numeric>
#include <tuple>

using namespace coll;

namespace {

/// Whether shifting every GPU by `unit` maps the machine onto itself: GPUs
/// numbered node by node, every node alike.
bool shiftsOntoItself(const Topology &topo, int64_t unit) {
  int64_t n = topo.size();
  if (topo.nodes * topo.gpusPerNode != n || n % unit)
    return false;
  for (int64_t g = 0; g < n; ++g) {
    const Gpu &a = topo.gpus[g], &b = topo.gpus[g % topo.gpusPerNode];
    if (a.node != g / topo.gpusPerNode || a.local != b.local || a.nic != b.nic)
      return false;
  }
  return true;
}

bool isPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

/// A shift of every GPU: by `by`, modulo the machine, or xor `by`.
struct Shift {
  int64_t by;
  bool xors;
};

class Folder {
public:
  Folder(const SimPlan &plan, int64_t machine) : plan(plan), machine(machine) {}

  bool index();
  /// Whether the plan repeats under every shift of `group`; fills `images`.
  bool repeatsUnder(llvm::ArrayRef<Shift> group);
  /// The ranks on GPUs below `period`, standing for all; needs `images` of
  /// the group that moves each GPU onto those congruent modulo `period`.
  std::optional<SimPlan> fold(int64_t period) const;

private:
  bool repeatsUnderOne(Shift by);
  int32_t shift(int32_t rank, Shift by) const {
    if (rank < 0)
      return -1;
    int64_t g = plan.gpus[rank];
    return rankOf[by.xors ? g ^ by.by : (g + by.by) % machine];
  }
  int32_t sendPeer(const SimPlan::Threadblock &tb) const {
    return tb.sendConn < 0 ? -1 : plan.threadblocks[plan.connections[tb.sendConn].receiver].rank;
  }
  int32_t recvPeer(const SimPlan::Threadblock &tb) const {
    return tb.recvConn < 0 ? -1 : plan.threadblocks[plan.connections[tb.recvConn].sender].rank;
  }
  bool mapImages(Shift by);
  bool matches(int32_t t, int32_t u, Shift by);

  const SimPlan &plan;
  int64_t machine;
  std::vector<int32_t> rankOf;                           // GPU -> rank, or -1
  std::vector<std::vector<int32_t>> tbsOf;               // rank -> its threadblocks
  std::vector<int32_t> image;                            // threadblock -> its image under the shift
  std::vector<std::vector<int32_t>> images;              // image, per shift of the group
  std::vector<std::pair<int32_t, int32_t>> mine, theirs; // a step's deps, compared
};

bool Folder::index() {
  rankOf.assign(machine, -1);
  for (int64_t r = 0; r < plan.ranks; ++r) {
    int64_t g = plan.gpus[r];
    if (g < 0 || g >= machine || rankOf[g] >= 0)
      return false;
    rankOf[g] = int32_t(r);
  }
  tbsOf.assign(plan.ranks, {});
  for (size_t t = 0; t < plan.threadblocks.size(); ++t)
    tbsOf[plan.threadblocks[t].rank].push_back(int32_t(t));
  return true;
}

bool Folder::mapImages(Shift by) {
  image.assign(plan.threadblocks.size(), -1);
  using Key = std::tuple<int32_t, int32_t, int32_t>; // send peer, recv peer, k-th
  for (int32_t r = 0; r < int32_t(plan.ranks); ++r) {
    int32_t s = shift(r, by);
    if (s < 0 || tbsOf[r].size() != tbsOf[s].size())
      return false;
    std::map<Key, int32_t> theirs;
    std::map<std::pair<int32_t, int32_t>, int32_t> seen;
    for (int32_t u : tbsOf[s]) {
      const SimPlan::Threadblock &tb = plan.threadblocks[u];
      std::pair<int32_t, int32_t> peers{sendPeer(tb), recvPeer(tb)};
      theirs[{peers.first, peers.second, seen[peers]++}] = u;
    }
    seen.clear();
    for (int32_t t : tbsOf[r]) {
      const SimPlan::Threadblock &tb = plan.threadblocks[t];
      std::pair<int32_t, int32_t> peers{shift(sendPeer(tb), by), shift(recvPeer(tb), by)};
      auto it = theirs.find({peers.first, peers.second, seen[peers]++});
      if (it == theirs.end())
        return false;
      image[t] = it->second;
    }
  }
  return true;
}

bool Folder::matches(int32_t t, int32_t u, Shift by) {
  const SimPlan::Threadblock &a = plan.threadblocks[t], &b = plan.threadblocks[u];
  if (a.protocol != b.protocol || a.directRecv != b.directRecv || a.steps() != b.steps() ||
      a.recvsPerLoop != b.recvsPerLoop || a.sendsPerLoop != b.sendsPerLoop)
    return false;
  // The image sends to the image of the receiver.
  if (a.sendConn >= 0 &&
      image[plan.connections[a.sendConn].receiver] != plan.connections[b.sendConn].receiver)
    return false;
  for (int32_t k = 0; k < a.steps(); ++k) {
    const SimPlan::Step &s = plan.steps[a.stepBegin + k], &z = plan.steps[b.stepBegin + k];
    if (s.receives != z.receives || s.sends != z.sends || s.access != z.access ||
        s.chunks != z.chunks || s.kind != z.kind || s.recvOrdinal != z.recvOrdinal ||
        s.sendOrdinal != z.sendOrdinal || s.depEnd - s.depBegin != z.depEnd - z.depBegin)
      return false;
    if (shift(s.peer, by) != z.peer)
      return false;
    // Deps in any order: a step waits for all of them.
    mine.clear();
    theirs.clear();
    for (int32_t d = s.depBegin; d < s.depEnd; ++d)
      mine.push_back({image[plan.deps[d].threadblock], plan.deps[d].step});
    for (int32_t d = z.depBegin; d < z.depEnd; ++d)
      theirs.push_back({plan.deps[d].threadblock, plan.deps[d].step});
    llvm::sort(mine);
    llvm::sort(theirs);
    if (mine != theirs)
      return false;
  }
  return true;
}

bool Folder::repeatsUnderOne(Shift by) {
  if (!mapImages(by))
    return false;
  for (int32_t t = 0; t < int32_t(plan.threadblocks.size()); ++t)
    if (!matches(t, image[t], by))
      return false;
  return true;
}

bool Folder::repeatsUnder(llvm::ArrayRef<Shift> group) {
  images.clear();
  for (Shift by : group) {
    if (!repeatsUnderOne(by))
      return false;
    images.push_back(std::move(image));
  }
  return true;
}

std::optional<SimPlan> Folder::fold(int64_t period) const {
  SimPlan out = plan;
  out.threadblocks.clear();
  out.steps.clear();
  out.deps.clear();
  out.connections.clear();
  out.foldGpus = period;
  // Each threadblock's stand-in: the one of the period whose image it is
  // after some shifts.
  std::vector<int32_t> standIn(plan.threadblocks.size(), -1), reached;
  for (size_t t = 0; t < plan.threadblocks.size(); ++t) {
    if (plan.gpus[plan.threadblocks[t].rank] >= period)
      continue;
    standIn[t] = int32_t(out.threadblocks.size());
    out.threadblocks.push_back(plan.threadblocks[t]);
    reached.push_back(int32_t(t));
  }
  for (size_t i = 0; i < reached.size(); ++i)
    for (const std::vector<int32_t> &moved : images)
      if (int32_t u = moved[reached[i]]; standIn[u] < 0) {
        standIn[u] = standIn[reached[i]];
        reached.push_back(u);
      }
  for (SimPlan::Threadblock &tb : out.threadblocks) {
    int32_t begin = int32_t(out.steps.size());
    for (int32_t s = tb.stepBegin; s < tb.stepEnd; ++s) {
      SimPlan::Step step = plan.steps[s];
      int32_t depBegin = int32_t(out.deps.size());
      for (int32_t d = step.depBegin; d < step.depEnd; ++d)
        out.deps.push_back({standIn[plan.deps[d].threadblock], plan.deps[d].step});
      step.depBegin = depBegin;
      step.depEnd = int32_t(out.deps.size());
      out.steps.push_back(step);
    }
    tb.stepEnd = int32_t(out.steps.size());
    tb.stepBegin = begin;
    tb.recvConn = -1;
  }
  for (size_t t = 0; t < plan.threadblocks.size(); ++t) {
    if (plan.gpus[plan.threadblocks[t].rank] >= period || plan.threadblocks[t].sendConn < 0)
      continue;
    const SimPlan::Connection &c = plan.connections[plan.threadblocks[t].sendConn];
    int32_t sender = standIn[t], receiver = standIn[c.receiver];
    if (out.threadblocks[receiver].recvConn >= 0)
      return std::nullopt;
    int32_t k = int32_t(out.connections.size());
    out.connections.push_back({sender, receiver, plan.threadblocks[c.receiver].rank});
    out.threadblocks[sender].sendConn = k;
    out.threadblocks[receiver].recvConn = k;
  }
  for (const SimPlan::Threadblock &tb : out.threadblocks)
    if (tb.recvsPerLoop && tb.recvConn < 0)
      return std::nullopt;
  return out;
}

} // namespace

std::optional<SimPlan> coll::foldPlan(const SimPlan &plan, const Topology &topo) {
  // Steps on peers' windows reach every rank of the plan at once.
  if (plan.peerSteps || plan.foldGpus || plan.ranks < 2)
    return std::nullopt;
  int64_t unit = std::lcm<int64_t>(topo.gpusPerNode, std::max(1, topo.nvlinkDomain));
  int64_t machine = topo.size();
  if (!shiftsOntoItself(topo, unit) || int64_t(plan.gpus.size()) != plan.ranks)
    return std::nullopt;
  Folder folder(plan, machine);
  if (!folder.index())
    return std::nullopt;
  for (int64_t period = unit; 2 * period <= machine; period += unit) {
    if (machine % period)
      continue;
    if (folder.repeatsUnder({Shift{period, false}}))
      return folder.fold(period);
    // The xors keep nodes and NVLink domains whole where their sizes are
    // powers of two, and stay on the machine where it is one times P.
    if (!isPowerOfTwo(unit) || !isPowerOfTwo(period) || !isPowerOfTwo(machine / period))
      continue;
    std::vector<Shift> xors;
    for (int64_t by = period; by < machine; by *= 2)
      xors.push_back({by, true});
    if (folder.repeatsUnder(xors))
      return folder.fold(period);
  }
  return std::nullopt;
}
