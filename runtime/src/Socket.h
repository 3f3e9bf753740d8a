//===- Socket.h - Blocking socket helpers with deadlines -------------------===//
//
// TCP for the bootstrap, Unix-domain sockets for passing file descriptors
// (SCM_RIGHTS). Functions return false or -1 and fill `error` on failure;
// a timeout below zero waits forever.
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_SOCKET_H
#define COLLRT_SOCKET_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace collrt {

int listenTcp(std::string &error);
int acceptWithin(int listener, double timeout, std::string &error);
int connectTcp(uint32_t addr, uint16_t port, double timeout, std::string &error);

bool readFull(int fd, void *data, size_t size, double timeout, std::string &error);
bool writeFull(int fd, const void *data, size_t size, std::string &error);
bool readFrame(int fd, std::string &frame, double timeout, std::string &error);
bool writeFrame(int fd, const std::string &frame, std::string &error);
void appendFrame(std::string &to, const std::string &frame);
bool takeFrame(const std::string &from, size_t &at, std::string &frame);

/// An abstract-namespace Unix socket (no file on disk).
int listenUnix(const std::string &name, std::string &error);
int connectUnix(const std::string &name, double timeout, std::string &error);
bool sendFd(int sock, int fd, int32_t tag, std::string &error);
/// Receives a descriptor and the tag sent with it; -1 on failure.
int recvFd(int sock, int32_t &tag, double timeout, std::string &error);

} // namespace collrt

#endif // COLLRT_SOCKET_H
