// Steps are named by ids that increase along a threadblock; the printer
// leaves out an id that is the previous step's plus one (0 for the first),
// and the parser gives such a step exactly that id. Deps name ids, not
// positions.
// RUN: collc-opt %s -split-input-file | FileCheck %s
// RUN: collc-opt %s -split-input-file | collc-opt -split-input-file | FileCheck %s
// RUN: collc-opt %s -split-input-file -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: coll.plan @gaps
// CHECK:       coll.threadblock 0 send(1) channel(0) {
// CHECK-NEXT:    coll.local_copy in[0][0] -> out[0][0]{{$}}
// CHECK-NEXT:    coll.send in[0][1] id(4){{$}}
// CHECK-NEXT:    coll.send in[0][0]{{$}}
// CHECK-NEXT:    coll.send in[0][0] id(9){{$}}
// CHECK:       coll.threadblock 1 channel(0) {
// CHECK-NEXT:    coll.local_copy in[0][1] -> out[0][1] id(3) deps(0:5){{$}}
// CHECK-NEXT:    coll.local_copy in[0][0] -> out[0][0] deps(0:9){{$}}
// The ids as the parser filled them in: 0, 4, 5, 9 and 3, 4.
// GENERIC-LABEL: sym_name = "gaps"
// GENERIC:       "coll.local_copy"() <{dst = {{.*}}, id = 0 : i64
// GENERIC-NEXT:  "coll.send"() <{id = 4 : i64
// GENERIC-NEXT:  "coll.send"() <{id = 5 : i64
// GENERIC-NEXT:  "coll.send"() <{id = 9 : i64
// GENERIC:       "coll.local_copy"() <{deps = array<i64: 0, 5>, dst = {{.*}}, id = 3 : i64
// GENERIC-NEXT:  "coll.local_copy"() <{deps = array<i64: 0, 9>, dst = {{.*}}, id = 4 : i64
coll.plan @gaps : allreduce ranks(2) chunks(2) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.local_copy in[0][0] -> out[0][0]
      coll.send in[0][1] id(4)
      coll.send in[0][0] id(5)
      coll.send in[0][0] id(9)
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[0][1] -> out[0][1] id(3) deps(0:5)
      coll.local_copy in[0][0] -> out[0][0] deps(0:9)
    }
  }
}

// -----

// An explicit id equal to the implicit one prints without it.
// CHECK-LABEL: coll.plan @dense
// CHECK:       coll.send in[0][0]{{$}}
// CHECK-NEXT:  coll.send in[0][1]{{$}}
coll.plan @dense : allreduce ranks(2) chunks(2) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send in[0][0] id(0)
      coll.send in[0][1] id(1)
    }
  }
}
