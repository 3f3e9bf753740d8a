//===- SimFold.h - Simulate one period of a plan that repeats -------------===//
//
// Most plans on a multi-node machine repeat from node to node: shift every
// rank's GPU by a few nodes (or, for recursive doubling and halving, xor it
// with a power of two) and the plan maps onto itself, as does the machine. Every rank of such an
// orbit then runs the same steps at the same times, so the simulator needs to run only the ranks of
// one period, whose flows stand for their every shift: a link of the period carries as many flows
// as each of its shifts does. The folded plan keeps only those ranks' threadblocks; its connections
// keep the true receiving rank, whose GPU says which links a send crosses. Its times are those of
// the whole plan.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_SIM_SIMFOLD_H
#define COLLC_SIM_SIMFOLD_H

#include "lib/Sim/SimPlan.h"
#include "lib/Topology/Topology.h"

#include <optional>

namespace coll {

/// `plan` folded onto its shortest period of whole nodes (and NVLink
/// domains), or nothing where it has none shorter than the machine: a plan
/// that differs from node to node (a tree), steps on peers' windows, or a
/// machine whose nodes differ.
std::optional<SimPlan> foldPlan(const SimPlan &plan, const Topology &topo);

} // namespace coll

#endif // COLLC_SIM_SIMFOLD_H
