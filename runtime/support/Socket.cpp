//===- Socket.cpp - Blocking socket helpers with deadlines -----------------===//
#include "support/Socket.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ifaddrs.h>
#include <mutex>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace collrt;

namespace {

using Clock = std::chrono::steady_clock;

/// "accept: Too many open files", and what to do where the process or the
/// system ran out of descriptors, which no peer is to blame for.
std::string sysError(const char *what) {
  const int e = errno;
  std::string text = std::string(what) + ": " + strerror(e);
  rlimit limit{};
  if (e == EMFILE && getrlimit(RLIMIT_NOFILE, &limit) == 0)
    text += " (out of file descriptors: this process may open " + std::to_string(limit.rlim_cur) +
            "; raise ulimit -n)";
  else if (e == ENFILE)
    text += " (out of file descriptors: the system's table of open files is full)";
  errno = e;
  return text;
}

// Milliseconds to the deadline for poll(), -1 without a timeout; false (and
// the reason in `error`) once the deadline has passed.
template <typename TimePoint>
bool pollWindow(TimePoint deadline, double timeout, int &ms, std::string &error) {
  ms = -1;
  if (timeout < 0)
    return true;
  auto left = std::chrono::duration<double, std::milli>(deadline - Clock::now()).count();
  if (left <= 0) {
    char text[64];
    snprintf(text, sizeof text, "timed out after %g s", timeout);
    error = text;
    return false;
  }
  ms = int(left) + 1;
  return true;
}

// Waits until `fd` is ready for `events`; false on timeout, abort or error.
bool waitFor(int fd, short events, double timeout, std::string &error, AbortFlag abort = nullptr) {
  auto deadline = Clock::now() + std::chrono::duration<double>(timeout);
  for (;;) {
    if (aborted(abort)) {
      error = "aborted";
      return false;
    }
    int ms;
    if (!pollWindow(deadline, timeout, ms, error))
      return false;
    if (abort && (ms < 0 || ms > kAbortPollMs))
      ms = kAbortPollMs;
    pollfd p{fd, events, 0};
    int n = poll(&p, 1, ms);
    if (n > 0)
      return true;
    if (n < 0 && errno != EINTR) {
      error = sysError("poll");
      return false;
    }
  }
}

bool writeAll(int fd, const char *p, size_t n, std::string &error) {
  while (n) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      error = sysError("send");
      return false;
    }
    p += w;
    n -= size_t(w);
  }
  return true;
}

sockaddr_un unixAddress(const std::string &name, socklen_t &len) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  size_t n = std::min(name.size(), sizeof a.sun_path - 2);
  memcpy(a.sun_path + 1, name.data(), n); // leading NUL: abstract namespace
  len = socklen_t(offsetof(sockaddr_un, sun_path) + 1 + n);
  return a;
}

} // namespace

bool collrt::localAddress(const std::string &addr, const std::string &ifname, uint32_t &out,
                          std::string &error) {
  if (ifname.empty()) {
    in_addr a{};
    if (inet_pton(AF_INET, addr.c_str(), &a) != 1) {
      error = "COLL_BOOTSTRAP_ADDR '" + addr + "' is not an IPv4 address";
      return false;
    }
    // Allowed, but never silently: every interface then takes connections.
    // Said once, as every communicator and connection reads the knob.
    static std::once_flag said;
    if (a.s_addr == htonl(INADDR_ANY))
      std::call_once(said, [&] {
        fprintf(stderr,
                "collrt: warning: COLL_BOOTSTRAP_ADDR=%s listens on every interface, so any "
                "host that reaches this one can connect (each connection must still present "
                "the secret); name this host's address on the job's network instead\n",
                addr.c_str());
      });
    out = a.s_addr;
    return true;
  }
  ifaddrs *all = nullptr;
  if (getifaddrs(&all)) {
    error = sysError("getifaddrs");
    return false;
  }
  bool found = false;
  for (ifaddrs *i = all; i && !found; i = i->ifa_next)
    if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && ifname == i->ifa_name &&
        (i->ifa_flags & IFF_UP)) {
      out = reinterpret_cast<const sockaddr_in *>(i->ifa_addr)->sin_addr.s_addr;
      found = true;
    }
  freeifaddrs(all);
  if (!found)
    error =
        "COLL_SOCKET_IFNAME '" + ifname + "' names no interface that is up with an IPv4 address";
  return found;
}

int collrt::listenTcp(uint32_t addr, std::string &error, uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = sysError("socket");
    return -1;
  }
  // A well-known port is taken again at once after a previous job.
  int one = 1;
  if (port)
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = addr;
  a.sin_port = htons(port);
  if (bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) || listen(fd, 1024)) {
    error = sysError("bind/listen");
    close(fd);
    return -1;
  }
  return fd;
}

int collrt::acceptWithin(int listener, double timeout, std::string &error) {
  if (!waitFor(listener, POLLIN, timeout, error))
    return -1;
  int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0)
    error = sysError("accept");
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

int collrt::connectTcp(uint32_t addr, uint16_t port, double timeout, std::string &error) {
  auto deadline = Clock::now() + std::chrono::duration<double>(timeout);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = addr;
  a.sin_port = port;
  for (;;) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      error = sysError("socket");
      return -1;
    }
    if (connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0) {
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return fd;
    }
    error = sysError("connect to the bootstrap root");
    close(fd);
    if (Clock::now() >= deadline)
      return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

bool collrt::readFull(int fd, void *data, size_t size, double timeout, std::string &error,
                      AbortFlag abort) {
  char *p = static_cast<char *>(data);
  while (size) {
    if (!waitFor(fd, POLLIN, timeout, error, abort))
      return false;
    ssize_t r = recv(fd, p, size, 0);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0) {
      error = r == 0 ? "connection closed" : sysError("recv");
      return false;
    }
    p += r;
    size -= size_t(r);
  }
  return true;
}

bool collrt::writeFull(int fd, const void *data, size_t size, std::string &error) {
  return writeAll(fd, static_cast<const char *>(data), size, error);
}

bool collrt::readFrame(int fd, std::string &frame, double timeout, std::string &error,
                       AbortFlag abort) {
  uint64_t n = 0;
  if (!readFull(fd, &n, sizeof n, timeout, error, abort))
    return false;
  if (n > (uint64_t(1) << 32)) {
    error = "oversized bootstrap frame";
    return false;
  }
  frame.resize(n);
  return readFull(fd, frame.data(), n, timeout, error, abort);
}

bool collrt::writeFrame(int fd, const std::string &frame, std::string &error) {
  std::string out;
  appendFrame(out, frame);
  return writeAll(fd, out.data(), out.size(), error);
}

void collrt::appendFrame(std::string &to, const std::string &frame) {
  uint64_t n = frame.size();
  to.append(reinterpret_cast<const char *>(&n), sizeof n);
  to += frame;
}

bool collrt::takeFrame(const std::string &from, size_t &at, std::string &frame) {
  uint64_t n;
  if (from.size() - at < sizeof n)
    return false;
  memcpy(&n, from.data() + at, sizeof n);
  at += sizeof n;
  if (from.size() - at < n)
    return false;
  frame = from.substr(at, n);
  at += n;
  return true;
}

collResult_t collrt::admitConnections(int listener, size_t helloBytes, double timeout,
                                      const std::function<bool(int, const std::string &)> &admit,
                                      const std::function<bool()> &done, std::string &error) {
  // Silent connections beyond this many make room for new ones, oldest first.
  const size_t kMaxPending = 256;
  struct Pending {
    int fd;
    std::string hello;
  };
  std::vector<Pending> pending;
  std::vector<pollfd> fds;
  auto restart = [&] { return Clock::now() + std::chrono::duration<double>(timeout); };
  auto deadline = restart();
  collResult_t result = collSuccess;
  while (result == collSuccess && !done()) {
    int ms;
    if (!pollWindow(deadline, timeout, ms, error)) {
      result = collTimeout;
      break;
    }
    fds.assign(1, pollfd{listener, POLLIN, 0});
    for (const Pending &p : pending)
      fds.push_back({p.fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), ms) < 0) {
      if (errno != EINTR) {
        error = sysError("poll");
        result = collSystemError;
      }
      continue;
    }
    // Backwards, so that dropping pending[i - 1] keeps the earlier indices.
    for (size_t i = fds.size() - 1; i >= 1 && !done(); --i) {
      if (!fds[i].revents)
        continue;
      Pending &p = pending[i - 1];
      size_t had = p.hello.size();
      p.hello.resize(helloBytes);
      ssize_t n = recv(p.fd, p.hello.data() + had, helloBytes - had, MSG_DONTWAIT);
      p.hello.resize(had + size_t(std::max<ssize_t>(n, 0)));
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        continue;
      if (n > 0 && p.hello.size() < helloBytes)
        continue;
      Pending whole = std::move(p);
      pending.erase(pending.begin() + long(i - 1));
      if (n > 0 && admit(whole.fd, whole.hello))
        deadline = restart();
      else
        close(whole.fd);
    }
    if ((fds[0].revents & POLLIN) && !done()) {
      int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      // The connection stays queued, so poll() would report it again at
      // once until the deadline: stop, saying why.
      if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
        error = sysError("accept");
        result = collSystemError;
      }
      if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); // fails on Unix sockets
        if (pending.size() == kMaxPending) {
          close(pending.front().fd);
          pending.erase(pending.begin());
        }
        pending.push_back({fd, {}});
      }
    }
  }
  for (const Pending &p : pending)
    close(p.fd);
  return result;
}

int collrt::listenUnix(const std::string &name, std::string &error) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  socklen_t len;
  sockaddr_un a = unixAddress(name, len);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr *>(&a), len) || listen(fd, 1024)) {
    error = sysError("unix socket");
    if (fd >= 0)
      close(fd);
    return -1;
  }
  return fd;
}

int collrt::connectUnix(const std::string &name, double timeout, std::string &error) {
  auto deadline = Clock::now() + std::chrono::duration<double>(timeout);
  socklen_t len;
  sockaddr_un a = unixAddress(name, len);
  for (;;) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr *>(&a), len) == 0)
      return fd;
    error = sysError("connect to a peer's unix socket");
    if (fd >= 0)
      close(fd);
    if (Clock::now() >= deadline)
      return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool collrt::sendFd(int sock, int fd, int32_t tag, std::string &error) {
  char control[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{&tag, sizeof tag};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof fd);
  if (sendmsg(sock, &msg, MSG_NOSIGNAL) != ssize_t(sizeof tag)) {
    const int why = errno;
    error = why == EPIPE || why == ECONNRESET
                ? "the other side closed the connection (its process exited or was killed)"
                : sysError("sendmsg (SCM_RIGHTS)");
    errno = why;
    return false;
  }
  return true;
}

int collrt::recvFd(int sock, int32_t &tag, double timeout, std::string &error, AbortFlag abort) {
  if (!waitFor(sock, POLLIN, timeout, error, abort))
    return -1;
  char control[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{&tag, sizeof tag};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  cmsghdr *c = CMSG_FIRSTHDR(&msg);
  if (n != ssize_t(sizeof tag) || !c || c->cmsg_type != SCM_RIGHTS) {
    error = n < 0 ? sysError("recvmsg") : "no descriptor in the message";
    return -1;
  }
  int fd;
  memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return fd;
}
