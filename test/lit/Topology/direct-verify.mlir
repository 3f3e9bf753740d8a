// Both ends of a connection must agree on direct transfer.
// RUN: collc-opt %s --coll-verify-plan -verify-diagnostics

coll.plan @p : allgather ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 channel(0) protocol(Simple) {
      coll.local_copy in[0][0] -> out[0][0]
    }
    coll.threadblock 1 send(1) channel(0) protocol(Simple) direct_send {
      coll.send in[0][0]
    }
    coll.threadblock 2 recv(1) channel(0) protocol(Simple) direct_recv {
      coll.recv -> out[0][1]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 channel(0) protocol(Simple) {
      coll.local_copy in[1][0] -> out[1][1]
    }
    coll.threadblock 1 send(0) channel(0) protocol(Simple) direct_send {
      coll.send in[1][0]
    }
    // expected-error@+1 {{rank 1, threadblock 2 and its sender, rank 0, disagree on direct transfer}}
    coll.threadblock 2 recv(0) channel(0) protocol(Simple) {
      coll.recv -> out[1][0]
    }
  }
}
