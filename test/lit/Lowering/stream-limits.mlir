// Streaming counts towards coll-split-chunks's limit on steps: a copy over
// 2^23 + 1 chunks between ranks is 2 steps unstreamed and 2^24 + 2
// streamed one chunk a step, past the 2^24 that a plan may have.
//
// RUN: collc-opt %s --coll-split-chunks -o /dev/null
// RUN: not collc-opt %s --coll-split-chunks=stream=1 2>&1 | FileCheck %s
// CHECK: error: pipeline 1 x instances 1 streamed 1 chunks a step makes the plan too large: more than 16777216 steps over all ranks

coll.algorithm @wide : allgather ranks(2) chunks(8388609) {
  coll.copy in[0][0:8388609] -> out[1][0:8388609]
}
