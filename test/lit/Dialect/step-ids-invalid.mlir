// The verifier's checks of step ids and of the deps that name them.
// RUN: collc-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

coll.plan @p : allreduce ranks(2) chunks(2) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send in[0][0] id(3)
      // expected-error@+1 {{'coll.send' op has id 2 after a step with id 3; ids must increase along a threadblock}}
      coll.send in[0][1] id(2)
    }
  }
}

// -----

coll.plan @p : allreduce ranks(2) chunks(2) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send in[0][0] id(3)
      // expected-error@+1 {{'coll.send' op has id 3 after a step with id 3; ids must increase along a threadblock}}
      coll.send in[0][1] id(3)
    }
  }
}

// -----

// Ids are names, not positions: threadblock 0 has two steps, 0 and 7.
coll.plan @p : allreduce ranks(2) chunks(2) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send in[0][0]
      coll.send in[0][1] id(7)
    }
    coll.threadblock 1 channel(0) {
      // expected-error@+1 {{'coll.local_copy' op depends on step 1 of threadblock 0, which has no step 1 (it has 2 steps)}}
      coll.local_copy in[0][0] -> out[0][0] deps(0:1)
    }
  }
}

// -----

coll.plan @p : allreduce ranks(2) chunks(2) {
  coll.rank 0 {
    coll.threadblock 0 channel(0) {
      // expected-error@+1 {{'coll.local_copy' op depends on unknown threadblock 4}}
      coll.local_copy in[0][0] -> out[0][0] deps(4:0)
    }
  }
}

// -----

coll.plan @p : allreduce ranks(2) chunks(2) {
  coll.rank 0 {
    coll.threadblock 0 channel(0) {
      // expected-error@+1 {{'coll.local_copy' op depends on its own threadblock 0}}
      coll.local_copy in[0][0] -> out[0][0] deps(0:0)
    }
  }
}

// -----

coll.plan @p : allreduce ranks(1) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 channel(0) {
      // expected-error@+1 {{'test.step' op is not a step, so it is not allowed in a coll.threadblock}}
      "test.step"() : () -> ()
    }
  }
}
