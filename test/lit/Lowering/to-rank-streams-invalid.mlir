// coll-to-rank-streams gives each threadblock one protocol, that of its
// protocol(...) ops: two ops with different ones on one connection (so one
// threadblock) are an error at the second op the threadblock runs, and the
// plan is not made.
//
// RUN: collc-opt %s -split-input-file --coll-to-rank-streams -verify-diagnostics | FileCheck %s

coll.algorithm @mixed : allgather ranks(2) chunks(2) {
  coll.copy in[0][0:2] -> out[0][0:2]
  coll.copy in[1][0:2] -> out[1][2:4]
  coll.copy in[0][0] -> out[1][0] protocol(LL)
  // expected-error@+1 {{@protocol(LL128) conflicts with @protocol(LL) of another statement on the same threadblock of rank 0; put them on different channels}}
  coll.copy in[0][1] -> out[1][1] protocol(LL128)
  coll.copy in[1][0:2] -> out[0][2:4]
}

// -----

// On separate channels the two protocols are two threadblocks.
// CHECK-LABEL: coll.plan @apart
// CHECK:         coll.threadblock {{[0-9]+}} send(1) channel(0) protocol(LL) {
// CHECK-NEXT:      coll.send in[0][0]{{$}}
// CHECK:         coll.threadblock {{[0-9]+}} send(1) channel(1) protocol(LL128) {
// CHECK-NEXT:      coll.send in[0][1]{{$}}
coll.algorithm @apart : allgather ranks(2) chunks(2) {
  coll.copy in[0][0:2] -> out[0][0:2]
  coll.copy in[1][0:2] -> out[1][2:4]
  coll.copy in[0][0] -> out[1][0] protocol(LL)
  coll.copy in[0][1] -> out[1][1] channel(1) protocol(LL128)
  coll.copy in[1][0:2] -> out[0][2:4]
}
