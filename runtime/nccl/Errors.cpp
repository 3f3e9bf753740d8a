//===- Errors.cpp - NCCL's results and messages from collc's --------------===//
#include "nccl/Real.h"
#include "nccl/Shim.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace collnccl {

namespace {
// For ncclGetLastError(NULL): the last failure of this thread.
thread_local std::string lastError;

int debugLevel() {
  static const int level = [] {
    const char *v = getenv("COLL_DEBUG");
    if (!v)
      return 0;
    return strcasecmp(v, "INFO") == 0 ? 2 : strcasecmp(v, "WARN") == 0 ? 1 : 0;
  }();
  return level;
}
} // namespace

ncclResult_t fromColl(collResult_t r) {
  switch (r) {
  case collSuccess:
    return ncclSuccess;
  case collUnhandledCudaError:
    return ncclUnhandledCudaError;
  case collSystemError:
  case collTimeout: // a wait ran out: the system, as NCCL's socket timeouts
    return ncclSystemError;
  case collInternalError:
    return ncclInternalError;
  case collInvalidArgument:
    return ncclInvalidArgument;
  case collRemoteError:
    return ncclRemoteError;
  case collInvalidUsage:
  case collAborted: // a call on an aborted communicator
  default:
    return ncclInvalidUsage;
  }
}

ncclResult_t fail(ncclComm *comm, ncclResult_t r, const std::string &message) {
  if (comm)
    comm->lastError = message;
  lastError = message;
  if (debugLevel() >= 1)
    fprintf(stderr, "collc WARN %s\n", message.c_str());
  return r;
}

bool debugInfo() { return debugLevel() >= 2; }

} // namespace collnccl

extern "C" {

const char *ncclGetErrorString(ncclResult_t result) {
  switch (result) {
  case ncclSuccess:
    return "no error";
  case ncclUnhandledCudaError:
    return "unhandled cuda error (run with COLL_DEBUG=INFO for details)";
  case ncclSystemError:
    return "unhandled system error (run with COLL_DEBUG=INFO for details)";
  case ncclInternalError:
    return "internal error - please report this issue to the collc developers";
  case ncclInvalidArgument:
    return "invalid argument (run with COLL_DEBUG=WARN for details)";
  case ncclInvalidUsage:
    return "invalid usage (run with COLL_DEBUG=WARN for details)";
  case ncclRemoteError:
    return "remote process exited or there was a network error";
  case ncclInProgress:
    return "NCCL operation in progress";
  default:
    return "unknown result code";
  }
}

const char *ncclGetLastError(ncclComm_t comm) {
  if (comm && !comm->lastError.empty())
    return comm->lastError.c_str();
  return collnccl::lastError.c_str();
}

} // extern "C"

COLLNCCL_PROFILING_NAME(ncclGetErrorString);
COLLNCCL_PROFILING_NAME(ncclGetLastError);
