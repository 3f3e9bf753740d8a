//===- Comm.h - A communicator: one rank's view of the group --------------===//
#ifndef COLLRT_COMM_H
#define COLLRT_COMM_H

#include "collc/abi.h"
#include "collrt.h"
#include "support/Bootstrap.h"
#include "transport/PeerTransports.h"

#include <functional>
#include <map>
#include <mutex>
#include <memory>
#include <string>
#include <vector>

namespace collrt {

/// The FIFOs of one algorithm on this rank, made at its first launch.
struct AlgorithmSetup {
  Window window;
  // GPU plans across machines: the FIFOs of the pairs a proxy joins, in
  // pinned host memory (the rest stay in `window`, GPU memory); empty
  // elsewhere.
  Window staged;
  // Per plan, per replica and threadblock of the table (replica-major):
  // its receive and send FIFOs (meaningful for this rank's only).
  std::vector<std::vector<collc::Fifo>> recv, send;
};

struct GpuState; // GpuLaunch.cpp

} // namespace collrt

struct collWindow;

struct collComm {
  int rank = 0, nranks = 0;
  collrt::Bootstrap bootstrap;
  std::unique_ptr<collrt::PeerTransports> transport; // one per peer
  std::string lastError;
  // Whether a wait of this communicator failed: a peer may be stopped or
  // dead, and destroying it then waits for the peers only briefly.
  bool peerLost = false;
  volatile int32_t abortFlag = 0;
  std::mutex launching; // held by a launch; abort waits for it to stop
  std::map<const collc::AlgorithmDesc *, collrt::AlgorithmSetup> setups;
  std::vector<const collc::AlgorithmDesc *> registered;
  std::vector<std::vector<char>> scratch; // grown as launches need
  collrt::Window symmetric;               // peer-step plans: every rank's buffers
  size_t symmetricBytes = 0;
  std::vector<char> staging;         // input copies for in-place mismatches
  std::vector<collWindow *> windows; // registered by the user, owned here
  collrt::GpuState *gpu = nullptr;   // made by the first GPU launch
  bool gpuPeersChecked = false;      // by the first GPU launch (GpuPeers.h)
  // The CUDA context current at init, or at the first GPU launch where
  // there was none: every call of the communicator runs in it.
  void *context = nullptr;

  /// `context`, the calling thread's current one where still unknown.
  void *gpuContext();

  collResult_t fail(collResult_t r, std::string message) {
    lastError = std::move(message);
    peerLost |= r == collTimeout || r == collRemoteError || r == collAborted;
    return r;
  }
};

namespace collrt {
/// collCommInitRank for a rank that tells its peers `self`.
collResult_t initComm(collComm_t *out, int nranks, collUniqueId id, int rank, const PeerInfo &self);
/// Fails with `r`, leaving `message` where collGetLastError(comm) finds it:
/// on `comm`, or where collGetLastError(NULL) does when there is none, so
/// that no refusal leaves the text of an earlier failure in place.
collResult_t refuse(collComm_t comm, collResult_t r, const std::string &message);
/// Whether collLaunch of `alg` would run this call's count, type and op on
/// this communicator, with nothing done and no error kept; if not, `why`.
bool planRuns(collComm *comm, const collc::AlgorithmDesc *alg, size_t count,
              collDataType_t datatype, collRedOp_t op, std::string &why);
/// collCommInitEnv with the variables `get` reads (EnvRendezvous.h).
collResult_t initFromVars(collComm_t *out, const std::function<const char *(const char *)> &get,
                          const PeerInfo &self);
} // namespace collrt

#endif // COLLRT_COMM_H
