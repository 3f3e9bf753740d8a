//===- Passes.h - Lowering passes of collc --------------------------------===//
#ifndef COLLC_LOWERING_PASSES_H
#define COLLC_LOWERING_PASSES_H

#include "dialect/CollDialect.h"
#include "lib/Lowering/ProtocolOption.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace coll {

#define GEN_PASS_DECL
#include "lib/Lowering/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lib/Lowering/Passes.h.inc"

} // namespace coll

#endif // COLLC_LOWERING_PASSES_H
