//===- HostMemory.cpp - Windows in host memory -----------------------------===//
//
// Each rank's part of a window is a memfd, mapped here. A memfd can be
// passed to a peer on the same machine (shm) the way a CUDA VMM allocation
// is exported as a POSIX fd, and it is plain memory for a proxy to write
// into (socket), so one allocation serves every transport of a rank.
//
//===----------------------------------------------------------------------===//
#include "transport/Transport.h"

#include <sys/mman.h>
#include <unistd.h>

using namespace collrt;

collResult_t collrt::allocateWindow(size_t bytes, int rank, int nranks, Window &w,
                                    std::string &error) {
  w.base.assign(nranks, nullptr);
  w.size.assign(nranks, 0);
  bytes = bytes ? (bytes + 4095) & ~size_t(4095) : 4096;
  w.fd = memfd_create("collc-window", MFD_CLOEXEC);
  void *p = MAP_FAILED;
  if (w.fd >= 0 && !ftruncate(w.fd, off_t(bytes)))
    p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, w.fd, 0);
  if (p == MAP_FAILED) {
    error = "cannot create a window of " + std::to_string(bytes) + " bytes";
    if (w.fd >= 0)
      close(w.fd);
    w.fd = -1;
    return collSystemError;
  }
  w.base[rank] = static_cast<char *>(p);
  w.size[rank] = bytes;
  return collSuccess;
}

void collrt::freeWindow(Window &w, int rank) {
  if (size_t(rank) < w.base.size() && w.base[rank]) {
    munmap(w.base[rank], w.size[rank]);
    w.base[rank] = nullptr;
    w.size[rank] = 0;
  }
  if (w.fd >= 0)
    close(w.fd);
  w.fd = -1;
}
