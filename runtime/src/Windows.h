//===- Windows.h - User buffers that every rank maps (symmetric windows) --===//
//
// collCommWindowRegister maps a buffer of collMemAlloc memory into every
// rank's address space, as NCCL's symmetric windows do over NVLink. A
// plan with steps on other ranks' buffers (peer windows, multimem) then
// runs on the user's buffers themselves, where every rank's input and
// output lie in registered windows; otherwise on copies in a window of the
// runtime's.
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_WINDOWS_H
#define COLLRT_WINDOWS_H

#include "collrt.h"
#include "transport/Nvls.h"
#include "transport/Transport.h"

#include <cstddef>
#include <string>
#include <vector>

struct collWindow {
  collrt::Window window;      // each rank's whole allocation, as mapped here
  char *buff = nullptr;       // what this rank registered
  char *allocation = nullptr; // the collMemAlloc allocation that holds it
  size_t bytes = 0;
  // GPU memory: the multicast object bound over every rank's allocation,
  // where the group has NVLink multicast (GpuLaunch.h's bindWindow).
  collrt::MulticastMapping multicast;
};

namespace collrt {

/// Where a launch's buffer lies: window `id` at `offset` from the start of
/// its owner's allocation; id -1 when it is in no registered window.
struct WindowPlace {
  int32_t id = -1;
  int64_t offset = 0;
};

/// The place of [p, p + bytes) among this rank's registered windows of
/// `memory` (null: host memory).
WindowPlace placeOf(const collComm *comm, const void *p, size_t bytes,
                    const MemoryBackend *memory = nullptr);

/// Rank `owner`'s buffer at `place`, as this rank maps it; null when this
/// rank has no such window.
char *peerAddress(const collComm *comm, int owner, WindowPlace place);

/// The registered window `id`; null when there is none.
const collWindow *windowById(const collComm *comm, int32_t id);

/// Where every rank's input and output of a launch lie.
struct LaunchPlaces {
  std::vector<WindowPlace> in, out; // per rank
  bool registered = false;          // every one in a window of `memory`
  std::string why;                  // why not, naming a rank and buffer
};

/// Collective: the places of every rank's [in, in + inBytes) and [out, out +
/// outBytes) among the registered windows of `memory`.
collResult_t launchPlaces(collComm *comm, const void *in, size_t inBytes, const void *out,
                          size_t outBytes, const MemoryBackend *memory, LaunchPlaces &places,
                          std::string &error);

/// Points every rank's input and output in `peers` (Args::peers, rank-major)
/// at the user's buffers that `places` names; false where this rank no
/// longer maps one of them, with the reason in `error`.
bool pointAtUserBuffers(const collComm *comm, const LaunchPlaces &places,
                        std::vector<char *> &peers, std::string &error);

} // namespace collrt

#endif // COLLRT_WINDOWS_H
