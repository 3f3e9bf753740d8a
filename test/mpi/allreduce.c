/* collCommInitMPI under mpirun: every rank joins through MPI, registers a
 * compiled ring allreduce and calls collAllReduce; the sums are checked
 * exactly against MPI_Allreduce of the same inputs. */
#include <mpi.h>

#include "collrt.h"
#include "collrt_mpi.h"

#include <stdio.h>
#include <stdlib.h>

/* The descriptor the generated C++ defines; C only passes its address on. */
extern const char collc_algorithm_ring[];

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  collComm_t comm;
  collResult_t r = collCommInitMPI(&comm, MPI_COMM_WORLD);
  if (r != collSuccess) {
    fprintf(stderr, "rank %d: %s: %s\n", rank, collGetErrorString(r), collGetLastError(NULL));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const size_t count = 100003;
  int *in = malloc(count * sizeof(int)), *out = malloc(count * sizeof(int));
  int *want = malloc(count * sizeof(int));
  for (size_t i = 0; i < count; ++i)
    in[i] = (int)((i * 7 + (size_t)rank * 13) % 101) - 50;
  r = collRegisterAlgorithm(comm, collc_algorithm_ring);
  if (r == collSuccess)
    r = collAllReduce(in, out, count, collInt32, collSum, comm, NULL);
  if (r != collSuccess) {
    fprintf(stderr, "rank %d: %s: %s\n", rank, collGetErrorString(r), collGetLastError(comm));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Allreduce(in, want, (int)count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  long wrong = 0;
  for (size_t i = 0; i < count; ++i)
    wrong += out[i] != want[i];
  long total = 0;
  MPI_Reduce(&wrong, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%s: %d ranks, %zu ints, %ld wrong\n", total ? "FAIL" : "PASS", n, count, total);
  collCommDestroy(comm);
  MPI_Finalize();
  return total != 0;
}
