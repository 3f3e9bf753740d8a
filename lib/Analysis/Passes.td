//===- Passes.td - Analysis passes of collc --------------------*- tablegen -*-===//
#ifndef COLL_ANALYSIS_PASSES
#define COLL_ANALYSIS_PASSES

include "mlir/Pass/PassBase.td"

def CollVerifyPass : Pass<"coll-verify", "::coll::AlgorithmOp"> {
  let summary = "Prove that each algorithm implements its declared collective";
  let description = [{
    Executes a `coll.algorithm` symbolically over all ranks' buffers and
    checks the postcondition of its collective (LANGUAGE.md). Fails at the
    statement that reads an unwritten chunk, writes a read-only `in`, mixes
    input chunks or counts a rank twice, and at the algorithm when an output
    chunk ends wrong, naming the rank, buffer and chunk.
  }];
  let dependentDialects = ["::coll::CollDialect"];
}

#endif // COLL_ANALYSIS_PASSES
