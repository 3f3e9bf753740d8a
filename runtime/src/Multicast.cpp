//===- Multicast.cpp - Whether multimem steps use NVLink multicast --------===//
#include "src/Multicast.h"

#include "collc/multimem.h"
#include "collrt.h"
#include "support/Names.h"

using namespace collrt;

std::string collrt::unicastReason(bool multicast, int32_t type, int32_t op, bool reduces) {
  if (!multicast)
    return "no NVLink multicast here";
  if (reduces && !collc::multimemReduces(type, op))
    return std::string("multimem has no ") + opName(op) + " of " + typeName(type);
  return "";
}
