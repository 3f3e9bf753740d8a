//===- EnvRendezvous.h - A unique id from the launcher's variables --------===//
//
// torchrun, and launchers that copy it, give every process RANK,
// WORLD_SIZE, MASTER_ADDR and MASTER_PORT. From them every rank computes the
// same unique id, and rank 0 serves the bootstrap at it, so no id needs to
// be passed around. The root listens on MASTER_PORT + 1, since torch's own
// store takes MASTER_PORT; COLL_BOOTSTRAP_PORT picks another. The secret
// comes from COLL_SECRET where it is set, else from the variables, which
// names the group but, like torch's store, trusts the network: anyone who
// knows them can compute it, so collCommInitEnv then warns.
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_ENVRENDEZVOUS_H
#define COLLRT_ENVRENDEZVOUS_H

#include "support/Bootstrap.h"

#include <functional>
#include <string>

namespace collrt {

/// Reads a variable; null where it is not set.
using Lookup = std::function<const char *(const char *)>;

struct Rendezvous {
  int rank = 0, nranks = 0;
  UniqueIdData id{};
  /// Why the group is less private than a unique id's would be; empty if
  /// it is not.
  std::string warning;
};

/// The rank, group size and unique id that `get` describes, or an error
/// that names the variable at fault.
collResult_t rendezvousFromVars(const Lookup &get, Rendezvous &out, std::string &error);

} // namespace collrt

#endif // COLLRT_ENVRENDEZVOUS_H
