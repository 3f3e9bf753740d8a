//===- Replicas.h - How many copies of a plan a launch runs ----------------===//
//
// A plan's launch table (collc::LaunchShape) says, by size, how many
// replicas of its threadblocks run and with how many threads. The runtime
// and the GPU harness read it alike.
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_REPLICAS_H
#define COLLRT_REPLICAS_H

#include "collc/abi.h"

#include <algorithm>

namespace collrt {

/// The most replicas the plan runs at any size: each needs its own FIFOs.
inline int32_t maxReplicas(const collc::PlanDesc &plan) {
  int32_t n = 1;
  for (int32_t i = 0; i < plan.numLaunches; ++i)
    n = std::max(n, plan.launches[i].replicas);
  return n;
}

/// How the plan runs `bytes` per rank; threads 0 where the plan has no
/// table (the launcher's default).
inline collc::LaunchShape launchFor(const collc::PlanDesc &plan, int64_t bytes) {
  collc::LaunchShape shape{0, 1, 0};
  for (int32_t i = 0; i < plan.numLaunches; ++i)
    if (plan.launches[i].minBytes <= bytes)
      shape = plan.launches[i];
  return shape;
}

/// Elements of one chunk per loop when `replicas` share the loops of a
/// buffer of `count` elements per unit: the plan's `slice`, or less where
/// the buffer has fewer loops than replicas, so that every replica gets a
/// share (in whole 16-byte units where the slice has them), as NCCL's
/// channels share a chunk. The same on every rank.
inline int64_t replicaSlice(int64_t slice, int64_t count, int64_t chunks, int32_t replicas,
                            int64_t elemSize) {
  if (replicas <= 1 || count <= 0 || chunks <= 0)
    return slice;
  int64_t perChunk = (count + chunks - 1) / chunks;
  int64_t share = (perChunk + replicas - 1) / replicas;
  int64_t unit = std::max<int64_t>(1, 16 / elemSize);
  if (slice >= unit)
    share = (share + unit - 1) / unit * unit;
  return std::max<int64_t>(1, std::min(slice, share));
}

} // namespace collrt

#endif // COLLRT_REPLICAS_H
