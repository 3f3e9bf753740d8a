//===- CollDialect.h - The coll dialect -----------------------------------===//
#ifndef COLLC_DIALECT_COLLDIALECT_H
#define COLLC_DIALECT_COLLDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialect/CollDialect.h.inc"

#endif // COLLC_DIALECT_COLLDIALECT_H
