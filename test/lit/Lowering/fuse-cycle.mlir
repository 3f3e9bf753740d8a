// coll-fuse leaves a rank whose deps form a cycle as it is (it cannot order
// the rank's steps to see which stores are live), for coll-verify-plan to
// report the deadlock.
//
// RUN: collc-opt %s --coll-fuse | FileCheck %s
// RUN: not collc-opt %s --coll-fuse --coll-verify-plan 2>&1 | FileCheck %s --check-prefix=VERIFY

// CHECK-LABEL: coll.rank 1 {
// CHECK-NEXT:    coll.threadblock 0 recv(0) send(2) channel(0) {
// CHECK-NEXT:      coll.recv -> out[1][0] deps(1:0){{$}}
// CHECK-NEXT:      coll.send out[1][0]{{$}}
// CHECK-NEXT:    }
// CHECK-NEXT:    coll.threadblock 1 channel(0) {
// CHECK-NEXT:      coll.local_copy in[1][0] -> t[1][0] deps(0:1){{$}}
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// VERIFY: error: deadlock: rank 1, threadblock 0, step 0 (recv) waits forever for a step of another threadblock it depends on

coll.plan @cycle : broadcast ranks(3) chunks(1) root(0) scratch {t = 1 : i64} {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[0][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(2) channel(0) {
      coll.recv -> out[1][0] deps(1:0)
      coll.send out[1][0]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[1][0] -> t[1][0] deps(0:1)
    }
  }
  coll.rank 2 {
    coll.threadblock 0 recv(1) channel(0) {
      coll.recv -> out[2][0]
    }
  }
}
