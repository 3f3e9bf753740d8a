//===- join.cpp - How the app's ranks find each other ---------------------===//
//
// Through MPI where the app is built with it, else through torchrun's
// variables (collCommInitEnv), else as a single rank. Apart from main.cu so
// that only the host compiler sees MPI's headers and flags.
//
//===----------------------------------------------------------------------===//
#include "join.h"

#ifdef APP_WITH_MPI
#include <mpi.h>

#include "collrt_mpi.h"

bool joinRanks(int *argc, char ***argv, int *rank, int *nranks, int *localRank) {
  if (MPI_Init(argc, argv) != MPI_SUCCESS)
    return false;
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, nranks);
  // The ranks that share this node's memory share its GPUs.
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, localRank);
  MPI_Comm_free(&node);
  return true;
}

bool everyone(bool ok) {
  int mine = ok, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all != 0;
}

collResult_t joinComm(collComm_t *comm, int, int) { return collCommInitMPI(comm, MPI_COMM_WORLD); }

void leaveRanks() { MPI_Finalize(); }

#else

#include <cstdlib>

// Under torchrun (WORLD_SIZE set) every process is one rank of its group;
// otherwise the app is a single rank.
bool joinRanks(int *, char ***, int *rank, int *nranks, int *localRank) {
  auto var = [](const char *name, int fallback) {
    const char *v = getenv(name);
    return v ? atoi(v) : fallback;
  };
  *nranks = var("WORLD_SIZE", 1);
  *rank = var("RANK", 0);
  *localRank = var("LOCAL_RANK", 0);
  return true;
}

// Without MPI the ranks cannot agree; each judges for itself.
bool everyone(bool ok) { return ok; }

collResult_t joinComm(collComm_t *comm, int rank, int nranks) {
  if (getenv("WORLD_SIZE"))
    return collCommInitEnv(comm);
  collUniqueId id;
  if (collResult_t r = collGetUniqueId(&id))
    return r;
  return collCommInitRank(comm, nranks, id, rank);
}

void leaveRanks() {}

#endif
