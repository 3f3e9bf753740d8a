//===- MscclXml.h - Plans as MSCCL-IR XML ---------------------------------===//
#ifndef COLLC_TARGET_MSCCLXML_H
#define COLLC_TARGET_MSCCLXML_H

#include "mlir/Support/LLVM.h"

namespace llvm {
class raw_ostream;
}

namespace coll {

class PlanOp;

/// Writes `plan` in the XML that microsoft/msccl (and RCCL) load: <algo>,
/// <gpu>, <tb>, <step> with s/r/rcs/rrs/rrc/rrcs/cpy/re/nop. Steps with
/// several deps get nop steps in front, since an MSCCL step names one.
mlir::LogicalResult writeMscclXml(PlanOp plan, llvm::raw_ostream &os);

} // namespace coll

#endif // COLLC_TARGET_MSCCLXML_H
