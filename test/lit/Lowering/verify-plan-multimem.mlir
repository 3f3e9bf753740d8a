// coll-verify-plan runs multimem steps on every rank at once: a multicast
// load-reduce of chunks another rank overwrites, and a multicast store into
// a chunk its owner reads, race with steps nothing orders them against; a
// load-reduce of untouched inputs followed by the multicast store computes
// the allreduce.
// RUN: collc-opt %s --coll-verify-plan -split-input-file -verify-diagnostics

coll.plan @twoshot : allreduce ranks(2) chunks(2) scratch {red = 1 : i64} {
  coll.rank 0 {
    coll.threadblock 0 channel(0) {
      coll.multimem_ld_reduce in[0][0] -> red[0][0]
      coll.multimem_st red[0][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 channel(0) {
      coll.multimem_ld_reduce in[1][1] -> red[1][0]
      coll.multimem_st red[1][0] -> out[1][1]
    }
  }
}

// -----

coll.plan @overwritten : allreduce ranks(2) chunks(2) inplace scratch {red = 1 : i64} {
  coll.rank 0 {
    coll.threadblock 0 channel(0) {
      coll.multimem_ld_reduce in[0][0] -> red[0][0]
      coll.multimem_st red[0][0] -> in[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 channel(0) {
      // expected-error@+1 {{race: rank 1, threadblock 0, step 0 (local_copy) and rank 0, threadblock 0, step 1 (multimem_st) both access in[1][0]}}
      coll.local_copy in[1][1] -> in[1][0]
      coll.multimem_ld_reduce in[1][1] -> red[1][0]
      coll.multimem_st red[1][0] -> in[1][1]
    }
  }
}

// -----

coll.plan @store_races_reader : allgather ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 channel(0) {
      coll.multimem_st in[0][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 channel(0) {
      // expected-error@+1 {{race}}
      coll.local_copy out[1][0] -> out[1][1]
      coll.multimem_st in[1][0] -> out[1][1]
    }
  }
}
