//===- Nvls.cpp - NVLink multicast objects over the symmetric windows -----===//
#include "transport/Nvls.h"

#if __has_include(<cuda.h>)
#include "support/Bootstrap.h"
#include "support/CudaApi.h"
#include "support/CudaDriver.h"
#include "support/Env.h"
#include "transport/PeerTransports.h"

#include <map>
#include <unistd.h>
#include <vector>

using namespace collrt;

namespace {

// Collective: the first rank's complaint ("rank 2: cuMemMap: ..."), or
// empty where every rank has none.
collResult_t agree(Bootstrap &boot, const std::string &mine, std::string &first,
                   std::string &error) {
  std::vector<std::string> all;
  if (collResult_t r = boot.allgather(mine, all, error))
    return r;
  first.clear();
  for (size_t q = 0; q < all.size() && first.empty(); ++q)
    if (!all[q].empty())
      first = "rank " + std::to_string(q) + ": " + all[q];
  return collSuccess;
}

CUmulticastObjectProp propFor(int nranks, size_t bytes) {
  CUmulticastObjectProp prop{};
  prop.numDevices = unsigned(nranks);
  prop.size = bytes;
  prop.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

} // namespace

collResult_t collrt::multicastSupport(const CudaApi &cu, Bootstrap &boot, std::string &why,
                                      std::string &error) {
  std::string mine, gpu;
  CUdevice device = 0;
  int supported = 0, domain = 0, bus = 0, slot = 0;
  if (!Env::get().nvls)
    mine = "COLL_NVLS=0";
  else if (!cu.cuMulticastCreate || !cu.cuMulticastAddDevice || !cu.cuMulticastBindMem ||
           !cu.cuMulticastUnbind || !cu.cuMulticastGetGranularity)
    mine = "the CUDA driver has no multicast calls (they came with CUDA 12.1)";
  else if (CUresult c = cu.cuCtxGetDevice(&device))
    mine = cu.describe("cuCtxGetDevice", c);
  else if (CUresult c =
               cu.cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, device))
    mine = cu.describe("cuDeviceGetAttribute", c);
  else if (!supported)
    mine = "its GPU has no NVLink multicast (no NVSwitch, or a GPU before sm_90)";
  else if (cu.cuDeviceGetAttribute(&domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, device) ||
           cu.cuDeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, device) ||
           cu.cuDeviceGetAttribute(&slot, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, device))
    mine = "cuDeviceGetAttribute cannot tell its GPU's PCI address";
  else
    gpu = std::to_string(domain) + ":" + std::to_string(bus) + ":" + std::to_string(slot);
  // Everyone's GPU, to find ranks that share one: a multicast object takes
  // each device once.
  std::vector<std::string> gpus;
  if (collResult_t r = boot.allgather(gpu, gpus, error))
    return r;
  if (collResult_t r = agree(boot, mine, why, error))
    return r;
  std::map<std::string, size_t> first;
  for (size_t q = 0; q < gpus.size() && why.empty(); ++q) {
    auto [at, fresh] = first.emplace(gpus[q], q);
    if (!fresh)
      why = "ranks " + std::to_string(at->second) + " and " + std::to_string(q) +
            " share one GPU, which a multicast object takes only once";
  }
  return collSuccess;
}

collResult_t collrt::multicastGranularity(const CudaApi &cu, int nranks, size_t &granularity,
                                          std::string &error) {
  const CUmulticastObjectProp prop = propFor(nranks, 0);
  if (CUresult c =
          cu.cuMulticastGetGranularity(&granularity, &prop, CU_MULTICAST_GRANULARITY_MINIMUM)) {
    error = cu.describe("cuMulticastGetGranularity", c);
    return collUnhandledCudaError;
  }
  return collSuccess;
}

size_t collrt::multicastBytes(size_t bytes) {
  std::string why;
  const CudaApi *cu = cudaDriver(why);
  CUdevice device;
  int supported = 0;
  size_t granularity = 0;
  if (!cu || !cu->cuMulticastGetGranularity || cu->cuCtxGetDevice(&device) ||
      cu->cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, device) ||
      !supported || multicastGranularity(*cu, 1, granularity, why) || !granularity)
    return bytes;
  return (bytes + granularity - 1) / granularity * granularity;
}

collResult_t collrt::bindMulticast(const CudaApi &cu, Bootstrap &boot, PeerTransports &net,
                                   int rank, int nranks, const Window &window, size_t bytes,
                                   MulticastMapping &out, std::string &why, std::string &error) {
  out = MulticastMapping{};
  why.clear();
  MulticastMapping m;
  std::string mine;
  auto check = [&](const char *call, CUresult c) {
    if (c != CUDA_SUCCESS && mine.empty())
      mine = cu.describe(call, c);
    return c == CUDA_SUCCESS;
  };
  // Each stage ends where every rank knows whether every rank got through.
  auto stage = [&]() -> collResult_t {
    collResult_t r = agree(boot, mine, why, error);
    if (r != collSuccess || !why.empty())
      unbindMulticast(cu, m);
    return r;
  };
  CUdevice device = 0;
  check("cuCtxGetDevice", cu.cuCtxGetDevice(&device));
  m.device = device;
  const CUmulticastObjectProp prop = propFor(nranks, bytes);
  size_t granularity = 0; // the mapping's alignment too
  check("cuMulticastGetGranularity",
        cu.cuMulticastGetGranularity(&granularity, &prop, CU_MULTICAST_GRANULARITY_MINIMUM));
  CUmemGenericAllocationHandle mc = 0;
  int fd = -1;
  if (rank == 0 && mine.empty() && check("cuMulticastCreate", cu.cuMulticastCreate(&mc, &prop))) {
    m.handle = mc;
    check("cuMemExportToShareableHandle",
          cu.cuMemExportToShareableHandle(&fd, mc, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  }
  if (collResult_t r = stage(); r != collSuccess || !why.empty())
    return r;
  collResult_t passed = net.broadcastFd(0, fd, error);
  if (rank != 0 && passed == collSuccess &&
      check("cuMemImportFromShareableHandle",
            cu.cuMemImportFromShareableHandle(&mc, reinterpret_cast<void *>(intptr_t(fd)),
                                              CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)))
    m.handle = mc;
  if (fd >= 0)
    close(fd);
  if (passed != collSuccess) {
    unbindMulticast(cu, m);
    return passed;
  }
  // Binding and mapping wait in the driver until every device is added.
  if (mine.empty())
    check("cuMulticastAddDevice", cu.cuMulticastAddDevice(mc, device));
  if (collResult_t r = stage(); r != collSuccess || !why.empty())
    return r;
  if (check("cuMulticastBindMem",
            cu.cuMulticastBindMem(mc, 0, CUmemGenericAllocationHandle(window.handle[rank]), 0,
                                  bytes, 0)))
    m.size = bytes;
  CUdeviceptr at = 0;
  if (mine.empty() &&
      check("cuMemAddressReserve", cu.cuMemAddressReserve(&at, bytes, granularity, 0, 0))) {
    if (check("cuMemMap", cu.cuMemMap(at, bytes, 0, mc, 0))) {
      m.base = reinterpret_cast<char *>(at);
      CUmemAccessDesc access{};
      access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      access.location.id = device;
      access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
      check("cuMemSetAccess", cu.cuMemSetAccess(at, bytes, &access, 1));
    } else {
      cu.cuMemAddressFree(at, bytes);
    }
  }
  // No kernel stores through the object before every part is bound.
  if (collResult_t r = stage(); r != collSuccess || !why.empty())
    return r;
  out = m;
  return collSuccess;
}

void collrt::unbindMulticast(const CudaApi &cu, MulticastMapping &m) {
  if (m.base) {
    cu.cuMemUnmap(CUdeviceptr(m.base), m.size);
    cu.cuMemAddressFree(CUdeviceptr(m.base), m.size);
  }
  if (m.handle && m.size)
    cu.cuMulticastUnbind(CUmemGenericAllocationHandle(m.handle), m.device, 0, m.size);
  if (m.handle)
    cu.cuMemRelease(CUmemGenericAllocationHandle(m.handle));
  m = MulticastMapping{};
}

#else

size_t collrt::multicastBytes(size_t bytes) { return bytes; }

#endif
