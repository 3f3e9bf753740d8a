//===- Memory.h - The memory a run of emulated ranks may take -------------===//
//
// `collc run` and collc-launch refuse a run that the machine cannot hold
// before any rank allocates, rather than let every rank die of bad_alloc.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RANKS_MEMORY_H
#define COLLC_RANKS_MEMORY_H

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <unistd.h>

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

/// Memory this process's children may still take: what the kernel calls
/// available, less where a cgroup (a container) allows less.
inline double availableMemory() {
  double available = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
  if (std::optional<double> a = memInfo("MemAvailable"))
    available = *a;
  std::optional<double> max = readNumber("/sys/fs/cgroup/memory.max");
  std::optional<double> used = readNumber("/sys/fs/cgroup/memory.current");
  if (max && used)
    available = std::min(available, std::max(0.0, *max - *used));
  return available;
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
