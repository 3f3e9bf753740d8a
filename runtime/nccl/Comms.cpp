//===- Comms.cpp - Communicators: init, split, destroy, queries -----------===//
//
// Each ncclComm_t holds a collc communicator and, where a real NCCL is
// loaded, one of NCCL's over the same ranks, made at init through collc's
// bootstrap, so that a call without a plan can go to NCCL at any time.
//
//===----------------------------------------------------------------------===//
#include "nccl/Real.h"
#include "nccl/Shim.h"

#include "collc/abi.h"
#include "src/Comm.h"
#include "src/GpuLaunch.h"

#include <algorithm>
#include <cstring>
#include <tuple>

using namespace collnccl;

static_assert(sizeof(ncclUniqueId) == sizeof(collUniqueId), "unique ids differ in size");

namespace collnccl {

bool joinColl(ncclComm *comm, const collUniqueId &id) {
  if (collResult_t r = collCommInitRank(&comm->coll, comm->nranks, id, comm->rank)) {
    fail(comm, fromColl(r), std::string("collc: ") + collGetLastError(nullptr));
    return false;
  }
  for (const Plan &p : planLibraries())
    if (p.algorithm->numPlans > 0 && p.algorithm->plans[0].ranks == comm->nranks) {
      comm->plans.push_back(p);
      // nvcc's builds: their kernels now, before any can spin; where they
      // do not load, the launch says why.
      if (!p.algorithm->plans[0].hostKernel)
        collrt::loadKernels(comm->coll, p.algorithm);
    }
  comm->coll->lastError.clear();
  if (debugInfo() && comm->rank == 0) {
    for (const std::string &problem : planProblems())
      fprintf(stderr, "collc WARN COLL_PLAN_PATH: %s\n", problem.c_str());
    fprintf(stderr, "collc INFO communicator of %d ranks: %zu plan(s) for %d ranks%s%s\n",
            comm->nranks, comm->plans.size(), comm->nranks, RealNccl::get() ? ", NCCL from " : "; ",
            RealNccl::get() ? RealNccl::get()->path().c_str() : RealNccl::why().c_str());
  }
  return true;
}

ncclResult_t joinReal(ncclComm *comm, ncclConfig_t *config) {
  // Every rank says whether it has NCCL; rank 0 adds NCCL's unique id. NCCL
  // joins only where every rank has it, so that no rank waits alone.
  auto getId = COLLNCCL_REAL(ncclGetUniqueId);
  auto init = COLLNCCL_REAL(ncclCommInitRankConfig);
  std::string mine = getId && init ? "1" : "0";
  ncclUniqueId id;
  if (comm->rank == 0 && mine == "1" && getId(&id) == ncclSuccess)
    mine.append(id.internal, sizeof id.internal);
  std::vector<std::string> all;
  std::string error;
  if (collResult_t r = comm->coll->bootstrap.allgather(mine, all, error))
    return fail(comm, fromColl(r), "collc: bootstrap: " + error);
  bool everyone = all[0].size() == 1 + sizeof id.internal;
  for (const std::string &s : all)
    everyone &= !s.empty() && s[0] == '1';
  if (!everyone)
    return ncclSuccess;
  memcpy(id.internal, all[0].data() + 1, sizeof id.internal);
  if (ncclResult_t r = init(&comm->real, comm->nranks, id, comm->rank, config))
    return fail(comm, r, "NCCL's ncclCommInitRankConfig failed");
  return ncclSuccess;
}

} // namespace collnccl

namespace {
/// A communicator that is NCCL's alone takes NCCL's rank and count.
void numberAsNccl(ncclComm *comm) {
  auto count = COLLNCCL_REAL(ncclCommCount);
  auto rank = COLLNCCL_REAL(ncclCommUserRank);
  if (comm->real && count && rank) {
    count(comm->real, &comm->nranks);
    rank(comm->real, &comm->rank);
  }
}

/// Ends both halves of `comm` with `coll` and `real` (destroy or abort)
/// and frees it; the first failure is the result.
ncclResult_t end(ncclComm *comm, collResult_t (*coll)(collComm_t),
                 ncclResult_t (*real)(ncclComm_t)) {
  ncclResult_t result = ncclSuccess;
  if (comm->coll)
    if (collResult_t r = coll(comm->coll))
      result = fail(nullptr, fromColl(r), std::string("collc: ") + collGetLastError(nullptr));
  if (comm->real && real)
    if (ncclResult_t r = real(comm->real); r && !result)
      result = r;
  delete comm;
  return result;
}
} // namespace

extern "C" {

ncclResult_t ncclGetVersion(int *version) {
  if (!version)
    return fail(nullptr, ncclInvalidArgument, "ncclGetVersion: version is NULL");
  if (auto real = COLLNCCL_REAL(ncclGetVersion))
    return real(version);
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  if (!id)
    return fail(nullptr, ncclInvalidArgument, "ncclGetUniqueId: uniqueId is NULL");
  collUniqueId mine;
  if (collResult_t r = collGetUniqueId(&mine))
    return fail(nullptr, fromColl(r), std::string("collc: ") + collGetLastError(nullptr));
  memcpy(id->internal, mine.internal, sizeof id->internal);
  return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *out, int nranks, ncclUniqueId commId, int rank,
                                    ncclConfig_t *config) {
  if (!out)
    return fail(nullptr, ncclInvalidArgument, "ncclCommInitRank: comm is NULL");
  *out = nullptr;
  if (nranks < 1 || rank < 0 || rank >= nranks)
    return fail(nullptr, ncclInvalidArgument,
                "ncclCommInitRank: rank " + std::to_string(rank) + " of " + std::to_string(nranks) +
                    " ranks");
  auto *comm = new ncclComm;
  comm->rank = rank;
  comm->nranks = nranks;
  collUniqueId id;
  memcpy(id.internal, commId.internal, sizeof id.internal);
  if (!joinColl(comm, id)) {
    fail(nullptr, ncclSystemError, comm->lastError);
    delete comm;
    return ncclSystemError;
  }
  if (ncclResult_t r = joinReal(comm, config)) {
    fail(nullptr, r, comm->lastError);
    collCommDestroy(comm->coll);
    delete comm;
    return r;
  }
  *out = comm;
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank) {
  return ncclCommInitRankConfig(comm, nranks, commId, rank, nullptr);
}

// Several ids spread NCCL's bootstrap; collc's needs one, the first.
ncclResult_t ncclCommInitRankScalable(ncclComm_t *comm, int nranks, int myrank, int nId,
                                      ncclUniqueId *commIds, ncclConfig_t *config) {
  if (nId < 1 || !commIds)
    return fail(nullptr, ncclInvalidArgument, "ncclCommInitRankScalable: no unique id");
  return ncclCommInitRankConfig(comm, nranks, commIds[0], myrank, config);
}

// One process driving several GPUs: collc runs one rank per process, so
// these communicators are NCCL's alone.
ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist) {
  auto real = COLLNCCL_REAL(ncclCommInitAll);
  if (!real)
    return fail(nullptr, ncclInvalidUsage,
                "ncclCommInitAll: collc runs one rank per process, and there is " +
                    RealNccl::why());
  if (!comms || ndev < 1)
    return fail(nullptr, ncclInvalidArgument, "ncclCommInitAll: no communicators to make");
  std::vector<ncclComm_t> reals(ndev);
  if (ncclResult_t r = real(reals.data(), ndev, devlist))
    return r;
  for (int i = 0; i < ndev; ++i) {
    comms[i] = new ncclComm;
    comms[i]->real = reals[i];
    comms[i]->rank = i;
    comms[i]->nranks = ndev;
  }
  return ncclSuccess;
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                           ncclConfig_t *config) {
  if (!comm || !newcomm)
    return fail(comm, ncclInvalidArgument,
                std::string("ncclCommSplit: ") + (comm ? "newcomm" : "comm") + " is NULL");
  *newcomm = nullptr;
  auto *child = new ncclComm;
  if (comm->coll) {
    // Everyone's color and key; the group's first rank by (key, rank)
    // makes its unique id and shares it.
    std::vector<std::string> all;
    std::string error;
    std::string mine = std::to_string(color) + " " + std::to_string(key);
    if (collResult_t r = comm->coll->bootstrap.allgather(mine, all, error)) {
      delete child;
      return fail(comm, fromColl(r), "ncclCommSplit: bootstrap: " + error);
    }
    std::vector<std::tuple<int, int>> group; // key, rank
    for (int r = 0; r < comm->nranks; ++r) {
      int c = 0, k = 0;
      sscanf(all[r].c_str(), "%d %d", &c, &k);
      if (c == color && color != NCCL_SPLIT_NOCOLOR)
        group.emplace_back(k, r);
    }
    std::sort(group.begin(), group.end());
    bool leader = !group.empty() && std::get<1>(group[0]) == comm->rank;
    collUniqueId id;
    std::string offer;
    if (leader && collGetUniqueId(&id) == collSuccess)
      offer.assign(id.internal, sizeof id.internal);
    if (collResult_t r = comm->coll->bootstrap.allgather(offer, all, error)) {
      delete child;
      return fail(comm, fromColl(r), "ncclCommSplit: bootstrap: " + error);
    }
    if (!group.empty()) {
      const std::string &ids = all[std::get<1>(group[0])];
      child->nranks = int(group.size());
      for (size_t i = 0; i < group.size(); ++i)
        if (std::get<1>(group[i]) == comm->rank)
          child->rank = int(i);
      bool joined = ids.size() == sizeof id.internal;
      if (joined) {
        memcpy(id.internal, ids.data(), sizeof id.internal);
        joined = joinColl(child, id);
      }
      if (!joined) {
        std::string why =
            child->lastError.empty() ? "its first rank made no unique id" : child->lastError;
        delete child;
        return fail(comm, ncclSystemError, "ncclCommSplit: " + why);
      }
    }
  }
  if (comm->real) {
    auto split = COLLNCCL_REAL(ncclCommSplit);
    if (ncclResult_t r =
            split ? split(comm->real, color, key, &child->real, config) : ncclInvalidUsage) {
      if (child->coll)
        collCommDestroy(child->coll);
      delete child;
      return fail(comm, r, "ncclCommSplit: NCCL's split failed");
    }
  }
  if (color == NCCL_SPLIT_NOCOLOR) {
    delete child;
    return ncclSuccess;
  }
  if (!comm->coll)
    numberAsNccl(child);
  *newcomm = child;
  return ncclSuccess;
}

// Shrinking leaves out ranks that may be gone, so collc's bootstrap cannot
// join the rest: the new communicator is NCCL's alone.
ncclResult_t ncclCommShrink(ncclComm_t comm, int *excludeRanksList, int excludeRanksCount,
                            ncclComm_t *newcomm, ncclConfig_t *config, int shrinkFlags) {
  if (!comm || !newcomm)
    return fail(comm, ncclInvalidArgument, "ncclCommShrink: a communicator is NULL");
  auto shrink = COLLNCCL_REAL(ncclCommShrink);
  if (!comm->real || !shrink)
    return fail(comm, ncclInvalidUsage,
                "ncclCommShrink: collc cannot shrink a communicator, and NCCL has none here");
  auto *child = new ncclComm;
  if (ncclResult_t r = shrink(comm->real, excludeRanksList, excludeRanksCount, &child->real, config,
                              shrinkFlags)) {
    delete child;
    return r;
  }
  numberAsNccl(child);
  *newcomm = child;
  return ncclSuccess;
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  if (!comm)
    return fail(nullptr, ncclInvalidArgument, "ncclCommFinalize: comm is NULL");
  auto real = COLLNCCL_REAL(ncclCommFinalize);
  return comm->real && real ? real(comm->real) : ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (!comm)
    return fail(nullptr, ncclInvalidArgument, "ncclCommDestroy: comm is NULL");
  return end(comm, collCommDestroy, COLLNCCL_REAL(ncclCommDestroy));
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (!comm)
    return ncclSuccess; // as NCCL: aborting nothing is no error
  return end(comm, collCommAbort, COLLNCCL_REAL(ncclCommAbort));
}

ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  if (!comm)
    return fail(nullptr, ncclInvalidArgument, "ncclCommRevoke: comm is NULL");
  auto real = COLLNCCL_REAL(ncclCommRevoke);
  if (comm->coll)
    __atomic_store_n(&comm->coll->abortFlag, 1, __ATOMIC_RELEASE);
  return comm->real && real ? real(comm->real, revokeFlags) : ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError) {
  if (!comm || !asyncError)
    return fail(comm, ncclInvalidArgument, "ncclCommGetAsyncError: an argument is NULL");
  *asyncError = ncclSuccess;
  auto real = COLLNCCL_REAL(ncclCommGetAsyncError);
  if (comm->real && real)
    return real(comm->real, asyncError);
  return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int *count) {
  if (!comm || !count)
    return fail(comm, ncclInvalidArgument, "ncclCommCount: an argument is NULL");
  *count = comm->nranks;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank) {
  if (!comm || !rank)
    return fail(comm, ncclInvalidArgument, "ncclCommUserRank: an argument is NULL");
  *rank = comm->rank;
  return ncclSuccess;
}

// collc's runtime uses the calling thread's current device; NCCL knows the
// one it pinned. Without NCCL, 0, as for one GPU per process.
ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *device) {
  if (!comm || !device)
    return fail(comm, ncclInvalidArgument, "ncclCommCuDevice: an argument is NULL");
  auto real = COLLNCCL_REAL(ncclCommCuDevice);
  if (comm->real && real)
    return real(comm->real, device);
  *device = 0;
  return ncclSuccess;
}

} // extern "C"

COLLNCCL_PROFILING_NAME(ncclGetVersion);
COLLNCCL_PROFILING_NAME(ncclGetUniqueId);
COLLNCCL_PROFILING_NAME(ncclCommInitRankConfig);
COLLNCCL_PROFILING_NAME(ncclCommInitRank);
COLLNCCL_PROFILING_NAME(ncclCommInitRankScalable);
COLLNCCL_PROFILING_NAME(ncclCommInitAll);
COLLNCCL_PROFILING_NAME(ncclCommSplit);
COLLNCCL_PROFILING_NAME(ncclCommShrink);
COLLNCCL_PROFILING_NAME(ncclCommFinalize);
COLLNCCL_PROFILING_NAME(ncclCommDestroy);
COLLNCCL_PROFILING_NAME(ncclCommAbort);
COLLNCCL_PROFILING_NAME(ncclCommRevoke);
COLLNCCL_PROFILING_NAME(ncclCommGetAsyncError);
COLLNCCL_PROFILING_NAME(ncclCommCount);
COLLNCCL_PROFILING_NAME(ncclCommUserRank);
COLLNCCL_PROFILING_NAME(ncclCommCuDevice);
