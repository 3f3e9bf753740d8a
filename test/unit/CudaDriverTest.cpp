//===- CudaDriverTest.cpp - collrt opens libcuda itself, and says why not --===//
//
// This machine has no NVIDIA driver: the tests load what is here instead
// (nothing, a library that is not libcuda, the toolkit's stub) and expect
// each failure to be named.
//
//===----------------------------------------------------------------------===//
#include "support/CudaDriver.h"

#include <gtest/gtest.h>

#include <string>

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
  EXPECT_NE(why.find("the CUDA driver libm.so.6 has no cuInit"), std::string::npos) << why;
}

#ifdef COLLRT_CUDA_STUB
TEST(CudaDriver, TheToolkitsStubIsNotADriver) {
  std::string why;
  EXPECT_EQ(loadCudaDriver(COLLRT_CUDA_STUB, why), nullptr);
  EXPECT_NE(why.find("is the CUDA toolkit's stub library, not a driver (cuInit: "
                     "CUDA_ERROR_STUB_LIBRARY)"),
            std::string::npos)
      << why;
}
#endif
