//===- CudaDriverTest.cpp - collrt opens libcuda itself, and says why not --===//
//
// This machine has no NVIDIA driver: the tests load what is here instead
// (nothing, a library that is not libcuda, the toolkit's stub) and expect
// each failure to be named.
//
//===----------------------------------------------------------------------===//
#include "support/CudaDriver.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#ifdef COLLRT_FAKE_CUDA
#include "support/CudaApi.h"
#endif

using collrt::loadCudaDriver;

TEST(CudaDriver, AMissingLibraryIsNamed) {
  std::string why;
  EXPECT_EQ(loadCudaDriver("/nonexistent/libcuda.so.1", why), nullptr);
  EXPECT_NE(why.find("cannot load the CUDA driver /nonexistent/libcuda.so.1 ("), std::string::npos)
      << why;
  EXPECT_NE(why.find("no NVIDIA driver is installed, or it is not on the library path"),
            std::string::npos)
      << why;
}

TEST(CudaDriver, ALibraryWithoutTheDriverCallsIsRefused) {
  std::string why;
  EXPECT_EQ(loadCudaDriver("libm.so.6", why), nullptr);
  EXPECT_NE(why.find("the CUDA driver libm.so.6 has no cuGetProcAddress_v2 (a driver for CUDA 12 "
                     "or later is needed)"),
            std::string::npos)
      << why;
}

#ifdef COLLRT_CUDA_STUB
TEST(CudaDriver, TheToolkitsStubIsNotADriver) {
  std::string why;
  EXPECT_EQ(loadCudaDriver(COLLRT_CUDA_STUB, why), nullptr);
  EXPECT_NE(why.find("is the CUDA toolkit's stub library, not a driver (cuGetProcAddress: "
                     "CUDA_ERROR_STUB_LIBRARY)"),
            std::string::npos)
      << why;
}
#endif

#ifdef COLLRT_FAKE_CUDA
// The fake driver exports cuGetProcAddress alone, as a reminder that a
// driver's symbol names are not its interface: the version of a call that
// matches collrt's prototype is the one cuGetProcAddress gives at CUDA 12.0.
namespace {
struct FakeDriverVersion {
  explicit FakeDriverVersion(const char *v) { setenv("FAKE_CUDA_VERSION", v, 1); }
  ~FakeDriverVersion() { unsetenv("FAKE_CUDA_VERSION"); }
};
} // namespace

TEST(CudaDriver, EveryCallComesFromCuGetProcAddress) {
  std::string why;
  const collrt::CudaApi *cu = loadCudaDriver(COLLRT_FAKE_CUDA, why);
  ASSERT_NE(cu, nullptr) << why;
  ASSERT_NE(cu->cuStreamGetCaptureInfo_v2, nullptr);
  EXPECT_NE(cu->cuMulticastCreate, nullptr);
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  cuuint64_t id;
  CUgraph graph;
  const CUgraphNode *deps;
  size_t numDeps;
  EXPECT_EQ(cu->cuStreamGetCaptureInfo_v2(nullptr, &status, &id, &graph, &deps, &numDeps),
            CUDA_SUCCESS);
  EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_NONE);
}

// A 12.0 driver has no edge data in capture info (12.3) and no multicast
// (12.1): collrt loads all the same, without multicast.
TEST(CudaDriver, ACuda12_0DriverIsEnough) {
  FakeDriverVersion old("12000");
  std::string why;
  const collrt::CudaApi *cu = loadCudaDriver(COLLRT_FAKE_CUDA, why);
  ASSERT_NE(cu, nullptr) << why;
  EXPECT_NE(cu->cuStreamGetCaptureInfo_v2, nullptr);
  EXPECT_EQ(cu->cuMulticastCreate, nullptr);
}

TEST(CudaDriver, ADriverBeforeCuda12IsRefused) {
  FakeDriverVersion old("11080");
  std::string why;
  EXPECT_EQ(loadCudaDriver(COLLRT_FAKE_CUDA, why), nullptr);
  EXPECT_NE(why.find("has no cuStreamGetCaptureInfo for CUDA 12.0's interface (a driver for "
                     "CUDA 12 or later is needed)"),
            std::string::npos)
      << why;
}
#endif
