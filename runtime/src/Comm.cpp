//===- Comm.cpp - Communicators: init, destroy, abort, errors --------------===//
#include "src/Comm.h"
#include "src/GpuLaunch.h"
#include "src/Memory.h"
#include "src/Windows.h"

#include "support/CudaDriver.h"
#include "support/Env.h"
#include "support/EnvRendezvous.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

using namespace collrt;

namespace {
/// How long closing waits for peers after a failed wait (the transports'
/// drains, otherwise COLL_TIMEOUT): enough for live peers to close in
/// step, no longer wait for one that is stopped.
constexpr double kCloseAfterFailureSeconds = 0.5;

std::mutex initErrorLock;
std::string initError;

void setInitError(const std::string &e) {
  std::lock_guard<std::mutex> lock(initErrorLock);
  initError = e;
}

// The communicators not yet destroyed or aborted, so that a second destroy
// (collCommDestroy after collCommAbort, which frees as NCCL's does) is an
// error and not a use after free.
std::mutex liveLock;
std::set<const collComm *> live;

void remember(const collComm *comm) {
  std::lock_guard<std::mutex> lock(liveLock);
  live.insert(comm);
}

/// Whether `comm` was live; it is not afterwards.
bool forget(const collComm *comm, const char *call) {
  std::lock_guard<std::mutex> lock(liveLock);
  if (live.erase(comm))
    return true;
  setInitError(std::string(call) + ": the communicator was destroyed or aborted already");
  return false;
}

/// Frees what `comm` holds, and `comm`.
void destroy(collComm *comm) {
  ContextScope device(comm->context); // its GPU memory is that context's
  if (comm->peerLost)
    comm->transport->limitClose(kCloseAfterFailureSeconds);
  collrt::releaseGpu(comm); // first: its kernels use the FIFOs
  for (auto &[alg, setup] : comm->setups) {
    comm->transport->release(setup.window);
    if (!setup.staged.base.empty())
      comm->transport->release(setup.staged);
  }
  if (comm->symmetricBytes)
    comm->transport->release(comm->symmetric);
  for (collWindow *w : comm->windows) {
    collrt::unbindWindow(w);
    comm->transport->unshare(w->window);
    collrt::holdAllocation(w->allocation, -1);
    delete w;
  }
  delete comm;
}
} // namespace

void *collComm::gpuContext() {
  if (!context)
    context = currentCudaContext();
  return context;
}

collResult_t collrt::refuse(collComm_t comm, collResult_t r, const std::string &message) {
  if (comm)
    return comm->fail(r, message);
  setInitError(message);
  return r;
}

collResult_t collrt::initComm(collComm_t *out, int nranks, collUniqueId id, int rank,
                              const PeerInfo &self) {
  if (!out)
    return refuse(nullptr, collInvalidArgument, "collCommInitRank: comm is NULL");
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    setInitError("collCommInitRank: need 0 <= rank < nranks, got rank " + std::to_string(rank) +
                 " of " + std::to_string(nranks));
    return collInvalidArgument;
  }
  *out = nullptr;
  const Env &env = Env::get();
  if (!env.error.empty()) {
    setInitError("rank " + std::to_string(rank) + ": " + env.error);
    return collInvalidArgument;
  }
  if (nranks > kMaxRanks) {
    setInitError("collCommInitRank: " + std::to_string(nranks) + " ranks; at most " +
                 std::to_string(kMaxRanks) + " can form a communicator");
    return collInvalidArgument;
  }
  UniqueIdData data;
  memcpy(&data, id.internal, sizeof data);
  auto comm = std::make_unique<collComm>();
  comm->rank = rank;
  comm->nranks = nranks;
  comm->context = currentCudaContext();
  comm->transport = std::make_unique<PeerTransports>();
  std::string error;
  collResult_t r =
      comm->bootstrap.connect(data, rank, nranks, env.timeoutSeconds, error, &comm->abortFlag);
  if (r == collSuccess)
    r = comm->transport->connect(comm->bootstrap, rank, nranks, self, env.transport,
                                 env.timeoutSeconds, error);
  if (r != collSuccess) {
    comm->transport->limitClose(kCloseAfterFailureSeconds); // the transports made so far
    setInitError("rank " + std::to_string(rank) + ": " + error);
    return r;
  }
  if (env.debug)
    fprintf(stderr, "collc INFO rank %d of %d on %s: %s\n", rank, nranks, self.host.c_str(),
            comm->transport->describe().c_str());
  remember(comm.get());
  *out = comm.release();
  return collSuccess;
}

collResult_t collrt::initFromVars(collComm_t *out,
                                  const std::function<const char *(const char *)> &get,
                                  const PeerInfo &self) {
  Rendezvous meet;
  std::string error;
  collResult_t r = rendezvousFromVars(get, meet, error);
  if (r == collSuccess && meet.rank == 0)
    r = startBootstrapRootAt(meet.id, error);
  if (r != collSuccess) {
    setInitError("collCommInitEnv: " + error);
    return r;
  }
  static std::once_flag warned; // once per process, not per communicator
  if (!meet.warning.empty())
    std::call_once(warned, [&] { fprintf(stderr, "collrt: warning: %s\n", meet.warning.c_str()); });
  collUniqueId id{};
  memcpy(id.internal, &meet.id, sizeof meet.id);
  return initComm(out, meet.nranks, id, meet.rank, self);
}

extern "C" {

const char *collGetErrorString(collResult_t r) {
  switch (r) {
  case collSuccess:
    return "no error";
  case collUnhandledCudaError:
    return "unhandled CUDA error";
  case collSystemError:
    return "system error";
  case collInternalError:
    return "internal error";
  case collInvalidArgument:
    return "invalid argument";
  case collInvalidUsage:
    return "invalid usage";
  case collRemoteError:
    return "remote error (another rank failed)";
  case collTimeout:
    return "timeout";
  case collAborted:
    return "aborted";
  default:
    return "unknown result code";
  }
}

const char *collGetLastError(collComm_t comm) {
  if (comm)
    return comm->lastError.c_str();
  std::lock_guard<std::mutex> lock(initErrorLock);
  static thread_local std::string copy;
  copy = initError;
  return copy.c_str();
}

size_t collTypeSize(collDataType_t t) {
  switch (t) {
  case collInt8:
  case collUint8:
  case collFloat8e4m3:
  case collFloat8e5m2:
    return 1;
  case collFloat16:
  case collBfloat16:
    return 2;
  case collInt32:
  case collUint32:
  case collFloat32:
    return 4;
  case collInt64:
  case collUint64:
  case collFloat64:
    return 8;
  default:
    return 0;
  }
}

collResult_t collGetUniqueId(collUniqueId *id) {
  if (!id)
    return refuse(nullptr, collInvalidArgument, "collGetUniqueId: id is NULL");
  UniqueIdData data{};
  std::string error;
  collResult_t r = startBootstrapRoot(data, error);
  if (r != collSuccess) {
    setInitError(error);
    return r;
  }
  memset(id, 0, sizeof *id);
  memcpy(id->internal, &data, sizeof data);
  return collSuccess;
}

collResult_t collCommInitRank(collComm_t *out, int nranks, collUniqueId id, int rank) {
  return initComm(out, nranks, id, rank, localPeerInfo());
}

collResult_t collCommInitEnv(collComm_t *out) {
  return initFromVars(out, [](const char *name) { return getenv(name); }, localPeerInfo());
}

collResult_t collCommDestroy(collComm_t comm) {
  if (!comm)
    return refuse(nullptr, collInvalidArgument, "collCommDestroy: comm is NULL");
  if (!forget(comm, "collCommDestroy"))
    return collInvalidUsage;
  destroy(comm);
  return collSuccess;
}

collResult_t collCommAbort(collComm_t comm) {
  if (!comm)
    return refuse(nullptr, collInvalidArgument, "collCommAbort: comm is NULL");
  {
    std::lock_guard<std::mutex> lock(liveLock);
    if (!live.count(comm)) {
      setInitError("collCommAbort: the communicator was destroyed or aborted already");
      return collInvalidUsage;
    }
  }
  // Threadblocks of a running launch read the flag while they wait.
  __atomic_store_n(&comm->abortFlag, 1, __ATOMIC_RELEASE);
  {
    std::lock_guard<std::mutex> wait(comm->launching);
  }
  collrt::abortGpu(comm);         // queued kernels stop at their next wait
  comm->transport->limitClose(0); // what was in flight is given up
  return collCommDestroy(comm);
}

collResult_t collCommCount(collComm_t comm, int *count) {
  if (!comm || !count)
    return refuse(comm, collInvalidArgument,
                  std::string("collCommCount: ") + (comm ? "count" : "comm") + " is NULL");
  *count = comm->nranks;
  return collSuccess;
}

collResult_t collCommUserRank(collComm_t comm, int *rank) {
  if (!comm || !rank)
    return refuse(comm, collInvalidArgument,
                  std::string("collCommUserRank: ") + (comm ? "rank" : "comm") + " is NULL");
  *rank = comm->rank;
  return collSuccess;
}

} // extern "C"
