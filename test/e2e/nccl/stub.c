/*===- stub.c - A stand-in for NCCL that records what reaches it ----------===
 *
 * Built as libnccl.so.2 for the shim's tests: each call appends a line
 * "rank R: ncclName details" to the file STUB_NCCL_LOG names and succeeds,
 * moving no data. Ranks are those given to ncclCommInitRank.
 *
 *===----------------------------------------------------------------------===*/
#include <nccl.h>

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ncclComm {
  int rank, nranks;
};

static int lastRank = -1;

/* One line, written at once so that ranks' lines do not interleave. */
static void record(const char *format, ...) {
  const char *path = getenv("STUB_NCCL_LOG");
  if (!path)
    return;
  char line[512];
  int n = snprintf(line, sizeof line, "rank %d: ", lastRank);
  va_list args;
  va_start(args, format);
  n += vsnprintf(line + n, sizeof line - n - 1, format, args);
  va_end(args);
  line[n++] = '\n';
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (fd >= 0) {
    if (write(fd, line, n) != n)
      perror("stub NCCL log");
    close(fd);
  }
}

ncclResult_t ncclGetVersion(int *version) {
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}
ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  memset(id, 0, sizeof *id);
  strcpy(id->internal, "stub-nccl");
  return ncclSuccess;
}
ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                                    ncclConfig_t *config) {
  (void)config;
  if (strcmp(id.internal, "stub-nccl"))
    return ncclInvalidArgument;
  *comm = malloc(sizeof **comm);
  (*comm)->rank = lastRank = rank;
  (*comm)->nranks = nranks;
  record("ncclCommInitRank of %d", nranks);
  return ncclSuccess;
}
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
  return ncclCommInitRankConfig(comm, nranks, id, rank, NULL);
}
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                           ncclConfig_t *config) {
  (void)config;
  record("ncclCommSplit color %d key %d", color, key);
  *newcomm = NULL;
  if (color != NCCL_SPLIT_NOCOLOR) {
    *newcomm = malloc(sizeof **newcomm);
    **newcomm = *comm;
  }
  return ncclSuccess;
}
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  record("ncclCommDestroy");
  free(comm);
  return ncclSuccess;
}
ncclResult_t ncclCommAbort(ncclComm_t comm) {
  record("ncclCommAbort");
  free(comm);
  return ncclSuccess;
}
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *error) {
  (void)comm;
  *error = ncclSuccess;
  return ncclSuccess;
}
ncclResult_t ncclCommCount(const ncclComm_t comm, int *count) {
  *count = comm->nranks;
  return ncclSuccess;
}
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank) {
  *rank = comm->rank;
  return ncclSuccess;
}
const char *ncclGetErrorString(ncclResult_t result) {
  (void)result;
  return "stub";
}
const char *ncclGetLastError(ncclComm_t comm) {
  (void)comm;
  return "";
}
ncclResult_t ncclGroupStart(void) {
  record("ncclGroupStart");
  return ncclSuccess;
}
ncclResult_t ncclGroupEnd(void) {
  record("ncclGroupEnd");
  return ncclSuccess;
}
ncclResult_t ncclAllReduce(const void *s, void *r, size_t count, ncclDataType_t type,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  (void)s, (void)r, (void)comm, (void)stream;
  record("ncclAllReduce count %zu type %d op %d", count, type, op);
  return ncclSuccess;
}
ncclResult_t ncclReduceScatter(const void *s, void *r, size_t count, ncclDataType_t type,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  (void)s, (void)r, (void)comm, (void)stream;
  record("ncclReduceScatter count %zu type %d op %d", count, type, op);
  return ncclSuccess;
}
ncclResult_t ncclAllGather(const void *s, void *r, size_t count, ncclDataType_t type,
                           ncclComm_t comm, cudaStream_t stream) {
  (void)s, (void)r, (void)comm, (void)stream;
  record("ncclAllGather count %zu type %d", count, type);
  return ncclSuccess;
}
ncclResult_t ncclAlltoAll(const void *s, void *r, size_t count, ncclDataType_t type,
                          ncclComm_t comm, cudaStream_t stream) {
  (void)s, (void)r, (void)comm, (void)stream;
  record("ncclAlltoAll count %zu type %d", count, type);
  return ncclSuccess;
}
ncclResult_t ncclBroadcast(const void *s, void *r, size_t count, ncclDataType_t type, int root,
                           ncclComm_t comm, cudaStream_t stream) {
  (void)s, (void)r, (void)comm, (void)stream;
  record("ncclBroadcast count %zu type %d root %d", count, type, root);
  return ncclSuccess;
}
ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t type, int root, ncclComm_t comm,
                       cudaStream_t stream) {
  (void)buff, (void)comm, (void)stream;
  record("ncclBcast count %zu type %d root %d", count, type, root);
  return ncclSuccess;
}
ncclResult_t ncclReduce(const void *s, void *r, size_t count, ncclDataType_t type, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream) {
  (void)s, (void)r, (void)comm, (void)stream;
  record("ncclReduce count %zu type %d op %d root %d", count, type, op, root);
  return ncclSuccess;
}
ncclResult_t ncclGather(const void *s, void *r, size_t count, ncclDataType_t type, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  (void)s, (void)r, (void)comm, (void)stream;
  record("ncclGather count %zu type %d root %d", count, type, root);
  return ncclSuccess;
}
ncclResult_t ncclScatter(const void *s, void *r, size_t count, ncclDataType_t type, int root,
                         ncclComm_t comm, cudaStream_t stream) {
  (void)s, (void)r, (void)comm, (void)stream;
  record("ncclScatter count %zu type %d root %d", count, type, root);
  return ncclSuccess;
}
ncclResult_t ncclSend(const void *s, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  (void)s, (void)comm, (void)stream;
  record("ncclSend count %zu type %d peer %d", count, type, peer);
  return ncclSuccess;
}
ncclResult_t ncclRecv(void *r, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  (void)r, (void)comm, (void)stream;
  record("ncclRecv count %zu type %d peer %d", count, type, peer);
  return ncclSuccess;
}
ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t *op, void *scalar, ncclDataType_t type,
                                      ncclScalarResidence_t residence, ncclComm_t comm) {
  (void)scalar, (void)residence, (void)comm;
  record("ncclRedOpCreatePreMulSum type %d", type);
  *op = (ncclRedOp_t)ncclNumOps;
  return ncclSuccess;
}
ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  (void)comm;
  record("ncclRedOpDestroy %d", op);
  return ncclSuccess;
}
ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  (void)comm;
  record("ncclCommFinalize");
  return ncclSuccess;
}
ncclResult_t ncclCommRegister(const ncclComm_t comm, void *buff, size_t size, void **handle) {
  (void)comm, (void)buff;
  record("ncclCommRegister %zu bytes", size);
  *handle = NULL;
  return ncclSuccess;
}
ncclResult_t ncclCommDeregister(const ncclComm_t comm, void *handle) {
  (void)comm, (void)handle;
  record("ncclCommDeregister");
  return ncclSuccess;
}
ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void *buff, size_t size, ncclWindow_t *win,
                                    int flags) {
  (void)comm, (void)buff, (void)flags;
  record("ncclCommWindowRegister %zu bytes", size);
  *win = (ncclWindow_t)malloc(1);
  return ncclSuccess;
}
ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  (void)comm;
  record("ncclCommWindowDeregister");
  free(win);
  return ncclSuccess;
}
ncclResult_t ncclMemAlloc(void **ptr, size_t size) {
  *ptr = malloc(size);
  return *ptr ? ncclSuccess : ncclSystemError;
}
ncclResult_t ncclMemFree(void *ptr) {
  free(ptr);
  return ncclSuccess;
}
