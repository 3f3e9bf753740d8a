//===- Memory.h - The memory a run of emulated ranks may take -------------===//
//
// `collc run` and collc-launch refuse a run that the machine cannot hold
// before any rank allocates, rather than let every rank die of bad_alloc.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RANKS_MEMORY_H
#define COLLC_RANKS_MEMORY_H

#include "collc/abi.h"
#include "support/Env.h"
#include "support/FifoLayout.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace collc_launch {

/// The first number in the file `path`, if it holds one.
inline std::optional<double> readNumber(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f)
    return std::nullopt;
  unsigned long long n;
  bool read = fscanf(f, "%llu", &n) == 1;
  fclose(f);
  return read ? std::optional<double>(double(n)) : std::nullopt;
}

/// The value of `key` (as "MemAvailable") in /proc/meminfo, in bytes.
inline std::optional<double> memInfo(const char *key) {
  FILE *f = fopen("/proc/meminfo", "r");
  if (!f)
    return std::nullopt;
  char line[256];
  std::optional<double> found;
  const size_t n = strlen(key);
  unsigned long long kib;
  while (!found && fgets(line, sizeof line, f))
    if (!strncmp(line, key, n) && line[n] == ':' && sscanf(line + n + 1, "%llu", &kib) == 1)
      found = double(kib) * 1024;
  fclose(f);
  return found;
}

/// Room left under the memory limits of a process's cgroups: the least,
/// over its cgroup and every one above it, of the limit less the usage, in
/// cgroup v2 (memory.max, memory.current) and v1 (memory.limit_in_bytes,
/// memory.usage_in_bytes). `self` is that process's /proc/<pid>/cgroup,
/// `mount` where the hierarchies are mounted. A path that the mount does not
/// show (a cgroup namespace) still reaches the mount's root. None if no level
/// sets a limit.
inline std::optional<double> cgroupRoom(const std::string &mount, const char *self) {
  FILE *f = fopen(self, "r");
  if (!f)
    return std::nullopt;
  std::optional<double> room;
  auto level = [&](const std::string &dir, const char *limitFile, const char *usageFile) {
    std::optional<double> limit = readNumber((dir + "/" + limitFile).c_str());
    std::optional<double> used = readNumber((dir + "/" + usageFile).c_str());
    if (limit && used)
      room = std::min(room.value_or(*limit), std::max(0.0, *limit - *used));
  };
  char line[4096];
  while (fgets(line, sizeof line, f)) {
    // "0::/path" (v2) or "4:memory:/path" (v1), one line per hierarchy.
    std::string text(line, strcspn(line, "\n"));
    size_t a = text.find(':'), b = a == std::string::npos ? a : text.find(':', a + 1);
    if (b == std::string::npos)
      continue;
    std::string controllers = "," + text.substr(a + 1, b - a - 1) + ",";
    std::string path = text.substr(b + 1);
    bool v2 = controllers == ",,", v1 = controllers.find(",memory,") != std::string::npos;
    if (!v1 && !v2)
      continue;
    for (const std::string &base : v2 ? std::vector<std::string>{mount, mount + "/unified"}
                                      : std::vector<std::string>{mount + "/memory"})
      for (std::string p = path;; p = p.substr(0, p.rfind('/'))) {
        level(base + p, v2 ? "memory.max" : "memory.limit_in_bytes",
              v2 ? "memory.current" : "memory.usage_in_bytes");
        if (p.empty() || p == "/")
          break;
      }
  }
  fclose(f);
  return room;
}

/// Memory this process's children may still take: what the kernel calls
/// available, less where a cgroup (a container, a systemd slice) allows less.
inline double availableMemory() {
  double available = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
  if (std::optional<double> a = memInfo("MemAvailable"))
    available = *a;
  if (std::optional<double> room = cgroupRoom("/sys/fs/cgroup", "/proc/self/cgroup"))
    available = std::min(available, *room);
  return available;
}

/// Bytes of the receive FIFOs that the first launch makes for every plan
/// variant (runtime/src/Launch.cpp), over all ranks: one per replica of a
/// receiving threadblock, at the most replicas its plan runs.
inline double fifoMemory(const collc::AlgorithmDesc &alg) {
  const collrt::Env &env = collrt::Env::get();
  double bytes = 0;
  for (int32_t p = 0; p < alg.numPlans; ++p) {
    const collc::PlanDesc &plan = alg.plans[p];
    int32_t replicas = 1;
    for (int32_t i = 0; i < plan.numLaunches; ++i)
      replicas = std::max(replicas, plan.launches[i].replicas);
    for (int32_t t = 0; t < plan.numThreadblocks; ++t) {
      const collc::ThreadblockDesc &tb = plan.threadblocks[t];
      int64_t slot = tb.protocol == collc::kLL      ? env.llSlot
                     : tb.protocol == collc::kLL128 ? env.ll128Slot
                                                    : env.simpleSlot;
      if (tb.recvPeer >= 0)
        bytes += double(replicas) * double(collrt::fifoBytes(plan.slots, slot));
    }
  }
  return bytes;
}

/// "52.0 TiB", "312 bytes".
inline std::string showBytes(double bytes) {
  const char *units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) {
    bytes /= 1024;
    ++u;
  }
  char text[64];
  if (u)
    snprintf(text, sizeof text, "%.1f %s", bytes, units[u]);
  else
    snprintf(text, sizeof text, "%.0f bytes", bytes);
  return text;
}

} // namespace collc_launch

#endif // COLLC_RANKS_MEMORY_H
