//===- VerifyPass.cpp - The coll-verify pass ------------------------------===//
//
// After this pass succeeds, every algorithm in the module provably computes
// its declared collective for any run-time reduction operator.
//
//===----------------------------------------------------------------------===//

#include "dialect/CollOps.h"
#include "lib/Analysis/Passes.h"
#include "lib/Analysis/Semantics.h"

namespace coll {
#define GEN_PASS_DEF_COLLVERIFYPASS
#include "lib/Analysis/Passes.h.inc"
} // namespace coll

using namespace coll;

namespace {
struct CollVerifyPass : impl::CollVerifyPassBase<CollVerifyPass> {
  void runOnOperation() override {
    if (failed(verifySemantics(getOperation())))
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
