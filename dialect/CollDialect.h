//===- CollDialect.h - The coll dialect -----------------------------------===//
#ifndef COLLC_DIALECT_COLLDIALECT_H
#define COLLC_DIALECT_COLLDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
// The helpers of the dialect's discardable attributes use the full Operation.
#include "mlir/IR/Operation.h"

#include "dialect/CollDialect.h.inc"

namespace coll {
/// The chunk count of a shape's field (#coll.affine, #coll.table) that
/// each threadblock's table gives per step: printed `?`.
constexpr int64_t kTableCount = -1;
} // namespace coll

#endif // COLLC_DIALECT_COLLDIALECT_H
