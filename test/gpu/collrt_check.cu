//===- collrt_check.cu - The ring allreduce through collrt on a real GPU --===//
//
// What an application does, checked: collc_ring (ring_allreduce.coll,
// built by nvcc) and collc_twoshot (twoshot_allreduce.coll for an NVLink
// node: steps on the peers' windows, multimem in its unicast form) on
// cudaMalloc'd buffers, through collrt's GPU path, with
// every rank a thread of this process (--threads N: each its own
// communicator and stream on the one GPU) or a process of its own
// (RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, collCommInitEnv). Each case
// runs in and out of place, checked bit-exactly; then a timed 64 MiB
// allreduce, a capture into a CUDA graph replayed between plain launches,
// each checked, and last collCommAbort of a launch that waits for a rank
// that never launches. One row per rank 0 result, in run.sh's columns.
//
// Built with -DCOLLRT_CHECK_MACHINES, it runs the ring alone, for ranks
// that run.sh places on machines of their own (COLL_HOSTID): FIFOs in
// pinned host memory, shipped by the socket transport's proxy threads.
//
//===----------------------------------------------------------------------===//
#include "ring_allreduce.h"
#ifndef COLLRT_CHECK_MACHINES
#include "twoshot_allreduce.h"
#endif

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Case {
  size_t count;
  collDataType_t type;
  collRedOp_t op;
  const char *name;
};
// Sums of small integers are exact in every type and order.
const Case cases[] = {{1000003, collFloat32, collSum, "float/sum"},
                      {7, collInt32, collMax, "int32/max"},
                      {65537, collFloat64, collAvg, "double/avg"},
                      {4194304, collInt64, collMin, "int64/min"}};

double value(collDataType_t, int rank, size_t i) { return double(rank + int(i % 7)); }
double expected(const Case &c, int n, size_t i) {
  switch (c.op) {
  case collMax:
    return n - 1 + int(i % 7);
  case collMin:
    return int(i % 7);
  case collAvg:
    return double(n * (n - 1) / 2 + n * int(i % 7)) / n;
  default:
    return n * (n - 1) / 2 + n * int(i % 7);
  }
}

template <typename T> std::vector<char> fill(const Case &c, int rank) {
  std::vector<char> b(c.count * sizeof(T));
  T *p = reinterpret_cast<T *>(b.data());
  for (size_t i = 0; i < c.count; ++i)
    p[i] = T(value(c.type, rank, i));
  return b;
}
template <typename T> std::string check(const Case &c, int n, const std::vector<char> &b) {
  const T *p = reinterpret_cast<const T *>(b.data());
  for (size_t i = 0; i < c.count; ++i)
    if (p[i] != T(expected(c, n, i)))
      return "element " + std::to_string(i) + " is " + std::to_string(double(p[i])) + ", not " +
             std::to_string(double(T(expected(c, n, i))));
  return "";
}

size_t sizeOf(collDataType_t t) { return collTypeSize(t); }

using Entry = collResult_t (*)(const void *, void *, size_t, collDataType_t, collRedOp_t,
                               collComm_t, collStream_t);

// One rank's part: every case, in place and not, through `entry`; empty if
// all passed. With `registered`, out of place only, the buffers are one
// collMemAlloc allocation registered as a window on every rank, which
// plans with steps on other ranks' buffers use without copies.
std::string runCases(collComm_t comm, int rank, int n, cudaStream_t stream, Entry entry,
                     const char *name, bool registered = false) {
  for (const Case &c : cases) {
    for (int inplace = 0; inplace < 2 - int(registered); ++inplace) {
      const size_t bytes = c.count * sizeOf(c.type);
      std::vector<char> host = c.type == collFloat32   ? fill<float>(c, rank)
                               : c.type == collInt32   ? fill<int32_t>(c, rank)
                               : c.type == collFloat64 ? fill<double>(c, rank)
                                                       : fill<int64_t>(c, rank);
      char *in = nullptr, *out = nullptr;
      collWindow_t window = nullptr;
      if (registered) {
        if (collMemAlloc(reinterpret_cast<void **>(&in), 2 * bytes) ||
            collCommWindowRegister(comm, in, 2 * bytes, &window))
          return std::string(name) + ": window: " + collGetLastError(comm);
        out = in + bytes;
      } else if (cudaMalloc(&in, bytes) || cudaMalloc(&out, bytes)) {
        return "cudaMalloc failed";
      }
      cudaMemcpy(in, host.data(), bytes, cudaMemcpyHostToDevice);
      cudaMemset(out, 0xA5, bytes);
      char *dst = inplace ? in : out;
      collResult_t r = entry(in, dst, c.count, c.type, c.op, comm, stream);
      std::string why;
      if (r != collSuccess)
        why = std::string(name) + ": " + collGetErrorString(r) + ": " + collGetLastError(comm);
      else if (cudaError_t e = cudaStreamSynchronize(stream))
        why = std::string("the allreduce: ") + cudaGetErrorString(e);
      if (why.empty()) {
        cudaMemcpy(host.data(), dst, bytes, cudaMemcpyDeviceToHost);
        why = c.type == collFloat32   ? check<float>(c, n, host)
              : c.type == collInt32   ? check<int32_t>(c, n, host)
              : c.type == collFloat64 ? check<double>(c, n, host)
                                      : check<int64_t>(c, n, host);
      }
      if (registered) {
        collCommWindowDeregister(comm, window);
        collMemFree(in);
      } else {
        cudaFree(in);
        cudaFree(out);
      }
      if (!why.empty())
        return std::string(name) + " " + c.name + (inplace ? " in place: " : ": ") + why;
    }
  }
  return "";
}

// Best of 5 timed 64 MiB float sums, in microseconds; < 0 on failure.
double timeLarge(collComm_t comm, cudaStream_t stream) {
  const size_t count = size_t(16) << 20;
  float *buf = nullptr;
  if (cudaMalloc(&buf, count * sizeof(float)))
    return -1;
  cudaMemset(buf, 0, count * sizeof(float));
  double best = 1e30;
  for (int k = 0; k < 6; ++k) {
    auto t0 = std::chrono::steady_clock::now();
    if (collc_ring(buf, buf, count, collFloat32, collSum, comm, stream) ||
        cudaStreamSynchronize(stream))
      return -1;
    double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    if (k)
      best = std::min(best, us);
  }
  cudaFree(buf);
  return best;
}

// collc_ring captured into a CUDA graph (thread-local mode: the other
// ranks may be threads of this process) runs nothing until replayed; then
// replays and plain launches take turns, each checked, and a launch after
// the graph is destroyed is still right. Empty if all passed.
std::string graphReplays(collComm_t comm, int rank, int n, cudaStream_t stream) {
  const Case c{1000003, collFloat32, collSum, "float/sum"};
  const size_t bytes = c.count * sizeof(float);
  std::vector<char> input = fill<float>(c, rank), host(bytes);
  float *in = nullptr, *out = nullptr;
  if (cudaMalloc(&in, bytes) || cudaMalloc(&out, bytes))
    return "graph: cudaMalloc failed";
  std::string why;
  auto refill = [&] {
    cudaMemcpy(in, input.data(), bytes, cudaMemcpyHostToDevice);
    cudaMemset(out, 0xA5, bytes);
  };
  auto result = [&](const char *when) {
    if (cudaError_t e = cudaStreamSynchronize(stream))
      return std::string(when) + cudaGetErrorString(e);
    cudaMemcpy(host.data(), out, bytes, cudaMemcpyDeviceToHost);
    std::string wrong = check<float>(c, n, host);
    return wrong.empty() ? wrong : when + wrong;
  };
  refill();
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  collResult_t r = collc_ring(in, out, c.count, c.type, c.op, comm, stream);
  cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  if (r != collSuccess)
    why = std::string("graph: capture: ") + collGetErrorString(r) + ": " + collGetLastError(comm);
  else if (ended)
    why = std::string("graph: cudaStreamEndCapture: ") + cudaGetErrorString(ended);
  else if (cudaError_t e = cudaGraphInstantiate(&exec, graph, 0))
    why = std::string("graph: cudaGraphInstantiate: ") + cudaGetErrorString(e);
  for (int k = 0; k < 4 && why.empty(); ++k) {
    refill();
    if (k % 2 == 0)
      cudaGraphLaunch(exec, stream);
    else if (collc_ring(in, out, c.count, c.type, c.op, comm, stream))
      why = std::string("graph: plain launch: ") + collGetLastError(comm);
    if (why.empty())
      why = result(k % 2 == 0 ? "graph: replay: " : "graph: plain launch between replays: ");
  }
  if (exec)
    cudaGraphExecDestroy(exec);
  if (graph)
    cudaGraphDestroy(graph);
  if (why.empty()) {
    refill();
    if (collc_ring(in, out, c.count, c.type, c.op, comm, stream))
      why = std::string("graph: launch after destroying it: ") + collGetLastError(comm);
    else
      why = result("graph: launch after destroying it: ");
  }
  cudaFree(in);
  cudaFree(out);
  return why;
}

// Rank 0 launches while the others never do, so its kernel waits; then
// collCommAbort must end the kernel within seconds (COLL_TIMEOUT is longer)
// and fail the next call. Leaves the communicator aborted.
std::string abortStops(collComm_t comm, int rank, cudaStream_t stream) {
  if (rank != 0)
    return "";
  const size_t count = 1 << 20;
  float *buf = nullptr;
  if (cudaMalloc(&buf, count * sizeof(float)))
    return "abort: cudaMalloc failed";
  std::string why;
  if (collc_ring(buf, buf, count, collFloat32, collSum, comm, stream))
    why = std::string("abort: the launch failed: ") + collGetLastError(comm);
  auto t0 = std::chrono::steady_clock::now();
  if (why.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (cudaStreamQuery(stream) != cudaErrorNotReady)
      why = "abort: the kernel did not wait for the missing ranks";
    collCommAbort(comm);
  }
  if (why.empty()) {
    cudaError_t e = cudaStreamSynchronize(stream);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (e != cudaSuccess)
      why = std::string("abort: the stream failed: ") + cudaGetErrorString(e);
    else if (s > 10)
      why = "abort: the kernel ran " + std::to_string(s) + " s after collCommAbort";
    else if (collc_ring(buf, buf, count, collFloat32, collSum, comm, stream) != collAborted)
      why = "abort: a launch after collCommAbort did not fail with collAborted";
  }
  cudaFree(buf);
  return why;
}

void row(const char *plan, bool ok, double us, int n, const std::string &note) {
  const double bytes = double(size_t(64) << 20);
  const double algbw = us > 0 ? bytes / us / 1e3 : 0, busbw = algbw * 2 * (n - 1) / n;
  printf("%-46s %-6s %-6s %-14s %7s %10.1f %8.2f %8.2f %8s %6s  %s\n", plan, ok ? "PASS" : "FAIL",
         "-", "float/sum", "64M", us, algbw, busbw, "-", "-", note.c_str());
}

struct Outcome {
  std::string why;
  double us = -1;
};

Outcome rank(collComm_t comm, int r, int n) {
  Outcome o;
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  o.why = runCases(comm, r, n, stream, collc_ring, "collc_ring");
#ifndef COLLRT_CHECK_MACHINES
  if (o.why.empty())
    o.why = runCases(comm, r, n, stream, collc_twoshot, "collc_twoshot");
  if (o.why.empty())
    o.why = runCases(comm, r, n, stream, collc_twoshot, "collc_twoshot registered", true);
#endif
  if (o.why.empty() && (o.us = timeLarge(comm, stream)) < 0)
    o.why = std::string("timed run: ") + collGetLastError(comm);
  if (o.why.empty())
    o.why = graphReplays(comm, r, n, stream);
  if (o.why.empty())
    o.why = abortStops(comm, r, stream);
  cudaStreamDestroy(stream);
  return o;
}

} // namespace

int main(int argc, char **argv) {
  if (cudaSetDevice(0)) {
    printf("collrt: no usable GPU\n");
    return 1;
  }
  if (argc == 3 && !strcmp(argv[1], "--threads")) {
    const int n = atoi(argv[2]);
    collUniqueId id;
    if (collGetUniqueId(&id))
      return 1;
    std::vector<Outcome> outcomes(n);
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r)
      threads.emplace_back([&, r] {
        cudaSetDevice(0);
        collComm_t comm = nullptr;
        if (collCommInitRank(&comm, n, id, r)) {
          outcomes[r].why = std::string("init: ") + collGetLastError(nullptr);
          return;
        }
        outcomes[r] = rank(comm, r, n);
        collCommDestroy(comm);
      });
    for (std::thread &t : threads)
      t.join();
    std::string why;
    for (int r = 0; r < n && why.empty(); ++r)
      if (!outcomes[r].why.empty())
        why = "rank " + std::to_string(r) + ": " + outcomes[r].why;
    row(("collrt/threads x" + std::to_string(n)).c_str(), why.empty(), outcomes[0].us, n,
        why.empty() ? "every rank a thread, one GPU; ring, twoshot on peer and registered windows, "
                      "graph replay, abort"
                    : why);
    return why.empty() ? 0 : 1;
  }
  collComm_t comm = nullptr;
  if (collCommInitEnv(&comm)) {
    printf("init: %s\n", collGetLastError(nullptr));
    return 1;
  }
  int r = 0, n = 1;
  collCommUserRank(comm, &r);
  collCommCount(comm, &n);
  Outcome o = rank(comm, r, n);
  collCommDestroy(comm);
#ifdef COLLRT_CHECK_MACHINES
  const char *
      kind = "collrt/machines x",
     *what = "a process per rank as a machine of its own, one GPU, pinned FIFOs over socket; ring, "
             "graph replay, abort";
#else
  const char
      *kind = "collrt/processes x",
      *what =
          "a process per rank, one GPU, VMM handles; ring, twoshot on peer and registered windows, "
          "graph replay, abort";
#endif
  if (r == 0 || !o.why.empty())
    row((kind + std::to_string(n) + (r ? " rank " + std::to_string(r) : "")).c_str(), o.why.empty(),
        o.us, n, o.why.empty() ? what : o.why);
  return o.why.empty() ? 0 : 1;
}
