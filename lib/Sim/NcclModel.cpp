//===- NcclModel.cpp - NCCL's own choice of algorithm and protocol --------===//
//
// Constants are NCCL's defaults (tuning.cc, search.cc, topo.h; NCCL 2.30)
// for the GPU generation the topology's NVLink implies, and an x86 Intel
// host; they are indexed here by coll::Protocol (Simple, LL, LL128), not
// NCCL's order.
// time = latency + bytes / (1000 * algbw), as ncclTopoGetAlgoTime says.
//
//===----------------------------------------------------------------------===//
#include "lib/Sim/NcclModel.h"

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

constexpr double kIntraSpeeds[] = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                   9.0,  7.0,  6.0,  5.0,  4.0,  3.0};
constexpr double kInterSpeeds[] = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                   7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr double kIntraSpeeds90[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0,
                                     15.0, 12.0, 11.0, 6.0,  3.0};
constexpr double kInterSpeeds90[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                     15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
constexpr double kIntraSpeeds100[] = {90.0, 80.0, 70.0, 60.0, 50.0, 45.0,
                                      40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
constexpr double kInterSpeeds100[] = {96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0,
                                      20.0, 17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};

/// What NCCL's tables hold for one GPU generation; per-node columns are
/// for 1, 2 and more nodes.
struct Generation {
  const char *name;
  double perChRingLL128Bw;
  double perChTreeLL128Bw[3], perChTreeBw[3], perChNVLSTreeBw[3];
  bool nvls; // whether NCCL runs NVLS there (its efficiency is the topology's)
  llvm::ArrayRef<double> intraSpeeds, interSpeeds;
  bool sm90; // channels of 25 to 50 GB/s are not split when there are more than 4
};

// NVLink 3, 4 and 5; NVLink as NCCL counts it and LL's ceilings are the
// topology's (Topology::nvlinkCounted, maxBandwidthGBps and
// netMaxBandwidthGBps), which the simulator of collc's plans shares.
const Generation kAmpere = {"Ampere",
                            20.0,
                            {20.0, 20.0, 20.0},
                            {24.0, 23.6, 17.8},
                            {24.0, 23.6, 17.8},
                            false,
                            kIntraSpeeds,
                            kInterSpeeds,
                            false};
const Generation kHopper = {"Hopper",
                            36.7,
                            {36.7, 36.7, 29.0},
                            {38.7, 41.4, 36.0},
                            {0.0, 57.7, 45.5},
                            true,
                            kIntraSpeeds90,
                            kInterSpeeds90,
                            true};
const Generation kBlackwell = {"Blackwell",
                               40.0,
                               {55.6, 31.67, 20.0},
                               {70.0, 42.8, 24.0},
                               {0.0, 96.0, 80.0},
                               true,
                               kIntraSpeeds100,
                               kInterSpeeds100,
                               true};
const Generation *kGenerations[] = {&kAmpere, &kHopper, &kBlackwell};

constexpr int kMaxRingChannels = 32; // MAXCHANNELS / 2
constexpr int kMaxNVLSArity = 32;    // NCCL_MAX_NVLS_ARITY, src/include/device.h
// NCCL's correction of tree allreduce bandwidth, powers of two from 64 B.
constexpr double kTreeCorrection[kNumProtocols][23] = {
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6, .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6, .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0}};

int log2i(double x) { return x >= 1 ? int(std::floor(std::log2(x))) : -1; }

/// The first speed no faster than `limit`.
double firstSpeed(llvm::ArrayRef<double> speeds, double limit) {
  for (double s : speeds)
    if (s <= limit)
      return s;
  return speeds.back();
}

/// search.cc, ncclTopoCompute's second pass for the NVLS pattern: from
/// `bwIntra`, bwInter steps up the speed array while it is below twice
/// bwIntra and a NIC (`limit`) still carries it.
double raisedInterSpeed(llvm::ArrayRef<double> speeds, double bwIntra, double limit) {
  size_t i = 0;
  while (i + 1 < speeds.size() && speeds[i] > bwIntra)
    ++i;
  double inter = speeds[i];
  while (i > 0 && inter < 2 * bwIntra && speeds[i - 1] <= limit)
    inter = speeds[--i];
  return inter;
}

} // namespace

void NcclModel::searchNVLS(llvm::ArrayRef<double> speeds, double intra, double nic, int heads) {
  // search.cc, ncclTopoCompute: one channel per head GPU, at most
  // NCCL_MAX_NVLS_ARITY; on one node every GPU is a head and minChannels =
  // maxChannels ("pull evenly from all GPUs"); across nodes the heads are
  // the GPUs with a NIC (ncclTopoSearchRecNet), and more channels win.
  nvlsGraph.channels = std::min(kMaxNVLSArity, heads);
  // ncclTopoSearchTryNvls: each channel takes bwIntra from NVSwitch to every
  // GPU and back, twice for its head, so a GPU's NVLink carries channels + 1
  // times bwIntra each way; across nodes a speed above the NIC's is not
  // tried (system->maxBw).
  nvlsGraph.bw = firstSpeed(speeds, std::min(nic, intra / (nvlsGraph.channels + 1)));
  nvlsGraph.bwInter = raisedInterSpeed(speeds, nvlsGraph.bw, nic);
}

llvm::StringRef NcclModel::generationName() const { return kGenerations[generation]->name; }

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
  // The NVLink generation names the GPU's: 5 Blackwell, 4 Hopper, else Ampere.
  double perGpu = topo.nvlinkParams.bandwidthGBps;
  generation = !nvlink ? 0 : perGpu >= 900 ? 2 : perGpu >= 450 ? 1 : 0;
  const Generation &g = *kGenerations[generation];
  // LL128 only where every intra-node path is NVLink (PATH_NVB).
  ll128 = nvlink;
  netPost = topo.netPostUs;
  llMaxBwIntra = topo.maxBandwidthGBps[kLL];
  llMaxBwNet = topo.netMaxBandwidth(kLL, nNodes);
  nvls = topo.multicast && topo.nvlink == Topology::NVLinkKind::Switch && ppn >= 2 && g.nvls;
  nvlsEfficiency = topo.multicastEfficiency();

  // One GPU's bandwidth inside its node as NCCL counts it.
  double intra = topo.pcieParams.bandwidthGBps;
  if (topo.nvlink == Topology::NVLinkKind::Switch) {
    intra = topo.nvlinkParams.bandwidthGBps * topo.nvlinkCounted();
  } else if (topo.nvlink == Topology::NVLinkKind::PointToPoint) {
    double links = 0;
    for (int n : topo.nvlinkLinks[0])
      links += n;
    intra = links * topo.nvlinkParams.bandwidthGBps * topo.nvlinkCounted();
  }
  double nic = topo.netParams.bandwidthGBps;

  // Ring: the fastest speed one path carries, then as many channels as
  // the GPU's links (and, across nodes, the NICs) hold at that speed.
  if (nNodes == 1) {
    ring.bw = firstSpeed(g.intraSpeeds, intra);
    ring.channels = std::min<int>(kMaxRingChannels, std::max(1, int(intra / ring.bw)));
  } else {
    ring.bw = firstSpeed(g.interSpeeds, std::min(intra, nic));
    int viaNics = topo.nicsPerNode * std::max(1, int(nic / ring.bw));
    // search.cc: each channel enters a node from a NIC into one GPU and
    // leaves from another, so a GPU's NVLink carries a channel each way
    // only where the channel neither enters nor leaves the node there.
    int viaNvlink = kMaxRingChannels;
    if (ppn >= 2)
      while (viaNvlink > 1 &&
             (viaNvlink - (viaNvlink + int(ppn) - 1) / int(ppn)) * ring.bw > intra + 1e-9)
        --viaNvlink;
    ring.channels = std::min({kMaxRingChannels, viaNics, viaNvlink});
  }
  // ncclTopoDupChannels: fast channels are split in two.
  if (ring.bw >= 25.0 && !(g.sm90 && ring.bw < 50.0 && ring.channels > 4)) {
    int dup = std::min(2 * ring.channels, kMaxRingChannels);
    ring.bw /= double((dup + ring.channels - 1) / ring.channels);
    ring.channels = dup;
  }
  ring.bwInter = ring.bw;
  // connect.cc, ncclTopoPostset: the rings are duplicated, and on sm90 and
  // later across nodes doubled again below 16 where bwIntra > 45 GB/s;
  // MAXCHANNELS (64) at most.
  commChannelCount = std::min(64, 2 * ring.channels);
  if (generation >= 1 && nNodes > 1 && ring.bw > 45.0 && commChannelCount < 16)
    commChannelCount = std::min(64, 2 * commChannelCount);
  // The NVLS graph: sm90SpeedArrayIntra on one node, sm90SpeedArrayInter
  // across nodes (sm100 arrays on Blackwell), as ncclTopoCompute picks.
  if (nvls) {
    if (nNodes == 1)
      searchNVLS(g.intraSpeeds, intra, std::numeric_limits<double>::max(), int(ppn));
    else
      searchNVLS(
          g.interSpeeds, intra, nic,
          std::min(int(ppn), topo.nicsPerNode * std::max(1, topo.nvlinkDomain / topo.gpusPerNode)));
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
  const Generation &g = *kGenerations[generation];
  int nodesIndex = nNodes <= 2 ? nNodes - 1 : 2;
  // LL's ceiling: by GPU on one node, by host across nodes.
  double llMaxBw = nNodes == 1 ? llMaxBwIntra : llMaxBwNet;
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
      double bw = nNodes <= 2 ? graph.bw : graph.bwInter;
      if (a == kNVLS || a == kNVLSTree) {
        // ncclTopoTuneModel: at least two channels; per channel, bwIntra x
        // nvlsEfficiency (Topology::multicastEfficiency) x (nCh - 1) / nCh,
        // doubled for allreduce (two operations pipelined), against
        // bwInter (doubled for NVLS tree on two nodes) and NVLS tree's
        // perChMaxNVLSTreeBws. On an H100 node: 40 x 0.85 x 7/8 x 2 = 59.5
        // against 60, so 8 x 59.5 = 476 GB/s of busbw.
        if (graph.channels < 2)
          continue;
        double intraBw = graph.bw * nvlsEfficiency * (graph.channels - 1) / graph.channels;
        intraBw *= ar ? 2.0 : (ppn - 1) / ppn;
        double interBw = graph.bwInter * (nNodes <= 2 && a == kNVLSTree ? 2 : 1);
        bw = std::min(
            {intraBw, interBw,
             a == kNVLSTree ? g.perChNVLSTreeBw[nodesIndex] : std::numeric_limits<double>::max()});
      }
      double busBw = graph.channels * bw;
      if (a == kRing && p == kLL)
        busBw = std::min(llMaxBw, busBw * 0.5);
      if (a == kRing && p == kLL128)
        busBw = std::min(busBw * 0.92, graph.channels * g.perChRingLL128Bw);
      if (a == kTree && ar)
        busBw = std::min(busBw * 0.92, graph.channels * g.perChTreeBw[nodesIndex]);
      if (a == kTree && p == kLL)
        busBw = std::min(busBw / 3.8, llMaxBw);
      if (a == kTree && p == kLL128)
        busBw = std::min(busBw * (nNodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                         graph.channels * g.perChTreeLL128Bw[nodesIndex]);
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
          // tuning.cc: netOverhead, three times for Simple (the
          // topology's netPostUs, which collc's plans pay per post too).
          double overhead = nNodes > 1 ? netPost[p] : 0;
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
      bytes / (commChannelCount * nRanks) >= 64)
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
