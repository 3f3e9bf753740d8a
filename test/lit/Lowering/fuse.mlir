// coll-fuse on hand-written plans. In each threadblock a receive followed
// right away by a send of exactly the chunks it wrote becomes one step:
// recv + send -> recv_copy_send; recv_reduce_copy + send ->
// recv_reduce_send when the stored result is overwritten before anyone reads
// it and is not output, recv_reduce_copy_send otherwise. A send with deps, a
// send of other chunks or a step in between prevents fusion. The fused step
// keeps the send's id, so deps need no change (IDS); coll-number-steps then
// renames steps by position (the CHECK lines).
//
// Every input is a correct plan, and so is every output: coll-verify-plan
// proves both.
//
// RUN: collc-opt %s -split-input-file --coll-fuse --coll-number-steps | FileCheck %s
// RUN: collc-opt %s -split-input-file --coll-fuse | FileCheck %s --check-prefix=IDS
// RUN: collc-opt %s -split-input-file --coll-verify-plan -o /dev/null
// RUN: collc-opt %s -split-input-file --coll-fuse --coll-verify-plan -o /dev/null

// A chain broadcast: rank 1 receives a chunk and forwards it.
// CHECK-LABEL: coll.plan @forward
// CHECK:         coll.rank 1 {
// CHECK-NEXT:      coll.threadblock 0 recv(0) send(2) channel(0) {
// CHECK-NEXT:        coll.recv_copy_send -> out[1][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    coll.rank 2 {
// CHECK-NEXT:      coll.threadblock 0 recv(1) channel(0) {
// CHECK-NEXT:        coll.recv -> out[2][0]{{$}}
// CHECK-NEXT:      }
coll.plan @forward : broadcast ranks(3) chunks(1) root(0) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[0][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(2) channel(0) {
      coll.recv -> out[1][0]
      coll.send out[1][0]
    }
  }
  coll.rank 2 {
    coll.threadblock 0 recv(1) channel(0) {
      coll.recv -> out[2][0]
    }
  }
}

// -----

// The unfused ring allreduce on 3 ranks (as coll-to-rank-streams makes it).
// The partial sums a rank forwards are overwritten by the all-gather before
// anyone reads them: recv_reduce_send. Its own chunk is output and final:
// recv_reduce_copy_send. The all-gather forwards: recv_copy_send; the last
// receive stays.
// CHECK-LABEL: coll.plan @ring : allreduce ranks(3) chunks(3) inplace {
// CHECK-NEXT:    coll.rank 0 {
// CHECK-NEXT:      coll.threadblock 0 recv(2) send(1) channel(0) {
// CHECK-NEXT:        coll.send in[0][2]{{$}}
// CHECK-NEXT:        coll.recv_reduce_send in[0][1]{{$}}
// CHECK-NEXT:        coll.recv_reduce_copy_send in[0][0] -> in[0][0]{{$}}
// CHECK-NEXT:        coll.recv_copy_send -> in[0][2]{{$}}
// CHECK-NEXT:        coll.recv -> in[0][1]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    coll.rank 1 {
// CHECK-NEXT:      coll.threadblock 0 recv(0) send(2) channel(0) {
// CHECK-NEXT:        coll.send in[1][0]{{$}}
// CHECK-NEXT:        coll.recv_reduce_send in[1][2]{{$}}
// CHECK-NEXT:        coll.recv_reduce_copy_send in[1][1] -> in[1][1]{{$}}
// CHECK-NEXT:        coll.recv_copy_send -> in[1][0]{{$}}
// CHECK-NEXT:        coll.recv -> in[1][2]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    coll.rank 2 {
// CHECK-NEXT:      coll.threadblock 0 recv(1) send(0) channel(0) {
// CHECK-NEXT:        coll.send in[2][1]{{$}}
// CHECK-NEXT:        coll.recv_reduce_send in[2][0]{{$}}
// CHECK-NEXT:        coll.recv_reduce_copy_send in[2][2] -> in[2][2]{{$}}
// CHECK-NEXT:        coll.recv_copy_send -> in[2][1]{{$}}
// CHECK-NEXT:        coll.recv -> in[2][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
coll.plan @ring : allreduce ranks(3) chunks(3) inplace {
  coll.rank 0 {
    coll.threadblock 0 recv(2) send(1) channel(0) {
      coll.send in[0][2]
      coll.recv_reduce_copy in[0][1] -> in[0][1]
      coll.send in[0][1]
      coll.recv_reduce_copy in[0][0] -> in[0][0]
      coll.send in[0][0]
      coll.recv -> in[0][2]
      coll.send in[0][2]
      coll.recv -> in[0][1]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(2) channel(0) {
      coll.send in[1][0]
      coll.recv_reduce_copy in[1][2] -> in[1][2]
      coll.send in[1][2]
      coll.recv_reduce_copy in[1][1] -> in[1][1]
      coll.send in[1][1]
      coll.recv -> in[1][0]
      coll.send in[1][0]
      coll.recv -> in[1][2]
    }
  }
  coll.rank 2 {
    coll.threadblock 0 recv(1) send(0) channel(0) {
      coll.send in[2][1]
      coll.recv_reduce_copy in[2][0] -> in[2][0]
      coll.send in[2][0]
      coll.recv_reduce_copy in[2][2] -> in[2][2]
      coll.send in[2][2]
      coll.recv -> in[2][1]
      coll.send in[2][1]
      coll.recv -> in[2][0]
    }
  }
}

// -----

// Out of place, the reduced chunk stored in `out` is output:
// recv_reduce_copy_send, with a source other than the destination.
// CHECK-LABEL: coll.plan @output
// CHECK:         coll.threadblock 0 recv(0) send(0) channel(0) {
// CHECK-NEXT:      coll.recv_reduce_copy_send in[1][0] -> out[1][0]{{$}}
// CHECK-NEXT:    }
coll.plan @output : allreduce ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(1) channel(0) {
      coll.send in[0][0]
      coll.recv -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(0) channel(0) {
      coll.recv_reduce_copy in[1][0] -> out[1][0]
      coll.send out[1][0]
    }
  }
}

// -----

// A sum stored in scratch that nothing reads again: recv_reduce_send of the
// local operand; the sum comes back from rank 1 into out[0][0]. Rank 1
// stores and forwards it: recv_copy_send.
// CHECK-LABEL: coll.plan @scratch_dead
// CHECK-NEXT:    coll.rank 0 {
// CHECK-NEXT:      coll.threadblock 0 recv(1) send(1) channel(0) {
// CHECK-NEXT:        coll.recv_reduce_send in[0][0]{{$}}
// CHECK-NEXT:        coll.recv -> out[0][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    coll.rank 1 {
// CHECK-NEXT:      coll.threadblock 0 recv(0) send(0) channel(0) {
// CHECK-NEXT:        coll.send in[1][0]{{$}}
// CHECK-NEXT:        coll.recv_copy_send -> out[1][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
coll.plan @scratch_dead : allreduce ranks(2) chunks(1) scratch {t = 1 : i64} {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(1) channel(0) {
      coll.recv_reduce_copy in[0][0] -> t[0][0]
      coll.send t[0][0]
      coll.recv -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(0) channel(0) {
      coll.send in[1][0]
      coll.recv -> out[1][0]
      coll.send out[1][0]
    }
  }
}

// -----

// The same sum in scratch, but another threadblock reads it afterwards:
// the store is live, so recv_reduce_copy_send. The reader's deps still name
// the fused step (0:0).
// CHECK-LABEL: coll.plan @scratch_read
// CHECK-NEXT:    coll.rank 0 {
// CHECK-NEXT:      coll.threadblock 0 recv(1) send(1) channel(0) {
// CHECK-NEXT:        coll.recv_reduce_copy_send in[0][0] -> t[0][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 1 channel(0) {
// CHECK-NEXT:        coll.local_copy t[0][0] -> out[0][0] deps(0:0){{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
coll.plan @scratch_read : allreduce ranks(2) chunks(1) scratch {t = 1 : i64} {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(1) channel(0) {
      coll.recv_reduce_copy in[0][0] -> t[0][0]
      coll.send t[0][0]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy t[0][0] -> out[0][0] deps(0:1)
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(0) channel(0) {
      coll.send in[1][0]
      coll.recv -> out[1][0]
    }
  }
}

// -----

// Reduce to root 0 along the chain 2 -> 1 -> 0: rank 1's out is not
// specified (only the root's is), and nothing reads it: recv_reduce_send.
// The root's sum is output, and there is no send to fuse with.
// CHECK-LABEL: coll.plan @reduce_chain
// CHECK-NEXT:    coll.rank 0 {
// CHECK-NEXT:      coll.threadblock 0 recv(1) channel(0) {
// CHECK-NEXT:        coll.recv_reduce_copy in[0][0] -> out[0][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    coll.rank 1 {
// CHECK-NEXT:      coll.threadblock 0 recv(2) send(0) channel(0) {
// CHECK-NEXT:        coll.recv_reduce_send in[1][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
coll.plan @reduce_chain : reduce ranks(3) chunks(1) root(0) {
  coll.rank 0 {
    coll.threadblock 0 recv(1) channel(0) {
      coll.recv_reduce_copy in[0][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(2) send(0) channel(0) {
      coll.recv_reduce_copy in[1][0] -> out[1][0]
      coll.send out[1][0]
    }
  }
  coll.rank 2 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send in[2][0]
    }
  }
}

// -----

// No fusion: after each receive comes a receive, or a send of other chunks
// (a range is not the single chunk it starts with).
// CHECK-LABEL: coll.plan @other_chunks
// CHECK:         coll.rank 1 {
// CHECK-NEXT:      coll.threadblock 0 recv(0) send(2) channel(0) {
// CHECK-NEXT:        coll.recv -> out[1][0]{{$}}
// CHECK-NEXT:        coll.recv -> out[1][1]{{$}}
// CHECK-NEXT:        coll.send out[1][0]{{$}}
// CHECK-NEXT:        coll.send out[1][1]{{$}}
// CHECK-NEXT:        coll.recv -> out[1][2:4]{{$}}
// CHECK-NEXT:        coll.send out[1][2]{{$}}
// CHECK-NEXT:        coll.send out[1][3]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
coll.plan @other_chunks : broadcast ranks(3) chunks(4) root(0) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send in[0][0]
      coll.send in[0][1]
      coll.send in[0][2:4]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[0][0:4] -> out[0][0:4]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(2) channel(0) {
      coll.recv -> out[1][0]
      coll.recv -> out[1][1]
      coll.send out[1][0]
      coll.send out[1][1]
      coll.recv -> out[1][2:4]
      coll.send out[1][2]
      coll.send out[1][3]
    }
  }
  coll.rank 2 {
    coll.threadblock 0 recv(1) channel(0) {
      coll.recv -> out[2][0]
      coll.recv -> out[2][1]
      coll.recv -> out[2][2]
      coll.recv -> out[2][3]
    }
  }
}

// -----

// No fusion: the send right after the receive of its chunk has deps of its
// own (a fused step could only wait for them before receiving).
// CHECK-LABEL: coll.plan @send_deps
// CHECK:         coll.rank 1 {
// CHECK-NEXT:      coll.threadblock 0 recv(0) send(2) channel(0) {
// CHECK-NEXT:        coll.recv -> out[1][0]{{$}}
// CHECK-NEXT:        coll.send out[1][0] deps(1:0){{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 1 channel(0) {
// CHECK-NEXT:        coll.local_copy out[1][0] -> t[1][0] deps(0:0){{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
coll.plan @send_deps : broadcast ranks(3) chunks(1) root(0) scratch {t = 1 : i64} {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[0][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(2) channel(0) {
      coll.recv -> out[1][0]
      coll.send out[1][0] deps(1:0)
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy out[1][0] -> t[1][0] deps(0:0)
    }
  }
  coll.rank 2 {
    coll.threadblock 0 recv(1) channel(0) {
      coll.recv -> out[2][0]
    }
  }
}

// -----

// A receive with deps (it overwrites what threadblock 1 wrote first) fuses
// and keeps them.
// CHECK-LABEL: coll.plan @recv_deps
// CHECK:         coll.rank 1 {
// CHECK-NEXT:      coll.threadblock 0 recv(0) send(2) channel(0) {
// CHECK-NEXT:        coll.recv_copy_send -> out[1][0] deps(1:0){{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 1 channel(0) {
// CHECK-NEXT:        coll.local_copy in[1][0] -> out[1][0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
coll.plan @recv_deps : broadcast ranks(3) chunks(1) root(0) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[0][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(2) channel(0) {
      coll.recv -> out[1][0] deps(1:0)
      coll.send out[1][0]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[1][0] -> out[1][0]
    }
  }
  coll.rank 2 {
    coll.threadblock 0 recv(1) channel(0) {
      coll.recv -> out[2][0]
    }
  }
}

// -----

// Renumbering: threadblock 0 of rank 1 goes from 5 steps to 3. The fused
// steps keep their sends' ids (1 and 3) and the last step its own (4), so
// the deps that name them stay as they are (IDS). Numbered, a dep on a
// fused-away send names the fused step (0:1 -> 0:0, 0:3 -> 0:1), a dep on a
// later step moves up (0:4 -> 0:2); deps into threadblocks that did not
// change stay (2:0).
// IDS-LABEL: coll.plan @renumber
// IDS:         coll.rank 1 {
// IDS-NEXT:      coll.threadblock 0 recv(0) send(2) channel(0) {
// IDS-NEXT:        coll.recv_copy_send -> out[1][0] id(1){{$}}
// IDS-NEXT:        coll.recv_copy_send -> out[1][1] id(3){{$}}
// IDS-NEXT:        coll.recv -> out[1][2]{{$}}
// IDS-NEXT:      }
// IDS-NEXT:      coll.threadblock 1 channel(0) {
// IDS-NEXT:        coll.local_copy out[1][0] -> t[1][0] deps(0:1){{$}}
// IDS-NEXT:        coll.local_copy out[1][1] -> t[1][1] deps(0:3){{$}}
// IDS-NEXT:        coll.local_copy out[1][2] -> t[1][2] deps(0:4, 2:0){{$}}
// IDS-NEXT:      }
// CHECK-LABEL: coll.plan @renumber
// CHECK:         coll.rank 1 {
// CHECK-NEXT:      coll.threadblock 0 recv(0) send(2) channel(0) {
// CHECK-NEXT:        coll.recv_copy_send -> out[1][0]{{$}}
// CHECK-NEXT:        coll.recv_copy_send -> out[1][1]{{$}}
// CHECK-NEXT:        coll.recv -> out[1][2]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 1 channel(0) {
// CHECK-NEXT:        coll.local_copy out[1][0] -> t[1][0] deps(0:0){{$}}
// CHECK-NEXT:        coll.local_copy out[1][1] -> t[1][1] deps(0:1){{$}}
// CHECK-NEXT:        coll.local_copy out[1][2] -> t[1][2] deps(0:2, 2:0){{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      coll.threadblock 2 channel(0) {
// CHECK-NEXT:        coll.local_copy in[1][0] -> t[1][3]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
coll.plan @renumber : broadcast ranks(3) chunks(3) root(0) scratch {t = 4 : i64} {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send in[0][0]
      coll.send in[0][1]
      coll.send in[0][2]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[0][0:3] -> out[0][0:3]
    }
    coll.threadblock 2 send(2) channel(0) {
      coll.send in[0][2]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) send(2) channel(0) {
      coll.recv -> out[1][0]
      coll.send out[1][0]
      coll.recv -> out[1][1]
      coll.send out[1][1]
      coll.recv -> out[1][2]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy out[1][0] -> t[1][0] deps(0:1)
      coll.local_copy out[1][1] -> t[1][1] deps(0:3)
      coll.local_copy out[1][2] -> t[1][2] deps(0:4, 2:0)
    }
    coll.threadblock 2 channel(0) {
      coll.local_copy in[1][0] -> t[1][3]
    }
  }
  coll.rank 2 {
    coll.threadblock 0 recv(1) channel(0) {
      coll.recv -> out[2][0]
      coll.recv -> out[2][1]
    }
    coll.threadblock 1 recv(0) channel(0) {
      coll.recv -> out[2][2]
    }
  }
}
