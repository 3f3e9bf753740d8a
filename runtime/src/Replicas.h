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

} // namespace collrt

#endif // COLLRT_REPLICAS_H
