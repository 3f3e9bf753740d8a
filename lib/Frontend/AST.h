//===- AST.h - Syntax tree of a Coll program ------------------------------===//
//
// The parser (built with exceptions, for ANTLR) produces this tree and the
// elaborator (built without) consumes it, so it holds plain data only.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_FRONTEND_AST_H
#define COLLC_FRONTEND_AST_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace coll::ast {

/// A 1-based position in the source file.
struct Loc {
  unsigned line = 0;
  unsigned col = 0;
};

struct Expr {
  enum class Kind { Int, Var, Unary, Binary, Call };
  Kind kind;
  Loc loc;                                 // where the expression starts
  Loc opLoc;                               // Binary: the operator
  int64_t value = 0;                       // Int
  std::string name;                        // Var, Call; operator for Unary/Binary
  std::vector<std::unique_ptr<Expr>> args; // operands / call arguments
  /// Var: where the elaborator found its binding last time, to look there
  /// first (a loop body evaluates the same names millions of times).
  mutable size_t binding = 0;
};
using ExprPtr = std::unique_ptr<Expr>;

/// `buffer[rank][index]` or `buffer[rank][index .. end]`.
struct ChunkRef {
  Loc loc;
  std::string buffer;
  ExprPtr rank, index, end;
};

struct Annotation {
  Loc loc;
  std::string name;
  ExprPtr arg;
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

struct Stmt {
  enum class Kind { Block, Let, For, If, Assert, Scratch, Assign, Reduce };
  Kind kind;
  Loc loc;
  std::vector<Annotation> annotations;
  std::string name;        // Let, For and Reduce variable; Scratch buffer
  std::string message;     // Assert
  bool accumulate = false; // Assign with `+=`
  ExprPtr a, b, c;         // Let: a; For: a .. b step c; Assert: a;
                           // Scratch: a (size); Reduce: p in a .. b
  Block body;              // Block, For
  // If: `if c0 {..} else if c1 {..} ... else {orElse}`, kept flat so that a
  // long chain costs no recursion.
  std::vector<std::pair<ExprPtr, Block>> arms;
  Block orElse;
  ChunkRef dst;               // Assign, Reduce
  std::vector<ChunkRef> srcs; // Assign: sources; Reduce: the one source
};

struct Param {
  Loc loc;
  std::string name;
  ExprPtr value;
};

struct Algorithm {
  Loc loc;
  std::string name;
  Loc collectiveLoc;
  std::string collective;
  std::vector<Param> params;
  ExprPtr chunks; // null: one chunk
  bool inplace = false;
  Block body;
};

struct File {
  std::vector<Algorithm> algorithms;
};

} // namespace coll::ast

#endif // COLLC_FRONTEND_AST_H
