// Round trip of the coll dialect: parse, print, parse again, print.
// RUN: collc-opt %s | collc-opt | FileCheck %s

// Every attribute of coll.algorithm, in the order the format prints them.
// CHECK-LABEL: coll.algorithm @everything : broadcast ranks(4) chunks(2) root(3) inplace scratch {acc = 2 : i64, tmp = 8 : i64} params {nch = 2 : i64, nodes = 1 : i64} {
// CHECK-NEXT:    coll.copy in[3][0:2] -> tmp[3][0:2]
// CHECK-NEXT:    coll.copy tmp[3][0:2] -> out[0][0:2] channel(1) protocol(LL) pipeline(4)
// CHECK-NEXT:    coll.copy in[3][1] -> acc[2][1] channel(0)
// CHECK-NEXT:    coll.copy acc[2][1] -> in[2][1] protocol(LL128)
// CHECK-NEXT:    coll.copy acc[2][1] -> tmp[1][7] protocol(Simple)
// CHECK-NEXT:    coll.copy tmp[3][0] -> in[1][0] pipeline(1)
// CHECK-NEXT:  }
coll.algorithm @everything : broadcast ranks(4) chunks(2) root(3) inplace
    scratch {tmp = 8 : i64, acc = 2 : i64} params {nodes = 1 : i64, nch = 2 : i64} {
  coll.copy in[3][0:2] -> tmp[3][0:2]
  coll.copy tmp[3][0:2] -> out[0][0:2] channel(1) protocol(LL) pipeline(4)
  coll.copy in[3][1] -> acc[2][1] channel(0)
  coll.copy acc[2][1] -> in[2][1] protocol(LL128)
  coll.copy acc[2][1] -> tmp[1][7] protocol(Simple)
  coll.copy tmp[3][0] -> in[1][0] pipeline(1)
}

// Optional attributes left out; an empty body; a one-chunk range `a:a+1`
// prints as a single chunk.
// CHECK-LABEL: coll.algorithm @minimal : allreduce ranks(1) chunks(1) {
// CHECK-NEXT:  }
coll.algorithm @minimal : allreduce ranks(1) chunks(1) {
}

// coll.reduce with one, two and three sources, ranges, `a += b` form
// (destination among the sources), and every annotation.
// CHECK-LABEL: coll.algorithm @reduces : reducescatter ranks(3) chunks(2) scratch {s = 4 : i64} {
// CHECK-NEXT:    coll.reduce in[0][2:4] -> s[0][0:2]
// CHECK-NEXT:    coll.reduce s[0][0:2], in[1][2:4] -> s[0][0:2] channel(2)
// CHECK-NEXT:    coll.reduce in[0][0], in[1][0], in[2][0] -> out[0][0] protocol(LL) pipeline(3)
// CHECK-NEXT:    coll.reduce in[0][5], s[1][3] -> out[2][1] channel(0) protocol(LL128) pipeline(2)
// CHECK-NEXT:    coll.copy in[1][3] -> out[1][0]
// CHECK-NEXT:  }
coll.algorithm @reduces : reducescatter ranks(3) chunks(2) scratch {s = 4 : i64} {
  coll.reduce in[0][2:4] -> s[0][0:2]
  coll.reduce s[0][0:2], in[1][2:4] -> s[0][0:2] channel(2)
  coll.reduce in[0][0], in[1][0], in[2][0] -> out[0][0] protocol(LL) pipeline(3)
  coll.reduce in[0][5], s[1][3] -> out[2][1] channel(0) protocol(LL128) pipeline(2)
  coll.copy in[1][3:4] -> out[1][0:1]
}

// Every collective keyword, root on reduce, inplace on several.
// CHECK-LABEL: coll.algorithm @ag : allgather ranks(2) chunks(3) inplace {
// CHECK-NEXT:    coll.copy out[0][0:3] -> out[1][0:3]
// CHECK-LABEL: coll.algorithm @a2a : alltoall ranks(2) chunks(1) {
// CHECK-NEXT:    coll.copy in[1][0] -> out[0][1]
// CHECK-LABEL: coll.algorithm @red : reduce ranks(5) chunks(1) root(0) {
// CHECK-LABEL: coll.algorithm @ar : allreduce ranks(2) chunks(1) inplace params {x = -3 : i64} {
coll.algorithm @ag : allgather ranks(2) chunks(3) inplace {
  coll.copy out[0][0:3] -> out[1][0:3]
}
coll.algorithm @a2a : alltoall ranks(2) chunks(1) {
  coll.copy in[1][0] -> out[0][1]
}
coll.algorithm @red : reduce ranks(5) chunks(1) root(0) {
}
coll.algorithm @ar : allreduce ranks(2) chunks(1) inplace params {x = -3 : i64} {
}

// Buffer names that are keywords elsewhere or quoted strings.
// CHECK-LABEL: coll.algorithm @names : allreduce ranks(2) chunks(1) scratch {chunks = 1 : i64, copy = 2 : i64} {
// CHECK-NEXT:    coll.copy in[0][0] -> copy[1][1]
// CHECK-NEXT:    coll.copy copy[1][1] -> chunks[0][0]
coll.algorithm @names : allreduce ranks(2) chunks(1) scratch {copy = 2 : i64, chunks = 1 : i64} {
  coll.copy in[0][0] -> copy[1][1]
  coll.copy copy[1][1] -> "chunks"[0][0]
}
