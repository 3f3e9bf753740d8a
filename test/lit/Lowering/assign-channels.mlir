// coll-assign-channels numbers a plan's channels 0, 1, ... in order of first
// use (rank by rank, threadblock by threadblock), and refuses plans over the
// runtime's limits: too many channels (at the plan) or more threadblocks on
// a rank than can be co-resident (at the rank). Renumbered plans still pass
// coll-verify-plan.
//
// RUN: collc-opt %s -split-input-file '--coll-assign-channels=max-channels=2 max-threadblocks=4' -verify-diagnostics | FileCheck %s
// RUN: collc-opt %s -split-input-file --coll-assign-channels | FileCheck %s --check-prefix=DEFAULT
// RUN: collc-opt %s -split-input-file --coll-assign-channels --coll-verify-plan -o /dev/null

// Channel 7 is used first, so it becomes 0, and 3 becomes 1.
// CHECK-LABEL: coll.plan @sparse
// CHECK-NEXT:    coll.rank 0 {
// CHECK-NEXT:      coll.threadblock 0 send(1) channel(0) {
// CHECK:           coll.threadblock 1 recv(1) channel(1) {
// CHECK:           coll.threadblock 2 channel(1) {
// CHECK:         coll.rank 1 {
// CHECK-NEXT:      coll.threadblock 0 recv(0) channel(0) {
// CHECK:           coll.threadblock 1 send(0) channel(1) {
// CHECK:           coll.threadblock 2 channel(0) {
coll.plan @sparse : allgather ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(7) {
      coll.send in[0][0]
    }
    coll.threadblock 1 recv(1) channel(3) {
      coll.recv -> out[0][1]
    }
    coll.threadblock 2 channel(3) {
      coll.local_copy in[0][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) channel(7) {
      coll.recv -> out[1][0]
    }
    coll.threadblock 1 send(0) channel(3) {
      coll.send in[1][0]
    }
    coll.threadblock 2 channel(7) {
      coll.local_copy in[1][0] -> out[1][1]
    }
  }
}

// -----

// Three channels where two are allowed.
// DEFAULT-LABEL: coll.plan @three
// DEFAULT:         coll.threadblock 0 channel(0) {
// DEFAULT:         coll.threadblock 1 send(1) channel(1) {
// DEFAULT:         coll.threadblock 2 recv(1) channel(2) {
// expected-error@+1 {{the plan uses 3 channels; at most 2 are available}}
coll.plan @three : allgather ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 channel(0) {
      coll.local_copy in[0][0] -> out[0][0]
    }
    coll.threadblock 1 send(1) channel(4) {
      coll.send in[0][0]
    }
    coll.threadblock 2 recv(1) channel(9) {
      coll.recv -> out[0][1]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 channel(0) {
      coll.local_copy in[1][0] -> out[1][1]
    }
    coll.threadblock 1 recv(0) channel(4) {
      coll.recv -> out[1][0]
    }
    coll.threadblock 2 send(0) channel(9) {
      coll.send in[1][0]
    }
  }
}

// -----

// Five threadblocks on rank 0 where four may run at once.
// DEFAULT-LABEL: coll.plan @five
// DEFAULT:         coll.threadblock 4 channel(0) {
coll.plan @five : allgather ranks(2) chunks(2) {
  // expected-error@+1 {{rank 0 needs 5 threadblocks; at most 4 can run at once (use fewer peers per channel or fewer instances)}}
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 1 recv(1) channel(0) {
      coll.recv -> out[0][2]
    }
    coll.threadblock 2 send(1) channel(1) {
      coll.send in[0][1]
    }
    coll.threadblock 3 recv(1) channel(1) {
      coll.recv -> out[0][3]
    }
    coll.threadblock 4 channel(0) {
      coll.local_copy in[0][0:2] -> out[0][0:2]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[1][0]
    }
    coll.threadblock 1 send(0) channel(0) {
      coll.send in[1][0]
    }
    coll.threadblock 2 recv(0) channel(1) {
      coll.recv -> out[1][1]
    }
    coll.threadblock 3 send(0) channel(1) {
      coll.send in[1][1]
      coll.local_copy in[1][0:2] -> out[1][2:4]
    }
  }
}
