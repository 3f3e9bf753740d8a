// coll-split-chunks: every chunk becomes `instances x P` sub-chunks, P the
// least common multiple of `pipeline` and every op's pipeline(p). Instance j
// repeats the whole program on sub-chunks j*P .. (j+1)*P with its channels
// moved past the program's own; within an instance an op with p pieces
// becomes p ops of P/p sub-chunks each, every piece but the first marked
// with its wavefront (`coll.piece`). Scratch buffers grow by the same
// factor, and the algorithm records the FIFO slots its ranks need. Split
// programs still implement their collective (the coll-verify runs).
//
// RUN: collc-opt %s -split-input-file --coll-split-chunks=pipeline=3 | FileCheck %s --check-prefix=PIPE
// RUN: collc-opt %s -split-input-file --coll-split-chunks=instances=2 | FileCheck %s --check-prefix=INST
// RUN: collc-opt %s -split-input-file --coll-split-chunks | FileCheck %s --check-prefix=ONE
// RUN: collc-opt %s -split-input-file --coll-verify -o /dev/null
// RUN: collc-opt %s -split-input-file --coll-split-chunks=pipeline=3 --coll-verify -o /dev/null
// RUN: collc-opt %s -split-input-file '--coll-split-chunks=pipeline=2 instances=2' --coll-verify -o /dev/null

// pipeline=3 with a pipeline(2) op: P = 6, so the annotated copy moves two
// pieces of 3 sub-chunks and every other op three pieces of 2. The copy's
// channel and protocol stay; its pipeline(2) is spent.
// PIPE-LABEL: coll.algorithm @ar : allreduce ranks(2) chunks(12) scratch {tmp = 6 : i64} attributes {fifo_depth = 6 : i64} {
// PIPE-NEXT:    coll.reduce in[0][0:2], in[1][0:2] -> out[0][0:2] channel(0){{$}}
// PIPE-NEXT:    coll.reduce in[0][2:4], in[1][2:4] -> out[0][2:4] channel(0) {coll.piece = 1 : i64}
// PIPE-NEXT:    coll.reduce in[0][4:6], in[1][4:6] -> out[0][4:6] channel(0) {coll.piece = 2 : i64}
// PIPE-NEXT:    coll.reduce in[1][6:8], in[0][6:8] -> out[1][6:8] channel(0){{$}}
// PIPE-NEXT:    coll.reduce in[1][8:10], in[0][8:10] -> out[1][8:10] channel(0) {coll.piece = 1 : i64}
// PIPE-NEXT:    coll.reduce in[1][10:12], in[0][10:12] -> out[1][10:12] channel(0) {coll.piece = 2 : i64}
// PIPE-NEXT:    coll.copy out[0][0:3] -> out[1][0:3] channel(0){{$}}
// PIPE-NEXT:    coll.copy out[0][3:6] -> out[1][3:6] channel(0) {coll.piece = 1 : i64}
// PIPE-NEXT:    coll.copy out[1][6:8] -> tmp[0][0:2] channel(1) protocol(LL){{$}}
// PIPE-NEXT:    coll.copy out[1][8:10] -> tmp[0][2:4] channel(1) protocol(LL) {coll.piece = 1 : i64}
// PIPE-NEXT:    coll.copy out[1][10:12] -> tmp[0][4:6] channel(1) protocol(LL) {coll.piece = 2 : i64}
// PIPE-NEXT:    coll.copy tmp[0][0:2] -> out[0][6:8] channel(0){{$}}
// PIPE-NEXT:    coll.copy tmp[0][2:4] -> out[0][8:10] channel(0) {coll.piece = 1 : i64}
// PIPE-NEXT:    coll.copy tmp[0][4:6] -> out[0][10:12] channel(0) {coll.piece = 2 : i64}
// PIPE-NEXT:  }

// instances=2: P = 2 from the annotation alone. Instance 1 takes sub-chunks
// 2 .. 4 of every chunk (times the factor 4) on channels 2 and 3, past the
// program's own 0 and 1.
// INST-LABEL: coll.algorithm @ar : allreduce ranks(2) chunks(8) scratch {tmp = 4 : i64} attributes {fifo_depth = 2 : i64} {
// INST-NEXT:    coll.reduce in[0][0:2], in[1][0:2] -> out[0][0:2] channel(0){{$}}
// INST-NEXT:    coll.reduce in[1][4:6], in[0][4:6] -> out[1][4:6] channel(0){{$}}
// INST-NEXT:    coll.copy out[0][0] -> out[1][0] channel(0){{$}}
// INST-NEXT:    coll.copy out[0][1] -> out[1][1] channel(0) {coll.piece = 1 : i64}
// INST-NEXT:    coll.copy out[1][4:6] -> tmp[0][0:2] channel(1) protocol(LL){{$}}
// INST-NEXT:    coll.copy tmp[0][0:2] -> out[0][4:6] channel(0){{$}}
// INST-NEXT:    coll.reduce in[0][2:4], in[1][2:4] -> out[0][2:4] channel(2){{$}}
// INST-NEXT:    coll.reduce in[1][6:8], in[0][6:8] -> out[1][6:8] channel(2){{$}}
// INST-NEXT:    coll.copy out[0][2] -> out[1][2] channel(2){{$}}
// INST-NEXT:    coll.copy out[0][3] -> out[1][3] channel(2) {coll.piece = 1 : i64}
// INST-NEXT:    coll.copy out[1][6:8] -> tmp[0][2:4] channel(3) protocol(LL){{$}}
// INST-NEXT:    coll.copy tmp[0][2:4] -> out[0][6:8] channel(2){{$}}
// INST-NEXT:  }
// ONE-LABEL: coll.algorithm @ar : allreduce ranks(2) chunks(4) scratch {tmp = 2 : i64} attributes {fifo_depth = 2 : i64} {
coll.algorithm @ar : allreduce ranks(2) chunks(2) scratch {tmp = 1 : i64} {
  coll.reduce in[0][0], in[1][0] -> out[0][0]
  coll.reduce in[1][1], in[0][1] -> out[1][1]
  coll.copy out[0][0] -> out[1][0] pipeline(2)
  coll.copy out[1][1] -> tmp[0][0] channel(1) protocol(LL)
  coll.copy tmp[0][0] -> out[0][1]
}

// -----

// An op over two chunks splits each of them: chunk k of the op, piece q,
// lands on sub-chunk (index + k) * P + q. FIFOs need P times the widest op.
// PIPE-LABEL: coll.algorithm @ag : allgather ranks(2) chunks(6) attributes {fifo_depth = 6 : i64} {
// PIPE-NEXT:    coll.copy in[0][0] -> out[0][0] channel(0){{$}}
// PIPE-NEXT:    coll.copy in[0][1] -> out[0][1] channel(0) {coll.piece = 1 : i64}
// PIPE-NEXT:    coll.copy in[0][2] -> out[0][2] channel(0) {coll.piece = 2 : i64}
// PIPE-NEXT:    coll.copy in[0][3] -> out[0][3] channel(0){{$}}
// PIPE-NEXT:    coll.copy in[0][4] -> out[0][4] channel(0) {coll.piece = 1 : i64}
// PIPE-NEXT:    coll.copy in[0][5] -> out[0][5] channel(0) {coll.piece = 2 : i64}
// PIPE-NEXT:    coll.copy in[0][0] -> out[1][0] channel(0){{$}}
// INST-LABEL: coll.algorithm @ag : allgather ranks(2) chunks(4) attributes {fifo_depth = 2 : i64} {
// INST-NEXT:    coll.copy in[0][0] -> out[0][0] channel(0){{$}}
// INST-NEXT:    coll.copy in[0][2] -> out[0][2] channel(0){{$}}
// INST:         coll.copy in[1][3] -> out[1][7] channel(1){{$}}
// INST-NEXT:  }
// Nothing to split: the algorithm is left as it is.
// ONE-LABEL: coll.algorithm @ag : allgather ranks(2) chunks(2) {
// ONE-NEXT:    coll.copy in[0][0:2] -> out[0][0:2]{{$}}
// ONE-NEXT:    coll.copy in[0][0:2] -> out[1][0:2]{{$}}
// ONE-NEXT:    coll.copy in[1][0:2] -> out[0][2:4]{{$}}
// ONE-NEXT:    coll.copy in[1][0:2] -> out[1][2:4]{{$}}
// ONE-NEXT:  }
coll.algorithm @ag : allgather ranks(2) chunks(2) {
  coll.copy in[0][0:2] -> out[0][0:2]
  coll.copy in[0][0:2] -> out[1][0:2]
  coll.copy in[1][0:2] -> out[0][2:4]
  coll.copy in[1][0:2] -> out[1][2:4]
}
