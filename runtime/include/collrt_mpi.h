/*===- collrt_mpi.h - Bootstrap a communicator from MPI --------------------===
 *
 * For programs started by mpirun: rank 0 of `mpiComm` makes the unique id
 * and broadcasts it, then every rank joins. Header-only, so that collrt
 * itself does not depend on MPI; include it after <mpi.h>.
 *===----------------------------------------------------------------------===*/
#ifndef COLLRT_MPI_H
#define COLLRT_MPI_H

#include "collrt.h"

#include <mpi.h>

static inline collResult_t collCommInitMPI(collComm_t *comm, MPI_Comm mpiComm) {
  int rank = 0, nranks = 0;
  if (MPI_Comm_rank(mpiComm, &rank) != MPI_SUCCESS ||
      MPI_Comm_size(mpiComm, &nranks) != MPI_SUCCESS)
    return collSystemError;
  collUniqueId id;
  collResult_t made = collSuccess;
  if (rank == 0)
    made = collGetUniqueId(&id);
  /* Everyone learns whether the root could make an id before waiting on it. */
  int ok = made == collSuccess;
  if (MPI_Bcast(&ok, 1, MPI_INT, 0, mpiComm) != MPI_SUCCESS)
    return collSystemError;
  if (!ok)
    return rank == 0 ? made : collRemoteError;
  if (MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, mpiComm) != MPI_SUCCESS)
    return collSystemError;
  return collCommInitRank(comm, nranks, id, rank);
}

#endif /* COLLRT_MPI_H */
