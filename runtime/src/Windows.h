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
#include "transport/Transport.h"

#include <cstddef>
#include <string>
#include <vector>

struct collWindow {
  collrt::Window window;        // each rank's whole allocation, as mapped here
  char *buff = nullptr;         // what this rank registered
  size_t bytes = 0;
};

namespace collrt {

/// Where a launch's buffer lies: window `id` at `offset` from the start of
/// its owner's allocation; id -1 when it is in no registered window.
struct WindowPlace {
  int32_t id = -1;
  int64_t offset = 0;
};

/// The place of [p, p + bytes) among this rank's registered windows.
WindowPlace placeOf(const collComm *comm, const void *p, size_t bytes);

/// Rank `owner`'s buffer at `place`, as this rank maps it; null when this
/// rank has no such window.
char *peerAddress(const collComm *comm, int owner, WindowPlace place);

} // namespace collrt

#endif // COLLRT_WINDOWS_H
