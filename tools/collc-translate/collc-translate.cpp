//===- collc-translate.cpp - mlir-translate for coll plans ----------------===//
//
// Prints plan IR (what `collc --emit=plan` writes, or a hand-written plan)
// as collc's targets do: --coll-to-cuda for the kernels, --coll-to-header
// for their C header. It parses the input itself, after refusing a file
// nested deeper than MLIR's recursive parser can take.
//
//===----------------------------------------------------------------------===//

#include "dialect/CollDialect.h"
#include "lib/Support/Nesting.h"
#include "lib/Target/Kernel.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Tools/ParseUtilities.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace coll;

namespace {

using KernelWriter = LogicalResult (*)(ModuleOp, StringRef, raw_ostream &);

/// Parses the module of plans in `sources` and runs `write` on it. The
/// generated comments and tables name the input file as their source.
LogicalResult translate(const std::shared_ptr<llvm::SourceMgr> &sources, raw_ostream &os,
                        MLIRContext *context, KernelWriter write) {
  const llvm::MemoryBuffer *text = sources->getMemoryBuffer(sources->getMainFileID());
  if (std::optional<size_t> at = findNestingPast(text->getBuffer())) {
    auto [line, col] =
        sources->getLineAndColumn(llvm::SMLoc::getFromPointer(text->getBufferStart() + *at));
    return emitError(FileLineColLoc::get(context, text->getBufferIdentifier(), line, col))
           << nestingMessage();
  }
  context->loadDialect<CollDialect>();
  OwningOpRef<Operation *> op =
      parseSourceFileForTool(sources, ParserConfig(context), /*insertImplicitModule=*/true);
  if (!op || failed(verify(*op)))
    return failure();
  auto module = llvm::dyn_cast<ModuleOp>(*op);
  if (!module)
    return op->emitError("expected a builtin.module of coll.plan ops");
  StringRef source = "<unknown>";
  if (auto file = module.getLoc()->findInstanceOf<FileLineColLoc>())
    source = file.getFilename().getValue();
  return write(module, source, os);
}

void registerCollTranslations() {
  static TranslateRegistration toCuda(
      "coll-to-cuda", "Print coll plans as C++ for nvcc and the host emulation",
      [](const std::shared_ptr<llvm::SourceMgr> &sources, raw_ostream &os, MLIRContext *context) {
        return translate(sources, os, context, [](ModuleOp m, StringRef s, raw_ostream &o) {
          return writeKernels(m, s, o);
        });
      });
  static TranslateRegistration toHeader(
      "coll-to-header", "Print the C header declaring the entry points of coll-to-cuda",
      [](const std::shared_ptr<llvm::SourceMgr> &sources, raw_ostream &os, MLIRContext *context) {
        return translate(sources, os, context, writeKernelHeader);
      });
}

} // namespace

int main(int argc, char **argv) {
  registerCollTranslations();
  return failed(mlirTranslateMain(argc, argv, "collc translation driver"));
}
