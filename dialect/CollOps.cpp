//===- CollOps.cpp - Operations of the coll dialect -----------------------===//
#include "dialect/CollOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace coll;

//===----------------------------------------------------------------------===//
// Custom directives: chunks written `in[3][5]` inside ops
//===----------------------------------------------------------------------===//

static ParseResult parseChunk(OpAsmParser &parser, ChunkAttr &chunk) {
  FailureOr<ChunkAttr> parsed = ChunkAttr::parseBody(parser);
  if (failed(parsed))
    return failure();
  chunk = *parsed;
  return success();
}

static void printChunk(OpAsmPrinter &printer, Operation *, ChunkAttr chunk) {
  chunk.printBody(printer);
}

static ParseResult parseChunkList(OpAsmParser &parser, ArrayAttr &chunks) {
  SmallVector<Attribute> list;
  if (parser.parseCommaSeparatedList([&]() -> ParseResult {
        FailureOr<ChunkAttr> parsed = ChunkAttr::parseBody(parser);
        if (failed(parsed))
          return failure();
        list.push_back(*parsed);
        return success();
      }))
    return failure();
  chunks = parser.getBuilder().getArrayAttr(list);
  return success();
}

static void printChunkList(OpAsmPrinter &printer, Operation *, ArrayAttr chunks) {
  llvm::interleaveComma(chunks, printer,
                        [&](Attribute a) { llvm::cast<ChunkAttr>(a).printBody(printer); });
}

/// `deps(1:3, 2:0)`: steps 3 of threadblock 1 and 0 of threadblock 2, as
/// the flat array [1, 3, 2, 0]; nothing when there are none.
static ParseResult parseDeps(OpAsmParser &parser, DenseI64ArrayAttr &deps) {
  if (failed(parser.parseOptionalKeyword("deps")))
    return success();
  SmallVector<int64_t> flat;
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Paren, [&]() -> ParseResult {
        int64_t tb, step;
        if (parser.parseInteger(tb) || parser.parseColon() || parser.parseInteger(step))
          return failure();
        flat.append({tb, step});
        return success();
      }))
    return failure();
  deps = parser.getBuilder().getDenseI64ArrayAttr(flat);
  return success();
}

static void printDeps(OpAsmPrinter &printer, Operation *, DenseI64ArrayAttr deps) {
  if (!deps || deps.empty())
    return;
  printer << " deps(";
  ArrayRef<int64_t> flat = deps.asArrayRef();
  for (size_t i = 0; i + 1 < flat.size(); i += 2)
    printer << (i ? ", " : "") << flat[i] << ':' << flat[i + 1];
  printer << ')';
}

/// A step's id, written ` id(7)` only where it is not the previous step's id
/// plus one (0 for the first step): threadblocks parse what is left out.
static ParseResult parseStepId(OpAsmParser &parser, IntegerAttr &id) {
  if (failed(parser.parseOptionalKeyword("id")))
    return success();
  int64_t value;
  if (parser.parseLParen() || parser.parseInteger(value) || parser.parseRParen())
    return failure();
  id = parser.getBuilder().getI64IntegerAttr(value);
  return success();
}

static IntegerAttr stepIdOf(Operation *op) {
  std::optional<Attribute> id = op->getInherentAttr("id");
  return id ? llvm::dyn_cast_or_null<IntegerAttr>(*id) : IntegerAttr();
}

static void printStepId(OpAsmPrinter &printer, Operation *op, IntegerAttr id) {
  if (!id)
    return;
  Operation *prev = op->getBlock() ? op->getPrevNode() : nullptr;
  IntegerAttr prevId = prev ? stepIdOf(prev) : IntegerAttr();
  if (op->getBlock() && (prev ? prevId && prevId.getInt() + 1 == id.getInt() : id.getInt() == 0))
    return;
  printer << " id(" << id.getInt() << ')';
}

/// A threadblock's steps: those written without an id get the previous
/// step's plus one.
static ParseResult parseSteps(OpAsmParser &parser, Region &body) {
  if (parser.parseRegion(body))
    return failure();
  if (body.empty())
    body.emplaceBlock();
  int64_t next = 0;
  for (Operation &op : body.front()) {
    auto step = llvm::dyn_cast<StepOpInterface>(op);
    if (!step)
      continue; // the threadblock's verifier reports it
    if (IntegerAttr id = stepIdOf(&op))
      next = id.getInt();
    else
      step.setId(next);
    ++next;
  }
  return success();
}

static void printSteps(OpAsmPrinter &printer, Operation *, Region &body) {
  printer.printRegion(body);
}

#define GET_OP_CLASSES
#include "dialect/CollOps.cpp.inc"

//===----------------------------------------------------------------------===//
// AlgorithmOp
//===----------------------------------------------------------------------===//

std::optional<int64_t> coll::bufferSize(Collective c, int64_t ranks, int64_t chunks,
                                        DictionaryAttr scratch, StringRef name) {
  int64_t all = ranks * chunks;
  if (name == "in")
    return c == Collective::reducescatter || c == Collective::alltoall ? all : chunks;
  if (name == "out")
    return c == Collective::allgather || c == Collective::alltoall ? all : chunks;
  if (scratch)
    if (auto size = llvm::dyn_cast_or_null<IntegerAttr>(scratch.get(name)))
      return size.getInt();
  return std::nullopt;
}

LogicalResult coll::verifyCollectiveHeader(Operation *op, int64_t ranks, int64_t chunks,
                                           std::optional<int64_t> root, DictionaryAttr scratch) {
  // Bounds that keep every product of sizes far from overflow.
  if (ranks < 1 || ranks > (int64_t(1) << 20))
    return op->emitOpError("ranks must be in 1 .. 1048576, got ") << ranks;
  if (chunks < 1 || chunks > (int64_t(1) << 40) / ranks)
    return op->emitOpError("chunks must be in 1 .. ")
           << (int64_t(1) << 40) / ranks << " for " << ranks << " ranks, got " << chunks;
  if (root && (*root < 0 || *root >= ranks))
    return op->emitOpError("root ") << *root << " is not a rank of " << ranks;
  if (scratch) {
    for (NamedAttribute entry : scratch) {
      auto size = llvm::dyn_cast<IntegerAttr>(entry.getValue());
      if (!size || size.getInt() < 1 || size.getInt() > (int64_t(1) << 40) / ranks)
        return op->emitOpError("scratch buffer '")
               << entry.getName().getValue() << "' needs a size in 1 .. "
               << (int64_t(1) << 40) / ranks;
      if (entry.getName() == "in" || entry.getName() == "out")
        return op->emitOpError("scratch buffer may not be named '")
               << entry.getName().getValue() << "'";
    }
  }
  return success();
}

PhysicalRange coll::physicalRange(Collective c, int64_t chunks, bool inplace, ChunkAttr chunk) {
  return physicalRange(c, chunks, inplace, chunk.getBuffer().getValue(), chunk.getRank(),
                       chunk.getIndex(), chunk.getEnd());
}

PhysicalRange coll::physicalRange(Collective c, int64_t chunks, bool inplace, StringRef name,
                                  int64_t rank, int64_t begin, int64_t end) {
  PhysicalRange r{name, rank, begin, end};
  if (!inplace || (name != "in" && name != "out"))
    return r;
  if ((c == Collective::allgather && name == "in") ||
      (c == Collective::reducescatter && name == "out")) {
    r.begin += r.rank * chunks;
    r.end += r.rank * chunks;
  }
  r.buffer = c == Collective::allgather ? "out" : "in";
  return r;
}

std::optional<TransferChunks> coll::transferChunks(Operation *op) {
  TransferChunks t;
  if (auto copy = llvm::dyn_cast<CopyOp>(op)) {
    t = {copy.getDst(),
         {copy.getSrc()},
         copy.getChannelAttr(),
         copy.getPipelineAttr(),
         copy.getProtocolAttr()};
  } else if (auto reduce = llvm::dyn_cast<ReduceOp>(op)) {
    t = {reduce.getDst(),
         {},
         reduce.getChannelAttr(),
         reduce.getPipelineAttr(),
         reduce.getProtocolAttr()};
    t.srcs.append(reduce.getSources().begin(), reduce.getSources().end());
  } else {
    return std::nullopt;
  }
  return t;
}

std::optional<int64_t> AlgorithmOp::getBufferSize(StringRef name) {
  return bufferSize(getCollective(), getRanks(), getChunks(), getScratchAttr(), name);
}

LogicalResult AlgorithmOp::verify() {
  return verifyCollectiveHeader(*this, getRanks(), getChunks(), getRoot(), getScratchAttr());
}

//===----------------------------------------------------------------------===//
// CopyOp and ReduceOp
//===----------------------------------------------------------------------===//

/// `chunk` names chunks of a buffer of `alg` that exist.
static LogicalResult verifyChunk(Operation *op, AlgorithmOp alg, ChunkAttr chunk) {
  StringRef buffer = chunk.getBuffer().getValue();
  std::optional<int64_t> size = alg.getBufferSize(buffer);
  if (!size)
    return op->emitOpError("uses unknown buffer '") << buffer << "'";
  if (chunk.getRank() < 0 || chunk.getRank() >= int64_t(alg.getRanks()))
    return op->emitOpError("rank ") << chunk.getRank() << " of " << buffer
                                    << " is out of range [0, " << alg.getRanks() << ")";
  if (chunk.getCount() < 1)
    return op->emitOpError("chunk range of ") << buffer << " is empty";
  if (chunk.getIndex() < 0 || chunk.getEnd() > *size)
    return op->emitOpError("chunks [") << chunk.getIndex() << ", " << chunk.getEnd() << ") of "
                                       << buffer << " are out of range [0, " << *size << ")";
  return success();
}

static PhysicalRange physical(AlgorithmOp alg, ChunkAttr chunk) {
  return physicalRange(alg.getCollective(), alg.getChunks(), alg.getInplace(), chunk);
}

static const char *plural(int64_t n) { return n == 1 ? " chunk" : " chunks"; }

LogicalResult CopyOp::verify() {
  auto alg = llvm::cast<AlgorithmOp>((*this)->getParentOp()); // HasParent
  ChunkAttr src = getSrc(), dst = getDst();
  if (failed(verifyChunk(*this, alg, src)) || failed(verifyChunk(*this, alg, dst)))
    return failure();
  if (src.getCount() != dst.getCount())
    return emitOpError("copies ") << src.getCount() << plural(src.getCount()) << " into "
                                  << dst.getCount();
  if (physical(alg, src).overlaps(physical(alg, dst)))
    return emitOpError("source and destination overlap");
  return success();
}

LogicalResult ReduceOp::verify() {
  auto alg = llvm::cast<AlgorithmOp>((*this)->getParentOp()); // HasParent
  ChunkAttr dst = getDst();
  if (failed(verifyChunk(*this, alg, dst)))
    return failure();
  PhysicalRange to = physical(alg, dst);
  for (ChunkAttr src : getSources()) {
    if (failed(verifyChunk(*this, alg, src)))
      return failure();
    if (src.getCount() != dst.getCount())
      return emitOpError("reduces ")
             << src.getCount() << plural(src.getCount()) << " into " << dst.getCount();
    // A source is either the destination itself (`a += b`) or disjoint from
    // it; a partial overlap would make the result depend on chunk order.
    PhysicalRange from = physical(alg, src);
    if (from.overlaps(to) && (from.begin != to.begin || from.end != to.end))
      return emitOpError("source partially overlaps the destination");
  }
  return success();
}
