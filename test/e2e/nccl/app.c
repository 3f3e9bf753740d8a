/*===- app.c - A program written against nccl.h alone ----------------------===
 *
 * Runs on 4 forked ranks what an NCCL user's program calls, for libcollnccl
 * (LD_PRELOAD) to answer: every collective on a plan, checked element by
 * element; calls no plan has (a root without a plan, gather, send/recv in
 * a group, fp8 on the host, a custom op), which must succeed through the
 * NCCL underneath; errors; a split; a window; abort. With the argument
 * "alone" there is no NCCL underneath: a call without a plan must fail
 * saying so, and a call with one must still run. Prints PASS when every
 * rank passes.
 *
 *===----------------------------------------------------------------------===*/
#include <nccl.h>

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { kRanks = 4 };

static int rank = -1;

#define CHECK(call)                                                                                \
  do {                                                                                             \
    ncclResult_t r_ = (call);                                                                      \
    if (r_ != ncclSuccess) {                                                                       \
      fprintf(stderr, "rank %d: %s failed: %s: %s\n", rank, #call, ncclGetErrorString(r_),         \
              ncclGetLastError(NULL));                                                             \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

#define EXPECT(cond, ...)                                                                          \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "rank %d: ", rank);                                                          \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fprintf(stderr, "\n");                                                                       \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

/* Collectives on the GPU finish after the call returns: wait for the
 * legacy stream, as a CUDA program does before it reads results, through
 * the driver libcollnccl loaded (COLL_CUDA_LIBRARY); nothing to wait for
 * in the host build. */
static void synchronize(void) {
  static int (*sync)(void *) = NULL;
  static int looked = 0;
  if (!looked) {
    const char *driver = getenv("COLL_CUDA_LIBRARY");
    void *lib = driver ? dlopen(driver, RTLD_NOW | RTLD_NOLOAD) : NULL;
    /* cuGetProcAddress_v2(name, &fn, cudaVersion, flags, &status) */
    typedef int (*GetProc)(const char *, void **, int, unsigned long long, int *);
    GetProc get = lib ? (GetProc)dlsym(lib, "cuGetProcAddress_v2") : NULL;
    void *fn = NULL;
    int status = 0;
    if (get && get("cuStreamSynchronize", &fn, 12000, 0, &status) == 0)
      sync = (int (*)(void *))fn;
    looked = 1;
  }
  if (sync)
    EXPECT(sync(NULL) == 0, "cuStreamSynchronize failed");
}

static void *alloc(size_t bytes) {
  void *p = malloc(bytes);
  EXPECT(p, "out of memory");
  return p;
}

static void allReduce(ncclComm_t comm) {
  enum { n = 10007 };
  int32_t *in = alloc(n * 4), *out = alloc(n * 4);
  for (int i = 0; i < n; ++i)
    in[i] = (rank + 1) * (i % 13 + 1);
  CHECK(ncclAllReduce(in, out, n, ncclInt32, ncclSum, comm, NULL));
  synchronize();
  for (int i = 0; i < n; ++i)
    EXPECT(out[i] == 10 * (i % 13 + 1), "allreduce: element %d is %d", i, out[i]);
  float *buf = alloc(n * 4);
  for (int i = 0; i < n; ++i)
    buf[i] = (float)(rank * 1000 + i % 100);
  CHECK(ncclAllReduce(buf, buf, n, ncclFloat32, ncclMax, comm, NULL));
  synchronize();
  for (int i = 0; i < n; ++i)
    EXPECT(buf[i] == (float)(3000 + i % 100), "allreduce max in place: element %d is %g", i,
           buf[i]);
  free(in), free(out), free(buf);
}

static void reduceScatter(ncclComm_t comm) {
  enum { n = 1001 };
  int64_t *in = alloc(kRanks * n * 8), *out = alloc(n * 8);
  for (int j = 0; j < kRanks * n; ++j)
    in[j] = rank + 1 + j;
  CHECK(ncclReduceScatter(in, out, n, ncclInt64, ncclSum, comm, NULL));
  synchronize();
  for (int i = 0; i < n; ++i)
    EXPECT(out[i] == 10 + 4 * (int64_t)(rank * n + i), "reducescatter: element %d is %lld", i,
           (long long)out[i]);
  free(in), free(out);
}

static void allGather(ncclComm_t comm) {
  enum { n = 1000 };
  uint8_t *buf = alloc(kRanks * n);
  memset(buf, 0xee, kRanks * n);
  for (int i = 0; i < n; ++i)
    buf[rank * n + i] = (uint8_t)(rank * 7 + i);
  CHECK(ncclAllGather(buf + rank * n, buf, n, ncclUint8, comm, NULL)); /* in place */
  synchronize();
  for (int j = 0; j < kRanks * n; ++j)
    EXPECT(buf[j] == (uint8_t)(j / n * 7 + j % n), "allgather: element %d is %d", j, buf[j]);
  free(buf);
}

static void allToAll(ncclComm_t comm) {
  enum { n = 513 };
  double *in = alloc(kRanks * n * 8), *out = alloc(kRanks * n * 8);
  for (int p = 0; p < kRanks; ++p)
    for (int i = 0; i < n; ++i)
      in[p * n + i] = rank * 10000 + p * 100 + i % 100;
  CHECK(ncclAlltoAll(in, out, n, ncclFloat64, comm, NULL));
  synchronize();
  for (int p = 0; p < kRanks; ++p)
    for (int i = 0; i < n; ++i)
      EXPECT(out[p * n + i] == p * 10000 + rank * 100 + i % 100, "alltoall: block %d element %d", p,
             i);
  free(in), free(out);
}

static void rooted(ncclComm_t comm) {
  enum { n = 1001 };
  float *in = alloc(n * 4), *out = alloc(n * 4);
  for (int i = 0; i < n; ++i)
    in[i] = rank == 2 ? i * 0.5f : -1.0f, out[i] = -2.0f;
  CHECK(ncclBroadcast(in, out, n, ncclFloat32, 2, comm, NULL));
  synchronize();
  for (int i = 0; i < n; ++i)
    EXPECT(out[i] == i * 0.5f, "broadcast: element %d is %g", i, out[i]);
  int32_t *buf = alloc(n * 4);
  for (int i = 0; i < n; ++i)
    buf[i] = rank == 2 ? i * 3 : -1;
  CHECK(ncclBcast(buf, n, ncclInt32, 2, comm, NULL));
  synchronize();
  for (int i = 0; i < n; ++i)
    EXPECT(buf[i] == i * 3, "bcast: element %d is %d", i, buf[i]);
  int32_t *prod = alloc(n * 4);
  for (int i = 0; i < n; ++i)
    buf[i] = i % 3 == 0 ? rank + 1 : 1;
  CHECK(ncclReduce(buf, prod, n, ncclInt32, ncclProd, 1, comm, NULL));
  synchronize();
  for (int i = 0; i < n && rank == 1; ++i)
    EXPECT(prod[i] == (i % 3 == 0 ? 24 : 1), "reduce: element %d is %d", i, prod[i]);
  free(in), free(out), free(buf), free(prod);
}

/* Calls that no plan answers: each must reach the NCCL underneath. */
static void fallbacks(ncclComm_t comm) {
  static char data[4096], more[4096];
  CHECK(ncclBroadcast(data, more, 17, ncclInt8, 0, comm, NULL));
  CHECK(ncclGather(data, more, 19, ncclInt8, 0, comm, NULL));
  CHECK(ncclGroupStart());
  CHECK(ncclSend(data, 23, ncclUint8, (rank + 1) % kRanks, comm, NULL));
  CHECK(ncclRecv(more, 23, ncclUint8, (rank + kRanks - 1) % kRanks, comm, NULL));
  CHECK(ncclGroupEnd());
  CHECK(ncclAllReduce(data, more, 64, ncclFloat8e4m3, ncclSum, comm, NULL));
  ncclRedOp_t op;
  float scale = 0.5f;
  CHECK(ncclRedOpCreatePreMulSum(&op, &scale, ncclFloat32, ncclScalarHostImmediate, comm));
  CHECK(ncclAllReduce(data, more, 29, ncclFloat32, op, comm, NULL));
  CHECK(ncclRedOpDestroy(op, comm));
}

static void errors(ncclComm_t comm) {
  static char data[64];
  EXPECT(ncclAllReduce(data, data, 1, ncclInt8, ncclSum, NULL, NULL) == ncclInvalidArgument,
         "a NULL communicator was accepted");
  EXPECT(ncclAllReduce(data, data, 1, (ncclDataType_t)99, ncclSum, comm, NULL) ==
             ncclInvalidArgument,
         "data type 99 was accepted");
  EXPECT(strstr(ncclGetLastError(comm), "unknown data type 99"), "last error: %s",
         ncclGetLastError(comm));
  EXPECT(ncclBroadcast(data, data, 1, ncclInt8, 9, comm, NULL) == ncclInvalidArgument,
         "root 9 of 4 ranks was accepted");
  EXPECT(strstr(ncclGetLastError(comm), "root 9 is not a rank of 4"), "last error: %s",
         ncclGetLastError(comm));
  ncclResult_t async = ncclInternalError;
  CHECK(ncclCommGetAsyncError(comm, &async));
  EXPECT(async == ncclSuccess, "an asynchronous error: %d", async);
}

/* Ranks {c, c + 2} of color c, keyed by -rank: rank c + 2 comes first. */
static void split(ncclComm_t comm) {
  ncclComm_t half;
  CHECK(ncclCommSplit(comm, rank % 2, -rank, &half, NULL));
  int count = 0, me = -1;
  CHECK(ncclCommCount(half, &count));
  CHECK(ncclCommUserRank(half, &me));
  EXPECT(count == 2 && me == (rank >= 2 ? 0 : 1), "split: rank %d of %d", me, count);
  int32_t in[1000], out[1000];
  for (int i = 0; i < 1000; ++i)
    in[i] = rank + 1;
  CHECK(ncclAllReduce(in, out, 1000, ncclInt32, ncclSum, half, NULL));
  synchronize();
  for (int i = 0; i < 1000; ++i)
    EXPECT(out[i] == 2 * (rank % 2) + 4, "split allreduce: element %d is %d", i, out[i]);
  CHECK(ncclCommAbort(half));
}

static void window(ncclComm_t comm) {
  enum { n = 4096 };
  int32_t *buf;
  ncclWindow_t win;
  CHECK(ncclMemAlloc((void **)&buf, n * 4));
  CHECK(ncclCommWindowRegister(comm, buf, n * 4, &win, NCCL_WIN_COLL_SYMMETRIC));
  for (int i = 0; i < n; ++i)
    buf[i] = rank + i;
  CHECK(ncclAllReduce(buf, buf, n, ncclInt32, ncclSum, comm, NULL));
  synchronize();
  for (int i = 0; i < n; ++i)
    EXPECT(buf[i] == 6 + 4 * i, "window allreduce: element %d is %d", i, buf[i]);
  CHECK(ncclCommWindowDeregister(comm, win));
  CHECK(ncclMemFree(buf));
}

static void alone(ncclComm_t comm) {
  static char data[64];
  EXPECT(ncclGather(data, data, 1, ncclInt8, 0, comm, NULL) == ncclInvalidUsage,
         "a gather without NCCL did not fail");
  EXPECT(strstr(ncclGetLastError(comm), "no NCCL to fall back to"), "last error: %s",
         ncclGetLastError(comm));
  allReduce(comm);
}

static int runRank(int fds[][2], int alone_) {
  ncclUniqueId id;
  if (rank == 0) {
    CHECK(ncclGetUniqueId(&id));
    for (int r = 1; r < kRanks; ++r)
      EXPECT(write(fds[r][1], &id, sizeof id) == sizeof id, "cannot pass the id");
  } else {
    EXPECT(read(fds[rank][0], &id, sizeof id) == sizeof id, "no id");
  }
  int version = 0;
  CHECK(ncclGetVersion(&version));
  EXPECT(version >= 22800, "version %d", version);
  ncclComm_t comm;
  CHECK(ncclCommInitRank(&comm, kRanks, id, rank));
  if (alone_) {
    alone(comm);
  } else {
    allReduce(comm);
    reduceScatter(comm);
    allGather(comm);
    allToAll(comm);
    rooted(comm);
    fallbacks(comm);
    errors(comm);
    split(comm);
    window(comm);
  }
  CHECK(ncclCommDestroy(comm));
  return 0;
}

int main(int argc, char **argv) {
  int alone_ = argc > 1 && strcmp(argv[1], "alone") == 0;
  int fds[kRanks][2];
  for (int r = 0; r < kRanks; ++r)
    if (pipe(fds[r]))
      return 2;
  pid_t pids[kRanks];
  for (int r = 0; r < kRanks; ++r) {
    pids[r] = fork();
    if (pids[r] == 0) {
      rank = r;
      exit(runRank(fds, alone_));
    }
  }
  int failed = 0;
  for (int r = 0; r < kRanks; ++r) {
    int status = 0;
    waitpid(pids[r], &status, 0);
    if (WIFSIGNALED(status))
      fprintf(stderr, "rank %d: killed by signal %d\n", r, WTERMSIG(status));
    failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  }
  printf("%s\n", failed ? "FAIL" : "PASS");
  return failed;
}
