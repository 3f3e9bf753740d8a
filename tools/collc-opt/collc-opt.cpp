//===- collc-opt.cpp - mlir-opt for the coll dialect and its passes -------===//
#include "dialect/CollDialect.h"
#include "lib/Analysis/Passes.h"
#include "lib/Lowering/Passes.h"
#include "lib/Lowering/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<coll::CollDialect>();
  coll::registerCollAnalysisPasses();
  coll::registerCollLoweringPasses();
  coll::registerCollPipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "collc optimizer driver\n", registry));
}
