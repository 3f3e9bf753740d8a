//===- Kernel.cpp - Plans as CUDA/host C++ and a C header -----------------===//
//
// Prints what the plan says and nothing else: each threadblock's steps in
// order, its waits on other threadblocks, and tables of the plan's shape.
// Loop geometry, FIFOs and data types are the runtime's, at launch time.
//
//===----------------------------------------------------------------------===//

#include "lib/Target/Kernel.h"

#include "dialect/CollOps.h"

#include "mlir/IR/Location.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace mlir;
using namespace coll;

namespace {

constexpr int kMaxScratch = 6; // collc::kMaxBuffers - collc::kScratch0

/// The algorithm a plan variant belongs to: its name without the protocol
/// that coll-select-protocol appended.
StringRef algorithmName(PlanOp plan) {
  StringRef name = plan.getSymName();
  for (StringRef p : {"_Simple", "_LL128", "_LL"})
    if (name.ends_with(p))
      return name.drop_back(p.size());
  return name;
}

std::string sourceLine(Location loc) {
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    return (llvm::sys::path::filename(file.getFilename().getValue()) + ":" +
            Twine(file.getLine()))
        .str();
  return "";
}

/// Whether a threadblock reaches other ranks' buffers: multimem or
/// peer-window steps.
bool usesPeers(ThreadblockOp tb) {
  return llvm::any_of(tb.getBody().front(), [](Operation &op) {
    return llvm::isa<MultimemLdReduceOp, MultimemStOp, ReadReduceOp, PutOp, GetOp>(op);
  });
}

std::string cIdent(StringRef name) {
  std::string out;
  for (char c : name)
    out += llvm::isAlnum(c) ? c : '_';
  return out;
}

class PlanWriter {
public:
  PlanWriter(PlanOp plan, raw_ostream &os) : plan(plan), os(os) {}

  LogicalResult write();

  int64_t slots = 8, widest = 1, numThreadblocks = 0;
  SmallVector<std::string> scratchNames;

private:
  std::string ref(ChunkAttr c) const;
  void writeStep(Operation *op, ThreadblockOp tb, int64_t rank);
  void pairDirect();

  PlanOp plan;
  raw_ostream &os;
  llvm::DenseMap<std::pair<int64_t, int64_t>, int64_t> tableIndex;
  llvm::DenseMap<int64_t, int64_t> stepsOf; // table index → steps per loop
  /// Sending steps of direct connections → where the receiving step stores.
  llvm::DenseMap<Operation *, ChunkAttr> directDst;
};

/// On a direct connection the k-th step that sends pairs with the k-th step
/// that receives. Where that receive stores what arrives, and does not
/// reduce it with what it overwrites, the sender may store it there itself.
void PlanWriter::pairDirect() {
  std::map<std::tuple<int64_t, int64_t, int64_t>, ThreadblockOp> receivers;
  for (auto rank : plan.getBody().getOps<RankOp>())
    for (auto tb : rank.getBody().getOps<ThreadblockOp>())
      if (tb.getDirectRecv() && tb.getRecv())
        receivers[{*tb.getRecv(), rank.getRank(), tb.getChannel()}] = tb;
  auto steps = [](ThreadblockOp tb, bool sending) {
    SmallVector<Operation *> out;
    for (Operation &op : tb.getBody().front())
      if (std::optional<StepEffects> e = stepEffects(&op); e && (sending ? e->sends : e->receives))
        out.push_back(&op);
    return out;
  };
  auto where = [&](ChunkAttr c) {
    return physicalRange(plan.getCollective(), plan.getChunks(), plan.getInplace(), c);
  };
  for (auto rank : plan.getBody().getOps<RankOp>())
    for (auto tb : rank.getBody().getOps<ThreadblockOp>()) {
      auto it = receivers.find({rank.getRank(), tb.getSend().value_or(-1), tb.getChannel()});
      if (!tb.getDirectSend() || it == receivers.end())
        continue;
      SmallVector<Operation *> sends = steps(tb, true), recvs = steps(it->second, false);
      for (size_t k = 0; k < sends.size() && k < recvs.size(); ++k) {
        StepEffects e = *stepEffects(recvs[k]);
        if (!e.writes)
          continue;
        bool apart = true;
        for (ChunkAttr r : e.reads)
          apart &= !where(r).overlaps(where(e.writes));
        if (apart)
          directDst[sends[k]] = e.writes;
      }
    }
}

std::string PlanWriter::ref(ChunkAttr c) const {
  StringRef buf = c.getBuffer().getValue();
  std::string args = std::to_string(c.getIndex());
  if (c.getCount() != 1)
    args += ", " + std::to_string(c.getCount());
  if (buf == "in" || buf == "out")
    return (buf + "(" + args + ")").str();
  return "scratch(kScratch_" + cIdent(buf) + ", " + args + ")";
}

void PlanWriter::writeStep(Operation *op, ThreadblockOp tb, int64_t rank) {
  std::optional<StepEffects> e = stepEffects(op);
  if (e->deps) {
    ArrayRef<int64_t> flat = e->deps.asArrayRef();
    for (size_t i = 0; i + 1 < flat.size(); i += 2) {
      int64_t other = tableIndex.lookup({rank, flat[i]});
      os << llvm::formatv("  b.wait({0}, {1}, {2});", other, flat[i + 1], stepsOf[other])
         << "  // after step " << flat[i + 1] << " of threadblock " << flat[i] << "\n";
    }
  }
  std::string call;
  llvm::raw_string_ostream s(call);
  // A sending step of a direct connection also names where its receiver
  // stores the data.
  std::string direct;
  if (ChunkAttr d = directDst.lookup(op))
    direct = ", direct(" + ref(d) + ")";
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](SendOp o) { s << "b.send(" << ref(o.getSrc()) << direct << ")"; })
      .Case([&](RecvOp o) { s << "b.recv(" << ref(o.getDst()) << ")"; })
      .Case([&](RecvCopySendOp o) {
        s << "b.recvCopySend(" << ref(o.getDst()) << direct << ")";
      })
      .Case([&](RecvReduceSendOp o) {
        s << "b.recvReduceSend(" << ref(o.getSrc()) << direct << ")";
      })
      .Case([&](RecvReduceCopyOp o) {
        s << "b.recvReduceCopy(" << ref(o.getSrc()) << ", " << ref(o.getDst()) << ")";
      })
      .Case([&](RecvReduceCopySendOp o) {
        s << "b.recvReduceCopySend(" << ref(o.getSrc()) << ", " << ref(o.getDst()) << direct
          << ")";
      })
      .Case([&](LocalCopyOp o) {
        s << "b.copy(" << ref(o.getSrc()) << ", " << ref(o.getDst()) << ")";
      })
      .Case([&](MultimemLdReduceOp o) {
        s << "b.multimemLdReduce(" << ref(o.getSrc()) << ", " << ref(o.getDst()) << ")";
      })
      .Case([&](MultimemStOp o) {
        s << "b.multimemSt(" << ref(o.getSrc()) << ", " << ref(o.getDst()) << ")";
      })
      .Case([&](ReadReduceOp o) {
        s << "b.readReduce(" << ref(o.getSrc()) << ", " << ref(o.getDst()) << ")";
      })
      .Case([&](PutOp o) {
        s << "b.put(" << ref(o.getSrc()) << ", " << ref(o.getDst()) << ")";
      })
      .Case([&](GetOp o) {
        s << "b.get(" << o.getSrc().getRank() << ", " << ref(o.getSrc()) << ", "
          << ref(o.getDst()) << ")";
      })
      .Case([&](LocalReduceOp o) {
        s << "b.reduce({";
        llvm::interleaveComma(o.getSrcs(), s, [&](Attribute a) {
          s << ref(llvm::cast<ChunkAttr>(a));
        });
        s << "}, " << ref(o.getDst()) << ")";
      });
  call += ";";
  os << "  " << call;
  std::string line = sourceLine(op->getLoc());
  if (!line.empty())
    os.indent(call.size() < 46 ? 46 - call.size() : 1) << "// " << line;
  os << "\n";
}

LogicalResult PlanWriter::write() {
  if (auto scratch = plan.getScratchAttr()) {
    if (scratch.size() > kMaxScratch)
      return plan.emitError("at most ") << kMaxScratch << " scratch buffers can be emitted";
    for (NamedAttribute e : scratch)
      scratchNames.push_back(e.getName().str());
  }
  if (auto depth = plan->getAttrOfType<IntegerAttr>("fifo_depth"))
    slots = std::max<int64_t>(slots, depth.getInt() + 1);
  pairDirect();

  // Table indices first: waits name other threadblocks by index.
  SmallVector<std::pair<int64_t, ThreadblockOp>> tbs;
  for (auto rank : plan.getBody().getOps<RankOp>())
    for (auto tb : rank.getBody().getOps<ThreadblockOp>()) {
      int64_t index = tbs.size();
      tableIndex[{rank.getRank(), tb.getId()}] = index;
      int64_t steps = 0;
      for (Operation &op : tb.getBody().front()) {
        if (std::optional<StepEffects> e = stepEffects(&op)) {
          ++steps;
          int64_t count = e->writes ? e->writes.getCount() : e->reads[0].getCount();
          widest = std::max(widest, count);
        }
      }
      stepsOf[index] = steps;
      tbs.push_back({rank.getRank(), tb});
    }

  StringRef name = plan.getSymName();
  os << "// Plan " << name << ": " << stringifyCollective(plan.getCollective()) << " on "
     << plan.getRanks() << " ranks, " << plan.getChunks() << " chunks per unit"
     << (plan.getInplace() ? ", in place" : "") << ", inputs of ["
     << plan.getMinBytes().value_or(0) << ", " << plan.getMaxBytes().value_or(INT64_MAX)
     << ") bytes per rank.\n";
  os << "namespace " << cIdent(name) << " {\nusing namespace collc;\n";
  for (auto [i, n] : llvm::enumerate(scratchNames))
    os << "constexpr int32_t kScratch_" << cIdent(n) << " = kScratch0 + " << i << ";\n";
  os << "\n";
  for (auto [index, entry] : llvm::enumerate(tbs)) {
    auto [rank, tb] = entry;
    os << "// Rank " << rank << ", threadblock " << tb.getId();
    if (tb.getRecv())
      os << ", receives from " << *tb.getRecv();
    if (tb.getSend())
      os << ", sends to " << *tb.getSend();
    os << ", channel " << tb.getChannel();
    if (tb.getProtocol())
      os << ", " << stringifyProtocol(*tb.getProtocol());
    if (tb.getDirectRecv() || tb.getDirectSend())
      os << ", direct";
    if (llvm::any_of(tb.getBody().front(), [](Operation &op) {
          return llvm::isa<MultimemLdReduceOp, MultimemStOp>(op);
        }))
      os << ", multimem";
    else if (usesPeers(tb))
      os << ", peer windows";
    os << ".\n";
    os << "COLLC_DEVICE void r" << rank << "_t" << tb.getId() << "(Block &b) {\n";
    for (Operation &op : tb.getBody().front())
      writeStep(&op, tb, rank);
    os << "}\n\n";
  }

  os << "COLLC_KERNEL(kernel) {\n"
     << "  Block b(COLLC_BLOCK_ARGS);\n"
     << "  while (b.nextLoop()) {\n"
     << "    switch (COLLC_BLOCK_ARGS->tb) {\n";
  for (auto [index, entry] : llvm::enumerate(tbs))
    os << "    case " << index << ": r" << entry.first << "_t" << entry.second.getId()
       << "(b); break;\n";
  os << "    }\n  }\n}\n\n";

  os << "const ThreadblockDesc threadblocks[] = {\n"
     << "    // rank, id, recv, send, channel, protocol, direct/peer steps, steps\n";
  for (auto [index, entry] : llvm::enumerate(tbs)) {
    auto [rank, tb] = entry;
    Protocol p = tb.getProtocol().value_or(Protocol::Simple);
    bool multimem = llvm::any_of(tb.getBody().front(), [](Operation &op) {
      return llvm::isa<MultimemLdReduceOp, MultimemStOp>(op);
    });
    int direct = (tb.getDirectRecv() ? 1 : 0) | (tb.getDirectSend() ? 2 : 0) |
                 (usesPeers(tb) ? 4 : 0) | (multimem ? 8 : 0);
    os << llvm::formatv("    {{{0}, {1}, {2}, {3}, {4}, k{5}, {6}, {7}},\n", rank, tb.getId(),
                        tb.getRecv() ? int64_t(*tb.getRecv()) : -1,
                        tb.getSend() ? int64_t(*tb.getSend()) : -1, tb.getChannel(),
                        stringifyProtocol(p), direct, stepsOf[index]);
  }
  os << "};\n} // namespace " << cIdent(name) << "\n\n";
  numThreadblocks = tbs.size();
  return success();
}

} // namespace

static std::string planProtocol(PlanOp plan) {
  for (auto rank : plan.getBody().getOps<RankOp>())
    for (auto tb : rank.getBody().getOps<ThreadblockOp>())
      if (tb.getProtocol())
        return ("k" + stringifyProtocol(*tb.getProtocol())).str();
  return "kSimple";
}

LogicalResult coll::writeKernels(ModuleOp module, StringRef source, raw_ostream &os) {
  std::string file = llvm::sys::path::filename(source).str();
  os << "// Generated by collc from " << file << ". Do not edit.\n"
     << "//\n"
     << "// nvcc compiles this file into CUDA kernels, a host C++ compiler into\n"
     << "// the host emulation; both need runtime/include and runtime/device.\n\n"
     << "#include \"collc/kernel.h\"\n#include \"collrt.h\"\n\n";

  // Plans of one algorithm are adjacent, in increasing size ranges.
  SmallVector<SmallVector<PlanOp>> algorithms;
  for (auto plan : module.getOps<PlanOp>()) {
    if (algorithms.empty() || algorithmName(algorithms.back().front()) != algorithmName(plan))
      algorithms.emplace_back();
    algorithms.back().push_back(plan);
  }
  if (algorithms.empty())
    return module.emitError("no plan to emit");

  for (auto &plans : algorithms) {
    std::string alg = cIdent(algorithmName(plans.front()));
    std::string table;
    llvm::raw_string_ostream t(table);
    for (PlanOp plan : plans) {
      PlanWriter writer(plan, os);
      if (failed(writer.write()))
        return failure();
      std::string ns = cIdent(plan.getSymName());
      t << "    {\"" << plan.getSymName() << "\", collc::k"
        << (plan.getCollective() == Collective::allreduce       ? "AllReduce"
            : plan.getCollective() == Collective::reducescatter ? "ReduceScatter"
            : plan.getCollective() == Collective::allgather     ? "AllGather"
            : plan.getCollective() == Collective::alltoall      ? "AllToAll"
            : plan.getCollective() == Collective::broadcast     ? "Broadcast"
                                                                : "Reduce")
        << ", " << plan.getRanks() << ", " << plan.getChunks() << ", "
        << (plan.getRoot() ? int64_t(*plan.getRoot()) : -1) << ", "
        << (plan.getInplace() ? 1 : 0) << ",\n     {";
      llvm::interleaveComma(writer.scratchNames, t, [&](const std::string &n) {
        t << llvm::cast<IntegerAttr>(plan.getScratchAttr().get(n)).getInt();
      });
      t << "}, " << writer.scratchNames.size() << ", " << plan.getMinBytes().value_or(0)
        << "LL, " << plan.getMaxBytes().value_or(INT64_MAX) << "LL, collc::"
        << planProtocol(plan) << ", " << writer.slots << ", " << writer.widest << ",\n     "
        << writer.numThreadblocks << ", " << ns << "::threadblocks, COLLC_HOST_FN(" << ns
        << "::kernel), COLLC_CUDA_FN(" << ns << "::kernel),\n     "
        << (plan->hasAttr("coll.moves_chunks") ? 1 : 0) << "},\n";
    }
    os << "static const collc::PlanDesc " << alg << "_plans[] = {\n"
       << "    // name, collective, ranks, chunks, root, inplace, scratch chunks,\n"
       << "    // scratch buffers, bytes [min, max), protocol, slots, widest step,\n"
       << "    // threadblocks, their table, host kernel, CUDA kernel, whole chunks only\n"
       << table << "};\n\n";
    os << "extern \"C\" const collc::AlgorithmDesc collc_algorithm_" << alg << " = {\n"
       << "    \"" << alg << "\", \"" << file << "\", " << plans.size() << ", " << alg
       << "_plans};\n\n";
    os << "extern \"C\" collResult_t collc_" << alg
       << "(const void *sendbuff, void *recvbuff, size_t count,\n"
       << "    collDataType_t datatype, collRedOp_t op, collComm_t comm, "
          "collStream_t stream) {\n"
       << "  return collLaunch(comm, &collc_algorithm_" << alg
       << ", sendbuff, recvbuff, count, datatype, op, stream);\n}\n\n";
  }
  return success();
}

LogicalResult coll::writeKernelHeader(ModuleOp module, StringRef source, raw_ostream &os) {
  std::string file = llvm::sys::path::filename(source).str();
  std::string guard = "COLLC_" + llvm::StringRef(cIdent(file)).upper() + "_H";
  os << "/* Generated by collc from " << file << ". Do not edit. */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include \"collrt.h\"\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  StringRef last;
  bool any = false;
  for (auto plan : module.getOps<PlanOp>()) {
    any = true;
    StringRef alg = algorithmName(plan);
    if (alg != last) {
      if (!last.empty())
        os << "\n";
      os << "/* " << alg << ": " << stringifyCollective(plan.getCollective()) << " on "
         << plan.getRanks() << " ranks, " << plan.getChunks() << " chunks per unit"
         << (plan.getInplace() ? ", in place" : "") << ".\n";
    }
    os << " * " << plan.getSymName() << ": [" << plan.getMinBytes().value_or(0) << ", "
       << plan.getMaxBytes().value_or(INT64_MAX) << ") bytes per rank, "
       << planProtocol(plan).substr(1) << ".\n";
    auto next = std::next(Block::iterator(plan.getOperation()));
    auto nextPlan = next == module.getBody()->end() ? PlanOp() : llvm::dyn_cast<PlanOp>(*next);
    if (!nextPlan || algorithmName(nextPlan) != alg) {
      std::string a = cIdent(alg);
      os << " */\n"
         << "collResult_t collc_" << a
         << "(const void *sendbuff, void *recvbuff, size_t count,\n"
         << "    collDataType_t datatype, collRedOp_t op, collComm_t comm, collStream_t "
            "stream);\n";
    }
    last = alg;
  }
  if (!any)
    return module.emitError("no plan to emit");
  os << "\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return success();
}
