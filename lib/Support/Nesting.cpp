//===- Nesting.cpp - How deeply a textual IR file nests -------------------===//
#include "lib/Support/Nesting.h"

using namespace llvm;

std::optional<size_t> coll::findNestingPast(StringRef text, unsigned limit) {
  if (text.starts_with("ML\xEFR"))
    return std::nullopt;
  // A scan of a lexer's precision: an unmatched or stray closer (`>=` in an
  // integer set) only lowers the count, so valid input is never refused.
  unsigned depth = 0;
  for (size_t i = 0, n = text.size(); i < n; ++i) {
    switch (text[i]) {
    case '"':
      for (++i; i < n && text[i] != '"' && text[i] != '\n'; ++i)
        if (text[i] == '\\')
          ++i;
      break;
    case '/':
      if (i + 1 < n && text[i + 1] == '/')
        i = std::min(text.find('\n', i), n);
      break;
    case '(':
    case '[':
    case '{':
    case '<':
      if (++depth > limit)
        return i;
      break;
    case '>':
      if (i > 0 && text[i - 1] == '-')
        break; // the arrow of a function type
      [[fallthrough]];
    case ')':
    case ']':
    case '}':
      if (depth > 0)
        --depth;
      break;
    default:
      break;
    }
  }
  return std::nullopt;
}

std::string coll::nestingMessage(unsigned limit) {
  return "the input is nested more than " + std::to_string(limit) +
         " levels deep (brackets, regions, attributes and types together)";
}
