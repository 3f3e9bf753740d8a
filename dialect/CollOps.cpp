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
  llvm::interleaveComma(chunks, printer, [&](Attribute a) {
    llvm::cast<ChunkAttr>(a).printBody(printer);
  });
}

#define GET_OP_CLASSES
#include "dialect/CollOps.cpp.inc"

//===----------------------------------------------------------------------===//
// AlgorithmOp
//===----------------------------------------------------------------------===//

std::optional<int64_t> AlgorithmOp::getBufferSize(StringRef name) {
  int64_t chunks = getChunks(), all = getRanks() * chunks;
  Collective c = getCollective();
  if (name == "in")
    return c == Collective::reducescatter || c == Collective::alltoall ? all : chunks;
  if (name == "out")
    return c == Collective::allgather || c == Collective::alltoall ? all : chunks;
  if (auto scratch = getScratchAttr())
    if (auto size = llvm::dyn_cast_or_null<IntegerAttr>(scratch.get(name)))
      return size.getInt();
  return std::nullopt;
}

LogicalResult AlgorithmOp::verify() {
  if (getRanks() < 1)
    return emitOpError("needs at least one rank, got ") << getRanks();
  if (getChunks() < 1)
    return emitOpError("needs at least one chunk, got ") << getChunks();
  if (auto root = getRoot()) {
    if (*root < 0 || *root >= getRanks())
      return emitOpError("root ") << *root << " is not a rank of " << getRanks();
  }
  if (auto scratch = getScratchAttr()) {
    for (NamedAttribute entry : scratch) {
      auto size = llvm::dyn_cast<IntegerAttr>(entry.getValue());
      if (!size || size.getInt() < 1)
        return emitOpError("scratch buffer '")
               << entry.getName().getValue() << "' needs a positive size";
      if (entry.getName() == "in" || entry.getName() == "out")
        return emitOpError("scratch buffer may not be named '")
               << entry.getName().getValue() << "'";
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// CopyOp and ReduceOp
//===----------------------------------------------------------------------===//

static LogicalResult verifyChunk(Operation *op, ChunkAttr chunk) {
  auto alg = op->getParentOfType<AlgorithmOp>();
  StringRef buffer = chunk.getBuffer().getValue();
  std::optional<int64_t> size = alg.getBufferSize(buffer);
  if (!size)
    return op->emitOpError("uses unknown buffer '") << buffer << "'";
  if (chunk.getRank() < 0 || chunk.getRank() >= alg.getRanks())
    return op->emitOpError("rank ") << chunk.getRank() << " of " << buffer
                                    << " is out of range [0, " << alg.getRanks() << ")";
  if (chunk.getCount() < 1)
    return op->emitOpError("chunk range of ") << buffer << " is empty";
  if (chunk.getIndex() < 0 || chunk.getEnd() > *size)
    return op->emitOpError("chunks [") << chunk.getIndex() << ", " << chunk.getEnd()
                                       << ") of " << buffer << " are out of range [0, "
                                       << *size << ")";
  return success();
}

LogicalResult CopyOp::verify() {
  ChunkAttr src = getSrc(), dst = getDst();
  if (failed(verifyChunk(*this, src)) || failed(verifyChunk(*this, dst)))
    return failure();
  if (src.getCount() != dst.getCount())
    return emitOpError("copies ") << src.getCount() << " chunks into "
                                  << dst.getCount();
  if (src.getBuffer() == dst.getBuffer() && src.getRank() == dst.getRank() &&
      src.getIndex() < dst.getEnd() && dst.getIndex() < src.getEnd())
    return emitOpError("source and destination overlap");
  if (auto ch = getChannel(); ch && *ch < 0)
    return emitOpError("channel must not be negative");
  if (auto depth = getPipeline(); depth && *depth < 1)
    return emitOpError("pipeline depth must be positive");
  return success();
}

LogicalResult ReduceOp::verify() {
  if (getSrcs().empty())
    return emitOpError("needs at least one source");
  ChunkAttr dst = getDst();
  if (failed(verifyChunk(*this, dst)))
    return failure();
  for (Attribute a : getSrcs()) {
    auto src = llvm::dyn_cast<ChunkAttr>(a);
    if (!src)
      return emitOpError("sources must be chunks");
    if (failed(verifyChunk(*this, src)))
      return failure();
    if (src.getCount() != dst.getCount())
      return emitOpError("reduces ") << src.getCount() << " chunks into "
                                     << dst.getCount();
    // A source is either the destination itself (`a += b`) or disjoint from
    // it; a partial overlap would make the result depend on chunk order.
    if (src != dst && src.getBuffer() == dst.getBuffer() &&
        src.getRank() == dst.getRank() && src.getIndex() < dst.getEnd() &&
        dst.getIndex() < src.getEnd())
      return emitOpError("source partially overlaps the destination");
  }
  if (auto ch = getChannel(); ch && *ch < 0)
    return emitOpError("channel must not be negative");
  if (auto depth = getPipeline(); depth && *depth < 1)
    return emitOpError("pipeline depth must be positive");
  return success();
}
