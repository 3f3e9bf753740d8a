//===- Env.cpp - The runtime's environment knobs ---------------------------===//
#include "support/Env.h"

#include <cstdlib>
#include <cstring>

using namespace collrt;

static int64_t readInt(const char *name, int64_t fallback, int64_t lo, int64_t hi) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return fallback;
  char *end = nullptr;
  long long n = std::strtoll(v, &end, 10);
  return *end || n < lo || n > hi ? fallback : n;
}

const Env &Env::get() {
  static const Env env = [] {
    Env e;
    const char *debug = std::getenv("COLL_DEBUG");
    e.debug = debug && (!strcmp(debug, "INFO") || !strcmp(debug, "TRACE"));
    if (const char *t = std::getenv("COLL_TIMEOUT")) {
      double s = std::strtod(t, nullptr);
      if (s > 0)
        e.timeoutSeconds = s;
    }
    // Slots hold whole lines of the protocol: 16 bytes for LL, 128 for LL128.
    e.simpleSlot = readInt("COLL_SIMPLE_SLOT", e.simpleSlot, 4096, int64_t(1) << 30) & ~int64_t(15);
    e.llSlot = readInt("COLL_LL_SLOT", e.llSlot, 256, int64_t(1) << 28) & ~int64_t(15);
    e.ll128Slot = readInt("COLL_LL128_SLOT", e.ll128Slot, 1024, int64_t(1) << 30) & ~int64_t(127);
    if (const char *t = std::getenv("COLL_TRANSPORT"); t && *t)
      e.transport = t;
    if (const char *h = std::getenv("COLL_HOSTID"); h && *h)
      e.hostId = h;
    if (const char *h = std::getenv("COLL_IB_HCA"); h && *h)
      e.ibHca = h;
    if (const char *d = std::getenv("COLL_NVLINK_DOMAIN"); d && *d)
      e.nvlinkDomain = d;
    e.direct = readInt("COLL_DIRECT", 0, 0, 1) == 1;
    e.nvls = readInt("COLL_NVLS", 1, 0, 1) == 1;
    e.gdr = readInt("COLL_GDR", 1, 0, 1) == 1;
    if (const char *a = std::getenv("COLL_BOOTSTRAP_ADDR"); a && *a)
      e.bootstrapAddr = a;
    if (const char *i = std::getenv("COLL_SOCKET_IFNAME"); i && *i)
      e.socketIfname = i;
    return e;
  }();
  return env;
}
