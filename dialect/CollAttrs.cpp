//===- CollAttrs.cpp - Attributes of the coll dialect ---------------------===//
#include "dialect/CollOps.h"

#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace coll;

//===----------------------------------------------------------------------===//
// ChunkAttr
//===----------------------------------------------------------------------===//

void ChunkAttr::printBody(AsmPrinter &printer) const {
  printer << getBuffer().getValue() << '[' << getRank() << "][" << getIndex();
  if (getCount() != 1)
    printer << ':' << getEnd();
  printer << ']';
}

FailureOr<ChunkAttr> ChunkAttr::parseBody(AsmParser &parser) {
  std::string buffer;
  int64_t rank, index, end;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeywordOrString(&buffer) || parser.parseLSquare() ||
      parser.parseInteger(rank) || parser.parseRSquare() ||
      parser.parseLSquare() || parser.parseInteger(index))
    return failure();
  end = index + 1;
  if (succeeded(parser.parseOptionalColon()) && parser.parseInteger(end))
    return failure();
  if (parser.parseRSquare())
    return failure();
  if (end <= index)
    return parser.emitError(loc, "chunk range must not be empty");
  return ChunkAttr::get(parser.getContext(),
                        StringAttr::get(parser.getContext(), buffer), rank,
                        index, end - index);
}

Attribute ChunkAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  FailureOr<ChunkAttr> attr = parseBody(parser);
  if (failed(attr) || parser.parseGreater())
    return {};
  return *attr;
}

void ChunkAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printBody(printer);
  printer << '>';
}
