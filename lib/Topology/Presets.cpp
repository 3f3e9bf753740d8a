//===- Presets.cpp - Named machines ---------------------------------------===//
//
// Numbers (docs/topology.md gives the sources): per-hop latencies and base
// latencies are NCCL's tuning constants (src/graph/tuning.cc); bandwidths are
// the vendors' per-direction figures: NVLink 4 (H100/H200) 450 GB/s per GPU,
// NVLink 3 (A100) 300 GB/s, NVLink 5 (GB200) 900 GB/s; ConnectX-7 400 Gb/s =
// 50 GB/s, ConnectX-6 200 Gb/s = 25 GB/s; PCIe Gen4 x16 about 24 GB/s.
//
//===----------------------------------------------------------------------===//
#include "lib/Topology/Topology.h"
#include "lib/Support/Names.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>

using namespace coll;

namespace {

// {Simple, LL, LL128}, µs per hop (NCCL hwLat, ring).
constexpr std::array<double, kNumProtocols> kNVLinkLat = {3.4, 0.6, 1.9};
constexpr std::array<double, kNumProtocols> kPCIeLat = {5.7, 1.0, 2.5};
constexpr std::array<double, kNumProtocols> kNetLat = {14.0, 2.7, 4.0};
constexpr int kLL = 1; // coll::Protocol::LL

Topology base(const char *name, int gpusPerNode, double nvlinkGBps, double nicGBps,
              int nicsPerNode) {
  Topology t;
  t.name = name;
  t.gpusPerNode = gpusPerNode;
  t.nvlinkDomain = gpusPerNode;
  t.nvlink = Topology::NVLinkKind::Switch;
  t.nvlinkParams = {kNVLinkLat, nvlinkGBps};
  t.pcieParams = {kPCIeLat, 24};
  t.netParams = {kNetLat, nicGBps};
  t.nicsPerNode = nicsPerNode;
  t.baseLatencyUs = {8.4, 6.6, 14.0}; // NCCL baseLat, ring
  // Payload per wire byte: LL carries 8 data bytes per 16-byte line
  // (prims_ll.h), LL128 120 per 128-byte line (prims_ll128.h; tuning.cc's
  // 0.92 "120.0/128.0").
  t.efficiency = {1.0, 0.5, 120.0 / 128.0};
  return t;
}

} // namespace

std::vector<std::string> coll::presetNames() {
  return {"hgx-h100", "hgx-h200", "dgx-a100", "pcie-8", "gb200-nvl72"};
}

llvm::Expected<Topology> coll::presetTopology(llvm::StringRef spec) {
  llvm::SmallVector<llvm::StringRef> parts;
  spec.split(parts, ':');
  llvm::StringRef name = parts[0];
  Topology t;
  if (name == "hgx-h100" || name == "hgx-h200") {
    t = base(name == "hgx-h100" ? "hgx-h100" : "hgx-h200", 8, 450, 50, 8);
    t.multicast = true; // third-generation NVSwitch: NVLS
  } else if (name == "dgx-a100") {
    t = base("dgx-a100", 8, 300, 25, 8);
  } else if (name == "pcie-8") {
    t = base("pcie-8", 8, 0, 25, 2);
    t.nvlink = Topology::NVLinkKind::None;
  } else if (name == "gb200-nvl72") {
    // 18 compute trays of 4 GPUs, all 72 on one NVLink switch domain.
    t = base("gb200-nvl72", 4, 900, 50, 4);
    t.nodes = 18;
    t.nvlinkDomain = 72;
    t.multicast = true;
  } else {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown topology preset '" + name + "'");
  }
  llvm::SmallVector<llvm::StringRef> seen;
  for (llvm::StringRef option : llvm::ArrayRef(parts).drop_front()) {
    auto [key, value] = option.split('=');
    // `nodes=2:nodes=3` would otherwise mean whichever came last.
    if (llvm::is_contained(seen, key))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "topology option '" + key + "' is given twice");
    seen.push_back(key);
    if (key == "nodes") {
      int nodes;
      if (value.getAsInteger(10, nodes) || nodes < 1 || nodes > (1 << 14))
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "nodes=" + value + " is not in 1 .. 16384");
      // NVL72 racks stay 72 GPUs wide; `nodes` counts trays there.
      t.nodes = nodes;
    } else if (key == "oversub") {
      double x;
      if (value.getAsDouble(x) || !std::isfinite(x) || x < 1)
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "oversub=" + value + " must be a number >= 1");
      t.oversubscription = x;
    } else {
      std::string hint = didYouMean(key, {"nodes", "oversub"});
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "unknown topology option '" + key + "'" +
                                         (hint.empty() ? "; expected nodes=N or oversub=X" : hint));
    }
  }
  // NCCL's llMaxBws (src/graph/tuning.cc, ncclTunerConstantsDefaults, used
  // in ncclTopoTuneModel): LL on one node by GPU generation (Ampere 87.7,
  // Hopper 141, Blackwell 2 x 141 GB/s), across nodes by host: the Intel x86
  // row, 39 GB/s with two nodes and 20.4 with more.
  double perGpu = t.nvlinkParams.bandwidthGBps;
  t.maxBandwidthGBps[kLL] = perGpu >= 900 ? 2 * 141.0 : perGpu >= 450 ? 141.0 : 87.7;
  t.netMaxBandwidthGBps[kLL] = {39.0, 20.4};
  t.nvlinkLinks.assign(t.gpusPerNode, std::vector<int>(t.gpusPerNode, 0));
  for (int n = 0; n < t.nodes; ++n)
    for (int l = 0; l < t.gpusPerNode; ++l)
      t.gpus.push_back({n, l, l * t.nicsPerNode / t.gpusPerNode});
  return t;
}
