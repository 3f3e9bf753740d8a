//===- HostMemory.cpp - Windows in host memory -----------------------------===//
//
// Each rank's part of a window is a memfd, mapped here. A memfd can be
// passed to a peer on the same machine (shm) the way a CUDA VMM allocation
// is exported as a POSIX fd, and it is plain memory for a proxy to write
// into (socket), so one allocation serves every transport of a rank.
//
//===----------------------------------------------------------------------===//
#include "transport/MemoryBackend.h"
#include "transport/Transport.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

using namespace collrt;

namespace {

class HostMemory : public MemoryBackend {
public:
  const char *name() const override { return "host"; }

  collResult_t allocate(size_t bytes, Region &out, std::string &error) const override {
    bytes = bytes ? (bytes + 4095) & ~size_t(4095) : 4096;
    int fd = memfd_create("collc-window", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, off_t(bytes))) {
      error = "cannot create a window of " + std::to_string(bytes) + " bytes";
      if (fd >= 0)
        close(fd);
      return collSystemError;
    }
    collResult_t r = import(fd, bytes, out, error);
    if (r != collSuccess)
      close(fd);
    else
      out.fd = fd;
    return r;
  }

  collResult_t import(int fd, size_t bytes, Region &out, std::string &error) const override {
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      error = "cannot map " + std::to_string(bytes) + " bytes of shared memory";
      return collSystemError;
    }
    out = Region{static_cast<char *>(p), bytes, -1, 0};
    return collSuccess;
  }

  void unmap(Region &r) const override {
    if (r.base)
      munmap(r.base, r.size);
    if (r.fd >= 0)
      close(r.fd);
    r = Region{};
  }

  // The emulation's stand-in for a fabric handle: the owner's process and
  // descriptor, which /proc opens for any process of the same user on this
  // kernel, as a fabric handle opens an allocation on any host of the
  // domain. Ranks of "different hosts" in the emulation share one kernel.
  bool exportFabric(const Region &r, FabricHandle &h, std::string &error) const override {
    if (r.fd < 0) {
      error = "host memory without its descriptor";
      return false;
    }
    const int32_t owner[2] = {int32_t(getpid()), r.fd};
    h = FabricHandle{};
    memcpy(h.bytes, owner, sizeof owner);
    return true;
  }

  collResult_t importFabric(const FabricHandle &h, size_t bytes, Region &out,
                            std::string &error) const override {
    int32_t owner[2];
    memcpy(owner, h.bytes, sizeof owner);
    const std::string path =
        "/proc/" + std::to_string(owner[0]) + "/fd/" + std::to_string(owner[1]);
    int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      error = "cannot open " + path + ": " + strerror(errno);
      return collSystemError;
    }
    collResult_t r = import(fd, bytes, out, error);
    close(fd);
    return r;
  }
};

} // namespace

const MemoryBackend &collrt::hostMemory() {
  static const HostMemory host;
  return host;
}

namespace {
const MemoryBackend &backendOf(const Window &w) { return w.memory ? *w.memory : hostMemory(); }
} // namespace

collResult_t collrt::allocateWindow(size_t bytes, int rank, int nranks, Window &w,
                                    std::string &error, const MemoryBackend *memory) {
  w.base.assign(nranks, nullptr);
  w.size.assign(nranks, 0);
  w.handle.assign(nranks, 0);
  w.memory = memory;
  Region mine;
  if (collResult_t r = backendOf(w).allocate(bytes, mine, error))
    return r;
  w.base[rank] = mine.base;
  w.size[rank] = mine.size;
  w.handle[rank] = mine.handle;
  w.fd = mine.fd;
  return collSuccess;
}

void collrt::freeWindow(Window &w, int rank) {
  releasePart(w, rank);
  if (w.slots.base)
    w.slotMemory->unmap(w.slots);
  Region descriptor;
  descriptor.fd = w.fd;
  w.fd = -1;
  backendOf(w).unmap(descriptor);
}

namespace {
collResult_t mapPart(Window &w, int owner, const Region &theirs) {
  if (w.handle.size() < w.base.size())
    w.handle.resize(w.base.size(), 0);
  w.base[owner] = theirs.base;
  w.size[owner] = theirs.size;
  w.handle[owner] = theirs.handle;
  return collSuccess;
}
} // namespace

collResult_t collrt::importFabricPart(Window &w, int owner, const FabricHandle &handle,
                                      size_t bytes, std::string &error) {
  Region theirs;
  if (collResult_t r = backendOf(w).importFabric(handle, bytes, theirs, error))
    return r;
  return mapPart(w, owner, theirs);
}

collResult_t collrt::importPart(Window &w, int owner, int fd, size_t bytes, std::string &error) {
  Region theirs;
  if (collResult_t r = backendOf(w).import(fd, bytes, theirs, error))
    return r;
  return mapPart(w, owner, theirs);
}

void collrt::releasePart(Window &w, int owner) {
  if (size_t(owner) >= w.base.size() || !w.base[owner])
    return;
  Region part{w.base[owner], w.size[owner], -1,
              size_t(owner) < w.handle.size() ? w.handle[owner] : 0};
  backendOf(w).unmap(part);
  w.base[owner] = nullptr;
  w.size[owner] = 0;
}
