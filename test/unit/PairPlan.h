//===- PairPlan.h - A hand-made plan: rank 0 broadcasts to rank 1 ---------===//
//
// The smallest plan that connects FIFOs between two ranks and waits on them,
// for the tests of launches, timeouts and aborts.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TEST_UNIT_PAIRPLAN_H
#define COLLC_TEST_UNIT_PAIRPLAN_H

#include "collc/kernel.h"

#include <atomic>
#include <cstdint>

/// How many threadblocks have entered pairKernel, in this process.
inline std::atomic<int> kernelsEntered{0};

inline COLLC_KERNEL(pairKernel) {
  ++kernelsEntered;
  collc::Block b(COLLC_BLOCK_ARGS);
  while (b.nextLoop()) {
    if (COLLC_BLOCK_ARGS->rank == 0) {
      b.copy(collc::in(0), collc::out(0));
      b.send(collc::in(0));
    } else {
      b.recv(collc::out(0));
    }
  }
}

// One plan per protocol, over all sizes.
struct PairAlgorithm {
  explicit PairAlgorithm(int32_t protocol) {
    tbs[0] = {0, 0, -1, 1, 0, protocol, 0, 2};
    tbs[1] = {1, 0, 0, -1, 0, protocol, 0, 1};
    // By name, not position: generated tables set every field, here the
    // rest stay zero (no scratch, no minimum size).
    plan.name = "pair";
    plan.collective = collc::kBroadcast;
    plan.ranks = 2;
    plan.chunks = 1;
    plan.root = 0;
    plan.maxBytes = INT64_MAX;
    plan.protocol = protocol;
    plan.slots = 2;
    plan.widest = 1;
    plan.numThreadblocks = 2;
    plan.threadblocks = tbs;
    plan.hostKernel = &pairKernel;
    alg = {"pair", "PairPlan.h", 1, &plan};
  }
  collc::ThreadblockDesc tbs[2];
  collc::PlanDesc plan{};
  collc::AlgorithmDesc alg;
};

#endif // COLLC_TEST_UNIT_PAIRPLAN_H
