//===- Proxy.cpp - The thread that drives a network transport's FIFOs -----===//
#include "transport/Proxy.h"

#include "support/Bootstrap.h"
#include "support/Env.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <system_error>
#include <unistd.h>

using namespace collrt;

collResult_t Proxy::start(Wire &w, std::string &error) {
  attached = &w;
  try {
    thread = std::thread([this, &w] { run(w); });
  } catch (const std::system_error &e) {
    error = std::string("cannot start the proxy thread: ") + e.what();
    return collSystemError;
  }
  return collSuccess;
}

void Proxy::stop() {
  stopping.store(true, std::memory_order_release);
  if (thread.joinable())
    thread.join();
}

void Proxy::addWindow(int id, char *base, size_t bytes, char *slots) {
  std::lock_guard<std::mutex> lock(mutex);
  if (size_t(id) >= windows.size()) {
    windows.resize(size_t(id) + 1, nullptr);
    windowSlots.resize(size_t(id) + 1, nullptr);
    windowBytes.resize(size_t(id) + 1, 0); // a hole takes no FIFO
  }
  windows[id] = base;
  windowSlots[id] = slots;
  windowBytes[id] = bytes;
}

void Proxy::addRemote(int peer, int window, uint64_t slots, uint64_t key) {
  std::lock_guard<std::mutex> lock(mutex);
  remotes[{peer, window}] = {slots, key};
}

collResult_t Proxy::addSend(int peer, int window, uint64_t offset, int32_t slots, int64_t slotBytes,
                            int32_t protocol, const MemoryBackend &memory, collc::Fifo &mirror,
                            std::string &error, const MemoryBackend *slotMemory) {
  if (!memory.hostAccessible()) {
    error = std::string("a proxy cannot ship FIFOs in ") + memory.name() + " memory";
    return collInternalError;
  }
  std::lock_guard<std::mutex> lock(mutex);
  SendConn &c = sends[{peer, window, offset}];
  c.peer = peer;
  if (!c.backend) {
    if (collResult_t r =
            makeMirror(c, window, offset, slots, slotBytes, protocol, memory, slotMemory, error)) {
      sends.erase({peer, window, offset});
      return r;
    }
  }
  mirror = c.mirror;
  return collSuccess;
}

// The mirror's memory; where the receiver's window takes puts, its slots
// exposed to the wire: in `slotMemory` if that can be, else after the
// header as usual.
collResult_t Proxy::makeMirror(SendConn &c, int window, uint64_t offset, int32_t slots,
                               int64_t slotBytes, int32_t protocol, const MemoryBackend &memory,
                               const MemoryBackend *slotMemory, std::string &error) {
  if (collResult_t r = memory.allocate(fifoBytes(slots, slotBytes), c.memory, error))
    return r;
  c.backend = &memory;
  close(c.memory.fd); // no peer imports a mirror
  c.memory.fd = -1;
  c.mirror = fifoAt(c.memory.base, slots, slotBytes, protocol);
  auto remote = remotes.find({c.peer, window});
  if (remote == remotes.end())
    return collSuccess;
  if (!attached || !attached->direct()) {
    error = "rank " + std::to_string(c.peer) +
            " takes steps as RDMA writes, which this "
            "rank's wire cannot make";
    return collInternalError;
  }
  std::string why;
  if (slotMemory &&
      slotMemory->allocate(size_t(slots) * size_t(slotBytes), c.slots, why) == collSuccess) {
    if (attached->expose(c.slots, *slotMemory, c.key, why)) {
      c.slotBackend = slotMemory;
      c.mirror.slots = c.slots.base;
    } else {
      slotMemory->unmap(c.slots);
    }
  }
  if (!c.slotBackend && !attached->expose(c.memory, memory, c.key, error)) {
    error = "cannot register a FIFO to rank " + std::to_string(c.peer) + " for RDMA: " + error;
    return collSystemError;
  }
  c.puts = true;
  c.remote = remote->second.first + offset + fifoHeaderBytes(slots);
  c.remoteKey = remote->second.second;
  return collSuccess;
}

Proxy::SendConn::~SendConn() {
  if (slotBackend)
    slotBackend->unmap(slots);
  if (backend)
    backend->unmap(memory);
}

void Proxy::addRecv(int peer, int window, uint64_t offset, const collc::Fifo &fifo) {
  std::lock_guard<std::mutex> lock(mutex);
  RecvConn &c = recvs[{peer, window, offset}];
  c.peer = peer;
  c.fifo = fifo;
  c.credited = __atomic_load_n(fifo.head, __ATOMIC_ACQUIRE);
}

// Acts on one checked message: data into this rank's FIFO, a credit into
// the sender's mirror. False if it does not fit what this rank knows.
bool Proxy::apply(int from, const Frame &f, std::string &error) {
  const FrameHeader &m = f.header;
  if (m.kind == kFrameData || m.kind == kFrameLanded)
    return deliverFrame(windows[m.window], f, error, windowSlots[m.window] != nullptr);
  auto it = sends.find({from, m.window, m.offset});
  if (it == sends.end()) {
    error = "a credit for a FIFO that this rank does not feed";
    return false;
  }
  // The receiver frees only what it got, and never takes a slot back.
  SendConn &c = it->second;
  if (m.step < __atomic_load_n(c.mirror.head, __ATOMIC_RELAXED) || m.step > c.shipped) {
    error = "a credit for steps that were never sent";
    return false;
  }
  __atomic_store_n(c.mirror.head, m.step, __ATOMIC_RELEASE);
  return true;
}

bool Proxy::receive(int from, const char *data, size_t size, size_t &used, std::string &error) {
  std::lock_guard<std::mutex> lock(mutex);
  used = 0;
  for (;;) {
    Frame f;
    size_t length = 0;
    FrameStatus s = parseFrame(data + used, size - used, windowBytes.data(), windowBytes.size(), f,
                               length, error);
    if (s == FrameStatus::kIncomplete)
      return true;
    if (s != FrameStatus::kComplete || !apply(from, f, error))
      return false;
    used += length;
  }
}

// Posts what threadblocks published and the credits owed; true if any.
bool Proxy::collect(Wire &wire) {
  std::lock_guard<std::mutex> lock(mutex);
  bool moved = false;
  for (auto &[key, c] : sends) {
    uint64_t tail = __atomic_load_n(c.mirror.tail, __ATOMIC_ACQUIRE);
    for (; c.shipped < tail; ++c.shipped, moved = true) {
      int64_t slot = int64_t(c.shipped % uint64_t(c.mirror.numSlots));
      FrameHeader m{c.puts ? kFrameLanded : kFrameData,
                    c.mirror.protocol,
                    c.mirror.numSlots,
                    std::get<1>(key),
                    std::get<2>(key),
                    c.mirror.slotBytes,
                    c.shipped,
                    c.mirror.sizes[slot]};
      const char *bytes = c.mirror.slots + slot * c.mirror.slotBytes;
      // The receiver refuses a size past its slot; nothing is put past it.
      if (c.puts && m.size > 0 && m.size <= m.slotBytes)
        wire.put(c.peer, bytes, c.key, size_t(m.size), c.remote + uint64_t(slot * m.slotBytes),
                 c.remoteKey);
      wire.post(c.peer, m, c.puts ? nullptr : bytes);
    }
  }
  for (auto &[key, c] : recvs) {
    uint64_t head = __atomic_load_n(c.fifo.head, __ATOMIC_ACQUIRE);
    if (head > c.credited) {
      FrameHeader m{kFrameCredit, 0, 0, std::get<1>(key), std::get<2>(key), 0, head, 0};
      wire.post(c.peer, m, nullptr);
      c.credited = head;
      moved = true;
    }
  }
  return moved;
}

void Proxy::run(Wire &wire) {
  using Clock = std::chrono::steady_clock;
  int idle = 0;
  Clock::time_point deadline{};
  for (;;) {
    // Read the flag before collecting: the last launch's threadblocks
    // published everything before `stopping` was set, so a collect that
    // starts after seeing it sees every step. Collecting first could miss a
    // step published between the two reads, and then quit without it.
    const bool last = stopping.load(std::memory_order_acquire);
    bool busy = collect(wire);
    if (last) {
      auto now = Clock::now();
      if (deadline == Clock::time_point{})
        deadline = now + std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(drainSeconds));
      if ((!busy && wire.flushed()) || now > deadline)
        break;
    }
    busy |= wire.progress(*this, busy || idle < 64 ? 0 : 1);
    idle = busy ? 0 : idle + 1;
    if (!busy && idle > 256)
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    else if (!busy)
      std::this_thread::yield();
  }
}

ProxyTransport::ProxyTransport(Bootstrap &boot, int rank, const std::vector<bool> &peers)
    : boot(boot), rank(rank), peers(peers), proxy(Env::get().timeoutSeconds) {}

ProxyTransport::~ProxyTransport() {
  proxy.stop(); // ships the last launch's steps over the wire, then
  wire.reset(); // closes it
}

void ProxyTransport::limitClose(double seconds) {
  proxy.limitDrain(seconds);
  if (wire)
    wire->limitClose(seconds);
}

collResult_t ProxyTransport::start(std::unique_ptr<Wire> connected, std::string &error) {
  wire = std::move(connected);
  return proxy.start(*wire, error);
}

namespace {

// What a rank tells its peers of its part of a window: whether their puts
// fill its FIFOs' slots, and where. Its wire is theirs (one transport joins
// a pair), so a receiver that takes puts gets only puts.
struct PutTarget {
  uint64_t slots = 0, key = 0, takes = 0;
};

} // namespace

collResult_t ProxyTransport::shareWindow(Window &w, std::string &error) {
  // No step may arrive for a window its receiver has not made yet, nor for
  // one its proxy cannot write (GPU memory): that one takes no FIFO here.
  const bool reachable = !w.memory || w.memory->hostAccessible();
  char *base = reachable ? w.base[rank] : nullptr;
  PutTarget mine;
  std::string why = "the transport copies every step";
  if (base && wire && wire->direct() &&
      wire->expose(w.slots.base ? w.slots : Region{base, w.size[rank], -1, 0},
                   w.slots.base ? *w.slotMemory
                   : w.memory   ? *w.memory
                                : hostMemory(),
                   mine.key, why)) {
    mine.slots = reinterpret_cast<uintptr_t>(w.slots.base ? w.slots.base : base);
    mine.takes = 1;
  }
  if (w.slots.base && !mine.takes) { // the proxy copies into the slots by the headers
    if (Env::get().debug)
      fprintf(stderr, "collc INFO rank %d: %s stages steps in host memory: %s\n", rank, name(),
              why.c_str());
    w.slotMemory->unmap(w.slots);
    w.slotMemory = nullptr;
  } else if (w.slots.base && Env::get().debug) {
    fprintf(stderr, "collc INFO rank %d: %s puts steps straight into %s memory\n", rank, name(),
            w.slotMemory->name());
  }
  proxy.addWindow(w.id, base, base ? w.size[rank] : 0, w.slots.base);
  std::vector<std::string> all;
  if (collResult_t r = boot.allgather(
          std::string(reinterpret_cast<const char *>(&mine), sizeof mine), all, error))
    return r;
  for (size_t p = 0; p < all.size(); ++p) {
    PutTarget theirs;
    if (int(p) == rank || !peers[p] || all[p].size() != sizeof theirs)
      continue;
    memcpy(&theirs, all[p].data(), sizeof theirs);
    // This rank's sends there must put, or fail to be made: that window's
    // slots may be where no copy reaches.
    if (theirs.takes)
      proxy.addRemote(int(p), w.id, theirs.slots, theirs.key);
  }
  return collSuccess;
}

bool ProxyTransport::copiesSteps() const {
  return std::count(peers.begin(), peers.end(), true) > 0 && !(wire && wire->direct());
}

collResult_t ProxyTransport::sendFifo(Window &w, int owner, size_t offset, int32_t slots,
                                      int64_t slotBytes, int32_t protocol, collc::Fifo &fifo,
                                      std::string &error) {
  return proxy.addSend(owner, w.id, offset, slots, slotBytes, protocol,
                       w.memory ? *w.memory : hostMemory(), fifo, error, w.slotMemory);
}

collResult_t ProxyTransport::recvFifo(Window &w, int peer, size_t offset, const collc::Fifo &fifo,
                                      std::string &) {
  proxy.addRecv(peer, w.id, offset, fifo);
  return collSuccess;
}
