//===- Simulator.h - Event simulation of a plan on a topology -------------===//
//
// Runs every threadblock of a plan as the runtime does: the buffer moves in
// loops of one FIFO slot's slice per chunk, spread over the replicas of the
// plan's launch table for the size, each threadblock takes its steps
// in order, a send needs a free slot of the receiver's FIFO, a receive the
// message, a dep the other threadblock's step. Each transfer is a flow over
// the links it crosses (a GPU's NVLink or PCIe port each way, a NIC each
// way, the spine between rails), and the flows on a link share its
// bandwidth equally. A message arrives one hop latency after its last byte
// leaves. docs/simulator.md gives the model and the sources of its numbers.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_SIM_SIMULATOR_H
#define COLLC_SIM_SIMULATOR_H

#include "lib/Sim/SimPlan.h"
#include "lib/Topology/Topology.h"

#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

namespace coll {

/// The steady loop period of one plan, found once and reused: every size
/// whose loops are full slices of one launch settles on the same loops, so
/// a sweep (collc tune) finds the period at its first large size and the
/// larger sizes only scale it. Results are those of finding it each time.
/// One per plan; safe to share among threads simulating that plan.
class SimPeriods {
public:
  struct Steady {
    int64_t loops = 0; // the k of the last doubling
    double micros = 0; // time of 2k loops
    double period = 0; // what each further loop adds
  };
  using Key = std::tuple<double, int64_t, double>; // slice, replicas, thread share
  std::optional<Steady> find(const Key &key) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = steady.find(key);
    return it == steady.end() ? std::nullopt : std::optional<Steady>(it->second);
  }
  void insert(const Key &key, const Steady &s) {
    std::lock_guard<std::mutex> lock(mutex);
    steady.emplace(key, s);
  }

private:
  std::mutex mutex;
  std::map<Key, Steady> steady;
};

/// One step of one threadblock as the simulator ran it (collc viz).
struct SimSpan {
  int32_t threadblock = 0; // index into SimPlan::threadblocks
  int32_t replica = 0;
  int32_t step = 0;          // position in its threadblock
  int64_t loop = 0;          // of its replica's loops
  double start = 0, end = 0; // us from the first step
};

struct SimOptions {
  /// Bytes on the wire of one FIFO slot per protocol (Simple, LL, LL128):
  /// the runtime's defaults, which are NCCL's step sizes.
  std::array<int64_t, kNumProtocols> slotBytes = {524288, 65536, 614400};
  /// Plans of more loops run 16, 32, 64, ... loops until what each further
  /// loop adds changes by at most `settled` between two doublings; that
  /// period stands for every loop not run.
  int64_t exactLoops = 16;
  double settled = 0.01;
  /// A plan whose loops times steps stay within this many runs every loop,
  /// extrapolating none: cheap enough, and a schedule can take hundreds of
  /// loops to settle (a folded plan, SimFold.h, often fits).
  int64_t exactSteps = 1 << 20;
  /// Threads of a threadblock that moves the topology's `threadblockGBps`;
  /// one of a launch
  /// with fewer moves a proportional share.
  int64_t fullThreads = 512;
  /// Where the plan's steady periods are kept between sizes; none: found
  /// anew at each size.
  SimPeriods *periods = nullptr;
  /// Where every step's span goes, if anywhere; then every loop runs, none
  /// is extrapolated.
  std::vector<SimSpan> *trace = nullptr;
};

struct SimResult {
  double micros = 0;
  int64_t loops = 0;         // loops of the runtime for this size
  bool extrapolated = false; // not every loop was run
  int64_t replicas = 1;      // copies of the threadblocks the launch runs
};

/// How many times its size in bytes a collective's busbw counts: nccl-tests'
/// factors, 2(n-1)/n for allreduce, (n-1)/n for all-gather, reduce-scatter
/// and all-to-all, 1 for broadcast and reduce.
double busBandwidthFactor(Collective c, int64_t ranks);

/// The time of `plan` on `topo` for M = `bytes`, the bytes of a rank's larger
/// buffer (nccl-tests' size). Fails where the plan's GPUs are not on
/// `topo` or the plan stalls (a dep cycle the verifier would have refused).
llvm::Expected<SimResult> simulate(const SimPlan &plan, const Topology &topo, double bytes,
                                   const SimOptions &options = {});

} // namespace coll

#endif // COLLC_SIM_SIMULATOR_H
