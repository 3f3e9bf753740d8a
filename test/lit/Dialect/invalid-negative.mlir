// Negative values of the integer attributes must be rejected. Channels, ids
// and depths are constrained in ODS; the verifiers compare the others as
// int64_t: the I64Attr accessors return uint64_t, on which `ranks < 1`,
// `chunks < 1` and `root < 0` would never see a negative number.
// RUN: collc-opt %s -split-input-file -verify-diagnostics

coll.algorithm @a : allreduce ranks(2) chunks(1) {
  // expected-error@+1 {{'coll.copy' op attribute 'channel' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  coll.copy in[0][0] -> out[0][0] channel(-1)
}

// -----

coll.algorithm @a : allreduce ranks(2) chunks(1) {
  // expected-error@+1 {{'coll.reduce' op attribute 'channel' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  coll.reduce in[0][0], in[1][0] -> out[0][0] channel(-5)
}

// -----

coll.algorithm @a : allreduce ranks(2) chunks(1) {
  // expected-error@+1 {{'coll.copy' op attribute 'pipeline' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  coll.copy in[0][0] -> out[0][0] pipeline(-1)
}

// -----

coll.algorithm @a : allreduce ranks(2) chunks(1) {
  // expected-error@+1 {{'coll.reduce' op attribute 'pipeline' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  coll.reduce in[0][0], in[1][0] -> out[0][0] pipeline(-2)
}

// -----

// expected-error@+1 {{'coll.algorithm' op ranks must be in 1 .. 1048576, got -1}}
coll.algorithm @a : allreduce ranks(-1) chunks(1) {
}

// -----

// expected-error@+1 {{'coll.algorithm' op chunks must be in 1 .. 549755813888 for 2 ranks, got -3}}
coll.algorithm @a : allreduce ranks(2) chunks(-3) {
}

// -----

// expected-error@+1 {{'coll.algorithm' op root -1 is not a rank of 2}}
coll.algorithm @a : broadcast ranks(2) chunks(1) root(-1) {
}

// -----

coll.plan @p : allreduce ranks(2) chunks(1) {
  coll.rank 0 {
    // expected-error@+1 {{'coll.threadblock' op attribute 'channel' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
    coll.threadblock 0 send(1) channel(-1) {
    }
  }
}

// -----

coll.plan @p : allreduce ranks(2) chunks(1) {
  coll.rank 0 {
    // expected-error@+1 {{'coll.threadblock' op attribute 'id' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
    coll.threadblock -2 send(1) channel(0) {
    }
  }
}
