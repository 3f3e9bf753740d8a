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

// Integer-backed enums: ops print them as keywords (`allreduce`, `LL`) and
// the generic form as integers, so both forms round-trip.
defvar Coll_CollectiveAttr = Coll_Collective;
defvar Coll_ProtocolAttr = Coll_Protocol;

class Coll_Op<string mnemonic, list<Trait> traits = []>
    : Op<Coll_Dialect, mnemonic, traits>;

#endif // COLL_BASE
