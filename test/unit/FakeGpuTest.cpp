//===- FakeGpuTest.cpp - collrt's GPU path on an asynchronous device ------===//
//
// Against the fake driver (test/e2e/fakecuda), which runs each stream's
// work on a thread of its own as a GPU runs it, asynchronously to the host:
// first that the fake keeps CUDA's order (streams, events, the legacy
// stream's implicit synchronisation) and says which call would hang; then
// two ranks as threads of one process, one context, where one rank's
// kernel spins on the other's while that one launches: its launches must
// neither wait on the host for the device nor make a call that may
// synchronise the whole device.
//
//===----------------------------------------------------------------------===//
#include "FakeDriver.h"
#include "FakeGpu.h"
#include "PairPlan.h"
#include "collrt.h"
#include "support/CudaApi.h"
#include "support/CudaDriver.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <dlfcn.h>
#include <string>
#include <thread>
#include <vector>

// Set before main, as Env and the driver are read once: the kernels' own
// timeout is long, so that a call the fake finds waiting for a spinning
// kernel (after FAKE_CUDA_WAIT_LIMIT) is what fails.
static const bool configured = setenv("COLL_CUDA_LIBRARY", COLLRT_FAKE_CUDA, 1) == 0 &&
                               setenv("COLL_TIMEOUT", "120", 1) == 0 &&
                               setenv("FAKE_CUDA_WAIT_LIMIT", "5", 1) == 0 &&
                               // Ranks as threads of one process: one GPU.
                               setenv("COLL_SHARED_GPU", "1", 1) == 0;

namespace {

using Clock = std::chrono::steady_clock;

// A call collrt does not make, from the fake driver as collrt finds its.
template <typename F> F call(const char *name) {
  using GetProc =
      CUresult (*)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
  auto getProc = reinterpret_cast<GetProc>(
      dlsym(dlopen(COLLRT_FAKE_CUDA, RTLD_NOW | RTLD_NOLOAD), "cuGetProcAddress_v2"));
  void *fn = nullptr;
  getProc(name, &fn, collrt::kCudaAbi, CU_GET_PROC_ADDRESS_DEFAULT, nullptr);
  return reinterpret_cast<F>(fn);
}

// A kernel that spins until `go`, then counts itself done.
struct Spin {
  std::atomic<bool> go{false};
  std::atomic<int> done{0};
  void launch(CUstream s) {
    using Launch = int (*)(void *, void (*)(void *), void *, void (*)(void *));
    static Launch queue = collc_fake::fakeSymbol<Launch>("fakeCudaLaunch");
    queue(
        s,
        [](void *p) {
          auto *self = static_cast<Spin *>(p);
          while (!self->go)
            std::this_thread::yield();
          ++self->done;
        },
        this, [](void *) {});
  }
};

// Whether `pred` holds within `seconds`.
template <typename P> bool soon(P pred, int seconds = 20) {
  const auto end = Clock::now() + std::chrono::seconds(seconds);
  while (!pred())
    if (Clock::now() > end)
      return false;
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return true;
}

} // namespace

TEST(FakeCuda, StreamsRunAfterTheCallInOrderAndEventsFollowThem) {
  const collrt::CudaApi &cu = fakeDriver();
  CUstream a, b;
  ASSERT_EQ(cu.cuStreamCreate(&a, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cu.cuStreamCreate(&b, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUdeviceptr p;
  ASSERT_EQ(cu.cuMemAllocAsync(&p, 64, a), CUDA_SUCCESS);
  CUevent e;
  ASSERT_EQ(cu.cuEventCreate(&e, 0), CUDA_SUCCESS);
  Spin spin;
  spin.launch(a);
  ASSERT_EQ(cu.cuMemsetD8Async(p, 7, 64, a), CUDA_SUCCESS);
  ASSERT_EQ(cu.cuEventRecord(e, a), CUDA_SUCCESS);
  // b copies what a wrote, once a has.
  ASSERT_EQ(cu.cuStreamWaitEvent(b, e, 0), CUDA_SUCCESS);
  ASSERT_EQ(cu.cuMemcpyDtoDAsync(p + 32, p, 1, b), CUDA_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto eventQuery = call<decltype(&cuEventQuery)>("cuEventQuery");
  const auto streamQuery = call<decltype(&cuStreamQuery)>("cuStreamQuery");
  ASSERT_TRUE(eventQuery && streamQuery);
  EXPECT_EQ(eventQuery(e), CUDA_ERROR_NOT_READY);
  EXPECT_EQ(streamQuery(b), CUDA_ERROR_NOT_READY);
  EXPECT_NE(reinterpret_cast<unsigned char *>(p)[0], 7) << "the memset ran before the kernel";
  spin.go = true;
  ASSERT_EQ(cu.cuStreamSynchronize(b), CUDA_SUCCESS);
  EXPECT_EQ(eventQuery(e), CUDA_SUCCESS);
  EXPECT_EQ(reinterpret_cast<unsigned char *>(p)[32], 7);
  ASSERT_EQ(cu.cuMemFreeAsync(p, b), CUDA_SUCCESS);
  ASSERT_EQ(cu.cuStreamSynchronize(b), CUDA_SUCCESS);
  cu.cuEventDestroy(e);
  cu.cuStreamDestroy(a);
  cu.cuStreamDestroy(b);
}

TEST(FakeCuda, TheLegacyStreamWaitsForBlockingStreamsOnly) {
  const collrt::CudaApi &cu = fakeDriver();
  CUstream blocking, later, nonBlocking;
  ASSERT_EQ(cu.cuStreamCreate(&blocking, 0), CUDA_SUCCESS);
  ASSERT_EQ(cu.cuStreamCreate(&later, 0), CUDA_SUCCESS);
  ASSERT_EQ(cu.cuStreamCreate(&nonBlocking, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  std::vector<unsigned char> memory(2, 0);
  ASSERT_EQ(cu.cuMemHostRegister(memory.data(), memory.size(), CU_MEMHOSTREGISTER_DEVICEMAP),
            CUDA_SUCCESS);
  const CUdeviceptr p = CUdeviceptr(reinterpret_cast<uintptr_t>(memory.data()));
  Spin spin;
  spin.launch(blocking);
  ASSERT_EQ(cu.cuMemsetD8Async(p, 1, 1, nullptr), CUDA_SUCCESS); // the legacy stream
  ASSERT_EQ(cu.cuMemsetD8Async(p + 1, 2, 1, nonBlocking), CUDA_SUCCESS);
  ASSERT_EQ(cu.cuStreamSynchronize(nonBlocking), CUDA_SUCCESS);
  EXPECT_EQ(memory[1], 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(memory[0], 0) << "the legacy stream did not wait for the blocking stream";
  // And another blocking stream's work waits for the legacy stream's.
  ASSERT_EQ(cu.cuMemsetD8Async(p + 1, 3, 1, later), CUDA_SUCCESS);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(memory[1], 2) << "a blocking stream did not wait for the legacy stream";
  spin.go = true;
  ASSERT_EQ(cu.cuStreamSynchronize(later), CUDA_SUCCESS);
  EXPECT_EQ(memory[0], 1);
  EXPECT_EQ(memory[1], 3);
  cu.cuMemHostUnregister(memory.data());
  cu.cuStreamDestroy(blocking);
  cu.cuStreamDestroy(later);
  cu.cuStreamDestroy(nonBlocking);
}

// As CUDA's: an event recorded in a capture is a node of its graph, which
// the host can neither query nor wait for, and no stream waits on an event
// across a capture's boundary; the capture that tried is invalidated.
TEST(FakeCuda, EventsDoNotCrossACapturesBoundary) {
  const collrt::CudaApi &cu = fakeDriver();
  const auto begin = call<decltype(&cuStreamBeginCapture)>("cuStreamBeginCapture");
  const auto end = call<decltype(&cuStreamEndCapture)>("cuStreamEndCapture");
  const auto destroy = call<decltype(&cuGraphDestroy)>("cuGraphDestroy");
  const auto query = call<decltype(&cuEventQuery)>("cuEventQuery");
  ASSERT_TRUE(begin && end && destroy && query);
  CUstream a, b;
  ASSERT_EQ(cu.cuStreamCreate(&a, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cu.cuStreamCreate(&b, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUevent outside, inside;
  ASSERT_EQ(cu.cuEventCreate(&outside, 0), CUDA_SUCCESS);
  ASSERT_EQ(cu.cuEventCreate(&inside, 0), CUDA_SUCCESS);
  ASSERT_EQ(cu.cuEventRecord(outside, b), CUDA_SUCCESS);
  CUgraph graph = nullptr;

  // A capture that waits on work outside it.
  ASSERT_EQ(begin(a, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  EXPECT_EQ(cu.cuStreamWaitEvent(a, outside, 0), CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
  EXPECT_EQ(end(a, &graph), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

  // An event of the capture: the capture may wait on it, nothing else.
  ASSERT_EQ(begin(a, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  ASSERT_EQ(cu.cuEventRecord(inside, a), CUDA_SUCCESS);
  EXPECT_EQ(cu.cuStreamWaitEvent(a, inside, 0), CUDA_SUCCESS);
  EXPECT_EQ(query(inside), CUDA_ERROR_CAPTURED_EVENT);
  ASSERT_EQ(end(a, &graph), CUDA_SUCCESS);
  EXPECT_EQ(query(inside), CUDA_ERROR_CAPTURED_EVENT) << "still last recorded in a capture";
  EXPECT_EQ(cu.cuEventSynchronize(inside), CUDA_ERROR_CAPTURED_EVENT);
  EXPECT_EQ(cu.cuStreamWaitEvent(b, inside, 0), CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
  destroy(graph);

  // Recorded again outside any capture, it is an event like any other.
  ASSERT_EQ(cu.cuEventRecord(inside, b), CUDA_SUCCESS);
  EXPECT_EQ(cu.cuEventSynchronize(inside), CUDA_SUCCESS);
  EXPECT_EQ(cu.cuStreamWaitEvent(a, inside, 0), CUDA_SUCCESS);
  ASSERT_EQ(cu.cuStreamSynchronize(a), CUDA_SUCCESS);
  cu.cuEventDestroy(outside);
  cu.cuEventDestroy(inside);
  cu.cuStreamDestroy(a);
  cu.cuStreamDestroy(b);
}

// FAKE_CUDA_DEVICES=2: a process with two GPUs, distinct bus ids, and a
// current context per thread, which is the device collrt finds
// (cuCtxGetDevice) and makes memory on.
TEST(FakeCuda, SeveralDevicesWithContextsPerThread) {
  const collrt::CudaApi &cu = fakeDriver();
  setenv("FAKE_CUDA_DEVICES", "2", 1);
  const auto get = call<decltype(&cuDeviceGet)>("cuDeviceGet");
  const auto retain = call<decltype(&cuDevicePrimaryCtxRetain)>("cuDevicePrimaryCtxRetain");
  ASSERT_TRUE(get && retain && cu.cuCtxSetCurrent && cu.cuCtxGetCurrent);
  int count = 0;
  ASSERT_EQ(cu.cuDeviceGetCount(&count), CUDA_SUCCESS);
  EXPECT_EQ(count, 2);
  CUdevice d1 = -1, found = -1;
  ASSERT_EQ(get(&d1, 1), CUDA_SUCCESS);
  EXPECT_EQ(get(&found, 2), CUDA_ERROR_INVALID_DEVICE);
  char bus[2][16];
  ASSERT_EQ(cu.cuDeviceGetPCIBusId(bus[0], 16, 0), CUDA_SUCCESS);
  ASSERT_EQ(cu.cuDeviceGetPCIBusId(bus[1], 16, d1), CUDA_SUCCESS);
  EXPECT_STRNE(bus[0], bus[1]);
  ASSERT_EQ(cu.cuDeviceGetByPCIBusId(&found, bus[1]), CUDA_SUCCESS);
  EXPECT_EQ(found, d1);
  int peer = 0;
  ASSERT_EQ(cu.cuDeviceCanAccessPeer(&peer, 0, d1), CUDA_SUCCESS);
  EXPECT_EQ(peer, 1);
  // A thread that makes device 1's context current is on device 1; this
  // one stays on device 0.
  CUcontext context = nullptr;
  ASSERT_EQ(retain(&context, d1), CUDA_SUCCESS);
  CUdevice seen = -1, mine = -1;
  CUmemGenericAllocationHandle memory = 0;
  CUresult created = CUDA_ERROR_UNKNOWN;
  std::thread other([&] {
    CUcontext current = nullptr;
    cu.cuCtxSetCurrent(context);
    cu.cuCtxGetCurrent(&current);
    EXPECT_EQ(current, context);
    cu.cuCtxGetDevice(&seen);
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = seen;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    created = cu.cuMemCreate(&memory, size_t(2) << 20, &prop, 0);
  });
  other.join();
  ASSERT_EQ(cu.cuCtxGetDevice(&mine), CUDA_SUCCESS);
  EXPECT_EQ(seen, d1);
  EXPECT_EQ(mine, 0);
  EXPECT_EQ(created, CUDA_SUCCESS) << "memory on the thread's device";
  if (created == CUDA_SUCCESS)
    cu.cuMemRelease(memory);
  EXPECT_EQ(cu.cuCtxSetCurrent(reinterpret_cast<CUcontext>(uintptr_t(0x1230))),
            CUDA_ERROR_INVALID_CONTEXT);
  unsetenv("FAKE_CUDA_DEVICES");
  ASSERT_EQ(cu.cuDeviceGetCount(&count), CUDA_SUCCESS);
  EXPECT_EQ(count, 1);
}

// As CUDA's: a stream and an event belong to the context current when they
// were made; a kernel runs in the current context and an event is recorded
// in its own, so a stream of another context is refused for either.
TEST(FakeCuda, StreamsAndEventsKeepTheirContext) {
  const collrt::CudaApi &cu = fakeDriver();
  setenv("FAKE_CUDA_DEVICES", "2", 1);
  const auto retain = call<decltype(&cuDevicePrimaryCtxRetain)>("cuDevicePrimaryCtxRetain");
  ASSERT_TRUE(retain);
  CUcontext zero = nullptr, one = nullptr;
  ASSERT_EQ(retain(&zero, 0), CUDA_SUCCESS);
  ASSERT_EQ(retain(&one, 1), CUDA_SUCCESS);
  CUstream s0, s1;
  CUevent e0;
  ASSERT_EQ(cu.cuCtxSetCurrent(zero), CUDA_SUCCESS);
  ASSERT_EQ(cu.cuStreamCreate(&s0, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  ASSERT_EQ(cu.cuEventCreate(&e0, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  ASSERT_EQ(cu.cuCtxSetCurrent(one), CUDA_SUCCESS);
  ASSERT_EQ(cu.cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  using Launch = int (*)(void *, void (*)(void *), void *, void (*)(void *));
  static Launch queue = collc_fake::fakeSymbol<Launch>("fakeCudaLaunch");
  ASSERT_TRUE(queue);
  std::atomic<int> ran{0};
  auto count = [](void *p) { ++*static_cast<std::atomic<int> *>(p); };
  auto keep = [](void *) {};
  EXPECT_EQ(queue(s0, count, &ran, keep), CUDA_ERROR_INVALID_HANDLE) << "device 1 is current";
  EXPECT_EQ(queue(s1, count, &ran, keep), CUDA_SUCCESS);
  EXPECT_EQ(cu.cuEventRecord(e0, s1), CUDA_ERROR_INVALID_HANDLE) << "e0 is device 0's";
  EXPECT_EQ(cu.cuEventRecord(e0, s0), CUDA_SUCCESS) << "whatever context is current";
  EXPECT_EQ(cu.cuStreamWaitEvent(s1, e0, 0), CUDA_SUCCESS) << "waits may cross contexts";
  ASSERT_EQ(cu.cuStreamSynchronize(s1), CUDA_SUCCESS);
  EXPECT_EQ(ran, 1);
  ASSERT_EQ(cu.cuCtxSetCurrent(zero), CUDA_SUCCESS);
  cu.cuEventDestroy(e0);
  cu.cuStreamDestroy(s0);
  cu.cuStreamDestroy(s1);
  unsetenv("FAKE_CUDA_DEVICES");
}

namespace {
// For death tests: a kernel that never ends, on a stream of its own, which
// the fake gives up waiting for after a second. Returns the stream.
CUstream spinForever() {
  setenv("FAKE_CUDA_WAIT_LIMIT", "1", 1);
  const collrt::CudaApi &cu = fakeDriver();
  CUstream s;
  cu.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  static Spin forever;
  forever.launch(s);
  return s;
}
} // namespace

TEST(FakeCudaDeathTest, ACallThatWaitsForTheDeviceSaysWhatItWouldWaitFor) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        spinForever();
        fakeDriver().cuMemFree(0);
      },
      "fake cuda: cuMemFree would wait for a kernel that is still running on stream 0x");
}

namespace {

// The pair plan (rank 0 sends to rank 1 over a FIFO), as nvcc's build
// describes it, its kernel run by the fake launcher.
struct CudaPair : PairAlgorithm {
  CudaPair() : PairAlgorithm(collc::kSimple) {
    plan.hostKernel = nullptr;
    plan.cuda.launch = &collc_fake::launch<&pairKernel>;
    plan.cuda.divide = &collc_fake::divide;
    plan.cuda.load = &collc_fake::load<&pairKernel>;
  }
};

// Kernels of their own, which no other test loads.
void registeredKernel(const collc::Args *a) { pairKernel(a); }
void lazyKernel(const collc::Args *a) { pairKernel(a); }

struct Rank {
  collComm_t comm = nullptr;
  CUstream stream = nullptr;
};

} // namespace

// Rank 1's kernels spin until rank 0's send: rank 0's launches must not wait
// for the device (cuMemAlloc, cuMemFree and cuCtxSynchronize wait for it all,
// the fake aborts naming them), nor rank 1's wait on the host for its own
// earlier kernels (the ring of Args slots) while rank 0 has not launched.
TEST(FakeGpu, LaunchesOfRanksInOneContextDoNotWaitForEachOther) {
  const collrt::CudaApi &cu = fakeDriver();
  CudaPair pair;
  collUniqueId id;
  ASSERT_EQ(collGetUniqueId(&id), collSuccess) << collGetLastError(nullptr);
  Rank ranks[2];
  constexpr size_t kCount = 4099;
  constexpr int kAhead = 12; // more than the ring's slots
  std::vector<std::vector<float>> in(kAhead + 2, std::vector<float>(kCount));
  std::vector<std::vector<float>> out[2];
  for (size_t i = 0; i < in.size(); ++i)
    for (size_t k = 0; k < kCount; ++k)
      in[i][k] = float(i * kCount + k);
  for (auto &o : out)
    o.assign(in.size(), std::vector<float>(kCount, -1));
  std::atomic<int> queued{0};
  std::atomic<bool> rank1Ahead{true};
  const int entered = kernelsEntered;

  auto run = [&](int r) {
    Rank &me = ranks[r];
    ASSERT_EQ(collCommInitRank(&me.comm, 2, id, r), collSuccess) << collGetLastError(nullptr);
    ASSERT_EQ(cu.cuStreamCreate(&me.stream, 0), CUDA_SUCCESS);
    auto launch = [&](size_t i) {
      EXPECT_EQ(collLaunch(me.comm, &pair.alg, in[i].data(), out[r][i].data(), kCount, collFloat32,
                           collSum, me.stream),
                collSuccess)
          << "rank " << r << ": " << collGetLastError(me.comm);
    };
    // Connects the FIFOs (collective) and runs once.
    launch(0);
    EXPECT_EQ(cu.cuStreamSynchronize(me.stream), CUDA_SUCCESS);
    // Rank 1's kernel spins on rank 0 before rank 0 launches (each rank
    // has one threadblock).
    if (r == 1) {
      launch(1);
    } else {
      EXPECT_TRUE(soon([&] { return kernelsEntered >= entered + 3; }));
      launch(1);
    }
    EXPECT_EQ(cu.cuStreamSynchronize(me.stream), CUDA_SUCCESS);
    // Rank 1 queues more launches than the ring has slots while rank 0
    // waits for it; rank 0 launches its part anyway after a while, so that
    // a rank 1 waiting on the host fails the test instead of hanging.
    if (r == 1) {
      for (int i = 0; i < kAhead; ++i, ++queued)
        launch(2 + i);
    } else {
      rank1Ahead = soon([&] { return queued == kAhead; });
      for (int i = 0; i < kAhead; ++i)
        launch(2 + i);
    }
    EXPECT_EQ(cu.cuStreamSynchronize(me.stream), CUDA_SUCCESS);
    EXPECT_EQ(collCommDestroy(me.comm), collSuccess);
    cu.cuStreamDestroy(me.stream);
  };
  std::thread rank0(run, 0), rank1(run, 1);
  rank0.join();
  rank1.join();
  EXPECT_TRUE(rank1Ahead) << "rank 1's launches waited on the host for its kernels, which "
                             "wait for rank 0's";
  for (int r = 0; r < 2; ++r)
    for (size_t i = 0; i < in.size(); ++i)
      EXPECT_EQ(out[r][i], in[i]) << "launch " << i << " on rank " << r;
}

// Two ranks as threads, each on a GPU of its own (FAKE_CUDA_DEVICES=2),
// whose threads make the other GPU current after init, as one thread that
// drives several GPUs does between calls: a communicator's launches (its
// kernels, the events of its Args ring) and its destroy run on the GPU it
// was made on, and leave the caller's context as they found it.
TEST(FakeGpu, EachCommunicatorRunsOnTheGpuItWasMadeOn) {
  const collrt::CudaApi &cu = fakeDriver();
  setenv("FAKE_CUDA_DEVICES", "2", 1);
  const auto retain = call<decltype(&cuDevicePrimaryCtxRetain)>("cuDevicePrimaryCtxRetain");
  ASSERT_TRUE(retain);
  CUcontext context[2] = {};
  ASSERT_EQ(retain(&context[0], 0), CUDA_SUCCESS);
  ASSERT_EQ(retain(&context[1], 1), CUDA_SUCCESS);
  CudaPair pair;
  collUniqueId id;
  ASSERT_EQ(collGetUniqueId(&id), collSuccess) << collGetLastError(nullptr);
  constexpr size_t kCount = 3001;
  std::vector<float> in(kCount);
  for (size_t k = 0; k < kCount; ++k)
    in[k] = float(k) * 0.5f;
  std::vector<float> out[2] = {std::vector<float>(kCount, -1), std::vector<float>(kCount, -1)};
  CUcontext after[2] = {};
  auto run = [&](int r) {
    ASSERT_EQ(cu.cuCtxSetCurrent(context[r]), CUDA_SUCCESS);
    collComm_t comm;
    CUstream stream;
    ASSERT_EQ(collCommInitRank(&comm, 2, id, r), collSuccess) << collGetLastError(nullptr);
    ASSERT_EQ(cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    ASSERT_EQ(cu.cuCtxSetCurrent(context[1 - r]), CUDA_SUCCESS);
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(collLaunch(comm, &pair.alg, in.data(), out[r].data(), kCount, collFloat32, collSum,
                           stream),
                collSuccess)
          << "rank " << r << ": " << collGetLastError(comm);
    EXPECT_EQ(cu.cuStreamSynchronize(stream), CUDA_SUCCESS);
    EXPECT_EQ(collCommDestroy(comm), collSuccess);
    cu.cuCtxGetCurrent(&after[r]);
    cu.cuStreamDestroy(stream);
  };
  std::thread rank0(run, 0), rank1(run, 1);
  rank0.join();
  rank1.join();
  unsetenv("FAKE_CUDA_DEVICES");
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(after[r], context[1 - r]) << "rank " << r << ": the caller's context changed";
    EXPECT_EQ(out[r], in) << "rank " << r;
  }
}

// A training loop launches the same collective on the same buffers: each
// slot of the ring then holds its Args already, and no launch copies them.
TEST(FakeGpu, LaunchesLikeTheLastInTheirSlotCopyNoArgs) {
  const collrt::CudaApi &cu = fakeDriver();
  using Count = long (*)();
  static Count copies = collc_fake::fakeSymbol<Count>("fakeCudaHostToDeviceCopies");
  ASSERT_TRUE(copies);
  CudaPair pair;
  collUniqueId id;
  ASSERT_EQ(collGetUniqueId(&id), collSuccess) << collGetLastError(nullptr);
  constexpr size_t kCount = 1000;
  constexpr int kSlots = 8; // GpuState's ring
  const std::vector<float> in(kCount, 1.5f), other(kCount, 2.5f);
  std::vector<float> out[2] = {std::vector<float>(kCount), std::vector<float>(kCount)};
  // Both ranks (threads of this process) at the same point; rank 0 reads
  // the process's count of copies there.
  std::atomic<int> met{0};
  long counted[3] = {};
  auto meet = [&](int r, int point) {
    ++met;
    while (met < 4 * point + 2)
      std::this_thread::yield();
    if (r == 0)
      counted[point] = copies();
    ++met;
    while (met < 4 * point + 4)
      std::this_thread::yield();
  };
  auto run = [&](int r) {
    collComm_t comm;
    CUstream stream;
    ASSERT_EQ(collCommInitRank(&comm, 2, id, r), collSuccess) << collGetLastError(nullptr);
    ASSERT_EQ(cu.cuStreamCreate(&stream, 0), CUDA_SUCCESS);
    auto launch = [&](const std::vector<float> &from) {
      EXPECT_EQ(collLaunch(comm, &pair.alg, from.data(), out[r].data(), kCount, collFloat32,
                           collSum, stream),
                collSuccess)
          << collGetLastError(comm);
      EXPECT_EQ(cu.cuStreamSynchronize(stream), CUDA_SUCCESS);
    };
    for (int i = 0; i < kSlots + 1; ++i) // every slot once, and connected
      launch(in);
    meet(r, 0);
    for (int i = 0; i < kSlots; ++i)
      launch(in);
    meet(r, 1);
    launch(other); // rank 0's input moves: its Args change
    meet(r, 2);
    EXPECT_EQ(collCommDestroy(comm), collSuccess);
    cu.cuStreamDestroy(stream);
  };
  std::thread rank0(run, 0), rank1(run, 1);
  rank0.join();
  rank1.join();
  EXPECT_EQ(out[1], other);
  EXPECT_EQ(counted[1] - counted[0], 0) << "launches like the last in their slot copied Args";
  EXPECT_GE(counted[2] - counted[1], 1) << "a launch with new Args did not copy them";
}

namespace {
std::atomic<int> anyRuns{0}, float32SumRuns{0};
void anyKernel(const collc::Args *a) {
  ++anyRuns;
  pairKernel(a);
}
void float32SumKernel(const collc::Args *a) {
  ++float32SumRuns;
  pairKernel(a);
}
} // namespace

// A plan with a kernel compiled for (float32, sum) runs it for launches of
// float32 sums and avgs (avg's kernels sum), and its kernel for any pair
// for the rest.
TEST(FakeGpu, ALaunchRunsTheKernelOfItsTypeAndOp) {
  const collrt::CudaApi &cu = fakeDriver();
  CudaPair pair;
  pair.plan.cuda.launch = &collc_fake::launch<&anyKernel>;
  const collc::TypedKernel typed[] = {
      {collFloat32,
       collSum,
       {nullptr, &collc_fake::launch<&float32SumKernel>, &collc_fake::divide,
        &collc_fake::load<&float32SumKernel>}}};
  pair.plan.numTyped = 1;
  pair.plan.typed = typed;
  collUniqueId id;
  ASSERT_EQ(collGetUniqueId(&id), collSuccess) << collGetLastError(nullptr);
  constexpr size_t kCount = 1000;
  std::vector<float> in(kCount);
  for (size_t k = 0; k < kCount; ++k)
    in[k] = float(k) + 0.25f;
  const std::pair<collDataType_t, collRedOp_t> launches[] = {{collFloat32, collSum},
                                                             {collFloat32, collAvg},
                                                             {collInt32, collSum},
                                                             {collFloat32, collMax},
                                                             {collBfloat16, collSum}};
  std::vector<float> out[2];
  auto run = [&](int r) {
    collComm_t comm;
    CUstream stream;
    ASSERT_EQ(collCommInitRank(&comm, 2, id, r), collSuccess) << collGetLastError(nullptr);
    ASSERT_EQ(cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    for (auto [type, op] : launches) {
      out[r].assign(kCount, -1);
      const size_t count = type == collBfloat16 ? 2 * kCount : kCount; // the same bytes
      EXPECT_EQ(collLaunch(comm, &pair.alg, in.data(), out[r].data(), count, type, op, stream),
                collSuccess)
          << "rank " << r << ": " << collGetLastError(comm);
      EXPECT_EQ(cu.cuStreamSynchronize(stream), CUDA_SUCCESS);
      EXPECT_EQ(out[r], in) << "rank " << r << ", type " << type << ", op " << op;
    }
    EXPECT_EQ(collCommDestroy(comm), collSuccess);
    cu.cuStreamDestroy(stream);
  };
  std::thread rank0(run, 0), rank1(run, 1);
  rank0.join();
  rank1.join();
  EXPECT_EQ(float32SumRuns, 2 * 2) << "threadblocks of float32 sums and avgs, both ranks";
  EXPECT_EQ(anyRuns, 3 * 2) << "threadblocks of int32 sums, float32 max and bfloat16 sums";
}

// collRegisterAlgorithm loads an nvcc-built algorithm's kernels, so that
// no launch loads a module lazily behind a kernel that spins on a peer.
TEST(FakeGpu, RegistrationLoadsTheKernels) {
  fakeDriver();
  CudaPair pair;
  pair.plan.cuda.launch = &collc_fake::launch<&registeredKernel>;
  pair.plan.cuda.load = &collc_fake::load<&registeredKernel>;
  pair.plan.ranks = 1;
  collUniqueId id;
  collComm_t comm;
  ASSERT_EQ(collGetUniqueId(&id), collSuccess) << collGetLastError(nullptr);
  ASSERT_EQ(collCommInitRank(&comm, 1, id, 0), collSuccess) << collGetLastError(nullptr);
  EXPECT_FALSE(collc_fake::loaded<&registeredKernel>);
  ASSERT_EQ(collRegisterAlgorithm(comm, &pair.alg), collSuccess);
  EXPECT_TRUE(collc_fake::loaded<&registeredKernel>);
  collCommDestroy(comm);
}

// What the fake models: a kernel's first launch without its module loaded
// waits for the device, here for a kernel that spins.
TEST(FakeCudaDeathTest, AFirstLaunchLoadsItsModuleAndWaitsForTheDevice) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        collc::DeviceLaunch l = {};
        l.stream = spinForever();
        collc_fake::launch<&lazyKernel>(l);
      },
      "fake cuda: the first launch of a plan's kernel would wait for a kernel that is still "
      "running");
}
