//===- CollPlanOps.cpp - Verifiers of the rank-stream ops -----------------===//
#include "dialect/CollOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <algorithm>

using namespace mlir;
using namespace coll;

#include "dialect/CollInterfaces.cpp.inc"

//===----------------------------------------------------------------------===//
// PlanOp, RankOp, ThreadblockOp
//===----------------------------------------------------------------------===//

std::optional<int64_t> PlanOp::getBufferSize(StringRef name) {
  return bufferSize(getCollective(), getRanks(), getChunks(), getScratchAttr(), name);
}

SmallVector<StepField, 4> coll::stepFields(StepOpInterface step, bool directSlot) {
  SmallVector<StepField, 4> fields;
  auto chunk = [&](FieldRole role, ChunkAttr c) {
    fields.push_back({role, c.getBuffer().getValue(), c.getCount(), c.getIndex()});
  };
  if (auto get = llvm::dyn_cast<GetOp>(step.getOperation()))
    fields.push_back({FieldRole::peer, "", 0, get.getSrc().getRank()});
  for (ChunkAttr c : step.getReadChunks())
    chunk(FieldRole::src, c);
  if (ChunkAttr written = step.getWrittenChunk())
    chunk(FieldRole::dst, written);
  if (ChunkAttr direct = step.getDirectDstAttr()) {
    chunk(FieldRole::direct, direct);
  } else if (directSlot && step.sends()) {
    ChunkAttr natural = step.getWrittenChunk();
    if (!natural)
      natural = step.getReadChunks().front();
    fields.push_back({FieldRole::direct, "", natural.getCount(), natural.getIndex()});
  }
  return fields;
}

bool coll::runHasDirect(RunOp run) {
  ArrayRef<Attribute> fields = run.getFields().getValue();
  if (fields.empty())
    return false;
  if (auto f = llvm::dyn_cast<AffineFieldAttr>(fields.back()))
    return f.getRole() == FieldRole::direct;
  auto t = llvm::dyn_cast<TableFieldAttr>(fields.back());
  return t && t.getRole() == FieldRole::direct;
}

bool coll::fusesMultimem(RunOp ld, RunOp st) {
  if (ld.getStep() != RunKind::multimem_ld_reduce || st.getStep() != RunKind::multimem_st ||
      ld.getCount() != 1 || st.getCount() != 1 || st.getWaits() || st.getTableWaits() ||
      ld.getFields().size() != 2 || st.getFields().size() != 2)
    return false;
  auto reduced = llvm::dyn_cast<AffineFieldAttr>(ld.getFields()[1]);
  auto stored = llvm::dyn_cast<AffineFieldAttr>(st.getFields()[0]);
  auto other = llvm::dyn_cast<AffineFieldAttr>(ld.getFields()[0]);
  auto to = llvm::dyn_cast<AffineFieldAttr>(st.getFields()[1]);
  return reduced && stored && other && to && reduced.getRole() == FieldRole::dst &&
         stored.getRole() == FieldRole::src && reduced.getBuffer() == stored.getBuffer() &&
         reduced.getCount() == stored.getCount() && reduced.getA() == stored.getA() &&
         reduced.getC() == stored.getC() && reduced.getM() == stored.getM(); // k is 0
}

/// Whether steps of this kind send over their threadblock's connection.
static bool sends(RunKind kind) {
  return kind == RunKind::send || kind == RunKind::recv_copy_send ||
         kind == RunKind::recv_reduce_send || kind == RunKind::recv_reduce_copy_send;
}

LogicalResult RunOp::verify() {
  int64_t previous = -1;
  for (Attribute attr : getFields()) {
    FieldRole role;
    if (auto affine = llvm::dyn_cast<AffineFieldAttr>(attr)) {
      role = affine.getRole();
      if (affine.getM() < 1)
        return emitOpError("affine field must have a modulus of at least 1");
    } else if (auto table = llvm::dyn_cast<TableFieldAttr>(attr)) {
      role = table.getRole();
    } else {
      return emitOpError("fields must be #coll.affine or #coll.table");
    }
    int64_t order = int64_t(role);
    if (order < previous || (order == previous && role != FieldRole::src))
      return emitOpError("fields must be the peer, sources, destination and direct destination, "
                         "in this order and each but the sources at most once");
    previous = order;
    if (role == FieldRole::peer && getStep() != RunKind::get)
      return emitOpError("only get steps name a peer");
    if (role == FieldRole::direct && !sends(getStep()))
      return emitOpError("only sending steps name a direct destination");
  }
  if (getFuseNext()) {
    auto next = llvm::dyn_cast_or_null<RunOp>(getOperation()->getNextNode());
    if (!next || !fusesMultimem(*this, next))
      return emitOpError("fuse_next needs one multimem_ld_reduce step followed by a run of one "
                         "multimem_st step that stores its chunk and waits for nothing, every "
                         "operand affine");
  }
  return success();
}

/// Whether a threadblock's steps are exactly what its shape's runs make on
/// its rank.
static LogicalResult verifyShapeMatches(ThreadblockOp tb, ShapeOp shape, int64_t rank) {
  auto steps = tb.getBody().front().getOps<StepOpInterface>();
  auto it = steps.begin();
  for (auto run : shape.getBody().front().getOps<RunOp>()) {
    bool directSlot = runHasDirect(run);
    for (int64_t k = 0; k < int64_t(run.getCount()); ++k, ++it) {
      if (it == steps.end())
        return tb.emitOpError("has fewer steps than its shape ") << shape.getId();
      StepOpInterface step = *it;
      SmallVector<StepField, 4> fields = stepFields(step, directSlot);
      auto mismatch = [&](StringRef what) {
        return step->emitOpError("does not match step ")
               << k << " of run '" << stringifyRunKind(run.getStep()) << "' of shape "
               << shape.getId() << ": " << what;
      };
      if (step->getName().stripDialect() != stringifyRunKind(run.getStep()))
        return mismatch("another kind of step");
      if (!run.getTableWaits() && int64_t(step.getDepRefs().size()) != int64_t(run.getWaits()))
        return mismatch("another number of deps");
      if (fields.size() != run.getFields().size())
        return mismatch("another number of operands");
      // A stand-in is safe only where no sender stores to a peer directly.
      if (directSlot && !step.getDirectDstAttr() && tb.getDirectSend())
        return mismatch("the run names a direct destination, which this step of a threadblock "
                        "with a direct connection does not have");
      for (auto [field, attr] : llvm::zip(fields, run.getFields())) {
        bool standIn = field.role == FieldRole::direct && field.buffer.empty();
        if (auto affine = llvm::dyn_cast<AffineFieldAttr>(attr)) {
          if (field.role != affine.getRole() || (!standIn && field.buffer != affine.getBuffer()) ||
              (affine.getCount() != kTableCount && field.count != affine.getCount()))
            return mismatch("another operand");
          int64_t m = affine.getM();
          if (m < 1 ||
              (affine.getA() * rank + affine.getB() * k + affine.getC()) % m != field.value)
            return mismatch("the " + stringifyFieldRole(field.role).str() +
                            " operand is not what its affine function gives");
        } else if (auto table = llvm::dyn_cast<TableFieldAttr>(attr)) {
          if (field.role != table.getRole() || (!standIn && field.buffer != table.getBuffer()) ||
              (table.getCount() != kTableCount && field.count != table.getCount()))
            return mismatch("another operand");
        }
      }
    }
  }
  if (it != steps.end())
    return tb.emitOpError("has more steps than its shape ") << shape.getId();
  return success();
}

LogicalResult PlanOp::verifyRegions() {
  llvm::DenseMap<int64_t, ShapeOp> shapes;
  for (auto shape : getBody().front().getOps<ShapeOp>())
    if (!shapes.try_emplace(shape.getId(), shape).second)
      return shape.emitOpError("shape ") << shape.getId() << " appears twice";
  for (auto rank : getBody().front().getOps<RankOp>())
    for (auto tb : rank.getBody().front().getOps<ThreadblockOp>()) {
      std::optional<uint64_t> id = tb.getShape();
      if (!id)
        continue;
      auto shape = shapes.find(*id);
      if (shape == shapes.end())
        return tb.emitOpError("names unknown shape ") << *id;
      if (failed(verifyShapeMatches(tb, shape->second, rank.getRank())))
        return failure();
    }
  return success();
}

// The runtime's limits (collc::kMaxReplicas, COLLC_CUDA_MAX_THREADS).
constexpr int64_t kMaxReplicas = 32, kMaxThreads = 512;

LogicalResult PlanOp::verifyLaunch() {
  LaunchAttr attr = getLaunchAttr();
  if (!attr)
    return success();
  ArrayRef<LaunchRange> launch = attr.getRanges();
  if (launch.empty())
    return emitOpError("launch must have at least one range");
  for (size_t i = 0; i < launch.size(); ++i) {
    auto [from, replicas, threads] = launch[i];
    if (i ? from <= launch[i - 1].minBytes : from != int64_t(getMinBytes().value_or(0)))
      return emitOpError("launch sizes must start at the plan's min_bytes and increase");
    if (getMaxBytes() && from >= int64_t(*getMaxBytes()))
      return emitOpError("launch size ") << from << " is past the plan's max_bytes";
    if (replicas < 1 || replicas > kMaxReplicas)
      return emitOpError("launch replicas must be in 1 .. ") << kMaxReplicas;
    if (threads < 32 || threads > kMaxThreads || threads % 32)
      return emitOpError("launch threads must be a multiple of 32 in 32 .. ") << kMaxThreads;
  }
  return success();
}

LogicalResult PlanOp::verify() {
  if (failed(verifyCollectiveHeader(*this, getRanks(), getChunks(), getRoot(), getScratchAttr())))
    return failure();
  if (auto map = getRankMapAttr(); map && int64_t(map.size()) != int64_t(getRanks()))
    return emitOpError("rank_map has ") << map.size() << " entries for " << getRanks() << " ranks";
  if (getMinBytes() && getMaxBytes() && *getMinBytes() >= *getMaxBytes())
    return emitOpError("empty message-size range");
  if (getAlgorithm() && getAlgorithm()->empty())
    return emitOpError("algorithm name must not be empty");
  if (failed(verifyLaunch()))
    return failure();
  llvm::DenseSet<int64_t> seen;
  for (Operation &op : getBody().front()) {
    if (llvm::isa<ShapeOp>(op))
      continue;
    auto rank = llvm::dyn_cast<RankOp>(op);
    if (!rank)
      return op.emitOpError("is not allowed directly in a coll.plan");
    if (!seen.insert(rank.getRank()).second)
      return rank.emitOpError("rank ") << rank.getRank() << " appears twice";
  }
  return success();
}

LogicalResult RankOp::verify() {
  auto plan = (*this)->getParentOfType<PlanOp>();
  int64_t rank = getRankAttr().getInt();
  if (rank < 0 || rank >= int64_t(plan.getRanks()))
    return emitOpError("rank ") << rank << " is out of range [0, " << plan.getRanks() << ")";
  llvm::DenseSet<int64_t> ids;
  for (Operation &op : getBody().front()) {
    auto tb = llvm::dyn_cast<ThreadblockOp>(op);
    if (!tb)
      return op.emitOpError("is not allowed directly in a coll.rank");
    if (!ids.insert(tb.getId()).second)
      return tb.emitOpError("threadblock ") << tb.getId() << " appears twice";
  }
  return success();
}

LogicalResult RankOp::verifyRegions() {
  // Most ranks have no deps; the others look each one up by binary search,
  // since each threadblock has checked that its ids increase.
  SmallVector<StepOpInterface> waiting;
  for (auto tb : getBody().front().getOps<ThreadblockOp>())
    for (auto step : tb.getBody().front().getOps<StepOpInterface>())
      if (step.getDepsAttr())
        waiting.push_back(step);
  if (waiting.empty())
    return success();
  llvm::DenseMap<int64_t, SmallVector<uint64_t>> ids; // threadblock -> step ids
  for (auto tb : getBody().front().getOps<ThreadblockOp>()) {
    SmallVector<uint64_t> &mine = ids[tb.getId()];
    for (auto step : tb.getBody().front().getOps<StepOpInterface>())
      mine.push_back(step.getId());
  }
  for (StepOpInterface step : waiting)
    for (StepRef dep : step.getDepRefs()) {
      auto tb = ids.find(dep.tb);
      if (tb == ids.end())
        return step->emitOpError("depends on unknown threadblock ") << dep.tb;
      if (dep.id < 0 || !std::binary_search(tb->second.begin(), tb->second.end(), uint64_t(dep.id)))
        return step->emitOpError("depends on step ")
               << dep.id << " of threadblock " << dep.tb << ", which has no step " << dep.id
               << " (it has " << tb->second.size() << " steps)";
    }
  return success();
}

LogicalResult ThreadblockOp::verify() {
  int64_t rank = (*this)->getParentOfType<RankOp>().getRank();
  auto plan = (*this)->getParentOfType<PlanOp>();
  int64_t ranks = plan.getRanks();
  for (auto [what, peer] : {std::pair{"recv", getRecvAttr()}, {"send", getSendAttr()}}) {
    if (!peer)
      continue;
    int64_t p = peer.getInt();
    if (p < 0 || p >= ranks || p == rank)
      return emitOpError(what) << " peer " << p << " is not another rank of " << ranks;
  }
  return success();
}

LogicalResult ThreadblockOp::verifyRegions() {
  // Ids name steps in order, so that a dep can be found and compared.
  std::optional<int64_t> last;
  for (Operation &op : getBody().front()) {
    auto step = llvm::dyn_cast<StepOpInterface>(op);
    if (!step)
      return op.emitOpError("is not a step, so it is not allowed in a coll.threadblock");
    int64_t id = step.getId();
    if (last && id <= *last)
      return op.emitOpError("has id ") << id << " after a step with id " << *last
                                       << "; ids must increase along a threadblock";
    last = id;
  }
  return success();
}

LogicalResult coll::verifyStepsNumbered(PlanOp plan) {
  for (auto rank : plan.getBody().front().getOps<RankOp>())
    for (auto tb : rank.getBody().front().getOps<ThreadblockOp>()) {
      uint64_t position = 0;
      for (auto step : tb.getBody().front().getOps<StepOpInterface>()) {
        if (step.getId() != position)
          return step->emitOpError("has id ")
                 << step.getId() << " at position " << position
                 << " of its threadblock; number the steps (coll-number-steps) first";
        ++position;
      }
    }
  return success();
}

//===----------------------------------------------------------------------===//
// Steps
//===----------------------------------------------------------------------===//

/// What every step checks: its chunks are the rank's own and in range, its
/// threadblock has the peers it talks to, and its deps are pairs naming
/// other threadblocks.
static LogicalResult verifyStep(Operation *op, bool recvs, bool sends, ArrayRef<ChunkAttr> chunks,
                                DenseI64ArrayAttr deps) {
  auto tb = op->getParentOfType<ThreadblockOp>();
  auto rank = tb->getParentOfType<RankOp>();
  auto plan = rank->getParentOfType<PlanOp>();
  if (recvs && !tb.getRecv())
    return op->emitOpError("receives, but its threadblock has no receive peer");
  if (sends && !tb.getSend())
    return op->emitOpError("sends, but its threadblock has no send peer");
  for (ChunkAttr chunk : chunks) {
    StringRef buffer = chunk.getBuffer().getValue();
    std::optional<int64_t> size = plan.getBufferSize(buffer);
    if (!size)
      return op->emitOpError("uses unknown buffer '") << buffer << "'";
    if (chunk.getRank() != int64_t(rank.getRank()))
      return op->emitOpError("uses a chunk of rank ")
             << chunk.getRank() << " on rank " << rank.getRank();
    if (chunk.getCount() < 1 || chunk.getIndex() < 0 || chunk.getEnd() > *size)
      return op->emitOpError("chunks [") << chunk.getIndex() << ", " << chunk.getEnd() << ") of "
                                         << buffer << " are out of range [0, " << *size << ")";
  }
  if (!deps)
    return success();
  ArrayRef<int64_t> flat = deps.asArrayRef();
  if (flat.size() % 2)
    return op->emitOpError("deps must be threadblock:step pairs");
  for (size_t i = 0; i < flat.size(); i += 2)
    if (flat[i] == int64_t(tb.getId()))
      return op->emitOpError("depends on its own threadblock ") << flat[i];
  // That each dep names a step is the rank's to check, once it knows them all.
  return success();
}

/// A sending step's `direct_dst`: `count` chunks of its send peer, on a
/// direct connection.
static LogicalResult verifyDirectDst(Operation *op, ChunkAttr dst, int64_t count) {
  if (!dst)
    return success();
  auto tb = op->getParentOfType<ThreadblockOp>();
  auto plan = tb->getParentOfType<PlanOp>();
  if (!tb.getDirectSend())
    return op->emitOpError("has a direct destination, but its threadblock does not "
                           "send directly");
  int64_t peer = *tb.getSend(); // verifyStep checked that there is one
  if (dst.getRank() != peer)
    return op->emitOpError("has a direct destination on rank ")
           << dst.getRank() << ", not on its send peer " << peer;
  StringRef buffer = dst.getBuffer().getValue();
  std::optional<int64_t> size = plan.getBufferSize(buffer);
  if (!size)
    return op->emitOpError("has a direct destination in unknown buffer '") << buffer << "'";
  if (dst.getIndex() < 0 || dst.getEnd() > *size)
    return op->emitOpError("direct destination chunks [")
           << dst.getIndex() << ", " << dst.getEnd() << ") of " << buffer
           << " are out of range [0, " << *size << ")";
  if (dst.getCount() != count)
    return op->emitOpError("direct destination has ")
           << dst.getCount() << " chunks, but the step sends " << count;
  return success();
}

/// A step that reads `src` and writes `dst` of the same size, locally.
static LogicalResult verifyLocalPair(Operation *op, ChunkAttr src, ChunkAttr dst,
                                     DenseI64ArrayAttr deps) {
  if (src.getCount() != dst.getCount())
    return op->emitOpError("source and destination differ in size");
  return verifyStep(op, false, false, {src, dst}, deps);
}

LogicalResult SendOp::verify() {
  if (failed(verifyStep(*this, false, true, {getSrc()}, getDepsAttr())))
    return failure();
  return verifyDirectDst(*this, getDirectDstAttr(), getSrc().getCount());
}
LogicalResult RecvOp::verify() { return verifyStep(*this, true, false, {getDst()}, getDepsAttr()); }
LogicalResult RecvCopySendOp::verify() {
  if (failed(verifyStep(*this, true, true, {getDst()}, getDepsAttr())))
    return failure();
  return verifyDirectDst(*this, getDirectDstAttr(), getDst().getCount());
}
LogicalResult RecvReduceSendOp::verify() {
  if (failed(verifyStep(*this, true, true, {getSrc()}, getDepsAttr())))
    return failure();
  return verifyDirectDst(*this, getDirectDstAttr(), getSrc().getCount());
}
LogicalResult RecvReduceCopyOp::verify() {
  if (getSrc().getCount() != getDst().getCount())
    return emitOpError("source and destination differ in size");
  return verifyStep(*this, true, false, {getSrc(), getDst()}, getDepsAttr());
}
LogicalResult RecvReduceCopySendOp::verify() {
  if (getSrc().getCount() != getDst().getCount())
    return emitOpError("source and destination differ in size");
  if (failed(verifyStep(*this, true, true, {getSrc(), getDst()}, getDepsAttr())))
    return failure();
  return verifyDirectDst(*this, getDirectDstAttr(), getDst().getCount());
}
LogicalResult LocalCopyOp::verify() {
  return verifyLocalPair(*this, getSrc(), getDst(), getDepsAttr());
}
LogicalResult LocalReduceOp::verify() {
  SmallVector<ChunkAttr> all(getSrcs().getAsRange<ChunkAttr>());
  for (ChunkAttr c : all)
    if (c.getCount() != getDst().getCount())
      return emitOpError("sources and destination differ in size");
  all.push_back(getDst());
  return verifyStep(*this, false, false, all, getDepsAttr());
}

LogicalResult MultimemLdReduceOp::verify() {
  return verifyLocalPair(*this, getSrc(), getDst(), getDepsAttr());
}
LogicalResult MultimemStOp::verify() {
  return verifyLocalPair(*this, getSrc(), getDst(), getDepsAttr());
}
LogicalResult ReadReduceOp::verify() {
  return verifyLocalPair(*this, getSrc(), getDst(), getDepsAttr());
}
LogicalResult PutOp::verify() { return verifyLocalPair(*this, getSrc(), getDst(), getDepsAttr()); }
LogicalResult GetOp::verify() {
  if (getSrc().getCount() != getDst().getCount())
    return emitOpError("source and destination differ in size");
  int64_t rank = (*this)->getParentOfType<RankOp>().getRank();
  int64_t ranks = (*this)->getParentOfType<PlanOp>().getRanks();
  if (getSrc().getRank() == rank)
    return emitOpError("gets a chunk of its own rank ") << rank << "; use local_copy";
  if (getSrc().getRank() < 0 || getSrc().getRank() >= ranks)
    return emitOpError("gets a chunk of rank ") << getSrc().getRank() << ", not one of " << ranks;
  // The source is checked as the peer's own chunk.
  ChunkAttr src = getSrc();
  ChunkAttr asLocal =
      ChunkAttr::get(getContext(), src.getBuffer(), rank, src.getIndex(), src.getCount());
  return verifyStep(*this, false, false, {asLocal, getDst()}, getDepsAttr());
}
