// coll-number-steps renames every step to its position in its threadblock
// and every dep with it; a plan whose ids are positions stays as it is, and
// the emitters accept what it leaves.
// RUN: collc-opt %s -split-input-file --coll-number-steps | FileCheck %s
// RUN: collc-opt %s -split-input-file --coll-number-steps -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: collc-opt %s -split-input-file --coll-number-steps | collc-opt -split-input-file --coll-number-steps | FileCheck %s
// RUN: collc-opt %s -split-input-file --coll-number-steps --coll-reroll | collc-translate --coll-to-cuda -split-input-file | FileCheck %s --check-prefix=CUDA

// CHECK-LABEL: coll.plan @gaps
// CHECK:         coll.threadblock 0 send(1) channel(0) {
// CHECK-NEXT:      coll.send in[0][0]{{$}}
// CHECK-NEXT:      coll.send in[0][1]{{$}}
// CHECK-NEXT:    }
// CHECK-NEXT:    coll.threadblock 1 channel(0) {
// CHECK-NEXT:      coll.local_copy in[0][0] -> out[0][0] deps(0:0){{$}}
// CHECK-NEXT:      coll.local_copy in[0][1] -> out[0][1] deps(0:1){{$}}
// CHECK-NEXT:    }
// GENERIC-LABEL: sym_name = "gaps"
// GENERIC:       "coll.send"() <{id = 0 : i64
// GENERIC-NEXT:  "coll.send"() <{id = 1 : i64
// GENERIC:       "coll.local_copy"() <{deps = array<i64: 0, 0>, dst = {{.*}}, id = 0 : i64
// GENERIC-NEXT:  "coll.local_copy"() <{deps = array<i64: 0, 1>, dst = {{.*}}, id = 1 : i64
// The wait names the second send by its position, 1: threadblock 1 of
// rank 0 (entry 1) waits for step 0, then step 1 of entry 0 (2 steps).
// CUDA-LABEL: namespace gaps {
// CUDA:       const int64_t t1[] = {0, 0, 2, 0, 1, 2};
coll.plan @gaps : allreduce ranks(2) chunks(2) protocol(Simple) slots(8) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send in[0][0] id(2)
      coll.send in[0][1] id(7)
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[0][0] -> out[0][0] id(5) deps(0:2)
      coll.local_copy in[0][1] -> out[0][1] deps(0:7)
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> in[1][0] id(4)
      coll.recv -> in[1][1] id(10)
    }
  }
}
