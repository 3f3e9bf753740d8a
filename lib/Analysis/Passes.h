//===- Passes.h - Analysis passes of collc --------------------------------===//
#ifndef COLLC_ANALYSIS_PASSES_H
#define COLLC_ANALYSIS_PASSES_H

#include "dialect/CollDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace coll {

#define GEN_PASS_DECL
#include "lib/Analysis/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lib/Analysis/Passes.h.inc"

} // namespace coll

#endif // COLLC_ANALYSIS_PASSES_H
