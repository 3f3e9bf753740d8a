//===- BlockArgs.h - What a launch tells each of its threadblocks ---------===//
#ifndef COLLRT_BLOCKARGS_H
#define COLLRT_BLOCKARGS_H

#include "collc/abi.h"
#include "collrt.h"
#include "src/Comm.h"

namespace collrt {

/// What a host and a GPU launch alike hand entry `e` of plan `p` (replica
/// e / tbs of threadblock e % tbs): its place, the data's shape, its
/// buffers and FIFOs. The caller adds the table, progress counters, peers,
/// abort flag and error report, which live in different memory on each.
inline collc::Args blockArgs(const collComm &comm, const collc::PlanDesc &plan,
                             const AlgorithmSetup &setup, int32_t p, int32_t e, int32_t replicas,
                             collDataType_t type, collRedOp_t op, int64_t count, int64_t slice,
                             char *in, char *out, char *const *scratch) {
  const int32_t i = e % plan.numThreadblocks;
  const collc::ThreadblockDesc &tb = plan.threadblocks[i];
  collc::Args a{};
  a.rank = comm.rank;
  a.nranks = comm.nranks;
  a.tb = i;
  a.shape = tb.shape;
  a.replica = e / plan.numThreadblocks;
  a.replicas = replicas;
  a.recvPeer = tb.recvPeer;
  a.sendPeer = tb.sendPeer;
  a.datatype = type;
  a.op = op;
  a.elemSize = int32_t(collTypeSize(type));
  a.count = count;
  a.slice = slice;
  a.chunks = plan.chunks;
  a.numScratch = plan.numScratch;
  a.buffers[collc::kIn] = in;
  a.buffers[collc::kOut] = out;
  for (int32_t k = 0; k < plan.numScratch; ++k) {
    a.scratchChunks[k] = plan.scratchChunks[k];
    a.buffers[collc::kScratch0 + k] = scratch[k];
  }
  a.publishes = (tb.direct & collc::kTbWaitedOn) != 0;
  a.recv = setup.recv[p][e];
  a.send = setup.send[p][e];
  return a;
}

} // namespace collrt

#endif // COLLRT_BLOCKARGS_H
