//===- NameAlgorithms.cpp - Algorithms take the names asked for -----------===//
//
// After this pass every plan's algorithm is the given name (one algorithm in
// the module) or the name, an underscore and its old name (several), and each
// plan's name starts with its algorithm's: the symbols the emitters derive
// from them differ between two compiles of one file given different names.
//
//===----------------------------------------------------------------------===//

#include "dialect/CollOps.h"
#include "lib/Lowering/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"

namespace coll {
#define GEN_PASS_DEF_COLLNAMEALGORITHMSPASS
#include "lib/Lowering/Passes.h.inc"
} // namespace coll

using namespace mlir;
using namespace coll;

namespace {

bool isCIdentifier(StringRef name) {
  return !name.empty() && !llvm::isDigit(name.front()) &&
         llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

struct CollNameAlgorithmsPass : coll::impl::CollNameAlgorithmsPassBase<CollNameAlgorithmsPass> {
  using CollNameAlgorithmsPassBase::CollNameAlgorithmsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!isCIdentifier(name)) {
      module.emitError("algorithm name '") << name << "' is not a C identifier";
      return signalPassFailure();
    }
    // Old algorithm name -> new, in the order of the module's plans.
    llvm::MapVector<StringRef, std::string> renamed;
    for (auto plan : module.getOps<PlanOp>())
      renamed.insert({plan.getAlgorithm().value_or(plan.getSymName()), ""});
    for (auto &[old, now] : renamed)
      now = renamed.size() == 1 ? name.getValue() : name + "_" + old.str();
    Builder builder(module.getContext());
    for (auto plan : module.getOps<PlanOp>()) {
      StringRef plain = plan.getSymName();
      StringRef old = plan.getAlgorithm().value_or(plain);
      const std::string &now = renamed.lookup(old);
      StringRef suffix = plain;
      std::string symbol = suffix.consume_front(old) ? now + suffix.str() : now + "_" + plain.str();
      plan.setAlgorithmAttr(builder.getStringAttr(now));
      plan.setSymName(symbol);
    }
  }
};

} // namespace
