//===- Semantics.cpp - Prove that a program implements its collective -----===//
//
// Every chunk slot of every rank holds a symbolic value: nothing (never
// written) or "input chunk i reduced over ranks S". Values are immutable and
// shared, so a copy costs one integer; a reduction makes one new value whose
// rank set is a few runs. The whole check is linear in chunk operations.
//
//===----------------------------------------------------------------------===//

#include "lib/Analysis/Semantics.h"

#include "dialect/CollOps.h"
#include "lib/Analysis/RankSet.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace coll;

namespace {

/// The value of a chunk: input chunk `index` reduced over `ranks`;
/// `index < 0` for a chunk never written.
struct Contribution {
  int64_t index = -1;
  RankSet ranks;
};

/// Where each buffer's chunks live in one flat slot array, with the aliasing
/// of in-place collectives resolved.
class Layout {
public:
  explicit Layout(AlgorithmOp alg) : alg(alg) {
    ranks = alg.getRanks();
    chunks = alg.getChunks();
    // In place, allgather keeps `out` (R*C) with `in` at the rank's own slot,
    // reducescatter keeps `in` with `out` likewise, and the others alias `in`
    // and `out` one to one.
    if (!alg.getInplace()) {
      add("in", *alg.getBufferSize("in"));
      add("out", *alg.getBufferSize("out"));
    } else if (alg.getCollective() == Collective::allgather) {
      add("out", *alg.getBufferSize("out"));
    } else {
      add("in", *alg.getBufferSize("in"));
    }
    if (auto scratch = alg.getScratchAttr())
      for (NamedAttribute entry : scratch)
        add(entry.getName().getValue(), llvm::cast<IntegerAttr>(entry.getValue()).getInt());
  }

  uint64_t size() const { return total; }

  /// The slot of chunk `k` of `c`, and the name of its physical buffer.
  uint64_t slot(ChunkAttr c, int64_t k) const {
    StringRef name = c.getBuffer().getValue();
    int64_t rank = c.getRank(), index = c.getIndex() + k;
    if (alg.getInplace() && (name == "in" || name == "out")) {
      Collective coll = alg.getCollective();
      if (coll == Collective::allgather && name == "in")
        index += rank * chunks;
      else if (coll == Collective::reducescatter && name == "out")
        index += rank * chunks;
      name = coll == Collective::allgather ? "out" : "in";
    }
    const Buffer &b = find(name);
    return b.base + uint64_t(rank) * b.perRank + index;
  }

  /// Slot of `buffer[rank][index]` by physical buffer name.
  uint64_t slot(StringRef name, int64_t rank, int64_t index) const {
    const Buffer &b = find(name);
    return b.base + uint64_t(rank) * b.perRank + index;
  }

  /// The name users see for a physical buffer of the output.
  StringRef outputName() const {
    if (!alg.getInplace())
      return "out";
    return alg.getCollective() == Collective::allgather ? "out" : "in";
  }

  bool isReadOnly(ChunkAttr c) const {
    return !alg.getInplace() && c.getBuffer().getValue() == "in";
  }

private:
  struct Buffer {
    StringRef name;
    int64_t perRank;
    uint64_t base;
  };

  void add(StringRef name, int64_t perRank) {
    buffers.push_back({name, perRank, total});
    total += uint64_t(perRank) * ranks;
  }

  const Buffer &find(StringRef name) const {
    for (const Buffer &b : buffers)
      if (b.name == name)
        return b;
    llvm_unreachable("buffer checked by the op verifier");
  }

  mutable AlgorithmOp alg; // accessors are not const
  int64_t ranks, chunks;
  uint64_t total = 0;
  SmallVector<Buffer, 4> buffers;
};

std::string describe(const Contribution &v) {
  if (v.index < 0)
    return "nothing (it is never written)";
  return "in[" + v.ranks.str() + "][" + std::to_string(v.index) + "]";
}

std::string chunkName(StringRef buffer, int64_t rank, int64_t index) {
  return (buffer + "[" + std::to_string(rank) + "][" + std::to_string(index) + "]").str();
}

std::string chunkName(ChunkAttr c, int64_t k) {
  return chunkName(c.getBuffer().getValue(), c.getRank(), c.getIndex() + k);
}

class SymbolicRun {
public:
  explicit SymbolicRun(AlgorithmOp alg) : alg(alg), layout(alg) {}

  LogicalResult run();

private:
  LogicalResult init();
  LogicalResult step(Operation *op, ChunkAttr dst, ArrayRef<ChunkAttr> srcs);
  LogicalResult checkPostcondition();
  /// What output position (rank, index) must hold, per the collective.
  Contribution expected(int64_t rank, int64_t index) const;

  /// Ids: 0 is "never written", 1 + rank * inSize + index the untouched
  /// input chunks (never stored), then the results of reductions.
  Contribution value(uint32_t id) const {
    if (id == 0)
      return {};
    if (id < firstMade)
      return {(id - 1) % inSize, RankSet::single((id - 1) / inSize)};
    return made[id - firstMade];
  }
  FailureOr<uint32_t> intern(Operation *op, Contribution v) {
    if (made.size() >= UINT32_MAX - firstMade)
      return op->emitError() << "the program makes too many partial results to verify";
    made.push_back(std::move(v));
    return firstMade + made.size() - 1;
  }

  mutable AlgorithmOp alg;
  Layout layout;
  int64_t inSize = 0;
  uint32_t firstMade = 1;
  std::vector<Contribution> made; // results of reductions
  std::vector<uint32_t> state;  // slot -> value
  std::vector<uint32_t> writer; // slot -> 1 + index into `ops`, 0 for none
  std::vector<Operation *> ops;
};

} // namespace

LogicalResult SymbolicRun::init() {
  int64_t ranks = alg.getRanks();
  inSize = *alg.getBufferSize("in");
  if (uint64_t(ranks) * inSize >= UINT32_MAX / 2)
    return alg.emitError() << "the buffers are too large to verify";
  firstMade = 1 + ranks * inSize;
  state.assign(layout.size(), 0);
  writer.assign(layout.size(), 0);
  MLIRContext *ctx = alg.getContext();
  StringAttr in = StringAttr::get(ctx, "in");
  for (int64_t r = 0; r < ranks; ++r) {
    auto chunk = ChunkAttr::get(ctx, in, r, 0, inSize);
    for (int64_t i = 0; i < inSize; ++i)
      state[layout.slot(chunk, i)] = 1 + r * inSize + i;
  }
  return success();
}

LogicalResult SymbolicRun::step(Operation *op, ChunkAttr dst, ArrayRef<ChunkAttr> srcs) {
  ops.push_back(op);
  if (layout.isReadOnly(dst))
    return op->emitError() << "writes " << chunkName(dst, 0)
                           << ", but 'in' is read-only: declare the algorithm "
                              "'inplace' or write to 'out'";
  SmallVector<uint32_t, 4> read(srcs.size());
  for (int64_t k = 0; k < dst.getCount(); ++k) {
    for (size_t s = 0; s < srcs.size(); ++s) {
      read[s] = state[layout.slot(srcs[s], k)];
      if (read[s] == 0)
        return op->emitError() << "reads " << chunkName(srcs[s], k)
                               << ", which has not been written yet";
    }
    uint32_t result = read[0];
    if (srcs.size() > 1) {
      Contribution acc = value(read[0]);
      for (size_t s = 1; s < srcs.size(); ++s) {
        Contribution v = value(read[s]);
        if (v.index != acc.index)
          return op->emitError()
                 << "combines different input chunks: " << chunkName(srcs[s], k)
                 << " holds " << describe(v) << " but the other terms hold "
                 << describe(acc);
        if (std::optional<uint32_t> twice = acc.ranks.firstCommon(v.ranks))
          return op->emitError()
                 << "counts rank " << *twice << "'s contribution twice: "
                 << chunkName(srcs[s], k) << " holds " << describe(v)
                 << " and the other terms hold " << describe(acc);
        acc.ranks = RankSet::unite(acc.ranks, v.ranks);
      }
      FailureOr<uint32_t> id = intern(op, std::move(acc));
      if (failed(id))
        return failure();
      result = *id;
    }
    uint64_t d = layout.slot(dst, k);
    state[d] = result;
    writer[d] = ops.size();
  }
  return success();
}

Contribution SymbolicRun::expected(int64_t rank, int64_t index) const {
  uint32_t ranks = alg.getRanks();
  int64_t chunks = alg.getChunks();
  RankSet all = RankSet::range(0, ranks);
  switch (alg.getCollective()) {
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
    return {index, RankSet::single(alg.getRootRank())};
  }
  llvm_unreachable("unknown collective");
}

LogicalResult SymbolicRun::checkPostcondition() {
  int64_t ranks = alg.getRanks();
  int64_t outSize = *alg.getBufferSize("out");
  bool isReduce = alg.getCollective() == Collective::reduce;
  StringRef out = layout.outputName();
  uint64_t wrong = 0;
  std::optional<InFlightDiagnostic> first;
  for (int64_t r = 0; r < ranks; ++r) {
    if (isReduce && r != alg.getRootRank())
      continue;
    for (int64_t i = 0; i < outSize; ++i) {
      // In-place reducescatter's output is the rank's own slot of `in`.
      int64_t at = alg.getInplace() && alg.getCollective() == Collective::reducescatter
                       ? r * alg.getChunks() + i
                       : i;
      uint64_t slot = layout.slot(out, r, at);
      Contribution got = value(state[slot]);
      Contribution want = expected(r, i);
      if (got.index == want.index && got.ranks == want.ranks)
        continue;
      if (wrong++)
        continue;
      std::string where = chunkName(out, r, at);
      InFlightDiagnostic diag = alg.emitError();
      diag << stringifyCollective(alg.getCollective()) << " postcondition fails: "
           << where << " holds " << describe(got);
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
      if (uint32_t w = writer[slot])
        diag.attachNote(ops[w - 1]->getLoc()) << where << " was last written here";
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

LogicalResult SymbolicRun::run() {
  if (failed(init()))
    return failure();
  ops.reserve(alg.getBody().front().getOperations().size());
  for (Operation &op : alg.getBody().front()) {
    LogicalResult result = success();
    if (auto copy = llvm::dyn_cast<CopyOp>(op)) {
      ChunkAttr src = copy.getSrc();
      result = step(&op, copy.getDst(), src);
    } else if (auto reduce = llvm::dyn_cast<ReduceOp>(op)) {
      SmallVector<ChunkAttr, 4> srcs(reduce.getSources());
      result = step(&op, reduce.getDst(), srcs);
    }
    if (failed(result))
      return failure();
  }
  return checkPostcondition();
}

LogicalResult coll::verifySemantics(AlgorithmOp alg) { return SymbolicRun(alg).run(); }
