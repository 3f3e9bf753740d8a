// Chunk indices near the ends of int64 are out of range, and the error must
// say so, without overflowing in the chunk parser.
// RUN: collc-opt %s -split-input-file -verify-diagnostics

coll.algorithm @a : allreduce ranks(2) chunks(1) {
  // expected-error@+1 {{out of range}}
  coll.copy in[0][9223372036854775807] -> out[0][0]
}

// -----

coll.algorithm @a : allreduce ranks(2) chunks(1) {
  // expected-error@+1 {{out of range}}
  coll.copy in[0][-2:9223372036854775807] -> out[0][0]
}
