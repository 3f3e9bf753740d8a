//===- SimPlan.h - A verified plan as the simulator runs it ---------------===//
//
// The threadblocks of every rank, their steps, the connections between
// them and the deps, in flat arrays: read once from a `coll.plan`, then run
// at as many message sizes as asked without touching the IR again.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_SIM_SIMPLAN_H
#define COLLC_SIM_SIMPLAN_H

#include "dialect/CollOps.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace coll {

struct SimPlan {
  /// What a step does besides its connection ends.
  enum class Access : uint8_t {
    None,     // only its connection: send, recv and their fused forms
    Local,    // local_copy, local_reduce
    LdReduce, // multimem_ld_reduce: every rank's chunk through the switch
    Store,    // multimem_st: into every rank through the switch
    Read,     // read_reduce: loads from every rank's window
    Put,      // put: stores into every rank's window
    Get,      // get: loads from one peer's window
  };
  struct Step {
    bool receives = false, sends = false;
    Access access = Access::None;
    int32_t chunks = 1;
    int32_t kind = 0;         // its operation, an index into kinds
    int32_t peer = -1;        // get's rank
    int32_t recvOrdinal = -1; // which receiving step of its threadblock's loop
    int32_t sendOrdinal = -1;
    int32_t depBegin = 0, depEnd = 0; // into deps
  };
  struct Dep {
    int32_t threadblock; // index into threadblocks
    int32_t step;        // position in that threadblock
  };
  struct Threadblock {
    int32_t rank = 0;
    int32_t protocol = 0; // coll::Protocol
    int32_t recvConn = -1, sendConn = -1;
    int32_t stepBegin = 0, stepEnd = 0;
    int32_t recvsPerLoop = 0, sendsPerLoop = 0;
    bool directRecv = false;
    int32_t steps() const { return stepEnd - stepBegin; }
  };
  /// One FIFO: the sending threadblock's k-th sending step pairs with the
  /// receiving threadblock's k-th receiving step.
  struct Connection {
    int32_t sender, receiver; // threadblocks
    int32_t to = -1;          // the receiving rank, if not the receiver's (SimFold.h)
  };
  /// From `minBytes` of input per rank on, the runtime runs `replicas`
  /// copies of every threadblock, copy j on loops j, j + replicas, ...,
  /// with connections of its own, each of `threads` threads.
  struct Launch {
    int64_t minBytes = 0, replicas = 1, threads = 512;
  };

  std::string name, algorithm;
  Collective collective = Collective::allreduce;
  int64_t ranks = 0;
  int64_t inChunks = 1, outChunks = 1;
  int64_t minBytes = 0, maxBytes = INT64_MAX; // the variant's range, input bytes per rank
  int64_t widest = 1;                         // chunks of the widest step
  int64_t slots = 8;                          // FIFO slots of every connection
  bool peerSteps = false;                     // steps on other ranks' buffers
  /// Folded (SimFold.h): only the ranks on GPUs below this many run, and
  /// stand for their shifts by it; 0: every rank runs.
  int64_t foldGpus = 0;
  std::vector<int64_t> gpus; // rank -> physical GPU
  std::vector<Threadblock> threadblocks;
  std::vector<Step> steps;
  std::vector<Dep> deps;
  std::vector<Connection> connections;
  std::vector<Launch> launches;   // by increasing minBytes; empty: one replica
  std::vector<std::string> kinds; // the steps' operations: "recv_reduce_send", ...

  /// The protocol of most threadblocks, which names the variant.
  int protocol() const;
  /// How the runtime launches `input` bytes per rank.
  Launch launchFor(double input) const {
    Launch l;
    for (const Launch &e : launches)
      if (double(e.minBytes) <= input)
        l = e;
    return l;
  }
  /// M: bytes of a rank's larger buffer -> input bytes per rank, as the
  /// variant ranges count them.
  double inputBytes(double bytes) const {
    return bytes * double(inChunks) / double(std::max(inChunks, outChunks));
  }
};

/// Reads `plan`, which coll-verify-plan has accepted: every send has its
/// receive and every dep names a step. Fails on a plan without threadblock
/// protocols (before coll-select-protocol).
llvm::Expected<SimPlan> buildSimPlan(PlanOp plan);

} // namespace coll

#endif // COLLC_SIM_SIMPLAN_H
