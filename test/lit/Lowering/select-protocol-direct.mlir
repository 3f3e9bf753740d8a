// coll-select-protocol names each variant's algorithm and pairs the sending
// steps of direct connections (NVLink switch, Simple at both ends) with
// their receivers: the k-th sending step gets the destination of the k-th
// receiving step at the other end, where that step stores what arrives
// without reducing into it. In the ring, receivers that reduce and forward
// (recv_reduce_send) store nothing and those that reduce into what they
// store (recv_reduce_copy_send) read it, so only the all-gather half is
// direct. The plan verifier accepts the result. LL, PCIe and direct=false
// keep FIFOs everywhere.
// RUN: collc-opt %s --coll-select-protocol='topology=hgx-h100 protocol=Simple' --coll-verify-plan | FileCheck %s
// RUN: collc-opt %s --coll-select-protocol='topology=hgx-h100 protocol=LL' | FileCheck %s --check-prefix=FIFO --implicit-check-not=direct
// RUN: collc-opt %s --coll-select-protocol='topology=pcie-8 protocol=Simple' | FileCheck %s --check-prefix=FIFO --implicit-check-not=direct
// RUN: collc-opt %s --coll-select-protocol='topology=hgx-h100 protocol=Simple direct=false' | FileCheck %s --check-prefix=FIFO --implicit-check-not=direct

// CHECK-LABEL: coll.plan @ring_Simple : allreduce ranks(3) chunks(3) inplace bytes[0, {{[0-9]+}}) algorithm("ring") protocol(Simple) slots(8) {
// CHECK-NEXT: coll.rank 0 {
// CHECK-NEXT: coll.threadblock 0 recv(2) send(1) channel(0) protocol(Simple) direct_recv direct_send {
// CHECK-NEXT: coll.send in[0][2]{{$}}
// CHECK-NEXT: coll.recv_reduce_send in[0][1]{{$}}
// CHECK-NEXT: coll.recv_reduce_copy_send in[0][0] -> in[0][0] direct(in[1][0]){{$}}
// CHECK-NEXT: coll.recv_copy_send -> in[0][2] direct(in[1][2]){{$}}
// CHECK-NEXT: coll.recv -> in[0][1]{{$}}
// CHECK: coll.rank 2 {
// CHECK-NEXT: coll.threadblock 0 recv(1) send(0) channel(0) protocol(Simple) direct_recv direct_send {
// CHECK-NEXT: coll.send in[2][1]{{$}}
// CHECK-NEXT: coll.recv_reduce_send in[2][0]{{$}}
// CHECK-NEXT: coll.recv_reduce_copy_send in[2][2] -> in[2][2] direct(in[0][2]){{$}}
// CHECK-NEXT: coll.recv_copy_send -> in[2][1] direct(in[0][1]){{$}}
// CHECK-NEXT: coll.recv -> in[2][0]{{$}}

// FIFO: coll.plan @ring_{{[A-Za-z0-9]+}} : allreduce ranks(3) chunks(3) inplace bytes[0, {{[0-9]+}}) algorithm("ring") protocol({{[A-Za-z0-9]+}}) slots(8) {

module {
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
}
