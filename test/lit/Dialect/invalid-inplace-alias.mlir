// In place, `in` and `out` name the same memory (allgather: in[r][i] is
// out[r][r*C + i]; reducescatter: out[r][i] is in[r][r*C + i]; otherwise one
// to one), so the overlap checks must see through the names. (Known bug:
// they compare buffer names only.)
// RUN: collc-opt %s -split-input-file -verify-diagnostics

coll.algorithm @a : allreduce ranks(1) chunks(3) inplace {
  // expected-error@+1 {{'coll.copy' op source and destination overlap}}
  coll.copy out[0][0:2] -> in[0][1:3]
}

// -----

// in[1][0:2] is out[1][2:4].
coll.algorithm @a : allgather ranks(2) chunks(2) inplace {
  // expected-error@+1 {{'coll.copy' op source and destination overlap}}
  coll.copy in[1][0:2] -> out[1][1:3]
}

// -----

// out[1][0:2] is in[1][2:4].
coll.algorithm @a : reducescatter ranks(2) chunks(2) inplace {
  // expected-error@+1 {{'coll.reduce' op source partially overlaps the destination}}
  coll.reduce in[1][1:3], out[1][0:2] -> in[1][1:3]
}

// -----

// Not in place: `in` and `out` are different memory, no overlap.
coll.algorithm @a : allreduce ranks(1) chunks(3) {
  coll.copy in[0][0:2] -> out[0][1:3]
}
