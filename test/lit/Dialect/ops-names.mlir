// A scratch buffer may have any name the attribute dictionary allows; the
// printed chunk must parse back. (Known bug: the chunk printer writes the
// buffer name bare, `a-b[0][0]`, which does not parse: "expected '['".)
// RUN: collc-opt %s | collc-opt | FileCheck %s

// CHECK-LABEL: coll.algorithm @names
// CHECK-NEXT:    coll.copy in[0][0] -> "a-b"[0][0]
// CHECK-NEXT:    coll.copy "a-b"[0][0] -> "1st"[1][0]
coll.algorithm @names : allreduce ranks(2) chunks(1) scratch {"a-b" = 1 : i64, "1st" = 1 : i64} {
  coll.copy in[0][0] -> "a-b"[0][0]
  coll.copy "a-b"[0][0] -> "1st"[1][0]
}
