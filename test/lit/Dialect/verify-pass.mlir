// --coll-verify on hand-written IR: each semantic error at the op (or, for
// the postcondition, at the algorithm), with the note at the last writer.
// RUN: collc-opt %s --coll-verify -split-input-file -verify-diagnostics

coll.algorithm @a : allreduce ranks(2) chunks(1) {
  // expected-error@+1 {{writes in[1][0], but 'in' is read-only: declare the algorithm 'inplace' or write to 'out'}}
  coll.copy in[0][0] -> in[1][0]
}

// -----

coll.algorithm @a : allreduce ranks(2) chunks(1) {
  // expected-error@+1 {{reads out[0][0], which has not been written yet}}
  coll.copy out[0][0] -> out[1][0]
}

// -----

coll.algorithm @a : allreduce ranks(2) chunks(2) scratch {t = 2 : i64} {
  coll.copy in[0][0] -> t[0][0]
  // expected-error@+1 {{reads t[0][1], which has not been written yet}}
  coll.reduce in[1][0:2], t[0][0:2] -> out[1][0:2]
}

// -----

coll.algorithm @a : allreduce ranks(2) chunks(2) {
  // expected-error@+1 {{combines different input chunks: in[1][1] holds in[1][1] but the other terms hold in[0][0]}}
  coll.reduce in[0][0], in[1][1] -> out[0][0]
}

// -----

coll.algorithm @a : allreduce ranks(3) chunks(1) inplace {
  coll.reduce in[0][0], in[1][0] -> in[1][0]
  // expected-error@+1 {{counts rank 0's contribution twice: in[1][0] holds in[0 .. 2][0] and the other terms hold in[0][0]}}
  coll.reduce in[0][0], in[1][0] -> in[2][0]
}

// -----

// The postcondition is checked at the algorithm; the note is at the op that
// last wrote the chunk.
// expected-error@+1 {{allreduce postcondition fails: out[1][0] holds in[1][0] but rank 0's contribution is missing}}
coll.algorithm @a : allreduce ranks(2) chunks(1) {
  coll.reduce in[0][0], in[1][0] -> out[0][0]
  // expected-note@+1 {{out[1][0] was last written here}}
  coll.copy in[1][0] -> out[1][0]
}

// -----

// expected-error@+1 {{broadcast postcondition fails: out[0][0] holds in[0][0] but should hold in[1][0] (1 more output chunk is wrong)}}
coll.algorithm @a : broadcast ranks(2) chunks(1) root(1) {
  // expected-note@+1 {{out[0][0] was last written here}}
  coll.copy in[0][0] -> out[0][0]
  coll.copy in[0][0] -> out[1][0]
}

// -----

// A broadcast without `root` broadcasts from rank 0.
// expected-error@+1 {{broadcast postcondition fails: out[0][0] holds nothing (it is never written) but should hold in[0][0]}}
coll.algorithm @a : broadcast ranks(2) chunks(1) {
  coll.copy in[0][0] -> out[1][0]
}

// -----

// In-place allgather aliasing: in[r][0] is out[r][r], so the last copy
// reads rank 1's input and only rank 0's own slot, overwritten, is wrong.
// expected-error@+1 {{allgather postcondition fails: out[0][0] holds in[1][0] but should hold in[0][0]}}
coll.algorithm @a : allgather ranks(2) chunks(1) inplace {
  coll.copy in[0][0] -> out[1][0]
  // expected-note@+1 {{out[0][0] was last written here}}
  coll.copy in[1][0] -> out[0][0]
  coll.copy out[1][1] -> out[0][1]
}

// -----

// In-place reducescatter: rank 1's output is in[1][1].
// expected-error@+1 {{reducescatter postcondition fails: in[1][1] holds in[1][1] but rank 0's contribution is missing}}
coll.algorithm @a : reducescatter ranks(2) chunks(1) inplace {
  coll.reduce in[0][0], in[1][0] -> out[0][0]
}

// -----

// Every algorithm of the module is checked, not only the first.
// expected-error@+1 {{alltoall postcondition fails: out[0][1] holds nothing (it is never written) but should hold in[1][0] (1 more output chunk is wrong)}}
coll.algorithm @first : alltoall ranks(2) chunks(1) {
  coll.copy in[0][0] -> out[0][0]
  coll.copy in[1][1] -> out[1][1]
}
coll.algorithm @fine : allreduce ranks(1) chunks(1) inplace {
}
// expected-error@+1 {{reduce postcondition fails: out[0][0] holds in[1][0] but rank 0's contribution is missing}}
coll.algorithm @third : reduce ranks(2) chunks(1) root(0) {
  // expected-note@+1 {{out[0][0] was last written here}}
  coll.copy in[1][0] -> out[0][0]
}

// -----

// Too large to verify: a clean error, not an attempt.
// expected-error@+1 {{the buffers are too large to verify}}
coll.algorithm @a : allreduce ranks(1000000) chunks(1000) {
}
