// coll-fuse must not turn a deadlock-free plan into one that deadlocks.
//
// Rank 0, threadblock 1 depends on the receive of threadblock 0 (deps(0:1)).
// Fusing that receive with the send after it makes the dependent wait for
// the send as well, which needs room on the connection 0 -> 2; that room
// comes from rank 2, threadblock 0, which first waits (deps(1:0)) for the
// message threadblock 1 of rank 0 is now unable to send: a cycle. Unfused,
// the plan finishes. (Fails today: "deadlock: rank 0, threadblock 0, step 1
// (recv_copy_send) waits forever for room to send to rank 2 on channel 0".)
// Not fusing a receive that other threadblocks depend on avoids it.
//
// RUN: collc-opt %s --coll-verify-plan -o /dev/null
// RUN: collc-opt %s --coll-fuse --coll-verify-plan | FileCheck %s
// CHECK: coll.plan @fuse_deps

coll.plan @fuse_deps : allgather ranks(3) chunks(1) scratch {t = 1 : i64} {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(2) channel(0) {
      coll.send in[0][0]
      coll.recv -> out[0][1]
      coll.send out[0][1]
    }
    coll.threadblock 1 send(2) channel(1) {
      coll.send out[0][1] deps(0:1)
    }
    coll.threadblock 2 channel(0) {
      coll.local_copy in[0][0] -> out[0][0]
    }
    coll.threadblock 3 recv(2) channel(0) {
      coll.recv -> out[0][2]
    }
    coll.threadblock 4 send(1) channel(0) {
      coll.send in[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 send(0) channel(0) {
      coll.send in[1][0]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[1][0] -> out[1][1]
    }
    coll.threadblock 2 recv(0) channel(0) {
      coll.recv -> out[1][0]
    }
    coll.threadblock 3 recv(2) channel(0) {
      coll.recv -> out[1][2]
    }
  }
  coll.rank 2 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[2][0] deps(1:0)
      coll.recv -> out[2][1]
    }
    coll.threadblock 1 recv(0) channel(1) {
      coll.recv -> t[2][0]
    }
    coll.threadblock 2 send(0) channel(0) {
      coll.send in[2][0]
    }
    coll.threadblock 3 send(1) channel(0) {
      coll.send in[2][0]
    }
    coll.threadblock 4 channel(0) {
      coll.local_copy in[2][0] -> out[2][2]
    }
  }
}
