//===- collc-opt.cpp - mlir-opt for the coll dialect and its passes -------===//
//
// MlirOptMain's own driver, but the input is read here first, so that a
// file nested deeper than MLIR's recursive parser can take is refused with
// an error instead of overflowing the stack.
//
//===----------------------------------------------------------------------===//
#include "dialect/CollDialect.h"
#include "lib/Analysis/Passes.h"
#include "lib/Lowering/Passes.h"
#include "lib/Lowering/Pipelines.h"
#include "lib/Support/Nesting.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::DialectRegistry registry;
  registry.insert<coll::CollDialect>();
  coll::registerCollAnalysisPasses();
  coll::registerCollLoweringPasses();
  coll::registerCollPipelines();
  auto [inputFilename, outputFilename] =
      mlir::registerAndParseCLIOptions(argc, argv, "collc optimizer driver\n", registry);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(llvm::outs(), llvm::MemoryBuffer::getMemBuffer(""), registry, config));

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file = mlir::openInputFile(inputFilename, &error);
  if (!file) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (std::optional<size_t> at = coll::findNestingPast(file->getBuffer())) {
    llvm::SourceMgr sources;
    sources.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBuffer(file->getMemBufferRef()),
                               llvm::SMLoc());
    auto [line, col] =
        sources.getLineAndColumn(llvm::SMLoc::getFromPointer(file->getBufferStart() + *at));
    llvm::errs() << file->getBufferIdentifier() << ":" << line << ":" << col
                 << ": error: " << coll::nestingMessage() << "\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output = mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (mlir::failed(mlir::MlirOptMain(output->os(), std::move(file), registry, config)))
    return 1;
  output->keep();
  return 0;
}
