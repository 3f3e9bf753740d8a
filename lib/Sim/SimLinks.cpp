//===- SimLinks.cpp - The links a simulated flow crosses ------------------===//
#include "lib/Sim/SimLinks.h"

#include "llvm/ADT/DenseSet.h"

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
    // At the rate NCCL's model counts NVLink (Topology::nvlinkCounted).
    if (topo.nvlink == Topology::NVLinkKind::PointToPoint) {
      uses.push_back({resource(Link, uint64_t(a) * topo.size() + b,
                               topo.bandwidth(int(a), int(b)) * topo.nvlinkCounted()),
                      1});
      return;
    }
    uses.push_back({resource(NvOut, a, topo.nvlinkParams.bandwidthGBps * topo.nvlinkCounted()), 1});
    uses.push_back({resource(NvIn, b, topo.nvlinkParams.bandwidthGBps * topo.nvlinkCounted()), 1});
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

/// NCCL's model caps a protocol's busbw as a whole, not per channel (LL at
/// llMaxBw). For NCCL's ring that busbw is what each GPU sends over NVLink
/// on one node, and what each NVLink domain sends across the network on
/// several; so the cap is a resource of the GPU, or of the domain, that
/// every flow of the protocol shares, in payload bytes (a flow's wire bytes
/// weigh its efficiency).
void Links::addProtocolCeiling(std::vector<Use> &uses, int64_t a, int64_t b, int p) {
  LinkClass link = topo.linkClass(int(a), int(b));
  bool net = link == LinkClass::Net;
  double cap = net ? topo.netMaxBandwidth(p, domains) : topo.maxBandwidthGBps[p];
  if (link == LinkClass::Local || cap >= 1e9)
    return;
  // A folded plan's GPUs (and so their domains) stand for their every shift.
  if (plan.foldGpus) {
    a %= plan.foldGpus;
    b %= plan.foldGpus;
  }
  uint64_t from = net ? uint64_t(topo.domainOf(int(a))) : uint64_t(a);
  uint64_t to = net ? uint64_t(topo.domainOf(int(b))) : uint64_t(b);
  double weight = topo.efficiency[p];
  uses.push_back(
      {resource(net ? NetProtocolOut : ProtocolOut, from * kNumProtocols + p, cap), weight});
  uses.push_back({resource(net ? NetProtocolIn : ProtocolIn, to * kNumProtocols + p, cap), weight});
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
    addProtocolCeiling(path.uses, gpu, peer, p);
    path.latency = topo.latency(int(gpu), int(peer), p);
    // Across NVLink domains a proxy posts each step to the network: as
    // NCCL's model does for its rings (tuning.cc, netOverhead), no hop of
    // the plan is faster than one post.
    if (domains > 1)
      path.latency = std::max(path.latency, topo.netPostUs[p]);
    path.efficiency = topo.efficiency[p];
  } else if (memoryPass) {
    addTransfer(path.uses, gpu, gpu);
  } else if (step.access == A::Get) {
    addTransfer(path.uses, peer, gpu);
  } else {
    // Every rank's chunk at once: through the switch (multimem), or one
    // peer at a time through its window.
    // Through the switch, at what NVLS makes of the links (as NCCL's
    // model counts its NVLS): a multimem byte weighs 1 / efficiency.
    double others = double(plan.ranks - 1);
    double nv = topo.nvlinkParams.bandwidthGBps * topo.nvlinkCounted();
    bool reads = step.access == A::LdReduce || step.access == A::Read;
    bool all = step.access == A::LdReduce || step.access == A::Store;
    const double weight = all ? 1 / topo.multicastEfficiency() : 1;
    path.uses.push_back({resource(reads ? NvIn : NvOut, gpu, nv), all ? weight : others});
    for (int64_t g : plan.gpus)
      if (g != gpu || all)
        path.uses.push_back({resource(reads ? NvOut : NvIn, g, nv), weight});
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
  llvm::SmallDenseSet<int, 16> seen;
  for (int64_t g : plan.gpus)
    seen.insert(topo.domainOf(int(g)));
  domains = std::max(1, int(seen.size()));
  stepPath.assign(plan.steps.size(), -1);
  for (const SimPlan::Threadblock &tb : plan.threadblocks)
    for (int32_t s = tb.stepBegin; s < tb.stepEnd; ++s)
      stepPath[s] = pathOf(tb, plan.steps[s]);
  return llvm::Error::success();
}
