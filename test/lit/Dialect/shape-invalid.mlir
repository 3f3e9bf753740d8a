// The verifier checks that a threadblock's shape makes exactly its steps.
// RUN: collc-opt %s -split-input-file -verify-diagnostics

coll.plan @p : allgather ranks(2) chunks(2) {
  coll.shape 0 {
    coll.run send x 2 [#coll.affine<src "in"[(1 * r + 1 * k + 0) mod 2] x 1>]
  }
  coll.rank 1 {
    coll.threadblock 0 send(0) channel(0) shape(0) {
      // expected-error@+1 {{'coll.send' op does not match step 0 of run 'send' of shape 0: the src operand is not what its affine function gives}}
      coll.send in[1][0]
      coll.send in[1][0]
    }
  }
}

// -----

coll.plan @p : allgather ranks(2) chunks(2) {
  coll.shape 0 {
    coll.run send x 1 [#coll.table<src "in" x 1>]
  }
  coll.rank 0 {
    // expected-error@+1 {{'coll.threadblock' op has more steps than its shape 0}}
    coll.threadblock 0 send(1) channel(0) shape(0) {
      coll.send in[0][0]
      coll.send in[0][1]
    }
  }
}

// -----

coll.plan @p : allgather ranks(2) chunks(2) {
  coll.shape 0 {
    coll.run send x 1 [#coll.table<src "in" x 1>]
  }
  coll.rank 0 {
    coll.threadblock 0 recv(1) channel(0) shape(0) {
      // expected-error@+1 {{'coll.recv' op does not match step 0 of run 'send' of shape 0: another kind of step}}
      coll.recv -> out[0][1]
    }
  }
}

// -----

coll.plan @p : allgather ranks(2) chunks(2) {
  coll.rank 0 {
    // expected-error@+1 {{'coll.threadblock' op names unknown shape 3}}
    coll.threadblock 0 send(1) channel(0) shape(3) {
      coll.send in[0][0]
    }
  }
}

// -----

coll.plan @p : allgather ranks(2) chunks(2) {
  coll.shape 0 {
    coll.run send x 1 [#coll.table<src "out" x 1>]
  }
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) shape(0) {
      // expected-error@+1 {{'coll.send' op does not match step 0 of run 'send' of shape 0: another operand}}
      coll.send in[0][0]
    }
  }
}

// -----

coll.plan @p : allgather ranks(2) chunks(2) {
  coll.shape 0 {
    coll.run send x 1 [#coll.table<src "in" x 1>] waits(1)
  }
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) shape(0) {
      // expected-error@+1 {{'coll.send' op does not match step 0 of run 'send' of shape 0: another number of deps}}
      coll.send in[0][0]
    }
  }
}

// -----

// A run may name a direct destination that a step only stands in for, but
// not on a threadblock with a direct connection: its sender would store
// the step there.
coll.plan @p : allgather ranks(2) chunks(2) {
  coll.shape 0 {
    coll.run send x 1 [#coll.table<src "in" x 1>, #coll.table<direct "out" x 1>]
  }
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) protocol(Simple) direct_send shape(0) {
      // expected-error@+1 {{'coll.send' op does not match step 0 of run 'send' of shape 0: the run names a direct destination, which this step of a threadblock with a direct connection does not have}}
      coll.send in[0][0]
    }
  }
}

// -----

// Fields come in the order the primitive takes them.
coll.plan @p : allgather ranks(2) chunks(2) {
  coll.shape 0 {
    // expected-error@+1 {{'coll.run' op fields must be the peer, sources, destination and direct destination, in this order and each but the sources at most once}}
    coll.run recv x 1 [#coll.table<dst "in" x 1>, #coll.table<src "in" x 1>]
  }
}

// -----

coll.plan @p : allgather ranks(2) chunks(2) {
  coll.shape 0 {
    // expected-error@+1 {{'coll.run' op only get steps name a peer}}
    coll.run put x 1 [#coll.table<peer "" x 0>, #coll.table<src "in" x 1>]
  }
}

// -----

coll.plan @p : allgather ranks(2) chunks(2) {
  coll.shape 0 {
    // expected-error@+1 {{'coll.run' op only sending steps name a direct destination}}
    coll.run recv x 1 [#coll.table<dst "in" x 1>, #coll.table<direct "in" x 1>]
  }
}

// -----

coll.plan @p : allgather ranks(2) chunks(2) {
  coll.shape 0 {
    // expected-error@+1 {{'coll.run' op affine field must have a modulus of at least 1}}
    coll.run send x 1 [#coll.affine<src "in"[(1 * r + 0 * k + 0) mod 0] x 1>]
  }
}

// -----

coll.plan @p : allgather ranks(2) chunks(2) {
  coll.shape 0 {
    // expected-error@+1 {{custom op 'coll.run' expected string or keyword containing one of the following enum values for attribute 'step' [send, recv,}}
    coll.run sendd x 1 [#coll.table<src "in" x 1>]
  }
}

// -----

// fuse_next joins a load-reduce with the store of the chunk it reduced.
coll.plan @p : allreduce ranks(2) chunks(2) scratch {red = 1 : i64} {
  coll.shape 0 {
    // expected-error@+1 {{'coll.run' op fuse_next needs one multimem_ld_reduce step followed by a run of one multimem_st step that stores its chunk and waits for nothing, every operand affine}}
    coll.run multimem_ld_reduce x 1 [#coll.affine<src "in"[(1 * r + 0 * k + 0) mod 2] x 1>, #coll.affine<dst "red"[(0 * r + 0 * k + 0) mod 1] x 1>] fuse_next
    coll.run multimem_st x 1 [#coll.affine<src "in"[(1 * r + 0 * k + 0) mod 2] x 1>, #coll.affine<dst "out"[(1 * r + 0 * k + 0) mod 2] x 1>]
  }
}
