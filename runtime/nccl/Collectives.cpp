//===- Collectives.cpp - Each call to a plan, or else to NCCL -------------===//
//
// A call runs on the first plan (in COLL_PLAN_PATH's order) that does its
// collective on this many ranks, from its root, and that collLaunch would
// run at its count, type and op; every rank decides alike, from the same
// arguments. Anything else goes to the real NCCL: COLL_DEBUG=INFO names
// the choice and the reason on every rank.
//
//===----------------------------------------------------------------------===//
#include "nccl/Real.h"
#include "nccl/Shim.h"

#include "collc/abi.h"
#include "src/Comm.h"
#include "support/Names.h"

#include <cstdio>
#include <cstring>

using namespace collnccl;

namespace {

constexpr int32_t kNone = -1; // a call no collc collective does

// A custom op is NCCL's (ncclRedOpCreatePreMulSum).
const char *ncclOpName(ncclRedOp_t op) {
  return op < ncclNumOps ? collrt::opName(op) : "a custom op";
}
bool rooted(int32_t c) { return c == collc::kBroadcast || c == collc::kReduce; }
bool reduces(int32_t c) {
  return c == collc::kAllReduce || c == collc::kReduceScatter || c == collc::kReduce;
}

// The plan that runs this call, or null and why none does.
const Plan *pick(ncclComm *comm, int32_t coll, int root, size_t count, ncclDataType_t type,
                 ncclRedOp_t op, std::string &why) {
  if (coll == kNone) {
    why = "collc compiles no such operation";
    return nullptr;
  }
  if (!comm->coll) {
    why = "the communicator is NCCL's alone";
    return nullptr;
  }
  if (op >= ncclNumOps) {
    why = "the op was made by NCCL's ncclRedOpCreatePreMulSum";
    return nullptr;
  }
  std::string refusals;
  for (const Plan &p : comm->plans) {
    const collc::PlanDesc &first = p.algorithm->plans[0];
    if (first.collective != coll || (rooted(coll) && first.root != root))
      continue;
    std::string no;
    if (collrt::planRuns(comm->coll, p.algorithm, count, collDataType_t(type), collRedOp_t(op), no))
      return &p;
    refusals += std::string("; ") + p.algorithm->name + ": " + no;
  }
  if (!refusals.empty())
    why = "no plan runs it" + refusals;
  else
    why = std::string("no plan library has ") + collrt::collectiveName(coll) + " on " +
          std::to_string(comm->nranks) + " ranks" +
          (rooted(coll) ? " from root " + std::to_string(root) : "");
  return nullptr;
}

// Runs the call on a plan, or on NCCL through `toNccl` (null where NCCL
// lacks the entry point), or fails saying why neither can.
template <class Fn, class Call>
ncclResult_t run(const char *entry, ncclComm *comm, int32_t coll, int root, const void *send,
                 void *recv, size_t count, ncclDataType_t type, ncclRedOp_t op, cudaStream_t stream,
                 Fn *real, Call toNccl) {
  if (!comm)
    return fail(nullptr, ncclInvalidArgument, std::string(entry) + ": comm is NULL");
  if (type < 0 || type >= ncclNumTypes)
    return fail(comm, ncclInvalidArgument,
                std::string(entry) + ": unknown data type " + std::to_string(int(type)));
  if (op < 0)
    return fail(comm, ncclInvalidArgument,
                std::string(entry) + ": unknown reduction op " + std::to_string(int(op)));
  if (root != -1 && (root < 0 || root >= comm->nranks))
    return fail(comm, ncclInvalidArgument,
                std::string(entry) + ": " +
                    (strstr(entry, "Send") || strstr(entry, "Recv") ? "peer " : "root ") +
                    std::to_string(root) + " is not a rank of " + std::to_string(comm->nranks));
  std::string what = std::string(entry) + " of " + std::to_string(count) + " " +
                     collrt::typeName(type) +
                     (reduces(coll) ? std::string(" ") + ncclOpName(op) : "");
  std::string why;
  if (const Plan *p = pick(comm, coll, root, count, type, op, why)) {
    if (debugInfo())
      fprintf(stderr, "collc INFO rank %d: %s: collc plan %s from %s\n", comm->rank, what.c_str(),
              p->algorithm->name, p->library.c_str());
    if (collResult_t r = collLaunch(comm->coll, p->algorithm, send, recv, count,
                                    collDataType_t(type), collRedOp_t(op), stream))
      return fail(comm, fromColl(r), what + ": " + collGetLastError(comm->coll));
    return ncclSuccess;
  }
  if (!comm->real || !real) {
    std::string none = !RealNccl::get() ? RealNccl::why()
                       : !comm->real    ? "NCCL did not join this communicator"
                                        : "NCCL at " + RealNccl::get()->path() + " has no " + entry;
    return fail(comm, ncclInvalidUsage, what + ": " + why + ", and " + none);
  }
  if (debugInfo())
    fprintf(stderr, "collc INFO rank %d: %s: NCCL, as %s\n", comm->rank, what.c_str(), why.c_str());
  return toNccl(real);
}

} // namespace

extern "C" {

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, ncclDataType_t type,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return run("ncclAllReduce", comm, collc::kAllReduce, -1, send, recv, count, type, op, stream,
             COLLNCCL_REAL(ncclAllReduce),
             [&](auto f) { return f(send, recv, count, type, op, comm->real, stream); });
}

ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t recvcount, ncclDataType_t type,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return run("ncclReduceScatter", comm, collc::kReduceScatter, -1, send, recv, recvcount, type, op,
             stream, COLLNCCL_REAL(ncclReduceScatter),
             [&](auto f) { return f(send, recv, recvcount, type, op, comm->real, stream); });
}

ncclResult_t ncclAllGather(const void *send, void *recv, size_t sendcount, ncclDataType_t type,
                           ncclComm_t comm, cudaStream_t stream) {
  return run("ncclAllGather", comm, collc::kAllGather, -1, send, recv, sendcount, type, ncclSum,
             stream, COLLNCCL_REAL(ncclAllGather),
             [&](auto f) { return f(send, recv, sendcount, type, comm->real, stream); });
}

ncclResult_t ncclAlltoAll(const void *send, void *recv, size_t count, ncclDataType_t type,
                          ncclComm_t comm, cudaStream_t stream) {
  return run("ncclAlltoAll", comm, collc::kAllToAll, -1, send, recv, count, type, ncclSum, stream,
             COLLNCCL_REAL(ncclAlltoAll),
             [&](auto f) { return f(send, recv, count, type, comm->real, stream); });
}

ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count, ncclDataType_t type,
                           int root, ncclComm_t comm, cudaStream_t stream) {
  return run("ncclBroadcast", comm, collc::kBroadcast, root, send, recv, count, type, ncclSum,
             stream, COLLNCCL_REAL(ncclBroadcast),
             [&](auto f) { return f(send, recv, count, type, root, comm->real, stream); });
}

ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                       cudaStream_t stream) {
  return run("ncclBcast", comm, collc::kBroadcast, root, buff, buff, count, type, ncclSum, stream,
             COLLNCCL_REAL(ncclBcast),
             [&](auto f) { return f(buff, count, type, root, comm->real, stream); });
}

ncclResult_t ncclReduce(const void *send, void *recv, size_t count, ncclDataType_t type,
                        ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  return run("ncclReduce", comm, collc::kReduce, root, send, recv, count, type, op, stream,
             COLLNCCL_REAL(ncclReduce),
             [&](auto f) { return f(send, recv, count, type, op, root, comm->real, stream); });
}

ncclResult_t ncclGather(const void *send, void *recv, size_t count, ncclDataType_t type, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  return run("ncclGather", comm, kNone, root, send, recv, count, type, ncclSum, stream,
             COLLNCCL_REAL(ncclGather),
             [&](auto f) { return f(send, recv, count, type, root, comm->real, stream); });
}

ncclResult_t ncclScatter(const void *send, void *recv, size_t count, ncclDataType_t type, int root,
                         ncclComm_t comm, cudaStream_t stream) {
  return run("ncclScatter", comm, kNone, root, send, recv, count, type, ncclSum, stream,
             COLLNCCL_REAL(ncclScatter),
             [&](auto f) { return f(send, recv, count, type, root, comm->real, stream); });
}

ncclResult_t ncclSend(const void *send, size_t count, ncclDataType_t type, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
  return run("ncclSend", comm, kNone, peer, send, nullptr, count, type, ncclSum, stream,
             COLLNCCL_REAL(ncclSend),
             [&](auto f) { return f(send, count, type, peer, comm->real, stream); });
}

ncclResult_t ncclRecv(void *recv, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return run("ncclRecv", comm, kNone, peer, nullptr, recv, count, type, ncclSum, stream,
             COLLNCCL_REAL(ncclRecv),
             [&](auto f) { return f(recv, count, type, peer, comm->real, stream); });
}

// A plan runs when it is called, inside a group or not: every rank calls
// in the same order, so each plan finds its peers; NCCL's calls of the
// group wait for ncclGroupEnd as usual.
ncclResult_t ncclGroupStart() {
  auto real = COLLNCCL_REAL(ncclGroupStart);
  return real ? real() : ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  auto real = COLLNCCL_REAL(ncclGroupEnd);
  return real ? real() : ncclSuccess;
}

ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t *simInfo) {
  auto real = COLLNCCL_REAL(ncclGroupSimulateEnd);
  if (!real)
    return fail(nullptr, ncclInvalidUsage, "ncclGroupSimulateEnd: " + RealNccl::why());
  return real(simInfo);
}

// Custom ops are NCCL's: calls with them go to NCCL.
ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm) {
  auto real = COLLNCCL_REAL(ncclRedOpCreatePreMulSum);
  if (!comm || !comm->real || !real)
    return fail(comm, ncclInvalidUsage,
                "ncclRedOpCreatePreMulSum: collc has no custom ops, and " +
                    (RealNccl::get() ? std::string("NCCL did not join this communicator")
                                     : RealNccl::why()));
  return real(op, scalar, datatype, residence, comm->real);
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  auto real = COLLNCCL_REAL(ncclRedOpDestroy);
  if (!comm || !comm->real || !real)
    return fail(comm, ncclInvalidArgument, "ncclRedOpDestroy: no such op");
  return real(op, comm->real);
}

} // extern "C"

COLLNCCL_PROFILING_NAME(ncclAllReduce);
COLLNCCL_PROFILING_NAME(ncclReduceScatter);
COLLNCCL_PROFILING_NAME(ncclAllGather);
COLLNCCL_PROFILING_NAME(ncclAlltoAll);
COLLNCCL_PROFILING_NAME(ncclBroadcast);
COLLNCCL_PROFILING_NAME(ncclBcast);
COLLNCCL_PROFILING_NAME(ncclReduce);
COLLNCCL_PROFILING_NAME(ncclGather);
COLLNCCL_PROFILING_NAME(ncclScatter);
COLLNCCL_PROFILING_NAME(ncclSend);
COLLNCCL_PROFILING_NAME(ncclRecv);
COLLNCCL_PROFILING_NAME(ncclGroupStart);
COLLNCCL_PROFILING_NAME(ncclGroupEnd);
COLLNCCL_PROFILING_NAME(ncclGroupSimulateEnd);
COLLNCCL_PROFILING_NAME(ncclRedOpCreatePreMulSum);
COLLNCCL_PROFILING_NAME(ncclRedOpDestroy);
