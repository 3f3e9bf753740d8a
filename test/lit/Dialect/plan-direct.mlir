// A plan variant names its algorithm, and each sending step of a direct
// connection may name its receiver's destination; both print and parse
// back, in every sending step.
// RUN: collc-opt %s | collc-opt | FileCheck %s
// RUN: collc-opt %s -mlir-print-op-generic | collc-opt | FileCheck %s

// CHECK-LABEL: coll.plan @ring_Simple : allreduce ranks(3) chunks(3) inplace bytes[0, 1024) algorithm("ring") {
// CHECK: coll.threadblock 0 recv(2) send(1) channel(0) protocol(Simple) direct_recv direct_send {
// CHECK-NEXT: coll.send in[0][2]{{$}}
// CHECK-NEXT: coll.recv_reduce_send in[0][1]{{$}}
// CHECK-NEXT: coll.recv_reduce_copy_send in[0][0] -> in[0][0] direct(in[1][0]){{$}}
// CHECK-NEXT: coll.recv_copy_send -> in[0][2] direct(in[1][2]) deps(1:0){{$}}
// CHECK-NEXT: coll.recv -> in[0][1]{{$}}
coll.plan @ring_Simple : allreduce ranks(3) chunks(3) inplace bytes[0, 1024) algorithm("ring") {
  coll.rank 0 {
    coll.threadblock 0 recv(2) send(1) channel(0) protocol(Simple) direct_recv direct_send {
      coll.send in[0][2]
      coll.recv_reduce_send in[0][1]
      coll.recv_reduce_copy_send in[0][0] -> in[0][0] direct(in[1][0])
      coll.recv_copy_send -> in[0][2] direct(in[1][2]) deps(1:0)
      coll.recv -> in[0][1]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[0][1] -> in[0][1]
    }
  }
}

// Runs of chunks: the destination is as wide as what the step sends.
// CHECK-LABEL: coll.plan @wide
// CHECK: coll.send in[0][0:2] direct(out[1][2:4])
// CHECK-NEXT: coll.recv_reduce_send in[0][0:2] direct(out[1][0:2])
coll.plan @wide : allgather ranks(2) chunks(2) {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(1) channel(0) direct_send {
      coll.send in[0][0:2] direct(out[1][2:4])
      coll.recv_reduce_send in[0][0:2] direct(out[1][0:2])
    }
  }
}
