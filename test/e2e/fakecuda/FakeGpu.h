//===- FakeGpu.h - A host build that presents itself as nvcc's ------------===//
//
// Included first (-include) into the host build of a generated file: its
// plans then have no host kernel and a "CUDA" launcher that queues the
// launch on its stream in the fake driver (FakeCuda.cpp), whose stream
// thread runs each block as a thread on the Args it is given, once the
// work before it on the stream is done. With the fake driver in place of
// libcuda, collrt's GPU path (device memory, VMM windows, Args upload,
// avg, in-place layouts, graph capture) runs end to end, asynchronously
// to the host as on a GPU, on a machine without one. On a stream that is
// being captured, launches are recorded by the fake driver and run when
// the graph is.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_FAKEGPU_H
#define COLLC_FAKEGPU_H

#include "collc/abi.h"
#include "collrt.h"
#include "support/Numeric.h" // collrt's host arithmetic (-I runtime)

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <thread>
#include <utility>
#include <vector>

namespace collc_fake {

// A function the fake driver exports beside CUDA's (fakeCudaLaunch, ...),
// from the library collrt loaded; null where it is not the fake.
template <class Fn> Fn fakeSymbol(const char *name) {
  const char *driver = getenv("COLL_CUDA_LIBRARY");
  void *lib = driver ? dlopen(driver, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  return lib ? reinterpret_cast<Fn>(dlsym(lib, name)) : nullptr;
}

// FAKE_GPU_FAIL=N: the Nth launch of the process reports a timeout, as a
// kernel does through the error report, instead of running.
inline bool failsNow() {
  static int launches = 0;
  const char *n = getenv("FAKE_GPU_FAIL");
  return n && ++launches == atoi(n);
}

// Queues `job` on `stream` as a kernel of the fake driver (which runs it
// on the stream's thread, or records it into the graph the stream is
// capturing); runs it now where the fake driver is not loaded. Returns
// the launch's error as the CUDA runtime names it, or null.
template <class Job> const char *enqueue(void *stream, Job *job) {
  using Launch = int (*)(void *, void (*)(void *), void *, void (*)(void *));
  static Launch queue = fakeSymbol<Launch>("fakeCudaLaunch");
  auto run = [](void *j) { (*static_cast<Job *>(j))(); };
  auto drop = [](void *j) { delete static_cast<Job *>(j); };
  if (!queue) {
    run(job);
    drop(job);
    return nullptr;
  }
  // The one error the fake's launch has: a stream of another context.
  return queue(stream, run, job, drop) ? "cudaErrorInvalidResourceHandle" : nullptr;
}

// A multicast address's copies in every memory bound to its object, as the
// fake driver's switch finds them (collc/host.h's multimem steps).
inline int multicastCopies(const char *mc, size_t n, char **copies, int max) {
  using Copies = int (*)(const void *, size_t, char **, int);
  static Copies find = fakeSymbol<Copies>("fakeCudaMulticastCopies");
  return find ? find(mc, n, copies, max) : -1;
}

// The fake driver maps a multicast object as the memory this rank bound
// to it, so Args::multicast[b] must alias buffer b: a byte stored through
// one reads back through the other. Before the kernel starts, no rank
// touches this rank's window (the plan's first barrier holds them).
inline void checkMulticast(const collc::Args &a) {
  for (int b = 0; b < collc::kMaxBuffers; ++b) {
    volatile char *mc = a.multicast[b], *at = a.buffers[b];
    if (!mc)
      continue;
    const char was = *at;
    *at = char(~was);
    const bool alias = *mc == char(~was);
    *at = was;
    if (!alias) {
      fprintf(stderr, "fake GPU: rank %d: Args::multicast[%d] does not address buffer %d\n", a.rank,
              b, b);
      abort();
    }
  }
}

// A kernel touches its FIFOs, and through a proxy those are host memory:
// each must lie in memory the fake driver gave or pinned for the GPU, and
// VMM memory must be open to the device that runs the kernel.
inline void checkFifos(const collc::Args &a) {
  using Reaches = int (*)(const void *, size_t);
  static Reaches reaches = fakeSymbol<Reaches>("fakeCudaReaches");
  static Reaches mayTouch = fakeSymbol<Reaches>("fakeCudaMayTouch");
  auto ok = [](const void *p, size_t n) { return reaches(p, n) && (!mayTouch || mayTouch(p, n)); };
  const collc::Fifo *fifos[] = {&a.send, &a.recv};
  for (const collc::Fifo *f : fifos) {
    if (!reaches || !f->slots)
      continue;
    const size_t slots = size_t(f->numSlots);
    const bool fine = ok(f->head, 8) && ok(f->tail, 8) &&
                      ok(f->slots, slots * size_t(f->slotBytes)) &&
                      (!f->sizes || ok(f->sizes, slots * 8)) && (!f->ready || ok(f->ready, 8));
    if (!fine) {
      fprintf(stderr,
              "fake GPU: rank %d threadblock %d: a %s FIFO lies in memory the GPU "
              "cannot reach\n",
              a.rank, a.tb, f == &a.send ? "send" : "receive");
      abort();
    }
  }
  // What the kernel polls (the sender its head and ready word, a Simple
  // receiver its tail) is in its own GPU's memory, not across NVLink.
  using Peer = int (*)(const void *);
  static Peer peer = fakeSymbol<Peer>("fakeCudaPeerMemory");
  const std::pair<const void *, const char *> polled[] = {
      {a.send.slots ? a.send.head : nullptr, "send FIFO's head"},
      {a.send.slots ? a.send.ready : nullptr, "send FIFO's ready word"},
      {a.recv.slots ? a.recv.tail : nullptr, "receive FIFO's tail"}};
  for (auto [p, what] : polled)
    if (peer && p && peer(p)) {
      fprintf(stderr, "fake GPU: rank %d threadblock %d: its %s lies in a peer GPU's memory\n",
              a.rank, a.tb, what);
      abort();
    }
}

// A kernel touches its buffers, its peers' and the barrier: none may lie
// in VMM memory mapped without access for the device (cuMemSetAccess),
// which on a GPU faults. Here it would fault too, but without a word.
inline void checkAccess(const collc::Args &a) {
  using MayTouch = int (*)(const void *, size_t);
  static MayTouch mayTouch = fakeSymbol<MayTouch>("fakeCudaMayTouch");
  if (!mayTouch)
    return;
  std::vector<const void *> touched(a.buffers, a.buffers + collc::kMaxBuffers);
  touched.insert(touched.end(), a.multicast, a.multicast + collc::kMaxBuffers);
  if (a.peers)
    touched.insert(touched.end(), a.peers, a.peers + size_t(a.nranks) * collc::kMaxBuffers);
  touched.push_back(a.barrier);
  if (a.barrier)
    touched.insert(touched.end(), a.barriers, a.barriers + a.nranks);
  for (const void *p : touched)
    if (p && !mayTouch(p, 1)) {
      fprintf(stderr,
              "fake GPU: rank %d threadblock %d: a buffer at %p lies in VMM memory that is not "
              "mapped with access for the device (cuMemSetAccess)\n",
              a.rank, a.tb, p);
      abort();
    }
}

template <void (*K)(const collc::Args *)> struct Kernel {
  collc::DeviceLaunch l;
  void operator()() const {
    for (int32_t b = 0; b < l.blocks; ++b) {
      checkAccess(l.args[b]);
      checkMulticast(l.args[b]);
      checkFifos(l.args[b]);
    }
    std::vector<std::thread> blocks;
    for (int32_t b = 1; b < l.blocks; ++b)
      blocks.emplace_back(K, l.args + b);
    if (l.blocks > 0)
      K(l.args);
    for (std::thread &t : blocks)
      t.join();
  }
};

// A kernel that reports a timeout instead of running (its Args are on
// the device once the stream gets to it).
struct Failing {
  collc::DeviceLaunch l;
  void operator()() const {
    *l.args[0].error = collTimeout;
    strcpy(l.args[0].errorText, "rank 0 timed out (a fake kernel)");
  }
};

// CUDA's lazy loading: the first launch of a kernel that nothing loaded
// before waits for the whole device (the fake's hook aborts where that
// waits for a kernel that cannot end), as loading a module may.
template <void (*K)(const collc::Args *)> bool loaded = false;
inline bool divideLoaded = false;
inline void loadLazily(bool &done, const char *what) {
  using Load = void (*)(const char *);
  static Load lazy = fakeSymbol<Load>("fakeCudaLazyLoad");
  if (!done && lazy)
    lazy(what);
  done = true;
}
// Loading is no different when asked for: only earlier.
template <void (*K)(const collc::Args *)> const char *load() {
  loadLazily(loaded<K>, "loading a plan's kernels");
  loadLazily(divideLoaded, "loading avg's division");
  return nullptr;
}

template <void (*K)(const collc::Args *)> const char *launch(const collc::DeviceLaunch &l) {
  loadLazily(loaded<K>, "the first launch of a plan's kernel");
  if (failsNow()) // the launch itself succeeds: the kernel fails later
    return enqueue(l.stream, new Failing{l});
  return enqueue(l.stream, new Kernel<K>{l});
}

// avg's division, as the host build does it.
struct Divide {
  void *data;
  int64_t count;
  int32_t type, divisor;
  void operator()() const {
    collrt::dispatchType(collDataType_t(type), [&](auto tag) {
      using T = decltype(tag);
      T *p = static_cast<T *>(data);
      for (int64_t i = 0; i < count; ++i)
        p[i] = collrt::Arith<T>::div(p[i], divisor);
    });
  }
};

inline const char *divide(void *data, int64_t count, int32_t type, int32_t divisor, void *stream) {
  if (!collrt::dispatchType(collDataType_t(type), [](auto) {}))
    return "cudaErrorInvalidValue";
  loadLazily(divideLoaded, "the first launch of avg's division");
  return enqueue(stream, new Divide{data, count, type, divisor});
}

} // namespace collc_fake

#define COLLC_HOST_FN(name) nullptr
// Kernels per (type, op) too, which check that they run only launches of
// their pair (host.h's BlockOf).
#define COLLC_TYPED_KERNEL(name, ...)                                                              \
  COLLC_KERNEL(name) { __VA_ARGS__(COLLC_BLOCK_ARGS); }
#define COLLC_HOST_MULTICAST(mc, n, copies, max) ::collc_fake::multicastCopies(mc, n, copies, max)
#define COLLC_CUDA_FN(name)                                                                        \
  (::collc::CudaEntry{nullptr, &::collc_fake::launch<&name>, &::collc_fake::divide,                \
                      &::collc_fake::load<&name>})

#endif // COLLC_FAKEGPU_H
