//===- GpuPeers.h - Which GPUs of a machine the ranks run on --------------===//
#ifndef COLLRT_GPUPEERS_H
#define COLLRT_GPUPEERS_H

#include "collrt.h"

struct collComm;

namespace collrt {

/// Collective, once per communicator, at its first GPU launch: every rank
/// fails alike, with one message naming the pair, where two ranks that
/// share memory run on one GPU (unless COLL_SHARED_GPU=1), or where one's
/// GPU has no peer access to the other's (cuDeviceCanAccessPeer: PCIe
/// without P2P, MIG, a VM), which the FIFOs in GPU memory need. Without
/// this, one rank fails to map its peer's memory and the others time out.
collResult_t checkGpuPeers(collComm *comm);

} // namespace collrt

#endif // COLLRT_GPUPEERS_H
