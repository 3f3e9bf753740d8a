//===- Multimem.cpp - Multicast and peer-window steps for one NVLink domain ===//
//
// Where every rank sits in one NVLink switch domain, a reduce of one chunk
// over all ranks becomes a single load-reduce on the rank that wants the
// result, and copies of one chunk to the same place on every rank become a
// single store to every rank, provided nothing else can race with them: the
// reduced chunks hold inputs that no one overwrites (but the store that ends
// the same rank's two-shot), and the stored chunks are touched by nothing
// else. Chains `D = a + b; D += c; ...` count as one reduce. Switches that
// multicast (NVLS) do these with multimem; others with loads and stores
// through every rank's window (LSA). A copy of another rank's input that
// nothing reads afterwards becomes a load from that rank's window: it has
// no FIFO to fuse with. Afterwards such ops carry `coll.multimem` or
// `coll.read_reduce`, `coll.multimem_st = group` or `coll.put = group`, or
// `coll.get`, which coll-to-rank-streams lowers.
//
//===----------------------------------------------------------------------===//

#include "dialect/CollOps.h"
#include "lib/Analysis/SymbolicState.h"
#include "lib/Lowering/Passes.h"
#include "lib/Lowering/TopologyAnalysis.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"

#include <map>

namespace coll {
#define GEN_PASS_DEF_COLLMULTIMEMPASS
#include "lib/Lowering/Passes.h.inc"
} // namespace coll

using namespace mlir;
using namespace coll;

namespace {

struct Access {
  Operation *op;
  bool write;
};

class MultimemSelection {
public:
  MultimemSelection(AlgorithmOp alg, bool multicast)
      : alg(alg), multicast(multicast), shape(CollectiveShape::of(alg)), slots(shape) {}

  void run();

private:
  void coalesceReduces();
  void index();
  bool touchedOnlyBy(ArrayRef<uint64_t> cells, llvm::function_ref<bool(const Access &)> ok);
  SmallVector<uint64_t> everyRank(ChunkAttr c) const;

  void findStoreGroups();
  void findLoads();
  void keepWhatHoldsTogether();
  void markChosen();
  void selectGets();

  /// Copies of one chunk to the same place on every rank, stored by
  /// `issuer` in one multicast or window store.
  struct StoreGroup {
    SmallVector<CopyOp> copies;
    int64_t issuer;
    llvm::SmallPtrSet<Operation *, 2> needs; // reduces that must be multicast too
    bool chosen = true;
  };
  /// A reduce of one chunk over every rank, done as one load.
  struct Load {
    Operation *op;
    llvm::SmallDenseSet<size_t, 2> needs; // store groups
    bool chosen = true;
  };

  AlgorithmOp alg;
  bool multicast;
  CollectiveShape shape;
  SlotLayout slots;
  std::vector<Operation *> ops; // program order
  llvm::DenseMap<Operation *, size_t> position;
  std::map<uint64_t, SmallVector<Access, 4>> accesses; // slot -> in program order
  std::vector<StoreGroup> groups;
  llvm::DenseMap<Operation *, size_t> groupOf; // copy -> its group
  std::vector<Load> loads;
};

/// The slots of chunk `c` on every rank.
SmallVector<uint64_t> MultimemSelection::everyRank(ChunkAttr c) const {
  SmallVector<uint64_t> out;
  for (int64_t r = 0; r < shape.ranks; ++r)
    for (int64_t k = 0; k < c.getCount(); ++k)
      out.push_back(slots.slot(c.getBuffer().getValue(), r, c.getIndex() + k));
  return out;
}

/// Merges `D += x` into the reduce that last touched D, when x has not
/// changed since, so that a reduce written in several statements is one.
void MultimemSelection::coalesceReduces() {
  llvm::DenseMap<uint64_t, Operation *> lastTouch;
  llvm::DenseMap<uint64_t, size_t> lastWrite;
  llvm::DenseMap<Operation *, size_t> at;
  auto piece = CollDialect::of(alg.getContext())->getPieceAttrHelper();
  auto pieceOf = [&](Operation *o) { return piece.getAttr(o); };
  size_t now = 0;
  for (Operation &op : llvm::make_early_inc_range(alg.getBody().front())) {
    std::optional<TransferChunks> t = transferChunks(&op);
    if (!t)
      continue;
    at[&op] = ++now;
    ReduceOp into;
    if (llvm::isa<ReduceOp>(op) && t->dst.getCount() == 1 && llvm::count(t->srcs, t->dst) == 1)
      into = llvm::dyn_cast_or_null<ReduceOp>(lastTouch.lookup(slots.slot(t->dst, 0)));
    if (into && into.getDst() == t->dst) {
      std::optional<TransferChunks> u = transferChunks(into);
      bool fits = u->channel == t->channel && u->protocol == t->protocol &&
                  u->pipeline == t->pipeline && pieceOf(into) == pieceOf(&op);
      SmallVector<Attribute> srcs(into.getSrcs().begin(), into.getSrcs().end());
      for (ChunkAttr x : t->srcs) {
        if (x == t->dst)
          continue;
        fits &= lastWrite.lookup(slots.slot(x, 0)) < at[into];
        srcs.push_back(x);
      }
      if (fits) {
        into.setSrcsAttr(ArrayAttr::get(alg.getContext(), srcs));
        for (ChunkAttr x : t->srcs)
          lastTouch[slots.slot(x, 0)] = into;
        op.erase();
        continue;
      }
    }
    for (ChunkAttr x : t->srcs)
      for (int64_t k = 0; k < x.getCount(); ++k)
        lastTouch[slots.slot(x, k)] = &op;
    for (int64_t k = 0; k < t->dst.getCount(); ++k) {
      lastTouch[slots.slot(t->dst, k)] = &op;
      lastWrite[slots.slot(t->dst, k)] = now;
    }
  }
}

void MultimemSelection::index() {
  ops.clear();
  position.clear();
  accesses.clear();
  for (Operation &op : alg.getBody().front()) {
    std::optional<TransferChunks> t = transferChunks(&op);
    if (!t)
      continue;
    position[&op] = ops.size();
    ops.push_back(&op);
    for (ChunkAttr s : t->srcs)
      for (int64_t k = 0; k < s.getCount(); ++k)
        accesses[slots.slot(s, k)].push_back({&op, false});
    for (int64_t k = 0; k < t->dst.getCount(); ++k)
      accesses[slots.slot(t->dst, k)].push_back({&op, true});
  }
}

bool MultimemSelection::touchedOnlyBy(ArrayRef<uint64_t> cells,
                                      llvm::function_ref<bool(const Access &)> ok) {
  for (uint64_t c : cells)
    for (const Access &a : accesses[c])
      if (!ok(a))
        return false;
  return true;
}

/// Afterwards the ops that run as multicast or window loads and stores carry
/// the attributes that say so.
void MultimemSelection::run() {
  coalesceReduces();
  index();
  findStoreGroups();
  findLoads();
  keepWhatHoldsTogether();
  markChosen();
  selectGets();
}

/// Afterwards `groups` holds every store candidate: copies of one chunk to
/// one place on every rank that nothing else races with, in program order
/// of each group's first copy, so that output is stable.
void MultimemSelection::findStoreGroups() {
  llvm::MapVector<std::tuple<const void *, StringRef, int64_t, int64_t>, SmallVector<CopyOp>>
      byPlace;
  for (Operation *op : ops)
    if (auto copy = llvm::dyn_cast<CopyOp>(op)) {
      ChunkAttr d = copy.getDst();
      byPlace[{copy.getSrc().getAsOpaquePointer(), d.getBuffer().getValue(), d.getIndex(),
               d.getCount()}]
          .push_back(copy);
    }
  for (auto &[key, copies] : byPlace) {
    llvm::SmallDenseSet<int64_t> ranks;
    for (CopyOp c : copies)
      ranks.insert(c.getDst().getRank());
    if (int64_t(copies.size()) != shape.ranks || int64_t(ranks.size()) != shape.ranks)
      continue;
    ChunkAttr src = copies.front().getSrc();
    // The value must not change while the group runs.
    size_t first = position[copies.front()], last = position[copies.back()];
    bool steady = true;
    for (int64_t k = 0; k < src.getCount(); ++k)
      for (const Access &a : accesses[slots.slot(src, k)])
        steady &= !a.write || position[a.op] < first || position[a.op] > last;
    // The stored chunks see nothing but the group and, before it, reduces
    // by the issuing rank (in-place two-shot), which must then be multicast.
    StoreGroup g{copies, src.getRank(), {}};
    llvm::SmallPtrSet<Operation *, 8> members(copies.begin(), copies.end());
    bool alone = touchedOnlyBy(everyRank(copies.front().getDst()), [&](const Access &a) {
      if (members.contains(a.op))
        return true;
      auto r = llvm::dyn_cast<ReduceOp>(a.op);
      if (!r || a.write || position[a.op] > first || r.getDst().getRank() != g.issuer)
        return false;
      g.needs.insert(a.op);
      return true;
    });
    if (!steady || !alone)
      continue;
    for (CopyOp c : copies)
      groupOf[c] = groups.size();
    groups.push_back(std::move(g));
  }
}

/// Afterwards `loads` holds every load candidate: reduces of one chunk over
/// every rank whose chunks hold inputs that nobody overwrites, but the
/// issuer's own later store.
void MultimemSelection::findLoads() {
  for (Operation *op : ops) {
    auto reduce = llvm::dyn_cast<ReduceOp>(op);
    if (!reduce || int64_t(reduce.getSrcs().size()) != shape.ranks)
      continue;
    auto first = llvm::cast<ChunkAttr>(reduce.getSrcs()[0]);
    llvm::SmallDenseSet<int64_t> ranks;
    bool same = true;
    for (Attribute a : reduce.getSrcs()) {
      auto c = llvm::cast<ChunkAttr>(a);
      same &= c.getBuffer() == first.getBuffer() && c.getIndex() == first.getIndex() &&
              c.getCount() == first.getCount();
      ranks.insert(c.getRank());
    }
    if (!same || int64_t(ranks.size()) != shape.ranks)
      continue;
    int64_t issuer = reduce.getDst().getRank();
    Load l{op, {}};
    bool inputs = touchedOnlyBy(everyRank(first), [&](const Access &a) {
      if (!a.write)
        return true;
      auto it = groupOf.find(a.op);
      if (position[a.op] < position[op] || it == groupOf.end() ||
          groups[it->second].issuer != issuer)
        return false;
      l.needs.insert(it->second);
      return true;
    });
    // The result must not land on what it reads on another rank.
    bool apart = true;
    for (int64_t k = 0; k < first.getCount(); ++k)
      for (int64_t r = 0; r < shape.ranks; ++r)
        apart &=
            r == issuer || slots.slot(reduce.getDst(), k) !=
                               slots.slot(first.getBuffer().getValue(), r, first.getIndex() + k);
    if (inputs && apart)
      loads.push_back(std::move(l));
  }
}

/// Afterwards no chosen store needs a reduce that is not a chosen load, and
/// no chosen load a store group that is not chosen: a store that needs a
/// multicast reduce, and a reduce that needs a multicast store, lose their
/// partner's way.
void MultimemSelection::keepWhatHoldsTogether() {
  llvm::DenseMap<Operation *, size_t> loadOf;
  for (size_t i = 0; i < loads.size(); ++i)
    loadOf[loads[i].op] = i;
  for (bool changed = true; changed;) {
    changed = false;
    for (StoreGroup &g : groups)
      for (Operation *r : g.needs)
        if (g.chosen && (!loadOf.count(r) || !loads[loadOf[r]].chosen))
          g.chosen = false, changed = true;
    for (Load &l : loads)
      for (size_t g : l.needs)
        if (l.chosen && !groups[g].chosen)
          l.chosen = false, changed = true;
  }
}

/// Afterwards the chosen ops carry the attributes coll-to-rank-streams
/// lowers; store groups are numbered in the order they were found.
void MultimemSelection::markChosen() {
  MLIRContext *ctx = alg.getContext();
  CollDialect *coll = CollDialect::of(ctx);
  for (Load &l : loads) {
    if (!l.chosen)
      continue;
    if (multicast)
      coll->getMultimemAttrHelper().setAttr(l.op, UnitAttr::get(ctx));
    else
      coll->getReadReduceAttrHelper().setAttr(l.op, UnitAttr::get(ctx));
  }
  int64_t id = 0;
  for (StoreGroup &g : groups) {
    if (!g.chosen)
      continue;
    auto groupAttr = IntegerAttr::get(IntegerType::get(ctx, 64), id);
    for (CopyOp c : g.copies) {
      if (multicast)
        coll->getMultimemStAttrHelper().setAttr(c, groupAttr);
      else
        coll->getPutAttrHelper().setAttr(c, groupAttr);
    }
    ++id;
  }
}

/// Copies of another rank's input that nothing reads afterwards: the
/// receiver loads them from the owner's window. A copy whose result is
/// forwarded keeps its FIFO, so that the receive fuses with the send.
void MultimemSelection::selectGets() {
  for (Operation *op : ops) {
    auto copy = llvm::dyn_cast<CopyOp>(op);
    CollDialect *coll = CollDialect::of(alg.getContext());
    if (!copy || coll->getMultimemStAttrHelper().isAttrPresent(copy) ||
        coll->getPutAttrHelper().isAttrPresent(copy))
      continue;
    ChunkAttr src = copy.getSrc(), dst = copy.getDst();
    if (src.getRank() == dst.getRank())
      continue;
    bool input = true, final = true;
    for (int64_t k = 0; k < src.getCount(); ++k) {
      for (const Access &a : accesses[slots.slot(src, k)])
        input &= !a.write;
      for (const Access &a : accesses[slots.slot(dst, k)])
        final &= a.write || position[a.op] < position[op];
    }
    if (input && final)
      coll->getGetAttrHelper().setAttr(copy, UnitAttr::get(alg.getContext()));
  }
}

struct CollMultimemPass : coll::impl::CollMultimemPassBase<CollMultimemPass> {
  using Base::Base;
  void runOnOperation() override {
    // Without peer windows nothing changes (multi-node placements), and a
    // module left as it was need not be verified again.
    bool changed = false;
    for (auto alg : getOperation().getOps<AlgorithmOp>()) {
      std::string spec = topology;
      if (std::optional<StringRef> own = alg.getTopology())
        spec = own->str();
      if (spec.empty())
        continue;
      std::string error;
      const Topology *topo = getAnalysis<TopologyAnalysis>().get(spec, error);
      if (!topo) {
        alg.emitError() << "topology: " << error;
        return signalPassFailure();
      }
      SmallVector<int64_t> map;
      if (DenseI64ArrayAttr m = alg.getRankMapAttr())
        map.assign(m.asArrayRef().begin(), m.asArrayRef().end());
      else
        for (int64_t r = 0; r < int64_t(alg.getRanks()); ++r)
          map.push_back(r);
      if (int64_t(map.size()) != int64_t(alg.getRanks()) || *llvm::max_element(map) >= topo->size())
        continue;
      bool multicast = true, windows = true;
      for (int64_t g : map) {
        multicast &= topo->sharesMulticast(map[0], g);
        windows &= topo->sharesPeerWindows(map[0], g);
      }
      if (windows) {
        MultimemSelection(alg, multicast).run();
        changed = true;
      }
    }
    if (!changed)
      markAllAnalysesPreserved();
  }
};

} // namespace
