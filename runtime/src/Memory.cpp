//===- Memory.cpp - collMemAlloc and collMemFree on the host ---------------===//
#include "src/Memory.h"

#include "collrt.h"

#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <sys/mman.h>
#include <unistd.h>

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

extern "C" {

collResult_t collMemAlloc(void **ptr, size_t size) {
  if (!ptr || !size)
    return collInvalidArgument;
  *ptr = nullptr;
  const size_t bytes = (size + 4095) & ~size_t(4095);
  if (bytes < size)
    return collInvalidArgument;
  int fd = memfd_create("collc-memory", MFD_CLOEXEC);
  void *p = MAP_FAILED;
  if (fd >= 0 && !ftruncate(fd, off_t(bytes)))
    p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    if (fd >= 0)
      close(fd);
    return collSystemError;
  }
  std::lock_guard<std::mutex> hold(lock);
  allocations()[reinterpret_cast<uintptr_t>(p)] = {static_cast<char *>(p), bytes, fd};
  *ptr = p;
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
      return collInvalidArgument;
    a = found->second;
    allocations().erase(found);
  }
  munmap(a.base, a.size);
  close(a.fd);
  return collSuccess;
}

} // extern "C"
