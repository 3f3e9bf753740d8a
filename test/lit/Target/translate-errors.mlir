// What the kernels cannot express is an error of the translation, reported
// at the op: more scratch buffers than abi.h's kMaxScratch, a module
// without plans, steps whose ids are not their positions, a plan whose
// protocol and FIFO slots no pass recorded.
// RUN: collc-translate --coll-to-cuda %s -split-input-file -verify-diagnostics -allow-unregistered-dialect
// RUN: not collc-translate --coll-to-cuda %s -split-input-file -allow-unregistered-dialect 2>&1 | FileCheck %s
// RUN: not collc-translate --coll-to-header %s -split-input-file -allow-unregistered-dialect 2>&1 | FileCheck %s --check-prefix=HEADER

// CHECK: translate-errors.mlir:1 offset :[[#@LINE+3]]:3: error: at most 6 scratch buffers can be emitted
module {
  // expected-error @+1 {{at most 6 scratch buffers can be emitted}}
  coll.plan @wide : allreduce ranks(2) chunks(1) scratch {a = 1 : i64, b = 1 : i64, c = 1 : i64, d = 1 : i64, e = 1 : i64, f = 1 : i64, g = 1 : i64} {
    coll.rank 0 {
      coll.threadblock 0 channel(0) {
        coll.local_copy in[0][0] -> g[0][0]
      }
    }
  }
}

// -----

// CHECK: error: no plan to emit
// HEADER: error: no plan to emit
// expected-error @+1 {{no plan to emit}}
module {
}

// -----

// The emitters count steps: ids must be positions (coll-number-steps).
// CHECK: error: 'coll.send' op has id 3 at position 1 of its threadblock; number the steps (coll-number-steps) first
module {
  coll.plan @gaps : allreduce ranks(2) chunks(2) protocol(Simple) slots(8) {
    coll.rank 0 {
      coll.threadblock 0 send(1) channel(0) {
        coll.send in[0][0]
        // expected-error @+1 {{'coll.send' op has id 3 at position 1 of its threadblock; number the steps (coll-number-steps) first}}
        coll.send in[0][1] id(3)
      }
    }
  }
}

// -----

// CHECK: error: 'coll.plan' op has no protocol or FIFO slots; coll-select-protocol records them
// HEADER: error: 'coll.plan' op has no protocol or FIFO slots; coll-select-protocol records them
module {
  // expected-error @+1 {{'coll.plan' op has no protocol or FIFO slots; coll-select-protocol records them}}
  coll.plan @unselected : allreduce ranks(2) chunks(2) {
    coll.rank 0 {
      coll.threadblock 0 channel(0) {
        coll.local_copy in[0][0] -> in[0][1]
      }
    }
  }
}
