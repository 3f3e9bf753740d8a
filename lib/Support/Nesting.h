//===- Nesting.h - How deeply a textual IR file nests ---------------------===//
#ifndef COLLC_SUPPORT_NESTING_H
#define COLLC_SUPPORT_NESTING_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <optional>
#include <string>

namespace coll {

/// MLIR's parser recurses once or more per nested region, attribute or
/// type, so deep enough nesting overflows the stack; far below that depth,
/// no plan or algorithm nests more than a dozen levels.
constexpr unsigned kMaxIRNesting = 1000;

/// The offset in `text`, read as textual MLIR, of the first bracket
/// (`(`, `[`, `{` or `<`) opened more than `limit` levels deep, outside
/// string literals and comments; none if no bracket is. Bytecode is not
/// scanned: its reader does not recurse on regions.
std::optional<size_t> findNestingPast(llvm::StringRef text, unsigned limit = kMaxIRNesting);

/// What the tools say where findNestingPast finds a bracket.
std::string nestingMessage(unsigned limit = kMaxIRNesting);

} // namespace coll

#endif // COLLC_SUPPORT_NESTING_H
