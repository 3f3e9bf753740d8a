// Hand-written IR whose buffers are too large to simulate must get a clean
// error: never a crash, never "verified". Sizes whose products could wrap in
// 64 bits are rejected by the op verifier; sizes below that but beyond what
// the symbolic execution allocates by --coll-verify.
// RUN: collc-opt %s --coll-verify -split-input-file -verify-diagnostics

// ranks * chunks would wrap to 0 in 64 bits.
// expected-error@+1 {{ranks must be in 1 .. 1048576}}
coll.algorithm @a : allreduce ranks(4611686018427387904) chunks(4) {
}

// -----

// expected-error@+1 {{ranks must be in 1 .. 1048576}}
coll.algorithm @a : alltoall ranks(4294967296) chunks(4294967296) {
}

// -----

// A huge scratch buffer.
// expected-error@+1 {{scratch buffer 't' needs a size in 1 .. }}
coll.algorithm @a : allreduce ranks(4) chunks(1) scratch {t = 4000000000000000 : i64} {
}

// -----

// `in` is small (one chunk per rank), `out` is ranks * ranks chunks.
// expected-error@+1 {{too large to verify}}
coll.algorithm @a : allgather ranks(1048576) chunks(1) {
}

// -----

// expected-error@+1 {{too large to verify}}
coll.algorithm @a : allreduce ranks(4) chunks(1) scratch {t = 100000000000 : i64} {
}
