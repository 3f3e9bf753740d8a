//===- EnvRendezvous.cpp - A unique id from the launcher's variables ------===//
#include "support/EnvRendezvous.h"

#include <arpa/inet.h>
#include <netdb.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

using namespace collrt;

namespace {

/// A whole decimal number in [lo, hi], or false.
bool number(const char *text, long lo, long hi, long &out) {
  if (!text || !*text)
    return false;
  char *end = nullptr;
  errno = 0;
  out = strtol(text, &end, 10);
  return !errno && !*end && out >= lo && out <= hi;
}

/// FNV-1a over `text`, from `seed`: the same on every rank.
uint64_t fnv(const std::string &text, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char c : text)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

/// The IPv4 address of `host` (dotted, or a name to resolve).
bool resolve(const char *host, uint32_t &addr, std::string &error) {
  addrinfo hints{}, *found = nullptr;
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  if (int r = getaddrinfo(host, nullptr, &hints, &found)) {
    error = std::string("MASTER_ADDR=") + host + ": " + gai_strerror(r);
    return false;
  }
  addr = reinterpret_cast<sockaddr_in *>(found->ai_addr)->sin_addr.s_addr;
  freeaddrinfo(found);
  return true;
}

} // namespace

collResult_t collrt::rendezvousFromVars(const Lookup &get, Rendezvous &out, std::string &error) {
  long world = 0, rank = 0, port = 0;
  if (!number(get("WORLD_SIZE"), 1, 1 << 24, world)) {
    error = "WORLD_SIZE must be a number of ranks >= 1";
    return collInvalidArgument;
  }
  if (!number(get("RANK"), 0, world - 1, rank)) {
    error = "RANK must be a number in 0 .. WORLD_SIZE - 1 = " + std::to_string(world - 1);
    return collInvalidArgument;
  }
  const char *host = get("MASTER_ADDR");
  if (!host || !*host) {
    error = "MASTER_ADDR must name rank 0's host";
    return collInvalidArgument;
  }
  if (const char *own = get("COLL_BOOTSTRAP_PORT")) {
    if (!number(own, 1, 65535, port)) {
      error = "COLL_BOOTSTRAP_PORT must be a port in 1 .. 65535";
      return collInvalidArgument;
    }
  } else if (number(get("MASTER_PORT"), 1, 65534, port)) {
    ++port; // MASTER_PORT is torch's store
  } else {
    error = "MASTER_PORT must be a port in 1 .. 65534 (collrt listens on the next one)";
    return collInvalidArgument;
  }
  UniqueIdData id{};
  if (!resolve(host, id.addr, error))
    return collInvalidArgument;
  id.port = htons(uint16_t(port));
  const char *secret = get("COLL_SECRET");
  const char *run = get("TORCHELASTIC_RUN_ID");
  std::string group = std::string(host) + ":" + std::to_string(port) + ":" + std::to_string(world) +
                      ":" + (run ? run : "");
  std::string seed = secret ? secret : group;
  out.warning.clear();
  if (!secret)
    out.warning = "COLL_SECRET is unset, so the group's secret comes from MASTER_ADDR, "
                  "MASTER_PORT, WORLD_SIZE and TORCHELASTIC_RUN_ID, which anyone who knows them "
                  "can compute; set COLL_SECRET to the same random string on every rank";
  id.magic = fnv(group, 0);
  for (size_t i = 0; i < kSecretBytes; i += 8) {
    uint64_t word = fnv(seed, i + 1);
    memcpy(id.secret + i, &word, 8);
  }
  out.rank = int(rank);
  out.nranks = int(world);
  out.id = id;
  return collSuccess;
}
