//===- Parser.h - Coll source text to syntax tree -------------------------===//
#ifndef COLLC_FRONTEND_PARSER_H
#define COLLC_FRONTEND_PARSER_H

#include "lib/Frontend/AST.h"

#include <string>
#include <string_view>

namespace coll::ast {

struct SyntaxError {
  Loc loc;
  std::string message;
};

/// Parses a whole file. Returns false and fills `error` with the first
/// problem found; no exception escapes, whatever the input.
bool parseFile(std::string_view source, File &file, SyntaxError &error);

} // namespace coll::ast

#endif // COLLC_FRONTEND_PARSER_H
