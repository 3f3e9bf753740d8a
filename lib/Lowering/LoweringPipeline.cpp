//===- LoweringPipeline.cpp - From global view to verified plans ----------===//
//
// After this pipeline every algorithm that was asked to lower is one or more
// plans (one per message-size range), each proven deadlock-free and correct;
// before lowering, each algorithm is proven to implement its collective.
//
//===----------------------------------------------------------------------===//

#include "lib/Lowering/Pipelines.h"
#include "dialect/CollOps.h"
#include "lib/Analysis/Passes.h"
#include "lib/Lowering/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

void coll::buildCollLoweringPipeline(OpPassManager &pm, const CollLoweringOptions &options) {
  buildCollStreamsPipeline(pm, options);
  if (options.lowerToPlans)
    buildCollPlansPipeline(pm, options);
}

void coll::buildCollStreamsPipeline(OpPassManager &pm, const CollLoweringOptions &options) {
  if (options.verifyAlgorithms)
    pm.addPass(createCollVerifyPass());
  bool placed = options.mapRanks || !options.topology.empty();
  if (placed) {
    CollMapRanksPassOptions map;
    if (!options.topology.empty())
      map.topology = options.topology;
    pm.addPass(createCollMapRanksPass(map));
  }
  if (!options.lowerToPlans)
    return;

  CollSplitChunksPassOptions split;
  split.pipeline = options.pipeline;
  split.instances = options.instances;
  pm.addPass(createCollSplitChunksPass(split));
  // Multicast and peer windows need to know which GPU each rank runs on.
  if (placed && options.multimem)
    pm.addPass(createCollMultimemPass());
  pm.addPass(createCollToRankStreamsPass());
  OpPassManager &plans = pm.nest<PlanOp>();
  plans.addPass(createCollAssignChannelsPass());
  plans.addPass(createCollFusePass());
  plans.addPass(createCollNumberStepsPass());
}

void coll::buildCollPlansPipeline(OpPassManager &pm, const CollLoweringOptions &options) {
  CollSelectProtocolPassOptions select;
  select.topology = options.topology;
  select.protocol = options.protocol;
  select.messageSize = options.messageSize;
  pm.addPass(createCollSelectProtocolPass(select));
  CollChooseChannelsPassOptions channels;
  channels.topology = options.topology;
  // Instances replicate the program already, each on channels of its own.
  if (options.instances > 1)
    channels.maxReplicas = 1;
  pm.addPass(createCollChooseChannelsPass(channels));
  OpPassManager &variants = pm.nest<PlanOp>();
  if (options.verifyPlans) {
    CollVerifyPlanPassOptions verifyPlan;
    verifyPlan.mscclLimits = options.mscclLimits;
    variants.addPass(createCollVerifyPlanPass(verifyPlan));
  }
  // Verified unrolled; the verifier checks that the shapes make the same steps.
  if (options.reroll)
    variants.addPass(createCollRerollPass());
}

coll::CollLoweringOptions coll::CollLoweringPipelineOptions::toLoweringOptions() const {
  CollLoweringOptions options;
  options.verifyAlgorithms = verify;
  options.topology = topology;
  options.pipeline = pipeline;
  options.instances = instances;
  options.multimem = multimem;
  options.protocol = protocol;
  options.messageSize = messageSize;
  options.verifyPlans = verifyPlan;
  options.mscclLimits = mscclLimits;
  return options;
}

void coll::registerCollPipelines() {
  PassPipelineRegistration<CollLoweringPipelineOptions>(
      "coll-lower",
      "Verify each algorithm, place its ranks on a topology if given, and lower it to "
      "verified plans, as collc --emit=plan does",
      [](OpPassManager &pm, const CollLoweringPipelineOptions &options) {
        buildCollLoweringPipeline(pm, options.toLoweringOptions());
      });
}
