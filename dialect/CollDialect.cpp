//===- CollDialect.cpp - The coll dialect ---------------------------------===//
#include "dialect/CollDialect.h"
#include "dialect/CollOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace coll;

#include "dialect/CollDialect.cpp.inc"
#include "dialect/CollEnums.cpp.inc"

/// A field's chunk count: a number (0 for a peer), or `?` (kTableCount)
/// where the table holds it.
static ParseResult parseChunkCount(AsmParser &parser, int64_t &count) {
  if (succeeded(parser.parseOptionalQuestion())) {
    count = kTableCount;
    return success();
  }
  SMLoc at = parser.getCurrentLocation();
  if (parser.parseInteger(count))
    return failure();
  if (count < 0)
    return parser.emitError(at, "a chunk count is at least 0, or ?");
  return success();
}

static void printChunkCount(AsmPrinter &printer, int64_t count) {
  if (count == kTableCount)
    printer << "?";
  else
    printer << count;
}

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
