//===- Pipelines.h - The lowering pipeline of collc -----------------------===//
//
// The passes from verified global-view IR to verified plans, in order, built
// in one place so that `collc` and `collc-opt --coll-lower` run the same.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_LOWERING_PIPELINES_H
#define COLLC_LOWERING_PIPELINES_H

#include "lib/Lowering/ProtocolOption.h"

#include "mlir/Pass/PassOptions.h"

#include <cstdint>
#include <string>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace coll {

/// The stages of the lowering, in order. A pipeline runs those from one
/// stage to another, so that `collc`, `collc tune` and `coll-lower` build
/// theirs from the same options.
enum class LoweringStage {
  /// coll-verify and coll-map-ranks: a verified, placed global view.
  GlobalView,
  /// coll-split-chunks to coll-number-steps: rank streams, fused.
  Streams,
  /// coll-select-protocol, coll-choose-channels and coll-verify-plan:
  /// verified plans, one per message-size range.
  Plans,
  /// coll-reroll: every threadblock has the shape the kernel emitter needs.
  Reroll,
};

/// What `collc` decides from its flags; the defaults lower every algorithm
/// to verified plans without placing its ranks.
/// Chunks an op moves at most unless asked otherwise: any number. Streaming
/// adds steps (latency at small sizes), and it orders a wide op's parts by
/// chunk on every rank, which breaks the rank symmetry that rings and the
/// simulator's folding rest on (docs/guide.md, "Streaming wide steps").
constexpr int64_t kDefaultStream = 0;

struct CollLoweringOptions {
  /// Prove each algorithm implements its collective first (coll-verify).
  bool verifyAlgorithms = true;
  /// The machine (a preset or a JSON file). Given, ranks are placed on it
  /// and its multicast, peer windows and links shape the plan; empty, ranks
  /// stay unplaced and protocols are costed on coll-select-protocol's default.
  std::string topology;
  /// Place ranks even without `topology`, on coll-map-ranks's default.
  bool mapRanks = false;
  /// The stages to run; the default runs them all.
  LoweringStage from = LoweringStage::GlobalView, to = LoweringStage::Reroll;
  /// Sub-chunks per chunk and parallel instances (coll-split-chunks).
  int64_t pipeline = 1;
  int64_t instances = 1;
  /// Most chunks one op moves; wider ops stream as several (0: no limit).
  int64_t stream = kDefaultStream;
  /// Use multicast and peer windows where placed ranks share a switch.
  bool multimem = true;
  /// Force one protocol; none chooses per size range.
  std::optional<Protocol> protocol;
  /// Keep only the plan variant for this many bytes per rank; -1 keeps all.
  int64_t messageSize = -1;
  /// Prove each plan deadlock-free and correct (coll-verify-plan), and
  /// also within the MSCCL runtime's limits when `mscclLimits`.
  bool verifyPlans = true;
  bool mscclLimits = false;
  /// Rename the algorithms after this C identifier (coll-name-algorithms)
  /// once they are plans; empty keeps their names.
  std::string name;
};

/// Adds the passes of the stages `options.from` to `options.to` to `pm`,
/// which must nest on a module: coll-verify, coll-map-ranks, then
/// coll-split-chunks, coll-multimem, coll-to-rank-streams,
/// coll-assign-channels, coll-fuse, coll-number-steps, then
/// coll-select-protocol, coll-choose-channels, coll-verify-plan, then
/// coll-reroll, and coll-name-algorithms where `name` is given. The stages up to Streams read
/// neither `protocol` nor `messageSize`, so that what they make can be cloned and finished once per
/// protocol (collc tune).
void buildCollLoweringPipeline(mlir::OpPassManager &pm, const CollLoweringOptions &options);

/// The options of `coll-lower`, the pipeline as a textual pass.
struct CollLoweringPipelineOptions : mlir::PassPipelineOptions<CollLoweringPipelineOptions> {
  Option<LoweringStage> from{*this, "from", llvm::cl::desc("The first stage to run"),
                             llvm::cl::init(LoweringStage::GlobalView), stageValues()};
  Option<LoweringStage> to{*this, "to", llvm::cl::desc("The last stage to run"),
                           llvm::cl::init(LoweringStage::Reroll), stageValues()};
  Option<bool> verify{*this, "verify",
                      llvm::cl::desc("Prove each algorithm implements its collective first"),
                      llvm::cl::init(true)};
  Option<std::string> topology{
      *this, "topology",
      llvm::cl::desc("Place ranks on this machine (a preset or a JSON file) and use its "
                     "multicast and peer windows; empty leaves them unplaced"),
      llvm::cl::init("")};
  Option<bool> mapRanks{*this, "map-ranks",
                        llvm::cl::desc("Place ranks even without a topology, on "
                                       "coll-map-ranks's default"),
                        llvm::cl::init(false)};
  Option<int64_t> pipeline{*this, "pipeline", llvm::cl::desc("Sub-chunks per chunk"),
                           llvm::cl::init(1)};
  Option<int64_t> instances{*this, "instances",
                            llvm::cl::desc("Parallel copies of the program on separate channels"),
                            llvm::cl::init(1)};
  Option<int64_t> stream{*this, "stream",
                         llvm::cl::desc("Most chunks one op moves; wider ops stream as several "
                                        "(0: no limit)"),
                         llvm::cl::init(kDefaultStream)};
  Option<bool> multimem{*this, "multimem",
                        llvm::cl::desc("Use NVLink multicast and peer windows where the "
                                       "topology has them"),
                        llvm::cl::init(true)};
  Option<std::optional<Protocol>> protocol{*this, "protocol",
                                           llvm::cl::desc("Force Simple, LL or LL128")};
  Option<int64_t> messageSize{*this, "message-size",
                              llvm::cl::desc("Keep only the variant for this many bytes per rank"),
                              llvm::cl::init(-1)};
  Option<bool> verifyPlan{*this, "verify-plan",
                          llvm::cl::desc("Prove each plan deadlock-free and correct"),
                          llvm::cl::init(true)};
  Option<bool> mscclLimits{*this, "msccl-limits",
                           llvm::cl::desc("Also enforce the MSCCL runtime's limits"),
                           llvm::cl::init(false)};

  CollLoweringOptions toLoweringOptions() const;

private:
  static llvm::cl::ValuesClass stageValues() {
    return llvm::cl::values(
        clEnumValN(LoweringStage::GlobalView, "global-view", "verify and place ranks"),
        clEnumValN(LoweringStage::Streams, "streams", "rank streams, fused"),
        clEnumValN(LoweringStage::Plans, "plans", "verified plans with protocols and channels"),
        clEnumValN(LoweringStage::Reroll, "reroll", "threadblock shapes for the emitter"));
  }
};

/// Registers `coll-lower` for textual pass pipelines (collc-opt).
void registerCollPipelines();

} // namespace coll

#endif // COLLC_LOWERING_PIPELINES_H
