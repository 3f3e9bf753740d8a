//===- NcclModel.cpp - NCCL's own choice of algorithm and protocol --------===//
//
// Constants are NCCL's defaults for Hopper (tuning.cc, NCCL 2.2x-2.30),
// indexed here by coll::Protocol (Simple, LL, LL128), not NCCL's order.
// time = latency + bytes / (1000 * algbw), as ncclTopoGetAlgoTime says.
//
//===----------------------------------------------------------------------===//
#include "lib/Synthesis/NcclModel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

using namespace coll;

namespace {

using Row = std::array<double, kNumProtocols>; // Simple, LL, LL128
constexpr int kTree = 0, kRing = 1, kNVLS = 2, kNVLSTree = 3, kPAT = 4;
constexpr int kSimple = int(Protocol::Simple), kLL = int(Protocol::LL),
              kLL128 = int(Protocol::LL128);

// baseLat per algorithm (µs).
constexpr Row kBaseLat[kNumNcclAlgorithms] = {
    {8.4, 6.8, 14.0}, {8.4, 6.6, 14.0}, {0, 0, 0}, {0, 0, 0}, {8.0, 8.0, 8.0}};
// hwLat per link kind and algorithm (µs per hop).
enum Hw { HwNVLink, HwPCI, HwNet };
constexpr Row kHwLat[3][kNumNcclAlgorithms] = {
    {{4.0, 0.6, 1.25}, {3.4, 0.6, 1.9}, {25, 0, 0}, {25, 0, 0}, {4.0, 0, 0}},
    {{4.0, 1.0, 1.9}, {5.7, 1.0, 2.5}, {0, 0, 0}, {0, 0, 0}, {4.0, 0, 0}},
    {{14, 5.0, 8.5}, {14.0, 2.7, 4.0}, {18, 0, 0}, {20.9, 0, 0}, {14, 0, 0}}};
// Hopper, by nodes (1, 2, more).
constexpr double kLLMaxBw[3] = {141.0, 45.0, 35.0};
constexpr double kPerChRingLL128Bw = 36.7;
constexpr double kPerChTreeLL128Bw[3] = {36.7, 36.7, 29.0};
constexpr double kPerChTreeBw[3] = {38.7, 41.4, 36.0};
constexpr double kPerChNVLSTreeBw[3] = {0.0, 57.7, 45.5};
constexpr double kNVLSEfficiency = 0.85;
// NCCL counts an NVLink 4 link at 20.6 GB/s (SM90_NVLINK_BW) of its 25.
constexpr double kNVLinkCounted = 20.6 / 25.0;
// Network post overhead (µs), Intel hosts; three times that for Simple.
constexpr double kNetOverhead = 1.0;
// Speeds the graph search tries per channel (GB/s), Hopper.
constexpr double kIntraSpeeds[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
constexpr double kInterSpeeds[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                   15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr int kMaxRingChannels = 32; // MAXCHANNELS / 2
constexpr int kMaxNVLSArity = 32;
// NCCL's correction of tree allreduce bandwidth, powers of two from 64 B.
constexpr double kTreeCorrection[kNumProtocols][23] = {
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0}};

int log2i(double x) { return x >= 1 ? int(std::floor(std::log2(x))) : -1; }

/// The first speed no faster than `limit`.
template <size_t N> double firstSpeed(const double (&speeds)[N], double limit) {
  for (double s : speeds)
    if (s <= limit)
      return s;
  return speeds[N - 1];
}

} // namespace

llvm::StringRef coll::ncclAlgorithmName(NcclAlgorithm a) {
  static const char *names[] = {"tree", "ring", "nvls", "nvls_tree", "pat"};
  return names[int(a)];
}

NcclModel::NcclModel(const Topology &topo, llvm::ArrayRef<int64_t> gpus) {
  nRanks = int(gpus.size());
  // NCCL counts one NVLink domain spanning trays (MNNVL, NVL72) as a node.
  std::set<int> nodeSet;
  for (int64_t g : gpus) {
    const Gpu &gpu = topo.gpus[g];
    bool domain = topo.nvlink == Topology::NVLinkKind::Switch;
    nodeSet.insert(domain ? (gpu.node * topo.gpusPerNode + gpu.local) / topo.nvlinkDomain
                          : gpu.node);
  }
  nNodes = std::max<int>(1, int(nodeSet.size()));
  ppn = double(nRanks) / nNodes;
  nvlink = topo.nvlink != Topology::NVLinkKind::None;
  // LL128 only where every intra-node path is NVLink (PATH_NVB).
  ll128 = nvlink;
  nvls = topo.multicast && topo.nvlink == Topology::NVLinkKind::Switch && ppn >= 2;

  // One GPU's bandwidth inside its node as NCCL counts it.
  double intra = topo.pcieParams.bandwidthGBps;
  if (topo.nvlink == Topology::NVLinkKind::Switch) {
    intra = topo.nvlinkParams.bandwidthGBps * kNVLinkCounted;
  } else if (topo.nvlink == Topology::NVLinkKind::PointToPoint) {
    double links = 0;
    for (int n : topo.nvlinkLinks[0])
      links += n;
    intra = links * topo.nvlinkParams.bandwidthGBps * kNVLinkCounted;
  }
  double nic = topo.netParams.bandwidthGBps;

  // Ring: the fastest speed one path carries, then as many channels as
  // the GPU's links (and, across nodes, the NICs) hold at that speed.
  if (nNodes == 1) {
    ring.bw = firstSpeed(kIntraSpeeds, intra);
    ring.channels = std::min<int>(kMaxRingChannels, std::max(1, int(intra / ring.bw)));
  } else {
    ring.bw = firstSpeed(kInterSpeeds, std::min(intra, nic));
    int viaNics = topo.nicsPerNode * std::max(1, int(nic / ring.bw));
    ring.channels = std::min({kMaxRingChannels, viaNics, std::max(1, int(intra / ring.bw))});
  }
  // ncclTopoDupChannels: fast channels are split in two.
  if (ring.bw >= 25.0 && !(ring.bw < 50.0 && ring.channels > 4)) {
    int dup = std::min(2 * ring.channels, kMaxRingChannels);
    ring.bw /= double((dup + ring.channels - 1) / ring.channels);
    ring.channels = dup;
  }
  // NVLS: one channel per local GPU, which pulls evenly from all of them.
  if (nvls) {
    nvlsGraph.channels = std::min<int>(kMaxNVLSArity, int(ppn));
    nvlsGraph.bw =
        firstSpeed(kIntraSpeeds, intra * ppn / (ppn - 1) / double(nvlsGraph.channels));
  }
  for (int c = 0; c <= int(Collective::reduce); ++c)
    tune(Collective(c));
}

void NcclModel::tune(Collective coll) {
  Table &bws = bandwidth[int(coll)], &lats = latency[int(coll)];
  bool ar = coll == Collective::allreduce;
  bool agrs = coll == Collective::allgather || coll == Collective::reducescatter;
  bool rooted = coll == Collective::broadcast || coll == Collective::reduce;
  if (coll == Collective::alltoall)
    return;
  int nodesIndex = nNodes <= 2 ? nNodes - 1 : 2;
  int nsteps = ar ? 2 * (nRanks - 1) : agrs ? nRanks - 1 : nRanks;
  Hw intraHw = nvlink ? HwNVLink : HwPCI;
  Hw hw = nNodes == 1 ? intraHw : HwNet;
  for (int a = 0; a < kNumNcclAlgorithms; ++a) {
    if (rooted && a != kRing)
      continue;
    if (agrs && a != kPAT && a != kRing && a != kNVLS)
      continue;
    if (ar && a == kPAT)
      continue;
    if ((a == kNVLS || a == kNVLSTree) && !nvls)
      continue;
    // NVLS across nodes needs CollNet (off); NVLS tree needs several nodes.
    if ((a == kNVLS && nNodes > 1) || (a == kNVLSTree && nNodes == 1))
      continue;
    // PAT: one GPU per node.
    if (a == kPAT && nNodes != nRanks)
      continue;
    const Graph &graph = a == kNVLS || a == kNVLSTree ? nvlsGraph : ring;
    for (int p = 0; p < kNumProtocols; ++p) {
      if ((a == kNVLS || a == kNVLSTree || a == kPAT) && p != kSimple)
        continue;
      if (p == kLL128 && !ll128)
        continue;
      double bw = graph.bw;
      if (a == kNVLS || a == kNVLSTree) {
        if (graph.channels < 2)
          continue;
        double intraBw = graph.bw * kNVLSEfficiency * (graph.channels - 1) / graph.channels;
        intraBw *= ar ? 2.0 : (ppn - 1) / ppn;
        double interBw = (a == kNVLSTree ? ring.bw : graph.bw) *
                         (nNodes <= 2 && a == kNVLSTree ? 2 : 1);
        bw = std::min({intraBw, interBw,
                       a == kNVLSTree ? kPerChNVLSTreeBw[nodesIndex]
                                      : std::numeric_limits<double>::max()});
      }
      double busBw = graph.channels * bw;
      if (a == kRing && p == kLL)
        busBw = std::min(kLLMaxBw[nodesIndex], busBw * 0.5);
      if (a == kRing && p == kLL128)
        busBw = std::min(busBw * 0.92, graph.channels * kPerChRingLL128Bw);
      if (a == kTree && ar)
        busBw = std::min(busBw * 0.92, graph.channels * kPerChTreeBw[nodesIndex]);
      if (a == kTree && p == kLL)
        busBw = std::min(busBw / 3.8, kLLMaxBw[nodesIndex]);
      if (a == kTree && p == kLL128)
        busBw = std::min(busBw * (nNodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                         graph.channels * kPerChTreeLL128Bw[nodesIndex]);
      if (a == kPAT)
        busBw *= 0.75;
      // Bus bandwidth to algorithm bandwidth, except where NCCL leaves it.
      if (!(a != kRing && agrs))
        busBw *= a == kRing || a == kNVLS || a == kNVLSTree ? double(nRanks) / nsteps : 0.5;
      bws[a][p] = busBw;

      double lat = kBaseLat[a][p];
      double intraLat = kHwLat[intraHw][a][p];
      double interLat = ppn == 1 ? kHwLat[HwNet][kTree][p] : kHwLat[HwNet][a][p];
      if (a == kRing) {
        if (rooted) {
          lat += kHwLat[hw][kRing][p];
        } else {
          double overhead = nNodes > 1 ? kNetOverhead * (p == kSimple ? 3 : 1) : 0;
          intraLat = std::max(intraLat, overhead);
          int inter = nNodes == 1 ? 0 : ar ? 2 * (nNodes - 1) : nNodes - 1;
          lat += (nsteps - inter) * intraLat + inter * interLat;
        }
      } else if (a == kTree) {
        lat += 2 * ((ppn - 1) * intraLat + log2i(nNodes) * interLat);
      } else if (a == kNVLS) {
        lat = intraLat + (nNodes > 1 ? interLat : 0);
      } else if (a == kNVLSTree) {
        lat += intraLat + 2 * log2i(nNodes) * interLat;
      } else if (a == kPAT) {
        lat += log2i(nNodes) * (interLat / 3.5) + nRanks * 2.8;
      }
      lats[a][p] = lat;
    }
  }
}

std::optional<double> NcclModel::time(Collective c, NcclAlgorithm algorithm, Protocol protocol,
                                      double bytes) const {
  int a = int(algorithm), p = int(protocol);
  double bw = bandwidth[int(c)][a][p], lat = latency[int(c)][a][p];
  if (bw <= 0)
    return std::nullopt;
  int logSize = log2i(bytes / 64);
  if (a == kTree && c == Collective::allreduce && logSize >= 0 && logSize < 23)
    bw *= kTreeCorrection[p][logSize];
  // The plateau of multi-node rings.
  if (a == kRing && p == kSimple && nNodes > 1 && c == Collective::allreduce &&
      bytes / (ring.channels * nRanks) >= 64)
    lat *= 1.4;
  return lat + bytes / (1000 * bw);
}

std::optional<NcclChoice> NcclModel::choose(Collective c, double bytes) const {
  std::optional<NcclChoice> best;
  for (int a = 0; a < kNumNcclAlgorithms; ++a)
    for (int p = 0; p < kNumProtocols; ++p)
      if (std::optional<double> t = time(c, NcclAlgorithm(a), Protocol(p), bytes))
        if (!best || *t < best->micros)
          best = NcclChoice{NcclAlgorithm(a), Protocol(p), *t};
  return best;
}
