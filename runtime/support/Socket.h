//===- Socket.h - Blocking socket helpers with deadlines -------------------===//
//
// TCP for the bootstrap, Unix-domain sockets for passing file descriptors
// (SCM_RIGHTS). Functions return false or -1 and fill `error` on failure;
// a timeout below zero waits forever. A wait given an abort flag also ends,
// within kAbortPollMs, once another thread sets it (collCommAbort), saying
// "aborted". Listeners are reachable by anyone who can route to them, so what
// a connection says is trusted only after it has presented the group's
// secret (admitConnections).
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_SOCKET_H
#define COLLRT_SOCKET_H

#include "collrt.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace collrt {

/// A communicator's abort flag, as the waits on its behalf watch it; null
/// where nothing can abort the wait.
using AbortFlag = const volatile int32_t *;
/// How often a wait looks at its abort flag: abort returns well within a
/// second, and a blocked wait wakes rarely enough to cost nothing.
constexpr int kAbortPollMs = 50;
inline bool aborted(AbortFlag flag) { return flag && __atomic_load_n(flag, __ATOMIC_ACQUIRE); }

/// The IPv4 address (network order) this process listens on and publishes:
/// that of interface `ifname` when it is not empty, else `addr`, dotted. The
/// wildcard address 0.0.0.0 is accepted with a warning on stderr, once.
bool localAddress(const std::string &addr, const std::string &ifname, uint32_t &out,
                  std::string &error);
/// Listens on `addr` (network order) only, at `port` (host order) or, for
/// 0, at a port the kernel picks.
int listenTcp(uint32_t addr, std::string &error, uint16_t port = 0);
int acceptWithin(int listener, double timeout, std::string &error);
int connectTcp(uint32_t addr, uint16_t port, double timeout, std::string &error);

bool readFull(int fd, void *data, size_t size, double timeout, std::string &error,
              AbortFlag abort = nullptr);
bool writeFull(int fd, const void *data, size_t size, std::string &error);
bool readFrame(int fd, std::string &frame, double timeout, std::string &error,
               AbortFlag abort = nullptr);
bool writeFrame(int fd, const std::string &frame, std::string &error);
void appendFrame(std::string &to, const std::string &frame);
bool takeFrame(const std::string &from, size_t &at, std::string &frame);

/// Accepts connections on `listener` (TCP or Unix) until `done()`, reading
/// the first `helloBytes` of every one at once, so that a connection that
/// says nothing holds up none of the others. `admit` gets each complete
/// hello and keeps the descriptor (true) or has it closed (false).
/// collTimeout if `timeout` passes without a connection kept (the wait
/// restarts at each); collSystemError if this process cannot take one, as
/// when it is out of file descriptors, which waiting would not mend.
collResult_t admitConnections(int listener, size_t helloBytes, double timeout,
                              const std::function<bool(int fd, const std::string &hello)> &admit,
                              const std::function<bool()> &done, std::string &error);

/// An abstract-namespace Unix socket (no file on disk).
int listenUnix(const std::string &name, std::string &error);
int connectUnix(const std::string &name, double timeout, std::string &error);
bool sendFd(int sock, int fd, int32_t tag, std::string &error);
/// Receives a descriptor and the tag sent with it; -1 on failure.
int recvFd(int sock, int32_t &tag, double timeout, std::string &error, AbortFlag abort = nullptr);

} // namespace collrt

#endif // COLLRT_SOCKET_H
