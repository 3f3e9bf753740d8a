//===- CollDialect.h - The coll dialect -----------------------------------===//
#ifndef COLLC_DIALECT_COLLDIALECT_H
#define COLLC_DIALECT_COLLDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
// The helpers of the dialect's discardable attributes use the full Operation.
#include "mlir/IR/Operation.h"

#include "dialect/CollDialect.h.inc"

#endif // COLLC_DIALECT_COLLDIALECT_H
