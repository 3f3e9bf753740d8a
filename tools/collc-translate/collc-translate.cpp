//===- collc-translate.cpp - mlir-translate for coll plans ----------------===//
//
// Prints plan IR (what `collc --emit=plan` writes, or a hand-written plan)
// as collc's targets do: --coll-to-cuda for the kernels, --coll-to-header
// for their C header.
//
//===----------------------------------------------------------------------===//

#include "dialect/CollDialect.h"
#include "lib/Target/Kernel.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"

using namespace mlir;

namespace {

using KernelWriter = LogicalResult (*)(ModuleOp, StringRef, raw_ostream &);

/// Runs `write` on a module of plans. The generated comments and tables
/// name the input file as their source.
LogicalResult translate(Operation *op, raw_ostream &os, KernelWriter write) {
  auto module = llvm::dyn_cast<ModuleOp>(op);
  if (!module)
    return op->emitError("expected a builtin.module of coll.plan ops");
  StringRef source = "<unknown>";
  if (auto file = module.getLoc()->findInstanceOf<FileLineColLoc>())
    source = file.getFilename().getValue();
  return write(module, source, os);
}

void registerCollTranslations() {
  auto dialects = [](DialectRegistry &registry) { registry.insert<coll::CollDialect>(); };
  static TranslateFromMLIRRegistration toCuda(
      "coll-to-cuda", "Print coll plans as C++ for nvcc and the host emulation",
      [](Operation *op, raw_ostream &os) { return translate(op, os, coll::writeKernels); },
      dialects);
  static TranslateFromMLIRRegistration toHeader(
      "coll-to-header", "Print the C header declaring the entry points of coll-to-cuda",
      [](Operation *op, raw_ostream &os) { return translate(op, os, coll::writeKernelHeader); },
      dialects);
}

} // namespace

int main(int argc, char **argv) {
  registerCollTranslations();
  return failed(mlirTranslateMain(argc, argv, "collc translation driver"));
}
