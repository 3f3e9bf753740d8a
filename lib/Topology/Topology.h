//===- Topology.h - Machines that collectives run on ----------------------===//
//
// Nodes of GPUs, the NVLink domain that joins them (NVSwitch, point-to-point
// links or none), the NICs that serve them (rails), the network above, and the
// latency and bandwidth of each class of link and protocol. Read from JSON
// (docs/topology.md) or built from a named preset.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOPOLOGY_TOPOLOGY_H
#define COLLC_TOPOLOGY_TOPOLOGY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace coll {

enum class LinkClass { Local = 0, NVLink = 1, PCIe = 2, Net = 3 };
constexpr int kNumProtocols = 3; // Simple, LL, LL128: the order of coll::Protocol

llvm::StringRef linkClassName(LinkClass c);

/// Per-hop latency (µs) of each protocol on a link class, and the link's
/// bandwidth (GB/s, one direction).
struct LinkParams {
  std::array<double, kNumProtocols> latencyUs{};
  double bandwidthGBps = 0;
};

struct Gpu {
  int node = 0;  // which node (server) it sits in
  int local = 0; // index inside the node
  int nic = 0;   // NIC (rail) inside the node that serves it
};

struct Topology {
  std::string name;
  int nodes = 1;
  int gpusPerNode = 1;
  /// GPUs that reach each other over NVLink: a node, or a rack (NVL72).
  int nvlinkDomain = 1;
  enum class NVLinkKind { None, Switch, PointToPoint } nvlink = NVLinkKind::None;
  /// The NVLink switches reduce and multicast (NVLS: Hopper and later), so
  /// multimem loads and stores reach every GPU of the domain at once.
  bool multicast = false;
  /// For point-to-point NVLink: links between local GPUs i and j.
  std::vector<std::vector<int>> nvlinkLinks;
  LinkParams nvlinkParams, pcieParams, netParams;
  int nicsPerNode = 1;
  /// Bandwidth of the network above the NICs over that of the NICs below
  /// (1 = non-blocking; 2 = 2:1 oversubscribed).
  double oversubscription = 1.0;
  /// Fixed cost of a kernel step per protocol (µs), NCCL's base latency.
  std::array<double, kNumProtocols> baseLatencyUs{};
  /// µs of a rank's proxy thread per step it posts to the network, one
  /// post at a time: NCCL's netOverhead (tuning.cc, getNetOverhead: 1 on
  /// Intel hosts, 2 on AMD), three times that for Simple, which NCCL's
  /// model counts for its rings and the simulator for every plan.
  std::array<double, kNumProtocols> netPostUs{3.0, 1.0, 1.0};
  /// Payload fraction of the wire per protocol.
  std::array<double, kNumProtocols> efficiency{};
  /// Ceiling on one GPU's payload bandwidth per protocol over NVLink or
  /// PCIe, all its connections together, each way (GB/s): LL cannot keep a
  /// fast link busy (NCCL's llMaxBw on one node, by GPU generation).
  std::array<double, kNumProtocols> maxBandwidthGBps{1e9, 1e9, 1e9};
  /// Ceiling on one NVLink domain's payload bandwidth per protocol across
  /// the network, all its GPUs together, each way (GB/s), with two domains
  /// and with more (NCCL's llMaxBw across nodes, which the host sets). For
  /// NCCL's ring a domain's traffic across the network is its busbw, so
  /// this is NCCL's cap wherever the plan is a ring.
  std::array<std::array<double, 2>, kNumProtocols> netMaxBandwidthGBps{
      {{1e9, 1e9}, {1e9, 1e9}, {1e9, 1e9}}};
  /// Payload one threadblock moves at most per protocol (GB/s): an SM, not
  /// the link, limits one channel. Simple: NCCL's symmetric-kernel model (65
  /// GB/s per block); LL128: NCCL's per-channel ring ceiling on Hopper
  /// (36.7, tuning.cc); LL: the Simple rate at half the payload per store.
  /// The simulator runs each threadblock at this rate and channel choice
  /// fills links with it.
  std::array<double, kNumProtocols> threadblockGBps{65, 32.5, 36.7};
  /// Physical GPU id -> placement.
  std::vector<Gpu> gpus;

  int size() const { return static_cast<int>(gpus.size()); }
  /// The NVLink domain of a GPU (NCCL's node: one NVL72 rack is one).
  int domainOf(int gpu) const {
    return (gpus[gpu].node * gpusPerNode + gpus[gpu].local) / std::max(1, nvlinkDomain);
  }
  /// netMaxBandwidthGBps[protocol] for a collective over `domains` NVLink
  /// domains.
  double netMaxBandwidth(int protocol, int domains) const {
    return netMaxBandwidthGBps[protocol][domains <= 2 ? 0 : 1];
  }
  /// NVLink's bandwidth as NCCL counts it, over the vendor's figure: 20 of
  /// 25 GB/s a link for NVLink 3, 20.6 of 25 for NVLink 4, 40.1 of 50 for
  /// NVLink 5 (src/graph/topo.h, SM80_NVLINK_BW, SM90_NVLINK_BW,
  /// SM100_NVLINK_BW), the generation named by a GPU's NVLink bandwidth.
  /// NCCL's model and the simulator of collc's plans both run NVLink at
  /// this fraction; the bound keeps the vendor's figure.
  double nvlinkCounted() const {
    double perGpu = nvlinkParams.bandwidthGBps;
    return perGpu >= 900 ? 40.1 / 50 : perGpu >= 450 ? 20.6 / 25 : 20.0 / 25;
  }
  /// What NVLink multicast (the switch reducing multimem loads, copying
  /// multimem stores) delivers of the counted NVLink: 0.85 on Hopper (NVLink
  /// 4), 0.74 on Blackwell (NVLink 5), NCCL's nvlsEfficiency
  /// (src/graph/tuning.cc, ncclTopoTuneModel). NCCL's model of NVLS and the
  /// simulator's multimem steps both run at it; 1 where NVLink has none.
  double multicastEfficiency() const {
    double perGpu = nvlinkParams.bandwidthGBps;
    return perGpu >= 900 ? 0.74 : perGpu >= 450 ? 0.85 : 1.0;
  }
  LinkClass linkClass(int a, int b) const;
  /// Bandwidth (GB/s) of a lone transfer from GPU a to GPU b.
  double bandwidth(int a, int b) const;
  /// Payload bandwidth (GB/s) of protocol p from a to b.
  double payloadBandwidth(int a, int b, int protocol) const {
    return std::min(bandwidth(a, b) * efficiency[protocol], maxBandwidthGBps[protocol]);
  }
  /// Per-hop latency (µs) of protocol p between a and b.
  double latency(int a, int b, int protocol) const;
  /// Whether a and b are on different nodes but the same rail.
  bool sameRail(int a, int b) const { return gpus[a].nic == gpus[b].nic; }
  /// Whether GPUs a and b are in one NVLink domain whose switches multicast.
  bool sharesMulticast(int a, int b) const {
    return multicast && linkClass(a, b) <= LinkClass::NVLink;
  }
  /// One NVLink switch joins a and b: each can load from and store to the
  /// other's memory (peer windows, NCCL's LSA).
  bool sharesPeerWindows(int a, int b) const {
    return nvlink == NVLinkKind::Switch && linkClass(a, b) <= LinkClass::NVLink;
  }
  /// LL128 needs 128-byte stores that arrive whole and in order: NVLink only.
  bool allowsLL128(int a, int b) const { return linkClass(a, b) <= LinkClass::NVLink; }
};

/// Limits on a JSON topology, checked before it is parsed: the text's size
/// and how deeply arrays and objects nest (a real one nests 4 deep).
constexpr size_t kMaxTopologyBytes = size_t(16) << 20;
constexpr int kMaxTopologyNesting = 64;

/// Parses the JSON form; errors name the line and column or the JSON path.
/// Unknown keys, non-finite numbers and misshapen matrices are errors.
llvm::Expected<Topology> parseTopology(llvm::StringRef json);

/// A preset by name, with options: `hgx-h100`, `hgx-h200`, `dgx-a100`,
/// `pcie-8`, `gb200-nvl72`, each taking `:nodes=N` (and `:oversub=X`).
llvm::Expected<Topology> presetTopology(llvm::StringRef spec);

/// The names `presetTopology` accepts.
std::vector<std::string> presetNames();

/// `spec` is a preset name or the path of a JSON file.
llvm::Expected<Topology> loadTopology(llvm::StringRef spec);

} // namespace coll

#endif // COLLC_TOPOLOGY_TOPOLOGY_H
