//===- Elaborator.h - The state of elaborating one algorithm ----*- C++ -*-===//
//
// Private to lib/Frontend: the elaborator's names, expressions, statements
// and chunks live in three files (Elaborate.cpp, ElaborateExpr.cpp,
// ElaborateStmt.cpp) around this one class.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_FRONTEND_ELABORATOR_H
#define COLLC_FRONTEND_ELABORATOR_H

#include "lib/Frontend/Elaborate.h"

#include "dialect/CollOps.h"
#include "lib/Frontend/Parser.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

namespace coll::elaborate {

using namespace mlir;
namespace ast = coll::ast;

constexpr int64_t kMaxRanks = 1 << 16;

/// A chunk reference once evaluated and checked: `buffer[rank][index ..
/// index + count]`, before (or without) becoming a ChunkAttr.
struct ChunkRange {
  StringRef buffer;
  int64_t size; // chunks per rank of `buffer`
  int64_t rank, index, count;
  int64_t end() const { return index + count; }
  bool operator==(const ChunkRange &o) const {
    return buffer == o.buffer && rank == o.rank && index == o.index && count == o.count;
  }
};

/// Annotations in force for a statement, inherited from enclosing blocks.
struct Annotations {
  IntegerAttr channel, pipeline;
  ProtocolAttr protocol;
};

class Elaborator {
public:
  /// A counting elaborator runs the program and reports its errors, limits
  /// included, as a building one would, but creates no ops or attributes:
  /// an input past the limits is refused without building millions of ops.
  Elaborator(MLIRContext *context, StringAttr file, const ElaborateOptions &options,
             llvm::StringSet<> &usedDefines, bool counting)
      : context(context), builder(context), file(file), options(options), usedDefines(usedDefines),
        counting(counting) {}

  LogicalResult run(const ast::Algorithm &source, ModuleOp module);

private:
  struct Binding {
    std::string name;
    int64_t value;
    ast::Loc loc;
  };

  Location loc(ast::Loc at) { return FileLineColLoc::get(file, at.line, at.col); }
  InFlightDiagnostic error(ast::Loc at) { return emitError(loc(at)); }

  // Names
  const Binding *lookup(StringRef name) const;
  const Binding *lookup(const ast::Expr &var) const;
  LogicalResult define(StringRef name, int64_t value, ast::Loc at);
  void popTo(size_t size) {
    while (vars.size() > size) {
      byName.erase(vars.back().name);
      vars.pop_back();
    }
  }

  // Expressions
  FailureOr<int64_t> eval(const ast::Expr &e);
  FailureOr<int64_t> evalBinary(const ast::Expr &e);
  FailureOr<int64_t> evalCall(const ast::Expr &e);

  // Statements
  LogicalResult execBlock(const ast::Block &block, const Annotations &outer);
  LogicalResult exec(const ast::Stmt &s, const Annotations &outer);
  LogicalResult execFor(const ast::Stmt &s, const Annotations &ann);
  LogicalResult execScratch(const ast::Stmt &s);
  LogicalResult execAssign(const ast::Stmt &s, const Annotations &ann);
  LogicalResult execReduce(const ast::Stmt &s, const Annotations &ann);
  FailureOr<Annotations> annotate(const ast::Stmt &s, Annotations ann);
  LogicalResult step(ast::Loc at);

  // Chunks
  std::optional<int64_t> bufferSize(StringRef name) const;
  FailureOr<ChunkRange> chunk(const ast::ChunkRef &ref);
  ChunkAttr attr(const ChunkRange &c);
  PhysicalRange physical(const ChunkRange &c) const;
  LogicalResult emit(const ast::Stmt &s, const ChunkRange &dst, ArrayRef<ChunkRange> srcs,
                     ArrayRef<ast::Loc> srcLocs, const Annotations &ann);
  void build(const ast::Stmt &s, const ChunkRange &dst, ArrayRef<ChunkRange> srcs,
             const Annotations &ann);

  LogicalResult declare(const ast::Algorithm &source);

  MLIRContext *context;
  OpBuilder builder;
  StringAttr file;
  const ElaborateOptions &options;
  llvm::StringSet<> &usedDefines;
  bool counting;

  // Names never shadow each other, so each has at most one live binding.
  std::vector<Binding> vars;
  llvm::StringMap<unsigned> byName;
  AlgorithmOp alg;
  Collective collective = Collective::allreduce;
  int64_t ranks = 0, chunks = 1, slots = 0;
  bool inplace = false;
  llvm::StringMap<int64_t> scratchSizes;
  /// Each buffer's name as an attribute and its one-chunk ChunkAttrs by
  /// rank * size + index, made once each: a loop names the same chunks
  /// many times, and an array is cheaper than the attribute uniquer.
  struct BufferChunks {
    std::string name;
    StringAttr attr;
    std::vector<ChunkAttr> single;
  };
  SmallVector<BufferChunks, 4> bufferChunks;
  llvm::StringMap<ast::Loc> scratchLocs;
  llvm::DenseMap<const ast::Stmt *, Location> stmtLocs;
  uint64_t steps = 0, ops = 0;
};

} // namespace coll::elaborate

#endif // COLLC_FRONTEND_ELABORATOR_H
