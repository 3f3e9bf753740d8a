//===- Multicast.h - Whether multimem steps use NVLink multicast ----------===//
//
// A plan's multimem steps run on NVLink multicast where the machine has it
// and multimem reduces the (type, op); otherwise the kernels run the same
// steps as loads and stores over the peer windows (unicast), as NCCL falls
// back from NVLS. Never a refusal: the runtime only says which and why.
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_MULTICAST_H
#define COLLRT_MULTICAST_H

#include <cstdint>
#include <string>

namespace collrt {

/// Why multimem steps of a collective that `reduces` (or only stores) take
/// the unicast path; empty when they run on multicast.
std::string unicastReason(bool multicast, int32_t type, int32_t op, bool reduces);

} // namespace collrt

#endif // COLLRT_MULTICAST_H
