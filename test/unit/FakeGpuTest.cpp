//===- FakeGpuTest.cpp - collrt's GPU path on an asynchronous device ------===//
//
// Against the fake driver (test/e2e/fakecuda), which runs each stream's
// work on a thread of its own as a GPU runs it, asynchronously to the host:
// that the fake keeps CUDA's order (streams, events, the legacy stream's
// implicit synchronisation) and says which call would hang.
//
//===----------------------------------------------------------------------===//
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
                               setenv("FAKE_CUDA_WAIT_LIMIT", "5", 1) == 0;

namespace {

using Clock = std::chrono::steady_clock;

const collrt::CudaApi &driver() {
  std::string why;
  const collrt::CudaApi *cu = collrt::cudaDriver(why);
  if (!cu) {
    fprintf(stderr, "the fake driver does not load: %s\n", why.c_str());
    abort();
  }
  return *cu;
}

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
    using Launch = void (*)(void *, void (*)(void *), void *, void (*)(void *));
    static Launch queue = reinterpret_cast<Launch>(
        dlsym(dlopen(COLLRT_FAKE_CUDA, RTLD_NOW | RTLD_NOLOAD), "fakeCudaLaunch"));
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
  const collrt::CudaApi &cu = driver();
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
  const collrt::CudaApi &cu = driver();
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

TEST(FakeCudaDeathTest, ACallThatWaitsForTheDeviceSaysWhatItWouldWaitFor) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        setenv("FAKE_CUDA_WAIT_LIMIT", "1", 1);
        const collrt::CudaApi &cu = driver();
        CUstream s;
        cu.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
        static Spin forever;
        forever.launch(s);
        cu.cuMemFree(0);
      },
      "fake cuda: cuMemFree would wait for a kernel that is still running on stream 0x");
}
