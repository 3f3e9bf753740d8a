//===- Names.h - Naming one of a fixed set of names, or saying why not ----===//
//
// Every flag that takes one of a fixed set of names (--emit, --protocol,
// --topology's presets, --dtype, --op, subcommands) refuses a wrong one in
// the same words: it lists the names and suggests the closest, as a typo
// of one is the usual cause.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_SUPPORT_NAMES_H
#define COLLC_SUPPORT_NAMES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <string>

namespace coll {

/// "; did you mean 'x'?" for the known name closest to a misspelled `word`,
/// or nothing when none is close.
std::string didYouMean(llvm::StringRef word, llvm::ArrayRef<llvm::StringRef> known);

/// "a, b or c".
std::string joinNames(llvm::ArrayRef<llvm::StringRef> names);

/// "unknown <what> 'word'; did you mean 'b'? expected a, b or c", without
/// the question when no name is close.
std::string unknownName(llvm::StringRef what, llvm::StringRef word,
                        llvm::ArrayRef<llvm::StringRef> names);

/// llvm::cl's parser of a `cl::values` option, which refuses an unknown
/// value with unknownName's words rather than "Cannot find option named".
template <typename T> class NameParser : public llvm::cl::parser<T> {
public:
  using llvm::cl::parser<T>::parser;

  /// Returns true on error, as llvm::cl's parsers do.
  bool parse(llvm::cl::Option &o, llvm::StringRef, llvm::StringRef arg, T &value) {
    llvm::SmallVector<llvm::StringRef> names;
    for (const auto &info : this->Values) {
      if (info.Name == arg) {
        value = info.V.getValue();
        return false;
      }
      names.push_back(info.Name);
    }
    return o.error(unknownName("value", arg, names));
  }
};

} // namespace coll

#endif // COLLC_SUPPORT_NAMES_H
