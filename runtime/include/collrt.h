/*===- collrt.h - The collc runtime's C API --------------------------------===
 *
 * In NCCL's style: a unique id made by one rank and shared out of band,
 * collCommInitRank on every rank, then collectives on buffers. Algorithms
 * are the ones collc compiled; each comes with its own entry point
 * (collc_<name> in the generated header) and can also be registered so that
 * collAllReduce & co. pick one by collective, ranks and size.
 *
 * Every function returns a collResult_t; collGetLastError(comm) says why.
 *===----------------------------------------------------------------------===*/
#ifndef COLLRT_H
#define COLLRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  collSuccess = 0,
  collUnhandledCudaError = 1,
  collSystemError = 2,
  collInternalError = 3,
  collInvalidArgument = 4,
  collInvalidUsage = 5,
  collRemoteError = 6,
  collTimeout = 7,
  collAborted = 8,
  collNumResults
} collResult_t;

/* Same values as ncclDataType_t. */
typedef enum {
  collInt8 = 0,
  collUint8 = 1,
  collInt32 = 2,
  collUint32 = 3,
  collInt64 = 4,
  collUint64 = 5,
  collFloat16 = 6,
  collFloat32 = 7,
  collFloat64 = 8,
  collBfloat16 = 9,
  collFloat8e4m3 = 10,
  collFloat8e5m2 = 11,
  collNumTypes
} collDataType_t;

/* Same values as ncclRedOp_t. */
typedef enum {
  collSum = 0,
  collProd = 1,
  collMax = 2,
  collMin = 3,
  collAvg = 4,
  collNumOps
} collRedOp_t;

#define COLL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[COLL_UNIQUE_ID_BYTES];
} collUniqueId;

typedef struct collComm *collComm_t;
typedef void *collStream_t; /* a cudaStream_t on the GPU; ignored by the host emulation */

const char *collGetErrorString(collResult_t result);
/* The message of the last failure on this communicator; with comm NULL,
 * that of the last failed call that had no communicator to keep it (init,
 * memory, or any call given a NULL comm). Every failure sets its own. */
const char *collGetLastError(collComm_t comm);

/* Starts the bootstrap root in this process; share the id with every rank. */
collResult_t collGetUniqueId(collUniqueId *id);
/* The communicator keeps the CUDA context current at init (or at its first
 * GPU launch where none is): its calls run there, whatever the caller has
 * current then, and leave the caller's context as they found it. */
collResult_t collCommInitRank(collComm_t *comm, int nranks, collUniqueId id, int rank);
/* Joins the group that torchrun-style variables describe: RANK, WORLD_SIZE,
 * MASTER_ADDR and MASTER_PORT (rank 0 serves the bootstrap on MASTER_PORT + 1,
 * or on COLL_BOOTSTRAP_PORT; COLL_SECRET, if set, is the group's secret). */
collResult_t collCommInitEnv(collComm_t *comm);
collResult_t collCommDestroy(collComm_t comm);
/* Stops every wait of this rank at once and frees the communicator, as
 * collCommDestroy does: a later collCommDestroy or collCommAbort of it
 * returns collInvalidUsage (collGetLastError(NULL) says why), as does a
 * destroy repeated, until a new communicator reuses the address. */
collResult_t collCommAbort(collComm_t comm);
collResult_t collCommCount(collComm_t comm, int *count);
collResult_t collCommUserRank(collComm_t comm, int *rank);

/* Memory that symmetric windows are made of, which peers on this machine
 * can map: CUDA VMM memory of the current device where the calling thread
 * has a CUDA context (after cudaSetDevice), else shared host memory (the
 * host build). */
collResult_t collMemAlloc(void **ptr, size_t size);
/* collInvalidUsage while a registered window still holds the memory. */
collResult_t collMemFree(void *ptr);

/* A symmetric window: a buffer of collMemAlloc memory that every rank of
 * the communicator maps. Plans with steps on other ranks' buffers (peer
 * windows, multimem) run on the user's buffers themselves when every rank's
 * input and output lie in registered windows, and on copies otherwise.
 * Both calls are collective; deregister before freeing the memory. */
typedef struct collWindow *collWindow_t;
collResult_t collCommWindowRegister(collComm_t comm, void *buff, size_t size, collWindow_t *win);
collResult_t collCommWindowDeregister(collComm_t comm, collWindow_t win);

/* Element size in bytes; 0 for an unknown type. */
size_t collTypeSize(collDataType_t datatype);

/* Runs a compiled algorithm (what collc_<name> calls). `count` is in NCCL's
 * terms for the collective: all elements for allreduce, broadcast and
 * reduce, per rank for allgather's input, reducescatter's output and each
 * peer's block of alltoall. recvbuff == sendbuff (or NCCL's in-place offsets
 * for allgather and reducescatter) runs in place. */
collResult_t collLaunch(collComm_t comm, const void *algorithm, const void *sendbuff,
                        void *recvbuff, size_t count, collDataType_t datatype, collRedOp_t op,
                        collStream_t stream);

/* Makes an algorithm available to the collectives below. Collective: every
 * rank registers the same algorithms in the same order. */
collResult_t collRegisterAlgorithm(collComm_t comm, const void *algorithm);

collResult_t collAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                           collDataType_t datatype, collRedOp_t op, collComm_t comm,
                           collStream_t stream);
collResult_t collAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                           collDataType_t datatype, collComm_t comm, collStream_t stream);
collResult_t collReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                               collDataType_t datatype, collRedOp_t op, collComm_t comm,
                               collStream_t stream);
collResult_t collAlltoAll(const void *sendbuff, void *recvbuff, size_t count,
                          collDataType_t datatype, collComm_t comm, collStream_t stream);
collResult_t collBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                           collDataType_t datatype, int root, collComm_t comm, collStream_t stream);
collResult_t collReduce(const void *sendbuff, void *recvbuff, size_t count, collDataType_t datatype,
                        collRedOp_t op, int root, collComm_t comm, collStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* COLLRT_H */
