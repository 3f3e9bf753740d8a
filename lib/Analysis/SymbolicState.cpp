//===- SymbolicState.cpp - Every rank's buffers, held symbolically --------===//
#include "lib/Analysis/SymbolicState.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace coll;

CollectiveShape CollectiveShape::of(AlgorithmOp op) {
  return {op.getCollective(), int64_t(op.getRanks()), int64_t(op.getChunks()),
          op.getRootRank(),   op.getInplace(),        op.getScratchAttr()};
}

CollectiveShape CollectiveShape::of(PlanOp op) {
  return {op.getCollective(), int64_t(op.getRanks()), int64_t(op.getChunks()),
          op.getRootRank(),   op.getInplace(),        op.getScratchAttr()};
}

//===----------------------------------------------------------------------===//
// SlotLayout
//===----------------------------------------------------------------------===//

SlotLayout::SlotLayout(const CollectiveShape &shape) : shape(shape) {
  // In place, allgather keeps `out` (R*C) with `in` at the rank's own slot,
  // reducescatter keeps `in` with `out` likewise, and the others alias `in`
  // and `out` one to one.
  if (!shape.inplace) {
    add("in", *shape.bufferSize("in"));
    add("out", *shape.bufferSize("out"));
  } else if (shape.collective == Collective::allgather) {
    add("out", *shape.bufferSize("out"));
  } else {
    add("in", *shape.bufferSize("in"));
  }
  if (shape.scratch)
    for (NamedAttribute entry : shape.scratch)
      add(entry.getName().getValue(), llvm::cast<IntegerAttr>(entry.getValue()).getInt());
}

void SlotLayout::add(StringRef name, int64_t perRank) {
  buffers.push_back({name, perRank, total});
  total += uint64_t(perRank) * shape.ranks;
}

const SlotLayout::Buffer &SlotLayout::find(StringRef name) const {
  for (const Buffer &b : buffers)
    if (b.name == name)
      return b;
  llvm_unreachable("buffer checked by the op verifier");
}

const SlotLayout::Resolved &SlotLayout::resolve(StringAttr buffer) const {
  const void *key = buffer.getAsOpaquePointer();
  for (const auto &[name, r] : resolved)
    if (name == key)
      return r;
  StringRef name = buffer.getValue();
  int64_t rankOffset = 0;
  if (shape.inplace && (name == "in" || name == "out")) {
    Collective coll = shape.collective;
    if ((coll == Collective::allgather && name == "in") ||
        (coll == Collective::reducescatter && name == "out"))
      rankOffset = shape.chunks;
    name = coll == Collective::allgather ? "out" : "in";
  }
  const Buffer &b = find(name);
  resolved.push_back({key, {b.base, b.perRank, rankOffset}});
  return resolved.back().second;
}

uint64_t SlotLayout::slot(ChunkAttr c, int64_t k) const {
  const Resolved &b = resolve(c.getBuffer());
  int64_t rank = c.getRank();
  return b.base + uint64_t(rank) * b.perRank + rank * b.rankOffset + c.getIndex() + k;
}

uint64_t SlotLayout::slot(StringRef name, int64_t rank, int64_t index) const {
  const Buffer &b = find(name);
  return b.base + uint64_t(rank) * b.perRank + index;
}

StringRef SlotLayout::outputName() const {
  if (!shape.inplace)
    return "out";
  return shape.collective == Collective::allgather ? "out" : "in";
}

bool SlotLayout::isReadOnly(ChunkAttr c) const {
  return !shape.inplace && c.getBuffer().getValue() == "in";
}

bool SlotLayout::isOutput(uint64_t s) const {
  const Buffer &out = find(outputName());
  if (s < out.base || s >= out.base + uint64_t(out.perRank) * shape.ranks)
    return false;
  int64_t rank = (s - out.base) / out.perRank, index = (s - out.base) % out.perRank;
  if (shape.collective == Collective::reduce && rank != shape.root)
    return false;
  if (shape.inplace && shape.collective == Collective::reducescatter)
    return index / shape.chunks == rank;
  return true;
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

std::string coll::describe(const Contribution &v) {
  if (v.index < 0)
    return "nothing (it is never written)";
  return "in[" + v.ranks.str() + "][" + std::to_string(v.index) + "]";
}

std::string coll::chunkName(StringRef buffer, int64_t rank, int64_t index) {
  return (buffer + "[" + std::to_string(rank) + "][" + std::to_string(index) + "]").str();
}

std::string coll::chunkName(ChunkAttr c, int64_t k) {
  return chunkName(c.getBuffer().getValue(), c.getRank(), c.getIndex() + k);
}

SymbolicState::SymbolicState(const CollectiveShape &shape) : shape(shape), slots(shape) {
  inSize = *shape.bufferSize("in");
  firstMade = 1 + shape.ranks * inSize;
  state.assign(slots.size(), 0);
  writers.assign(slots.size(), 0);
  for (int64_t r = 0; r < shape.ranks; ++r) {
    // `in` may alias `out` (in-place allgather): resolve through a chunk.
    for (int64_t i = 0; i < inSize; ++i) {
      uint64_t s = shape.inplace && shape.collective == Collective::allgather
                       ? slots.slot("out", r, r * shape.chunks + i)
                       : slots.slot("in", r, i);
      state[s] = 1 + r * inSize + i;
    }
  }
}

Contribution SymbolicState::value(uint32_t id) const {
  if (id == 0)
    return {};
  if (id < firstMade)
    return {(id - 1) % inSize, RankSet::single((id - 1) / inSize)};
  return made[id - firstMade];
}

FailureOr<uint32_t> SymbolicState::combine(ArrayRef<uint32_t> ids,
                                           function_ref<std::string(size_t)> termName,
                                           std::string &why) {
  Contribution acc = value(ids[0]);
  for (size_t s = 1; s < ids.size(); ++s) {
    Contribution v = value(ids[s]);
    if (v.index != acc.index) {
      why = "combines different input chunks: " + termName(s) + " holds " + describe(v) +
            " but the other terms hold " + describe(acc);
      return failure();
    }
    if (std::optional<uint32_t> twice = acc.ranks.firstCommon(v.ranks)) {
      why = "counts rank " + std::to_string(*twice) + "'s contribution twice: " + termName(s) +
            " holds " + describe(v) + " and the other terms hold " + describe(acc);
      return failure();
    }
    acc.ranks = RankSet::unite(acc.ranks, v.ranks);
  }
  if (made.size() >= UINT32_MAX - firstMade) {
    why = "makes too many partial results to verify";
    return failure();
  }
  made.push_back(std::move(acc));
  return uint32_t(firstMade + made.size() - 1);
}

Contribution SymbolicState::expected(int64_t rank, int64_t index) const {
  uint32_t ranks = shape.ranks;
  int64_t chunks = shape.chunks;
  RankSet all = RankSet::range(0, ranks);
  switch (shape.collective) {
  case Collective::allreduce:
  case Collective::reduce:
    return {index, all};
  case Collective::reducescatter:
    return {rank * chunks + index, all};
  case Collective::allgather:
    return {index % chunks, RankSet::single(index / chunks)};
  case Collective::alltoall:
    return {rank * chunks + index % chunks, RankSet::single(index / chunks)};
  case Collective::broadcast:
    return {index, RankSet::single(shape.root)};
  }
  llvm_unreachable("unknown collective");
}

LogicalResult SymbolicState::checkPostcondition(Operation *anchor,
                                                function_ref<Location(uint32_t)> writerLoc) const {
  int64_t outSize = *shape.bufferSize("out");
  bool inplaceRS = shape.inplace && shape.collective == Collective::reducescatter;
  StringRef out = slots.outputName();
  uint64_t wrong = 0;
  std::optional<InFlightDiagnostic> first;
  for (int64_t r = 0; r < shape.ranks; ++r) {
    if (shape.collective == Collective::reduce && r != shape.root)
      continue;
    for (int64_t i = 0; i < outSize; ++i) {
      // In-place reducescatter's output is the rank's own slot of `in`.
      int64_t at = inplaceRS ? r * shape.chunks + i : i;
      uint64_t s = slots.slot(out, r, at);
      Contribution got = value(state[s]);
      Contribution want = expected(r, i);
      if (got.index == want.index && got.ranks == want.ranks)
        continue;
      if (wrong++)
        continue;
      std::string where = chunkName(out, r, at);
      InFlightDiagnostic diag = anchor->emitError();
      diag << stringifyCollective(shape.collective) << " postcondition fails: " << where
           << " holds " << describe(got);
      bool onlyMissing = got.index == want.index && want.ranks.size() > 1 &&
                         got.ranks.missingFrom(want.ranks, 1).empty();
      if (onlyMissing) {
        SmallVector<uint32_t> missing = want.ranks.missingFrom(got.ranks, 4);
        uint64_t more = want.ranks.size() - got.ranks.size() - missing.size();
        if (missing.size() == 1) {
          diag << " but rank " << missing[0] << "'s contribution is missing";
        } else {
          diag << " but the contributions of ranks";
          for (size_t m = 0; m < missing.size(); ++m)
            diag << (m ? ", " : " ") << missing[m];
          if (more)
            diag << " and " << more << " more";
          diag << " are missing";
        }
      } else {
        diag << " but should hold " << describe(want);
      }
      if (uint32_t w = writers[s])
        diag.attachNote(writerLoc(w)) << where << " was last written here";
      first.emplace(std::move(diag));
    }
  }
  if (!first)
    return success();
  if (wrong > 1)
    *first << " (" << wrong - 1 << " more output chunk" << (wrong > 2 ? "s are" : " is")
           << " wrong)";
  return failure();
}
