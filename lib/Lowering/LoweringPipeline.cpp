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

namespace {

bool runs(const coll::CollLoweringOptions &options, coll::LoweringStage stage) {
  return options.from <= stage && stage <= options.to;
}

bool placed(const coll::CollLoweringOptions &options) {
  return options.mapRanks || !options.topology.empty();
}

void addGlobalView(OpPassManager &pm, const coll::CollLoweringOptions &options) {
  if (options.verifyAlgorithms)
    pm.nest<coll::AlgorithmOp>().addPass(coll::createCollVerifyPass());
  // Passes that read a topology run on the module, whose TopologyAnalysis
  // parses each spec once for the whole pipeline.
  if (placed(options)) {
    coll::CollMapRanksPassOptions map;
    if (!options.topology.empty())
      map.topology = options.topology;
    pm.addPass(coll::createCollMapRanksPass(map));
  }
}

void addStreams(OpPassManager &pm, const coll::CollLoweringOptions &options) {
  coll::CollSplitChunksPassOptions split;
  split.pipeline = options.pipeline;
  split.instances = options.instances;
  split.stream = options.stream;
  pm.nest<coll::AlgorithmOp>().addPass(coll::createCollSplitChunksPass(split));
  // Multicast and peer windows need to know which GPU each rank runs on.
  if (placed(options) && options.multimem)
    pm.addPass(coll::createCollMultimemPass());
  pm.addPass(coll::createCollToRankStreamsPass());
  OpPassManager &plans = pm.nest<coll::PlanOp>();
  plans.addPass(coll::createCollAssignChannelsPass());
  plans.addPass(coll::createCollFusePass());
  plans.addPass(coll::createCollNumberStepsPass());
}

/// Returns the pass manager nested on each plan, for coll-reroll to join.
OpPassManager &addPlans(OpPassManager &pm, const coll::CollLoweringOptions &options) {
  coll::CollSelectProtocolPassOptions select;
  select.topology = options.topology;
  select.protocol = options.protocol;
  select.messageSize = options.messageSize;
  pm.addPass(coll::createCollSelectProtocolPass(select));
  coll::CollChooseChannelsPassOptions channels;
  channels.topology = options.topology;
  // Instances replicate the program already, each on channels of its own.
  if (options.instances > 1)
    channels.maxReplicas = 1;
  pm.addPass(coll::createCollChooseChannelsPass(channels));
  OpPassManager &variants = pm.nest<coll::PlanOp>();
  if (options.verifyPlans) {
    coll::CollVerifyPlanPassOptions verifyPlan;
    verifyPlan.mscclLimits = options.mscclLimits;
    variants.addPass(coll::createCollVerifyPlanPass(verifyPlan));
  }
  return variants;
}

} // namespace

void coll::buildCollLoweringPipeline(OpPassManager &pm, const CollLoweringOptions &options) {
  if (runs(options, LoweringStage::GlobalView))
    addGlobalView(pm, options);
  if (runs(options, LoweringStage::Streams))
    addStreams(pm, options);
  OpPassManager *variants = nullptr;
  if (runs(options, LoweringStage::Plans))
    variants = &addPlans(pm, options);
  // Verified unrolled; the verifier checks that the shapes make the same steps.
  if (runs(options, LoweringStage::Reroll))
    (variants ? *variants : pm.nest<PlanOp>()).addPass(createCollRerollPass());
  if (!options.name.empty() && runs(options, LoweringStage::Plans))
    pm.addPass(createCollNameAlgorithmsPass({options.name}));
}

coll::CollLoweringOptions coll::CollLoweringPipelineOptions::toLoweringOptions() const {
  CollLoweringOptions options;
  options.from = from;
  options.to = to;
  options.verifyAlgorithms = verify;
  options.topology = topology;
  options.mapRanks = mapRanks;
  options.pipeline = pipeline;
  options.instances = instances;
  options.stream = stream;
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
