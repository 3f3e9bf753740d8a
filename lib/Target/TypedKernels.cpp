//===- TypedKernels.cpp - Which (type, op) pairs get kernels of their own -===//
//
// A kernel compiled for one (type, op) inlines its arithmetic in every loop
// of the device primitives; the kernel for any pair chooses per word. Each
// pair costs a kernel's compile time, so plans get the pairs asked for.
//
//===----------------------------------------------------------------------===//

#include "lib/Target/Kernel.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

using namespace mlir;
using namespace coll;

namespace {
/// collrt's names (runtime/support/Names.h) and collrt.h's enumerators, in
/// collDataType_t's and collRedOp_t's order.
struct Name {
  const char *spelled, *enumerator;
};
constexpr Name kTypes[] = {
    {"int8", "collInt8"},
    {"uint8", "collUint8"},
    {"int32", "collInt32"},
    {"uint32", "collUint32"},
    {"int64", "collInt64"},
    {"uint64", "collUint64"},
    {"float16", "collFloat16"},
    {"float32", "collFloat32"},
    {"float64", "collFloat64"},
    {"bfloat16", "collBfloat16"},
    {"float8e4m3", "collFloat8e4m3"},
    {"float8e5m2", "collFloat8e5m2"},
};
constexpr Name kOps[] = {
    {"sum", "collSum"}, {"prod", "collProd"}, {"max", "collMax"}, {"min", "collMin"}};

const Name *named(ArrayRef<Name> names, StringRef spelled) {
  for (const Name &n : names)
    if (spelled == n.spelled)
      return &n;
  return nullptr;
}
TypedPair pair(const Name &type, const Name &op) {
  return {type.enumerator, op.enumerator, std::string(type.spelled) + "_" + op.spelled};
}
} // namespace

SmallVector<TypedPair> coll::defaultTypedPairs() {
  return {pair(kTypes[7], kOps[0]), pair(kTypes[6], kOps[0]), pair(kTypes[9], kOps[0])};
}

FailureOr<SmallVector<TypedPair>> coll::parseTypedPairs(StringRef spec, std::string &error) {
  SmallVector<TypedPair> pairs;
  if (spec == "none")
    return pairs;
  SmallVector<StringRef> entries;
  spec.split(entries, ',', -1, false);
  for (StringRef entry : entries) {
    auto [type, op] = entry.split(':');
    const Name *t = named(kTypes, type.trim());
    const Name *o = named(kOps, op.trim() == "avg" ? StringRef("sum") : op.trim());
    if (!t || !o) {
      error = ("'" + entry +
               "' is not TYPE:OP (types int8 ... float8e5m2 as collrt names "
               "them; ops sum, prod, max, min, avg)")
                  .str();
      return failure();
    }
    if (llvm::none_of(pairs, [&](const TypedPair &p) {
          return p.typeName == t->enumerator && p.opName == o->enumerator;
        }))
      pairs.push_back(pair(*t, *o));
  }
  if (pairs.empty()) {
    error = "no TYPE:OP pair given (\"none\" for none)";
    return failure();
  }
  return pairs;
}
