//===- FakeCudaVmmTest.cpp - The fake driver refuses what CUDA's VMM does -===//
//
// collrt's VMM code is tested against the fake driver only where no GPU
// is, so the fake must refuse what a Hopper GPU's driver refuses: sizes,
// offsets and addresses off the 2 MiB granularity, mappings outside a
// reservation or over another, access before cuMemSetAccess, and handle
// types the allocation was not created with.
//
//===----------------------------------------------------------------------===//
#include "FakeDriver.h"
#include "FakeGpu.h"
#include "support/CudaApi.h"
#include "support/CudaDriver.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static const bool configured = setenv("COLL_CUDA_LIBRARY", COLLRT_FAKE_CUDA, 1) == 0;

namespace {

constexpr size_t kMiB = size_t(1) << 20, kPage = 2 * kMiB;

CUmemAllocationProp deviceMemory(unsigned types = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  prop.requestedHandleTypes = CUmemAllocationHandleType(types);
  return prop;
}

CUmulticastObjectProp multicastObject(unsigned devices, unsigned types) {
  CUmulticastObjectProp prop{};
  prop.numDevices = devices;
  prop.size = kPage;
  prop.handleTypes = types;
  return prop;
}

CUmemAccessDesc readWrite(int device = 0) {
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return access;
}

// An allocation of `bytes` mapped at a reservation of its own, without
// access yet.
struct Mapped {
  const collrt::CudaApi &cu = fakeDriver();
  CUmemGenericAllocationHandle handle = 0;
  CUdeviceptr at = 0;
  size_t bytes;
  explicit Mapped(size_t bytes) : bytes(bytes) {
    const CUmemAllocationProp prop = deviceMemory();
    EXPECT_EQ(cu.cuMemCreate(&handle, bytes, &prop, 0), CUDA_SUCCESS);
    EXPECT_EQ(cu.cuMemAddressReserve(&at, bytes, 0, 0, 0), CUDA_SUCCESS);
    EXPECT_EQ(cu.cuMemMap(at, bytes, 0, handle, 0), CUDA_SUCCESS);
  }
  ~Mapped() {
    EXPECT_EQ(cu.cuMemUnmap(at, bytes), CUDA_SUCCESS);
    EXPECT_EQ(cu.cuMemAddressFree(at, bytes), CUDA_SUCCESS);
    EXPECT_EQ(cu.cuMemRelease(handle), CUDA_SUCCESS);
  }
};

} // namespace

TEST(FakeCuda, GranularityIsHoppers) {
  const collrt::CudaApi &cu = fakeDriver();
  const CUmemAllocationProp prop = deviceMemory();
  size_t g = 0;
  ASSERT_EQ(cu.cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
            CUDA_SUCCESS);
  EXPECT_EQ(g, kPage);
  ASSERT_EQ(cu.cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
            CUDA_SUCCESS);
  EXPECT_EQ(g, kPage);
  CUmulticastObjectProp mc{};
  mc.numDevices = 2;
  mc.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  ASSERT_EQ(cu.cuMulticastGetGranularity(&g, &mc, CU_MULTICAST_GRANULARITY_MINIMUM), CUDA_SUCCESS);
  EXPECT_EQ(g, kPage);
  ASSERT_EQ(cu.cuMulticastGetGranularity(&g, &mc, CU_MULTICAST_GRANULARITY_RECOMMENDED),
            CUDA_SUCCESS);
  EXPECT_EQ(g, 512 * kMiB);
}

TEST(FakeCuda, CreateRefusesSizesOffTheGranularity) {
  const collrt::CudaApi &cu = fakeDriver();
  const CUmemAllocationProp prop = deviceMemory();
  CUmemGenericAllocationHandle h = 0;
  EXPECT_EQ(cu.cuMemCreate(&h, 0, &prop, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cu.cuMemCreate(&h, 4096, &prop, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cu.cuMemCreate(&h, kPage + 4096, &prop, 0), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cu.cuMemCreate(&h, 2 * kPage, &prop, 0), CUDA_SUCCESS);
  EXPECT_EQ(cu.cuMemRelease(h), CUDA_SUCCESS);
}

TEST(FakeCuda, ReserveRefusesSizesAndAddressesOffTheGranularity) {
  const collrt::CudaApi &cu = fakeDriver();
  CUdeviceptr p = 0;
  EXPECT_EQ(cu.cuMemAddressReserve(&p, 4096, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cu.cuMemAddressReserve(&p, kPage, 0, CUdeviceptr(kPage + 4096), 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cu.cuMemAddressReserve(&p, kPage, 3 * kPage, 0, 0), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cu.cuMemAddressReserve(&p, 2 * kPage, 0, 0, 0), CUDA_SUCCESS);
  EXPECT_EQ(p % kPage, 0u) << "a reservation starts on the granularity";
  EXPECT_EQ(cu.cuMemAddressFree(p, kPage), CUDA_ERROR_INVALID_VALUE) << "only as reserved";
  EXPECT_EQ(cu.cuMemAddressFree(p, 2 * kPage), CUDA_SUCCESS);
}

TEST(FakeCuda, MapRefusesOffsetsAddressesAndRangesCudaRefuses) {
  const collrt::CudaApi &cu = fakeDriver();
  const CUmemAllocationProp prop = deviceMemory();
  CUmemGenericAllocationHandle h = 0;
  ASSERT_EQ(cu.cuMemCreate(&h, 2 * kPage, &prop, 0), CUDA_SUCCESS);
  CUdeviceptr p = 0;
  ASSERT_EQ(cu.cuMemAddressReserve(&p, 2 * kPage, 0, 0, 0), CUDA_SUCCESS);
  EXPECT_EQ(cu.cuMemMap(p, kPage, 4096, h, 0), CUDA_ERROR_INVALID_VALUE) << "offset";
  EXPECT_EQ(cu.cuMemMap(p, kMiB, 0, h, 0), CUDA_ERROR_INVALID_VALUE) << "size";
  EXPECT_EQ(cu.cuMemMap(p + 4096, kPage, 0, h, 0), CUDA_ERROR_INVALID_VALUE) << "address";
  EXPECT_EQ(cu.cuMemMap(p + kPage, 2 * kPage, 0, h, 0), CUDA_ERROR_INVALID_VALUE)
      << "past the reservation";
  EXPECT_EQ(cu.cuMemMap(p, kPage, 2 * kPage, h, 0), CUDA_ERROR_INVALID_VALUE)
      << "past the allocation";
  // An address no reservation holds, aligned as one would be.
  void *wild = mmap(nullptr, 2 * kPage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(wild, MAP_FAILED);
  const CUdeviceptr unreserved =
      (CUdeviceptr(reinterpret_cast<uintptr_t>(wild)) + kPage - 1) / kPage * kPage;
  EXPECT_EQ(cu.cuMemMap(unreserved, kPage, 0, h, 0), CUDA_ERROR_INVALID_VALUE) << "unreserved";
  munmap(wild, 2 * kPage);
  ASSERT_EQ(cu.cuMemMap(p + kPage, kPage, kPage, h, 0), CUDA_SUCCESS);
  EXPECT_EQ(cu.cuMemMap(p, 2 * kPage, 0, h, 0), CUDA_ERROR_INVALID_VALUE) << "already mapped";
  ASSERT_EQ(cu.cuMemMap(p, kPage, 0, h, 0), CUDA_SUCCESS);
  EXPECT_EQ(cu.cuMemUnmap(p, kMiB), CUDA_ERROR_INVALID_VALUE) << "part of a mapping";
  EXPECT_EQ(cu.cuMemUnmap(p, 2 * kPage), CUDA_SUCCESS) << "two whole mappings";
  EXPECT_EQ(cu.cuMemAddressFree(p, 2 * kPage), CUDA_SUCCESS);
  EXPECT_EQ(cu.cuMemRelease(h), CUDA_SUCCESS);
}

TEST(FakeCuda, MappedMemoryIsInaccessibleUntilSetAccess) {
  Mapped m(2 * kPage);
  const collrt::CudaApi &cu = m.cu;
  CUstream s;
  ASSERT_EQ(cu.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  const char byte = 1;
  EXPECT_EQ(cu.cuMemsetD8Async(m.at, 7, 16, s), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cu.cuMemcpyHtoDAsync(m.at, &byte, 1, s), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cu.cuMemcpyDtoDAsync(m.at, m.at + kPage, 1, s), CUDA_ERROR_INVALID_VALUE);
  const CUmemAccessDesc other = readWrite(1), mine = readWrite();
  EXPECT_EQ(cu.cuMemSetAccess(m.at, 2 * kPage, &other, 1), CUDA_ERROR_INVALID_DEVICE)
      << "the fake has device 0 only";
  EXPECT_EQ(cu.cuMemSetAccess(m.at, kPage, &mine, 1), CUDA_ERROR_INVALID_VALUE)
      << "part of a mapping";
  EXPECT_EQ(cu.cuMemSetAccess(m.at, 4 * kPage, &mine, 1), CUDA_ERROR_INVALID_VALUE)
      << "past the mapping";
  ASSERT_EQ(cu.cuMemSetAccess(m.at, 2 * kPage, &mine, 1), CUDA_SUCCESS);
  ASSERT_EQ(cu.cuMemsetD8Async(m.at, 7, 2 * kPage, s), CUDA_SUCCESS);
  ASSERT_EQ(cu.cuMemcpyDtoDAsync(m.at, m.at + kPage, 1, s), CUDA_SUCCESS);
  ASSERT_EQ(cu.cuStreamSynchronize(s), CUDA_SUCCESS);
  EXPECT_EQ(reinterpret_cast<const char *>(m.at)[2 * kPage - 1], 7);
  cu.cuStreamDestroy(s);
}

TEST(FakeCudaDeathTest, AKernelOnMemoryWithoutAccessAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Mapped m(kPage);
  EXPECT_DEATH(
      {
        collc::Args args{};
        args.buffers[1] = reinterpret_cast<char *>(m.at) + 64;
        collc_fake::checkAccess(args);
      },
      "rank 0 threadblock 0: a buffer at 0x[0-9a-f]+ lies in VMM memory that is not mapped with "
      "access");
  EXPECT_DEATH(*reinterpret_cast<volatile char *>(m.at) = 1, "") << "a plain store faults too";
}

// As CUDA's: cuMemSetAccess opens a mapping to the devices its descriptors
// name, each on its own; a kernel touches it only from one of those, which
// is the device of the stream it runs on.
TEST(FakeCuda, MemoryIsOpenOnlyToTheDevicesGivenAccess) {
  setenv("FAKE_CUDA_DEVICES", "2", 1);
  Mapped m(kPage);
  const collrt::CudaApi &cu = m.cu;
  using Launch = int (*)(void *, void (*)(void *), void *, void (*)(void *));
  using MayTouch = int (*)(const void *, size_t);
  static Launch queue = collc_fake::fakeSymbol<Launch>("fakeCudaLaunch");
  static MayTouch mayTouch = collc_fake::fakeSymbol<MayTouch>("fakeCudaMayTouch");
  ASSERT_TRUE(queue && mayTouch);
  using GetProc =
      CUresult (*)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
  static GetProc getProc = collc_fake::fakeSymbol<GetProc>("cuGetProcAddress_v2");
  ASSERT_TRUE(getProc);
  void *retainFn = nullptr;
  getProc("cuDevicePrimaryCtxRetain", &retainFn, collrt::kCudaAbi, CU_GET_PROC_ADDRESS_DEFAULT,
          nullptr);
  const auto retain = reinterpret_cast<decltype(&cuDevicePrimaryCtxRetain)>(retainFn);
  ASSERT_TRUE(retain);
  CUcontext context[2];
  CUstream s[2];
  struct Probe {
    void *at;
    int seen = -1;
  } probe[2] = {{reinterpret_cast<void *>(m.at)}, {reinterpret_cast<void *>(m.at)}};
  // What a kernel on device d's stream may touch.
  auto kernelSees = [&](int d) {
    EXPECT_EQ(queue(
                  s[d],
                  [](void *p) {
                    auto *pr = static_cast<Probe *>(p);
                    pr->seen = mayTouch(pr->at, 64);
                  },
                  &probe[d], [](void *) {}),
              CUDA_SUCCESS);
    EXPECT_EQ(cu.cuStreamSynchronize(s[d]), CUDA_SUCCESS);
    return probe[d].seen;
  };
  for (int d = 0; d < 2; ++d) {
    ASSERT_EQ(retain(&context[d], d), CUDA_SUCCESS);
    ASSERT_EQ(cu.cuCtxSetCurrent(context[d]), CUDA_SUCCESS);
    ASSERT_EQ(cu.cuStreamCreate(&s[d], CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  }
  const CUmemAccessDesc one = readWrite(1), zero = readWrite(0);
  ASSERT_EQ(cu.cuMemSetAccess(m.at, kPage, &one, 1), CUDA_SUCCESS);
  EXPECT_EQ(kernelSees(1), 1);
  ASSERT_EQ(cu.cuCtxSetCurrent(context[0]), CUDA_SUCCESS);
  EXPECT_EQ(kernelSees(0), 0) << "opened to device 1 only";
  ASSERT_EQ(cu.cuMemSetAccess(m.at, kPage, &zero, 1), CUDA_SUCCESS);
  EXPECT_EQ(kernelSees(0), 1);
  ASSERT_EQ(cu.cuCtxSetCurrent(context[1]), CUDA_SUCCESS);
  EXPECT_EQ(kernelSees(1), 1) << "access adds up, device by device";
  CUmemAccessDesc none = readWrite(1);
  none.flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  ASSERT_EQ(cu.cuMemSetAccess(m.at, kPage, &none, 1), CUDA_SUCCESS);
  EXPECT_EQ(kernelSees(1), 0);
  ASSERT_EQ(cu.cuCtxSetCurrent(context[0]), CUDA_SUCCESS);
  for (CUstream x : s)
    cu.cuStreamDestroy(x);
  unsetenv("FAKE_CUDA_DEVICES");
}

TEST(FakeCuda, HandlesTravelOnlyAsTheTypesTheyWereCreatedWith) {
  const collrt::CudaApi &cu = fakeDriver();
  int fd = -1;
  CUmemGenericAllocationHandle none = 0, posix = 0, imported = 0;
  CUmemAllocationProp prop = deviceMemory(CU_MEM_HANDLE_TYPE_NONE);
  ASSERT_EQ(cu.cuMemCreate(&none, kPage, &prop, 0), CUDA_SUCCESS);
  EXPECT_EQ(cu.cuMemExportToShareableHandle(&fd, none, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
            CUDA_ERROR_INVALID_VALUE);
  prop = deviceMemory(CU_MEM_HANDLE_TYPE_FABRIC);
  EXPECT_EQ(cu.cuMemCreate(&posix, kPage, &prop, 0), CUDA_ERROR_NOT_SUPPORTED)
      << "a device without fabric handles";
  prop = deviceMemory(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  ASSERT_EQ(cu.cuMemCreate(&posix, kPage, &prop, 0), CUDA_SUCCESS);
  CUmemFabricHandle fabric{};
  EXPECT_EQ(cu.cuMemExportToShareableHandle(&fabric, posix, CU_MEM_HANDLE_TYPE_FABRIC, 0),
            CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(
      cu.cuMemExportToShareableHandle(&fd, posix, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
      CUDA_SUCCESS);
  ASSERT_EQ(cu.cuMemImportFromShareableHandle(&imported, reinterpret_cast<void *>(intptr_t(fd)),
                                              CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
            CUDA_SUCCESS);
  EXPECT_EQ(cu.cuMemRelease(imported), CUDA_SUCCESS);
  // A fabric handle of memory made for descriptors only, on a device that
  // has fabric handles: the importer refuses it.
  setenv("FAKE_CUDA_FABRIC", "1", 1);
  const int owner[2] = {int(getpid()), fd};
  memcpy(fabric.data, owner, sizeof owner);
  EXPECT_EQ(cu.cuMemImportFromShareableHandle(&imported, &fabric, CU_MEM_HANDLE_TYPE_FABRIC),
            CUDA_ERROR_INVALID_VALUE);
  unsetenv("FAKE_CUDA_FABRIC");
  // A descriptor that is no allocation of the driver.
  const int foreign = memfd_create("not-cuda", MFD_CLOEXEC);
  ASSERT_EQ(ftruncate(foreign, off_t(kPage)), 0);
  EXPECT_EQ(cu.cuMemImportFromShareableHandle(&imported,
                                              reinterpret_cast<void *>(intptr_t(foreign)),
                                              CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
            CUDA_ERROR_INVALID_VALUE);
  close(foreign);
  close(fd);
  // A multicast object likewise.
  const CUmulticastObjectProp mc = multicastObject(1, CU_MEM_HANDLE_TYPE_NONE);
  CUmemGenericAllocationHandle object = 0;
  ASSERT_EQ(cu.cuMulticastCreate(&object, &mc), CUDA_SUCCESS);
  EXPECT_EQ(
      cu.cuMemExportToShareableHandle(&fd, object, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
      CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cu.cuMemRelease(object), CUDA_SUCCESS);
  EXPECT_EQ(cu.cuMemRelease(posix), CUDA_SUCCESS);
  EXPECT_EQ(cu.cuMemRelease(none), CUDA_SUCCESS);
}

TEST(FakeCuda, FabricHandlesTravelWhereRequested) {
  const collrt::CudaApi &cu = fakeDriver();
  setenv("FAKE_CUDA_FABRIC", "1", 1);
  const CUmemAllocationProp prop =
      deviceMemory(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC);
  CUmemGenericAllocationHandle h = 0, imported = 0;
  ASSERT_EQ(cu.cuMemCreate(&h, kPage, &prop, 0), CUDA_SUCCESS);
  CUmemFabricHandle fabric{};
  ASSERT_EQ(cu.cuMemExportToShareableHandle(&fabric, h, CU_MEM_HANDLE_TYPE_FABRIC, 0),
            CUDA_SUCCESS);
  EXPECT_EQ(cu.cuMemImportFromShareableHandle(&imported, &fabric, CU_MEM_HANDLE_TYPE_FABRIC),
            CUDA_SUCCESS);
  unsetenv("FAKE_CUDA_FABRIC");
  EXPECT_EQ(cu.cuMemRelease(imported), CUDA_SUCCESS);
  EXPECT_EQ(cu.cuMemRelease(h), CUDA_SUCCESS);
}

// A multicast object is a switch: an address through it reaches the same
// offset of every memory bound to it, in whichever process bound it (here
// a forked "GPU"), which is what FakeGpu.h's multimem steps reduce over.
TEST(FakeCuda, MulticastAddressesReachEveryBoundMemory) {
  const collrt::CudaApi &cu = fakeDriver();
  const CUmulticastObjectProp prop = multicastObject(2, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  CUmemGenericAllocationHandle object = 0;
  ASSERT_EQ(cu.cuMulticastCreate(&object, &prop), CUDA_SUCCESS);
  int bound[2], done[2];
  ASSERT_EQ(pipe(bound), 0);
  ASSERT_EQ(pipe(done), 0);
  const pid_t child = fork();
  if (child == 0) { // the other GPU: its memory holds 2s
    Mapped theirs(kPage);
    const CUmemAccessDesc access = readWrite();
    char c = 0;
    const bool ok = cu.cuMemSetAccess(theirs.at, kPage, &access, 1) == CUDA_SUCCESS &&
                    (memset(reinterpret_cast<void *>(theirs.at), 2, kPage), true) &&
                    cu.cuMulticastAddDevice(object, 0) == CUDA_SUCCESS &&
                    cu.cuMulticastBindMem(object, 0, theirs.handle, 0, kPage, 0) == CUDA_SUCCESS;
    c = ok;
    ssize_t n = write(bound[1], &c, 1);
    n += read(done[0], &c, 1); // keeps the memory until the parent is done
    _exit(n == 2 ? 0 : 1);
  }
  Mapped mine(kPage);
  const CUmemAccessDesc access = readWrite();
  ASSERT_EQ(cu.cuMemSetAccess(mine.at, kPage, &access, 1), CUDA_SUCCESS);
  memset(reinterpret_cast<void *>(mine.at), 1, kPage);
  ASSERT_EQ(cu.cuMulticastAddDevice(object, 0), CUDA_SUCCESS);
  ASSERT_EQ(cu.cuMulticastBindMem(object, 0, mine.handle, 0, kPage, 0), CUDA_SUCCESS);
  char ok = 0;
  ASSERT_EQ(read(bound[0], &ok, 1), 1);
  ASSERT_TRUE(ok) << "the child could not bind its memory";
  CUdeviceptr mc = 0;
  ASSERT_EQ(cu.cuMemAddressReserve(&mc, kPage, 0, 0, 0), CUDA_SUCCESS);
  ASSERT_EQ(cu.cuMemMap(mc, kPage, 0, object, 0), CUDA_SUCCESS);
  ASSERT_EQ(cu.cuMemSetAccess(mc, kPage, &access, 1), CUDA_SUCCESS);
  char *copies[4] = {};
  const char *at = reinterpret_cast<const char *>(mc) + 4096;
  ASSERT_EQ(collc_fake::multicastCopies(at, 64, copies, 4), 2);
  int sum = 0;
  for (char *c : {copies[0], copies[1]})
    sum += c[0] + c[63];
  EXPECT_EQ(sum, 2 * (1 + 2)) << "each binding once: this process's 1s and the child's 2s";
  // A store through one copy lands in the child's memory, which it reads.
  char *other = copies[0][0] == 2 ? copies[0] : copies[1];
  other[0] = 7;
  ASSERT_EQ(collc_fake::multicastCopies(at, 1, copies, 4), 2);
  EXPECT_EQ(copies[0][0] + copies[1][0], 1 + 7);
  EXPECT_EQ(collc_fake::multicastCopies(at + kPage, 1, copies, 4), -1) << "past the mapping";
  EXPECT_EQ(collc_fake::multicastCopies(reinterpret_cast<const char *>(mine.at), 1, copies, 4), -1)
      << "plain memory is no multicast address";
  ASSERT_EQ(write(done[1], "x", 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(cu.cuMemUnmap(mc, kPage), CUDA_SUCCESS);
  EXPECT_EQ(cu.cuMemAddressFree(mc, kPage), CUDA_SUCCESS);
  EXPECT_EQ(cu.cuMulticastUnbind(object, 0, 0, kPage), CUDA_SUCCESS);
  EXPECT_EQ(cu.cuMemRelease(object), CUDA_SUCCESS);
  for (int fd : {bound[0], bound[1], done[0], done[1]})
    close(fd);
}
