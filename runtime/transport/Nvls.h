//===- Nvls.h - NVLink multicast objects over the symmetric windows -------===//
//
// NVLS, as NCCL calls it: every rank's part of a window bound to one
// multicast object, which each rank maps at an address of its own. A
// multimem load there reduces the same offset of every rank's part in the
// NVSwitch, and a multimem store writes all of them. Rank 0 creates the
// object and passes its POSIX-fd handle to the others (shm's Unix sockets);
// every rank adds its device, and once all have, binds its part and maps
// the object. Every step ends in an agreement, so that a rank whose call
// fails never leaves the others waiting in the driver.
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_NVLS_H
#define COLLRT_NVLS_H

#include "collrt.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace collrt {

class Bootstrap;
class PeerTransports;
struct CudaApi;
struct Window;

/// A multicast object as this rank holds and maps it.
struct MulticastMapping {
  uint64_t handle = 0;  // the object
  char *base = nullptr; // where it is mapped here; null: nothing bound
  size_t size = 0;      // bytes bound from the start of every rank's part
  int device = -1;      // this rank's, as added to the object
};

/// Collective: why this group cannot use NVLink multicast (COLL_NVLS=0, a
/// driver without the calls, a GPU without NVSwitch multicast, two ranks
/// on one GPU), or empty where it can; the same answer on every rank.
collResult_t multicastSupport(const CudaApi &cu, Bootstrap &boot, std::string &why,
                              std::string &error);

/// What the sizes bound for `nranks` devices must be a multiple of.
collResult_t multicastGranularity(const CudaApi &cu, int nranks, size_t &granularity,
                                  std::string &error);

/// `bytes` rounded up so that a multicast object can bind all of it where
/// the current device has NVLink multicast (as ncclMemAlloc rounds), else
/// `bytes`.
size_t multicastBytes(size_t bytes);

/// Collective: binds the first `bytes` of every rank's part of `window`
/// (CUDA VMM memory, `bytes` a multiple of the granularity) to a new
/// multicast object and maps it into `out`. Where a driver call fails on
/// any rank, every rank unwinds, returns success with `out` empty, and
/// says which call in `why`; errors are the bootstrap's.
collResult_t bindMulticast(const CudaApi &cu, Bootstrap &boot, PeerTransports &net, int rank,
                           int nranks, const Window &window, size_t bytes, MulticastMapping &out,
                           std::string &why, std::string &error);

/// Unmaps, unbinds and releases, once no kernel of any rank uses it.
void unbindMulticast(const CudaApi &cu, MulticastMapping &m);

} // namespace collrt

#endif // COLLRT_NVLS_H
