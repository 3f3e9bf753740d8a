//===- Names.cpp - Naming one of a fixed set of names, or saying why not --===//
#include "lib/Support/Names.h"

#include <algorithm>

std::string coll::didYouMean(llvm::StringRef word, llvm::ArrayRef<llvm::StringRef> known) {
  // Close: two edits (a swap of letters), or a third of a long word, and
  // never all of a short one.
  if (word.empty())
    return "";
  unsigned best = std::min<unsigned>(std::max<size_t>(2, word.size() / 3), word.size() - 1) + 1;
  llvm::StringRef closest;
  for (llvm::StringRef name : known) {
    unsigned d = word.edit_distance_insensitive(name, true, best);
    if (d < best) {
      best = d;
      closest = name;
    }
  }
  return closest.empty() ? "" : ("; did you mean '" + closest + "'?").str();
}

std::string coll::joinNames(llvm::ArrayRef<llvm::StringRef> names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i)
    text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i].str();
  return text;
}

std::string coll::unknownName(llvm::StringRef what, llvm::StringRef word,
                              llvm::ArrayRef<llvm::StringRef> names) {
  std::string hint = didYouMean(word, names);
  return "unknown " + what.str() + " '" + word.str() + "'" + (hint.empty() ? "; " : hint + " ") +
         "expected " + joinNames(names);
}
