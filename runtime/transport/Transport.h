//===- Transport.h - How ranks see each other's memory ---------------------===//
//
// One interface for every transport. Setup is collective: each rank offers
// a window of its own memory (where its receive FIFOs live) and gets a
// pointer to every peer's. The host transports deliver `shm` (memfd shared
// memory, descriptors passed over Unix sockets like CUDA VMM POSIX-fd
// handles); GPU transports implement the same calls with device memory.
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_TRANSPORT_H
#define COLLRT_TRANSPORT_H

#include "collrt.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace collrt {

class Bootstrap;

struct Window {
  std::vector<char *> base; // every rank's window, mapped here
  std::vector<size_t> size;
};

class Transport {
public:
  virtual ~Transport() = default;
  virtual const char *name() const = 0;
  /// Collective: allocates `bytes` of zeroed memory on this rank and maps
  /// the windows of all ranks into `window`.
  virtual collResult_t exchangeWindow(size_t bytes, Window &window, std::string &error) = 0;
  virtual void release(Window &window) = 0;
};

std::unique_ptr<Transport> makeShmTransport(Bootstrap &bootstrap, int rank, int nranks,
                                            double timeout, collResult_t &result,
                                            std::string &error);

} // namespace collrt

#endif // COLLRT_TRANSPORT_H
