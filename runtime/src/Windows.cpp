//===- Windows.cpp - collCommWindowRegister and collCommWindowDeregister --===//
#include "src/Windows.h"

#include "src/Comm.h"
#include "src/Memory.h"

#include <algorithm>

using namespace collrt;

WindowPlace collrt::placeOf(const collComm *comm, const void *p, size_t bytes) {
  const char *at = static_cast<const char *>(p);
  for (const collWindow *w : comm->windows)
    if (at >= w->buff && size_t(at - w->buff) <= w->bytes && bytes <= w->bytes - (at - w->buff))
      return {w->window.id, int64_t(at - w->window.base[comm->rank])};
  return {};
}

char *collrt::peerAddress(const collComm *comm, int owner, WindowPlace place) {
  for (const collWindow *w : comm->windows)
    if (w->window.id == place.id && w->window.base[owner])
      return w->window.base[owner] + place.offset;
  return nullptr;
}

extern "C" {

collResult_t collCommWindowRegister(collComm_t comm, void *buff, size_t size,
                                    collWindow_t *win) {
  if (!comm || !win)
    return collInvalidArgument;
  *win = nullptr;
  std::lock_guard<std::mutex> running(comm->launching);
  // Every rank learns why any rank cannot register, so that all fail alike.
  std::string why;
  Allocation mine;
  if (!buff || !size)
    why = "a null buffer or a size of 0";
  else if (!comm->transport->mapsEveryRank())
    why = "windows need shared memory between every pair of ranks, and this group has "
          "ranks on other machines (" + comm->transport->describe() + ")";
  else if (!findAllocation(buff, size, mine))
    why = "the buffer is not memory from collMemAlloc, which windows are made of";
  std::vector<std::string> all;
  std::string error;
  if (collResult_t r = comm->bootstrap.allgather(why, all, error))
    return comm->fail(r, error);
  for (int q = 0; q < comm->nranks; ++q)
    if (!all[q].empty())
      return comm->fail(buff && size ? collInvalidUsage : collInvalidArgument,
                        "collCommWindowRegister: rank " + std::to_string(q) + ": " + all[q]);
  auto made = std::make_unique<collWindow>();
  Window &w = made->window;
  w.base.assign(comm->nranks, nullptr);
  w.size.assign(comm->nranks, 0);
  w.base[comm->rank] = mine.base;
  w.size[comm->rank] = mine.size;
  w.fd = mine.fd; // the allocation's: shared, not closed
  collResult_t r = comm->transport->shareWindow(w, error);
  w.fd = -1;
  if (r != collSuccess)
    return comm->fail(r, error);
  made->buff = static_cast<char *>(buff);
  made->bytes = size;
  *win = made.get();
  comm->windows.push_back(made.release());
  return collSuccess;
}

collResult_t collCommWindowDeregister(collComm_t comm, collWindow_t win) {
  if (!comm || !win)
    return collInvalidArgument;
  std::lock_guard<std::mutex> running(comm->launching);
  auto found = std::find(comm->windows.begin(), comm->windows.end(), win);
  if (found == comm->windows.end())
    return comm->fail(collInvalidArgument, "collCommWindowDeregister: not a window of this "
                                           "communicator");
  // No rank unmaps a peer's buffer while that peer may still launch on it.
  std::string error;
  collResult_t r = comm->bootstrap.barrier(error);
  comm->transport->unshare(win->window);
  comm->windows.erase(found);
  delete win;
  return r ? comm->fail(r, error) : collSuccess;
}

} // extern "C"
