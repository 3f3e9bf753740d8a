//===- CollInterfaces.td - Interfaces of the coll dialect ------*- tablegen -*-===//
#ifndef COLL_INTERFACES
#define COLL_INTERFACES

include "mlir/IR/OpBase.td"

def Coll_StepOpInterface : OpInterface<"StepOpInterface"> {
  let cppNamespace = "::coll";
  let description = [{
    A step of a rank stream, as the passes that reason about a plan see it:
    whether it receives from its threadblock's receive peer and sends to its
    send peer, whether it reduces, the local chunks it reads (its reduction
    operands, or what it sends) and the chunk it writes, and the steps of
    other threadblocks it waits for. `coll-fuse`, `coll-select-protocol`,
    `coll-verify-plan` and the emitters read steps only through it.
  }];
  let methods = [
    InterfaceMethod<"Whether the step takes a message from its threadblock's "
                    "receive peer.", "bool", "receives">,
    InterfaceMethod<"Whether the step passes a message to its threadblock's "
                    "send peer.", "bool", "sends">,
    InterfaceMethod<"Whether the step combines values with the reduction "
                    "operator.", "bool", "reduces">,
    InterfaceMethod<[{
        Whether the step names its chunk on every rank of the plan at once
        (through a multicast address or each rank's window): the chunk it
        reads for `multimem_ld_reduce` and `read_reduce`, the chunk it writes
        for `multimem_st` and `put`.
      }], "bool", "onEveryRank">,
    InterfaceMethod<"The chunks the step reads (for a reduction, its local "
                    "operands; for a send, what it sends).",
      "::llvm::SmallVector<::coll::ChunkAttr, 2>", "getReadChunks">,
    InterfaceMethod<"The chunks the step writes, or null.",
      "::coll::ChunkAttr", "getWrittenChunk">,
    InterfaceMethod<"How many chunks the step moves.", "int64_t", "getChunkCount",
      (ins), [{}], [{
        if (::coll::ChunkAttr written = $_op.getWrittenChunk())
          return written.getCount();
        return $_op.getReadChunks().front().getCount();
      }]>,
    InterfaceMethod<[{
        The step's name within its threadblock: ids increase along the
        threadblock and stay with the step while others are erased or made.
      }], "uint64_t", "getId">,
    InterfaceMethod<"Renames the step (only coll-number-steps does).", "void", "setId",
      (ins "uint64_t":$id)>,
    InterfaceMethod<[{
        The steps of other threadblocks of the rank that must finish first, as
        flat (threadblock, step id) pairs, or null.
      }], "::mlir::DenseI64ArrayAttr", "getDepsAttr">,
    InterfaceMethod<"The steps of other threadblocks that must finish first.",
      "::llvm::SmallVector<::coll::StepRef, 2>", "getDepRefs", (ins), [{}], [{
        ::llvm::SmallVector<::coll::StepRef, 2> refs;
        if (::mlir::DenseI64ArrayAttr deps = $_op.getDepsAttr())
          for (size_t i = 0; i + 1 < size_t(deps.size()); i += 2)
            refs.push_back({deps[i], deps[i + 1]});
        return refs;
      }]>,
    InterfaceMethod<"Replaces the step's deps.", "void", "setDepsAttr",
      (ins "::mlir::DenseI64ArrayAttr":$deps)>,
    InterfaceMethod<[{
        A sending step's direct destination: the chunks of the receiver that
        its receiving step stores into. Null for other steps.
      }], "::coll::ChunkAttr", "getDirectDstAttr", (ins), [{}],
      [{ return {}; }]>,
    InterfaceMethod<[{
        Sets (or, given null, removes) a sending step's direct destination.
        Other steps have none to set.
      }], "void", "setDirectDst", (ins "::coll::ChunkAttr":$dst), [{}],
      [{ assert(!dst && "only a sending step has a direct destination"); }]>,
  ];
}

#endif // COLL_INTERFACES
