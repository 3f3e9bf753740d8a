// coll-verify-plan's errors name the rank, threadblock and step. A message
// left in a FIFO is reported at its send, but the text names only the
// connection ("rank 0 sends to rank 1 on channel 0 a message nobody
// receives"); it should also name the sending threadblock and step, as the
// other run-time errors do.
//
// RUN: not collc-opt %s --coll-verify-plan 2>&1 | FileCheck %s
// CHECK: error: {{.*}}rank 0, threadblock 0, step 1 (send){{.*}}nobody receives

coll.plan @missing_recv : allgather ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(1) channel(0) {
      coll.send in[0][0]
      coll.send in[0][0]
      coll.recv -> out[0][1]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[0][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(0) channel(0) {
      coll.send in[1][0]
      coll.recv -> out[1][0]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[1][0] -> out[1][1]
    }
  }
}
