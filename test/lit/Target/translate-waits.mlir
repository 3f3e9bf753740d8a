// Dependencies on other threadblocks become waits on their progress, named
// by their index in the plan's threadblock table (rank by rank) with the
// steps per loop of that threadblock, all three from the waiting
// threadblock's table; scratch buffers get named indices, and the plan table
// lists their sizes in the plan's order. A plan that is no variant of an
// algorithm is one of its own. The emitter writes a function per shape
// (coll-reroll) and refuses threadblocks without one.
// RUN: collc-opt --coll-reroll %s -mlir-print-debuginfo | collc-translate --coll-to-cuda | FileCheck %s --strict-whitespace --match-full-lines
// RUN: not collc-translate --coll-to-cuda %s 2>&1 | FileCheck %s --check-prefix=UNSHAPED
// UNSHAPED: error: 'coll.threadblock' op has no shape; run coll-reroll first

module {
  coll.plan @twoshot_Simple : allreduce ranks(2) chunks(2) scratch {red = 1 : i64} bytes[0, 4611686018427387904) algorithm("twoshot") protocol(Simple) slots(8) {
    coll.rank 0 {
      coll.threadblock 0 channel(0) protocol(Simple) {
        coll.local_copy in[0][0] -> red[0][0]
        coll.local_copy red[0][0] -> out[0][0] deps(2:0)
      }
      coll.threadblock 1 send(1) channel(0) protocol(Simple) direct_send {
        coll.send in[0][1]
        coll.send red[0][0] direct(out[1][0]) deps(2:0)
      }
      coll.threadblock 2 recv(1) channel(0) protocol(Simple) direct_recv {
        coll.recv_reduce_copy red[0][0] -> red[0][0] deps(0:0)
        coll.recv -> out[0][1]
      }
    }
    coll.rank 1 {
      coll.threadblock 0 channel(0) protocol(Simple) {
        coll.local_copy in[1][1] -> red[1][0]
        coll.local_copy red[1][0] -> out[1][1] deps(1:1)
      }
      coll.threadblock 1 recv(0) send(0) channel(0) protocol(Simple) direct_recv direct_send {
        coll.send in[1][0]
        coll.recv_reduce_copy red[1][0] -> red[1][0] deps(0:0)
        coll.send red[1][0] direct(out[0][1])
        coll.recv -> out[1][0]
      }
    }
  }
  coll.plan @sum : reduce ranks(2) chunks(2) root(1) scratch {acc = 2 : i64, tmp = 1 : i64} protocol(LL) slots(10) attributes {coll.moves_chunks, fifo_depth = 9 : i64} {
    coll.rank 0 {
      coll.threadblock 0 send(1) channel(0) protocol(LL) {
        coll.send in[0][0:2]
      }
    }
    coll.rank 1 {
      coll.threadblock 3 recv(0) channel(0) protocol(LL) {
        coll.recv -> acc[1][0:2]
      }
      coll.threadblock 5 channel(0) protocol(LL) {
        coll.local_copy in[1][0] -> tmp[1][0]
        coll.local_reduce acc[1][0], tmp[1][0], in[1][1] -> out[1][0] deps(3:0)
      }
    }
  }
}

// CHECK:namespace twoshot_Simple {
// CHECK-NEXT:using namespace collc;
// CHECK-NEXT:constexpr int32_t kProtocol = kSimple;
// CHECK-NEXT:constexpr int32_t kCalls = 10;
// CHECK-NEXT:constexpr int32_t kScratch_red = kScratch0 + 0;
// CHECK-EMPTY:
// Threadblocks 0 of both ranks share shape 0: their chunks are r's.
// CHECK-NEXT:template <class Block>
// CHECK-NEXT:COLLC_DEVICE void shape0(Block &b, int64_t r, const int64_t *t) {
// CHECK-NEXT:  b.copy(in(r), scratch(kScratch_red, 0));      // translate-waits.mlir:{{[0-9]+}}
// CHECK-NEXT:  b.wait(t[0], t[1], t[2]);
// CHECK-NEXT:  b.copy(scratch(kScratch_red, 0), out(r));     // translate-waits.mlir:{{[0-9]+}}
// CHECK-NEXT:  t += 3;
// CHECK-NEXT:}
// CHECK-EMPTY:
// CHECK-NEXT:template <class Block>
// CHECK-NEXT:COLLC_DEVICE void shape1(Block &b, int64_t, const int64_t *t) {
// CHECK-NEXT:  b.send(in(1));                                // translate-waits.mlir:{{[0-9]+}}
// CHECK-NEXT:  b.wait(t[0], t[1], t[2]);
// CHECK-NEXT:  b.send(scratch(kScratch_red, 0), direct(out(0))); // translate-waits.mlir:{{[0-9]+}}
// CHECK-NEXT:  t += 3;
// CHECK-NEXT:}
// CHECK-EMPTY:
// CHECK-NEXT:template <class Block>
// CHECK-NEXT:COLLC_DEVICE void shape2(Block &b, int64_t, const int64_t *t) {
// CHECK-NEXT:  b.wait(t[0], t[1], t[2]);
// CHECK-NEXT:  b.recvReduceCopy(scratch(kScratch_red, 0), scratch(kScratch_red, 0)); // translate-waits.mlir:{{[0-9]+}}
// CHECK-NEXT:  t += 3;
// CHECK-NEXT:  b.recv(out(1));                               // translate-waits.mlir:{{[0-9]+}}
// CHECK-NEXT:}
// Rank 1's threadblocks are entries 3 and 4; threadblock 1 has 4 steps:
// rank 1, threadblock 0 waits for its step 1.
// CHECK:// Rank 0, threadblock 0.
// CHECK-NEXT:const int64_t t0[] = {2, 0, 2};
// CHECK:// Rank 1, threadblock 0.
// CHECK-NEXT:const int64_t t3[] = {4, 1, 4};
// CHECK:  switch (a->shape) {
// CHECK-NEXT:  case 0: while (b.nextLoop()) shape0(b, b.rank(), b.table()); break;
// CHECK-NEXT:  case 1: while (b.nextLoop()) shape1(b, b.rank(), b.table()); break;
// CHECK-NEXT:  case 2: while (b.nextLoop()) shape2(b, b.rank(), b.table()); break;
// CHECK-NEXT:  case 3: while (b.nextLoop()) shape3(b, b.rank(), b.table()); break;
// CHECK-NEXT:  }
// Flags: entries that another of their rank waits for carry kTbWaitedOn (16).
// CHECK:    {0, 0, -1, -1, 0, kSimple, 16, 2, 0, 3, t0},
// CHECK-NEXT:    {0, 1, -1, 1, 0, kSimple, 2, 2, 1, 3, t1},
// CHECK-NEXT:    {0, 2, 1, -1, 0, kSimple, 17, 2, 2, 3, t2},
// CHECK-NEXT:    {1, 0, -1, -1, 0, kSimple, 16, 2, 0, 3, t3},
// CHECK-NEXT:    {1, 1, 0, 0, 0, kSimple, 19, 4, 3, 3, t4},
// CHECK-NEXT:};
// CHECK:    {"twoshot_Simple", collc::kAllReduce, 2, 2, -1, 0,
// CHECK-NEXT:     {1}, 1, 0LL, 4611686018427387904LL, collc::kSimple, 8, 1,
// CHECK-NEXT:     5, twoshot_Simple::threadblocks, COLLC_HOST_FN(twoshot_Simple::kernel), COLLC_CUDA_FN(twoshot_Simple::kernel),
// CHECK-NEXT:     0, 0, nullptr, nullptr, 3, twoshot_Simple::typed},
// CHECK-NEXT:};

// Threadblock ids need not be dense: waits name the table entry.
// CHECK:namespace sum {
// CHECK-NEXT:using namespace collc;
// CHECK-NEXT:constexpr int32_t kProtocol = kLL;
// CHECK-NEXT:constexpr int32_t kCalls = 4;
// CHECK-NEXT:constexpr int32_t kScratch_acc = kScratch0 + 0;
// CHECK-NEXT:constexpr int32_t kScratch_tmp = kScratch0 + 1;
// CHECK:COLLC_DEVICE void shape1(Block &b, int64_t, const int64_t *) {
// CHECK-NEXT:  b.recv(scratch(kScratch_acc, 0, 2));          // translate-waits.mlir:{{[0-9]+}}
// CHECK-NEXT:}
// CHECK:COLLC_DEVICE void shape2(Block &b, int64_t, const int64_t *t) {
// CHECK-NEXT:  b.copy(in(0), scratch(kScratch_tmp, 0));      // translate-waits.mlir:{{[0-9]+}}
// CHECK-NEXT:  b.wait(t[0], t[1], t[2]);
// CHECK-NEXT:  b.reduce({scratch(kScratch_acc, 0), scratch(kScratch_tmp, 0), in(1)}, out(0)); // translate-waits.mlir:{{[0-9]+}}
// CHECK-NEXT:  t += 3;
// CHECK-NEXT:}
// CHECK:const int64_t t2[] = {1, 0, 1};
// CHECK:    {0, 0, -1, 1, 0, kLL, 0, 1, 0, 0, nullptr},
// CHECK-NEXT:    {1, 3, 0, -1, 0, kLL, 16, 1, 1, 0, nullptr},
// CHECK-NEXT:    {1, 5, -1, -1, 0, kLL, 0, 2, 2, 3, t2},
// A pipelined plan's FIFOs hold fifo_depth + 1 slots; the widest step
// moves 2 chunks; the plan moves chunks between positions.
// CHECK:static const collc::PlanDesc sum_plans[] = {
// CHECK:    {"sum", collc::kReduce, 2, 2, 1, 0,
// CHECK-NEXT:     {2, 1}, 2, 0LL, 9223372036854775807LL, collc::kLL, 10, 2,
// CHECK-NEXT:     3, sum::threadblocks, COLLC_HOST_FN(sum::kernel), COLLC_CUDA_FN(sum::kernel),
// CHECK-NEXT:     1, 0, nullptr, nullptr, 3, sum::typed},
// CHECK-NEXT:};
// CHECK-EMPTY:
// CHECK-NEXT:extern "C" const collc::AlgorithmDesc collc_algorithm_sum = {
// CHECK-NEXT:    "sum", "translate-waits.mlir", 1, sum_plans};
