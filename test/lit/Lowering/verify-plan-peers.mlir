// coll-verify-plan runs peer-window steps like multimem ones: read_reduce
// and put on every rank at once, get on the chunk of the rank it names.
// A get of an input its owner overwrites races with the owner's step, and
// a get alone does not reduce; a get of an untouched input, or a
// load-reduce and store over the windows, computes the collective.
// RUN: collc-opt %s --coll-verify-plan -split-input-file -verify-diagnostics

coll.plan @twoshot : allreduce ranks(2) chunks(2) scratch {red = 1 : i64} {
  coll.rank 0 {
    coll.threadblock 0 channel(0) {
      coll.read_reduce in[0][0] -> red[0][0]
      coll.put red[0][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 channel(0) {
      coll.read_reduce in[1][1] -> red[1][0]
      coll.put red[1][0] -> out[1][1]
    }
  }
}

// -----

coll.plan @pairwise : alltoall ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 channel(0) {
      coll.local_copy in[0][0] -> out[0][0]
      coll.get in[1][0] -> out[0][1]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 channel(0) {
      coll.get in[0][1] -> out[1][0]
      coll.local_copy in[1][1] -> out[1][1]
    }
  }
}

// -----

coll.plan @overwritten : alltoall ranks(2) chunks(1) inplace {
  coll.rank 0 {
    coll.threadblock 0 channel(0) {
      coll.get in[1][0] -> in[0][1]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 channel(0) {
      // expected-error@+1 {{race: rank 1, threadblock 0, step 0 (get) and rank 0, threadblock 0, step 0 (get) both access in[0][1]}}
      coll.get in[0][1] -> in[1][0]
    }
  }
}

// -----

// expected-error@+1 {{allreduce postcondition fails: out[0][0] holds in[1][0] but rank 0's contribution is missing}}
coll.plan @missing_term : allreduce ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 channel(0) {
      // A copy of the other rank's input, not a reduction with this one's.
      // expected-note@+1 {{out[0][0] was last written here}}
      coll.get in[1][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 channel(0) {
      coll.local_copy in[1][0] -> out[1][0]
    }
  }
}
