//===- NcclModel.h - NCCL's own choice of algorithm and protocol ----------===//
//
// A model, not a measurement: NCCL's tuning formulas (src/graph/tuning.cc,
// ncclTopoTuneModel and ncclTopoGetAlgoTime) over ring, tree, NVLS, NVLS
// tree and PAT x LL, LL128 and Simple, with the constants of the GPU
// generation the topology's NVLink implies (Ampere, Hopper, Blackwell), on channel
// counts and per-channel bandwidths that approximate NCCL's graph search
// (src/graph/search.cc) on the topology. It answers which algorithm and
// protocol NCCL would pick for a size and the time NCCL itself predicts.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_SIM_NCCLMODEL_H
#define COLLC_SIM_NCCLMODEL_H

#include "dialect/CollOps.h"
#include "lib/Topology/Topology.h"

#include "llvm/ADT/ArrayRef.h"

#include <array>
#include <optional>

namespace coll {

enum class NcclAlgorithm { Tree, Ring, NVLS, NVLSTree, PAT };
constexpr int kNumNcclAlgorithms = 5;

llvm::StringRef ncclAlgorithmName(NcclAlgorithm a);

struct NcclChoice {
  NcclAlgorithm algorithm = NcclAlgorithm::Ring;
  Protocol protocol = Protocol::Simple;
  double micros = 0;
};

class NcclModel {
public:
  /// NCCL's tables for ranks on `gpus` (rank r on GPU gpus[r]) of `topo`.
  NcclModel(const Topology &topo, llvm::ArrayRef<int64_t> gpus);

  /// NCCL's predicted µs for `bytes` (nccl-tests' size: the larger of a
  /// rank's buffers), or nothing where NCCL would not use that pair.
  std::optional<double> time(Collective c, NcclAlgorithm a, Protocol p, double bytes) const;

  /// The fastest pair by NCCL's own prediction, or nothing for a
  /// collective that NCCL does not tune (all-to-all is point-to-point).
  std::optional<NcclChoice> choose(Collective c, double bytes) const;

  /// Nodes as NCCL counts them: an NVLink domain that spans trays is one.
  int nodes() const { return nNodes; }
  /// Ring channels and their per-channel GB/s, as the graph search finds.
  int ringChannels() const { return ring.channels; }
  double ringChannelGBps() const { return ring.bw; }
  /// The communicator's channels (comm->nChannels, "N coll channels" in
  /// NCCL's log): the ring graph's, duplicated as connect.cc does.
  int commChannels() const { return commChannelCount; }
  /// NVLS channels and their bwIntra / bwInter (GB/s), as the graph search
  /// finds them; no channels where NCCL would not use NVLS.
  int nvlsChannels() const { return nvls ? nvlsGraph.channels : 0; }
  double nvlsIntraGBps() const { return nvlsGraph.bw; }
  double nvlsInterGBps() const { return nvlsGraph.bwInter; }
  /// The GPU generation whose constants apply: Ampere, Hopper or Blackwell.
  llvm::StringRef generationName() const;

private:
  struct Graph {
    int channels = 0;
    double bw = 0;      // GB/s per channel inside a node (bwIntra)
    double bwInter = 0; // GB/s per channel across nodes (bwInter)
  };
  using Table = std::array<std::array<double, kNumProtocols>, kNumNcclAlgorithms>;

  void tune(Collective c);
  /// NCCL's NVLS graph search: channels and bwIntra / bwInter from `speeds`
  /// for GPUs of `intra` GB/s of NVLink, `heads` of them, bwInter no faster
  /// than `nic`.
  void searchNVLS(llvm::ArrayRef<double> speeds, double intra, double nic, int heads);

  int nRanks = 0, nNodes = 1;
  int generation = 1; // Ampere, Hopper, Blackwell
  double ppn = 1;
  bool nvlink = false, ll128 = false, nvls = false;
  double llMaxBwIntra = 0, llMaxBwNet = 0;     // LL's busbw ceilings, GB/s
  double nvlsEfficiency = 1;                   // of NVLS's bwIntra
  std::array<double, kNumProtocols> netPost{}; // µs per network step
  Graph ring, nvlsGraph;
  int commChannelCount = 0;
  std::array<Table, 6> bandwidth{}, latency{}; // per Collective: algbw GB/s, µs
};

} // namespace coll

#endif // COLLC_SIM_NCCLMODEL_H
