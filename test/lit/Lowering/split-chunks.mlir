// coll-split-chunks: every chunk becomes `instances x P` sub-chunks, P the
// least common multiple of `pipeline` and every op's pipeline(p). Each op
// becomes, in its place, one op per instance (its channels moved past the
// program's own) and piece: an op with p pieces over n chunks makes p ops of
// n*P/p contiguous sub-chunks per instance, every piece but the first marked
// with its wavefront (`coll.piece`). Scratch buffers grow by the same
// factor, and the algorithm records the FIFO slots its ranks need. Split
// programs still implement their collective (the coll-verify runs).
//
// RUN: collc-opt %s -split-input-file --coll-split-chunks=pipeline=3 | FileCheck %s --check-prefix=PIPE
// RUN: collc-opt %s -split-input-file --coll-split-chunks=instances=2 | FileCheck %s --check-prefix=INST
// RUN: collc-opt %s -split-input-file --coll-split-chunks | FileCheck %s --check-prefix=ONE
// RUN: collc-opt %s -split-input-file --coll-split-chunks=stream=1 | FileCheck %s --check-prefix=STREAM
// RUN: collc-opt %s -split-input-file '--coll-split-chunks=pipeline=3 stream=1' | FileCheck %s --check-prefix=PIPE-STREAM
// RUN: collc-opt %s -split-input-file '--coll-split-chunks=pipeline=3 stream=1' --coll-verify -o /dev/null
// RUN: collc-opt %s -split-input-file --coll-verify -o /dev/null
// RUN: collc-opt %s -split-input-file --coll-split-chunks=pipeline=3 --coll-verify -o /dev/null
// RUN: collc-opt %s -split-input-file '--coll-split-chunks=pipeline=2 instances=2' --coll-verify -o /dev/null
// RUN: collc-opt %s -split-input-file --pass-pipeline='builtin.module(coll-lower{instances=2})' | FileCheck %s --check-prefix=LOWERED

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
// program's own 0 and 1, each op's instances in its place.
// INST-LABEL: coll.algorithm @ar : allreduce ranks(2) chunks(8) scratch {tmp = 4 : i64} attributes {fifo_depth = 2 : i64} {
// INST-NEXT:    coll.reduce in[0][0:2], in[1][0:2] -> out[0][0:2] channel(0){{$}}
// INST-NEXT:    coll.reduce in[0][2:4], in[1][2:4] -> out[0][2:4] channel(2){{$}}
// INST-NEXT:    coll.reduce in[1][4:6], in[0][4:6] -> out[1][4:6] channel(0){{$}}
// INST-NEXT:    coll.reduce in[1][6:8], in[0][6:8] -> out[1][6:8] channel(2){{$}}
// INST-NEXT:    coll.copy out[0][0] -> out[1][0] channel(0){{$}}
// INST-NEXT:    coll.copy out[0][1] -> out[1][1] channel(0) {coll.piece = 1 : i64}
// INST-NEXT:    coll.copy out[0][2] -> out[1][2] channel(2){{$}}
// INST-NEXT:    coll.copy out[0][3] -> out[1][3] channel(2) {coll.piece = 1 : i64}
// INST-NEXT:    coll.copy out[1][4:6] -> tmp[0][0:2] channel(1) protocol(LL){{$}}
// INST-NEXT:    coll.copy out[1][6:8] -> tmp[0][2:4] channel(3) protocol(LL){{$}}
// INST-NEXT:    coll.copy tmp[0][0:2] -> out[0][4:6] channel(0){{$}}
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

// An op over two chunks stays one op per piece: piece q of the 2 * P
// sub-chunks is the q-th third, contiguous (one op per chunk and piece
// would multiply a plan by its ops' widths). FIFOs need P slots.
// PIPE-LABEL: coll.algorithm @ag : allgather ranks(2) chunks(6) attributes {fifo_depth = 3 : i64} {
// PIPE-NEXT:    coll.copy in[0][0:2] -> out[0][0:2] channel(0){{$}}
// PIPE-NEXT:    coll.copy in[0][2:4] -> out[0][2:4] channel(0) {coll.piece = 1 : i64}
// PIPE-NEXT:    coll.copy in[0][4:6] -> out[0][4:6] channel(0) {coll.piece = 2 : i64}
// PIPE-NEXT:    coll.copy in[0][0:2] -> out[1][0:2] channel(0){{$}}
// PIPE:         coll.copy in[1][4:6] -> out[1][10:12] channel(0) {coll.piece = 2 : i64}
// PIPE-NEXT:  }
// INST-LABEL: coll.algorithm @ag : allgather ranks(2) chunks(4) attributes {fifo_depth = 1 : i64} {
// INST-NEXT:    coll.copy in[0][0:2] -> out[0][0:2] channel(0){{$}}
// INST-NEXT:    coll.copy in[0][2:4] -> out[0][2:4] channel(1){{$}}
// INST:         coll.copy in[1][2:4] -> out[1][6:8] channel(1){{$}}
// INST-NEXT:  }
// stream=1: each op over two chunks streams as two ops of one, in order,
// on the same channel (none here) and chunks; nothing else changes.
// STREAM-LABEL: coll.algorithm @ag : allgather ranks(2) chunks(2) {
// STREAM-NEXT:    coll.copy in[0][0] -> out[0][0]{{$}}
// STREAM-NEXT:    coll.copy in[0][1] -> out[0][1]{{$}}
// STREAM-NEXT:    coll.copy in[0][0] -> out[1][0]{{$}}
// STREAM-NEXT:    coll.copy in[0][1] -> out[1][1]{{$}}
// STREAM:         coll.copy in[1][1] -> out[1][3]{{$}}
// STREAM-NEXT:  }
// With pipeline=3 every piece of two sub-chunks streams as two ops, both
// marked with the piece's wavefront.
// PIPE-STREAM-LABEL: coll.algorithm @ag : allgather ranks(2) chunks(6) attributes {fifo_depth = 3 : i64} {
// PIPE-STREAM-NEXT:    coll.copy in[0][0] -> out[0][0] channel(0){{$}}
// PIPE-STREAM-NEXT:    coll.copy in[0][1] -> out[0][1] channel(0){{$}}
// PIPE-STREAM-NEXT:    coll.copy in[0][2] -> out[0][2] channel(0) {coll.piece = 1 : i64}
// PIPE-STREAM-NEXT:    coll.copy in[0][3] -> out[0][3] channel(0) {coll.piece = 1 : i64}
// PIPE-STREAM-NEXT:    coll.copy in[0][4] -> out[0][4] channel(0) {coll.piece = 2 : i64}
// PIPE-STREAM-NEXT:    coll.copy in[0][5] -> out[0][5] channel(0) {coll.piece = 2 : i64}
// PIPE-STREAM-NEXT:    coll.copy in[0][0] -> out[1][0] channel(0){{$}}
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

// -----

// Ops that cut the chunks differently: instance 0 of the copies of chunk 1
// (sub-chunks 2 .. 3) reads what instance 1 of the reduce wrote, on another
// channel. Each op's parts stand in its place, so every copy still follows
// the reduce it reads (coll-verify above), and the lowered plan waits
// across channels for it (coll-lower proves the plan).
// INST-LABEL: coll.algorithm @mixed : allreduce ranks(2) chunks(4) attributes {fifo_depth = 1 : i64} {
// INST-NEXT:    coll.reduce in[0][0:2], in[1][0:2] -> out[0][0:2] channel(0){{$}}
// INST-NEXT:    coll.reduce in[0][2:4], in[1][2:4] -> out[0][2:4] channel(1){{$}}
// INST-NEXT:    coll.copy out[0][0] -> out[1][0] channel(0){{$}}
// INST-NEXT:    coll.copy out[0][1] -> out[1][1] channel(1){{$}}
// INST-NEXT:    coll.copy out[0][2] -> out[1][2] channel(0){{$}}
// INST-NEXT:    coll.copy out[0][3] -> out[1][3] channel(1){{$}}
// INST-NEXT:  }
// LOWERED-LABEL: coll.plan @mixed_LL
// LOWERED:         coll.threadblock 1 send(1) channel(0)
// LOWERED-NEXT:      coll.send out[0][0] deps(2:0)
// LOWERED-NEXT:      coll.send out[0][2] deps(5:0)
coll.algorithm @mixed : allreduce ranks(2) chunks(2) {
  coll.reduce in[0][0:2], in[1][0:2] -> out[0][0:2]
  coll.copy out[0][0] -> out[1][0]
  coll.copy out[0][1] -> out[1][1]
}
