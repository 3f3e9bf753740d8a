//===- SimLinks.cpp - The links a simulated flow crosses ------------------===//
#include "lib/Sim/SimLinks.h"

using namespace coll;
using namespace coll::sim;

int32_t Links::resource(Kind kind, uint64_t index, double gbps) {
  auto [it, fresh] = resourceIds.try_emplace(index << 4 | kind, int32_t(capacity.size()));
  if (fresh)
    capacity.push_back(gbps * kBytesPerUs);
  return it->second;
}

void Links::addTransfer(std::vector<Use> &uses, int64_t a, int64_t b) {
  LinkClass link = topo.linkClass(int(a), int(b));
  bool rail = topo.sameRail(int(a), int(b));
  // A folded plan's flows share the links of the period: those of a GPU
  // stand for the same links of its every shift.
  if (plan.foldGpus) {
    a %= plan.foldGpus;
    b %= plan.foldGpus;
  }
  const Gpu &ga = topo.gpus[a], &gb = topo.gpus[b];
  switch (link) {
  case LinkClass::Local:
    uses.push_back({resource(Mem, a, topo.bandwidth(int(a), int(a))), 1});
    return;
  case LinkClass::NVLink:
    if (topo.nvlink == Topology::NVLinkKind::PointToPoint) {
      uses.push_back(
          {resource(Link, uint64_t(a) * topo.size() + b, topo.bandwidth(int(a), int(b))), 1});
      return;
    }
    uses.push_back({resource(NvOut, a, topo.nvlinkParams.bandwidthGBps), 1});
    uses.push_back({resource(NvIn, b, topo.nvlinkParams.bandwidthGBps), 1});
    return;
  case LinkClass::PCIe:
    uses.push_back({resource(PcieOut, a, topo.pcieParams.bandwidthGBps), 1});
    uses.push_back({resource(PcieIn, b, topo.pcieParams.bandwidthGBps), 1});
    return;
  case LinkClass::Net: {
    double nic = topo.netParams.bandwidthGBps;
    uses.push_back({resource(NicOut, uint64_t(ga.node) * topo.nicsPerNode + ga.nic, nic), 1});
    uses.push_back({resource(NicIn, uint64_t(gb.node) * topo.nicsPerNode + gb.nic, nic), 1});
    // Between rails through the spine: a node's uplinks, thinned by
    // oversubscription.
    if (!rail) {
      double up = nic * topo.nicsPerNode / topo.oversubscription;
      uses.push_back({resource(SpineOut, ga.node, up), 1});
      uses.push_back({resource(SpineIn, gb.node, up), 1});
    }
    return;
  }
  }
}

int32_t Links::pathOf(const SimPlan::Threadblock &tb, const SimPlan::Step &step) {
  using A = SimPlan::Access;
  int64_t gpu = plan.gpus[tb.rank];
  int64_t peer = -1;
  if (step.sends) {
    const SimPlan::Connection &c = plan.connections[tb.sendConn];
    peer = plan.gpus[c.to >= 0 ? c.to : plan.threadblocks[c.receiver].rank];
  } else if (step.access == A::Get)
    peer = plan.gpus[step.peer];
  // A receive that stores or reduces what arrived costs a pass over memory,
  // unless the sender stored it in place (a direct connection).
  bool memoryPass = step.access == A::Local || (step.receives && !step.sends && !tb.directRecv);
  if (step.access == A::None && !step.sends && !memoryPass)
    return -1;
  uint64_t key = (uint64_t(gpu) << 32 | uint64_t(peer + 1) << 8 | uint64_t(step.access) << 4 |
                  uint64_t(step.sends) << 3) *
                     4 +
                 tb.protocol;
  auto [it, fresh] = pathIds.try_emplace(key, int32_t(paths.size()));
  if (!fresh)
    return it->second;
  Path path;
  int p = tb.protocol;
  // Loads and stores on memory move at the Simple rate whatever the
  // threadblock's FIFOs speak; the GPU keeps many in flight, so only the
  // barriers around the plan pay their latency.
  double perBlock = topo.threadblockGBps[int(Protocol::Simple)];
  if (step.sends) {
    perBlock = topo.threadblockGBps[p];
    addTransfer(path.uses, gpu, peer);
    path.latency = topo.latency(int(gpu), int(peer), p);
    path.efficiency = topo.efficiency[p];
    perBlock = std::min(perBlock, topo.maxBandwidthGBps[p]);
  } else if (memoryPass) {
    addTransfer(path.uses, gpu, gpu);
  } else if (step.access == A::Get) {
    addTransfer(path.uses, peer, gpu);
  } else {
    // Every rank's chunk at once: through the switch (multimem), or one
    // peer at a time through its window.
    double others = double(plan.ranks - 1);
    double nv = topo.nvlinkParams.bandwidthGBps;
    bool reads = step.access == A::LdReduce || step.access == A::Read;
    bool all = step.access == A::LdReduce || step.access == A::Store;
    path.uses.push_back({resource(reads ? NvIn : NvOut, gpu, nv), all ? 1 : others});
    for (int64_t g : plan.gpus)
      if (g != gpu || all)
        path.uses.push_back({resource(reads ? NvOut : NvIn, g, nv), 1});
  }
  path.cap = perBlock * kBytesPerUs / path.efficiency;
  paths.push_back(std::move(path));
  return it->second;
}

llvm::Error Links::build() {
  for (int64_t g : plan.gpus)
    if (g < 0 || g >= topo.size())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "plan " + plan.name + " places a rank on GPU " +
                                         llvm::Twine(g) + ", which " + topo.name + " lacks");
  stepPath.assign(plan.steps.size(), -1);
  for (const SimPlan::Threadblock &tb : plan.threadblocks)
    for (int32_t s = tb.stepBegin; s < tb.stepEnd; ++s)
      stepPath[s] = pathOf(tb, plan.steps[s]);
  return llvm::Error::success();
}
