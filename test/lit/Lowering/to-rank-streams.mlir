// coll-to-rank-streams on small hand-written global-view algorithms: copies
// between ranks become a send and a receive on threadblocks whose peers are
// those ranks, reductions become receive-reduces (or local steps), every
// connection (peer, direction, channel) has one threadblock, local steps have
// a threadblock per channel without peers, and a step that touches a chunk
// another threadblock of its rank wrote or read before carries deps(tb:step).
// Each input is a complete, correct algorithm: the second RUN proves them so,
// the third proves the unfused plans deadlock-free and correct.
//
// RUN: collc-opt %s -split-input-file --coll-to-rank-streams | FileCheck %s
// RUN: collc-opt %s -split-input-file --coll-verify -o /dev/null
// RUN: collc-opt %s -split-input-file --coll-to-rank-streams --coll-verify-plan -o /dev/null
// RUN: collc-opt %s -split-input-file --coll-to-rank-streams --coll-fuse --coll-verify-plan -o /dev/null

// A copy between ranks is a send on the source rank and a receive on the
// destination, each in a threadblock that talks to the other rank; a copy
// within a rank is a local_copy in a threadblock without peers.
// CHECK-LABEL: coll.plan @copy : allgather ranks(2) chunks(1) {
// CHECK-NEXT:    coll.rank 0 {
// CHECK-NEXT:      coll.threadblock 0 channel(0) {
// CHECK-NEXT:        coll.local_copy in[0][0] -> out[0][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 1 send(1) channel(0) {
// CHECK-NEXT:        coll.send in[0][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 2 recv(1) channel(0) {
// CHECK-NEXT:        coll.recv -> out[0][1]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    coll.rank 1 {
// CHECK-NEXT:      coll.threadblock 0 channel(0) {
// CHECK-NEXT:        coll.local_copy in[1][0] -> out[1][1]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 1 send(0) channel(0) {
// CHECK-NEXT:        coll.send in[1][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 2 recv(0) channel(0) {
// CHECK-NEXT:        coll.recv -> out[1][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NOT:   coll.algorithm
coll.algorithm @copy : allgather ranks(2) chunks(1) {
  coll.copy in[0][0] -> out[1][0]
  coll.copy in[1][0] -> out[0][1]
  coll.copy in[0][0] -> out[0][0]
  coll.copy in[1][0] -> out[1][1]
}

// -----

// A reduce of a local and two remote sources into another chunk: the local
// term is copied into the destination, then each remote term arrives over
// its own connection as a recv_reduce_copy into the destination. The second
// receive-reduce depends on the first, the first on the local copy; the
// sends of the result depend on the last write. The receive from rank 2 is
// followed by the send of what it wrote to rank 1, so the two share
// threadblock 3 (recv(2) send(1)) for coll-fuse.
// CHECK-LABEL: coll.plan @red3 : allreduce ranks(3) chunks(1) {
// CHECK-NEXT:    coll.rank 0 {
// CHECK-NEXT:      coll.threadblock 0 channel(0) {
// CHECK-NEXT:        coll.local_copy in[0][0] -> out[0][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 1 send(2) channel(0) {
// CHECK-NEXT:        coll.send out[0][0] deps(3:0){{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 2 recv(1) channel(0) {
// CHECK-NEXT:        coll.recv_reduce_copy out[0][0] -> out[0][0] deps(0:0){{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 3 recv(2) send(1) channel(0) {
// CHECK-NEXT:        coll.recv_reduce_copy out[0][0] -> out[0][0] deps(2:0){{$}}
// CHECK-NEXT:        coll.send out[0][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    coll.rank 1 {
// CHECK-NEXT:      coll.threadblock 0 send(0) channel(0) {
// CHECK-NEXT:        coll.send in[1][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 1 recv(0) channel(0) {
// CHECK-NEXT:        coll.recv -> out[1][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    coll.rank 2 {
// CHECK-NEXT:      coll.threadblock 0 send(0) channel(0) {
// CHECK-NEXT:        coll.send in[2][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 1 recv(0) channel(0) {
// CHECK-NEXT:        coll.recv -> out[2][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
coll.algorithm @red3 : allreduce ranks(3) chunks(1) {
  coll.reduce in[0][0], in[1][0], in[2][0] -> out[0][0]
  coll.copy out[0][0] -> out[1][0]
  coll.copy out[0][0] -> out[2][0]
}

// -----

// Two remote sources and no local one: the first is a plain recv into the
// destination, the second a recv_reduce_copy that depends on it. Adding the
// local term afterwards (dst += local) is a local_reduce in the threadblock
// without peers that depends on the receive-reduce.
// CHECK-LABEL: coll.plan @remote2 : allreduce ranks(3) chunks(1) {
// CHECK-NEXT:    coll.rank 0 {
// CHECK-NEXT:      coll.threadblock 0 channel(0) {
// CHECK-NEXT:        coll.local_reduce out[0][0], in[0][0] -> out[0][0] deps(4:0){{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 1 send(1) channel(0) {
// CHECK-NEXT:        coll.send out[0][0] deps(0:0){{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 2 send(2) channel(0) {
// CHECK-NEXT:        coll.send out[0][0] deps(0:0){{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 3 recv(1) channel(0) {
// CHECK-NEXT:        coll.recv -> out[0][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 4 recv(2) channel(0) {
// CHECK-NEXT:        coll.recv_reduce_copy out[0][0] -> out[0][0] deps(3:0){{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK:         coll.rank 2 {
coll.algorithm @remote2 : allreduce ranks(3) chunks(1) {
  coll.reduce in[1][0], in[2][0] -> out[0][0]
  coll.reduce in[0][0], out[0][0] -> out[0][0]
  coll.copy out[0][0] -> out[1][0]
  coll.copy out[0][0] -> out[2][0]
}

// -----

// A purely local reduce is a local_reduce in the threadblock without peers;
// it reads the scratch chunk the receive of threadblock 2 wrote, so it
// depends on that step, and the send of its result depends on it.
// CHECK-LABEL: coll.plan @local : allreduce ranks(2) chunks(1) scratch {t = 1 : i64} {
// CHECK-NEXT:    coll.rank 0 {
// CHECK-NEXT:      coll.threadblock 0 channel(0) {
// CHECK-NEXT:        coll.local_reduce in[0][0], t[0][0] -> out[0][0] deps(2:0){{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 1 send(1) channel(0) {
// CHECK-NEXT:        coll.send out[0][0] deps(0:0){{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 2 recv(1) channel(0) {
// CHECK-NEXT:        coll.recv -> t[0][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    coll.rank 1 {
// CHECK-NEXT:      coll.threadblock 0 send(0) channel(0) {
// CHECK-NEXT:        coll.send in[1][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 1 recv(0) channel(0) {
// CHECK-NEXT:        coll.recv -> out[1][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
coll.algorithm @local : allreduce ranks(2) chunks(1) scratch {t = 1 : i64} {
  coll.copy in[1][0] -> t[0][0]
  coll.reduce in[0][0], t[0][0] -> out[0][0]
  coll.copy out[0][0] -> out[1][0]
}

// -----

// Channels: the same pair of ranks on channels 0 and 1 are different
// connections, so each gets its own threadblock; local steps without a
// channel annotation run on channel 0. A range moves as one step.
// CHECK-LABEL: coll.plan @chan : allgather ranks(2) chunks(2) {
// CHECK-NEXT:    coll.rank 0 {
// CHECK-NEXT:      coll.threadblock 0 channel(0) {
// CHECK-NEXT:        coll.local_copy in[0][0:2] -> out[0][0:2]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 1 send(1) channel(0) {
// CHECK-NEXT:        coll.send in[0][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 2 send(1) channel(1) {
// CHECK-NEXT:        coll.send in[0][1]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 3 recv(1) channel(1) {
// CHECK-NEXT:        coll.recv -> out[0][2:4]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    coll.rank 1 {
// CHECK-NEXT:      coll.threadblock 0 channel(0) {
// CHECK-NEXT:        coll.local_copy in[1][0:2] -> out[1][2:4]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 1 recv(0) channel(0) {
// CHECK-NEXT:        coll.recv -> out[1][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 2 send(0) channel(1) {
// CHECK-NEXT:        coll.send in[1][0:2]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 3 recv(0) channel(1) {
// CHECK-NEXT:        coll.recv -> out[1][1]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
coll.algorithm @chan : allgather ranks(2) chunks(2) {
  coll.copy in[0][0] -> out[1][0] channel(0)
  coll.copy in[0][1] -> out[1][1] channel(1)
  coll.copy in[1][0:2] -> out[0][2:4] channel(1)
  coll.copy in[0][0:2] -> out[0][0:2]
  coll.copy in[1][0:2] -> out[1][2:4]
}

// -----

// A chain: rank 1 forwards what it receives, so the receive from rank 0 and
// the send to rank 2 share one threadblock, each receive right before the
// send of what it wrote (for coll-fuse); the two chunks pipeline in
// dependency-depth order.
// CHECK-LABEL: coll.plan @chain : broadcast ranks(3) chunks(2) root(0) {
// CHECK-NEXT:    coll.rank 0 {
// CHECK-NEXT:      coll.threadblock 0 channel(0) {
// CHECK-NEXT:        coll.local_copy in[0][0] -> out[0][0]{{$}}
// CHECK-NEXT:        coll.local_copy in[0][1] -> out[0][1]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 1 send(1) channel(0) {
// CHECK-NEXT:        coll.send in[0][0]{{$}}
// CHECK-NEXT:        coll.send in[0][1]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    coll.rank 1 {
// CHECK-NEXT:      coll.threadblock 0 recv(0) send(2) channel(0) {
// CHECK-NEXT:        coll.recv -> out[1][0]{{$}}
// CHECK-NEXT:        coll.send out[1][0]{{$}}
// CHECK-NEXT:        coll.recv -> out[1][1]{{$}}
// CHECK-NEXT:        coll.send out[1][1]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    coll.rank 2 {
// CHECK-NEXT:      coll.threadblock 0 recv(1) channel(0) {
// CHECK-NEXT:        coll.recv -> out[2][0]{{$}}
// CHECK-NEXT:        coll.recv -> out[2][1]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
coll.algorithm @chain : broadcast ranks(3) chunks(2) root(0) {
  coll.copy in[0][0] -> out[0][0]
  coll.copy in[0][0] -> out[1][0]
  coll.copy out[1][0] -> out[2][0]
  coll.copy in[0][1] -> out[0][1]
  coll.copy in[0][1] -> out[1][1]
  coll.copy out[1][1] -> out[2][1]
}

// -----

// In place, `a += b` with a remote b is a recv_reduce_copy of a into itself
// with no local step. On rank 1 the receive overwrites the chunk the send of
// threadblock 0 reads (write after read), so it depends on that send.
// CHECK-LABEL: coll.plan @acc : allreduce ranks(2) chunks(1) inplace {
// CHECK-NEXT:    coll.rank 0 {
// CHECK-NEXT:      coll.threadblock 0 recv(1) send(1) channel(0) {
// CHECK-NEXT:        coll.recv_reduce_copy in[0][0] -> in[0][0]{{$}}
// CHECK-NEXT:        coll.send in[0][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    coll.rank 1 {
// CHECK-NEXT:      coll.threadblock 0 send(0) channel(0) {
// CHECK-NEXT:        coll.send in[1][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 1 recv(0) channel(0) {
// CHECK-NEXT:        coll.recv -> in[1][0] deps(0:0){{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
coll.algorithm @acc : allreduce ranks(2) chunks(1) inplace {
  coll.reduce in[1][0], in[0][0] -> in[0][0]
  coll.copy in[0][0] -> in[1][0]
}
