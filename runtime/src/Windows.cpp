//===- Windows.cpp - collCommWindowRegister and collCommWindowDeregister --===//
#include "src/Windows.h"

#include "src/Comm.h"
#include "src/GpuLaunch.h"
#include "src/Memory.h"
#include "support/CudaDriver.h"

#include <algorithm>
#include <cstring>

using namespace collrt;

WindowPlace collrt::placeOf(const collComm *comm, const void *p, size_t bytes,
                            const MemoryBackend *memory) {
  const char *at = static_cast<const char *>(p);
  for (const collWindow *w : comm->windows)
    if (w->window.memory == memory && at >= w->buff && size_t(at - w->buff) <= w->bytes &&
        bytes <= w->bytes - (at - w->buff))
      return {w->window.id, int64_t(at - w->window.base[comm->rank])};
  return {};
}

collResult_t collrt::launchPlaces(collComm *comm, const void *in, size_t inBytes, const void *out,
                                  size_t outBytes, const MemoryBackend *memory,
                                  LaunchPlaces &places, std::string &error) {
  const int R = comm->nranks;
  places = LaunchPlaces{};
  places.in.assign(R, {});
  places.out.assign(R, {});
  places.why = "no window is registered";
  if (comm->windows.empty()) // the same on every rank: registration is collective
    return collSuccess;
  const WindowPlace mine[2] = {placeOf(comm, in, inBytes, memory),
                               placeOf(comm, out, outBytes, memory)};
  std::vector<std::string> all;
  if (collResult_t r = comm->bootstrap.allgather(
          std::string(reinterpret_cast<const char *>(mine), sizeof mine), all, error))
    return r;
  places.registered = true;
  for (int q = 0; q < R && places.registered; ++q) {
    WindowPlace theirs[2];
    if (all[q].size() != sizeof theirs) {
      error = "rank " + std::to_string(q) + " sent no window places";
      return collInternalError;
    }
    memcpy(theirs, all[q].data(), sizeof theirs);
    places.in[q] = theirs[0];
    places.out[q] = theirs[1];
    places.registered = theirs[0].id >= 0 && theirs[1].id >= 0;
    if (!places.registered)
      places.why = "rank " + std::to_string(q) + "'s " + (theirs[0].id < 0 ? "input" : "output") +
                   " is not in a registered window" + (memory ? " of GPU memory" : "");
  }
  if (places.registered)
    places.why.clear();
  return collSuccess;
}

bool collrt::pointAtUserBuffers(const collComm *comm, const LaunchPlaces &places,
                                std::vector<char *> &peers, std::string &error) {
  for (int q = 0; q < comm->nranks; ++q) {
    char **of = &peers[size_t(q) * collc::kMaxBuffers];
    of[collc::kIn] = peerAddress(comm, q, places.in[q]);
    of[collc::kOut] = peerAddress(comm, q, places.out[q]);
    if (!of[collc::kIn] || !of[collc::kOut]) {
      error = "rank " + std::to_string(q) +
              " launched on a window that this rank has "
              "deregistered";
      return false;
    }
  }
  return true;
}

const collWindow *collrt::windowById(const collComm *comm, int32_t id) {
  for (const collWindow *w : comm->windows)
    if (w->window.id == id)
      return w;
  return nullptr;
}

char *collrt::peerAddress(const collComm *comm, int owner, WindowPlace place) {
  for (const collWindow *w : comm->windows)
    if (w->window.id == place.id && w->window.base[owner])
      return w->window.base[owner] + place.offset;
  return nullptr;
}

extern "C" {

collResult_t collCommWindowRegister(collComm_t comm, void *buff, size_t size, collWindow_t *win) {
  if (!comm || !win)
    return refuse(comm, collInvalidArgument,
                  std::string("collCommWindowRegister: ") + (comm ? "win" : "comm") + " is NULL");
  *win = nullptr;
  std::lock_guard<std::mutex> running(comm->launching);
  ContextScope device(comm->gpuContext());
  // Every rank learns why any rank cannot register, so that all fail alike.
  std::string why;
  Allocation mine;
  if (!buff || !size)
    why = "a null buffer or a size of 0";
  else if (!comm->transport->mapsEveryRank())
    why = "windows need shared memory between every pair of ranks, and this group has "
          "ranks on other machines (" +
          comm->transport->describe() + ")";
  else if (!findAllocation(buff, size, mine))
    why = "the buffer is not memory from collMemAlloc, which windows are made of";
  // And what each rank's memory is: a peer maps it with the same backend.
  const char kind = why.empty() ? (mine.memory ? 'G' : 'H') : '-';
  std::vector<std::string> all;
  std::string error;
  if (collResult_t r = comm->bootstrap.allgather(kind + why, all, error))
    return comm->fail(r, error);
  for (int q = 0; q < comm->nranks; ++q) {
    if (all[q].size() > 1)
      return comm->fail(buff && size ? collInvalidUsage : collInvalidArgument,
                        "collCommWindowRegister: rank " + std::to_string(q) + ": " +
                            all[q].substr(1));
    if (all[q] != all[0])
      return comm->fail(collInvalidUsage, "collCommWindowRegister: rank 0's buffer is " +
                                              std::string(all[0] == "G" ? "GPU" : "host") +
                                              " memory and rank " + std::to_string(q) +
                                              "'s is not: every rank registers the same kind");
  }
  auto made = std::make_unique<collWindow>();
  Window &w = made->window;
  w.base.assign(comm->nranks, nullptr);
  w.size.assign(comm->nranks, 0);
  w.handle.assign(comm->nranks, 0);
  w.base[comm->rank] = mine.base;
  w.size[comm->rank] = mine.size;
  w.handle[comm->rank] = mine.handle;
  w.memory = mine.memory;
  w.fd = mine.fd; // the allocation's: shared, not closed
  collResult_t r = comm->transport->shareWindow(w, error);
  w.fd = -1;
  if (r != collSuccess)
    return comm->fail(r, error);
  made->buff = static_cast<char *>(buff);
  made->bytes = size;
  if (w.memory && (r = bindWindow(comm, made.get())) != collSuccess) {
    comm->transport->unshare(w);
    return r;
  }
  made->allocation = mine.base;
  holdAllocation(mine.base, 1);
  *win = made.get();
  comm->windows.push_back(made.release());
  return collSuccess;
}

collResult_t collCommWindowDeregister(collComm_t comm, collWindow_t win) {
  if (!comm || !win)
    return refuse(comm, collInvalidArgument,
                  std::string("collCommWindowDeregister: ") + (comm ? "win" : "comm") + " is NULL");
  std::lock_guard<std::mutex> running(comm->launching);
  ContextScope device(comm->context);
  auto found = std::find(comm->windows.begin(), comm->windows.end(), win);
  if (found == comm->windows.end())
    return comm->fail(collInvalidArgument, "collCommWindowDeregister: not a window of this "
                                           "communicator");
  // No rank unmaps a peer's buffer while that peer may still launch on it.
  std::string error;
  collResult_t r = comm->bootstrap.barrier(error);
  unbindWindow(win);
  comm->transport->unshare(win->window);
  holdAllocation(win->allocation, -1);
  comm->windows.erase(found);
  delete win;
  return r ? comm->fail(r, error) : collSuccess;
}

} // extern "C"
