// A plan's kernel is compiled for its protocol where every FIFO of the
// plan has it (threadblocks without FIFOs do not count), else for any:
// each step then reads its FIFO's.
// RUN: collc-opt --coll-reroll %s | collc-translate --coll-to-cuda | FileCheck %s

module {
  // CHECK-LABEL: namespace one {
  // CHECK-NEXT: using namespace collc;
  // CHECK-NEXT: constexpr int32_t kProtocol = kLL;
  coll.plan @one : reduce ranks(2) chunks(2) root(1) scratch {acc = 2 : i64} protocol(LL) slots(8) attributes {coll.moves_chunks} {
    coll.rank 0 {
      coll.threadblock 0 send(1) channel(0) protocol(LL) {
        coll.send in[0][0:2]
      }
    }
    coll.rank 1 {
      coll.threadblock 0 recv(0) channel(0) protocol(LL) {
        coll.recv -> acc[1][0:2]
      }
      coll.threadblock 1 channel(0) protocol(Simple) {
        coll.local_reduce acc[1][0], in[1][0] -> out[1][0] deps(0:0)
        coll.local_reduce acc[1][1], in[1][1] -> out[1][1] deps(0:0)
      }
    }
  }
  // CHECK-LABEL: namespace mixed {
  // CHECK-NEXT: using namespace collc;
  // CHECK-NEXT: constexpr int32_t kProtocol = kAnyProtocol;
  coll.plan @mixed : reduce ranks(2) chunks(2) root(1) scratch {acc = 2 : i64} protocol(LL) slots(8) attributes {coll.moves_chunks} {
    coll.rank 0 {
      coll.threadblock 0 send(1) channel(0) protocol(LL) {
        coll.send in[0][0:2]
      }
    }
    coll.rank 1 {
      coll.threadblock 0 recv(0) channel(0) protocol(Simple) {
        coll.recv -> acc[1][0:2]
      }
      coll.threadblock 1 channel(0) protocol(Simple) {
        coll.local_reduce acc[1][0], in[1][0] -> out[1][0] deps(0:0)
        coll.local_reduce acc[1][1], in[1][1] -> out[1][1] deps(0:0)
      }
    }
  }
}
