// coll-multimem on global-view algorithms placed by coll-map-ranks (their
// `topology` and `rank_map`, else the `topology` option). Where every rank
// shares one NVLink switch domain, a reduce of one chunk over all ranks
// becomes a load-reduce and copies of a chunk to the same place on every
// rank one store to every rank (grouped by `= group`): with multimem where
// the switches multicast (H100), through peer windows where they do not
// (A100). A copy of another rank's input that nothing reads afterwards
// becomes a `get`. Ranks on two nodes, ops that would race (the in-place
// one-shot overwrites inputs the other rank reads) and unplaced algorithms
// stay point-to-point. The marked programs still lower to plans that
// coll-verify-plan proves race-free and correct.
//
// RUN: collc-opt %s -split-input-file --coll-multimem -verify-diagnostics | FileCheck %s
// RUN: collc-opt %s -split-input-file --coll-multimem=topology=dgx-a100 -verify-diagnostics | FileCheck %s --check-prefix=OPTION
// RUN: collc-opt %s -split-input-file --coll-multimem --coll-to-rank-streams --coll-verify-plan -verify-diagnostics -o /dev/null

// CHECK-LABEL: coll.algorithm @nvls
// CHECK-NEXT:    coll.reduce in[0][0], in[1][0] -> red[0][0] {coll.multimem}
// CHECK-NEXT:    coll.reduce in[1][1], in[0][1] -> red[1][0] {coll.multimem}
// CHECK-NEXT:    coll.copy red[0][0] -> out[0][0] {coll.multimem_st = 0 : i64}
// CHECK-NEXT:    coll.copy red[1][0] -> out[0][1] {coll.multimem_st = 1 : i64}
// CHECK-NEXT:    coll.copy red[0][0] -> out[1][0] {coll.multimem_st = 0 : i64}
// CHECK-NEXT:    coll.copy red[1][0] -> out[1][1] {coll.multimem_st = 1 : i64}
// CHECK-NEXT:  }
coll.algorithm @nvls : allreduce ranks(2) chunks(2) scratch {red = 1 : i64} attributes {rank_map = array<i64: 0, 1>, topology = "hgx-h100"} {
  coll.reduce in[0][0], in[1][0] -> red[0][0]
  coll.reduce in[1][1], in[0][1] -> red[1][0]
  coll.copy red[0][0] -> out[0][0]
  coll.copy red[1][0] -> out[0][1]
  coll.copy red[0][0] -> out[1][0]
  coll.copy red[1][0] -> out[1][1]
}

// -----

// CHECK-LABEL: coll.algorithm @windows
// CHECK-NEXT:    coll.reduce in[0][0], in[1][0] -> red[0][0] {coll.read_reduce}
// CHECK-NEXT:    coll.reduce in[1][1], in[0][1] -> red[1][0] {coll.read_reduce}
// CHECK-NEXT:    coll.copy red[0][0] -> out[0][0] {coll.put = 0 : i64}
// CHECK-NEXT:    coll.copy red[1][0] -> out[0][1] {coll.put = 1 : i64}
// CHECK-NEXT:    coll.copy red[0][0] -> out[1][0] {coll.put = 0 : i64}
// CHECK-NEXT:    coll.copy red[1][0] -> out[1][1] {coll.put = 1 : i64}
// CHECK-NEXT:  }
coll.algorithm @windows : allreduce ranks(2) chunks(2) scratch {red = 1 : i64} attributes {rank_map = array<i64: 0, 1>, topology = "dgx-a100"} {
  coll.reduce in[0][0], in[1][0] -> red[0][0]
  coll.reduce in[1][1], in[0][1] -> red[1][0]
  coll.copy red[0][0] -> out[0][0]
  coll.copy red[1][0] -> out[0][1]
  coll.copy red[0][0] -> out[1][0]
  coll.copy red[1][0] -> out[1][1]
}

// -----

// CHECK-LABEL: coll.algorithm @pairwise
// CHECK-NEXT:    coll.copy in[0][0] -> out[0][0]{{$}}
// CHECK-NEXT:    coll.copy in[1][1] -> out[1][1]{{$}}
// CHECK-NEXT:    coll.copy in[0][1] -> out[1][0] {coll.get}
// CHECK-NEXT:    coll.copy in[1][0] -> out[0][1] {coll.get}
coll.algorithm @pairwise : alltoall ranks(2) chunks(1) attributes {rank_map = array<i64: 0, 1>, topology = "dgx-a100"} {
  coll.copy in[0][0] -> out[0][0]
  coll.copy in[1][1] -> out[1][1]
  coll.copy in[0][1] -> out[1][0]
  coll.copy in[1][0] -> out[0][1]
}

// -----

// The two ranks on two nodes.
// CHECK-LABEL: coll.algorithm @twonodes
// CHECK-NEXT:    coll.reduce in[0][0], in[1][0] -> red[0][0]{{$}}
// CHECK-NEXT:    coll.reduce in[1][1], in[0][1] -> red[1][0]{{$}}
// CHECK-NEXT:    coll.copy red[0][0] -> out[0][0]{{$}}
coll.algorithm @twonodes : allreduce ranks(2) chunks(2) scratch {red = 1 : i64} attributes {rank_map = array<i64: 0, 8>, topology = "hgx-h100:nodes=2"} {
  coll.reduce in[0][0], in[1][0] -> red[0][0]
  coll.reduce in[1][1], in[0][1] -> red[1][0]
  coll.copy red[0][0] -> out[0][0]
  coll.copy red[1][0] -> out[0][1]
  coll.copy red[0][0] -> out[1][0]
  coll.copy red[1][0] -> out[1][1]
}

// -----

// Each rank writes its sum into its own input, which the other rank's
// reduce reads: nothing may run on every rank at once.
// CHECK-LABEL: coll.algorithm @oneshot
// CHECK-NEXT:    coll.reduce in[0][0], in[1][0] -> sum[0][0]{{$}}
// CHECK-NEXT:    coll.reduce in[0][0], in[1][0] -> sum[1][0]{{$}}
// CHECK-NEXT:    coll.copy sum[0][0] -> in[0][0]{{$}}
// CHECK-NEXT:    coll.copy sum[1][0] -> in[1][0]{{$}}
coll.algorithm @oneshot : allreduce ranks(2) chunks(1) inplace scratch {sum = 1 : i64} attributes {rank_map = array<i64: 0, 1>, topology = "hgx-h100"} {
  coll.reduce in[0][0], in[1][0] -> sum[0][0]
  coll.reduce in[0][0], in[1][0] -> sum[1][0]
  coll.copy sum[0][0] -> in[0][0]
  coll.copy sum[1][0] -> in[1][0]
}

// -----

// Not placed: left as it is, unless the option names a machine (which
// puts rank r on GPU r).
// CHECK-LABEL: coll.algorithm @unplaced
// CHECK-NEXT:    coll.reduce in[0][0], in[1][0] -> red[0][0]{{$}}
// OPTION-LABEL: coll.algorithm @unplaced
// OPTION-NEXT:    coll.reduce in[0][0], in[1][0] -> red[0][0] {coll.read_reduce}
coll.algorithm @unplaced : allreduce ranks(2) chunks(2) scratch {red = 1 : i64} {
  coll.reduce in[0][0], in[1][0] -> red[0][0]
  coll.reduce in[1][1], in[0][1] -> red[1][0]
  coll.copy red[0][0] -> out[0][0]
  coll.copy red[1][0] -> out[0][1]
  coll.copy red[0][0] -> out[1][0]
  coll.copy red[1][0] -> out[1][1]
}

// -----

// expected-error@+1 {{topology: 'no-such-machine' is neither a topology preset}}
coll.algorithm @unknown : allgather ranks(2) chunks(1) attributes {rank_map = array<i64: 0, 1>, topology = "no-such-machine"} {
  coll.copy in[0][0] -> out[0][0]
  coll.copy in[0][0] -> out[1][0]
  coll.copy in[1][0] -> out[0][1]
  coll.copy in[1][0] -> out[1][1]
}
