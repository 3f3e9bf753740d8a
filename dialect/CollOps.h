//===- CollOps.h - Attributes and operations of the coll dialect ----------===//
#ifndef COLLC_DIALECT_COLLOPS_H
#define COLLC_DIALECT_COLLOPS_H

#include "dialect/CollDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"

#include "dialect/CollEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/CollAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialect/CollOps.h.inc"

#endif // COLLC_DIALECT_COLLOPS_H
