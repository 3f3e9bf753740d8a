//===- PeerTransports.cpp - One transport for each pair of ranks ----------===//
#include "transport/PeerTransports.h"

#include "support/Bootstrap.h"
#include "support/Env.h"
#include "transport/Verbs.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <unistd.h>

using namespace collrt;

const std::vector<const TransportKind *> &collrt::transportTable() {
  static const std::vector<const TransportKind *> table = {&shmTransport, &nvlTransport,
                                                           &ibTransport, &socketTransport};
  return table;
}

bool collrt::chooseTransports(const std::vector<const TransportKind *> &table,
                              const std::vector<PeerInfo> &ranks, const std::string &forced,
                              std::vector<std::vector<int>> &choice, std::string &error) {
  int only = -1;
  if (!forced.empty()) {
    std::string names;
    for (size_t t = 0; t < table.size(); ++t) {
      if (forced == table[t]->name)
        only = int(t);
      names += std::string(t ? " or " : "") + table[t]->name;
    }
    if (only < 0) {
      error = "COLL_TRANSPORT='" + forced + "': expected " + names +
              " (or unset, to choose per pair of ranks)";
      return false;
    }
  }
  const int n = int(ranks.size());
  choice.assign(n, std::vector<int>(n, -1));
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      int &c = choice[a][b];
      for (int t = only < 0 ? 0 : only; t < int(table.size()) && c < 0; ++t) {
        if (table[t]->canConnect(ranks[a], ranks[b]))
          c = t;
        if (only >= 0)
          break;
      }
      if (c < 0) {
        error = (only >= 0 ? "COLL_TRANSPORT=" + forced + " cannot" : "no transport can") +
                " join rank " + std::to_string(a) + " (host " + ranks[a].host + ") and rank " +
                std::to_string(b) + " (host " + ranks[b].host + ")";
        if (only >= 0 && table[only]->whyNot)
          error += ": " + table[only]->whyNot(ranks[a], ranks[b]);
        return false;
      }
      choice[b][a] = c;
    }
  return true;
}

PeerInfo collrt::localPeerInfo() {
  PeerInfo info;
  info.rdma = rdmaDevice(info.noRdma);
  info.nvlink = Env::get().nvlinkDomain;
  if (!Env::get().hostId.empty()) {
    info.host = Env::get().hostId;
    return info;
  }
  // The boot id tells apart machines that share a hostname, and reboots.
  char name[256] = "";
  gethostname(name, sizeof name - 1);
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  info.host = std::string(name) + "/" + boot;
  return info;
}

PeerTransports::~PeerTransports() {
  // Stops every proxy before the memory it may write goes away.
  made.clear();
  for (auto &[part, memory] : retired)
    (memory ? *memory : hostMemory()).unmap(part);
}

collResult_t PeerTransports::connect(Bootstrap &boot, int rank_, int nranks, const PeerInfo &self,
                                     const std::string &forced, double timeout,
                                     std::string &error) {
  rank = rank_;
  // Its fields hold no NUL, so NULs can part them.
  std::vector<std::string> infos;
  if (collResult_t r = boot.allgather(
          self.host + '\0' + self.rdma + '\0' + self.noRdma + '\0' + self.nvlink, infos, error))
    return r;
  std::vector<PeerInfo> ranks(nranks);
  for (int p = 0; p < nranks; ++p) {
    std::string *field[] = {&ranks[p].host, &ranks[p].rdma, &ranks[p].noRdma, &ranks[p].nvlink};
    size_t at = 0;
    for (std::string *f : field) {
      size_t end = std::min(infos[p].find('\0', at), infos[p].size());
      *f = infos[p].substr(std::min(at, end), end - std::min(at, end));
      at = end + 1;
    }
  }
  const std::vector<const TransportKind *> &table = transportTable();
  std::vector<std::vector<int>> choice;
  if (!chooseTransports(table, ranks, forced, choice, error))
    return collInvalidUsage;
  of = choice[rank];
  pairs = choice;
  everyRankMapped = true;
  std::vector<bool> used(table.size(), false);
  for (int a = 0; a < nranks; ++a)
    for (int b = 0; b < nranks; ++b)
      if (a != b) {
        used[choice[a][b]] = true;
        everyRankMapped &= table[choice[a][b]]->mapsPeers;
      }
  made.resize(table.size());
  for (size_t t = 0; t < table.size(); ++t) {
    if (!used[t])
      continue;
    std::vector<bool> peers(nranks, false);
    for (int p = 0; p < nranks; ++p)
      peers[p] = of[p] == int(t);
    collResult_t r;
    made[t] = table[t]->make(boot, rank, peers, timeout, r, error);
    if (!made[t])
      return r;
  }
  return collSuccess;
}

const char *PeerTransports::nameOf(int peer) const {
  return of[peer] < 0 ? "self" : made[of[peer]]->name();
}

std::string PeerTransports::describe() const {
  std::string line;
  for (size_t t = 0; t < made.size(); ++t) {
    if (!made[t])
      continue;
    std::string ranks;
    for (int p = 0; p < int(of.size()); ++p) {
      if (of[p] != int(t))
        continue;
      int last = p;
      while (last + 1 < int(of.size()) && of[last + 1] == int(t))
        ++last;
      ranks += " " + std::to_string(p) + (last > p ? "-" + std::to_string(last) : "");
      p = last;
    }
    if (!ranks.empty())
      line += (line.empty() ? "" : ", ") + std::string(made[t]->name()) + " to" + ranks;
  }
  return line.empty() ? "no peers" : line;
}

collResult_t PeerTransports::exchangeWindow(size_t bytes, Window &w, std::string &error,
                                            const MemoryBackend *memory,
                                            const MemoryBackend *slotMemory) {
  if (collResult_t r = allocateWindow(bytes, rank, int(of.size()), w, error, memory)) {
    ++windows; // as every other rank counts it
    return r;
  }
  // Apart slots are a choice, not a need: without them the proxy copies.
  // Every peer that a proxy serves must put, or none can.
  if (slotMemory) {
    std::string why;
    if (std::any_of(made.begin(), made.end(), [](auto &t) { return t && t->copiesSteps(); }))
      why = "a transport of this rank copies steps";
    else if (slotMemory->allocate(w.size[rank], w.slots, why) == collSuccess)
      w.slotMemory = slotMemory; // only this rank's NIC reaches them
    if (!w.slots.base && Env::get().debug)
      fprintf(stderr, "collc INFO rank %d: FIFO slots stay with their headers: %s\n", rank,
              why.c_str());
  }
  collResult_t r = shareWindow(w, error);
  close(w.fd);
  w.fd = -1;
  if (r != collSuccess)
    release(w);
  return r;
}

collResult_t PeerTransports::shareWindow(Window &w, std::string &error) {
  w.id = windows++;
  collResult_t r = collSuccess;
  for (auto &t : made)
    if (t && r == collSuccess)
      r = t->shareWindow(w, error);
  if (r != collSuccess)
    unshare(w);
  return r;
}

void PeerTransports::unshare(Window &w) {
  for (auto &t : made)
    if (t)
      t->release(w);
}

collResult_t PeerTransports::sendFifo(Window &w, int owner, size_t offset, int32_t slots,
                                      int64_t slotBytes, int32_t protocol, collc::Fifo &fifo,
                                      std::string &error) {
  if (owner == rank) {
    fifo = fifoAt(w.base[rank] + offset, slots, slotBytes, protocol);
    return collSuccess;
  }
  return made[of[owner]]->sendFifo(w, owner, offset, slots, slotBytes, protocol, fifo, error);
}

collResult_t PeerTransports::recvFifo(Window &w, int peer, size_t offset, const collc::Fifo &fifo,
                                      std::string &error) {
  if (peer == rank)
    return collSuccess;
  return made[of[peer]]->recvFifo(w, peer, offset, fifo, error);
}

void PeerTransports::release(Window &w) {
  bool late = false;
  for (auto &t : made)
    if (t) {
      t->release(w);
      late |= t->proxied(); // it may deliver into the window until it stops
    }
  if (late && size_t(rank) < w.base.size() && w.base[rank]) {
    retired.emplace_back(
        Region{w.base[rank], w.size[rank], -1, size_t(rank) < w.handle.size() ? w.handle[rank] : 0},
        w.memory);
    w.base[rank] = nullptr;
  }
  if (late && w.slots.base) {
    retired.emplace_back(w.slots, w.slotMemory);
    w.slots = Region{};
  }
  freeWindow(w, rank);
  w.base.clear();
  w.size.clear();
}

void PeerTransports::limitClose(double seconds) {
  for (auto &t : made)
    if (t)
      t->limitClose(seconds);
}

bool PeerTransports::passesFdsEverywhere() const {
  for (size_t a = 0; a < pairs.size(); ++a)
    for (size_t b = 0; b < pairs.size(); ++b)
      if (a != b && !made[pairs[a][b]]->passesFds())
        return false;
  return true;
}

collResult_t PeerTransports::broadcastFd(int root, int &fd, std::string &error) {
  if (rank != root)
    return made[of[root]]->receiveFd(root, fd, error);
  for (size_t p = 0; p < of.size(); ++p)
    if (int(p) != rank)
      if (collResult_t r = made[of[p]]->passFd(int(p), fd, error))
        return r;
  return collSuccess;
}
