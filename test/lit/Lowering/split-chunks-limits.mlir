// coll-split-chunks refuses to build a plan past the limits (more than 2^24
// steps or 2^28 chunk slots over all ranks) before it makes any op, also
// where the product overflows 64 bits. The error is at the op whose
// pipeline(p) asks for too much, else at the algorithm, naming the options.
//
// RUN: collc-opt %s -split-input-file --coll-split-chunks=pipeline=64 -verify-diagnostics | FileCheck %s
// RUN: not collc-opt %s -split-input-file --coll-split-chunks=instances=0 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not collc-opt %s -split-input-file '--coll-split-chunks=pipeline=65536 instances=65536' 2>&1 | FileCheck %s --check-prefix=OPTIONS
// ZERO: error: pipeline and instances must be at least 1
// OPTIONS: error: pipeline 65536 x instances 65536 makes the plan too large: more than 16777216 steps over all ranks

// 2 steps (a send and a receive) x 2^24 pieces.
coll.algorithm @deep : allgather ranks(2) chunks(1) {
  coll.copy in[0][0] -> out[0][0]
  // expected-error@+1 {{@pipeline(16777216) makes the plan too large: more than 16777216 steps over all ranks}}
  coll.copy in[0][0] -> out[1][0] pipeline(16777216)
}

// -----

// The least common multiple of 64, 2^32 and 2^32 - 1 does not fit in 64 bits.
coll.algorithm @wrap : allgather ranks(2) chunks(1) {
  coll.copy in[0][0] -> out[0][0] pipeline(4294967296)
  // expected-error@+1 {{@pipeline(4294967295) makes the plan too large: more than 16777216 steps over all ranks}}
  coll.copy in[0][0] -> out[1][0] pipeline(4294967295)
}

// -----

// Few steps, but 64 x (1 + 2) x 2^20 chunk slots per rank on 2 ranks.
// expected-error@+1 {{pipeline 64 x instances 1 makes the plan too large: more than 268435456 chunk slots of all buffers over all ranks}}
coll.algorithm @wide : allgather ranks(2) chunks(1048576) {
  coll.copy in[0][0] -> out[0][0]
}

// -----

// CHECK-LABEL: coll.algorithm @fits : allgather ranks(2) chunks(64) attributes {fifo_depth = 64 : i64} {
// CHECK-COUNT-128: coll.copy {{.*}}
// CHECK-NEXT:  }
coll.algorithm @fits : allgather ranks(2) chunks(1) {
  coll.copy in[0][0] -> out[0][0]
  coll.copy in[0][0] -> out[1][0]
}
