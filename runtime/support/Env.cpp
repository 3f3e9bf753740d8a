//===- Env.cpp - The runtime's environment knobs ---------------------------===//
#include "support/Env.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <strings.h>

using namespace collrt;

namespace {

/// Reads the knobs of one environment, keeping the first refusal.
struct Reader {
  const std::function<const char *(const char *)> &lookup;
  Env &env;

  /// The knob's value, or null where it is unset or empty.
  const char *value(const char *name) {
    const char *v = lookup(name);
    return v && *v ? v : nullptr;
  }

  void refuse(const char *name, const char *v, const std::string &expected) {
    if (env.error.empty())
      env.error = std::string(name) + "='" + v + "': expected " + expected;
  }

  int64_t integer(const char *name, int64_t fallback, int64_t lo, int64_t hi) {
    const char *v = value(name);
    if (!v)
      return fallback;
    char *end = nullptr;
    errno = 0;
    long long n = std::strtoll(v, &end, 10);
    if (*end || errno || n < lo || n > hi) {
      refuse(name, v, "an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
      return fallback;
    }
    return n;
  }

  double seconds(const char *name, double fallback) {
    const char *v = value(name);
    if (!v)
      return fallback;
    char *end = nullptr;
    double s = std::strtod(v, &end);
    // strtod also reads "inf" and "nan", which no deadline can hold.
    if (*end || !std::isfinite(s) || s <= 0 || s > kMaxTimeoutSeconds) {
      refuse(name, v, "seconds, more than 0 and at most 1000000");
      return fallback;
    }
    return s;
  }

  bool debug(const char *name) {
    const char *v = value(name);
    if (!v)
      return false;
    for (const char *quiet : {"WARN", "VERSION"})
      if (!strcasecmp(v, quiet))
        return false;
    for (const char *loud : {"INFO", "TRACE"})
      if (!strcasecmp(v, loud))
        return true;
    refuse(name, v, "INFO, TRACE, WARN or VERSION");
    return false;
  }

  void text(const char *name, std::string &out) {
    if (const char *v = value(name))
      out = v;
  }
};

} // namespace

Env Env::read(const std::function<const char *(const char *)> &lookup) {
  Env e;
  Reader r{lookup, e};
  e.debug = r.debug("COLL_DEBUG");
  e.timeoutSeconds = r.seconds("COLL_TIMEOUT", e.timeoutSeconds);
  // Slots hold whole lines of the protocol: 16 bytes for LL, 128 for LL128.
  e.simpleSlot = r.integer("COLL_SIMPLE_SLOT", e.simpleSlot, 4096, int64_t(1) << 30) & ~int64_t(15);
  e.llSlot = r.integer("COLL_LL_SLOT", e.llSlot, 256, int64_t(1) << 28) & ~int64_t(15);
  e.ll128Slot = r.integer("COLL_LL128_SLOT", e.ll128Slot, 1024, int64_t(1) << 30) & ~int64_t(127);
  r.text("COLL_TRANSPORT", e.transport);
  r.text("COLL_HOSTID", e.hostId);
  r.text("COLL_IB_HCA", e.ibHca);
  e.ibGidIndex = int(r.integer("COLL_IB_GID_INDEX", e.ibGidIndex, 0, 255));
  e.ibTc = int(r.integer("COLL_IB_TC", e.ibTc, 0, 255));
  e.ibSl = int(r.integer("COLL_IB_SL", e.ibSl, 0, 15));
  // Credits carry a ring's byte count in 31 bits.
  e.ibRing = r.integer("COLL_IB_RING", e.ibRing, 4096, int64_t(1) << 30);
  r.text("COLL_NVLINK_DOMAIN", e.nvlinkDomain);
  e.direct = r.integer("COLL_DIRECT", 0, 0, 1) == 1;
  e.nvls = r.integer("COLL_NVLS", 1, 0, 1) == 1;
  e.gdr = r.integer("COLL_GDR", 1, 0, 1) == 1;
  e.sharedGpu = r.integer("COLL_SHARED_GPU", 0, 0, 1) == 1;
  r.text("COLL_BOOTSTRAP_ADDR", e.bootstrapAddr);
  r.text("COLL_SOCKET_IFNAME", e.socketIfname);
  return e;
}

const Env &Env::get() {
  static const Env env = read([](const char *name) { return std::getenv(name); });
  return env;
}
