// coll-map-ranks places logical ranks on GPUs: node-major first, then pairs
// swapped while that keeps more traffic inside a node. A bare preset grows
// to as many nodes as the algorithm needs; one with `:nodes=` does not, and
// too few GPUs is an error at the algorithm. The input is left as it is but
// for `rank_map` and `topology`.
//
// RUN: collc-opt %s -split-input-file --coll-map-ranks | FileCheck %s
// RUN: collc-opt %s -split-input-file --coll-map-ranks=topology=hgx-h100:nodes=2 -verify-diagnostics | FileCheck %s --check-prefix=TWO
// RUN: not collc-opt %s -split-input-file --coll-map-ranks=topology=no-such-machine 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: topology: 'no-such-machine' is neither a topology preset

// A ring within one node keeps the identity.
// CHECK-LABEL: coll.algorithm @ring : allgather ranks(4) chunks(1)
// CHECK-SAME:    attributes {rank_map = array<i64: 0, 1, 2, 3>, topology = "hgx-h100"} {
// CHECK-NEXT:    coll.copy in[0][0] -> out[1][0]
// TWO-LABEL: coll.algorithm @ring : allgather ranks(4) chunks(1)
// TWO-SAME:    attributes {rank_map = array<i64: 0, 1, 2, 3>, topology = "hgx-h100:nodes=2"} {
coll.algorithm @ring : allgather ranks(4) chunks(1) {
  coll.copy in[0][0] -> out[1][0]
  coll.copy in[1][0] -> out[2][1]
  coll.copy in[2][0] -> out[3][2]
  coll.copy in[3][0] -> out[0][3]
}

// -----

// Rank r talks only to rank r+8. Node-major, each pair would straddle the
// two nodes; the swaps bring every pair into one node (GPUs 0-7 are node 0,
// 8-15 node 1).
// CHECK-LABEL: coll.algorithm @pairs : allgather ranks(16) chunks(1)
// CHECK-SAME:    attributes {rank_map = array<i64: 9, 1, 11, 3, 13, 5, 15, 7, 8, 0, 10, 2, 12, 4, 14, 6>, topology = "hgx-h100:nodes=2"} {
// TWO-LABEL: coll.algorithm @pairs : allgather ranks(16) chunks(1)
// TWO-SAME:    attributes {rank_map = array<i64: 9, 1, 11, 3, 13, 5, 15, 7, 8, 0, 10, 2, 12, 4, 14, 6>, topology = "hgx-h100:nodes=2"} {
coll.algorithm @pairs : allgather ranks(16) chunks(1) {
  coll.copy in[0][0] -> out[8][0]
  coll.copy in[1][0] -> out[9][1]
  coll.copy in[2][0] -> out[10][2]
  coll.copy in[3][0] -> out[11][3]
  coll.copy in[4][0] -> out[12][4]
  coll.copy in[5][0] -> out[13][5]
  coll.copy in[6][0] -> out[14][6]
  coll.copy in[7][0] -> out[15][7]
}

// -----

// 17 ranks grow the bare preset to three nodes, and rank 16, the only one
// rank 0 talks to, moves next to it; two nodes are too few.
// CHECK-LABEL: coll.algorithm @far : broadcast ranks(17) chunks(1) root(0)
// CHECK-SAME:    attributes {rank_map = array<i64: 0, 16, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 1>, topology = "hgx-h100:nodes=3"} {
// TWO-NOT: @far
// expected-error@+1 {{topology hgx-h100 has 16 GPUs but the algorithm needs 17 ranks}}
coll.algorithm @far : broadcast ranks(17) chunks(1) root(0) {
  coll.copy in[0][0] -> out[16][0]
}
