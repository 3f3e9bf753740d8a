//===- Kernel.h - Plans as CUDA/host C++ and a C header -------------------===//
#ifndef COLLC_TARGET_KERNEL_H
#define COLLC_TARGET_KERNEL_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace llvm {
class raw_ostream;
}

namespace coll {

/// Writes every plan of `module` as C++ that nvcc compiles into CUDA kernels
/// and g++ into the host emulation: a device function per coll.shape whose
/// runs are loops of calls to the primitives of runtime/device, each
/// threadblock's table of operands, the plan tables the runtime registers,
/// and an entry point per algorithm.
mlir::LogicalResult writeKernels(mlir::ModuleOp module, llvm::StringRef source,
                                 llvm::raw_ostream &os);

/// Writes the C header that declares the entry points and descriptors of
/// writeKernels.
mlir::LogicalResult writeKernelHeader(mlir::ModuleOp module, llvm::StringRef source,
                                      llvm::raw_ostream &os);

} // namespace coll

#endif // COLLC_TARGET_KERNEL_H
