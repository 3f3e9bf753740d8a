// coll-reroll gives threadblocks with the same runs of like steps one shape.
// Per run, an operand is (a*r + b*k + c) mod m over the rank r and the step
// k within the run where one function fits every member, else a table
// entry; deps always come from the table. The plan keeps its steps, and the
// verifier checks that each shape makes them.
// RUN: collc-opt %s -split-input-file --coll-reroll | FileCheck %s
// RUN: collc-opt %s -split-input-file --coll-reroll --coll-reroll | FileCheck %s

// A 3-rank ring: one shape; chunk indices fall by one per step, mod 3.
// CHECK-LABEL: coll.plan @ring
// CHECK-NEXT:    coll.shape 0 {
// CHECK-NEXT:      coll.run send x 1 [#coll.affine<src "in"[(1 * r + 0 * k + 2) mod 3] x 1>]
// CHECK-NEXT:      coll.run recv_reduce_send x 1 [#coll.affine<src "in"[(1 * r + 0 * k + 1) mod 3] x 1>]
// CHECK-NEXT:      coll.run recv_reduce_copy_send x 1 [#coll.affine<src "in"[(1 * r + 0 * k + 0) mod 3] x 1>, #coll.affine<dst "in"[(1 * r + 0 * k + 0) mod 3] x 1>]
// CHECK-NEXT:      coll.run recv_copy_send x 1 [#coll.affine<dst "in"[(1 * r + 0 * k + 2) mod 3] x 1>]
// CHECK-NEXT:      coll.run recv x 1 [#coll.affine<dst "in"[(1 * r + 0 * k + 1) mod 3] x 1>]
// CHECK-NEXT:    }
// CHECK-NOT:     coll.shape
// CHECK:         coll.threadblock 0 recv(2) send(1) channel(0) shape(0) {
// CHECK:         coll.threadblock 0 recv(0) send(2) channel(0) shape(0) {
// CHECK:         coll.threadblock 0 recv(1) send(0) channel(0) shape(0) {
coll.plan @ring : allreduce ranks(3) chunks(3) inplace {
  coll.rank 0 {
    coll.threadblock 0 recv(2) send(1) channel(0) {
      coll.send in[0][2]
      coll.recv_reduce_send in[0][1]
      coll.recv_reduce_copy_send in[0][0] -> in[0][0]
      coll.recv_copy_send -> in[0][2]
      coll.recv -> in[0][1]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(2) channel(0) {
      coll.send in[1][0]
      coll.recv_reduce_send in[1][2]
      coll.recv_reduce_copy_send in[1][1] -> in[1][1]
      coll.recv_copy_send -> in[1][0]
      coll.recv -> in[1][2]
    }
  }
  coll.rank 2 {
    coll.threadblock 0 recv(1) send(0) channel(0) {
      coll.send in[2][1]
      coll.recv_reduce_send in[2][0]
      coll.recv_reduce_copy_send in[2][2] -> in[2][2]
      coll.recv_copy_send -> in[2][1]
      coll.recv -> in[2][0]
    }
  }
}

// -----

// Sends of chunks 0, 3, 1 of 4 follow no affine function of the step: a
// table. (Chunks 0, 1, 0 of 2 would: k mod 2.)
// Waits are table entries. Different runs make different shapes.
// CHECK-LABEL: coll.plan @irregular
// CHECK-NEXT:    coll.shape 0 {
// CHECK-NEXT:      coll.run send x 3 [#coll.table<src "t" x 1>]
// CHECK-NEXT:    }
// CHECK-NEXT:    coll.shape 1 {
// CHECK-NEXT:      coll.run local_copy x 1 [#coll.affine<src "in"[(0 * r + 0 * k + 0) mod 2] x 1>, #coll.affine<dst "out"[(0 * r + 0 * k + 0) mod 4] x 1>] waits(1)
// CHECK-NEXT:    }
// CHECK:         coll.threadblock 0 send(1) channel(0) shape(0) {
// CHECK:         coll.threadblock 1 channel(0) shape(1) {
coll.plan @irregular : allgather ranks(2) chunks(2) scratch {t = 4 : i64} {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send t[0][0]
      coll.send t[0][3]
      coll.send t[0][1]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[0][0] -> out[0][0] deps(0:2)
    }
  }
}

// -----

// A threadblock without a direct connection shares the shape of those with
// one: its step carries a stand-in (its own chunk index, here 0 of `in`,
// which the affine function of the others' `out` indices also gives).
// CHECK-LABEL: coll.plan @standin
// CHECK-NEXT:    coll.shape 0 {
// CHECK-NEXT:      coll.run send x 1 [#coll.affine<src "in"[(0 * r + 0 * k + 0) mod 1] x 1>, #coll.affine<direct "out"[(0 * r + 0 * k + 0) mod 3] x 1>]
// CHECK-NEXT:    }
// CHECK-NOT:     coll.shape
// CHECK:         coll.threadblock 0 send(1) channel(0) protocol(Simple) direct_send shape(0) {
// CHECK:         coll.threadblock 0 send(2) channel(0) protocol(Simple) shape(0) {
coll.plan @standin : allgather ranks(3) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) protocol(Simple) direct_send {
      coll.send in[0][0] direct(out[1][0])
    }
  }
  coll.rank 1 {
    coll.threadblock 0 send(2) channel(0) protocol(Simple) {
      coll.send in[1][0]
    }
  }
}

// -----

// One with a direct connection but no direct destination in that step may
// not (its sender would store there): then which steps are direct tells the
// shapes apart.
// CHECK-LABEL: coll.plan @apart
// CHECK-NEXT:    coll.shape 0 {
// CHECK-NEXT:      coll.run send x 1 [#coll.affine<src "in"[(0 * r + 0 * k + 0) mod 1] x 1>, #coll.affine<direct "out"[(0 * r + 0 * k + 0) mod 3] x 1>]
// CHECK-NEXT:    }
// CHECK-NEXT:    coll.shape 1 {
// CHECK-NEXT:      coll.run send x 1 [#coll.affine<src "in"[(0 * r + 0 * k + 0) mod 1] x 1>]
// CHECK-NEXT:    }
// CHECK-NOT:     coll.shape
// CHECK:         coll.threadblock 0 send(1) channel(0) protocol(Simple) direct_send shape(0) {
// CHECK:         coll.threadblock 0 send(2) channel(0) protocol(Simple) shape(1) {
// CHECK:         coll.threadblock 0 send(0) channel(0) protocol(Simple) direct_send shape(1) {
coll.plan @apart : allgather ranks(3) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) protocol(Simple) direct_send {
      coll.send in[0][0] direct(out[1][0])
    }
  }
  coll.rank 1 {
    coll.threadblock 0 send(2) channel(0) protocol(Simple) {
      coll.send in[1][0]
    }
  }
  coll.rank 2 {
    coll.threadblock 0 send(0) channel(0) protocol(Simple) direct_send {
      coll.send in[2][0]
    }
  }
}
