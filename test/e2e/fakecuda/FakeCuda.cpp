//===- FakeCuda.cpp - The driver calls collrt makes, on host memory --------===//
//
// Loaded by collrt in place of libcuda (COLL_CUDA_LIBRARY) so that its GPU
// path runs where there is no GPU: "device" memory is host memory, VMM
// allocations are memfds (exported and imported as their descriptors, as
// POSIX-fd handles are). Only the calls CudaApi.h lists, and those a test
// needs to capture a launch into a graph and replay it. FAKE_CUDA_FAIL=NAME
// makes the call NAME fail with out-of-memory, so that tests see how
// collrt reports a failing call.
//
// VMM is as strict as CUDA's on a Hopper GPU: the granularity is 2 MiB,
// and cuMemCreate, cuMemAddressReserve and cuMemMap refuse sizes, offsets
// and addresses that are not multiples of it; cuMemMap maps only into a
// reserved range that nothing maps yet, and the mapping is inaccessible
// (PROT_NONE; copies and memsets into it fail, FakeGpu.h's kernels abort)
// until cuMemSetAccess opens it to a device; a kernel touches it only
// from a device it was opened to. An allocation is exported
// and imported only as a handle type it was created with
// (CUmemAllocationProp::requestedHandleTypes, which its memfd's name
// carries to importers).
//
// The device is asynchronous as CUDA defines it. Each stream has a thread
// that runs its work in order (kernels, copies, memsets, event records,
// waits on events, stream-ordered frees) while the host goes on; events
// and cuStreamQuery/cuEventQuery/cuStreamSynchronize/cuEventSynchronize/
// cuStreamWaitEvent answer as CUDA's do. The legacy (null) stream
// synchronises implicitly: its work waits for all work queued before it
// on the blocking streams (those made without CU_STREAM_NON_BLOCKING), and
// theirs for all queued before it on the legacy stream. A copy from
// pageable memory stages its source before returning; from pinned memory
// it reads the source when the stream gets there. The process is one
// context: cuCtxSynchronize, and cuMemAlloc and cuMemFree (which may
// synchronise the device; here they always do), wait for all of its work,
// so that a call of theirs while a kernel spins on a peer rank whose
// launch the caller would make next hangs, as on a GPU. So does a kernel's
// first launch unless its module was loaded before (FakeGpu.h's load), as
// CUDA's lazy loading may. Instead of
// hanging, such a call aborts the process after FAKE_CUDA_WAIT_LIMIT
// seconds (10), naming itself and the stream it waits for.
// cuMemAllocAsync and cuMemFreeAsync are stream-ordered and never wait.
// Not modelled: concurrency limits (every kernel of every stream runs at
// once, however many blocks), stream priorities, host functions, the
// implicit synchronisation of other calls (cuMemFreeHost, VMM unmapping),
// and which device a cuMemAlloc allocation is on (VMM memory says whom it
// is open to). Stream-ordered allocations inside a capture are refused,
// where CUDA would make them nodes of the graph. A stream and an
// event belong to the context current when they were made: a kernel
// launched on a stream of another context than the current one fails, as
// does recording an event on a stream of another context.
//
// As a real driver is used, the calls are found through cuGetProcAddress,
// the only one exported (with FakeGpu.h's hooks), which gives each call's
// version as of the CUDA version asked; FAKE_CUDA_VERSION (as 12020) makes
// the fake an older driver, without the calls that came later.
//
// FAKE_CUDA_MULTICAST=1 gives the device NVLink multicast. A multicast
// object is a memfd too, whose first page counts the devices added; as in
// CUDA, binding memory to it or mapping it waits until all have been (and
// here fails after 10 s). Each process has GPUs of its own, one or
// FAKE_CUDA_DEVICES, with primary contexts and a current one per thread
// (device 0's until a thread sets one); their PCI bus ids are made of the
// pid and the device's index (under FAKE_CUDA_SHARED_GPU=1 every process
// reports the same ones, as ranks sharing GPUs), so ranks as processes, or
// as threads on devices of their own, may bind one object. Peers' GPUs are visible and
// peer-accessible unless FAKE_CUDA_NO_PEER_ACCESS=1, where cuDeviceCanAccessPeer says 0 and
// cuMemSetAccess refuses to open another process's allocation, as CUDA
// refuses a peer GPU's memory without peer access. A process maps
// the object as the memory it bound: a plain access through the object
// aliases the same offset of this rank's memory, which FakeGpu.h checks of
// every Args::multicast. The kernels' multimem steps go through the object
// as a switch would (fakeCudaMulticastCopies): a load reduces over every
// memory bound to it, a store reaches each.
//
// FAKE_CUDA_FABRIC=1 gives it fabric handles (multi-node NVLink): a
// handle holds the exporter's pid and descriptor, which an importer opens
// through /proc, as any process of the NVLink domain imports a fabric
// handle; processes on "different machines" share one kernel here.
//
// Capture records what a stream is given (copies, memsets, and kernels
// through fakeCudaLaunch) and a graph launch queues it again; graphs hold
// user objects as CUDA's do, released once their launches have run. As CUDA does in its default
// (global) mode, a capture forbids allocations and synchronisation, on every thread that has not
// switched to relaxed mode; and work on the legacy stream while a blocking stream captures fails
// and invalidates that capture, in any mode. An event recorded in a
// capture cannot be queried or waited for on the host, and no stream waits
// on an event across a capture's boundary (which invalidates it).
//
//===----------------------------------------------------------------------===//
#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <vector>

namespace {
void *at(CUdeviceptr p) { return reinterpret_cast<void *>(uintptr_t(p)); }
CUdeviceptr of(const void *p) { return CUdeviceptr(reinterpret_cast<uintptr_t>(p)); }
// A VMM handle is a descriptor of its own, plus one (0 is no handle).
int fdOf(CUmemGenericAllocationHandle h) { return int(h) - 1; }
int fabric() {
  const char *f = getenv("FAKE_CUDA_FABRIC");
  return f && !strcmp(f, "1");
}
// FAKE_CUDA_DEVICES=N: the GPUs of this process (1 to 16, default 1).
int deviceCount() {
  const char *n = getenv("FAKE_CUDA_DEVICES");
  const int v = n ? atoi(n) : 1;
  return v >= 1 && v <= 16 ? v : 1;
}
// What the bus ids of this process's GPUs are made of: its pid, or 1 for
// every process under FAKE_CUDA_SHARED_GPU=1.
unsigned gpuOwner() {
  const char *shared = getenv("FAKE_CUDA_SHARED_GPU");
  return shared && !strcmp(shared, "1") ? 1u : unsigned(getpid());
}
// A device's primary context, and back (-1: none of ours).
thread_local int currentDevice = 0;
CUcontext contextOf(int d) { return reinterpret_cast<CUcontext>(uintptr_t(d + 1) << 4); }
int deviceOf(CUcontext c) {
  const uintptr_t v = reinterpret_cast<uintptr_t>(c);
  const int d = int(v >> 4) - 1;
  return v % 16 == 0 && d >= 0 && d < deviceCount() ? d : -1;
}
bool peerAccess() {
  const char *no = getenv("FAKE_CUDA_NO_PEER_ACCESS");
  return !no || strcmp(no, "1");
}
bool failing(const char *call) {
  const char *which = getenv("FAKE_CUDA_FAIL");
  return which && !strcmp(which, call);
}

// CUDA's VMM rules with a Hopper GPU's numbers: device memory comes in
// 2 MiB pages (its minimum and recommended granularity alike), and so do
// a multicast object's bindings, best in 512 MiB ones.
constexpr size_t kGranularity = size_t(2) << 20;
constexpr size_t kMulticastGranularity = kGranularity, kMulticastRecommended = size_t(512) << 20;

// A VMM allocation or multicast object is a memfd named for the handle
// types it may be exported as ("fake-cuda-vmm-1": POSIX descriptors), so
// that they travel with it to every process that imports it.
std::string nameFor(const char *kind, unsigned types) {
  return std::string("fake-cuda-") + kind + "-" + std::to_string(types);
}
// The handle types the allocation or object of `fd` may be exported as;
// -1 where it is none of this driver's.
int exportableAs(int fd) {
  char link[256];
  ssize_t n = readlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), link, sizeof link - 1);
  if (n <= 0)
    return -1;
  link[n] = 0;
  const char *name = strstr(link, "/memfd:fake-cuda-");
  unsigned types = 0;
  return name && sscanf(name, "/memfd:fake-cuda-%*[a-z]-%u", &types) == 1 ? int(types) : -1;
}
// Whether this device can make memory exportable as `types`: descriptors,
// and fabric handles where it offers them (Windows' handles never).
CUresult offered(unsigned types) {
  if (types & ~unsigned(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC))
    return CUDA_ERROR_NOT_SUPPORTED;
  return (types & CU_MEM_HANDLE_TYPE_FABRIC) && !fabric() ? CUDA_ERROR_NOT_SUPPORTED : CUDA_SUCCESS;
}

// A multicast object: its memfd's first page, then what it maps. The
// page lists every device's binding (its process, the memory's memfd there
// and where in it), so that any process can find each bound memory.
constexpr size_t kMulticastHeader = 4096;
constexpr int kMaxBindings = 64;
struct Binding {
  std::atomic<int32_t> pid; // written last; 0 until bound, and once unbound
  int32_t fd;
  uint64_t inode, offset, size;
};
struct MulticastHeader {
  std::atomic<uint32_t> devices, added;
  uint64_t size;
  std::atomic<uint32_t> bindings;
  Binding binding[kMaxBindings];
};
static_assert(sizeof(MulticastHeader) <= kMulticastHeader);
bool isMulticast(CUmemGenericAllocationHandle h) {
  char link[256];
  ssize_t n = readlink(("/proc/self/fd/" + std::to_string(fdOf(h))).c_str(), link, sizeof link - 1);
  return n > 0 && std::string(link, size_t(n)).find("fake-cuda-multicast") != std::string::npos;
}
// The object's header, mapped for the caller (munmap it after).
MulticastHeader *headerOf(CUmemGenericAllocationHandle h) {
  void *p = mmap(nullptr, kMulticastHeader, PROT_READ | PROT_WRITE, MAP_SHARED, fdOf(h), 0);
  return p == MAP_FAILED ? nullptr : static_cast<MulticastHeader *>(p);
}
// Per multicast object (its memfd's inode): the memory this process bound,
// and its entry in the object's list.
struct Bound {
  int fd; // a dup
  size_t offset;
  int entry;
};
std::mutex bindings;
std::map<ino_t, Bound> bound;
ino_t inodeOf(CUmemGenericAllocationHandle h) {
  struct stat st;
  return fstat(fdOf(h), &st) ? 0 : st.st_ino;
}

// What "the GPU" may touch: device allocations, VMM mappings and host
// memory allocated or registered for it, by start address.
std::mutex reachMutex;
std::map<uintptr_t, size_t> reachable;
void reach(const void *p, size_t n) {
  std::lock_guard<std::mutex> lock(reachMutex);
  reachable[reinterpret_cast<uintptr_t>(p)] = n;
}
void unreach(const void *p) {
  std::lock_guard<std::mutex> lock(reachMutex);
  reachable.erase(reinterpret_cast<uintptr_t>(p));
}
bool gpuReaches(const void *p, size_t n) {
  const uintptr_t x = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(reachMutex);
  auto it = reachable.upper_bound(x);
  if (it == reachable.begin())
    return false;
  --it;
  return x + n <= it->first + it->second;
}

// The address space of VMM: the ranges reserved (cuMemAddressReserve) and
// in them the mappings (cuMemMap), each inaccessible, as CUDA makes them,
// until cuMemSetAccess opens it to the device. Here an inaccessible
// mapping is PROT_NONE, so that a kernel touching it faults, and copies
// and memsets into it are refused.
struct Mapping {
  size_t size;
  bool open;
  bool peer;            // another process's allocation: another GPU's memory
  uint32_t devices = 0; // those cuMemSetAccess opened it to, a bit each
  int prot = PROT_NONE; // the widest access of those
};
// The allocations this process made (their memfds' inodes): what it maps
// of any other is a peer GPU's memory.
std::set<ino_t> created;
std::mutex vmmMutex;
std::map<uintptr_t, size_t> reservations; // by start
std::map<uintptr_t, Mapping> mappings;    // by start
// The mappings of multicast objects: the object's header (mapped) and the
// offset in it, so that loads and stores through it reach every binding.
struct MulticastMap {
  size_t size;
  MulticastHeader *header;
  size_t offset;
};
std::map<uintptr_t, MulticastMap> multicastMaps; // by start

// With vmmMutex held: whether one reservation holds [p, p + n).
bool reserved(uintptr_t p, size_t n) {
  auto it = reservations.upper_bound(p);
  return it != reservations.begin() && p + n <= std::prev(it)->first + std::prev(it)->second;
}
// With vmmMutex held: whether any mapping overlaps [p, p + n).
bool mapped(uintptr_t p, size_t n) {
  auto it = mappings.upper_bound(p);
  if (it != mappings.begin() && std::prev(it)->first + std::prev(it)->second.size > p)
    return true;
  return it != mappings.end() && it->first < p + n;
}
// With vmmMutex held: the starts of the mappings that tile [p, p + n)
// exactly, or none where they do not.
std::vector<uintptr_t> tiling(uintptr_t p, size_t n) {
  std::vector<uintptr_t> tiles;
  uintptr_t x = p;
  for (auto it = mappings.find(p); n && x < p + n; ++it) {
    if (it == mappings.end() || it->first != x)
      return {};
    tiles.push_back(x);
    x += it->second.size;
  }
  return x == p + n ? tiles : std::vector<uintptr_t>{};
}
// Whether `device` (any, where -1) may touch [p, p + n) as VMM has it:
// outside every reservation it is not VMM's to say; inside, only through
// mappings that cuMemSetAccess opened to it.
bool vmmAllows(const void *ptr, size_t n, int device = -1) {
  const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(vmmMutex);
  auto r = reservations.upper_bound(p + n - 1);
  const bool touches =
      n && r != reservations.begin() && std::prev(r)->first + std::prev(r)->second > p;
  if (!touches)
    return true;
  for (uintptr_t x = p; x < p + n;) {
    auto m = mappings.upper_bound(x);
    if (m == mappings.begin())
      return false;
    --m;
    if (!m->second.open || m->first + m->second.size <= x ||
        (device >= 0 && !(m->second.devices >> device & 1)))
      return false;
    x = m->first + m->second.size;
  }
  return true;
}
// A copy or memset through memory that VMM keeps from the device fails,
// saying so.
bool refused(const char *call, CUdeviceptr p, size_t n) {
  if (vmmAllows(at(p), n))
    return false;
  fprintf(stderr,
          "fake cuda: %s: [%p, +%zu) is reserved address space that is not mapped, or mapped "
          "without access for the device (cuMemSetAccess)\n",
          call, at(p), n);
  return true;
}

// Waits, as CUDA does, until every device of the object is added.
CUresult allAdded(CUmemGenericAllocationHandle h, uint64_t &size) {
  MulticastHeader *m = headerOf(h);
  if (!m)
    return CUDA_ERROR_INVALID_VALUE;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (m->added.load() < m->devices.load() && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const bool all = m->added.load() == m->devices.load();
  size = m->size;
  munmap(m, kMulticastHeader);
  return all ? CUDA_SUCCESS : CUDA_ERROR_ILLEGAL_STATE;
}

struct UserObject {
  void *ptr;
  CUhostFn destroy;
  unsigned refs;
};
void release(UserObject *o, unsigned n) {
  if ((o->refs -= n) == 0) {
    o->destroy(o->ptr);
    delete o;
  }
}

// The device's queues: a thread per stream runs its work in order, as
// the GPU would, so that work overlaps the host and other streams.
struct Stream;
// A point in a stream's queue: reached once its first `seq` operations ran.
struct Mark {
  Stream *stream = nullptr;
  uint64_t seq = 0;
};
struct Op {
  std::function<void()> run;
  bool kernel = false;
  std::vector<Mark> after; // what must be reached before it starts
  int device = 0;          // that runs it
};
// The device whose work the calling thread runs (a stream's), or -1.
thread_local int runningDevice = -1;
struct Stream {
  unsigned flags = 0;
  bool legacy = false;
  int device = 0; // whose context was current at its creation
  std::deque<Op> queue;
  uint64_t queued = 0, done = 0;
  bool kernelRunning = false;
  bool closing = false; // destroyed: the thread ends once the queue is empty
};
// Every stream and the lock over all their queues. Never destroyed, as the
// streams are not: their threads may still run while the process exits.
struct Device {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<Stream *> streams;
  Stream *legacy = nullptr;
};
Device &device() {
  static Device *d = new Device;
  return *d;
}
bool reached(const Mark &m) { return !m.stream || m.stream->done >= m.seq; }

void work(Stream *s) {
  Device &d = device();
  std::unique_lock<std::mutex> lock(d.mutex);
  for (;;) {
    d.changed.wait(lock, [&] {
      return s->queue.empty() ? s->closing
                              : std::all_of(s->queue.front().after.begin(),
                                            s->queue.front().after.end(), reached);
    });
    if (s->queue.empty())
      return;
    Op op = std::move(s->queue.front());
    s->queue.pop_front();
    s->kernelRunning = op.kernel;
    lock.unlock();
    runningDevice = op.device;
    op.run();
    op.run = nullptr; // what it holds goes now, outside the lock
    lock.lock();
    s->kernelRunning = false;
    ++s->done;
    d.changed.notify_all();
  }
}

// With the device's lock held.
Stream *newStream(unsigned flags, bool legacy) {
  auto *s = new Stream;
  s->flags = flags;
  s->legacy = legacy;
  s->device = currentDevice;
  device().streams.push_back(s);
  std::thread(work, s).detach();
  return s;
}
// The stream a handle names: null (and CU_STREAM_LEGACY) is the legacy
// stream, and so is the per-thread default stream here.
Stream *streamOf(CUstream h) {
  if (h && h != CU_STREAM_LEGACY && h != CU_STREAM_PER_THREAD)
    return reinterpret_cast<Stream *>(h);
  Device &d = device();
  std::lock_guard<std::mutex> lock(d.mutex);
  if (!d.legacy)
    d.legacy = newStream(0, true);
  return d.legacy;
}
// Whether `h` is a stream of device `d`'s context; the legacy stream is
// every context's.
bool inContext(CUstream h, int d) {
  Stream *s = streamOf(h);
  return s->legacy || s->device == d;
}
// With the device's lock held: where the stream's queue ends now.
Mark tail(Stream *s) { return {s, s->queued}; }

// Queues `run` on `s` after `after`, and, as CUDA's legacy stream does,
// work on the legacy stream after all work queued so far on the blocking
// streams (those made without CU_STREAM_NON_BLOCKING), and work on those
// after all work queued so far on the legacy stream.
Mark submit(Stream *s, std::function<void()> run, bool kernel, std::vector<Mark> after = {}) {
  Device &d = device();
  std::lock_guard<std::mutex> lock(d.mutex);
  if (s->legacy) {
    for (Stream *o : d.streams)
      if (!o->legacy && !(o->flags & CU_STREAM_NON_BLOCKING) && o->queued > o->done)
        after.push_back(tail(o));
  } else if (!(s->flags & CU_STREAM_NON_BLOCKING) && d.legacy &&
             d.legacy->queued > d.legacy->done) {
    after.push_back(tail(d.legacy));
  }
  s->queue.push_back(
      Op{std::move(run), kernel, std::move(after), s->legacy ? currentDevice : s->device});
  d.changed.notify_all();
  return {s, ++s->queued};
}

// How long a call that waits for the whole context may wait: longer, and
// it waits for work that will not end (FAKE_CUDA_WAIT_LIMIT, seconds).
std::chrono::milliseconds waitLimit() {
  const char *v = getenv("FAKE_CUDA_WAIT_LIMIT");
  return std::chrono::milliseconds(int64_t((v && *v ? atof(v) : 10.0) * 1000));
}

// Where every queue of the context ends now.
std::vector<Mark> everything() {
  Device &d = device();
  std::lock_guard<std::mutex> lock(d.mutex);
  std::vector<Mark> marks;
  for (Stream *s : d.streams)
    if (s->queued > s->done)
      marks.push_back(tail(s));
  return marks;
}

// Waits until every mark is reached. A call that waits for the whole
// context (`call`) gives up after waitLimit(), naming itself and what it
// waits for, and aborts: on a GPU it would hang, where a kernel spins on
// a peer whose work this thread was to queue next.
void waitFor(const std::vector<Mark> &marks, const char *call = nullptr) {
  Device &d = device();
  std::unique_lock<std::mutex> lock(d.mutex);
  auto all = [&] { return std::all_of(marks.begin(), marks.end(), reached); };
  if (!call) {
    d.changed.wait(lock, all);
    return;
  }
  if (d.changed.wait_for(lock, waitLimit(), all))
    return;
  for (const Mark &m : marks)
    if (!reached(m)) {
      char stream[64];
      if (m.stream->legacy)
        snprintf(stream, sizeof stream, "the legacy stream");
      else
        snprintf(stream, sizeof stream, "stream %p", static_cast<void *>(m.stream));
      fprintf(stderr,
              "fake cuda: %s would wait for %s on %s: it waits for all work of the context, "
              "which has not ended in %.1f s (on a GPU this hangs where that kernel waits for "
              "work the caller would queue next)\n",
              call,
              m.stream->kernelRunning ? "a kernel that is still running" : "work still queued",
              stream, double(waitLimit().count()) / 1000);
      abort();
    }
}

// A graph's step: what it runs, and whether it is a kernel.
struct Step {
  std::function<void()> run;
  bool kernel = false;
};
// A graph and an executable graph alike: what a launch runs, and the user
// objects it holds a reference to.
using Ops = std::vector<Step>;
struct Graph {
  std::shared_ptr<Ops> ops = std::make_shared<Ops>();
  std::vector<UserObject *> objects; // one reference each
  std::vector<Mark> launched;        // where its latest launch on each stream ends
  ~Graph() {
    for (UserObject *o : objects)
      release(o, 1);
  }
};

std::mutex mutex; // guards captures
std::map<CUstream, Graph *> captures;
cuuint64_t captureIds = 0;
thread_local CUstreamCaptureMode threadMode = CU_STREAM_CAPTURE_MODE_GLOBAL;

std::map<Graph *, bool> invalidated; // captures that a legacy-stream call broke

bool capturing(CUstream s) {
  std::lock_guard<std::mutex> lock(mutex);
  return captures.count(s) != 0;
}

// Whether work on the legacy stream (a synchronous memset or copy, or a
// null stream) is illegal now: as CUDA does, it is where a blocking stream
// (one made without CU_STREAM_NON_BLOCKING) is capturing, since the legacy
// stream would synchronise with it; and it invalidates that capture.
bool legacyClash() {
  std::lock_guard<std::mutex> lock(mutex);
  bool clash = false;
  for (auto &[stream, graph] : captures)
    if (!(reinterpret_cast<Stream *>(stream)->flags & CU_STREAM_NON_BLOCKING)) {
      invalidated[graph] = true;
      clash = true;
    }
  return clash;
}

// Whether a call that may synchronise is forbidden on this thread now.
bool forbidden() {
  std::lock_guard<std::mutex> lock(mutex);
  return !captures.empty() && threadMode != CU_STREAM_CAPTURE_MODE_RELAXED;
}

// Queues `op` on `s`, or records it where `s` is capturing (a null mark).
Mark enqueue(CUstream s, std::function<void()> op, bool kernel = false) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = captures.find(s);
    if (it != captures.end()) {
      it->second->ops->push_back(Step{std::move(op), kernel});
      return {};
    }
  }
  return submit(streamOf(s), std::move(op), kernel);
}
// The driver version the fake claims: FAKE_CUDA_VERSION (as 12020), else
// that of the headers it is built with.
int driverVersion() {
  const char *v = getenv("FAKE_CUDA_VERSION");
  return v && *v ? atoi(v) : CUDA_VERSION;
}
} // namespace

// Only cuGetProcAddress and the hooks of FakeGpu.h are exported, so that
// every other call must be found as collrt finds it on a real driver.
#pragma GCC visibility push(hidden)
extern "C" {

CUresult cuInit(unsigned int) { return CUDA_SUCCESS; }
CUresult cuGetErrorName(CUresult r, const char **name) {
  *name = r == CUDA_ERROR_OUT_OF_MEMORY                ? "CUDA_ERROR_OUT_OF_MEMORY"
          : r == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED ? "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"
          : r == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT    ? "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT"
          : r == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED ? "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"
          : r == CUDA_ERROR_STREAM_CAPTURE_ISOLATION   ? "CUDA_ERROR_STREAM_CAPTURE_ISOLATION"
          : r == CUDA_ERROR_CAPTURED_EVENT             ? "CUDA_ERROR_CAPTURED_EVENT"
          : r == CUDA_ERROR_INVALID_VALUE              ? "CUDA_ERROR_INVALID_VALUE"
          : r == CUDA_ERROR_INVALID_DEVICE             ? "CUDA_ERROR_INVALID_DEVICE"
          : r == CUDA_ERROR_INVALID_CONTEXT            ? "CUDA_ERROR_INVALID_CONTEXT"
          : r == CUDA_ERROR_NOT_SUPPORTED              ? "CUDA_ERROR_NOT_SUPPORTED"
          : r == CUDA_ERROR_ILLEGAL_STATE              ? "CUDA_ERROR_ILLEGAL_STATE"
                                                       : "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}
CUresult cuDriverGetVersion(int *v) {
  *v = driverVersion();
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetCount(int *n) {
  *n = deviceCount();
  return CUDA_SUCCESS;
}
CUresult cuDeviceGet(CUdevice *d, int ordinal) {
  if (!d || ordinal < 0 || ordinal >= deviceCount())
    return CUDA_ERROR_INVALID_DEVICE;
  *d = ordinal;
  return CUDA_SUCCESS;
}
// Each device's primary context; a thread's current context is its
// device's (device 0's where the thread made none current).
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
  if (!c || d < 0 || d >= deviceCount())
    return CUDA_ERROR_INVALID_DEVICE;
  *c = contextOf(d);
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease(CUdevice d) {
  return d < 0 || d >= deviceCount() ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(CUcontext c) {
  const int d = c ? deviceOf(c) : 0;
  if (d < 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  currentDevice = d;
  return CUDA_SUCCESS;
}
CUresult cuCtxGetCurrent(CUcontext *c) {
  if (!c)
    return CUDA_ERROR_INVALID_VALUE;
  *c = contextOf(currentDevice);
  return CUDA_SUCCESS;
}
CUresult cuCtxGetDevice(CUdevice *d) {
  *d = currentDevice;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
  if (d < 0 || d >= deviceCount())
    return CUDA_ERROR_INVALID_DEVICE;
  const char *multicast = getenv("FAKE_CUDA_MULTICAST");
  const unsigned owner = gpuOwner();
  *v = a == CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED ? multicast && !strcmp(multicast, "1")
       : a == CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID     ? int((owner >> 8) & 0xffff)
       : a == CU_DEVICE_ATTRIBUTE_PCI_BUS_ID        ? int(owner & 0xff)
       : a == CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID     ? int(d)
       : a == CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM ? 1
       : a == CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED            ? fabric()
                                                                          : 0;
  return CUDA_SUCCESS;
}
// The process's GPUs are devices 0 to FAKE_CUDA_DEVICES - 1, their bus
// ids made of its pid and their index (the pid is 1 for every process
// under FAKE_CUDA_SHARED_GPU=1: ranks on the same GPUs). Every other GPU,
// found by its bus id, is device FAKE_CUDA_DEVICES here.
CUresult cuDeviceGetPCIBusId(char *id, int len, CUdevice d) {
  if (!id || len < 13 || d < 0 || d >= deviceCount())
    return CUDA_ERROR_INVALID_VALUE;
  const unsigned owner = gpuOwner();
  snprintf(id, size_t(len), "%04x:%02x:%02x.0", (owner >> 8) & 0xffff, owner & 0xff,
           unsigned(d) & 0x1f);
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetByPCIBusId(CUdevice *d, const char *id) {
  char mine[16];
  unsigned domain, bus;
  if (!d || !id || sscanf(id, "%x:%x:", &domain, &bus) != 2)
    return CUDA_ERROR_INVALID_VALUE;
  *d = deviceCount();
  for (int k = 0; k < deviceCount(); ++k)
    if (cuDeviceGetPCIBusId(mine, sizeof mine, k) == CUDA_SUCCESS && !strcasecmp(id, mine))
      *d = k;
  return CUDA_SUCCESS;
}
// As CUDA: a device has no peer access to itself; to others unless
// FAKE_CUDA_NO_PEER_ACCESS=1 (PCIe without P2P, MIG, a VM).
CUresult cuDeviceCanAccessPeer(int *v, CUdevice d, CUdevice peer) {
  const int n = deviceCount();
  if (!v || d < 0 || d > n || peer < 0 || peer > n)
    return CUDA_ERROR_INVALID_DEVICE;
  *v = d != peer && peerAccess();
  return CUDA_SUCCESS;
}

CUresult cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *prop,
                                       CUmemAllocationGranularity_flags option) {
  if (!g || !prop || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
      (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
       option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
    return CUDA_ERROR_INVALID_VALUE;
  *g = kGranularity;
  return CUDA_SUCCESS;
}
CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t size, const CUmemAllocationProp *prop,
                     unsigned long long flags) {
  if (forbidden())
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (failing("cuMemCreate"))
    return CUDA_ERROR_OUT_OF_MEMORY;
  if (!prop || flags || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
      prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE || !size || size % kGranularity)
    return CUDA_ERROR_INVALID_VALUE;
  if (prop->location.id < 0 || prop->location.id >= deviceCount())
    return CUDA_ERROR_INVALID_DEVICE;
  if (CUresult r = offered(prop->requestedHandleTypes))
    return r;
  int fd = memfd_create(nameFor("vmm", prop->requestedHandleTypes).c_str(), MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, off_t(size)))
    return CUDA_ERROR_OUT_OF_MEMORY;
  *h = CUmemGenericAllocationHandle(fd + 1);
  std::lock_guard<std::mutex> lock(vmmMutex);
  created.insert(inodeOf(*h));
  return CUDA_SUCCESS;
}
CUresult cuMemRelease(CUmemGenericAllocationHandle h) {
  close(fdOf(h));
  return CUDA_SUCCESS;
}
// Only as a type that the allocation (or multicast object) was made
// exportable as.
CUresult cuMemExportToShareableHandle(void *out, CUmemGenericAllocationHandle h,
                                      CUmemAllocationHandleType type, unsigned long long flags) {
  const int types = exportableAs(fdOf(h));
  if (!out || flags || types < 0 ||
      (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR && type != CU_MEM_HANDLE_TYPE_FABRIC) ||
      !(unsigned(types) & type))
    return CUDA_ERROR_INVALID_VALUE;
  if (type == CU_MEM_HANDLE_TYPE_FABRIC) {
    CUmemFabricHandle handle{};
    const int owner[2] = {int(getpid()), fdOf(h)};
    memcpy(handle.data, owner, sizeof owner);
    memcpy(out, &handle, sizeof handle);
    return CUDA_SUCCESS;
  }
  *static_cast<int *>(out) = dup(fdOf(h));
  return CUDA_SUCCESS;
}
// Only what was exported as `type`: an allocation of this driver that its
// creator made exportable as that type.
CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *h, void *os,
                                        CUmemAllocationHandleType type) {
  int fd = -1;
  if (type == CU_MEM_HANDLE_TYPE_FABRIC) {
    if (!fabric())
      return CUDA_ERROR_NOT_SUPPORTED;
    int owner[2];
    memcpy(owner, static_cast<const CUmemFabricHandle *>(os)->data, sizeof owner);
    const std::string path =
        "/proc/" + std::to_string(owner[0]) + "/fd/" + std::to_string(owner[1]);
    fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  } else if (type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
    fd = fcntl(int(reinterpret_cast<intptr_t>(os)), F_DUPFD_CLOEXEC, 0);
  }
  if (fd < 0)
    return CUDA_ERROR_INVALID_VALUE;
  const int types = exportableAs(fd);
  if (types < 0 || !(unsigned(types) & type)) {
    close(fd);
    return CUDA_ERROR_INVALID_VALUE;
  }
  *h = CUmemGenericAllocationHandle(fd + 1);
  return CUDA_SUCCESS;
}
// Ranges in multiples of the allocation granularity only, at an address
// aligned to it (or to `alignment`, a power of two, where larger). CUDA's
// docs ask only for multiples of the host page here; the fake asks for
// what cuMemMap needs of every range it maps, so that collrt relies on
// no driver's leniency.
CUresult cuMemAddressReserve(CUdeviceptr *p, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags) {
  if (!p || !size || size % kGranularity || addr % kGranularity || (alignment & (alignment - 1)) ||
      flags)
    return CUDA_ERROR_INVALID_VALUE;
  const size_t align = std::max(alignment, kGranularity);
  void *r =
      mmap(nullptr, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (r == MAP_FAILED)
    return CUDA_ERROR_OUT_OF_MEMORY;
  const uintptr_t from = reinterpret_cast<uintptr_t>(r), to = from + size + align;
  const uintptr_t start = (from + align - 1) & ~(align - 1), end = start + size;
  if (start > from)
    munmap(r, start - from);
  if (to > end)
    munmap(reinterpret_cast<void *>(end), to - end);
  std::lock_guard<std::mutex> lock(vmmMutex);
  reservations[start] = size;
  *p = CUdeviceptr(start);
  return CUDA_SUCCESS;
}
// Only a whole reservation, as it was made; what is still mapped in it
// goes with it.
CUresult cuMemAddressFree(CUdeviceptr p, size_t size) {
  std::lock_guard<std::mutex> lock(vmmMutex);
  auto it = reservations.find(uintptr_t(p));
  if (it == reservations.end() || it->second != size)
    return CUDA_ERROR_INVALID_VALUE;
  reservations.erase(it);
  for (auto m = mappings.lower_bound(uintptr_t(p)); m != mappings.end() && m->first < p + size;) {
    unreach(at(m->first));
    auto mc = multicastMaps.find(m->first);
    if (mc != multicastMaps.end()) {
      munmap(mc->second.header, kMulticastHeader);
      multicastMaps.erase(mc);
    }
    m = mappings.erase(m);
  }
  munmap(at(p), size);
  return CUDA_SUCCESS;
}
// Into a reserved range that nothing maps yet, at offsets, addresses and
// sizes of the granularity; the mapping is inaccessible until
// cuMemSetAccess.
CUresult cuMemMap(CUdeviceptr p, size_t size, size_t offset, CUmemGenericAllocationHandle h,
                  unsigned long long flags) {
  if (flags || !size || p % kGranularity || size % kGranularity || offset % kGranularity)
    return CUDA_ERROR_INVALID_VALUE;
  int fd = fdOf(h);
  size_t from = offset;
  std::unique_lock<std::mutex> bindingLock(bindings, std::defer_lock);
  if (isMulticast(h)) {
    uint64_t objectSize = 0;
    if (CUresult r = allAdded(h, objectSize))
      return r;
    if (offset + size > objectSize)
      return CUDA_ERROR_INVALID_VALUE;
    bindingLock.lock();
    auto it = bound.find(inodeOf(h));
    if (it == bound.end())
      return CUDA_ERROR_INVALID_VALUE; // nothing bound here to show
    fd = it->second.fd;
    from = it->second.offset + offset;
  } else {
    struct stat st;
    if (fstat(fd, &st) || offset + size > size_t(st.st_size))
      return CUDA_ERROR_INVALID_VALUE;
  }
  std::lock_guard<std::mutex> lock(vmmMutex);
  if (!reserved(p, size) || mapped(p, size))
    return CUDA_ERROR_INVALID_VALUE;
  if (mmap(at(p), size, PROT_NONE, MAP_SHARED | MAP_FIXED, fd, off_t(from)) == MAP_FAILED)
    return CUDA_ERROR_INVALID_VALUE;
  mappings[uintptr_t(p)] = Mapping{size, false, !isMulticast(h) && !created.count(inodeOf(h))};
  if (isMulticast(h))
    multicastMaps[uintptr_t(p)] = MulticastMap{size, headerOf(h), offset};
  return CUDA_SUCCESS;
}
// Whole mappings only.
CUresult cuMemUnmap(CUdeviceptr p, size_t size) {
  std::lock_guard<std::mutex> lock(vmmMutex);
  const std::vector<uintptr_t> tiles = tiling(p, size);
  if (tiles.empty())
    return CUDA_ERROR_INVALID_VALUE;
  for (uintptr_t t : tiles) {
    unreach(at(t));
    mappings.erase(t);
    auto m = multicastMaps.find(t);
    if (m != multicastMaps.end()) {
      munmap(m->second.header, kMulticastHeader);
      multicastMaps.erase(m);
    }
  }
  void *r =
      mmap(at(p), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
  return r == MAP_FAILED ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
// For this device (0, the only one), over whole mappings.
CUresult cuMemSetAccess(CUdeviceptr p, size_t size, const CUmemAccessDesc *desc, size_t count) {
  if (!desc || !count)
    return CUDA_ERROR_INVALID_VALUE;
  // Each descriptor sets one device's access; the host's protection is
  // the widest any device has.
  int prot = PROT_NONE;
  uint32_t grant = 0, deny = 0;
  for (size_t i = 0; i < count; ++i) {
    if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE)
      return CUDA_ERROR_INVALID_VALUE;
    if (desc[i].location.id < 0 || desc[i].location.id >= deviceCount())
      return CUDA_ERROR_INVALID_DEVICE;
    const uint32_t bit = uint32_t(1) << desc[i].location.id;
    switch (desc[i].flags) {
    case CU_MEM_ACCESS_FLAGS_PROT_NONE:
      deny |= bit;
      break;
    case CU_MEM_ACCESS_FLAGS_PROT_READ:
      grant |= bit;
      prot |= PROT_READ;
      break;
    case CU_MEM_ACCESS_FLAGS_PROT_READWRITE:
      grant |= bit;
      prot |= PROT_READ | PROT_WRITE;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  std::lock_guard<std::mutex> lock(vmmMutex);
  const std::vector<uintptr_t> tiles = tiling(p, size);
  if (tiles.empty())
    return CUDA_ERROR_INVALID_VALUE;
  // A peer GPU's memory only with peer access to it.
  for (uintptr_t t : tiles)
    if (mappings[t].peer && prot != PROT_NONE && !peerAccess())
      return CUDA_ERROR_INVALID_DEVICE;
  for (uintptr_t t : tiles) {
    Mapping &m = mappings[t];
    m.devices = (m.devices | grant) & ~deny;
    m.prot = m.devices ? m.prot | prot : PROT_NONE;
    if (mprotect(at(t), m.size, m.prot))
      return CUDA_ERROR_INVALID_VALUE;
    m.open = m.devices != 0;
    if (m.open)
      reach(at(t), m.size);
    else
      unreach(at(t));
  }
  return CUDA_SUCCESS;
}

CUresult cuMulticastGetGranularity(size_t *g, const CUmulticastObjectProp *prop,
                                   CUmulticastGranularity_flags option) {
  if (!g || !prop ||
      (option != CU_MULTICAST_GRANULARITY_MINIMUM &&
       option != CU_MULTICAST_GRANULARITY_RECOMMENDED))
    return CUDA_ERROR_INVALID_VALUE;
  *g = option == CU_MULTICAST_GRANULARITY_MINIMUM ? kMulticastGranularity : kMulticastRecommended;
  return CUDA_SUCCESS;
}
CUresult cuMulticastCreate(CUmemGenericAllocationHandle *h, const CUmulticastObjectProp *prop) {
  if (failing("cuMulticastCreate"))
    return CUDA_ERROR_OUT_OF_MEMORY;
  if (!prop->numDevices || !prop->size || prop->size % kMulticastGranularity)
    return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = offered(unsigned(prop->handleTypes)))
    return r;
  int fd = memfd_create(nameFor("multicast", unsigned(prop->handleTypes)).c_str(), MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, off_t(kMulticastHeader + prop->size)))
    return CUDA_ERROR_OUT_OF_MEMORY;
  *h = CUmemGenericAllocationHandle(fd + 1);
  MulticastHeader *m = headerOf(*h);
  m->devices = prop->numDevices;
  m->size = prop->size;
  munmap(m, kMulticastHeader);
  return CUDA_SUCCESS;
}
CUresult cuMulticastAddDevice(CUmemGenericAllocationHandle h, CUdevice) {
  if (failing("cuMulticastAddDevice"))
    return CUDA_ERROR_OUT_OF_MEMORY;
  MulticastHeader *m = isMulticast(h) ? headerOf(h) : nullptr;
  if (!m)
    return CUDA_ERROR_INVALID_VALUE;
  const bool fits = ++m->added <= m->devices.load();
  munmap(m, kMulticastHeader);
  return fits ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}
CUresult cuMulticastBindMem(CUmemGenericAllocationHandle h, size_t mcOffset,
                            CUmemGenericAllocationHandle memory, size_t memOffset, size_t size,
                            unsigned long long) {
  if (failing("cuMulticastBindMem"))
    return CUDA_ERROR_OUT_OF_MEMORY;
  if (!isMulticast(h) || isMulticast(memory))
    return CUDA_ERROR_INVALID_VALUE;
  uint64_t objectSize = 0;
  if (CUresult r = allAdded(h, objectSize))
    return r;
  struct stat st;
  if (fstat(fdOf(memory), &st) || size % kMulticastGranularity ||
      memOffset % kMulticastGranularity || mcOffset % kMulticastGranularity ||
      memOffset + size > size_t(st.st_size) || mcOffset + size > objectSize || mcOffset)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(bindings);
  if (bound.count(inodeOf(h))) // one binding per device
    return CUDA_ERROR_INVALID_VALUE;
  MulticastHeader *m = headerOf(h);
  const uint32_t entry = m ? m->bindings++ : kMaxBindings;
  if (entry >= kMaxBindings) {
    if (m)
      munmap(m, kMulticastHeader);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  const int fd = dup(fdOf(memory));
  bound[inodeOf(h)] = Bound{fd, memOffset, int(entry)};
  Binding &b = m->binding[entry];
  b.fd = fd;
  b.inode = st.st_ino;
  b.offset = memOffset;
  b.size = size;
  // FAKE_CUDA_MULTICAST_DROP=1: the object forgets the first binding, as a
  // switch that some rank's memory never reached (tests that results do
  // come through the object).
  const char *drop = getenv("FAKE_CUDA_MULTICAST_DROP");
  b.pid.store(drop && !strcmp(drop, "1") && entry == 0 ? 0 : getpid());
  munmap(m, kMulticastHeader);
  return CUDA_SUCCESS;
}
CUresult cuMulticastUnbind(CUmemGenericAllocationHandle h, CUdevice, size_t, size_t) {
  std::lock_guard<std::mutex> lock(bindings);
  auto it = bound.find(inodeOf(h));
  if (!isMulticast(h) || it == bound.end())
    return CUDA_ERROR_INVALID_VALUE;
  if (MulticastHeader *m = headerOf(h)) {
    m->binding[it->second.entry].pid.store(0);
    munmap(m, kMulticastHeader);
  }
  close(it->second.fd);
  bound.erase(it);
  return CUDA_SUCCESS;
}

// On the legacy stream, and as CUDA's, asynchronous to the host (for
// device memory).
CUresult cuMemsetD8(CUdeviceptr p, unsigned char v, size_t n) {
  if (refused("cuMemsetD8", p, n))
    return CUDA_ERROR_INVALID_VALUE;
  if (legacyClash())
    return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
  enqueue(nullptr, [=] { memset(at(p), v, n); });
  return CUDA_SUCCESS;
}
CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream s) {
  if (refused("cuMemsetD8Async", p, n))
    return CUDA_ERROR_INVALID_VALUE;
  if (!s && legacyClash())
    return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
  enqueue(s, [=] { memset(at(p), v, n); });
  return CUDA_SUCCESS;
}
// cuMemAlloc and cuMemFree may synchronise the device: here they always
// wait for all work of the context, as the worst a GPU may do.
CUresult cuMemAlloc(CUdeviceptr *p, size_t n) {
  if (forbidden())
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (failing("cuMemAlloc"))
    return CUDA_ERROR_OUT_OF_MEMORY;
  waitFor(everything(), "cuMemAlloc");
  void *r = aligned_alloc(256, (n + 255) & ~size_t(255));
  if (!r)
    return CUDA_ERROR_OUT_OF_MEMORY;
  reach(r, n);
  *p = of(r);
  return CUDA_SUCCESS;
}
CUresult cuMemFree(CUdeviceptr p) {
  waitFor(everything(), "cuMemFree");
  unreach(at(p));
  free(at(p));
  return CUDA_SUCCESS;
}
// Stream-ordered: memory at once (the pool has it), freed when the stream
// gets there; neither waits. A capture of either is not modelled.
CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream s) {
  if (capturing(s))
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (failing("cuMemAllocAsync"))
    return CUDA_ERROR_OUT_OF_MEMORY;
  void *r = aligned_alloc(256, (n + 255) & ~size_t(255));
  if (!r)
    return CUDA_ERROR_OUT_OF_MEMORY;
  reach(r, n);
  *p = of(r);
  return CUDA_SUCCESS;
}
CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s) {
  if (capturing(s))
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  enqueue(s, [p] {
    unreach(at(p));
    free(at(p));
  });
  return CUDA_SUCCESS;
}
CUresult cuMemHostAlloc(void **p, size_t n, unsigned int) {
  if (forbidden())
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  *p = calloc(1, n);
  if (!*p)
    return CUDA_ERROR_OUT_OF_MEMORY;
  reach(*p, n);
  return CUDA_SUCCESS;
}
// Pinning host memory: the GPU may then use its address.
CUresult cuMemHostRegister(void *p, size_t n, unsigned int flags) {
  if (forbidden())
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (failing("cuMemHostRegister"))
    return CUDA_ERROR_OUT_OF_MEMORY;
  if (!(flags & CU_MEMHOSTREGISTER_DEVICEMAP) || !n)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(reachMutex);
  if (!reachable.emplace(reinterpret_cast<uintptr_t>(p), n).second)
    return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  return CUDA_SUCCESS;
}
CUresult cuMemHostUnregister(void *p) {
  std::lock_guard<std::mutex> lock(reachMutex);
  return reachable.erase(reinterpret_cast<uintptr_t>(p)) ? CUDA_SUCCESS
                                                         : CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
}
CUresult cuMemHostGetDevicePointer(CUdeviceptr *d, void *p, unsigned int) {
  *d = of(p);
  return CUDA_SUCCESS;
}
CUresult cuMemFreeHost(void *p) {
  unreach(p);
  free(p);
  return CUDA_SUCCESS;
}
// A copy from pinned memory reads it when the stream gets there, and a
// captured copy on every replay, as CUDA's do; from pageable memory, the
// source is staged before the call returns, as CUDA stages it.
std::atomic<long> hostToDevice{0}; // copies queued, for fakeCudaHostToDeviceCopies
CUresult cuMemcpyHtoDAsync(CUdeviceptr d, const void *s, size_t n, CUstream stream) {
  ++hostToDevice;
  if (refused("cuMemcpyHtoDAsync", d, n))
    return CUDA_ERROR_INVALID_VALUE;
  if (!stream && legacyClash())
    return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
  if (capturing(stream) || gpuReaches(s, n)) {
    enqueue(stream, [=] { memcpy(at(d), s, n); });
    return CUDA_SUCCESS;
  }
  auto staged = std::make_shared<std::vector<char>>(static_cast<const char *>(s),
                                                    static_cast<const char *>(s) + n);
  enqueue(stream, [=] { memcpy(at(d), staged->data(), n); });
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream stream) {
  if (refused("cuMemcpyDtoDAsync", d, n) || refused("cuMemcpyDtoDAsync", s, n))
    return CUDA_ERROR_INVALID_VALUE;
  if (!stream && legacyClash())
    return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
  enqueue(stream, [=] { memmove(at(d), at(s), n); });
  return CUDA_SUCCESS;
}
CUresult cuCtxSynchronize() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!captures.empty())
      return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  waitFor(everything(), "cuCtxSynchronize");
  return CUDA_SUCCESS;
}

// An event is where its last record put it in a stream's queue (a null
// mark, reached, if never recorded). Recorded on a capturing stream, it is
// a node of that capture's graph: CUDA then refuses to query or wait for
// it on the host (CUDA_ERROR_CAPTURED_EVENT), and a dependency between the
// capture and work outside it, either way, fails and invalidates the
// capture (CUDA_ERROR_STREAM_CAPTURE_ISOLATION).
struct Event {
  Mark at;
  Graph *capture = nullptr; // the capture that recorded it last, if any
  int device = 0;           // whose context was current at its creation
};
// The capture `s` records into, if any.
Graph *captureOf(CUstream s) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = captures.find(s);
  return it == captures.end() ? nullptr : it->second;
}
CUresult cuEventCreate(CUevent *e, unsigned int) {
  auto *event = new Event;
  event->device = currentDevice;
  *e = reinterpret_cast<CUevent>(event);
  return CUDA_SUCCESS;
}
// As CUDA's: an event and the stream it is recorded on share a context.
CUresult cuEventRecord(CUevent e, CUstream s) {
  if (!inContext(s, reinterpret_cast<Event *>(e)->device))
    return CUDA_ERROR_INVALID_HANDLE;
  Graph *capture = captureOf(s);
  const Mark m = enqueue(s, [] {});
  std::lock_guard<std::mutex> lock(device().mutex);
  Event *event = reinterpret_cast<Event *>(e);
  event->capture = capture;
  event->at = capture ? Mark{} : m;
  return CUDA_SUCCESS;
}
CUresult cuEventQuery(CUevent e) {
  std::lock_guard<std::mutex> lock(device().mutex);
  const Event *event = reinterpret_cast<Event *>(e);
  if (event->capture)
    return CUDA_ERROR_CAPTURED_EVENT;
  return reached(event->at) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}
CUresult cuEventSynchronize(CUevent e) {
  if (forbidden())
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  Mark m;
  {
    std::lock_guard<std::mutex> lock(device().mutex);
    const Event *event = reinterpret_cast<Event *>(e);
    if (event->capture)
      return CUDA_ERROR_CAPTURED_EVENT;
    m = event->at;
  }
  waitFor({m});
  return CUDA_SUCCESS;
}
CUresult cuEventDestroy(CUevent e) {
  delete reinterpret_cast<Event *>(e);
  return CUDA_SUCCESS;
}
// Later work on `s` waits for the event's record; on a capturing stream,
// for a record of the same capture, nothing (a capture's work runs in
// order). Across the capture's boundary, either way, it is refused.
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int) {
  Graph *capture = captureOf(s);
  Mark m;
  Graph *recorded;
  {
    std::lock_guard<std::mutex> lock(device().mutex);
    m = reinterpret_cast<Event *>(e)->at;
    recorded = reinterpret_cast<Event *>(e)->capture;
  }
  if (recorded != capture && (recorded || m.stream)) {
    std::lock_guard<std::mutex> lock(mutex);
    for (Graph *g : {capture, recorded})
      for (auto &[stream, graph] : captures)
        if (g && graph == g)
          invalidated[g] = true;
    return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
  }
  if (capture)
    return CUDA_SUCCESS;
  submit(streamOf(s), [] {}, false, {m});
  return CUDA_SUCCESS;
}
CUresult cuStreamIsCapturing(CUstream stream, CUstreamCaptureStatus *s) {
  std::lock_guard<std::mutex> lock(mutex);
  *s = captures.count(stream) ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream *s, unsigned int flags) {
  std::lock_guard<std::mutex> lock(device().mutex);
  *s = reinterpret_cast<CUstream>(newStream(flags, false));
  return CUDA_SUCCESS;
}
// As CUDA's: the work queued so far still runs.
CUresult cuStreamDestroy(CUstream s) {
  Device &d = device();
  std::lock_guard<std::mutex> lock(d.mutex);
  reinterpret_cast<Stream *>(s)->closing = true;
  d.changed.notify_all();
  return CUDA_SUCCESS;
}
// The legacy stream's end is a new mark, so that it includes the blocking
// streams' work before it.
CUresult cuStreamSynchronize(CUstream s) {
  if (capturing(s))
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  Stream *st = streamOf(s);
  Mark end;
  if (st->legacy) {
    end = submit(st, [] {}, false);
  } else {
    std::lock_guard<std::mutex> lock(device().mutex);
    end = tail(st);
  }
  waitFor({end});
  return CUDA_SUCCESS;
}
CUresult cuStreamQuery(CUstream s) {
  if (capturing(s))
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  Stream *st = streamOf(s);
  std::lock_guard<std::mutex> lock(device().mutex);
  return reached(tail(st)) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}
CUresult cuStreamBeginCapture(CUstream s, CUstreamCaptureMode) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!s || captures.count(s))
    return CUDA_ERROR_ILLEGAL_STATE;
  captures[s] = new Graph;
  ++captureIds;
  return CUDA_SUCCESS;
}
CUresult cuStreamEndCapture(CUstream s, CUgraph *g) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = captures.find(s);
  if (it == captures.end())
    return CUDA_ERROR_ILLEGAL_STATE;
  Graph *graph = it->second;
  captures.erase(it);
  if (invalidated.erase(graph)) {
    delete graph;
    *g = nullptr;
    return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  }
  *g = reinterpret_cast<CUgraph>(graph);
  return CUDA_SUCCESS;
}
CUresult cuStreamGetCaptureInfo(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id,
                                CUgraph *graph, const CUgraphNode **deps,
                                const CUgraphEdgeData **edges, size_t *numDeps) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = captures.find(s);
  *status = it == captures.end() ? CU_STREAM_CAPTURE_STATUS_NONE : CU_STREAM_CAPTURE_STATUS_ACTIVE;
  if (id)
    *id = captureIds;
  if (graph)
    *graph = it == captures.end() ? nullptr : reinterpret_cast<CUgraph>(it->second);
  if (deps)
    *deps = nullptr;
  if (edges)
    *edges = nullptr;
  if (numDeps)
    *numDeps = 0;
  return CUDA_SUCCESS;
}
// cuStreamGetCaptureInfo as CUDA 12.0 to 12.2 define it: no edge data.
CUresult streamGetCaptureInfoV2(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id,
                                CUgraph *graph, const CUgraphNode **deps, size_t *numDeps) {
  return cuStreamGetCaptureInfo(s, status, id, graph, deps, nullptr, numDeps);
}
CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode) {
  CUstreamCaptureMode old = threadMode;
  threadMode = *mode;
  *mode = old;
  return CUDA_SUCCESS;
}

CUresult cuUserObjectCreate(CUuserObject *out, void *ptr, CUhostFn destroy, unsigned int refs,
                            unsigned int flags) {
  if (flags != CU_USER_OBJECT_NO_DESTRUCTOR_SYNC || !refs)
    return CUDA_ERROR_INVALID_VALUE;
  *out = reinterpret_cast<CUuserObject>(new UserObject{ptr, destroy, refs});
  return CUDA_SUCCESS;
}
CUresult cuUserObjectRelease(CUuserObject o, unsigned int n) {
  release(reinterpret_cast<UserObject *>(o), n);
  return CUDA_SUCCESS;
}
CUresult cuGraphRetainUserObject(CUgraph g, CUuserObject o, unsigned int n, unsigned int flags) {
  auto *object = reinterpret_cast<UserObject *>(o);
  if (!(flags & CU_GRAPH_USER_OBJECT_MOVE))
    object->refs += n;
  for (unsigned i = 0; i < n; ++i)
    reinterpret_cast<Graph *>(g)->objects.push_back(object);
  return CUDA_SUCCESS;
}
CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long) {
  auto *graph = reinterpret_cast<Graph *>(g);
  for (UserObject *o : graph->objects)
    ++o->refs;
  *e = reinterpret_cast<CUgraphExec>(new Graph{graph->ops, graph->objects, {}});
  return CUDA_SUCCESS;
}
CUresult cuGraphLaunch(CUgraphExec e, CUstream s) {
  auto *graph = reinterpret_cast<Graph *>(e);
  Mark end;
  for (Step &step : *graph->ops)
    end = enqueue(s, step.run, step.kernel);
  if (!end.stream)
    return CUDA_SUCCESS;
  std::lock_guard<std::mutex> lock(device().mutex);
  auto it = std::find_if(graph->launched.begin(), graph->launched.end(),
                         [&](const Mark &m) { return m.stream == end.stream; });
  if (it == graph->launched.end())
    graph->launched.push_back(end);
  else
    *it = end;
  return CUDA_SUCCESS;
}
// As CUDA does, launches still queued run, and the graph's user objects
// are released once they have.
CUresult cuGraphExecDestroy(CUgraphExec e) {
  auto *graph = reinterpret_cast<Graph *>(e);
  std::vector<Mark> pending;
  {
    std::lock_guard<std::mutex> lock(device().mutex);
    for (const Mark &m : graph->launched)
      if (!reached(m))
        pending.push_back(m);
  }
  if (pending.empty())
    delete graph;
  else
    submit(pending.back().stream, [graph] { delete graph; }, false, pending);
  return CUDA_SUCCESS;
}
CUresult cuGraphDestroy(CUgraph g) {
  delete reinterpret_cast<Graph *>(g);
  return CUDA_SUCCESS;
}

// Each call by the name cuGetProcAddress takes, from the CUDA version on
// which it has the prototype of `fn` (0: every version this fake serves).
struct Entry {
  const char *name;
  void *fn;
  int since;
};
#define FAKE_CUDA_ENTRY(name) {#name, reinterpret_cast<void *>(&name), 0}
const Entry entries[] = {
    FAKE_CUDA_ENTRY(cuInit),
    FAKE_CUDA_ENTRY(cuGetErrorName),
    FAKE_CUDA_ENTRY(cuDriverGetVersion),
    FAKE_CUDA_ENTRY(cuDeviceGetCount),
    FAKE_CUDA_ENTRY(cuDeviceGet),
    FAKE_CUDA_ENTRY(cuDevicePrimaryCtxRetain),
    FAKE_CUDA_ENTRY(cuDevicePrimaryCtxRelease),
    FAKE_CUDA_ENTRY(cuCtxSetCurrent),
    FAKE_CUDA_ENTRY(cuCtxGetCurrent),
    FAKE_CUDA_ENTRY(cuCtxGetDevice),
    FAKE_CUDA_ENTRY(cuDeviceGetAttribute),
    FAKE_CUDA_ENTRY(cuDeviceCanAccessPeer),
    FAKE_CUDA_ENTRY(cuDeviceGetPCIBusId),
    FAKE_CUDA_ENTRY(cuDeviceGetByPCIBusId),
    FAKE_CUDA_ENTRY(cuMemGetAllocationGranularity),
    FAKE_CUDA_ENTRY(cuMemCreate),
    FAKE_CUDA_ENTRY(cuMemRelease),
    FAKE_CUDA_ENTRY(cuMemAddressReserve),
    FAKE_CUDA_ENTRY(cuMemAddressFree),
    FAKE_CUDA_ENTRY(cuMemMap),
    FAKE_CUDA_ENTRY(cuMemUnmap),
    FAKE_CUDA_ENTRY(cuMemSetAccess),
    FAKE_CUDA_ENTRY(cuMemExportToShareableHandle),
    FAKE_CUDA_ENTRY(cuMemImportFromShareableHandle),
    FAKE_CUDA_ENTRY(cuMemsetD8),
    FAKE_CUDA_ENTRY(cuMemAlloc),
    FAKE_CUDA_ENTRY(cuMemFree),
    FAKE_CUDA_ENTRY(cuMemAllocAsync),
    FAKE_CUDA_ENTRY(cuMemFreeAsync),
    FAKE_CUDA_ENTRY(cuMemHostAlloc),
    FAKE_CUDA_ENTRY(cuMemHostGetDevicePointer),
    FAKE_CUDA_ENTRY(cuMemFreeHost),
    FAKE_CUDA_ENTRY(cuMemHostRegister),
    FAKE_CUDA_ENTRY(cuMemHostUnregister),
    FAKE_CUDA_ENTRY(cuMemcpyHtoDAsync),
    FAKE_CUDA_ENTRY(cuMemcpyDtoDAsync),
    FAKE_CUDA_ENTRY(cuMemsetD8Async),
    FAKE_CUDA_ENTRY(cuCtxSynchronize),
    FAKE_CUDA_ENTRY(cuEventCreate),
    FAKE_CUDA_ENTRY(cuEventRecord),
    FAKE_CUDA_ENTRY(cuEventQuery),
    FAKE_CUDA_ENTRY(cuEventSynchronize),
    FAKE_CUDA_ENTRY(cuEventDestroy),
    FAKE_CUDA_ENTRY(cuStreamIsCapturing),
    FAKE_CUDA_ENTRY(cuStreamCreate),
    FAKE_CUDA_ENTRY(cuStreamDestroy),
    FAKE_CUDA_ENTRY(cuStreamSynchronize),
    FAKE_CUDA_ENTRY(cuStreamQuery),
    FAKE_CUDA_ENTRY(cuStreamWaitEvent),
    FAKE_CUDA_ENTRY(cuStreamBeginCapture),
    FAKE_CUDA_ENTRY(cuStreamEndCapture),
    {"cuStreamGetCaptureInfo", reinterpret_cast<void *>(&streamGetCaptureInfoV2), 12000},
    {"cuStreamGetCaptureInfo", reinterpret_cast<void *>(&cuStreamGetCaptureInfo), 12030},
    FAKE_CUDA_ENTRY(cuThreadExchangeStreamCaptureMode),
    FAKE_CUDA_ENTRY(cuUserObjectCreate),
    FAKE_CUDA_ENTRY(cuUserObjectRelease),
    FAKE_CUDA_ENTRY(cuGraphRetainUserObject),
    FAKE_CUDA_ENTRY(cuGraphInstantiateWithFlags),
    FAKE_CUDA_ENTRY(cuGraphLaunch),
    FAKE_CUDA_ENTRY(cuGraphExecDestroy),
    FAKE_CUDA_ENTRY(cuGraphDestroy),
    {"cuMulticastGetGranularity", reinterpret_cast<void *>(&cuMulticastGetGranularity), 12010},
    {"cuMulticastCreate", reinterpret_cast<void *>(&cuMulticastCreate), 12010},
    {"cuMulticastAddDevice", reinterpret_cast<void *>(&cuMulticastAddDevice), 12010},
    {"cuMulticastBindMem", reinterpret_cast<void *>(&cuMulticastBindMem), 12010},
    {"cuMulticastUnbind", reinterpret_cast<void *>(&cuMulticastUnbind), 12010},
};
#undef FAKE_CUDA_ENTRY

// As the driver answers: the newest version of `symbol` that is no newer
// than both `cudaVersion` and the driver.
__attribute__((visibility("default"))) CUresult
cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t,
                    CUdriverProcAddressQueryResult *status) {
  const int limit = std::min(cudaVersion, driverVersion());
  const Entry *best = nullptr;
  bool newer = false;
  for (const Entry &e : entries)
    if (!strcmp(e.name, symbol)) {
      if (e.since > limit)
        newer = true;
      else if (!best || e.since > best->since)
        best = &e;
    }
  *pfn = best ? best->fn : nullptr;
  if (status)
    *status = best    ? CU_GET_PROC_ADDRESS_SUCCESS
              : newer ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                      : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return best ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

// For FakeGpu.h's kernels: whether the GPU may touch [p, p + n).
__attribute__((visibility("default"))) int fakeCudaReaches(const void *p, size_t n) {
  return gpuReaches(p, n);
}

// For FakeGpu.h's kernels: whether VMM lets the device touch [p, p + n)
// (outside VMM's reservations, not its to refuse); from a stream's work,
// the device that runs it.
__attribute__((visibility("default"))) int fakeCudaMayTouch(const void *p, size_t n) {
  return vmmAllows(p, n, runningDevice);
}

// For FakeGpu.h's kernels: whether p lies in another GPU's memory (a VMM
// mapping of another process's allocation), which a poll would cross
// NVLink to read.
__attribute__((visibility("default"))) int fakeCudaPeerMemory(const void *p) {
  const uintptr_t x = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(vmmMutex);
  auto m = mappings.upper_bound(x);
  if (m == mappings.begin())
    return 0;
  --m;
  return x < m->first + m->second.size && m->second.peer;
}

// For FakeGpu.h's kernels: queues run(ctx) on `s` as a kernel, or records
// it where `s` is capturing; drop(ctx) once neither the queue nor a graph
// holds it. As CUDA's, a kernel runs in the current context: on a stream
// of another, the launch fails (CUDA_ERROR_INVALID_HANDLE).
__attribute__((visibility("default"))) int fakeCudaLaunch(CUstream s, void (*run)(void *),
                                                          void *ctx, void (*drop)(void *)) {
  std::shared_ptr<void> held(ctx, drop);
  if (!inContext(s, currentDevice))
    return CUDA_ERROR_INVALID_HANDLE;
  enqueue(s, [run, held] { run(held.get()); }, true);
  return CUDA_SUCCESS;
}

// For FakeGpu.h's kernels: where [p, p + n) of a multicast mapping lies in
// each memory bound to its object, as this process maps them (a switch's
// view: a load reduces over them, a store goes to each); how many, or -1
// where [p, p + n) is not in one such mapping.
__attribute__((visibility("default"))) int fakeCudaMulticastCopies(const void *p, size_t n,
                                                                   char **copies, int max) {
  const uintptr_t x = reinterpret_cast<uintptr_t>(p);
  MulticastHeader *m;
  size_t offset;
  {
    std::lock_guard<std::mutex> lock(vmmMutex);
    auto it = multicastMaps.upper_bound(x);
    if (it == multicastMaps.begin())
      return -1;
    --it;
    if (x + n > it->first + it->second.size)
      return -1;
    m = it->second.header;
    offset = it->second.offset + (x - it->first);
  }
  // Each bound memory, mapped once per process (by process, descriptor
  // and inode: a descriptor number may come back for another memfd).
  static std::mutex peersMutex;
  static std::map<std::tuple<int32_t, int32_t, uint64_t, uint64_t>, char *> peers;
  int found = 0;
  const uint32_t entries = std::min<uint32_t>(m->bindings.load(), kMaxBindings);
  for (uint32_t i = 0; i < entries && found < max; ++i) {
    const Binding &b = m->binding[i];
    const int32_t pid = b.pid.load();
    if (!pid || offset + n > b.size)
      continue;
    std::lock_guard<std::mutex> lock(peersMutex);
    char *&base = peers[{pid, b.fd, b.inode, b.offset}];
    if (!base) {
      const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(b.fd);
      const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
      void *q =
          fd < 0 ? MAP_FAILED
                 : mmap(nullptr, b.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off_t(b.offset));
      if (fd >= 0)
        close(fd);
      if (q == MAP_FAILED)
        return -1;
      base = static_cast<char *>(q);
    }
    copies[found++] = base + offset;
  }
  return found;
}

// For tests: how many host-to-device copies the process has asked for.
__attribute__((visibility("default"))) long fakeCudaHostToDeviceCopies() {
  return hostToDevice.load();
}

// For FakeGpu.h: CUDA's lazy loading of a module at a kernel's first
// launch (`what`), which waits for all of the device's work.
__attribute__((visibility("default"))) void fakeCudaLazyLoad(const char *what) {
  waitFor(everything(), what);
}

} // extern "C"
#pragma GCC visibility pop
