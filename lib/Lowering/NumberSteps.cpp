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
      // Each threadblock's step ids in order: they increase, so a step's
      // position is found by binary search.
      llvm::DenseMap<int64_t, SmallVector<uint64_t>> ids; // tb -> step ids
      for (auto tb : rank.getBody().front().getOps<ThreadblockOp>()) {
        SmallVector<uint64_t> &mine = ids[tb.getId()];
        for (Operation &op : tb.getBody().front())
          mine.push_back(llvm::cast<StepOpInterface>(op).getId());
      }
      auto position = [&](int64_t tb, uint64_t id) {
        ArrayRef<uint64_t> mine = ids.find(tb)->second;
        return int64_t(llvm::lower_bound(mine, id) - mine.begin());
      };
      for (auto tb : rank.getBody().front().getOps<ThreadblockOp>()) {
        uint64_t next = 0;
        for (Operation &op : tb.getBody().front()) {
          auto step = llvm::cast<StepOpInterface>(op);
          if (step.getId() != next)
            step.setId(next);
          ++next;
          DenseI64ArrayAttr deps = step.getDepsAttr();
          if (!deps)
            continue;
          SmallVector<int64_t> renamed(deps.asArrayRef());
          for (size_t d = 0; d + 1 < renamed.size(); d += 2)
            renamed[d + 1] = position(renamed[d], renamed[d + 1]);
          step.setDepsAttr(DenseI64ArrayAttr::get(&getContext(), renamed));
        }
      }
    }
  }
};
} // namespace
