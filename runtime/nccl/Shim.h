//===- Shim.h - One nccl.h communicator: collc's and the real NCCL's ------===//
#ifndef COLLNCCL_SHIM_H
#define COLLNCCL_SHIM_H

#include "collrt.h"
#include "nccl/Plans.h"

#include <nccl.h>
#include <string>
#include <vector>

/// What an ncclComm_t of the shim points to. Either half may be missing:
/// `coll` where collc could not make a communicator (every call then goes
/// to NCCL), `real` where no NCCL is loaded (calls without a plan fail).
struct ncclComm {
  collComm_t coll = nullptr;
  ncclComm_t real = nullptr;
  int rank = 0, nranks = 0;
  std::vector<collnccl::Plan> plans; // those for this rank count
  std::string lastError;
};

/// The windows of both halves of ncclCommWindowRegister.
struct ncclWindow_vidmem {
  collWindow_t coll = nullptr;
  ncclWindow_t real = nullptr;
};

/// NCCL's profiling name of `fn` (pnccl...), which tools that wrap NCCL
/// call; after the definition of `fn`, in its file.
#define COLLNCCL_PROFILING_NAME(fn) extern "C" decltype(fn) p##fn __attribute__((alias(#fn)))

namespace collnccl {

/// collc's result as NCCL's.
ncclResult_t fromColl(collResult_t r);
/// Fails with `r`, keeping `message` for ncclGetLastError(comm) (and for
/// ncclGetLastError(NULL) on this thread), printed under COLL_DEBUG=WARN/INFO.
ncclResult_t fail(ncclComm *comm, ncclResult_t r, const std::string &message);
/// Whether COLL_DEBUG asks for a line per call.
bool debugInfo();
/// Finds this rank count's plans and opens the real NCCL's half of `comm`
/// over collc's bootstrap (rank 0 makes its unique id).
ncclResult_t joinReal(ncclComm *comm, ncclConfig_t *config);
/// collc's half of `comm` from `id`; false and a kept reason where it fails.
bool joinColl(ncclComm *comm, const collUniqueId &id);

} // namespace collnccl

#endif // COLLNCCL_SHIM_H
