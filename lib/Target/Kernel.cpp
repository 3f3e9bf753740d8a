//===- Kernel.cpp - Plans as CUDA/host C++ --------------------------------===//
//
// Prints what the plan says and nothing else: each threadblock's steps in
// order (with the direct destinations coll-select-protocol chose), its waits
// on other threadblocks, and tables of the plan's shape in abi.h's layout.
// Loop geometry, FIFOs and data types are the runtime's, at launch time.
// One printOperation per op, over a stream that keeps the indentation.
//
//===----------------------------------------------------------------------===//

#include "lib/Target/Kernel.h"
#include "lib/Target/KernelAbi.h"

#include "mlir/IR/Location.h"
#include "mlir/Support/IndentedOstream.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/FormattedStream.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace coll;

namespace {

/// Where a step's comment naming its source line starts.
constexpr unsigned kCommentColumn = 48;

std::string sourceLine(Location loc) {
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    return (llvm::sys::path::filename(file.getFilename().getValue()) + ":" +
            Twine(file.getLine()))
        .str();
  return "";
}

bool usesMultimem(ThreadblockOp tb) {
  return llvm::any_of(tb.getBody().front(), [](Operation &op) {
    return llvm::isa<MultimemLdReduceOp, MultimemStOp>(op);
  });
}

/// Whether a threadblock reaches other ranks' buffers: multimem or
/// peer-window steps.
bool usesPeers(ThreadblockOp tb) {
  return llvm::any_of(tb.getBody().front(), [](Operation &op) {
    return llvm::isa<MultimemLdReduceOp, MultimemStOp, ReadReduceOp, PutOp, GetOp>(op);
  });
}

/// The ThreadblockFlag bits of a threadblock's table entry.
int32_t threadblockFlags(ThreadblockOp tb) {
  return (tb.getDirectRecv() ? collc::kTbDirectRecv : 0) |
         (tb.getDirectSend() ? collc::kTbDirectSend : 0) |
         (usesPeers(tb) ? collc::kTbPeerSteps : 0) | (usesMultimem(tb) ? collc::kTbMultimem : 0);
}

/// A plan's threadblocks in table order (rank by rank), and what the
/// runtime's tables say about them.
struct PlanShape {
  SmallVector<std::pair<int64_t, ThreadblockOp>> threadblocks; // (rank, op)
  llvm::DenseMap<std::pair<int64_t, int64_t>, int64_t> index;  // (rank, id) -> entry
  SmallVector<int64_t> steps;                                   // per entry
  int64_t widest = 1;                                           // chunks of the widest step
  SmallVector<std::string> scratchNames;
  int64_t slots = collc::kMinSlots;

  explicit PlanShape(PlanOp plan) {
    for (auto rank : plan.getBody().getOps<RankOp>())
      for (auto tb : rank.getBody().getOps<ThreadblockOp>()) {
        index[{rank.getRank(), tb.getId()}] = threadblocks.size();
        threadblocks.push_back({rank.getRank(), tb});
        int64_t count = 0;
        for (auto step : tb.getBody().front().getOps<StepOpInterface>()) {
          ++count;
          widest = std::max(widest, step.getChunkCount());
        }
        steps.push_back(count);
      }
    if (auto scratch = plan.getScratchAttr())
      for (NamedAttribute e : scratch)
        scratchNames.push_back(e.getName().str());
    // A pipelined plan injects fifo_depth pieces before it forwards any.
    if (std::optional<uint64_t> depth = plan.getFifoDepth())
      slots = std::max<int64_t>(slots, *depth + 1);
  }
};

/// What printing a module of plans needs: the output, indented by
/// raw_indented_ostream over a stream that counts columns (for the comments
/// naming source lines), the input's name, and the plan being printed.
class KernelEmitter {
public:
  KernelEmitter(raw_ostream &out, StringRef source)
      : columns(out), os(columns), source(llvm::sys::path::filename(source).str()) {}

  raw_indented_ostream &ostream() { return os; }
  /// Pads the current line to the column of end-of-line comments.
  raw_indented_ostream &toCommentColumn() {
    columns.PadToColumn(kCommentColumn);
    return os;
  }
  StringRef sourceFile() const { return source; }

  LogicalResult emitOperation(Operation &op);

  /// The plan being printed.
  const PlanShape *shape = nullptr;

private:
  template <typename StepOpT>
  LogicalResult emitStep(StepOpT op);

  llvm::formatted_raw_ostream columns;
  raw_indented_ostream os;
  std::string source;
};

/// A chunk as the primitives take it: `in(3)`, `out(2, 4)`,
/// `scratch(kScratch_red, 0)`.
std::string ref(ChunkAttr c) {
  StringRef buf = c.getBuffer().getValue();
  std::string args = std::to_string(c.getIndex());
  if (c.getCount() != 1)
    args += ", " + std::to_string(c.getCount());
  if (buf == "in" || buf == "out")
    return (buf + "(" + args + ")").str();
  return "scratch(kScratch_" + cIdent(buf) + ", " + args + ")";
}

/// On a direct connection a sending step also names where its receiver
/// stores the data.
std::string direct(ChunkAttr dst) { return dst ? ", direct(" + ref(dst) + ")" : ""; }

/// The steps that read one chunk and write another: `b.callee(src, dst)`.
LogicalResult printSrcDst(KernelEmitter &e, StringRef callee, ChunkAttr src, ChunkAttr dst) {
  e.ostream() << "b." << callee << "(" << ref(src) << ", " << ref(dst) << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// Steps: one primitive call each
//===----------------------------------------------------------------------===//

LogicalResult printOperation(KernelEmitter &e, SendOp op) {
  e.ostream() << "b.send(" << ref(op.getSrc()) << direct(op.getDirectDstAttr()) << ")";
  return success();
}
LogicalResult printOperation(KernelEmitter &e, RecvOp op) {
  e.ostream() << "b.recv(" << ref(op.getDst()) << ")";
  return success();
}
LogicalResult printOperation(KernelEmitter &e, RecvCopySendOp op) {
  e.ostream() << "b.recvCopySend(" << ref(op.getDst()) << direct(op.getDirectDstAttr()) << ")";
  return success();
}
LogicalResult printOperation(KernelEmitter &e, RecvReduceSendOp op) {
  e.ostream() << "b.recvReduceSend(" << ref(op.getSrc()) << direct(op.getDirectDstAttr())
              << ")";
  return success();
}
LogicalResult printOperation(KernelEmitter &e, RecvReduceCopyOp op) {
  return printSrcDst(e, "recvReduceCopy", op.getSrc(), op.getDst());
}
LogicalResult printOperation(KernelEmitter &e, RecvReduceCopySendOp op) {
  e.ostream() << "b.recvReduceCopySend(" << ref(op.getSrc()) << ", " << ref(op.getDst())
              << direct(op.getDirectDstAttr()) << ")";
  return success();
}
LogicalResult printOperation(KernelEmitter &e, LocalCopyOp op) {
  return printSrcDst(e, "copy", op.getSrc(), op.getDst());
}
LogicalResult printOperation(KernelEmitter &e, LocalReduceOp op) {
  raw_indented_ostream &os = e.ostream();
  os << "b.reduce({";
  llvm::interleaveComma(op.getSrcs(), os,
                        [&](Attribute a) { os << ref(llvm::cast<ChunkAttr>(a)); });
  os << "}, " << ref(op.getDst()) << ")";
  return success();
}
LogicalResult printOperation(KernelEmitter &e, MultimemLdReduceOp op) {
  return printSrcDst(e, "multimemLdReduce", op.getSrc(), op.getDst());
}
LogicalResult printOperation(KernelEmitter &e, MultimemStOp op) {
  return printSrcDst(e, "multimemSt", op.getSrc(), op.getDst());
}
LogicalResult printOperation(KernelEmitter &e, ReadReduceOp op) {
  return printSrcDst(e, "readReduce", op.getSrc(), op.getDst());
}
LogicalResult printOperation(KernelEmitter &e, PutOp op) {
  return printSrcDst(e, "put", op.getSrc(), op.getDst());
}
LogicalResult printOperation(KernelEmitter &e, GetOp op) {
  e.ostream() << "b.get(" << op.getSrc().getRank() << ", " << ref(op.getSrc()) << ", "
              << ref(op.getDst()) << ")";
  return success();
}

/// A step: a wait per dependency on another threadblock's progress (named
/// by its index in the plan's table), then the call, commented with its
/// source line.
template <typename StepOpT>
LogicalResult KernelEmitter::emitStep(StepOpT op) {
  int64_t rank = op->template getParentOfType<RankOp>().getRank();
  if (DenseI64ArrayAttr deps = op.getDepsAttr()) {
    ArrayRef<int64_t> flat = deps.asArrayRef();
    for (size_t i = 0; i + 1 < flat.size(); i += 2) {
      int64_t other = shape->index.lookup({rank, flat[i]});
      os << llvm::formatv("b.wait({0}, {1}, {2});", other, flat[i + 1], shape->steps[other])
         << "  // after step " << flat[i + 1] << " of threadblock " << flat[i] << "\n";
    }
  }
  if (failed(printOperation(*this, op)))
    return failure();
  os << ";";
  std::string line = sourceLine(op.getLoc());
  if (!line.empty())
    toCommentColumn() << "// " << line;
  os << "\n";
  return success();
}

//===----------------------------------------------------------------------===//
// Threadblocks and plans
//===----------------------------------------------------------------------===//

/// A threadblock as a device function `r<rank>_t<id>` of its steps.
LogicalResult printOperation(KernelEmitter &e, ThreadblockOp tb) {
  raw_indented_ostream &os = e.ostream();
  int64_t rank = tb->getParentOfType<RankOp>().getRank();
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
  if (usesMultimem(tb))
    os << ", multimem";
  else if (usesPeers(tb))
    os << ", peer windows";
  os << ".\n";
  {
    auto body = os.scope(llvm::formatv("COLLC_DEVICE void r{0}_t{1}(Block &b) {{\n", rank,
                                       tb.getId())
                             .str(),
                         "}\n\n");
    for (Operation &op : tb.getBody().front())
      if (failed(e.emitOperation(op)))
        return failure();
  }
  return success();
}

LogicalResult printOperation(KernelEmitter &e, RankOp rank) {
  for (Operation &op : rank.getBody().front())
    if (failed(e.emitOperation(op)))
      return failure();
  return success();
}

/// A plan as a namespace: its scratch buffers' indices, a device function
/// per threadblock, the kernel that dispatches to them and the threadblock
/// table.
LogicalResult printOperation(KernelEmitter &e, PlanOp plan) {
  if (auto scratch = plan.getScratchAttr(); scratch && scratch.size() > collc::kMaxScratch)
    return plan.emitError("at most ") << collc::kMaxScratch << " scratch buffers can be emitted";
  // Waits name steps by their position.
  if (failed(verifyStepsNumbered(plan)))
    return failure();
  PlanShape shape(plan);
  e.shape = &shape;
  raw_indented_ostream &os = e.ostream();
  std::string ns = cIdent(plan.getSymName());
  os << "// Plan " << plan.getSymName() << ": " << stringifyCollective(plan.getCollective())
     << " on " << plan.getRanks() << " ranks, " << plan.getChunks() << " chunks per unit"
     << (plan.getInplace() ? ", in place" : "") << ", inputs of ["
     << plan.getMinBytes().value_or(0) << ", " << plan.getMaxBytes().value_or(INT64_MAX)
     << ") bytes per rank.\n";
  os << "namespace " << ns << " {\nusing namespace collc;\n";
  for (auto [i, n] : llvm::enumerate(shape.scratchNames))
    os << "constexpr int32_t kScratch_" << cIdent(n) << " = kScratch0 + " << i << ";\n";
  os << "\n";
  for (Operation &op : plan.getBody().front())
    if (failed(e.emitOperation(op)))
      return failure();

  {
    auto kernel = os.scope("COLLC_KERNEL(kernel) {\n", "}\n\n");
    os << "Block b(COLLC_BLOCK_ARGS);\n";
    auto loop = os.scope("while (b.nextLoop()) {\n", "}\n");
    os << "switch (COLLC_BLOCK_ARGS->tb) {\n";
    for (auto [index, entry] : llvm::enumerate(shape.threadblocks))
      os << "case " << index << ": r" << entry.first << "_t" << entry.second.getId()
         << "(b); break;\n";
    os << "}\n";
  }

  os << "const ThreadblockDesc threadblocks[] = {\n";
  {
    ContinuationScope elements(os);
    os << "// rank, id, recv, send, channel, protocol, direct/peer steps, steps\n";
    for (auto [index, entry] : llvm::enumerate(shape.threadblocks)) {
      auto [rank, tb] = entry;
      os << llvm::formatv("{{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}},\n", rank, tb.getId(),
                          tb.getRecv() ? int64_t(*tb.getRecv()) : -1,
                          tb.getSend() ? int64_t(*tb.getSend()) : -1, tb.getChannel(),
                          abiName(tb.getProtocol().value_or(Protocol::Simple)),
                          threadblockFlags(tb), shape.steps[index]);
    }
  }
  os << "};\n} // namespace " << ns << "\n\n";
  e.shape = nullptr;
  return success();
}

/// A plan's entry in its algorithm's table of PlanDesc.
void printPlanDesc(raw_indented_ostream &os, PlanOp plan) {
  PlanShape shape(plan);
  std::string ns = cIdent(plan.getSymName());
  // Continuation lines align with the brace.
  os << "{\"" << plan.getSymName() << "\", collc::" << abiName(plan.getCollective()) << ", "
     << plan.getRanks() << ", " << plan.getChunks() << ", "
     << (plan.getRoot() ? int64_t(*plan.getRoot()) : -1) << ", " << (plan.getInplace() ? 1 : 0)
     << ",\n {";
  llvm::interleaveComma(shape.scratchNames, os, [&](const std::string &n) {
    os << llvm::cast<IntegerAttr>(plan.getScratchAttr().get(n)).getInt();
  });
  os << "}, " << shape.scratchNames.size() << ", " << plan.getMinBytes().value_or(0) << "LL, "
     << plan.getMaxBytes().value_or(INT64_MAX) << "LL, collc::" << abiName(planProtocol(plan))
     << ", " << shape.slots << ", " << shape.widest << ",\n " << shape.threadblocks.size()
     << ", " << ns << "::threadblocks, COLLC_HOST_FN(" << ns << "::kernel), COLLC_CUDA_FN("
     << ns << "::kernel),\n " << (CollDialect::of(plan.getContext())->getMovesChunksAttrHelper().isAttrPresent(plan) ? 1 : 0) << "},\n";
}

/// An algorithm: its plans, their table, its AlgorithmDesc and its entry
/// point.
LogicalResult printAlgorithm(KernelEmitter &e, ArrayRef<PlanOp> plans) {
  for (PlanOp plan : plans)
    if (failed(e.emitOperation(*plan)))
      return failure();
  raw_indented_ostream &os = e.ostream();
  std::string alg = cIdent(algorithmOf(plans.front()));
  os << "static const collc::PlanDesc " << alg << "_plans[] = {\n";
  {
    ContinuationScope elements(os);
    os << "// name, collective, ranks, chunks, root, inplace, scratch chunks,\n"
       << "// scratch buffers, bytes [min, max), protocol, slots, widest step,\n"
       << "// threadblocks, their table, host kernel, CUDA kernel, whole chunks only\n";
    for (PlanOp plan : plans)
      printPlanDesc(os, plan);
  }
  os << "};\n\n";
  os << "extern \"C\" const collc::AlgorithmDesc collc_algorithm_" << alg << " = {\n";
  {
    ContinuationScope elements(os);
    os << "\"" << alg << "\", \"" << e.sourceFile() << "\", " << plans.size() << ", " << alg
       << "_plans};\n\n";
  }
  os << "extern \"C\" ";
  printEntryPoint(os, alg, " {\n");
  {
    auto body = os.scope("", "}\n\n");
    os << "return collLaunch(comm, &collc_algorithm_" << alg
       << ", sendbuff, recvbuff, count, datatype, op, stream);\n";
  }
  return success();
}

LogicalResult KernelEmitter::emitOperation(Operation &op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case<PlanOp, RankOp, ThreadblockOp>([&](auto o) { return printOperation(*this, o); })
      .Case<SendOp, RecvOp, RecvCopySendOp, RecvReduceSendOp, RecvReduceCopyOp,
            RecvReduceCopySendOp, LocalCopyOp, LocalReduceOp, MultimemLdReduceOp, MultimemStOp,
            ReadReduceOp, PutOp, GetOp>([&](auto o) { return emitStep(o); })
      .Default([](Operation *o) { return o->emitOpError("cannot be emitted as a kernel"); });
}

} // namespace

LogicalResult coll::writeKernels(ModuleOp module, StringRef source, raw_ostream &out) {
  KernelEmitter emitter(out, source);
  raw_indented_ostream &os = emitter.ostream();
  os << "// Generated by collc from " << emitter.sourceFile() << ". Do not edit.\n"
     << "//\n"
     << "// nvcc compiles this file into CUDA kernels, a host C++ compiler into\n"
     << "// the host emulation; both need runtime/include and runtime/device.\n\n"
     << "#include \"collc/kernel.h\"\n#include \"collrt.h\"\n\n";
  auto algorithms = plansByAlgorithm(module);
  if (algorithms.empty())
    return module.emitError("no plan to emit");
  for (auto &plans : algorithms)
    if (failed(printAlgorithm(emitter, plans)))
      return failure();
  return success();
}
