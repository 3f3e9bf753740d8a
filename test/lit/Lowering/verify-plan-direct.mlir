// coll-verify-plan checks direct destinations: the receiving step must
// store exactly there, and must not reduce into it (the sender's store
// would overwrite what the reduction reads).
// RUN: collc-opt %s -split-input-file -verify-diagnostics --coll-verify-plan

coll.plan @ring : allreduce ranks(2) chunks(2) inplace {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(1) channel(0) protocol(Simple) direct_recv direct_send {
      // expected-note@+1 {{the send is here}}
      coll.send in[0][1] direct(in[1][1])
      coll.recv_reduce_copy_send in[0][0] -> in[0][0] direct(in[1][0])
      coll.recv -> in[0][1]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(0) channel(0) protocol(Simple) direct_recv direct_send {
      coll.send in[1][0]
      // expected-error@+1 {{rank 1, threadblock 0, step 1 (recv_reduce_copy_send) does not just store what it receives in in[1][1], where its sender may store it directly}}
      coll.recv_reduce_copy_send in[1][1] -> in[1][1] direct(in[0][1])
      coll.recv -> in[1][0]
    }
  }
}

// -----

coll.plan @ring : allreduce ranks(2) chunks(2) inplace {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(1) channel(0) protocol(Simple) direct_recv direct_send {
      coll.send in[0][1]
      // expected-note@+1 {{the send is here}}
      coll.recv_reduce_copy_send in[0][0] -> in[0][0] direct(in[1][1])
      coll.recv -> in[0][1]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(0) channel(0) protocol(Simple) direct_recv direct_send {
      coll.send in[1][0]
      coll.recv_reduce_copy_send in[1][1] -> in[1][1] direct(in[0][1])
      // expected-error@+1 {{rank 1, threadblock 0, step 2 (recv) does not just store what it receives in in[1][1], where its sender may store it directly}}
      coll.recv -> in[1][0]
    }
  }
}
