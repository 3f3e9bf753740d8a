//===- CostModel.cpp - Alpha-beta time of transfers on a topology ---------===//
#include "lib/Topology/CostModel.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>

using namespace coll;

namespace {
/// A resource transfers compete for, as (kind, index): kinds are a GPU's
/// link port out / in, a NIC out / in.
enum Port : uint64_t { GpuOut, GpuIn, NicOut, NicIn };
uint64_t portKey(Port p, uint64_t index) { return index << 2 | p; }
} // namespace

double CostModel::transferTime(const Transfer &t, int protocol) const {
  return roundTime({t}, protocol);
}

double CostModel::byteCost(int from, int to) const {
  if (from == to)
    return 0;
  return 1.0 / topo.bandwidth(from, to) + topo.latency(from, to, 0) * 1e-3;
}

double CostModel::roundTime(llvm::ArrayRef<Transfer> transfers, int protocol) const {
  RoundCost cost = roundCost(transfers, protocol);
  return cost.latency + cost.busiest;
}

RoundCost CostModel::roundCost(llvm::ArrayRef<Transfer> transfers, int protocol,
                               bool receivers) const {
  // GB/s is bytes per nanosecond: 1 byte at 1 GB/s takes 1e-3 µs.
  llvm::DenseMap<uint64_t, std::pair<double, double>> load; // key -> bytes, bandwidth
  double latency = 0;
  for (const Transfer &t : transfers) {
    if (t.from == t.to || t.bytes <= 0)
      continue;
    latency = std::max(latency, topo.latency(t.from, t.to, protocol));
    double bw = topo.payloadBandwidth(t.from, t.to, protocol);
    auto add = [&](uint64_t key, double bandwidth) {
      auto &entry = load[key];
      entry.first += t.bytes;
      entry.second = bandwidth;
    };
    if (topo.linkClass(t.from, t.to) == LinkClass::Net) {
      const Gpu &a = topo.gpus[t.from], &b = topo.gpus[t.to];
      add(portKey(NicOut, uint64_t(a.node) * topo.nicsPerNode + a.nic), bw);
      if (receivers)
        add(portKey(NicIn, uint64_t(b.node) * topo.nicsPerNode + b.nic), bw);
    } else {
      add(portKey(GpuOut, t.from), bw);
      if (receivers)
        add(portKey(GpuIn, t.to), bw);
    }
  }
  double busiest = 0;
  for (auto &[key, entry] : load)
    busiest = std::max(busiest, entry.first / entry.second * 1e-3);
  return {latency, busiest};
}
