//===- ByteCount.h - Sizes and counts as users write them -----------------===//
//
// "1073741824", "64K", "1.5M", "1GiB", "8B": a number and an optional unit,
// K, M, G or T (powers of 1024, any case, "i" and "B" optional). The one
// grammar of every size and count flag: collc's (--message-size, --sizes,
// --size, --count), collc-launch's --count and collc-perf's -b, -e and -i.
// Header-only and without LLVM, so that the launcher and the benchmark,
// which do not link LLVM, read what collc reads.
//
//===----------------------------------------------------------------------===//
#ifndef COLLRT_BYTECOUNT_H
#define COLLRT_BYTECOUNT_H

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace collrt {

/// The value of `text` (blanks around it ignored), or nothing if it is not
/// a number with an optional unit.
inline std::optional<double> parseByteCount(std::string_view text) {
  while (!text.empty() && std::isspace((unsigned char)text.front()))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace((unsigned char)text.back()))
    text.remove_suffix(1);
  size_t digits = 0, points = 0;
  for (; digits < text.size(); ++digits) {
    char c = text[digits];
    if (c == '.')
      ++points;
    else if (!std::isdigit((unsigned char)c))
      break;
  }
  if (digits == points || points > 1)
    return std::nullopt;
  double value = std::strtod(std::string(text.substr(0, digits)).c_str(), nullptr);
  std::string unit;
  for (char c : text.substr(digits))
    unit += char(std::tolower((unsigned char)c));
  if (!unit.empty() && unit.back() == 'b')
    unit.pop_back();
  if (unit.size() == 2 && unit[1] == 'i')
    unit.pop_back();
  const char *units[] = {"", "k", "m", "g", "t"};
  for (int i = 0; i < 5; ++i)
    if (unit == units[i])
      return value * std::pow(1024.0, i);
  return std::nullopt;
}

/// A whole number of bytes or elements in 0 .. max, as parseByteCount
/// reads it: "1M" is 1048576, "1.5K" 1536, "0.3K" nothing.
inline std::optional<int64_t> parseWholeCount(std::string_view text, int64_t max = INT64_MAX) {
  // Digits alone are read exactly: a double holds 53 bits of 63.
  std::string digits(text);
  char *end = nullptr;
  errno = 0;
  if (!digits.empty() && std::isdigit((unsigned char)digits.front())) {
    unsigned long long n = std::strtoull(digits.c_str(), &end, 10);
    if (!*end)
      return errno || n > (unsigned long long)max ? std::nullopt : std::optional<int64_t>(n);
  }
  std::optional<double> v = parseByteCount(text);
  // 2^63 is the first double past INT64_MAX.
  if (!v || *v != std::floor(*v) || *v >= 9223372036854775808.0 || *v > double(max))
    return std::nullopt;
  return int64_t(*v);
}

} // namespace collrt

#endif // COLLRT_BYTECOUNT_H
