//===- CollBase.td - The coll dialect and its enums ------------*- tablegen -*-===//
#ifndef COLL_BASE
#define COLL_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Coll_Dialect : Dialect {
  let name = "coll";
  let cppNamespace = "::coll";
  let summary = "Collective-communication schedules";
  let description = [{
    The `coll` dialect describes collective algorithms as chunk-level copy and
    reduce steps between ranks (the global view), and, after lowering, as
    per-rank streams of communication primitives.
  }];
  let useDefaultAttributePrinterParser = 1;
  // What passes leave on ops of the global view for later ones, printed as
  // `coll.<name>`: `moves_chunks` (coll-verify) on an algorithm that must
  // move its chunks; `piece` (coll-split-chunks) on a copy or reduce made
  // for a pipeline piece; `multimem`, `read_reduce` on a reduction and
  // `multimem_st`, `put` (the store's group) on a copy that coll-multimem
  // turns into steps on every rank's chunk; `get` on a copy that loads from
  // the peer's window.
  let discardableAttrs = (ins
    "::mlir::UnitAttr":$moves_chunks,
    "::mlir::IntegerAttr":$piece,
    "::mlir::UnitAttr":$multimem,
    "::mlir::UnitAttr":$read_reduce,
    "::mlir::IntegerAttr":$multimem_st,
    "::mlir::IntegerAttr":$put,
    "::mlir::UnitAttr":$get
  );
  let extraClassDeclaration = [{
    /// The loaded dialect, whose helpers read and write those attributes.
    static CollDialect *of(::mlir::MLIRContext *ctx) {
      return ctx->getLoadedDialect<CollDialect>();
    }
  }];
}

def Coll_Collective : I32EnumAttr<"Collective", "a collective operation", [
    I32EnumAttrCase<"allreduce", 0>,
    I32EnumAttrCase<"reducescatter", 1>,
    I32EnumAttrCase<"allgather", 2>,
    I32EnumAttrCase<"alltoall", 3>,
    I32EnumAttrCase<"broadcast", 4>,
    I32EnumAttrCase<"reduce", 5>]> {
  let cppNamespace = "::coll";
}

def Coll_Protocol : I32EnumAttr<"Protocol", "a wire protocol", [
    I32EnumAttrCase<"Simple", 0>,
    I32EnumAttrCase<"LL", 1>,
    I32EnumAttrCase<"LL128", 2>]> {
  let cppNamespace = "::coll";
}

// The kinds of step of a plan: each is the mnemonic of its step op, which
// `coll.run` names.
def Coll_RunKind : I32EnumAttr<"RunKind", "the kind of step a run repeats", [
    I32EnumAttrCase<"send", 0>,
    I32EnumAttrCase<"recv", 1>,
    I32EnumAttrCase<"recv_copy_send", 2>,
    I32EnumAttrCase<"recv_reduce_send", 3>,
    I32EnumAttrCase<"recv_reduce_copy", 4>,
    I32EnumAttrCase<"recv_reduce_copy_send", 5>,
    I32EnumAttrCase<"local_copy", 6>,
    I32EnumAttrCase<"local_reduce", 7>,
    I32EnumAttrCase<"multimem_ld_reduce", 8>,
    I32EnumAttrCase<"multimem_st", 9>,
    I32EnumAttrCase<"read_reduce", 10>,
    I32EnumAttrCase<"put", 11>,
    I32EnumAttrCase<"get", 12>]> {
  let cppNamespace = "::coll";
}

// What an operand of a step is, in the order a primitive takes them: the
// peer (of `get`), the chunks read, the chunk written, the direct
// destination in the receiver's buffers.
def Coll_FieldRole : I32EnumAttr<"FieldRole", "the role of a step's operand", [
    I32EnumAttrCase<"peer", 0>,
    I32EnumAttrCase<"src", 1>,
    I32EnumAttrCase<"dst", 2>,
    I32EnumAttrCase<"direct", 3>]> {
  let cppNamespace = "::coll";
}

// Integer-backed enums: ops print them as keywords (`allreduce`, `LL`) and
// the generic form as integers, so both forms round-trip.
defvar Coll_CollectiveAttr = Coll_Collective;
defvar Coll_ProtocolAttr = Coll_Protocol;
defvar Coll_RunKindAttr = Coll_RunKind;

class Coll_Op<string mnemonic, list<Trait> traits = []>
    : Op<Coll_Dialect, mnemonic, traits>;

#endif // COLL_BASE
