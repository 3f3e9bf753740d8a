//===- host.h - Device primitives on the CPU (the host emulation) ---------===//
//
// Each CUDA block of a generated kernel runs as one OS thread; the threads
// of a block collapse into plain loops. FIFOs live in shared memory and use
// the GPU wire formats: Simple slots published by a release-stored tail, LL
// lines of two 8-byte {data, flag} words, LL128 lines of 15 data words and a
// release-stored flag word. A step copies what it receives into the block's
// staging buffer and frees the slot before it waits for room to send, the
// order the plan verifier assumes.
//
//===----------------------------------------------------------------------===//

#ifndef COLLC_DEVICE_HOST_H
#define COLLC_DEVICE_HOST_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "collc/multimem.h"
#include "collc/wire.h"

#include <initializer_list>
#include <vector>

#define COLLC_DEVICE static inline
#define COLLC_KERNEL(name) void name(const ::collc::Args *collcArgs)
#define COLLC_BLOCK_ARGS collcArgs
// A test may define these first, to run the host kernels through the
// runtime's GPU path (test/e2e/fakecuda).
#ifndef COLLC_HOST_FN
#define COLLC_HOST_FN(name) &name
#endif
#ifndef COLLC_CUDA_FN
#define COLLC_CUDA_FN(name) (::collc::CudaEntry{nullptr, nullptr, nullptr, nullptr})
#endif

extern "C" {
// Implemented in collrt: acc[i] = acc[i] (op) src[i] for n elements.
void collcHostReduce(int32_t datatype, int32_t op, void *acc, const void *src, int64_t n);
// Spins, yields, then sleeps; false on timeout or abort (and fills the error).
int collcHostWait(const collc::Args *args, const uint64_t *word, uint64_t goal, int mode,
                  const char *what, int64_t peer);
}

namespace collc {

// Wait modes of collcHostWait: the word is >= goal, or the word's high 32
// bits equal the low 32 bits of goal (an LL flag).
enum WaitMode { kAtLeast = 0, kLLFlag = 1, kLL128Flag = 2 };

class Block {
public:
  explicit Block(const Args *args) : a(*args) {
    perLoop = a.chunks * a.slice;
    loops = a.count == 0 ? 0 : (a.count + perLoop - 1) / perLoop;
    if (a.recv.slots)
      recvStep = load(a.recv.head);
    if (a.send.slots)
      sendStep = load(a.send.tail);
  }

  int64_t rank() const { return a.rank; }
  const int64_t *table() const { return a.table; }

  // Starts the next loop over the user buffer; false after the last.
  // Where the launch gives a barrier (collrt's GPU path, run on the host
  // against a fake driver), the plan starts and ends at it as cuda.h's
  // does; the host emulation's own launches hold barriers of their own.
  bool nextLoop() {
    if (failed())
      return false;
    if (loop < 0 && a.barrier && !arrive())
      return false;
    loop = a.replica + ++iter * (a.replicas > 1 ? a.replicas : 1);
    if (loop >= loops) {
      if (a.barrier)
        arrive();
      return false;
    }
    int64_t base = loop * perLoop;
    int64_t rest = a.count - base;
    width = rest < perLoop ? rest : perLoop;
    q = (width + a.chunks - 1) / a.chunks;
    return true;
  }

  void send(Ref src) { step(false, {src}, nullptr, true); }
  void recv(Ref dst) { step(true, {}, &dst, false); }
  void recvCopySend(Ref dst) { step(true, {}, &dst, true); }
  void recvReduceSend(Ref src) { step(true, {src}, nullptr, true); }
  void recvReduceCopy(Ref src, Ref dst) { step(true, {src}, &dst, false); }
  void recvReduceCopySend(Ref src, Ref dst) { step(true, {src}, &dst, true); }
  // The same on a direct connection: `to` is where the receiver stores.
  void send(Ref src, Direct to) { step(false, {src}, nullptr, true, &to.ref); }
  void recvCopySend(Ref dst, Direct to) { step(true, {}, &dst, true, &to.ref); }
  void recvReduceSend(Ref src, Direct to) { step(true, {src}, nullptr, true, &to.ref); }
  void recvReduceCopySend(Ref src, Ref dst, Direct to) { step(true, {src}, &dst, true, &to.ref); }
  void copy(Ref src, Ref dst) { step(false, {src}, &dst, false); }
  void reduce(std::initializer_list<Ref> srcs, Ref dst) { step(false, srcs, &dst, false); }

  // NVLink multicast, emulated over every rank's buffers in shared memory
  // (`Args::peers`): what the switch would reduce or fan out, a loop does.
  // Peer windows (LSA) are those same buffers, loaded and stored one rank
  // at a time, which is what the emulation does for both. Where a fake
  // driver gives multicast addresses (COLLC_HOST_MULTICAST, as FakeGpu.h
  // does), steps go through them where cuda.h's would.
  void multimemLdReduce(Ref src, Ref dst) {
#ifdef COLLC_HOST_MULTICAST
    if (a.multicast[src.buffer] && a.elemSize > 1 && multimemReduces(a.datatype, a.op))
      return multicast(true, src, dst);
#endif
    readReduce(src, dst);
  }
  void multimemSt(Ref src, Ref dst) {
#ifdef COLLC_HOST_MULTICAST
    if (a.multicast[dst.buffer])
      return multicast(false, src, dst);
#endif
    put(src, dst);
  }
  // The two steps one after the other, as the emitter fuses them (cuda.h
  // keeps the reduced values in registers between them).
  void multimemAllReduce(Ref src, Ref mid, Ref dst) {
    multimemLdReduce(src, mid);
    multimemSt(mid, dst);
  }
  void readReduce(Ref src, Ref dst) {
    if (!mapped("read_reduce"))
      return;
    int64_t bytes = dst.count * q * a.elemSize;
    acc.resize(bytes + 128);
    tmp.resize(bytes + 128);
    for (int32_t p = 0; p < a.nranks; ++p) {
      gather(src, p ? tmp.data() : acc.data(), peer(p, src.buffer));
      if (p)
        collcHostReduce(a.datatype, a.op, acc.data(), tmp.data(), dst.count * q);
    }
    scatter(dst, acc.data());
    done();
  }
  void put(Ref src, Ref dst) {
    if (!mapped("put"))
      return;
    acc.resize(src.count * q * a.elemSize + 128);
    gather(src, acc.data());
    for (int32_t p = 0; p < a.nranks; ++p)
      scatter(dst, acc.data(), peer(p, dst.buffer));
    done();
  }
  // `src` names a chunk of rank `from`.
  void get(int32_t from, Ref src, Ref dst) {
    if (!mapped("get"))
      return;
    acc.resize(src.count * q * a.elemSize + 128);
    gather(src, acc.data(), peer(from, src.buffer));
    scatter(dst, acc.data());
    done();
  }

  // Waits until threadblock `tb` (an index into the plan's table) has
  // finished step `index` of its `steps` per loop in this loop (of this
  // replica, whose progress counters these are).
  void wait(int32_t tb, int32_t index, int32_t steps) {
    if (failed())
      return;
    uint64_t goal = uint64_t(iter) * steps + index + 1;
    if (!collcHostWait(&a, &a.progress[tb], goal, kAtLeast, "threadblock", tb))
      dead = true;
  }

private:
  static uint64_t load(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
  static void store(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
  // collCommAbort sets the flag from another thread.
  bool failed() const { return dead || __atomic_load_n(a.abort, __ATOMIC_ACQUIRE); }
  char *peer(int32_t rank, int32_t buffer) const { return a.peers[rank * kMaxBuffers + buffer]; }
  bool mapped(const char *what) {
    if (failed())
      return false;
    if (!a.peers) {
      unsupported(what);
      return false;
    }
    return true;
  }
  // Counts a step where another threadblock waits for this one's.
  void done() {
    if (a.publishes)
      store(&a.progress[a.tb], load(&a.progress[a.tb]) + 1);
  }
  // Every threadblock of every rank arrives at the barrier, as cuda.h's
  // do: a rank's last resets its count, posts the next generation to every
  // rank, waits for every rank's post and moves its generation on.
  bool arrive() {
    uint64_t *count = a.barrier, *generation = a.barrier + 1, *posts = a.barrier + 2;
    const uint64_t g = load(generation);
    if (__atomic_add_fetch(count, 1, __ATOMIC_ACQ_REL) == a.barrierArrivals) {
      __atomic_store_n(count, 0, __ATOMIC_RELAXED);
      for (int32_t q = 0; q < a.nranks; ++q)
        store(a.barriers[q] + 2 + a.rank, g + 1);
      for (int32_t q = 0; q < a.nranks && !dead; ++q)
        dead = !collcHostWait(&a, posts + q, g + 1, kAtLeast,
                              "every rank at the peer barrier, rank", q);
      store(generation, g + 1); // releases the reset too
    } else if (!collcHostWait(&a, generation, g + 1, kAtLeast,
                              "every threadblock at the peer barrier, rank", a.rank)) {
      dead = true;
    }
    return !dead;
  }

#ifdef COLLC_HOST_MULTICAST
  // Chunk by chunk through the multicast address of the buffer, as
  // cuda_peer.h's multimemReduceChunk and multimemStoreChunk: a reduction
  // over every bound copy of the source into this rank's destination, or
  // the source stored into every copy of the destination.
  void multicast(bool reduce, Ref src, Ref dst) {
    if (failed())
      return;
    const int64_t es = a.elemSize;
    const Ref &far = reduce ? src : dst;
    char *copies[kMaxCopies];
    acc.resize(q * es + 128);
    tmp.resize(q * es + 128);
    for (int32_t k = 0; k < dst.count; ++k) {
      const int64_t sv = valid(src.buffer, src.index + k), dv = valid(dst.buffer, dst.index + k);
      const int64_t n = reduce ? sv : dv;
      char *mc = a.multicast[far.buffer] + offset(far.buffer, far.index + k) * es;
      const int found = COLLC_HOST_MULTICAST(mc, size_t(n * es), copies, kMaxCopies);
      if (found <= 0) {
        unsupported(reduce ? "multimem_ld_reduce through a multicast address with no memory bound"
                           : "multimem_st through a multicast address with no memory bound");
        return;
      }
      memset(acc.data(), 0, size_t(q * es));
      if (reduce) {
        memcpy(acc.data(), copies[0], size_t(n * es));
        for (int c = 1; c < found; ++c) {
          memcpy(tmp.data(), copies[c], size_t(n * es));
          collcHostReduce(a.datatype, a.op, acc.data(), tmp.data(), n);
        }
        memcpy(a.buffers[dst.buffer] + offset(dst.buffer, dst.index + k) * es, acc.data(),
               size_t(dv * es));
      } else {
        memcpy(acc.data(), a.buffers[src.buffer] + offset(src.buffer, src.index + k) * es,
               size_t((sv < dv ? sv : dv) * es));
        for (int c = 0; c < found; ++c)
          memcpy(copies[c], acc.data(), size_t(n * es));
      }
    }
    done();
  }
  static constexpr int kMaxCopies = 64;
#endif

  // Element offset and valid length of chunk `index` of a buffer in this loop.
  int64_t offset(int32_t buffer, int64_t index) const {
    if (buffer >= kScratch0)
      return (loop * a.scratchChunks[buffer - kScratch0] + index) * a.slice;
    int64_t unit = index / a.chunks, pos = index % a.chunks;
    return unit * a.count + loop * perLoop + pos * q;
  }
  int64_t valid(int32_t buffer, int64_t index) const {
    if (buffer >= kScratch0)
      return q;
    int64_t left = width - (index % a.chunks) * q;
    return left < 0 ? 0 : left < q ? left : q;
  }

  // Reads a run of chunks into `dst` (q elements per chunk, zeros past the
  // end of the user's buffer), or writes `src` back to one.
  // `base` is the buffer on this rank, or on a peer for peer steps.
  void gather(Ref r, char *dst, const char *base = nullptr) const {
    const int64_t es = a.elemSize;
    if (!base)
      base = a.buffers[r.buffer];
    for (int32_t k = 0; k < r.count; ++k) {
      int64_t n = valid(r.buffer, r.index + k);
      char *to = dst + k * q * es;
      memcpy(to, base + offset(r.buffer, r.index + k) * es, n * es);
      memset(to + n * es, 0, (q - n) * es);
    }
  }
  void scatter(Ref r, const char *src, char *base = nullptr) const {
    const int64_t es = a.elemSize;
    if (!base)
      base = a.buffers[r.buffer];
    for (int32_t k = 0; k < r.count; ++k)
      memcpy(base + offset(r.buffer, r.index + k) * es, src + k * q * es,
             valid(r.buffer, r.index + k) * es);
  }

  void step(bool receives, std::initializer_list<Ref> srcs, const Ref *dst, bool sends,
            const Ref *direct = nullptr) {
    if (failed())
      return;
    int32_t count = dst ? dst->count : srcs.size() ? srcs.begin()->count : 0;
    int64_t bytes = count * q * a.elemSize;
    // Whole LL words and LL128 lines are copied, so keep room past the end.
    acc.resize(bytes + 128);
    bool have = false;
    if (receives) {
      if (!pull(bytes, dst))
        return;
      have = true;
    }
    for (const Ref &r : srcs) {
      if (!have) {
        gather(r, acc.data());
        have = true;
        continue;
      }
      tmp.resize(bytes);
      gather(r, tmp.data());
      collcHostReduce(a.datatype, a.op, acc.data(), tmp.data(), count * q);
    }
    if (dst)
      scatter(*dst, acc.data());
    if (sends && !push(bytes, direct))
      return;
    done();
  }

  // Receives one step into `acc` and frees its slot. A direct sender may
  // have stored it in `dst` already.
  bool pull(int64_t bytes, const Ref *dst) {
    const Fifo &f = a.recv;
    char *slot = f.slots + (recvStep & uint64_t(f.numSlots - 1)) * f.slotBytes;
    uint64_t *words = reinterpret_cast<uint64_t *>(slot);
    char *out = acc.data();
    if (f.protocol == kSimple) {
      if (a.peers && f.ready)
        store(f.ready, recvStep + 1);
      if (!collcHostWait(&a, f.tail, recvStep + 1, kAtLeast, "data from rank", a.recvPeer))
        return fail();
      if (f.sizes[recvStep & uint64_t(f.numSlots - 1)] == kDirect && dst)
        gather(*dst, out);
      else
        memcpy(out, slot, bytes);
    } else if (f.protocol == kLL) {
      uint32_t flag = llFlag(recvStep);
      // Wait for the last word first: the sender writes in order, so the
      // others are then usually there and each check passes at once.
      const int64_t n = llWords(bytes), last = n - 1;
      if (last > 0 && !collcHostWait(&a, &words[last], flag, kLLFlag, "data from rank", a.recvPeer))
        return fail();
      for (int64_t w = 0; w < n; ++w) {
        uint64_t word = __atomic_load_n(&words[w], __ATOMIC_RELAXED);
        if (llWordFlag(word) != flag) {
          if (!collcHostWait(&a, &words[w], flag, kLLFlag, "data from rank", a.recvPeer))
            return fail();
          word = __atomic_load_n(&words[w], __ATOMIC_RELAXED);
        }
        uint32_t data = llWordData(word);
        memcpy(out + w * 4, &data, 4); // `acc` has room past the end
      }
    } else {
      const uint64_t flag = ll128Flag(recvStep);
      const int64_t lines = ll128Lines(bytes);
      if (lines > 1 && !collcHostWait(&a, &words[(lines - 1) * kLL128LineWords + kLL128FlagWord],
                                      flag, kLL128Flag, "data from rank", a.recvPeer))
        return fail();
      for (int64_t line = 0; line < lines; ++line) {
        uint64_t *l = words + line * kLL128LineWords;
        if (__atomic_load_n(&l[kLL128FlagWord], __ATOMIC_ACQUIRE) != flag &&
            !collcHostWait(&a, &l[kLL128FlagWord], flag, kLL128Flag, "data from rank", a.recvPeer))
          return fail();
        memcpy(out + line * kLL128PayloadBytes, l, kLL128PayloadBytes);
      }
    }
    store(f.head, ++recvStep);
    return true;
  }

  // Sends `acc` as one step once the receiver has freed the slot: into the
  // receiver's `direct` destination if it waits in that step already.
  bool push(int64_t bytes, const Ref *direct) {
    const Fifo &f = a.send;
    uint64_t slots = uint64_t(f.numSlots);
    uint64_t freed = sendStep + 1 > slots ? sendStep + 1 - slots : 0;
    if (!collcHostWait(&a, f.head, freed, kAtLeast, "room to send to rank", a.sendPeer))
      return fail();
    if (direct && a.peers && f.ready && f.protocol == kSimple && load(f.ready) >= sendStep + 1) {
      scatter(*direct, acc.data(), peer(a.sendPeer, direct->buffer));
      f.sizes[sendStep & uint64_t(f.numSlots - 1)] = kDirect;
      store(f.tail, ++sendStep);
      return true;
    }
    char *slot = f.slots + (sendStep & uint64_t(f.numSlots - 1)) * f.slotBytes;
    uint64_t *words = reinterpret_cast<uint64_t *>(slot);
    const char *in = acc.data();
    // A cleaning LL step fills its slot, and a proxy ships all of it.
    const bool cleans = f.protocol == kLL && llCleans(sendStep, f.numSlots);
    if (f.sizes) // null where no proxy ships the step (GPU plans' LL and LL128)
      f.sizes[sendStep & uint64_t(f.numSlots - 1)] =
          wireBytes(f.protocol, bytes, cleans, f.slotBytes);
    if (f.protocol == kSimple) {
      memcpy(slot, in, bytes);
    } else if (f.protocol == kLL) {
      const uint32_t flag = llFlag(sendStep);
      const int64_t sent = llWords(bytes), upTo = cleans ? f.slotBytes / 8 : sent;
      for (int64_t w = 0; w < upTo; ++w) {
        uint32_t data = 0;
        if (w < sent)
          memcpy(&data, in + w * 4, 4);
        __atomic_store_n(&words[w], llWord(data, flag), __ATOMIC_RELAXED);
      }
    } else {
      for (int64_t line = 0; line < ll128Lines(bytes); ++line) {
        uint64_t *l = words + line * kLL128LineWords;
        memcpy(l, in + line * kLL128PayloadBytes, kLL128PayloadBytes);
        store(&l[kLL128FlagWord], ll128Flag(sendStep));
      }
    }
    store(f.tail, ++sendStep);
    return true;
  }

  bool fail() {
    dead = true;
    return false;
  }

protected:
  // A kernel compiled for one (type, op) ran a launch of another.
  void wrongKernel(int32_t type, int32_t op) {
    if (__atomic_exchange_n(a.error, int32_t(3 /* collInternalError */), __ATOMIC_ACQ_REL) == 0)
      snprintf(a.errorText, 256, "the kernel for type %d, op %d ran a launch of type %d, op %d",
               type, op, a.datatype, a.op);
    dead = true;
  }

private:
  void unsupported(const char *what) {
    if (failed())
      return;
    if (__atomic_exchange_n(a.error, int32_t(5 /* collInvalidUsage */), __ATOMIC_ACQ_REL) == 0)
      snprintf(a.errorText, 256, "%s needs other ranks' buffers, which this launch did not map",
               what);
    dead = true;
  }

  const Args &a;
  int64_t perLoop = 0, loops = 0, loop = -1, iter = -1, width = 0, q = 0;
  uint64_t recvStep = 0, sendStep = 0;
  bool dead = false;
  std::vector<char> acc, tmp;
};
// The host runs every protocol through one loop and every (type, op)
// alike. Kernels compiled for one pair exist only where a fake driver runs
// the host build as a GPU's: there they check that the runtime launched
// them for that pair. How many calls the plan makes (C) matters to nvcc
// only.
template <int32_t P, int32_t T = kAnyType, int32_t O = kAnyOp, int32_t C = 0>
class BlockOf : public Block {
public:
  explicit BlockOf(const Args *args) : Block(args) {
    if (T != kAnyType && !kernelRuns(T, O, args->datatype, args->op))
      wrongKernel(T, O);
  }
};
#ifndef COLLC_TYPED_KERNEL
#define COLLC_TYPED_KERNEL(name, ...)
#endif

} // namespace collc

#endif // COLLC_DEVICE_HOST_H
