//===- Memory.cpp - collMemAlloc and collMemFree ---------------------------===//
#include "src/Memory.h"
#include "src/Comm.h"

#include "collrt.h"
#include "transport/MemoryBackend.h"
#include "transport/Nvls.h"

#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>

using namespace collrt;

namespace {

// Every live allocation of the process, by address.
std::mutex lock;
std::map<uintptr_t, Allocation> &allocations() {
  static std::map<uintptr_t, Allocation> all;
  return all;
}

} // namespace

bool collrt::findAllocation(const void *p, size_t bytes, Allocation &out) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> hold(lock);
  auto &all = allocations();
  auto next = all.upper_bound(at);
  if (next == all.begin())
    return false;
  const Allocation &a = std::prev(next)->second;
  const auto base = reinterpret_cast<uintptr_t>(a.base);
  if (at - base > a.size || bytes > a.size - (at - base))
    return false;
  out = a;
  return true;
}

void collrt::holdAllocation(const void *base, int windows) {
  std::lock_guard<std::mutex> hold(lock);
  auto found = allocations().find(reinterpret_cast<uintptr_t>(base));
  if (found != allocations().end())
    found->second.windows += windows;
}

extern "C" {

collResult_t collMemAlloc(void **ptr, size_t size) {
  if (!ptr || !size)
    return refuse(nullptr, collInvalidArgument,
                  std::string("collMemAlloc: ") + (ptr ? "a size of 0" : "ptr is NULL"));
  *ptr = nullptr;
  if (size > (size_t(1) << 48))
    return refuse(nullptr, collInvalidArgument,
                  "collMemAlloc: " + std::to_string(size) + " bytes; at most 2^48");
  const MemoryBackend *gpu = currentGpuMemory();
  Region region;
  std::string error;
  if (collResult_t r = gpu ? gpu->allocate(multicastBytes(size), region, error)
                           : hostMemory().allocate(size, region, error))
    return refuse(nullptr, r, "collMemAlloc: " + error);
  std::lock_guard<std::mutex> hold(lock);
  allocations()[reinterpret_cast<uintptr_t>(region.base)] = {region.base, region.size, region.fd,
                                                             region.handle, gpu};
  *ptr = region.base;
  return collSuccess;
}

collResult_t collMemFree(void *ptr) {
  if (!ptr)
    return collSuccess;
  Allocation a;
  {
    std::lock_guard<std::mutex> hold(lock);
    auto found = allocations().find(reinterpret_cast<uintptr_t>(ptr));
    if (found == allocations().end())
      return refuse(nullptr, collInvalidArgument,
                    "collMemFree: the pointer is not one that collMemAlloc returned");
    if (found->second.windows > 0) // a peer may still map it
      return refuse(nullptr, collInvalidUsage,
                    "collMemFree: the memory is in a registered window; deregister it first");
    a = found->second;
    allocations().erase(found);
  }
  Region region{a.base, a.size, a.fd, a.handle};
  (a.memory ? *a.memory : hostMemory()).unmap(region);
  return collSuccess;
}

} // extern "C"
