//===- ProtocolOption.h - A protocol as a command-line or pass option -----===//
//
// `--protocol=Simple|LL|LL128` for collc, coll-lower and coll-select-protocol,
// parsed into `std::optional<coll::Protocol>` with the spellings of the
// dialect's enum; an empty value forces none. One parser, so that a bad name
// gets the same error everywhere and the pipeline prints back as it was read.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_LOWERING_PROTOCOLOPTION_H
#define COLLC_LOWERING_PROTOCOLOPTION_H

#include "dialect/CollOps.h"
#include "lib/Support/Names.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CommandLine.h"

#include <optional>

namespace llvm::cl {

template <>
struct OptionValue<std::optional<coll::Protocol>> final
    : OptionValueCopy<std::optional<coll::Protocol>> {
  using WrapperType = std::optional<coll::Protocol>;

  OptionValue() = default;
  OptionValue(const std::optional<coll::Protocol> &v) { setValue(v); }
  OptionValue &operator=(const std::optional<coll::Protocol> &v) {
    setValue(v);
    return *this;
  }
};

template <> class parser<std::optional<coll::Protocol>> : public generic_parser_base {
public:
  using parser_data_type = std::optional<coll::Protocol>;

  struct OptionInfo : GenericOptionInfo {
    OptionInfo(StringRef name, parser_data_type v, StringRef help)
        : GenericOptionInfo(name, help), V(v) {}
    OptionValue<parser_data_type> V;
  };
  /// The empty name, then every protocol of the dialect.
  SmallVector<OptionInfo, 4> Values;

  parser(Option &o) : generic_parser_base(o) {
    Values.emplace_back("", std::nullopt, "choose per message-size range");
    for (unsigned i = 0; i <= coll::getMaxEnumValForProtocol(); ++i)
      if (std::optional<coll::Protocol> p = coll::symbolizeProtocol(i))
        Values.emplace_back(coll::stringifyProtocol(*p), p, "");
  }

  unsigned getNumOptions() const override { return Values.size(); }
  StringRef getOption(unsigned n) const override { return Values[n].Name; }
  StringRef getDescription(unsigned n) const override { return Values[n].HelpStr; }
  const GenericOptionValue &getOptionValue(unsigned n) const override { return Values[n].V; }

  /// Returns true on error, as llvm::cl's parsers do.
  bool parse(Option &o, StringRef, StringRef arg, parser_data_type &value) {
    for (const OptionInfo &info : Values)
      if (info.Name == arg) {
        value = info.V.getValue();
        return false;
      }
    SmallVector<StringRef> names;
    for (const OptionInfo &info : llvm::drop_begin(Values))
      names.push_back(info.Name);
    return o.error(coll::unknownName("protocol", arg, names));
  }

  void printOptionDiff(const Option &o, const parser_data_type &value,
                       const OptionValue<parser_data_type> &defaultValue,
                       size_t globalWidth) const {
    printGenericOptionDiff(o, OptionValue<parser_data_type>(value), defaultValue, globalWidth);
  }
};

} // namespace llvm::cl

#endif // COLLC_LOWERING_PROTOCOLOPTION_H
