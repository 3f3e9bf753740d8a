//===- MscclXml.cpp - Plans as MSCCL-IR XML -------------------------------===//
#include "lib/Target/MscclXml.h"

#include "dialect/CollOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>

using namespace mlir;
using namespace coll;

namespace {

struct XmlStep {
  const char *type;
  ChunkAttr src, dst;
  int64_t count = 1;
  int64_t depTb = -1, depStep = -1;
  Location loc;
};

/// Buffer letter and offset: scratch buffers are laid end to end in `s`.
class Buffers {
public:
  explicit Buffers(PlanOp plan) {
    if (auto scratch = plan.getScratchAttr())
      for (NamedAttribute entry : scratch) {
        base[entry.getName().getValue()] = total;
        total += llvm::cast<IntegerAttr>(entry.getValue()).getInt();
      }
  }
  int64_t scratchChunks() const { return total; }
  std::pair<char, int64_t> where(ChunkAttr c) const {
    StringRef name = c.getBuffer().getValue();
    if (name == "in")
      return {'i', c.getIndex()};
    if (name == "out")
      return {'o', c.getIndex()};
    return {'s', base.lookup(name) + c.getIndex()};
  }

private:
  llvm::StringMap<int64_t> base;
  int64_t total = 0;
};

/// The MSCCL steps of one plan step; local reductions of several terms
/// become a copy and then one `re` per further term.
SmallVector<XmlStep, 2> translate(StepOpInterface step) {
  SmallVector<XmlStep, 2> out;
  Operation *op = step;
  SmallVector<ChunkAttr, 2> reads = step.getReadChunks();
  ChunkAttr writes = step.getWrittenChunk();
  auto add = [&](const char *type, ChunkAttr src, ChunkAttr dst) {
    out.push_back({type, src, dst, (dst ? dst : src).getCount(), -1, -1, op->getLoc()});
  };
  if (llvm::isa<SendOp>(op))
    add("s", reads[0], reads[0]);
  else if (llvm::isa<RecvOp>(op))
    add("r", writes, writes);
  else if (llvm::isa<RecvCopySendOp>(op))
    add("rcs", writes, writes);
  else if (llvm::isa<RecvReduceSendOp>(op))
    add("rrs", reads[0], reads[0]);
  else if (llvm::isa<RecvReduceCopyOp>(op))
    add("rrc", reads[0], writes);
  else if (llvm::isa<RecvReduceCopySendOp>(op))
    add("rrcs", reads[0], writes);
  else if (llvm::isa<LocalCopyOp>(op))
    add("cpy", reads[0], writes);
  else {
    ArrayRef<ChunkAttr> terms = reads;
    size_t first = 0;
    if (terms[0] != writes) {
      add("cpy", terms[0], writes);
      first = 1;
    } else {
      first = 1;
    }
    for (size_t i = first; i < terms.size(); ++i)
      if (terms[i] != writes)
        add("re", terms[i], writes);
  }
  return out;
}

} // namespace

LogicalResult coll::writeMscclXml(PlanOp plan, raw_ostream &os) {
  WalkResult peers = plan.walk([](Operation *op) {
    return llvm::isa<MultimemLdReduceOp, MultimemStOp, ReadReduceOp, PutOp, GetOp>(op)
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  if (peers.wasInterrupted())
    return plan.emitError(
        "MSCCL-IR has no multimem or peer-window steps; lower without coll-multimem");
  // MSCCL's deps name steps by their position.
  if (failed(verifyStepsNumbered(plan)))
    return failure();
  Buffers buffers(plan);
  int64_t inChunks = *plan.getBufferSize("in"), outChunks = *plan.getBufferSize("out");
  int64_t channels = 0;
  Protocol proto = Protocol::Simple;
  for (auto rank : plan.getBody().front().getOps<RankOp>())
    for (auto tb : rank.getBody().front().getOps<ThreadblockOp>()) {
      channels = std::max<int64_t>(channels, tb.getChannelAttr().getInt() + 1);
      if (tb.getProtocolAttr())
        proto = tb.getProtocolAttr().getValue();
    }
  os << "<algo name=\"" << plan.getSymName() << "\" proto=\"" << stringifyProtocol(proto)
     << "\" nchannels=\"" << channels << "\" nchunksperloop=\"" << std::max(inChunks, outChunks)
     << "\" ngpus=\"" << plan.getRanks() << "\" coll=\""
     << stringifyCollective(plan.getCollective()) << "\" inplace=\"" << (plan.getInplace() ? 1 : 0)
     << "\" outofplace=\"" << (plan.getInplace() ? 0 : 1) << "\" minBytes=\""
     << plan.getMinBytes().value_or(0) << "\" maxBytes=\""
     << (plan.getMaxBytes() && *plan.getMaxBytes() < (uint64_t(1) << 62) ? *plan.getMaxBytes() : 0)
     << "\">\n";
  for (auto rank : plan.getBody().front().getOps<RankOp>()) {
    os << "  <gpu id=\"" << rank.getRankAttr().getInt() << "\" i_chunks=\"" << inChunks
       << "\" o_chunks=\"" << outChunks << "\" s_chunks=\"" << buffers.scratchChunks() << "\">\n";
    // Translate every threadblock first: nops and multi-step reductions
    // shift step numbers, which deps must follow.
    std::map<int64_t, SmallVector<XmlStep>> steps;
    std::map<int64_t, SmallVector<int64_t>> lastOf; // tb -> plan step -> last xml step
    SmallVector<ThreadblockOp> tbs(rank.getBody().front().getOps<ThreadblockOp>());
    for (ThreadblockOp tb : tbs) {
      int64_t id = tb.getIdAttr().getInt();
      for (auto op : tb.getBody().front().getOps<StepOpInterface>()) {
        DenseI64ArrayAttr depsAttr = op.getDepsAttr();
        ArrayRef<int64_t> deps = depsAttr ? depsAttr.asArrayRef() : ArrayRef<int64_t>();
        SmallVector<XmlStep, 2> xs = translate(op);
        // One dep per MSCCL step: extra deps go on nops in front.
        for (size_t d = 0; d + 1 < deps.size(); d += 2) {
          bool last = d + 2 >= deps.size();
          if (!last)
            steps[id].push_back({"nop", {}, {}, 0, deps[d], deps[d + 1], op.getLoc()});
          else {
            xs.front().depTb = deps[d];
            xs.front().depStep = deps[d + 1];
          }
        }
        steps[id].append(xs.begin(), xs.end());
        lastOf[id].push_back(steps[id].size() - 1);
      }
    }
    std::set<std::pair<int64_t, int64_t>> depended;
    for (auto &[id, list] : steps)
      for (XmlStep &s : list)
        if (s.depTb >= 0) {
          s.depStep = lastOf[s.depTb][s.depStep];
          depended.insert({s.depTb, s.depStep});
        }
    for (ThreadblockOp tb : tbs) {
      int64_t id = tb.getIdAttr().getInt();
      os << "    <tb id=\"" << id << "\" send=\""
         << (tb.getSendAttr() ? tb.getSendAttr().getInt() : -1) << "\" recv=\""
         << (tb.getRecvAttr() ? tb.getRecvAttr().getInt() : -1) << "\" chan=\""
         << tb.getChannelAttr().getInt() << "\">\n";
      for (auto [index, s] : llvm::enumerate(steps[id])) {
        auto src = s.src ? buffers.where(s.src) : std::pair<char, int64_t>{'i', -1};
        auto dst = s.dst ? buffers.where(s.dst) : std::pair<char, int64_t>{'i', -1};
        os << "      <step s=\"" << index << "\" type=\"" << s.type << "\" srcbuf=\"" << src.first
           << "\" srcoff=\"" << src.second << "\" dstbuf=\"" << dst.first << "\" dstoff=\""
           << dst.second << "\" cnt=\"" << s.count << "\" depid=\"" << s.depTb << "\" deps=\""
           << s.depStep << "\" hasdep=\"" << (depended.count({id, int64_t(index)}) ? 1 : 0)
           << "\"/>\n";
      }
      os << "    </tb>\n";
    }
    os << "  </gpu>\n";
  }
  os << "</algo>\n";
  return success();
}
