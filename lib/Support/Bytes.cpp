//===- Bytes.cpp - Message sizes as users write and read them -------------===//
#include "lib/Support/Bytes.h"

#include "runtime/support/ByteCount.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

std::optional<double> coll::parseBytes(llvm::StringRef text) {
  return collrt::parseByteCount(std::string_view(text.data(), text.size()));
}

std::optional<int64_t> coll::parseCount(llvm::StringRef text, int64_t max) {
  return collrt::parseWholeCount(std::string_view(text.data(), text.size()), max);
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
