// Correct hand-written plans pass coll-verify-plan (with and without the
// MSCCL limits) and come out unchanged: the pass only checks.
//
// RUN: collc-opt %s --coll-verify-plan > %t.verified
// RUN: collc-opt %s > %t.parsed
// RUN: diff %t.parsed %t.verified
// RUN: collc-opt %s --coll-verify-plan=msccl-limits=true | FileCheck %s
// RUN: collc-opt %s --coll-fuse --coll-verify-plan -o /dev/null

// CHECK-LABEL: coll.plan @ring3
// CHECK:         coll.recv_reduce_send in[0][1]
// CHECK-LABEL: coll.plan @tree
// CHECK:         coll.recv_reduce_copy in[0][0] -> in[0][0] deps(0:0)
// CHECK-LABEL: coll.plan @chan31

// The fused ring allreduce on 3 ranks.
coll.plan @ring3 : allreduce ranks(3) chunks(3) inplace {
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

// A reduce-then-broadcast tree rooted at rank 0 over ranks 1 and 2, with
// cross-threadblock deps: the second receive-reduce waits for the first, the
// broadcasts for the second, and the broadcast receives overwrite chunks
// only after they were sent (write after read).
coll.plan @tree : allreduce ranks(3) chunks(1) inplace {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(1) channel(0) {
      coll.recv_reduce_copy in[0][0] -> in[0][0]
      coll.send in[0][0] deps(1:0)
    }
    coll.threadblock 1 recv(2) send(2) channel(0) {
      coll.recv_reduce_copy in[0][0] -> in[0][0] deps(0:0)
      coll.send in[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(0) channel(0) {
      coll.send in[1][0]
      coll.recv -> in[1][0]
    }
  }
  coll.rank 2 {
    coll.threadblock 0 recv(0) send(0) channel(0) {
      coll.send in[2][0]
      coll.recv -> in[2][0]
    }
  }
}

// The highest channel MSCCL allows, 31.
coll.plan @chan31 : allgather ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(1) channel(31) {
      coll.send in[0][0]
      coll.recv -> out[0][1]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[0][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(0) channel(31) {
      coll.send in[1][0]
      coll.recv -> out[1][0]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[1][0] -> out[1][1]
    }
  }
}
