//===- Proxy.h - The thread that drives a network transport's FIFOs -------===//
//
// Ranks that share no memory still run the same kernels: a sender's
// threadblock writes into a local mirror of the receiver's FIFO, and a proxy
// thread per rank ships every published step to the receiver's proxy, which
// writes it into the real FIFO and moves the tail; credits flow back the same
// way into the sender's mirror. This is the shape of NCCL's proxy.
//
// The engine here is what every network transport shares: the connections,
// which steps and credits are owed, the checks on what arrives (Frame.h) and
// shipping the last launch's steps on shutdown. A Wire moves its messages:
// TCP for `socket`, RDMA writes for `ib`. So the engine is tested over TCP
// wherever the tests run, and only the wire differs between the two.
//
// A wire that moves memory itself (an RDMA NIC) may take a step's bytes
// from the sender's slot straight into the receiver's (put), where both
// ends exposed that memory to it: then only the step's header crosses as a
// message, "landed", and no proxy copies the bytes. The receiver's slots
// may then be apart from its FIFO headers, in GPU memory that only the NIC
// writes, while the headers stay where its proxy moves the tails.
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_PROXY_H
#define COLLRT_PROXY_H

#include "collc/abi.h"
#include "transport/Frame.h"
#include "transport/MemoryBackend.h"
#include "transport/Transport.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace collrt {

class Proxy;

/// Reliable, ordered delivery of messages to each peer. Only the proxy's
/// thread calls a wire, but for expose(), so a wire needs no lock of its own.
class Wire {
public:
  virtual ~Wire() = default;
  /// Queues one message for `peer`, to arrive after those queued before it:
  /// the header and, for data, its `size` bytes of payload.
  virtual void post(int peer, const FrameHeader &header, const char *payload) = 0;
  /// Sends what it can of the queues and hands what arrived to
  /// Proxy::receive, waiting at most `waitMs` for either. True if anything
  /// moved.
  virtual bool progress(Proxy &proxy, int waitMs) = 0;
  /// Whether every queued message has left, or can never leave because its
  /// peer is gone.
  virtual bool flushed() const = 0;
  /// Bounds how long closing the wire waits for its peers to finish.
  virtual void limitClose(double /*seconds*/) {}

  /// Whether put() moves bytes: the wire's memory is its NIC's.
  virtual bool direct() const { return false; }
  /// Registers `region` of this rank's memory, made of `memory`, for put():
  /// as a source here and a destination of peers' puts. The key names it;
  /// false, saying why, where it cannot. May run beside progress(), never
  /// beside another expose().
  virtual bool expose(const Region & /*region*/, const MemoryBackend & /*memory*/,
                      uint64_t & /*key*/, std::string &error) {
    error = "this wire copies every step";
    return false;
  }
  /// Queues a write of `bytes` at `local` (in memory exposed as `key`) to
  /// `remote` in the peer's memory exposed as `remoteKey`. It lands before
  /// any message queued after it.
  virtual void put(int /*peer*/, const char * /*local*/, uint64_t /*key*/, size_t /*bytes*/,
                   uint64_t /*remote*/, uint64_t /*remoteKey*/) {}
};

class Proxy {
public:
  explicit Proxy(double drainSeconds) : drainSeconds(drainSeconds) {}
  ~Proxy() { stop(); }
  Proxy(const Proxy &) = delete;
  Proxy &operator=(const Proxy &) = delete;

  /// Starts the thread over `wire`, which must outlive stop(); fails where
  /// the system has no thread to give.
  collResult_t start(Wire &wire, std::string &error);
  /// The wire it was started over; null before.
  Wire *wireOf() const { return attached; }
  /// Ships what the threadblocks published before it was called, for at
  /// most `drainSeconds`, then joins the thread.
  void stop();
  /// Makes stop() ship for at most `seconds`; called before it.
  void limitDrain(double seconds) { drainSeconds = std::min(drainSeconds, seconds); }

  /// Window `id`, the same on every rank, is `bytes` at `base` on this one:
  /// data for it lands there. Where `slots` is set, its FIFOs' slots lie
  /// there instead, in the same layout, and only puts fill them.
  void addWindow(int id, char *base, size_t bytes, char *slots = nullptr);
  /// Peer `peer`'s window `window` takes puts: its FIFOs' slots lie in the
  /// layout of the window from `slots` on, in memory exposed as `key`.
  void addRemote(int peer, int window, uint64_t slots, uint64_t key);
  /// The mirror that this rank's sender to `peer` writes, for the FIFO at
  /// `offset` of the peer's window `window`, made of `memory` (what the
  /// window is made of, so that the same kernels reach it). Where the peer's
  /// window takes puts, its slots are exposed to the wire, and made of
  /// `slotMemory` where that is given and can be exposed. An error, saying
  /// why, where it cannot be made.
  collResult_t addSend(int peer, int window, uint64_t offset, int32_t slots, int64_t slotBytes,
                       int32_t protocol, const MemoryBackend &memory, collc::Fifo &mirror,
                       std::string &error, const MemoryBackend *slotMemory = nullptr);
  /// This rank's FIFO at `offset` in its window `window`, fed by `peer`:
  /// its head moves become credits.
  void addRecv(int peer, int window, uint64_t offset, const collc::Fifo &fifo);

  /// Acts on the whole messages at the start of `data`, from `peer`: data
  /// into this rank's FIFOs, credits into its mirrors. Sets `used` to the
  /// bytes they took. False, with `error` saying why, at the first message
  /// that is malformed or does not fit what this rank knows; nothing after
  /// it can be trusted, and the wire should drop the peer.
  bool receive(int peer, const char *data, size_t size, size_t &used, std::string &error);

private:
  // Mapped, not allocated: a mirror is zero until written, and most of
  // its slots never are at small sizes, so no page is touched up front.
  struct SendConn {
    SendConn() = default;
    SendConn(const SendConn &) = delete;
    SendConn &operator=(const SendConn &) = delete;
    ~SendConn();
    int peer = -1;
    collc::Fifo mirror{};
    Region memory, slots; // slots: where apart from the header
    const MemoryBackend *backend = nullptr, *slotBackend = nullptr;
    uint64_t shipped = 0;
    bool puts = false; // its steps go as puts
    uint64_t key = 0, remoteKey = 0;
    uint64_t remote = 0; // the receiver's first slot
  };
  struct RecvConn {
    int peer;
    collc::Fifo fifo;
    uint64_t credited = 0;
  };
  using Key = std::tuple<int, int, uint64_t>; // peer, window, offset

  collResult_t makeMirror(SendConn &c, int window, uint64_t offset, int32_t slots,
                          int64_t slotBytes, int32_t protocol, const MemoryBackend &memory,
                          const MemoryBackend *slotMemory, std::string &error);
  bool apply(int from, const Frame &frame, std::string &error);
  bool collect(Wire &wire);
  void run(Wire &wire);

  double drainSeconds;
  std::mutex mutex; // guards sends, recvs, windows and windowBytes
  std::map<Key, SendConn> sends;
  std::map<Key, RecvConn> recvs;
  std::vector<char *> windows;
  std::vector<char *> windowSlots; // where apart, else null
  std::vector<size_t> windowBytes; // of each window, for checking messages
  std::map<std::pair<int, int>, std::pair<uint64_t, uint64_t>> remotes; // (peer, window)
  Wire *attached = nullptr;                                             // by start()
  std::atomic<bool> stopping{false};
  std::thread thread;
};

/// A network transport: the engine over a wire, serving the ranks marked in
/// `peers`. Its connect makes the wire and calls start(); the rest is the
/// same for every wire.
class ProxyTransport : public Transport {
public:
  ProxyTransport(Bootstrap &boot, int rank, const std::vector<bool> &peers);
  ~ProxyTransport() override;

  collResult_t shareWindow(Window &w, std::string &error) override;
  collResult_t sendFifo(Window &w, int owner, size_t offset, int32_t slots, int64_t slotBytes,
                        int32_t protocol, collc::Fifo &fifo, std::string &error) override;
  collResult_t recvFifo(Window &w, int peer, size_t offset, const collc::Fifo &fifo,
                        std::string &error) override;
  bool proxied() const override { return true; }
  bool copiesSteps() const override;
  void limitClose(double seconds) override;

protected:
  collResult_t start(std::unique_ptr<Wire> connected, std::string &error);

  Bootstrap &boot;
  int rank;
  std::vector<bool> peers; // the ranks this transport serves

private:
  std::unique_ptr<Wire> wire;
  Proxy proxy;
};

/// The socket transport's wire (Socket.cpp) over connected stream sockets,
/// one per rank (-1 for none), for `rank`. It closes them when destroyed.
std::unique_ptr<Wire> makeSocketWire(int rank, const std::vector<int> &fds);

} // namespace collrt

#endif // COLLRT_PROXY_H
