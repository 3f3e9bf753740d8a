//===- join.h - How the app's ranks find each other -----------------------===//
#ifndef APP_JOIN_H
#define APP_JOIN_H

#include "collrt.h"

/// Starts this process's rank. Built with MPI (for mpirun), every process
/// is one rank of MPI_COMM_WORLD; otherwise the process is the only rank.
/// `localRank` is the rank's index on its node, which picks its GPU.
bool joinRanks(int *argc, char ***argv, int *rank, int *nranks, int *localRank);
/// Whether `ok` holds on every rank (collective).
bool everyone(bool ok);
/// Makes the communicator (collective): rank 0 makes the unique id and
/// shares it (by MPI_Bcast under mpirun).
collResult_t joinComm(collComm_t *comm, int rank, int nranks);
void leaveRanks();

#endif // APP_JOIN_H
