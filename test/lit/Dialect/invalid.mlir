// Every op verifier error of the coll dialect, and the chunk parser's.
// RUN: collc-opt %s -split-input-file -verify-diagnostics

// Negative `channel`, `pipeline`, `ranks`, `chunks` and `root` values are in
// invalid-negative.mlir.

coll.algorithm @a : allreduce ranks(2) chunks(1) {
  // expected-error@+1 {{'coll.copy' op uses unknown buffer 'tmp'}}
  coll.copy in[0][0] -> tmp[0][0]
}

// -----

// A scratch buffer of another algorithm is not visible.
coll.algorithm @a : allreduce ranks(2) chunks(1) scratch {tmp = 1 : i64} {
}
coll.algorithm @b : allreduce ranks(2) chunks(1) {
  // expected-error@+1 {{'coll.reduce' op uses unknown buffer 'tmp'}}
  coll.reduce in[0][0], tmp[1][0] -> out[0][0]
}

// -----

coll.algorithm @a : allreduce ranks(2) chunks(1) {
  // expected-error@+1 {{'coll.copy' op rank 2 of in is out of range [0, 2)}}
  coll.copy in[2][0] -> out[0][0]
}

// -----

coll.algorithm @a : allreduce ranks(2) chunks(1) {
  // expected-error@+1 {{'coll.copy' op rank -1 of out is out of range [0, 2)}}
  coll.copy in[0][0] -> out[-1][0]
}

// -----

coll.algorithm @a : reduce ranks(3) chunks(1) root(1) {
  // expected-error@+1 {{'coll.reduce' op rank 3 of in is out of range [0, 3)}}
  coll.reduce in[0][0], in[3][0] -> out[1][0]
}

// -----

// allgather: in has C chunks, out R*C.
coll.algorithm @a : allgather ranks(2) chunks(2) {
  // expected-error@+1 {{'coll.copy' op chunks [1, 3) of in are out of range [0, 2)}}
  coll.copy in[0][1:3] -> out[0][0:2]
}

// -----

coll.algorithm @a : allgather ranks(2) chunks(2) {
  // expected-error@+1 {{'coll.copy' op chunks [4, 5) of out are out of range [0, 4)}}
  coll.copy in[0][0] -> out[1][4]
}

// -----

coll.algorithm @a : allgather ranks(2) chunks(2) {
  // expected-error@+1 {{'coll.copy' op chunks [-1, 0) of in are out of range [0, 2)}}
  coll.copy in[0][-1] -> out[0][0]
}

// -----

// reducescatter: in has R*C chunks, out C.
coll.algorithm @a : reducescatter ranks(3) chunks(2) {
  // expected-error@+1 {{'coll.reduce' op chunks [2, 4) of out are out of range [0, 2)}}
  coll.reduce in[0][4:6], in[1][4:6] -> out[2][2:4]
}

// -----

// scratch sizes are per rank.
coll.algorithm @a : alltoall ranks(2) chunks(1) scratch {s = 3 : i64} {
  // expected-error@+1 {{'coll.copy' op chunks [2, 4) of s are out of range [0, 3)}}
  coll.copy in[0][0:2] -> s[1][2:4]
}

// -----

coll.algorithm @a : allgather ranks(2) chunks(2) {
  // expected-error@+1 {{'coll.copy' op copies 2 chunks into 3}}
  coll.copy in[0][0:2] -> out[0][0:3]
}

// -----

coll.algorithm @a : allgather ranks(2) chunks(2) {
  // expected-error@+1 {{'coll.reduce' op reduces 1 chunk into 2}}
  coll.reduce in[0][0:2], in[1][0] -> out[0][0:2]
}

// -----

coll.algorithm @a : allgather ranks(2) chunks(2) {
  // expected-error@+1 {{'coll.copy' op source and destination overlap}}
  coll.copy out[0][0:2] -> out[0][1:3]
}

// -----

coll.algorithm @a : allgather ranks(2) chunks(2) {
  // expected-error@+1 {{'coll.copy' op source and destination overlap}}
  coll.copy out[1][3] -> out[1][3]
}

// -----

coll.algorithm @a : allreduce ranks(2) chunks(4) inplace {
  // expected-error@+1 {{'coll.reduce' op source partially overlaps the destination}}
  coll.reduce in[0][0:2], in[0][1:3] -> in[0][0:2]
}

// -----

coll.algorithm @a : allreduce ranks(2) chunks(4) scratch {t = 4 : i64} {
  // expected-error@+1 {{'coll.reduce' op source partially overlaps the destination}}
  coll.reduce in[0][0:2], t[1][2:4] -> t[1][1:3]
}

// -----

// Negative channel: see invalid-negative.mlir. pipeline(0) is caught:

coll.algorithm @a : allreduce ranks(2) chunks(1) {
  // expected-error@+1 {{'coll.copy' op attribute 'pipeline' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  coll.copy in[0][0] -> out[0][0] pipeline(0)
}

// -----

coll.algorithm @a : allreduce ranks(2) chunks(1) {
  // expected-error@+1 {{'coll.reduce' op attribute 'pipeline' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  coll.reduce in[0][0], in[1][0] -> out[0][0] channel(1) pipeline(0)
}

// -----

// expected-error@+1 {{'coll.algorithm' op root 4 is not a rank of 4}}
coll.algorithm @a : reduce ranks(4) chunks(1) root(4) {
}

// -----

// expected-error@+1 {{'coll.algorithm' op root 7 is not a rank of 2}}
coll.algorithm @a : broadcast ranks(2) chunks(1) root(7) {
}

// -----

// expected-error@+1 {{'coll.algorithm' op ranks must be in 1 .. 1048576, got 0}}
coll.algorithm @a : allreduce ranks(0) chunks(1) {
}

// -----

// expected-error@+1 {{'coll.algorithm' op chunks must be in 1 .. 549755813888 for 2 ranks, got 0}}
coll.algorithm @a : allreduce ranks(2) chunks(0) {
}

// -----

// expected-error@+1 {{'coll.algorithm' op scratch buffer 't' needs a size in 1 .. }}
coll.algorithm @a : allreduce ranks(4) chunks(1) scratch {s = 1 : i64, t = 0 : i64} {
}

// -----

// expected-error@+1 {{'coll.algorithm' op scratch buffer 't' needs a size in 1 .. }}
coll.algorithm @a : allreduce ranks(4) chunks(1) scratch {t = -2 : i64} {
}

// -----

// expected-error@+1 {{'coll.algorithm' op scratch buffer 't' needs a size in 1 .. }}
coll.algorithm @a : allreduce ranks(4) chunks(1) scratch {t = "x"} {
}

// -----

// expected-error@+1 {{'coll.algorithm' op scratch buffer may not be named 'in'}}
coll.algorithm @a : allreduce ranks(4) chunks(1) scratch {in = 2 : i64} {
}

// -----

// expected-error@+1 {{'coll.algorithm' op scratch buffer may not be named 'out'}}
coll.algorithm @a : allgather ranks(4) chunks(1) inplace scratch {out = 2 : i64} {
}

// -----

// expected-error@+1 {{'coll.copy' op expects parent op 'coll.algorithm'}}
coll.copy in[0][0] -> out[0][0]

// -----

module {
  // expected-error@+1 {{'coll.reduce' op expects parent op 'coll.algorithm'}}
  coll.reduce in[0][0], in[1][0] -> out[0][0]
}

// -----

coll.algorithm @a : allreduce ranks(2) chunks(4) {
  // expected-error@+1 {{chunk range must not be empty}}
  coll.copy in[0][3:3] -> out[0][0]
}

// -----

coll.algorithm @a : allreduce ranks(2) chunks(4) {
  // expected-error@+1 {{chunk range must not be empty}}
  coll.reduce in[0][0:2], in[1][3:1] -> out[0][0:2]
}

// -----

coll.algorithm @a : allreduce ranks(2) chunks(4) {
  // expected-error@+1 {{chunk range must not be empty}}
  "coll.copy"() <{src = #coll.chunk<in[0][2:2]>, dst = #coll.chunk<out[0][0]>}> : () -> ()
}

// -----

// Only the generic form can build these.
coll.algorithm @a : allreduce ranks(2) chunks(1) {
  // expected-error@+1 {{'coll.reduce' op attribute 'srcs' failed to satisfy constraint: a non-empty array of chunks}}
  "coll.reduce"() <{srcs = [], dst = #coll.chunk<out[0][0]>}> : () -> ()
}

// -----

coll.algorithm @a : allreduce ranks(2) chunks(1) {
  // expected-error@+1 {{'coll.reduce' op attribute 'srcs' failed to satisfy constraint: a non-empty array of chunks}}
  "coll.reduce"() <{srcs = [#coll.chunk<in[0][0]>, 1 : i64], dst = #coll.chunk<out[0][0]>}> : () -> ()
}

// -----

// expected-error@+1 {{enum values for attribute 'collective' [allreduce, reducescatter, allgather, alltoall, broadcast, reduce]}}
coll.algorithm @a : gather ranks(4) chunks(1) {
}

// -----

coll.algorithm @a : allreduce ranks(2) chunks(1) {
  // expected-error@+1 {{enum values for attribute 'protocol' [Simple, LL, LL128]}}
  coll.copy in[0][0] -> out[0][0] protocol(LL64)
}

// -----

coll.plan @p : allreduce ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 channel(0) {
      // expected-error@+1 {{'coll.local_reduce' op attribute 'srcs' failed to satisfy constraint: a non-empty array of chunks}}
      "coll.local_reduce"() <{srcs = [], dst = #coll.chunk<in[0][0]>}> : () -> ()
    }
  }
}

// -----

// What passes record on algorithms and plans is declared: a depth counts
// from 1, a topology is a spec string.
// expected-error@+1 {{'coll.algorithm' op attribute 'fifo_depth' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
coll.algorithm @a : allreduce ranks(2) chunks(1) attributes {fifo_depth = 0 : i64} {
}

// -----

// expected-error@+1 {{'coll.plan' op attribute 'topology' failed to satisfy constraint: string attribute}}
coll.plan @p : allreduce ranks(2) chunks(1) attributes {topology = 8 : i64} {
}
