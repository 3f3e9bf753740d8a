//===- NumberSteps.cpp - Step ids become positions ------------------------===//
//
// After this pass each step's id is its position in its threadblock, and
// deps name those ids. Steps keep their ids through every other
// transformation, so ids have gaps where steps were erased; the emitters
// and MSCCL's XML count steps, and a numbered plan prints without ids.
//
//===----------------------------------------------------------------------===//

#include "dialect/CollOps.h"
#include "lib/Lowering/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace coll {
#define GEN_PASS_DEF_COLLNUMBERSTEPSPASS
#include "lib/Lowering/Passes.h.inc"
} // namespace coll

using namespace mlir;
using namespace coll;

namespace {
struct CollNumberStepsPass : coll::impl::CollNumberStepsPassBase<CollNumberStepsPass> {
  void runOnOperation() override {
    for (auto rank : getOperation().getBody().front().getOps<RankOp>()) {
      llvm::DenseMap<std::pair<int64_t, int64_t>, int64_t> position; // (tb, id) -> position
      for (auto tb : rank.getBody().front().getOps<ThreadblockOp>()) {
        int64_t next = 0;
        for (auto step : tb.getBody().front().getOps<StepOpInterface>())
          position[{int64_t(tb.getId()), int64_t(step.getId())}] = next++;
      }
      for (auto tb : rank.getBody().front().getOps<ThreadblockOp>())
        for (auto step : tb.getBody().front().getOps<StepOpInterface>()) {
          step.setId(position.at({int64_t(tb.getId()), int64_t(step.getId())}));
          DenseI64ArrayAttr deps = step.getDepsAttr();
          if (!deps)
            continue;
          SmallVector<int64_t> renamed(deps.asArrayRef());
          for (size_t d = 0; d + 1 < renamed.size(); d += 2)
            renamed[d + 1] = position.at({renamed[d], renamed[d + 1]});
          step.setDepsAttr(DenseI64ArrayAttr::get(&getContext(), renamed));
        }
    }
  }
};
} // namespace
