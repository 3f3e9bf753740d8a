// coll-choose-channels gives each plan a launch table: from which size per
// rank the runtime runs how many replicas of its threadblocks, with how
// many threads each. At the top, enough replicas for the busiest link at
// 36.7 GB/s a threadblock (450 GB/s of NVLink on hgx-h100: 13, so 16; a
// 50 GB/s NIC: 2); below, NCCL's rule: a chunk must hold replicas x
// threads x threshold bytes (Simple 64, LL 8), halving replicas, then
// threads down to 64. Tables start at the plan's min_bytes and stop before
// its max_bytes; max-replicas caps them.
//
// RUN: collc-opt %s -split-input-file --coll-choose-channels | FileCheck %s
// RUN: collc-opt %s -split-input-file --coll-choose-channels=max-replicas=1 | FileCheck %s --check-prefix=ONE
// RUN: collc-opt %s -split-input-file --coll-choose-channels --coll-verify-plan -o /dev/null
// RUN: not collc-opt %s --coll-choose-channels=max-replicas=0 2>&1 | FileCheck %s --check-prefix=RANGE
// RANGE: error: max-replicas must be in 1 .. 32

// A chunk of 1 x 64 x 64 bytes is worth 128 threads; 16 replicas need
// 16 x 512 x 64 bytes.
// CHECK-LABEL: coll.plan @simple :
// CHECK-SAME: launch <0: 1 x 64, 8192: 1 x 128, 16384: 1 x 256, 32768: 1 x 512, 65536: 2 x 512, 131072: 4 x 512, 262144: 8 x 512, 524288: 16 x 512> {
// ONE-LABEL: coll.plan @simple :
// ONE-SAME: launch <0: 1 x 64, 8192: 1 x 128, 16384: 1 x 256, 32768: 1 x 512> {
coll.plan @simple : allgather ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(1) channel(0) protocol(Simple) {
      coll.send in[0][0]
      coll.recv -> out[0][1]
    }
    coll.threadblock 1 channel(0) protocol(Simple) {
      coll.local_copy in[0][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(0) channel(0) protocol(Simple) {
      coll.send in[1][0]
      coll.recv -> out[1][0]
    }
    coll.threadblock 1 channel(0) protocol(Simple) {
      coll.local_copy in[1][0] -> out[1][1]
    }
  }
}

// -----

// LL's threshold is 8 bytes a thread; a table is cut to the plan's range,
// and 4 chunks per buffer make every step 4 times smaller.
// CHECK-LABEL: coll.plan @ll :
// CHECK-SAME: bytes[10000, 300000) algorithm("ll") launch <10000: 1 x 256, 16384: 1 x 512, 32768: 2 x 512, 65536: 4 x 512, 131072: 8 x 512, 262144: 16 x 512> {
coll.plan @ll : allgather ranks(2) chunks(4) bytes[10000, 300000) algorithm("ll") {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(1) channel(0) protocol(LL) {
      coll.send in[0][0:4]
      coll.recv -> out[0][4:8]
    }
    coll.threadblock 1 channel(0) protocol(LL) {
      coll.local_copy in[0][0:4] -> out[0][0:4]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(0) channel(0) protocol(LL) {
      coll.send in[1][0:4]
      coll.recv -> out[1][0:4]
    }
    coll.threadblock 1 channel(0) protocol(LL) {
      coll.local_copy in[1][0:4] -> out[1][4:8]
    }
  }
}

// -----

// Over the network a NIC of 50 GB/s needs two threadblocks.
// CHECK-LABEL: coll.plan @twonodes :
// CHECK-SAME: launch <0: 1 x 64, 8192: 1 x 128, 16384: 1 x 256, 32768: 1 x 512, 65536: 2 x 512> attributes
coll.plan @twonodes : allgather ranks(2) chunks(1) rank_map [0, 8] attributes {topology = "hgx-h100:nodes=2"} {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(1) channel(0) protocol(Simple) {
      coll.send in[0][0]
      coll.recv -> out[0][1]
    }
    coll.threadblock 1 channel(0) protocol(Simple) {
      coll.local_copy in[0][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(0) channel(0) protocol(Simple) {
      coll.send in[1][0]
      coll.recv -> out[1][0]
    }
    coll.threadblock 1 channel(0) protocol(Simple) {
      coll.local_copy in[1][0] -> out[1][1]
    }
  }
}

// -----

// Steps on other ranks' buffers move over the GPU's NVLink as sends do:
// 16 replicas at the top, each on loops of its own (an all-to-all input
// holds a chunk per rank).
// CHECK-LABEL: coll.plan @peers :
// CHECK-SAME: launch <0: 1 x 64, 16384: 1 x 128, 32768: 1 x 256, 65536: 1 x 512, 131072: 2 x 512, 262144: 4 x 512, 524288: 8 x 512, 1048576: 16 x 512> {
coll.plan @peers : alltoall ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 channel(0) protocol(Simple) {
      coll.local_copy in[0][0] -> out[0][0]
      coll.get in[1][0] -> out[0][1]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 channel(0) protocol(Simple) {
      coll.get in[0][1] -> out[1][0]
      coll.local_copy in[1][1] -> out[1][1]
    }
  }
}
