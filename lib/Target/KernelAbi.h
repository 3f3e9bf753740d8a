//===- KernelAbi.h - What the kernel emitter shares with the runtime ------===//
//
// The emitted C++ names the runtime's enumerators and fills its tables
// (runtime/device/collc/abi.h); this header ties the dialect to them, so that
// a change on either side that the other does not follow fails to compile.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TARGET_KERNELABI_H
#define COLLC_TARGET_KERNELABI_H

#include "dialect/CollOps.h"
#include "runtime/device/collc/abi.h"

#include "mlir/Support/IndentedOstream.h"
#include "llvm/ADT/StringExtras.h"

#include <cstdio>
#include <string>

namespace coll {

/// A value of a dialect enum, abi.h's enumerator for it and that
/// enumerator's spelling in generated code.
template <typename DialectEnum, typename AbiEnum> struct AbiEnumerator {
  DialectEnum dialect;
  AbiEnum abi;
  const char *name;
};

// Spells the enumerator from its identifier: one that abi.h lacks does not
// compile.
#define COLLC_ABI_ENUMERATOR(DIALECT, ABI) {DIALECT, collc::ABI, #ABI}

inline constexpr AbiEnumerator<Collective, collc::Collective> kAbiCollectives[] = {
    COLLC_ABI_ENUMERATOR(Collective::allreduce, kAllReduce),
    COLLC_ABI_ENUMERATOR(Collective::reducescatter, kReduceScatter),
    COLLC_ABI_ENUMERATOR(Collective::allgather, kAllGather),
    COLLC_ABI_ENUMERATOR(Collective::alltoall, kAllToAll),
    COLLC_ABI_ENUMERATOR(Collective::broadcast, kBroadcast),
    COLLC_ABI_ENUMERATOR(Collective::reduce, kReduce),
};

inline constexpr AbiEnumerator<Protocol, collc::Protocol> kAbiProtocols[] = {
    COLLC_ABI_ENUMERATOR(Protocol::Simple, kSimple),
    COLLC_ABI_ENUMERATOR(Protocol::LL, kLL),
    COLLC_ABI_ENUMERATOR(Protocol::LL128, kLL128),
};

#undef COLLC_ABI_ENUMERATOR

/// Whether entry i of `table` maps dialect value i to abi.h's value i, for
/// every value of the dialect enum up to `maxValue`.
template <typename Entry, size_t N>
constexpr bool matchesAbi(const Entry (&table)[N], unsigned maxValue) {
  if (N != size_t(maxValue) + 1)
    return false;
  for (size_t i = 0; i < N; ++i)
    if (size_t(table[i].dialect) != i || size_t(table[i].abi) != i)
      return false;
  return true;
}
static_assert(matchesAbi(kAbiCollectives, getMaxEnumValForCollective()),
              "coll::Collective and collc::Collective (abi.h) differ");
static_assert(matchesAbi(kAbiProtocols, getMaxEnumValForProtocol()),
              "coll::Protocol and collc::Protocol (abi.h) differ");

/// abi.h's name of a collective or protocol: `kAllReduce`, `kLL`.
inline llvm::StringRef abiName(Collective c) { return kAbiCollectives[size_t(c)].name; }
inline llvm::StringRef abiName(Protocol p) { return kAbiProtocols[size_t(p)].name; }

/// The algorithm `plan` is a variant of (coll-select-protocol records it); a
/// plan that is no variant is an algorithm of its own.
inline llvm::StringRef algorithmOf(PlanOp plan) {
  return plan.getAlgorithm().value_or(plan.getSymName());
}

/// Whether the plan says what its tables need and only passes decide: its
/// protocol and the FIFO slots of its connections.
inline mlir::LogicalResult verifyProtocolSelected(PlanOp plan) {
  if (plan.getProtocol() && plan.getSlots())
    return mlir::success();
  return plan.emitOpError("has no protocol or FIFO slots; coll-select-protocol records them");
}

/// `name` as a C identifier.
inline std::string cIdent(llvm::StringRef name) {
  std::string out;
  for (char c : name)
    out += llvm::isAlnum(c) ? c : '_';
  return out;
}

/// `text` as a C string literal, quotes included.
inline std::string cString(llvm::StringRef text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c < 0x20 || c >= 0x7f) {
      // Octal, three digits, so that a following digit is not taken in.
      char octal[5];
      snprintf(octal, sizeof octal, "\\%03o", c);
      out += octal;
      continue;
    }
    out += char(c);
  }
  return out + "\"";
}

/// The plans of `module`, one group per algorithm; coll-select-protocol
/// leaves an algorithm's variants adjacent, in increasing size ranges.
inline llvm::SmallVector<llvm::SmallVector<PlanOp>> plansByAlgorithm(mlir::ModuleOp module) {
  llvm::SmallVector<llvm::SmallVector<PlanOp>> algorithms;
  for (auto plan : module.getOps<PlanOp>()) {
    if (algorithms.empty() || algorithmOf(algorithms.back().front()) != algorithmOf(plan))
      algorithms.emplace_back();
    algorithms.back().push_back(plan);
  }
  return algorithms;
}

/// Continuation lines and the elements of initializer lists: two levels in,
/// where clang-format puts them.
class ContinuationScope {
public:
  explicit ContinuationScope(mlir::raw_indented_ostream &os) : os(os) { os.indent().indent(); }
  ~ContinuationScope() { os.unindent().unindent(); }

private:
  mlir::raw_indented_ostream &os;
};

/// The signature of algorithm `alg`'s entry point, then `end`.
inline void printEntryPoint(mlir::raw_indented_ostream &os, llvm::StringRef alg,
                            llvm::StringRef end) {
  os << "collResult_t collc_" << alg << "(const void *sendbuff, void *recvbuff, size_t count,\n";
  ContinuationScope params(os);
  os << "collDataType_t datatype, collRedOp_t op, collComm_t comm, collStream_t stream)" << end;
}

} // namespace coll

#endif // COLLC_TARGET_KERNELABI_H
