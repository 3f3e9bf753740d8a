//===- CollAttrs.cpp - Attributes of the coll dialect ---------------------===//
#include "dialect/CollOps.h"

#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace coll;

//===----------------------------------------------------------------------===//
// ChunkAttr
//===----------------------------------------------------------------------===//

void ChunkAttr::printBody(AsmPrinter &printer) const {
  printer.printKeywordOrString(getBuffer().getValue());
  printer << '[' << getRank() << "][" << getIndex();
  if (getCount() != 1)
    printer << ':' << getEnd();
  printer << ']';
}

FailureOr<ChunkAttr> ChunkAttr::parseBody(AsmParser &parser) {
  std::string buffer;
  int64_t rank, index, end;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeywordOrString(&buffer) || parser.parseLSquare() || parser.parseInteger(rank) ||
      parser.parseRSquare() || parser.parseLSquare() || parser.parseInteger(index))
    return failure();
  bool range = succeeded(parser.parseOptionalColon());
  if ((range && parser.parseInteger(end)) || parser.parseRSquare())
    return failure();
  if (!range && index == INT64_MAX)
    return parser.emitError(loc, "chunk index is out of range");
  if (!range)
    end = index + 1;
  if (end <= index)
    return parser.emitError(loc, "chunk range must not be empty");
  int64_t count;
  if (__builtin_sub_overflow(end, index, &count))
    return parser.emitError(loc, "chunk range is too long: its end is out of range");
  return ChunkAttr::get(parser.getContext(), StringAttr::get(parser.getContext(), buffer), rank,
                        index, count);
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

//===----------------------------------------------------------------------===//
// LaunchAttr
//===----------------------------------------------------------------------===//

Attribute LaunchAttr::parse(AsmParser &parser, Type) {
  SmallVector<LaunchRange> ranges;
  auto range = [&]() -> ParseResult {
    LaunchRange r;
    if (parser.parseInteger(r.minBytes) || parser.parseColon() || parser.parseInteger(r.replicas) ||
        parser.parseKeyword("x") || parser.parseInteger(r.threads))
      return failure();
    ranges.push_back(r);
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::LessGreater, range))
    return {};
  return LaunchAttr::get(parser.getContext(), ranges);
}

void LaunchAttr::print(AsmPrinter &printer) const {
  printer << '<';
  llvm::interleaveComma(getRanges(), printer, [&](const LaunchRange &r) {
    printer << r.minBytes << ": " << r.replicas << " x " << r.threads;
  });
  printer << '>';
}
