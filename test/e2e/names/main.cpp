//===- main.cpp - Four compiled allreduces in one host program ------------===//
//
// Runs each algorithm on emulated ranks, one process per rank, and checks
// every element: the ring for 4 ranks and for 8 through their entry points,
// the two-shot through its descriptor, registered from C (registry.c), all
// three from the plan library; the ring for 2, compiled into the program.
// Prints PASS and exits 0 when all four are right.
//
//===----------------------------------------------------------------------===//
#include "plans.h" // ring4, ring8 and twoshot, from the plan library
#include "ring2.h" // compiled into the program itself

#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern "C" const void *names_descriptor(int i);

namespace {

using Entry = collResult_t (*)(const void *, void *, size_t, collDataType_t, collRedOp_t,
                               collComm_t, collStream_t);

constexpr size_t kCount = 10007;

// One rank: rank 0 makes the id and hands it to the others over `pipes`.
int runRank(const char *name, Entry entry, const void *registered, int nranks, int rank,
            const std::vector<int> &pipes) {
  collUniqueId id;
  if (rank == 0) {
    if (collGetUniqueId(&id) != collSuccess)
      return 2;
    for (int r = 1; r < nranks; ++r)
      if (write(pipes[2 * r + 1], &id, sizeof id) != ssize_t(sizeof id))
        return 2;
  } else if (read(pipes[2 * rank], &id, sizeof id) != ssize_t(sizeof id)) {
    return 2;
  }
  collComm_t comm;
  if (collCommInitRank(&comm, nranks, id, rank) != collSuccess) {
    fprintf(stderr, "%s rank %d: %s\n", name, rank, collGetLastError(nullptr));
    return 2;
  }
  std::vector<int32_t> in(kCount), out(kCount, -1);
  for (size_t i = 0; i < kCount; ++i)
    in[i] = int32_t(rank + 1) * int32_t(i % 13 + 1);
  collResult_t r;
  if (registered) {
    r = collRegisterAlgorithm(comm, registered);
    if (r == collSuccess)
      r = collAllReduce(in.data(), out.data(), kCount, collInt32, collSum, comm, nullptr);
  } else {
    r = entry(in.data(), out.data(), kCount, collInt32, collSum, comm, nullptr);
  }
  if (r != collSuccess) {
    fprintf(stderr, "%s rank %d: %s\n", name, rank, collGetLastError(comm));
    return 1;
  }
  int wrong = 0;
  int32_t ranks = nranks * (nranks + 1) / 2;
  for (size_t i = 0; i < kCount; ++i)
    if (out[i] != ranks * int32_t(i % 13 + 1) && wrong++ < 3)
      fprintf(stderr, "%s rank %d: element %zu is %d, not %d\n", name, rank, i, out[i],
              ranks * int32_t(i % 13 + 1));
  collCommDestroy(comm);
  return wrong ? 1 : 0;
}

// Whether every rank of `name` exited 0.
bool run(const char *name, Entry entry, const void *registered, int nranks) {
  std::vector<int> pipes(2 * nranks);
  for (int r = 0; r < nranks; ++r)
    if (pipe(&pipes[2 * r]))
      return false;
  std::vector<pid_t> pids;
  for (int rank = 0; rank < nranks; ++rank) {
    pid_t pid = fork();
    if (pid == 0)
      _exit(runRank(name, entry, registered, nranks, rank, pipes));
    pids.push_back(pid);
  }
  for (int fd : pipes)
    close(fd);
  bool ok = true;
  for (pid_t pid : pids) {
    int status = 0;
    ok &= waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  printf("%s on %d ranks: %s\n", name, nranks, ok ? "right" : "WRONG");
  return ok;
}

} // namespace

int main() {
  // The descriptors C sees are the ones C++ sees.
  if (names_descriptor(0) != &collc_algorithm_ring4 ||
      names_descriptor(1) != &collc_algorithm_ring8 ||
      names_descriptor(2) != &collc_algorithm_twoshot) {
    printf("FAIL: the header declares other descriptors in C\n");
    return 1;
  }
  bool ok = run("ring4", collc_ring4, nullptr, 4);
  ok &= run("ring8", collc_ring8, nullptr, 8);
  ok &= run("twoshot", nullptr, names_descriptor(2), 4);
  ok &= run("ring2", collc_ring2, nullptr, 2);
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
