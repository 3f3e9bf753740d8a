// Threadblocks whose runs have the same kinds of steps share a shape even
// where their chunk ranges have different lengths or they wait on different
// numbers of deps, as recursive halving's rounds do: the count is `?` and
// each threadblock's table gives it after the field's index, and with
// `table_waits` the table gives the number of deps before them.
// RUN: collc-opt --coll-reroll %s | FileCheck %s --check-prefix=SHAPE
// RUN: collc-opt --coll-reroll %s | collc-opt --coll-reroll | FileCheck %s --check-prefix=SHAPE
// RUN: collc-opt --coll-reroll %s -mlir-print-debuginfo | collc-translate --coll-to-cuda | FileCheck %s --strict-whitespace --match-full-lines

// SHAPE:      coll.shape 0 {
// SHAPE-NEXT:   coll.run send x 1 [#coll.affine<src "in"[(1 * r + 0 * k + 0) mod 4] x ?>] table_waits
// SHAPE-NEXT:   coll.run send x 3 [#coll.table<src "in" x ?>]
// SHAPE-NEXT: }
// SHAPE-NEXT: coll.shape 1 {
// SHAPE-NEXT:   coll.run local_copy x 1
// SHAPE-NOT:  coll.shape
module {
  coll.plan @p : allreduce ranks(2) chunks(4) inplace scratch {s = 1 : i64} protocol(Simple) slots(8) {
    coll.rank 0 {
      coll.threadblock 0 send(1) channel(0) {
        coll.send in[0][0:2]
        coll.send in[0][0]
        coll.send in[0][3]
        coll.send in[0][1]
      }
    }
    coll.rank 1 {
      coll.threadblock 0 send(0) channel(0) {
        coll.send in[1][1] deps(1:0)
        coll.send in[1][0:2]
        coll.send in[1][2:4]
        coll.send in[1][1:3]
      }
      coll.threadblock 1 channel(0) {
        coll.local_copy in[1][3] -> s[1][0]
      }
    }
  }
}

// CHECK:COLLC_DEVICE void shape0(Block &b, int64_t r, const int64_t *t) {
// CHECK-NEXT:  for (int64_t n = *t++; n > 0; --n, t += 3)
// CHECK-NEXT:    b.wait(t[0], t[1], t[2]);
// CHECK-NEXT:  b.send(in(r, int32_t(t[0])));                 // translate-table-counts.mlir:{{[0-9]+}}
// CHECK-NEXT:  t += 1;
// CHECK-NEXT:  for (int64_t k = 0; k < 3; ++k) {
// CHECK-NEXT:    b.send(in(t[0], int32_t(t[1])));            // translate-table-counts.mlir:{{[0-9]+}}
// CHECK-NEXT:    t += 2;
// CHECK-NEXT:  }
// CHECK-NEXT:}
// Rank 0 waits on nothing and sends 2 chunks, then chunks 0, 3 and 1 of 1;
// rank 1 waits on step 0 of entry 2 (its threadblock 1, of 1 step) and sends
// 1 chunk, then chunks 0, 2 and 1 of 2.
// CHECK:const int64_t t0[] = {0, 2, 0, 1, 3, 1, 1, 1};
// CHECK:const int64_t t1[] = {1, 2, 0, 1, 1, 0, 2, 2, 2, 1, 2};
