//===- Parser.h - Coll source text to syntax tree -------------------------===//
#ifndef COLLC_FRONTEND_PARSER_H
#define COLLC_FRONTEND_PARSER_H

#include "lib/Frontend/AST.h"

#include <cstddef>
#include <string>
#include <string_view>

namespace coll::ast {

/// The most source text a program may have: ANTLR holds about 100 bytes
/// per token and a parse tree of about 1 KB per token, so that a program
/// costs at most about 1 GB. Tools read no more than one byte past it.
constexpr size_t kMaxSourceBytes = size_t(16) << 20;

struct SyntaxError {
  Loc loc;
  std::string message;
};

/// Parses a whole file. Returns false and fills `error` with the first
/// problem found; no exception escapes, whatever the input.
bool parseFile(std::string_view source, File &file, SyntaxError &error);

} // namespace coll::ast

#endif // COLLC_FRONTEND_PARSER_H
