//===- CollDialect.cpp - The coll dialect ---------------------------------===//
#include "dialect/CollDialect.h"
#include "dialect/CollOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace coll;

#include "dialect/CollDialect.cpp.inc"
#include "dialect/CollEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/CollAttrs.cpp.inc"

void CollDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/CollAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialect/CollOps.cpp.inc"
      >();
}
