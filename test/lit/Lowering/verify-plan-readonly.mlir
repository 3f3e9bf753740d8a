// coll-verify-plan must reject a plan that writes the input buffer of a
// collective that is not in place: `in` is read-only there (the global
// verifier says "writes in[1][0], but 'in' is read-only"). Rank 1 reduces
// into in[1][0] and copies the sum to out[1][0]; the postcondition holds, so
// today the plan is accepted.
//
// RUN: not collc-opt %s --coll-verify-plan 2>&1 | FileCheck %s
// CHECK: error: {{.*}}rank 1, threadblock 0, step 1 (recv_reduce_copy){{.*}}in[1][0]{{.*}}read-only

coll.plan @readonly : allreduce ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(1) channel(0) {
      coll.send in[0][0]
      coll.recv_reduce_copy in[0][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(0) channel(0) {
      coll.send in[1][0]
      coll.recv_reduce_copy in[1][0] -> in[1][0]
      coll.local_copy in[1][0] -> out[1][0]
    }
  }
}
