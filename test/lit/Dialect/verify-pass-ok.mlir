// --coll-verify accepts correct hand-written IR and leaves it unchanged.
// RUN: collc-opt %s --coll-verify | FileCheck %s

// CHECK-LABEL: coll.algorithm @ring : allreduce ranks(2) chunks(2) inplace {
// CHECK-NEXT:    coll.reduce in[0][1], in[1][1] -> in[1][1]
// CHECK-NEXT:    coll.copy in[1][1] -> in[0][1]
// CHECK-NEXT:    coll.reduce in[1][0], in[0][0] -> in[0][0] channel(1)
// CHECK-NEXT:    coll.copy in[0][0] -> in[1][0] protocol(LL)
// CHECK-NEXT:  }
coll.algorithm @ring : allreduce ranks(2) chunks(2) inplace {
  coll.reduce in[0][1], in[1][1] -> in[1][1]
  coll.copy in[1][1] -> in[0][1]
  coll.reduce in[1][0], in[0][0] -> in[0][0] channel(1)
  coll.copy in[0][0] -> in[1][0] protocol(LL)
}

// Out-of-place reducescatter, C = 2, with scratch and ranges.
// CHECK-LABEL: coll.algorithm @rs
coll.algorithm @rs : reducescatter ranks(2) chunks(2) scratch {t = 2 : i64} {
  coll.copy in[1][0:2] -> t[0][0:2]
  coll.reduce in[0][0:2], t[0][0:2] -> out[0][0:2]
  coll.reduce in[0][2:4], in[1][2:4] -> out[1][0:2] pipeline(2)
}

// In-place allgather: in[r] is slot r of out[r].
// CHECK-LABEL: coll.algorithm @ag
coll.algorithm @ag : allgather ranks(3) chunks(1) inplace {
  coll.copy in[0][0] -> out[1][0]
  coll.copy in[0][0] -> out[2][0]
  coll.copy out[1][1] -> out[0][1]
  coll.copy in[1][0] -> out[2][1]
  coll.copy in[2][0] -> out[0][2]
  coll.copy out[2][2] -> out[1][2]
}

// In-place reducescatter: out[r] is in[r][r*C .. r*C + C].
// CHECK-LABEL: coll.algorithm @rs_ip
coll.algorithm @rs_ip : reducescatter ranks(2) chunks(1) inplace {
  coll.reduce out[0][0], in[1][0] -> out[0][0]
  coll.reduce in[0][1], in[1][1] -> in[1][1]
}

// Alltoall, broadcast from root 2, reduce to root 1 (other ranks' out is
// garbage, which is allowed).
// CHECK-LABEL: coll.algorithm @a2a
coll.algorithm @a2a : alltoall ranks(2) chunks(1) {
  coll.copy in[0][0] -> out[0][0]
  coll.copy in[0][1] -> out[1][0]
  coll.copy in[1][0] -> out[0][1]
  coll.copy in[1][1] -> out[1][1]
}
// CHECK-LABEL: coll.algorithm @bc : broadcast ranks(3) chunks(1) root(2) {
coll.algorithm @bc : broadcast ranks(3) chunks(1) root(2) {
  coll.copy in[2][0] -> out[2][0]
  coll.copy out[2][0] -> out[0][0]
  coll.copy out[0][0] -> out[1][0]
}
// CHECK-LABEL: coll.algorithm @red : reduce ranks(3) chunks(1) root(1) {
coll.algorithm @red : reduce ranks(3) chunks(1) root(1) {
  coll.copy in[2][0] -> out[0][0]
  coll.reduce in[0][0], in[1][0], in[2][0] -> out[1][0]
}
