//===- AssignChannels.cpp - Dense channel numbers within limits -----------===//
//
// After this pass a plan's channels are 0 .. n-1 with n within the runtime's
// limit, and no rank has more threadblocks than can be co-resident.
//
//===----------------------------------------------------------------------===//

#include "dialect/CollOps.h"
#include "lib/Lowering/Passes.h"

#include "mlir/IR/Builders.h"

#include <map>

namespace coll {
#define GEN_PASS_DEF_COLLASSIGNCHANNELSPASS
#include "lib/Lowering/Passes.h.inc"
} // namespace coll

using namespace mlir;
using namespace coll;

namespace {
struct CollAssignChannelsPass : coll::impl::CollAssignChannelsPassBase<CollAssignChannelsPass> {
  using Base::Base;

  void runOnOperation() override {
    bool changed = false;
    if (failed(assign(getOperation(), changed)))
      return signalPassFailure();
    // Most plans already number their channels densely; a plan left as it
    // was need not be verified again.
    if (!changed)
      markAllAnalysesPreserved();
  }

  LogicalResult assign(PlanOp plan, bool &changed) {
    std::map<int64_t, int64_t> dense;
    SmallVector<ThreadblockOp> tbs;
    for (auto rank : plan.getBody().front().getOps<RankOp>()) {
      int64_t count = 0;
      for (auto tb : rank.getBody().front().getOps<ThreadblockOp>()) {
        tbs.push_back(tb);
        dense.try_emplace(tb.getChannelAttr().getInt(), dense.size());
        ++count;
      }
      if (count > maxThreadblocks)
        return rank.emitError() << "rank " << rank.getRankAttr().getInt() << " needs " << count
                                << " threadblocks; at most " << int64_t(maxThreadblocks)
                                << " can run at once (use fewer peers per channel or fewer "
                                   "instances)";
    }
    if (int64_t(dense.size()) > maxChannels)
      return plan.emitError() << "the plan uses " << dense.size() << " channels; at most "
                              << int64_t(maxChannels) << " are available";
    OpBuilder b(&getContext());
    for (ThreadblockOp tb : tbs) {
      int64_t channel = tb.getChannelAttr().getInt(), renamed = dense[channel];
      if (renamed == channel)
        continue;
      tb.setChannelAttr(b.getI64IntegerAttr(renamed));
      changed = true;
    }
    return success();
  }
};
} // namespace
