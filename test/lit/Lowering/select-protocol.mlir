// coll-select-protocol replaces each plan by one variant per message-size
// range, named after its protocol, with the protocol on every threadblock:
// LL while latency dominates, then Simple (LL128 only where every
// connection is NVLink). The ranges meet and cover every size. Protocols
// that @protocol fixed spread to the other end of their connection and
// stay; two that meet on one connection are an error. The plan's own
// `topology` and `rank_map` come first (hgx-h100 when it has none); a
// topology too small for the map, or an unknown one, is an error at the
// plan. The variants still pass coll-verify-plan.
//
// RUN: collc-opt %s -split-input-file --coll-select-protocol -verify-diagnostics | FileCheck %s
// RUN: collc-opt %s -split-input-file --coll-select-protocol=protocol=LL -verify-diagnostics | FileCheck %s --check-prefix=LL
// RUN: collc-opt %s -split-input-file --coll-select-protocol=message-size=1073741824 -verify-diagnostics | FileCheck %s --check-prefix=ONE
// RUN: collc-opt %s -split-input-file --coll-select-protocol --coll-verify-plan -verify-diagnostics -o /dev/null
//
// Errors of the options: an unknown protocol as the option is parsed, the
// others at every plan (or, for the size, at the module):
// RUN: not collc-opt %s -split-input-file --coll-select-protocol=protocol=LL256 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not collc-opt %s -split-input-file --coll-select-protocol=protocol=LL128 2>&1 | FileCheck %s --check-prefix=LL128
// RUN: not collc-opt %s -split-input-file --coll-select-protocol=message-size=4611686018427387904 2>&1 | FileCheck %s --check-prefix=SIZE
// UNKNOWN: collc-opt: for the --protocol option: unknown protocol 'LL256'; expected Simple, LL or LL128
// LL128: error: LL128 needs NVLink on every connection, and hgx-h100 gives this plan others
// SIZE: error: message-size 4611686018427387904 is not in 0 .. 4611686018427387903 bytes

// CHECK-LABEL: coll.plan @ag_LL :
// CHECK-SAME:    allgather ranks(2) chunks(1) bytes[0, [[CUT:[0-9]+]])
// CHECK-NEXT:    coll.rank 0 {
// CHECK-NEXT:      coll.threadblock 0 recv(1) send(1) channel(0) protocol(LL) {
// CHECK:           coll.threadblock 1 channel(0) protocol(LL) {
// CHECK:         coll.rank 1 {
// CHECK-NEXT:      coll.threadblock 0 recv(0) send(0) channel(0) protocol(LL) {
// CHECK:           coll.threadblock 1 channel(0) protocol(LL) {
// CHECK:       coll.plan @ag_Simple : allgather ranks(2) chunks(1) bytes[[[CUT]], 4611686018427387904)
// CHECK-NEXT:    coll.rank 0 {
// CHECK-NEXT:      coll.threadblock 0 recv(1) send(1) channel(0) protocol(Simple)
// CHECK:           coll.threadblock 1 channel(0) protocol(Simple) {
// CHECK-NOT:   coll.plan @ag
// LL-LABEL: coll.plan @ag_LL : allgather ranks(2) chunks(1) bytes[0, 4611686018427387904)
// LL-NOT:   coll.plan @ag
// ONE-LABEL: coll.plan @ag_Simple : allgather ranks(2) chunks(1) bytes[{{[0-9]+}}, 4611686018427387904)
// ONE-NOT:   coll.plan @ag
coll.plan @ag : allgather ranks(2) chunks(1) {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(1) channel(0) {
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

// Rank 0 sends to rank 1 on channel 1 with LL (from @protocol); rank 1's
// receiving end speaks LL too, in every variant.
// CHECK-LABEL: coll.plan @fixed_Simple
// CHECK:         coll.rank 0 {
// CHECK-NEXT:      coll.threadblock 0 send(1) channel(1) protocol(LL) {
// CHECK:           coll.threadblock 1 channel(0) protocol(Simple) {
// CHECK:         coll.rank 1 {
// CHECK-NEXT:      coll.threadblock 0 recv(0) channel(1) protocol(LL) {
// LL-LABEL: coll.plan @fixed_LL
coll.plan @fixed : broadcast ranks(2) chunks(1) root(0) {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(1) protocol(LL) {
      coll.send in[0][0]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[0][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) channel(1) {
      coll.recv -> out[1][0]
    }
  }
}

// -----

// The plan's own placement: two nodes, so the connection is the network:
// no LL128 and no direct stores (hgx-h100 would give them within a node).
// CHECK-LABEL: coll.plan @twonodes_LL :
// CHECK-SAME:    allgather ranks(2) chunks(1) rank_map [0, 8] bytes[0, [[CUT:[0-9]+]])
// CHECK:       coll.plan @twonodes_Simple : allgather ranks(2) chunks(1) rank_map [0, 8] bytes[[[CUT]], 4611686018427387904)
// CHECK-NOT:   direct
// CHECK-NOT:   coll.plan @twonodes
coll.plan @twonodes : allgather ranks(2) chunks(1) rank_map [0, 8] attributes {topology = "hgx-h100:nodes=2"} {
  coll.rank 0 {
    coll.threadblock 0 recv(1) send(1) channel(0) {
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

coll.plan @conflict : broadcast ranks(2) chunks(1) root(0) {
  coll.rank 0 {
    // expected-error@+1 {{rank 0 and rank 1 on channel 0 need both LL and Simple from @protocol; put those statements on another channel}}
    coll.threadblock 0 send(1) channel(0) protocol(LL) {
      coll.send in[0][0]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[0][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) channel(0) protocol(Simple) {
      coll.recv -> out[1][0]
    }
  }
}

// -----

// expected-error@+1 {{topology hgx-h100 has 8 GPUs but the plan needs 2}}
coll.plan @small : broadcast ranks(2) chunks(1) root(0) rank_map [0, 9] attributes {topology = "hgx-h100"} {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[0][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[1][0]
    }
  }
}

// -----

// expected-error@+1 {{topology: 'no-such-machine' is neither a topology preset}}
coll.plan @unknown : broadcast ranks(2) chunks(1) root(0) attributes {topology = "no-such-machine"} {
  coll.rank 0 {
    coll.threadblock 0 send(1) channel(0) {
      coll.send in[0][0]
    }
    coll.threadblock 1 channel(0) {
      coll.local_copy in[0][0] -> out[0][0]
    }
  }
  coll.rank 1 {
    coll.threadblock 0 recv(0) channel(0) {
      coll.recv -> out[1][0]
    }
  }
}
