//===- SymbolicState.h - Every rank's buffers, held symbolically ----------===//
//
// Each chunk slot of each rank holds nothing (never written) or "input chunk
// i reduced over ranks S". Values are immutable and shared, so a copy costs
// one integer and a reduction makes one value of a few rank runs. Both the
// global-view verifier and the plan verifier execute programs over this.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_ANALYSIS_SYMBOLICSTATE_H
#define COLLC_ANALYSIS_SYMBOLICSTATE_H

#include "dialect/CollOps.h"
#include "lib/Analysis/RankSet.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>
#include <vector>

namespace coll {

/// What the algorithm and the plan ops both declare about their buffers.
struct CollectiveShape {
  Collective collective;
  int64_t ranks, chunks, root;
  bool inplace;
  mlir::DictionaryAttr scratch;

  static CollectiveShape of(AlgorithmOp op);
  static CollectiveShape of(PlanOp op);
  std::optional<int64_t> bufferSize(llvm::StringRef name) const {
    return coll::bufferSize(collective, ranks, chunks, scratch, name);
  }
};

/// Where each buffer's chunks live in one flat slot array, with the aliasing
/// of in-place collectives resolved.
class SlotLayout {
public:
  explicit SlotLayout(const CollectiveShape &shape);

  uint64_t size() const { return total; }
  /// The slot of chunk `k` of `c`.
  uint64_t slot(ChunkAttr c, int64_t k) const;
  /// The slot of `buffer[rank][index]`, by physical buffer name.
  uint64_t slot(llvm::StringRef buffer, int64_t rank, int64_t index) const;
  /// The physical buffer that holds the output, as users name it.
  llvm::StringRef outputName() const;
  bool isReadOnly(ChunkAttr c) const;
  /// Whether the collective specifies the final value of this slot.
  bool isOutput(uint64_t slot) const;

private:
  struct Buffer {
    llvm::StringRef name;
    int64_t perRank;
    uint64_t base;
  };
  void add(llvm::StringRef name, int64_t perRank);
  const Buffer &find(llvm::StringRef name) const;

  /// A buffer as chunks name it, with in-place aliasing resolved: slot of
  /// chunk `index` on `rank` is base + rank * perRank + index.
  struct Resolved {
    uint64_t base;
    int64_t perRank, rankOffset;
  };
  const Resolved &resolve(mlir::StringAttr buffer) const;

  CollectiveShape shape;
  uint64_t total = 0;
  llvm::SmallVector<Buffer, 4> buffers;
  /// By the buffer name's attribute: `slot` runs for every chunk of every
  /// step, and names are few.
  mutable llvm::SmallVector<std::pair<const void *, Resolved>, 4> resolved;
};

/// The value of a chunk: input chunk `index` reduced over `ranks`; `index < 0`
/// for a chunk never written.
struct Contribution {
  int64_t index = -1;
  RankSet ranks;
};

std::string describe(const Contribution &v);
std::string chunkName(llvm::StringRef buffer, int64_t rank, int64_t index);
std::string chunkName(ChunkAttr c, int64_t k);

class SymbolicState {
public:
  /// Every input chunk holds its own value; everything else nothing.
  explicit SymbolicState(const CollectiveShape &shape);

  const SlotLayout &layout() const { return slots; }
  /// Value ids: 0 is "never written".
  uint32_t get(uint64_t slot) const { return state[slot]; }
  /// Stores a value; `writer` (non-zero) identifies the step, for notes.
  void set(uint64_t slot, uint32_t value, uint32_t writer) {
    state[slot] = value;
    writers[slot] = writer;
  }
  Contribution value(uint32_t id) const;

  /// Reduces values. On failure sets `why` to a message naming the terms by
  /// `termName(i)`: different input chunks, or a rank counted twice.
  mlir::FailureOr<uint32_t> combine(llvm::ArrayRef<uint32_t> ids,
                                    llvm::function_ref<std::string(size_t)> termName,
                                    std::string &why);

  /// Checks the collective's postcondition, reporting the first wrong output
  /// chunk at `anchor` with a note at `writerLoc` of the step that last wrote
  /// it, and how many more are wrong.
  mlir::LogicalResult
  checkPostcondition(mlir::Operation *anchor,
                     llvm::function_ref<mlir::Location(uint32_t)> writerLoc) const;

private:
  Contribution expected(int64_t rank, int64_t index) const;

  CollectiveShape shape;
  SlotLayout slots;
  int64_t inSize = 0;
  uint32_t firstMade = 1; // ids below are untouched input chunks
  std::vector<Contribution> made;
  std::vector<uint32_t> state, writers;
};

} // namespace coll

#endif // COLLC_ANALYSIS_SYMBOLICSTATE_H
