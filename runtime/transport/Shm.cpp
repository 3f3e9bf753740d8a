//===- Shm.cpp - Shared memory between processes of one machine -----------===//
//
// Each window is a memfd. Its descriptor travels to every peer over a Unix
// socket with SCM_RIGHTS, the same flow as exporting a CUDA VMM allocation
// as a POSIX fd, and each peer maps it. Sockets are made once, at init.
// Their names are in the abstract namespace, which any local process can
// reach, so a connection counts as a peer's only once it has presented the
// group's secret.
//
//===----------------------------------------------------------------------===//
#include "transport/Transport.h"

#include "src/Bootstrap.h"
#include "src/Socket.h"

#include <cerrno>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace collrt;

namespace {

class ShmTransport : public Transport {
public:
  ShmTransport(int rank, int nranks, double timeout)
      : rank(rank), nranks(nranks), timeout(timeout), out(nranks, -1), in(nranks, -1) {}
  ~ShmTransport() override {
    for (int fd : out)
      if (fd >= 0)
        close(fd);
    for (int fd : in)
      if (fd >= 0)
        close(fd);
  }

  const char *name() const override { return "shm"; }

  collResult_t connect(Bootstrap &boot, std::string &error) {
    std::string me = "collc-" + std::to_string(boot.magic()) + "-" + std::to_string(rank);
    int listener = listenUnix(me, error);
    if (listener < 0)
      return collSystemError;
    // Every listener exists once the barrier returns.
    collResult_t res = boot.barrier(error);
    const PeerHello hello = boot.hello(rank);
    for (int p = 0; p < nranks && res == collSuccess; ++p) {
      if (p == rank)
        continue;
      std::string peer = "collc-" + std::to_string(boot.magic()) + "-" + std::to_string(p);
      out[p] = connectUnix(peer, timeout, error);
      if (out[p] < 0 || !writeFull(out[p], &hello, sizeof hello, error))
        res = collSystemError;
    }
    int arrived = 0;
    auto admit = [&](int fd, const std::string &bytes) {
      int from = boot.admit(bytes);
      if (from < 0 || from >= nranks || from == rank || in[from] >= 0)
        return false;
      in[from] = fd;
      ++arrived;
      return true;
    };
    if (res == collSuccess &&
        !admitConnections(listener, sizeof(PeerHello), timeout, admit,
                          [&] { return arrived == nranks - 1; }, error)) {
      error = "shm: a peer did not connect (" + error + ")";
      res = collRemoteError;
    }
    close(listener);
    return res;
  }

  collResult_t sendFifo(Window &w, int owner, size_t offset, int32_t slots, int64_t slotBytes,
                        int32_t protocol, collc::Fifo &fifo, std::string &) override {
    fifo = fifoAt(w.base[owner] + offset, slots, slotBytes, protocol);
    return collSuccess;
  }

  collResult_t exchangeWindow(size_t bytes, Window &w, std::string &error) override {
    w.id = windows++;
    w.base.assign(nranks, nullptr);
    w.size.assign(nranks, 0);
    bytes = bytes ? (bytes + 4095) & ~size_t(4095) : 4096;
    int fd = memfd_create("collc-window", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, off_t(bytes))) {
      error = "shm: cannot create a window of " + std::to_string(bytes) + " bytes";
      if (fd >= 0)
        close(fd);
      return collSystemError;
    }
    collResult_t res = map(fd, rank, w, error);
    for (int p = 0; p < nranks && res == collSuccess; ++p)
      if (p != rank && !sendFd(out[p], fd, rank, error)) {
        res = errno == EPIPE || errno == ECONNRESET ? collRemoteError : collSystemError;
        error = "shm: cannot pass this rank's window to rank " + std::to_string(p) + ": " + error;
      }
    close(fd);
    for (int p = 0; p < nranks && res == collSuccess; ++p) {
      if (p == rank)
        continue;
      int32_t tag;
      int peerFd = recvFd(in[p], tag, timeout, error);
      if (peerFd < 0 || tag != p) {
        error = "shm: no window from rank " + std::to_string(p) + " (" + error + ")";
        res = collRemoteError;
        break;
      }
      res = map(peerFd, p, w, error);
      close(peerFd);
    }
    if (res != collSuccess)
      release(w);
    return res;
  }

  void release(Window &w) override {
    for (size_t p = 0; p < w.base.size(); ++p)
      if (w.base[p])
        munmap(w.base[p], w.size[p]);
    w.base.clear();
    w.size.clear();
  }

private:
  collResult_t map(int fd, int owner, Window &w, std::string &error) {
    struct stat st;
    if (fstat(fd, &st)) {
      error = "shm: fstat failed";
      return collSystemError;
    }
    void *p = mmap(nullptr, size_t(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      error = "shm: cannot map the window of rank " + std::to_string(owner);
      return collSystemError;
    }
    w.base[owner] = static_cast<char *>(p);
    w.size[owner] = size_t(st.st_size);
    return collSuccess;
  }

  int rank, nranks;
  double timeout;
  int windows = 0;
  std::vector<int> out, in; // sockets to and from each peer
};

} // namespace

std::unique_ptr<Transport> collrt::makeShmTransport(Bootstrap &boot, int rank, int nranks,
                                                    double timeout, collResult_t &result,
                                                    std::string &error) {
  auto t = std::make_unique<ShmTransport>(rank, nranks, timeout);
  result = t->connect(boot, error);
  if (result != collSuccess)
    return nullptr;
  return t;
}
