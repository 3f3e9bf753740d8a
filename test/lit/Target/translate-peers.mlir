// Steps on other ranks' buffers: a threadblock with multimem steps sets
// kTbPeerSteps | kTbMultimem (12) in the threadblock table, one with only
// peer-window steps kTbPeerSteps (4); `get` names the rank it loads from.
// RUN: collc-opt --coll-reroll %s -mlir-print-debuginfo | collc-translate --coll-to-cuda | FileCheck %s --strict-whitespace --match-full-lines
// RUN: collc-opt --coll-reroll %s | FileCheck %s --check-prefix=REROLL

module {
  coll.plan @twoshot_LL : allreduce ranks(2) chunks(2) scratch {red = 1 : i64} bytes[0, 4611686018427387904) algorithm("twoshot") protocol(LL) slots(8) {
    coll.rank 0 {
      coll.threadblock 0 channel(0) protocol(LL) {
        coll.multimem_ld_reduce in[0][0] -> red[0][0]
        coll.multimem_st red[0][0] -> out[0][0]
      }
    }
    coll.rank 1 {
      coll.threadblock 0 channel(0) protocol(LL) {
        coll.multimem_ld_reduce in[1][1] -> red[1][0]
        coll.multimem_st red[1][0] -> out[1][1]
      }
    }
  }
  coll.plan @apart_LL : allreduce ranks(2) chunks(4) scratch {red = 2 : i64} bytes[0, 4611686018427387904) algorithm("apart") protocol(LL) slots(8) {
    coll.rank 0 {
      coll.threadblock 0 channel(0) protocol(LL) {
        coll.multimem_ld_reduce in[0][0] -> red[0][0]
        coll.multimem_ld_reduce in[0][2] -> red[0][1]
        coll.multimem_st red[0][0] -> out[0][0]
        coll.multimem_st red[0][1] -> out[0][2]
      }
    }
    coll.rank 1 {
      coll.threadblock 0 channel(0) protocol(LL) {
        coll.multimem_ld_reduce in[1][1] -> red[1][0]
        coll.multimem_ld_reduce in[1][3] -> red[1][1]
        coll.multimem_st red[1][0] -> out[1][1]
        coll.multimem_st red[1][1] -> out[1][3]
      }
    }
  }
  coll.plan @windows_Simple : allreduce ranks(2) chunks(2) scratch {red = 1 : i64} bytes[0, 4611686018427387904) algorithm("windows") protocol(Simple) slots(8) {
    coll.rank 0 {
      coll.threadblock 0 channel(0) protocol(Simple) {
        coll.read_reduce in[0][0] -> red[0][0]
        coll.put red[0][0] -> out[0][0]
        coll.get out[1][1] -> out[0][1]
      }
    }
    coll.rank 1 {
      coll.threadblock 0 channel(0) protocol(Simple) {
        coll.read_reduce in[1][1] -> red[1][0]
        coll.put red[1][0] -> out[1][1]
      }
    }
  }
}

// A load-reduce and the store of what it reduced, next to each other:
// coll-reroll marks them one call, which keeps the values in registers
// (the table still counts two steps); loads and stores apart stay apart.
// REROLL-LABEL: coll.plan @twoshot_LL
// REROLL: coll.run multimem_ld_reduce x 1 [{{.*}}] fuse_next
// REROLL-NEXT: coll.run multimem_st x 1
// REROLL-LABEL: coll.plan @apart_LL
// REROLL-NOT: fuse_next
// REROLL-LABEL: coll.plan @windows_Simple
// CHECK:COLLC_DEVICE void shape0(Block &b, int64_t r, const int64_t *) {
// CHECK-NEXT:  b.multimemAllReduce(in(r), scratch(kScratch_red, 0), out(r)); // translate-peers.mlir:{{[0-9]+}}
// CHECK-NEXT:}
// CHECK:const ThreadblockDesc threadblocks[] = {
// CHECK-NEXT:    // rank, id, recv, send, channel, protocol, direct/peer steps, steps,
// CHECK-NEXT:    // shape, table
// CHECK-NEXT:    {0, 0, -1, -1, 0, kLL, 12, 2, 0, 0, nullptr},
// CHECK-NEXT:    {1, 0, -1, -1, 0, kLL, 12, 2, 0, 0, nullptr},
// CHECK-NEXT:};

// Both loads first, then both stores: no store follows the load of its
// chunk, so the steps stay apart.
// CHECK:COLLC_DEVICE void shape0(Block &b, int64_t r, const int64_t *) {
// CHECK-NEXT:  for (int64_t k = 0; k < 2; ++k) {
// CHECK-NEXT:    b.multimemLdReduce(in(r + 2 * k), scratch(kScratch_red, k)); // translate-peers.mlir:{{[0-9]+}}
// CHECK-NEXT:  }
// CHECK-NEXT:  for (int64_t k = 0; k < 2; ++k) {
// CHECK-NEXT:    b.multimemSt(scratch(kScratch_red, k), out(r + 2 * k)); // translate-peers.mlir:{{[0-9]+}}
// CHECK-NEXT:  }
// CHECK-NEXT:}

// Rank 0 also gets, so the ranks have shapes of their own.
// CHECK:COLLC_DEVICE void shape0(Block &b, int64_t, const int64_t *) {
// CHECK-NEXT:  b.readReduce(in(0), scratch(kScratch_red, 0)); // translate-peers.mlir:{{[0-9]+}}
// CHECK-NEXT:  b.put(scratch(kScratch_red, 0), out(0));      // translate-peers.mlir:{{[0-9]+}}
// CHECK-NEXT:  b.get(1, out(1), out(1));                     // translate-peers.mlir:{{[0-9]+}}
// CHECK-NEXT:}
// CHECK:const ThreadblockDesc threadblocks[] = {
// CHECK-NEXT:    // rank, id, recv, send, channel, protocol, direct/peer steps, steps,
// CHECK-NEXT:    // shape, table
// CHECK-NEXT:    {0, 0, -1, -1, 0, kSimple, 4, 3, 0, 0, nullptr},
// CHECK-NEXT:    {1, 0, -1, -1, 0, kSimple, 4, 2, 1, 0, nullptr},
// CHECK-NEXT:};
