//===- Bytes.cpp - Message sizes as users write and read them -------------===//
#include "lib/Support/Bytes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

std::optional<double> coll::parseBytes(llvm::StringRef text) {
  text = text.trim();
  llvm::StringRef digits = text.take_while([](char c) { return llvm::isDigit(c) || c == '.'; });
  double value;
  if (digits.empty() || digits.getAsDouble(value))
    return std::nullopt;
  std::string u = text.drop_front(digits.size()).lower();
  if (!u.empty() && u.back() == 'b')
    u.pop_back();
  if (u.size() == 2 && u[1] == 'i')
    u.pop_back();
  const char *units[] = {"", "k", "m", "g", "t"};
  for (int i = 0; i < 5; ++i)
    if (u == units[i])
      return value * std::pow(1024.0, i);
  return std::nullopt;
}

std::string coll::formatBytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && bytes >= 1024) {
    bytes /= 1024;
    ++u;
  }
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%g", bytes) << " " << units[u];
  return s;
}
