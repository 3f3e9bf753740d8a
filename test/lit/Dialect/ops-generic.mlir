// The generic form must round-trip too: print generic, parse, print custom.
// Enums are integers in the generic form (collective 4 is broadcast,
// protocol 1 is LL).
// RUN: collc-opt %s --mlir-print-op-generic | collc-opt | FileCheck %s
// RUN: collc-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// GENERIC: "coll.algorithm"() <{chunks = 2 : i64, collective = 4 : i32
// GENERIC: "coll.copy"() <{channel = 1 : i64, dst = #coll.chunk<out[0][0:2]>, pipeline = 4 : i64, protocol = 1 : i32
// GENERIC-SAME: src = #coll.chunk<in[3][0:2]>}> : () -> ()

// CHECK-LABEL: coll.algorithm @everything : broadcast ranks(4) chunks(2) root(3) inplace scratch {tmp = 8 : i64} params {nch = 2 : i64} {
// CHECK-NEXT:    coll.copy in[3][0:2] -> out[0][0:2] channel(1) protocol(LL) pipeline(4)
// CHECK-NEXT:    coll.reduce in[0][1], tmp[1][3] -> out[1][1] protocol(LL128)
// CHECK-NEXT:  }
coll.algorithm @everything : broadcast ranks(4) chunks(2) root(3) inplace scratch {tmp = 8 : i64} params {nch = 2 : i64} {
  coll.copy in[3][0:2] -> out[0][0:2] channel(1) protocol(LL) pipeline(4)
  coll.reduce in[0][1], tmp[1][3] -> out[1][1] protocol(LL128)
}
