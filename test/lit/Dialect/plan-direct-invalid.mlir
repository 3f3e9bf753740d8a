// The verifier's checks of `direct_dst` and `algorithm`.
// RUN: collc-opt %s -split-input-file -verify-diagnostics

coll.plan @p : allreduce ranks(2) chunks(2) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      // expected-error@+1 {{'coll.send' op has a direct destination, but its threadblock does not send directly}}
      coll.send in[0][0] direct(in[1][0])
    }
  }
}

// -----

coll.plan @p : allreduce ranks(3) chunks(2) {
  coll.rank 0 {
    coll.threadblock 0 recv(2) send(1) channel(0) direct_send {
      // expected-error@+1 {{'coll.recv_copy_send' op has a direct destination on rank 2, not on its send peer 1}}
      coll.recv_copy_send -> in[0][0] direct(in[2][0])
    }
  }
}

// -----

coll.plan @p : allreduce ranks(2) chunks(2) {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(1) channel(0) direct_send {
      // expected-error@+1 {{'coll.recv_reduce_copy_send' op has a direct destination in unknown buffer 'tmp'}}
      coll.recv_reduce_copy_send in[0][0] -> in[0][0] direct(tmp[1][0])
    }
  }
}

// -----

coll.plan @p : allreduce ranks(2) chunks(2) {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(1) channel(0) direct_send {
      // expected-error@+1 {{'coll.recv_reduce_send' op direct destination chunks [1, 3) of out are out of range [0, 2)}}
      coll.recv_reduce_send in[0][0:2] direct(out[1][1:3])
    }
  }
}

// -----

coll.plan @p : allreduce ranks(2) chunks(2) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) direct_send {
      // expected-error@+1 {{'coll.send' op direct destination has 1 chunks, but the step sends 2}}
      coll.send in[0][0:2] direct(out[1][0])
    }
  }
}

// -----

// expected-error@+1 {{'coll.plan' op algorithm name must not be empty}}
coll.plan @p : allreduce ranks(2) chunks(2) algorithm("") {
}

// -----

// Only sending steps have a direct destination.
coll.plan @p : allreduce ranks(2) chunks(2) {
  coll.rank 0 {
    coll.threadblock 0 recv(1) channel(0) direct_recv {
      // expected-error@+2 {{not found for custom op 'direct'}}
      // expected-note@+1 {{Available dialects}}
      coll.recv -> in[0][0] direct(in[1][0])
    }
  }
}
