// coll-verify-plan must reject two threadblocks of one rank that access a
// chunk, at least one of them writing it, with nothing ordering them (no
// deps, no chain of steps and messages): the result then depends on which
// runs first. Here threadblock 0 copies in[0][0] into out[0][0] and
// threadblock 1 reduces the received chunk into out[0][0]; without deps(0:0)
// on the receive-reduce it may read out[0][0] before the copy. The verifier
// orders steps by vector clocks (deps, and messages through other ranks),
// not by the order its symbolic run happens to take, so it reports the race
// whichever threadblock runs first. The same plan with the dep passes.
//
// RUN: not collc-opt %s --coll-verify-plan -split-input-file 2>&1 | FileCheck %s
// CHECK: verify-plan-race.mlir:[[# @LINE + 9]]:7: error: race: rank 0, threadblock 1, step 0 (recv_reduce_copy) and rank 0, threadblock 0, step 0 (local_copy) both access out[0][0] and nothing orders them; add a dependency{{$}}
// CHECK-NOT: error:

coll.plan @race : allreduce ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 channel(0) {
      coll.local_copy in[0][0] -> out[0][0]
    }
    coll.threadblock 1 recv(1) send(1) channel(0) {
      coll.recv_reduce_copy out[0][0] -> out[0][0]
      coll.send out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(0) channel(0) {
      coll.send in[1][0]
      coll.recv -> out[1][0]
    }
  }
}

// -----

coll.plan @ordered : allreduce ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 channel(0) {
      coll.local_copy in[0][0] -> out[0][0]
    }
    coll.threadblock 1 recv(1) send(1) channel(0) {
      coll.recv_reduce_copy out[0][0] -> out[0][0] deps(0:0)
      coll.send out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(0) channel(0) {
      coll.send in[1][0]
      coll.recv -> out[1][0]
    }
  }
}
