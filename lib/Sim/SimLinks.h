//===- SimLinks.h - The links a simulated flow crosses --------------------===//
//
// The simulator's resources (each direction of a GPU's NVLink and PCIe
// port, of a NIC and of a node's uplinks to the spine, a GPU's memory, and
// the protocol ceilings NCCL's model applies to a GPU's and to an NVLink
// domain's traffic as a whole) with their capacities, NVLink at the rate
// NCCL counts, and for each step of a plan what its flow crosses:
// those resources and how many bytes of each a byte of the flow takes, its
// hop latency, its protocol's payload efficiency and one threadblock's
// ceiling. Built once per plan and topology.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_SIM_SIMLINKS_H
#define COLLC_SIM_SIMLINKS_H

#include "lib/Sim/SimPlan.h"
#include "lib/Sim/Simulator.h"
#include "lib/Topology/Topology.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace coll::sim {

// GB/s is bytes per nanosecond: 1e3 bytes per microsecond.
constexpr double kBytesPerUs = 1e3;

struct Use {
  int32_t resource;
  double weight; // bytes on the resource per byte of the flow
};

/// What one kind of step of one threadblock crosses.
struct Path {
  std::vector<Use> uses;
  double latency = 0;    // µs after the last byte
  double efficiency = 1; // payload per wire byte
  double cap = 0;        // wire bytes per µs one threadblock reaches
};

class Links {
public:
  Links(const SimPlan &plan, const Topology &topo, const SimOptions &options)
      : plan(plan), topo(topo), options(options) {}

  /// Fills `stepPath`; fails where a rank's GPU is not on the topology.
  llvm::Error build();

  std::vector<double> capacity; // per resource, bytes per µs
  std::vector<Path> paths;
  std::vector<int32_t> stepPath; // per step of the plan: its path, or -1 for none

private:
  /// A link direction (or a GPU's memory) that flows share.
  enum Kind : uint64_t {
    NvOut,
    NvIn,
    PcieOut,
    PcieIn,
    NicOut,
    NicIn,
    SpineOut,
    SpineIn,
    Link,
    Mem,
    ProtocolOut, // a GPU's payload in one protocol over NVLink or PCIe
    ProtocolIn,
    NetProtocolOut, // an NVLink domain's payload in one protocol across the network
    NetProtocolIn
  };

  int32_t resource(Kind kind, uint64_t index, double gbps);
  void addTransfer(std::vector<Use> &uses, int64_t a, int64_t b);
  void addProtocolCeiling(std::vector<Use> &uses, int64_t a, int64_t b, int p);
  int32_t pathOf(const SimPlan::Threadblock &tb, const SimPlan::Step &step);

  const SimPlan &plan;
  const Topology &topo;
  const SimOptions &options;
  int domains = 1; // NVLink domains the plan's ranks span
  llvm::DenseMap<uint64_t, int32_t> resourceIds, pathIds;
};

} // namespace coll::sim

#endif // COLLC_SIM_SIMLINKS_H
