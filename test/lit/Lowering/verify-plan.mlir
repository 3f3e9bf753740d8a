// coll-verify-plan on deliberately broken hand-written plans. It runs each
// plan with FIFOs of depth one; every error names the rank, threadblock and
// step (with its op) where the run goes wrong, or the connection, or, for
// the postcondition, the wrong chunk with a note at the step that last wrote
// it.
//
// RUN: collc-opt %s --coll-verify-plan -split-input-file -verify-diagnostics

// A missing receive: rank 0 sends in[0][0] twice, rank 1 receives once.
coll.plan @missing_recv : allgather ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(1) channel(0) {
      coll.send in[0][0]
      // expected-error@+1 {{(send) sends to rank 1 on channel 0 a message nobody receives}}
      coll.send in[0][0]
      coll.recv -> out[0][1]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[0][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(0) channel(0) {
      coll.send in[1][0]
      coll.recv -> out[1][0]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[1][0] -> out[1][1]
    }
  }
}

// -----

// Receives that do not match the sends in size: rank 0 sends both chunks in
// one step, rank 1 receives them one at a time.
coll.plan @size_mismatch : allgather ranks(2) chunks(2) {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(1) channel(0) {
      // expected-note@+1 {{the send is here}}
      coll.send in[0][0:2]
      coll.recv -> out[0][2:4]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[0][0:2] -> out[0][0:2]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(0) channel(0) {
      coll.send in[1][0:2]
      // expected-error@+1 {{rank 1, threadblock 0, step 1 (recv) expects 1 chunks from rank 0 but the matching send carries 2}}
      coll.recv -> out[1][0]
      coll.recv -> out[1][1]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[1][0:2] -> out[1][2:4]
    }
  }
}

// -----

// Reordered receives of equal size: every message arrives, but in[0][1]
// lands in out[1][0] and in[0][0] in out[1][1].
// expected-error@+1 {{allgather postcondition fails: out[1][0] holds in[0][1] but should hold in[0][0] (1 more output chunk is wrong)}}
coll.plan @swapped : allgather ranks(2) chunks(2) {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(1) channel(0) {
      coll.send in[0][0]
      coll.send in[0][1]
      coll.recv -> out[0][2:4]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[0][0:2] -> out[0][0:2]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(0) channel(0) {
      coll.send in[1][0:2]
      coll.recv -> out[1][1]
      // expected-note@+1 {{out[1][0] was last written here}}
      coll.recv -> out[1][0]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[1][0:2] -> out[1][2:4]
    }
  }
}

// -----

// A cycle through two threadblocks: each one's first step waits for the
// other's.
coll.plan @deps_cycle : allgather ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      // expected-error@+1 {{deadlock: rank 0, threadblock 0, step 0 (send) waits forever for a step of another threadblock it depends on}}
      coll.send out[0][0] deps(1:0)
    }
    coll.threadblock 1 recv(1) channel(0) {
      coll.recv -> out[0][1] deps(0:0)
    }
    coll.threadblock 2 channel(0) {
      coll.local_copy in[0][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(0) channel(0) {
      coll.send in[1][0]
      coll.recv -> out[1][0]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[1][0] -> out[1][1]
    }
  }
}

// -----

// A cycle through FIFO back-pressure: both ranks send twice before they
// receive, on one threadblock each; the second send waits for room that only
// the peer's receive would make.
coll.plan @head_on : allgather ranks(2) chunks(2) {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(1) channel(0) {
      coll.send in[0][0]
      // expected-error@+1 {{deadlock: rank 0, threadblock 0, step 1 (send) waits forever for room to send to rank 1 on channel 0}}
      coll.send in[0][1]
      coll.recv -> out[0][2]
      coll.recv -> out[0][3]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[0][0:2] -> out[0][0:2]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(0) channel(0) {
      coll.send in[1][0]
      coll.send in[1][1]
      coll.recv -> out[1][0]
      coll.recv -> out[1][1]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[1][0:2] -> out[1][2:4]
    }
  }
}

// -----

// A send with no receiving side at all: rank 1 has no threadblock that
// receives from rank 0.
coll.plan @no_receiver : allgather ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      // expected-error@+1 {{(send) sends to rank 1 on channel 0 a message nobody receives}}
      coll.send in[0][0]
    }
  }
  coll.rank 1 {
  }
}

// -----

// The same with two sends: the second never finds room.
coll.plan @no_receiver_blocks : allgather ranks(2) chunks(2) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send in[0][0]
      // expected-error@+1 {{deadlock: rank 0, threadblock 0, step 1 (send) waits forever for room to send to rank 1 on channel 0}}
      coll.send in[0][1]
    }
  }
  coll.rank 1 {
  }
}

// -----

// A receive that never gets data: nothing sends to rank 1.
coll.plan @no_sender : allgather ranks(2) chunks(1) {
  coll.rank 0 {
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) channel(0) {
      // expected-error@+1 {{deadlock: rank 1, threadblock 0, step 0 (recv) waits forever for a message from rank 0 on channel 0}}
      coll.recv -> out[1][0]
    }
  }
}

// -----

// The sender and the receiver of a connection disagree on the channel: the
// message goes out on channel 0, the receive waits on channel 1.
coll.plan @wrong_channel : allgather ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send in[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) channel(1) {
      // expected-error@+1 {{deadlock: rank 1, threadblock 0, step 0 (recv) waits forever for a message from rank 0 on channel 1}}
      coll.recv -> out[1][0]
    }
  }
}

// -----

// A double-counted contribution: rank 2 gets rank 0's chunk both through
// rank 1's partial sum and directly.
coll.plan @twice : allreduce ranks(3) chunks(1) inplace {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 1 send(2) channel(0) {
      coll.send in[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(2) channel(0) {
      coll.recv_reduce_copy in[1][0] -> in[1][0]
      coll.send in[1][0]
    }
  }
  coll.rank 2 {
    coll.threadblock 0 recv(1) channel(0) {
      coll.recv_reduce_copy in[2][0] -> in[2][0]
    }
    coll.threadblock 1 recv(0) channel(0) {
      // expected-error@+1 {{rank 2, threadblock 1, step 0 (recv_reduce_copy) counts rank 0's contribution twice: in[2][0] holds in[0 .. 3][0] and the other terms hold in[0][0]}}
      coll.recv_reduce_copy in[2][0] -> in[2][0] deps(0:0)
    }
  }
}

// -----

// Reducing different input chunks: the received in[0][0] with in[1][1].
coll.plan @mixed_chunks : allreduce ranks(2) chunks(2) inplace {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send in[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) channel(0) {
      // expected-error@+1 {{rank 1, threadblock 0, step 0 (recv_reduce_copy) combines different input chunks: in[1][1] holds in[1][1] but the other terms hold in[0][0]}}
      coll.recv_reduce_copy in[1][1] -> in[1][1]
    }
  }
}

// -----

// A wrong result: every step runs, but rank 2's contribution never reaches
// rank 0 and 1 (rank 2 only copies its own chunk).
// expected-error@+1 {{allreduce postcondition fails: out[0][0] holds in[0 .. 2][0] but rank 2's contribution is missing (2 more output chunks are wrong)}}
coll.plan @missing_contribution : allreduce ranks(3) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 1 recv(1) channel(0) {
      // expected-note@+1 {{out[0][0] was last written here}}
      coll.recv -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(0) channel(0) {
      coll.recv_reduce_copy in[1][0] -> out[1][0]
      coll.send out[1][0]
    }
  }
  coll.rank 2 {
    coll.threadblock 0 channel(0) {
      coll.local_copy in[2][0] -> out[2][0]
    }
  }
}

// -----

// Sending a chunk before anything wrote it.
coll.plan @unwritten : allgather ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      // expected-error@+1 {{rank 0, threadblock 0, step 0 (send) reads out[0][0], which has not been written yet}}
      coll.send out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[1][0]
    }
  }
}

// -----

// One connection (rank 0 -> rank 1, channel 0) used by two threadblocks.
coll.plan @shared_send : allgather ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send in[0][0]
    }
    // expected-error@+1 {{rank 0 sends to rank 1 on channel 0 from threadblocks 0 and 1; a connection belongs to one threadblock}}
    coll.threadblock 1 send(1) channel(0) {
      coll.send in[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[1][0]
    }
  }
}

// -----

// The same on the receiving end.
coll.plan @shared_recv : allgather ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send in[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[1][0]
    }
    // expected-error@+1 {{rank 1 receives from rank 0 on channel 0 in threadblocks 0 and 3; a connection belongs to one threadblock}}
    coll.threadblock 3 recv(0) channel(0) {
      coll.recv -> out[1][0]
    }
  }
}
