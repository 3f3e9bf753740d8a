//===- Proxy.cpp - The thread that drives a network transport's FIFOs -----===//
#include "transport/Proxy.h"

#include "src/Bootstrap.h"
#include "src/Env.h"

#include <chrono>
#include <unistd.h>

using namespace collrt;

void Proxy::start(Wire &wire) {
  thread = std::thread([this, &wire] { run(wire); });
}

void Proxy::stop() {
  stopping.store(true, std::memory_order_release);
  if (thread.joinable())
    thread.join();
}

void Proxy::addWindow(int id, char *base, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  if (size_t(id) >= windows.size()) {
    windows.resize(size_t(id) + 1, nullptr);
    windowBytes.resize(size_t(id) + 1, 0); // a hole takes no FIFO
  }
  windows[id] = base;
  windowBytes[id] = bytes;
}

collResult_t Proxy::addSend(int peer, int window, uint64_t offset, int32_t slots,
                            int64_t slotBytes, int32_t protocol, const MemoryBackend &memory,
                            collc::Fifo &mirror, std::string &error) {
  if (!memory.hostAccessible()) {
    error = std::string("a proxy cannot ship FIFOs in ") + memory.name() + " memory";
    return collInternalError;
  }
  std::lock_guard<std::mutex> lock(mutex);
  SendConn &c = sends[{peer, window, offset}];
  c.peer = peer;
  if (!c.backend) {
    if (collResult_t r = memory.allocate(fifoBytes(slots, slotBytes), c.memory, error)) {
      sends.erase({peer, window, offset});
      return r;
    }
    c.backend = &memory;
    close(c.memory.fd); // no peer imports a mirror
    c.memory.fd = -1;
    c.mirror = fifoAt(c.memory.base, slots, slotBytes, protocol);
  }
  mirror = c.mirror;
  return collSuccess;
}

Proxy::SendConn::~SendConn() {
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
  if (m.kind == kFrameData)
    return deliverFrame(windows[m.window], f, error);
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
    FrameStatus s = parseFrame(data + used, size - used, windowBytes.data(), windowBytes.size(),
                               f, length, error);
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
      FrameHeader m{kFrameData, c.mirror.protocol, c.mirror.numSlots, std::get<1>(key),
                    std::get<2>(key), c.mirror.slotBytes, c.shipped, c.mirror.sizes[slot]};
      wire.post(c.peer, m, c.mirror.slots + slot * c.mirror.slotBytes);
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

void ProxyTransport::start(std::unique_ptr<Wire> connected) {
  wire = std::move(connected);
  proxy.start(*wire);
}

collResult_t ProxyTransport::shareWindow(Window &w, std::string &error) {
  // No step may arrive for a window its receiver has not made yet, nor for
  // one its proxy cannot write (GPU memory): that one takes no FIFO here.
  const bool reachable = !w.memory || w.memory->hostAccessible();
  proxy.addWindow(w.id, reachable ? w.base[rank] : nullptr, reachable ? w.size[rank] : 0);
  return boot.barrier(error);
}

collResult_t ProxyTransport::sendFifo(Window &w, int owner, size_t offset, int32_t slots,
                                      int64_t slotBytes, int32_t protocol, collc::Fifo &fifo,
                                      std::string &error) {
  return proxy.addSend(owner, w.id, offset, slots, slotBytes, protocol,
                       w.memory ? *w.memory : hostMemory(), fifo, error);
}

collResult_t ProxyTransport::recvFifo(Window &w, int peer, size_t offset,
                                      const collc::Fifo &fifo, std::string &) {
  proxy.addRecv(peer, w.id, offset, fifo);
  return collSuccess;
}
