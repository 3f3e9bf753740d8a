//===- Multicast.cpp - Whether multimem steps use NVLink multicast --------===//
#include "src/Multicast.h"

#include "collc/multimem.h"
#include "collrt.h"

using namespace collrt;

namespace {
const char *typeName(int32_t t) {
  static const char *names[] = {"int8",    "uint8",    "int32",      "uint32",
                                "int64",   "uint64",   "float16",    "float32",
                                "float64", "bfloat16", "float8e4m3", "float8e5m2"};
  return t >= 0 && t < collNumTypes ? names[t] : "?";
}
const char *opName(int32_t op) {
  static const char *names[] = {"sum", "prod", "max", "min", "avg"};
  return op >= 0 && op < collNumOps ? names[op] : "?";
}
} // namespace

std::string collrt::unicastReason(bool multicast, int32_t type, int32_t op, bool reduces) {
  if (!multicast)
    return "no NVLink multicast here";
  if (reduces && !collc::multimemReduces(type, op))
    return std::string("multimem has no ") + opName(op) + " of " + typeName(type);
  return "";
}
