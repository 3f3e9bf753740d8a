//===- LaunchTest.cpp - collLaunch refuses what the host cannot run -------===//
//
// A kernel file built by nvcc describes its plans with a CUDA kernel and no
// host kernel; the host runtime must say so instead of calling through null.
//
//===----------------------------------------------------------------------===//
#include "collc/abi.h"
#include "collrt.h"
#include "src/Comm.h"
#include "support/CudaDriver.h"

#include <gtest/gtest.h>

#include <climits>
#include <string>
#include <vector>

namespace {

// Stand in for the __global__ function of a CUDA build and its launcher;
// neither may be called on a machine without a GPU.
void cudaOnly() {}
bool launched = false;
const char *launchCudaOnly(const collc::DeviceLaunch &) {
  launched = true;
  return "cudaErrorInvalidDeviceFunction";
}

// One rank broadcasting to itself, as nvcc's build of a generated file
// would describe it: a CUDA kernel and no host kernel.
struct CudaOnlyAlgorithm {
  CudaOnlyAlgorithm() {
    tb = {0, 0, -1, -1, 0, collc::kSimple, 0, 1};
    plan.name = "solo_Simple";
    plan.collective = collc::kBroadcast;
    plan.ranks = 1;
    plan.chunks = 1;
    plan.maxBytes = INT64_MAX;
    plan.protocol = collc::kSimple;
    plan.slots = 1;
    plan.widest = 1;
    plan.numThreadblocks = 1;
    plan.threadblocks = &tb;
    plan.hostKernel = nullptr;
    plan.cuda.kernel = reinterpret_cast<const void *>(&cudaOnly);
    plan.cuda.launch = &launchCudaOnly;
    alg = {"solo", "LaunchTest.cpp", 1, &plan};
  }
  collc::ThreadblockDesc tb;
  collc::PlanDesc plan{};
  collc::AlgorithmDesc alg;
};

} // namespace

TEST(Launch, PlanWithoutHostKernelIsRefusedBeforeAnySetup) {
  std::string driver;
  if (collrt::cudaDriver(driver))
    GTEST_SKIP() << "this machine has a CUDA driver";
  collUniqueId id;
  ASSERT_EQ(collGetUniqueId(&id), collSuccess) << collGetLastError(nullptr);
  collComm_t comm = nullptr;
  ASSERT_EQ(collCommInitRank(&comm, 1, id, 0), collSuccess) << collGetLastError(nullptr);
  CudaOnlyAlgorithm solo;
  std::vector<float> in(16, 1), out(16, 0);
  EXPECT_EQ(
      collLaunch(comm, &solo.alg, in.data(), out.data(), in.size(), collFloat32, collSum, nullptr),
      collInvalidUsage);
  std::string why = collGetLastError(comm);
  EXPECT_NE(why.find("plan solo_Simple has no host kernel"), std::string::npos) << why;
  EXPECT_NE(why.find("built by nvcc for the GPU"), std::string::npos) << why;
  // Why the GPU cannot run it: the driver's own reason.
  EXPECT_NE(why.find("this machine has no usable GPU: " + driver), std::string::npos) << why;
  EXPECT_NE(why.find("collc --emit=cuda compiled with a C++ compiler"), std::string::npos) << why;
  // Nothing was connected, and the output is untouched.
  EXPECT_TRUE(comm->setups.empty());
  EXPECT_EQ(out, std::vector<float>(16, 0));
  EXPECT_FALSE(launched);
  // The collectives that dispatch to it say the same.
  ASSERT_EQ(collRegisterAlgorithm(comm, &solo.alg), collSuccess);
  EXPECT_EQ(collBroadcast(in.data(), out.data(), in.size(), collFloat32, 0, comm, nullptr),
            collInvalidUsage);
  why = collGetLastError(comm);
  EXPECT_NE(why.find("has no host kernel"), std::string::npos) << why;
  EXPECT_EQ(collCommDestroy(comm), collSuccess);
}

// The primitives index slots with a mask: a plan from a compiler that
// counted slots otherwise is refused before anything runs.
TEST(Launch, SlotsThatAreNotAPowerOfTwoAreRefused) {
  collUniqueId id;
  ASSERT_EQ(collGetUniqueId(&id), collSuccess) << collGetLastError(nullptr);
  collComm_t comm = nullptr;
  ASSERT_EQ(collCommInitRank(&comm, 1, id, 0), collSuccess) << collGetLastError(nullptr);
  CudaOnlyAlgorithm solo;
  solo.plan.slots = 3;
  std::vector<float> in(16, 1), out(16, 0);
  EXPECT_EQ(
      collLaunch(comm, &solo.alg, in.data(), out.data(), in.size(), collFloat32, collSum, nullptr),
      collInvalidArgument);
  std::string why = collGetLastError(comm);
  EXPECT_NE(why.find("plan solo_Simple has 3 FIFO slots, not a power of two"), std::string::npos)
      << why;
  EXPECT_FALSE(launched);
  collCommDestroy(comm);
}
