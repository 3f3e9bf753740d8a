//===- Memory.cpp - ncclMemAlloc, buffer and window registration ----------===//
//
// ncclMemAlloc hands out collc's memory (CUDA VMM on the GPU, shared host
// memory in the host emulation), which NCCL registers as it does its own,
// so that one buffer can be in a window of both halves.
//
//===----------------------------------------------------------------------===//
#include "nccl/Real.h"
#include "nccl/Shim.h"

using namespace collnccl;

extern "C" {

ncclResult_t ncclMemAlloc(void **ptr, size_t size) {
  if (collResult_t r = collMemAlloc(ptr, size))
    return fail(nullptr, fromColl(r), std::string("ncclMemAlloc: ") + collGetLastError(nullptr));
  return ncclSuccess;
}

ncclResult_t ncclMemFree(void *ptr) {
  if (collResult_t r = collMemFree(ptr))
    return fail(nullptr, fromColl(r), std::string("ncclMemFree: ") + collGetLastError(nullptr));
  return ncclSuccess;
}

// Registration is a hint to NCCL; collc needs none outside windows.
ncclResult_t ncclCommRegister(const ncclComm_t comm, void *buff, size_t size, void **handle) {
  if (!comm || !handle)
    return fail(comm, ncclInvalidArgument, "ncclCommRegister: an argument is NULL");
  *handle = nullptr;
  auto real = COLLNCCL_REAL(ncclCommRegister);
  return comm->real && real ? real(comm->real, buff, size, handle) : ncclSuccess;
}

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void *handle) {
  if (!comm)
    return fail(comm, ncclInvalidArgument, "ncclCommDeregister: comm is NULL");
  auto real = COLLNCCL_REAL(ncclCommDeregister);
  return comm->real && real && handle ? real(comm->real, handle) : ncclSuccess;
}

ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win,
                                    int winFlags) {
  if (!comm || !win)
    return fail(comm, ncclInvalidArgument, "ncclCommWindowRegister: an argument is NULL");
  *win = nullptr;
  auto *w = new ncclWindow_vidmem;
  if (comm->coll)
    if (collResult_t r = collCommWindowRegister(comm->coll, buff, size, &w->coll)) {
      delete w;
      return fail(comm, fromColl(r),
                  std::string("ncclCommWindowRegister: ") + collGetLastError(comm->coll));
    }
  auto real = COLLNCCL_REAL(ncclCommWindowRegister);
  if (comm->real && real)
    if (ncclResult_t r = real(comm->real, buff, size, &w->real, winFlags)) {
      if (w->coll)
        collCommWindowDeregister(comm->coll, w->coll);
      delete w;
      return fail(comm, r, "ncclCommWindowRegister: NCCL's registration failed");
    }
  *win = w;
  return ncclSuccess;
}

ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  if (!comm || !win)
    return fail(comm, ncclInvalidArgument, "ncclCommWindowDeregister: an argument is NULL");
  ncclResult_t result = ncclSuccess;
  if (win->coll)
    if (collResult_t r = collCommWindowDeregister(comm->coll, win->coll))
      result = fail(comm, fromColl(r),
                    std::string("ncclCommWindowDeregister: ") + collGetLastError(comm->coll));
  auto real = COLLNCCL_REAL(ncclCommWindowDeregister);
  if (win->real && real)
    if (ncclResult_t r = real(comm->real, win->real))
      result = r;
  delete win;
  return result;
}

} // extern "C"

COLLNCCL_PROFILING_NAME(ncclMemAlloc);
COLLNCCL_PROFILING_NAME(ncclMemFree);
COLLNCCL_PROFILING_NAME(ncclCommRegister);
COLLNCCL_PROFILING_NAME(ncclCommDeregister);
COLLNCCL_PROFILING_NAME(ncclCommWindowRegister);
COLLNCCL_PROFILING_NAME(ncclCommWindowDeregister);
