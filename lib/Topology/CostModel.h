//===- CostModel.h - Alpha-beta time of transfers on a topology -----------===//
//
// time = per-hop latency (α, by link class and protocol) + bytes / (link
// bandwidth (β) x protocol payload efficiency), where transfers that run at
// once divide the bandwidth of each resource they share: a GPU's NVLink or
// PCIe port in each direction, and a NIC in each direction. Numbers come from
// the topology (docs/topology.md lists their sources).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOPOLOGY_COSTMODEL_H
#define COLLC_TOPOLOGY_COSTMODEL_H

#include "lib/Topology/Topology.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace coll {

struct Transfer {
  int from, to; // physical GPUs
  double bytes;
};

/// The time of a round as a line in its bytes: `latency` plus `busiest`
/// times a scale of every transfer's bytes.
struct RoundCost {
  double latency; // µs, the slowest transfer's
  double busiest; // µs, the most loaded resource's bytes over its bandwidth
};

class CostModel {
public:
  explicit CostModel(const Topology &topology) : topo(topology) {}

  /// Microseconds for one transfer alone.
  double transferTime(const Transfer &t, int protocol) const;

  /// Microseconds for transfers that start together: the slowest latency
  /// plus, over every shared resource, its bytes over its bandwidth.
  double roundTime(llvm::ArrayRef<Transfer> transfers, int protocol) const;
  /// The two terms of roundTime, for callers that scale the bytes; without
  /// `receivers`, only the sending side of each transfer loads a resource.
  RoundCost roundCost(llvm::ArrayRef<Transfer> transfers, int protocol,
                      bool receivers = true) const;

  /// A relative cost of moving one byte between two GPUs, for placement.
  double byteCost(int from, int to) const;

private:
  const Topology &topo;
};

} // namespace coll

#endif // COLLC_TOPOLOGY_COSTMODEL_H
