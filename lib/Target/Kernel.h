//===- Kernel.h - Plans as CUDA/host C++ and a C header -------------------===//
#ifndef COLLC_TARGET_KERNEL_H
#define COLLC_TARGET_KERNEL_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace llvm {
class raw_ostream;
}

namespace coll {

/// A (type, op) whose launches get a kernel of their own, its arithmetic
/// inlined: collrt.h's enumerators and the name the kernel ends with.
struct TypedPair {
  llvm::StringRef typeName, opName; // collFloat32, collSum
  std::string suffix;               // float32_sum
};
/// What reducing plans get by default: fp32, fp16 and bf16 sums, what
/// training reduces (avg runs the sum's kernel).
llvm::SmallVector<TypedPair> defaultTypedPairs();
/// Pairs from "float32:sum,bfloat16:max" (collrt's names; avg is sum), or
/// none from "none"; on failure `error` names the entry.
mlir::FailureOr<llvm::SmallVector<TypedPair>> parseTypedPairs(llvm::StringRef spec,
                                                              std::string &error);

/// Writes every plan of `module` as C++ that nvcc compiles into CUDA kernels
/// and g++ into the host emulation: a device function per coll.shape whose
/// runs are loops of calls to the primitives of runtime/device, each
/// threadblock's table of operands, the plan tables the runtime registers,
/// and an entry point per algorithm.
/// Plans that reduce also get a kernel per pair of `typed`.
mlir::LogicalResult writeKernels(mlir::ModuleOp module, llvm::StringRef source,
                                 llvm::raw_ostream &os,
                                 llvm::ArrayRef<TypedPair> typed = defaultTypedPairs());

/// Writes the C header that declares the entry points and descriptors of
/// writeKernels.
mlir::LogicalResult writeKernelHeader(mlir::ModuleOp module, llvm::StringRef source,
                                      llvm::raw_ostream &os);

} // namespace coll

#endif // COLLC_TARGET_KERNEL_H
