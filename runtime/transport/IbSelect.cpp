//===- IbSelect.cpp - Which NIC, GID and ring size the ib transport takes -===//
#include "transport/IbSelect.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/resource.h>

using namespace collrt;
namespace fs = std::filesystem;

namespace {

std::string firstLine(const fs::path &file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

std::vector<std::string> components(const std::string &path) {
  std::vector<std::string> out;
  std::stringstream in(path);
  for (std::string c; std::getline(in, c, '/');)
    if (!c.empty())
      out.push_back(c);
  return out;
}

size_t sharedComponents(const std::vector<std::string> &a, const std::vector<std::string> &b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n])
    ++n;
  return n;
}

// The path of `device` below <sysfs>/devices where it is a PCI function.
std::string pciPathBelow(const std::string &sysfs, const fs::path &device) {
  std::error_code ec;
  const fs::path devices = fs::canonical(fs::path(sysfs) / "devices", ec);
  if (ec)
    return "";
  const fs::path real = fs::canonical(device, ec);
  if (ec)
    return "";
  const std::string base = devices.string() + "/", path = real.string();
  if (path.compare(0, base.size(), base) != 0 || path.compare(base.size(), 3, "pci") != 0)
    return "";
  return path.substr(base.size());
}

// mlx5_2 before mlx5_10: runs of digits compare as numbers.
bool naturalLess(const std::string &a, const std::string &b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (isdigit(uint8_t(a[i])) && isdigit(uint8_t(b[j]))) {
      size_t ei = i, ej = j;
      while (ei < a.size() && isdigit(uint8_t(a[ei])))
        ++ei;
      while (ej < b.size() && isdigit(uint8_t(b[ej])))
        ++ej;
      const std::string x = a.substr(i, ei - i), y = b.substr(j, ej - j);
      const size_t xs = x.find_first_not_of('0'), ys = y.find_first_not_of('0');
      const std::string xn = xs == std::string::npos ? "" : x.substr(xs);
      const std::string yn = ys == std::string::npos ? "" : y.substr(ys);
      if (xn.size() != yn.size())
        return xn.size() < yn.size();
      if (xn != yn)
        return xn < yn;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j])
        return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

std::string inBytes(uint64_t bytes) {
  if (bytes && bytes % (1 << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  if (bytes && bytes % 1024 == 0)
    return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

// CAP_IPC_LOCK lifts RLIMIT_MEMLOCK for memory registration.
bool canLockWithoutLimit() {
  std::ifstream status("/proc/thread-self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("CapEff:", 0) == 0) {
      const uint64_t caps = std::strtoull(line.c_str() + 7, nullptr, 16);
      return caps >> 14 & 1; // CAP_IPC_LOCK
    }
  return false;
}

} // namespace

std::vector<IbNic> collrt::listIbNics(const std::string &sysfs) {
  std::vector<IbNic> nics;
  std::error_code ec;
  for (const fs::directory_entry &e :
       fs::directory_iterator(fs::path(sysfs) / "class" / "infiniband", ec)) {
    IbNic nic;
    nic.name = e.path().filename().string();
    nic.pciPath = pciPathBelow(sysfs, e.path() / "device");
    nics.push_back(std::move(nic));
  }
  std::sort(nics.begin(), nics.end(),
            [](const IbNic &a, const IbNic &b) { return naturalLess(a.name, b.name); });
  return nics;
}

std::string collrt::pciPathOf(const std::string &sysfs, const std::string &busId) {
  // cuDeviceGetPCIBusId writes "0000:3B:00.0"; some tools a domain of 8
  // digits. sysfs names it "0000:3b:00.0".
  std::string id;
  for (char c : busId)
    id += char(tolower(uint8_t(c)));
  const size_t colon = id.find(':');
  if (colon != std::string::npos && colon > 4)
    id.erase(0, colon - 4);
  if (id.empty())
    return "";
  return pciPathBelow(sysfs, fs::path(sysfs) / "bus" / "pci" / "devices" / id);
}

const char *collrt::pciDistance(const std::string &a, const std::string &b) {
  const std::vector<std::string> x = components(a), y = components(b);
  const size_t shared = sharedComponents(x, y);
  if (shared == 0)
    return "SYS";
  if (shared == 1)
    return "PHB"; // only the host bridge
  // At most a switch's downstream port above each: one switch between them.
  if (shared + 2 >= x.size() && shared + 2 >= y.size())
    return "PIX";
  return "PXB";
}

std::string collrt::chooseIbHca(const std::string &hcaList, const std::vector<IbNic> &nics,
                                const std::string &gpuPath, int localRank, std::string &why) {
  const size_t rank = size_t(std::max(localRank, 0));
  if (!hcaList.empty()) {
    std::vector<std::string> entries;
    std::stringstream in(hcaList);
    for (std::string e; std::getline(in, e, ',');)
      if (!e.empty())
        entries.push_back(e);
    if (entries.empty())
      return "";
    why = "COLL_IB_HCA";
    if (entries.size() > 1)
      why += " entry " + std::to_string(rank % entries.size()) + " for local rank " +
             std::to_string(rank);
    return entries[rank % entries.size()];
  }
  if (nics.empty()) {
    why = "no RDMA device in sysfs: the first that libibverbs lists";
    return "";
  }
  const std::vector<std::string> gpu = components(gpuPath);
  std::vector<size_t> shared;
  for (const IbNic &n : nics)
    shared.push_back(gpu.empty() ? 0 : sharedComponents(gpu, components(n.pciPath)));
  const size_t best = *std::max_element(shared.begin(), shared.end());
  std::vector<const IbNic *> nearest;
  for (size_t i = 0; i < nics.size(); ++i)
    if (shared[i] == best)
      nearest.push_back(&nics[i]);
  const IbNic &chosen = *nearest[rank % nearest.size()];
  why = gpu.empty() ? std::string("the GPU's PCI path is unknown")
                    : std::string(pciDistance(gpuPath, chosen.pciPath)) + " to the GPU";
  why += ", local rank " + std::to_string(rank) + " of " + std::to_string(nearest.size()) +
         " equally near";
  return chosen.name;
}

std::vector<GidEntry> collrt::readGidTable(const std::string &sysfs, const std::string &device,
                                           int port) {
  const fs::path dir =
      fs::path(sysfs) / "class" / "infiniband" / device / "ports" / std::to_string(port);
  std::vector<GidEntry> table;
  std::error_code ec;
  for (const fs::directory_entry &e : fs::directory_iterator(dir / "gids", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    GidEntry g;
    g.index = std::stoi(name);
    if (inet_pton(AF_INET6, firstLine(e.path()).c_str(), g.gid) != 1)
      continue;
    if (std::all_of(std::begin(g.gid), std::end(g.gid), [](uint8_t b) { return b == 0; }))
      continue; // unused
    // The kernel refuses to read the type of an unused entry.
    g.type = firstLine(dir / "gid_attrs" / "types" / name);
    table.push_back(g);
  }
  std::sort(table.begin(), table.end(),
            [](const GidEntry &a, const GidEntry &b) { return a.index < b.index; });
  return table;
}

bool collrt::chooseRoceGid(const std::vector<GidEntry> &table, int &index, std::string &why) {
  auto v2 = [](const GidEntry &g) { return strcasecmp(g.type.c_str(), "RoCE v2") == 0; };
  auto ipv4 = [](const GidEntry &g) {
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return memcmp(g.gid, prefix, sizeof prefix) == 0;
  };
  auto linkLocal = [](const GidEntry &g) { return g.gid[0] == 0xfe && (g.gid[1] & 0xc0) == 0x80; };
  for (const GidEntry &g : table)
    if (v2(g) && ipv4(g)) {
      char text[INET_ADDRSTRLEN] = "";
      inet_ntop(AF_INET, g.gid + 12, text, sizeof text);
      why = "GID index " + std::to_string(g.index) + ", RoCE v2 with IPv4 address " + text;
      index = g.index;
      return true;
    }
  for (const GidEntry &g : table)
    if (v2(g) && !linkLocal(g)) {
      char text[INET6_ADDRSTRLEN] = "";
      inet_ntop(AF_INET6, g.gid, text, sizeof text);
      why = "GID index " + std::to_string(g.index) + ", RoCE v2 with IPv6 address " + text;
      index = g.index;
      return true;
    }
  why = "no RoCE v2 GID with a routable address on the port: GID index 0 (RoCE v1, link-local), "
        "which a RoCE v2 network does not route; set COLL_IB_GID_INDEX if writes time out";
  index = 0;
  return false;
}

bool collrt::ibRingsFitLockedMemory(size_t ringBytes, int peers, std::string &error) {
  const uint64_t need = 2 * uint64_t(ringBytes) * uint64_t(std::max(peers, 0));
  rlimit limit{};
  if (need == 0 || getrlimit(RLIMIT_MEMLOCK, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
      need <= limit.rlim_cur || canLockWithoutLimit())
    return true;
  error = "ib needs " + inBytes(need) + " of locked memory for its rings to " +
          std::to_string(peers) + " peer" + (peers == 1 ? "" : "s") +
          " (2 x COLL_IB_RING=" + std::to_string(ringBytes) + " bytes each); RLIMIT_MEMLOCK is " +
          inBytes(limit.rlim_cur) + ": raise it (ulimit -l, memlock in limits.conf, docker " +
          "--ulimit memlock=-1) or lower COLL_IB_RING";
  // The largest power of two that fits, if any ring that small may do.
  uint64_t fits = 1;
  while (fits * 2 * 2 * uint64_t(peers) <= limit.rlim_cur)
    fits *= 2;
  if (fits >= 4096)
    error += " (to " + std::to_string(fits) + " or less)";
  return false;
}
