//===- CollOps.td - Operations of the coll dialect -------------*- tablegen -*-===//
#ifndef COLL_OPS
#define COLL_OPS

include "dialect/CollBase.td"
include "dialect/CollAttrs.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "dialect/CollPlanOps.td"

def Coll_AlgorithmOp : Coll_Op<"algorithm", [
    Symbol, SingleBlock, NoTerminator, IsolatedFromAbove]> {
  let summary = "a collective algorithm in the global view";
  let description = [{
    Holds the fully elaborated program: `coll.copy` and `coll.reduce` ops in
    program order over every rank's buffers. `chunks` is the number of chunks
    per unit of user buffer; `in` and `out` sizes follow from the collective.
    `params` records the values of the source program's parameters.
    `coll-map-ranks` sets `rank_map` (the GPU of each rank) and `topology`
    (the spec it placed them on), `coll-split-chunks` `fifo_depth` (the FIFO
    slots a pipelined plan needs); they are printed in the attribute
    dictionary.

    ```mlir
    coll.algorithm @ring : allreduce ranks(2) chunks(2) inplace {
      coll.reduce in[0][1], in[1][1] -> in[1][1]
      coll.copy in[1][1] -> in[0][1]
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       Coll_CollectiveAttr:$collective,
                       I64Attr:$ranks,
                       I64Attr:$chunks,
                       OptionalAttr<I64Attr>:$root,
                       UnitAttr:$inplace,
                       OptionalAttr<DictionaryAttr>:$scratch,
                       OptionalAttr<DictionaryAttr>:$params,
                       OptionalAttr<DenseI64ArrayAttr>:$rank_map,
                       OptionalAttr<StrAttr>:$topology,
                       OptionalAttr<Coll_DepthAttr>:$fifo_depth);
  let regions = (region SizedRegion<1>:$body);
  // The front end makes algorithms before they are placed or split.
  let builders = [OpBuilder<(ins "::mlir::StringAttr":$sym_name,
      "CollectiveAttr":$collective, "::mlir::IntegerAttr":$ranks,
      "::mlir::IntegerAttr":$chunks, "::mlir::IntegerAttr":$root,
      "::mlir::UnitAttr":$inplace, "::mlir::DictionaryAttr":$scratch,
      "::mlir::DictionaryAttr":$params), [{
    build($_builder, $_state, sym_name, collective, ranks, chunks, root, inplace,
          scratch, params, ::mlir::DenseI64ArrayAttr(), ::mlir::StringAttr(),
          ::mlir::IntegerAttr());
  }]>];
  let assemblyFormat = [{
    $sym_name `:` $collective `ranks` `(` $ranks `)` `chunks` `(` $chunks `)`
    (`root` `(` $root^ `)`)? (`inplace` $inplace^)?
    (`scratch` $scratch^)? (`params` $params^)? attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Chunks per rank of buffer `name`, or nullopt when there is no such
    /// buffer.
    std::optional<int64_t> getBufferSize(::llvm::StringRef name);
    /// The root rank of broadcast and reduce, 0 otherwise.
    int64_t getRootRank() { return getRoot().value_or(0); }
  }];
}

class Coll_ChunkOp<string mnemonic> : Coll_Op<mnemonic, [
    HasParent<"AlgorithmOp">]> {
  let hasVerifier = 1;
}

def Coll_CopyOp : Coll_ChunkOp<"copy"> {
  let summary = "copy chunks, between ranks or within one";
  let description = [{
    `dst ← src`. Different ranks make a send and a receive; the same rank a
    local copy. Optional `channel`, `protocol` and `pipeline` carry the
    source program's annotations.

    ```mlir
    coll.copy in[0][3] -> out[1][3]
    coll.copy out[2][0:4] -> out[3][0:4] channel(1) protocol(LL)
    ```
  }];
  let arguments = (ins Coll_ChunkAttr:$src, Coll_ChunkAttr:$dst,
                       OptionalAttr<Coll_IndexAttr>:$channel,
                       OptionalAttr<Coll_ProtocolAttr>:$protocol,
                       OptionalAttr<Coll_DepthAttr>:$pipeline);
  let assemblyFormat = [{
    custom<Chunk>($src) `->` custom<Chunk>($dst)
    (`channel` `(` $channel^ `)`)? (`protocol` `(` $protocol^ `)`)?
    (`pipeline` `(` $pipeline^ `)`)? attr-dict
  }];
}

def Coll_ReduceOp : Coll_ChunkOp<"reduce"> {
  let summary = "reduce chunks into a destination";
  let description = [{
    `dst ← srcs[0] ⊕ srcs[1] ⊕ ...` with the run-time reduction operator.
    `a += b` is `coll.reduce a, b -> a`.

    ```mlir
    coll.reduce in[0][3], in[1][3] -> in[1][3]
    ```
  }];
  let arguments = (ins Coll_ChunkListAttr:$srcs, Coll_ChunkAttr:$dst,
                       OptionalAttr<Coll_IndexAttr>:$channel,
                       OptionalAttr<Coll_ProtocolAttr>:$protocol,
                       OptionalAttr<Coll_DepthAttr>:$pipeline);
  let assemblyFormat = [{
    custom<ChunkList>($srcs) `->` custom<Chunk>($dst)
    (`channel` `(` $channel^ `)`)? (`protocol` `(` $protocol^ `)`)?
    (`pipeline` `(` $pipeline^ `)`)? attr-dict
  }];
  let extraClassDeclaration = [{
    /// The sources as chunk attributes.
    auto getSources() { return getSrcs().getAsRange<ChunkAttr>(); }
  }];
}

#endif // COLL_OPS
