//===- CollPlanOps.td - Rank streams: the executable plan ------*- tablegen -*-===//
//
// IR level 2: per rank, per threadblock, ordered primitive steps. A
// threadblock serves at most one receive peer and one send peer on one
// channel; steps run in order, and `deps` name steps of other threadblocks
// of the same rank that must finish first, as `deps(tb:id, ...)`. A step's
// `id` is its name within its threadblock: ids increase along the
// threadblock, and no transformation renames a step, so a dep stays valid
// while steps around it are erased or made. The printed form leaves out an
// id that is one more than the previous step's (0 for the first), so a
// freshly numbered plan (coll-number-steps: ids are positions) shows none.
//
//===----------------------------------------------------------------------===//
#ifndef COLL_PLAN_OPS
#define COLL_PLAN_OPS

include "dialect/CollBase.td"
include "dialect/CollAttrs.td"
include "dialect/CollInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"

def Coll_PlanOp : Coll_Op<"plan", [
    Symbol, SingleBlock, NoTerminator, IsolatedFromAbove]> {
  let summary = "an algorithm lowered to per-rank streams of primitives";
  let description = [{
    Made from a `coll.algorithm` by `coll-to-rank-streams`; holds one
    `coll.rank` per rank. `min_bytes`/`max_bytes` give the message sizes this
    variant is for and `algorithm` the algorithm whose variant it is (both
    set by `coll-select-protocol`; the variants of one algorithm share one
    entry point), `rank_map` the physical GPU of each logical rank (set by
    `coll-map-ranks`). `topology` and `fifo_depth` come from the algorithm
    and are printed in the attribute dictionary. `protocol` (what the variant
    runs: its threadblocks' protocol, or the one it was chosen for where
    `@protocol` gives its threadblocks several)
    and `slots` (the FIFO slots of each connection) are set by
    `coll-select-protocol`; `launch` (set by `coll-choose-channels`)
    says, by size, how the runtime launches the plan (#coll.launch). `why`
    (set by `collc tune`) says why the tuner chose this plan for its sizes.

    ```mlir
    coll.plan @ring_LL : allreduce ranks(2) chunks(2) inplace bytes[0, 65536) algorithm("ring") {
      coll.rank 0 {
        coll.threadblock 0 recv(1) send(1) channel(0) {
          coll.send in[0][1]
          coll.recv_reduce_copy_send in[0][0] -> in[0][0]
          coll.recv -> in[0][1]
        }
      }
      ...
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
                       OptionalAttr<DenseI64ArrayAttr>:$rank_map,
                       OptionalAttr<I64Attr>:$min_bytes,
                       OptionalAttr<I64Attr>:$max_bytes,
                       OptionalAttr<StrAttr>:$algorithm,
                       OptionalAttr<StrAttr>:$topology,
                       OptionalAttr<Coll_DepthAttr>:$fifo_depth,
                       OptionalAttr<Coll_ProtocolAttr>:$protocol,
                       OptionalAttr<Coll_DepthAttr>:$slots,
                       OptionalAttr<Coll_LaunchAttr>:$launch,
                       OptionalAttr<StrAttr>:$why);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `:` $collective `ranks` `(` $ranks `)` `chunks` `(` $chunks `)`
    (`root` `(` $root^ `)`)? (`inplace` $inplace^)? (`scratch` $scratch^)?
    (`rank_map` $rank_map^)? (`bytes` `[` $min_bytes^ `,` $max_bytes `)`)?
    (`algorithm` `(` $algorithm^ `)`)? (`protocol` `(` $protocol^ `)`)?
    (`slots` `(` $slots^ `)`)? (`launch` $launch^)? attr-dict-with-keyword $body
  }];
  // Plans are made (by coll-to-rank-streams) before they are variants of
  // an algorithm.
  let builders = [OpBuilder<(ins "::mlir::StringAttr":$sym_name,
      "CollectiveAttr":$collective, "::mlir::IntegerAttr":$ranks,
      "::mlir::IntegerAttr":$chunks, "::mlir::IntegerAttr":$root,
      "::mlir::UnitAttr":$inplace, "::mlir::DictionaryAttr":$scratch,
      "::mlir::DenseI64ArrayAttr":$rank_map, "::mlir::IntegerAttr":$min_bytes,
      "::mlir::IntegerAttr":$max_bytes), [{
    build($_builder, $_state, sym_name, collective, ranks, chunks, root, inplace,
          scratch, rank_map, min_bytes, max_bytes, ::mlir::StringAttr(),
          ::mlir::StringAttr(), ::mlir::IntegerAttr(), ProtocolAttr(), ::mlir::IntegerAttr(),
          LaunchAttr(), ::mlir::StringAttr());
  }]>];
  let hasVerifier = 1;
  // Threadblocks with a shape are what it makes.
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// Checks `launch` against the plan's size range and the runtime's limits.
    ::mlir::LogicalResult verifyLaunch();
    std::optional<int64_t> getBufferSize(::llvm::StringRef name);
    int64_t getRootRank() { return getRoot().value_or(0); }
  }];
}

def Coll_RankOp : Coll_Op<"rank", [
    HasParent<"PlanOp">, SingleBlock, NoTerminator]> {
  let summary = "the threadblocks of one rank";
  let arguments = (ins I64Attr:$rank);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$rank attr-dict-with-keyword $body";
  let hasVerifier = 1;
  // Each dep names a step of another threadblock of this rank.
  let hasRegionVerifier = 1;
}

def Coll_ShapeOp : Coll_Op<"shape", [
    HasParent<"PlanOp">, SingleBlock, NoTerminator]> {
  let summary = "the steps that threadblocks of one shape share";
  let description = [{
    Made by `coll-reroll`. Threadblocks whose steps have the same shape
    (the same steps in the same runs, naming the same buffers, with as many
    deps each) name it with `shape(id)` and share one function: each
    `coll.run` is a loop over its steps, whose operands are affine in the
    rank and the step within the run, or read from the threadblock's table
    (its deps always are). The threadblocks keep their steps, which the
    shape reproduces exactly.

    ```mlir
    coll.shape 0 {
      coll.run recv_reduce_send x 6 [#coll.affine<src "in"[(1 * r + 7 * k + 6) mod 8] x 1>]
    }
    ```
  }];
  let arguments = (ins Coll_IndexAttr:$id);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$id attr-dict-with-keyword $body";
}

def Coll_RunOp : Coll_Op<"run", [HasParent<"ShapeOp">]> {
  let summary = "consecutive steps of one kind in a shape";
  let description = [{
    `count` steps of kind `step` (the step op's mnemonic), with one field
    per operand (`#coll.affine` or `#coll.table`), in the order of their
    roles (peer, sources, destination, direct destination), and `waits`
    deps each, which the table holds. With `table_waits`, the number of
    deps differs between the shape's threadblocks, and the table holds it
    before each step's deps. With `fuse_next`, a `multimem_ld_reduce` step
    and the `multimem_st` of the next run, which stores the chunk it
    reduced and waits for nothing, are one primitive call
    (`multimemAllReduce`): the reduced values go from the load to the store
    in registers.
  }];
  let arguments = (ins Coll_RunKindAttr:$step, Coll_DepthAttr:$count, ArrayAttr:$fields,
                       DefaultValuedAttr<Coll_IndexAttr, "0">:$waits,
                       UnitAttr:$table_waits, UnitAttr:$fuse_next);
  let assemblyFormat = [{
    $step `x` $count $fields (`waits` `(` $waits^ `)`)? (`table_waits` $table_waits^)?
    (`fuse_next` $fuse_next^)? attr-dict
  }];
  let hasVerifier = 1;
}

def Coll_ThreadblockOp : Coll_Op<"threadblock", [
    HasParent<"RankOp">, SingleBlock, NoTerminator]> {
  let summary = "one CUDA block: ordered steps on one channel";
  let description = [{
    Receives only from `recv` and sends only to `send` (absent when it does
    not), on `channel`, with `protocol` on its connections. `direct_recv` /
    `direct_send`: on that connection a sender may store a step straight
    into the receiver's destination in its buffer window (NVLink P2P or a
    symmetric LSA window) instead of a FIFO slot, once the receiver waits in
    that step; the step counters move as for any other step. The sending
    steps name that destination as `direct_dst` where the receiver has one.
  }];
  let arguments = (ins Coll_IndexAttr:$id,
                       OptionalAttr<I64Attr>:$recv,
                       OptionalAttr<I64Attr>:$send,
                       Coll_IndexAttr:$channel,
                       OptionalAttr<Coll_ProtocolAttr>:$protocol,
                       UnitAttr:$direct_recv,
                       UnitAttr:$direct_send,
                       OptionalAttr<Coll_IndexAttr>:$shape);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $id (`recv` `(` $recv^ `)`)? (`send` `(` $send^ `)`)? `channel` `(` $channel `)`
    (`protocol` `(` $protocol^ `)`)? (`direct_recv` $direct_recv^)?
    (`direct_send` $direct_send^)? (`shape` `(` $shape^ `)`)?
    attr-dict-with-keyword custom<Steps>($body)
  }];
  let hasVerifier = 1;
  // Its ops are steps whose ids increase.
  let hasRegionVerifier = 1;
}

// A step. Each one says what it does for StepOpInterface in the fields
// below: the connection ends it uses, whether it reduces or names a chunk on
// every rank, and C++ expressions of its chunks read and written. `id` is
// written `id(7)` where it is not the previous step's plus one.
class Coll_StepOp<string mnemonic, string summaryText, dag chunks, string format,
                  dag extra = (ins)>
    : Coll_Op<mnemonic, [HasParent<"ThreadblockOp">, Coll_StepOpInterface]> {
  let summary = summaryText;
  let arguments = !con(chunks, (ins Coll_IndexAttr:$id,
                                    OptionalAttr<DenseI64ArrayAttr>:$deps), extra);
  let assemblyFormat = format # " `` custom<StepId>($id) `` custom<Deps>($deps) attr-dict";
  let hasVerifier = 1;

  bit stepReceives = 0;
  bit stepSends = 0;
  bit stepReduces = 0;
  bit stepOnEveryRank = 0;
  // The initializer of the chunks it reads, and the chunk it writes.
  string stepReads = "{getSrc()}";
  string stepWrites = "getDst()";
  string stepExtraDeclaration = "";
  let extraClassDeclaration = [{
    bool receives() { return }] # !if(stepReceives, "true", "false") # [{; }
    bool sends() { return }] # !if(stepSends, "true", "false") # [{; }
    bool reduces() { return }] # !if(stepReduces, "true", "false") # [{; }
    bool onEveryRank() { return }] # !if(stepOnEveryRank, "true", "false") # [{; }
    ::llvm::SmallVector<ChunkAttr, 2> getReadChunks() { return }] # stepReads # [{; }
    ChunkAttr getWrittenChunk() { return }] # stepWrites # [{; }
  }] # stepExtraDeclaration;
}

// A step that sends. On a direct connection (`direct_send`) `direct_dst`
// names where the receiving step stores the data in the receiver's buffers
// (chunks of the send peer), written `direct(in[1][3])`: the sender may
// store it there itself instead of in a FIFO slot. Set by
// coll-select-protocol where the k-th sending step's receiver, its k-th
// receiving step, stores what arrives without reducing it with what it
// overwrites. Steps are made without one (the builders without
// `direct_dst`).
class Coll_SendingStepOp<string mnemonic, string summaryText, dag chunks, string format>
    : Coll_StepOp<mnemonic, summaryText, chunks,
                  format # " (`direct` `(` custom<Chunk>($direct_dst)^ `)`)?",
                  (ins OptionalAttr<Coll_ChunkAttr>:$direct_dst)> {
  let stepSends = 1;
  let stepExtraDeclaration = [{
    void setDirectDst(ChunkAttr dst) {
      if (dst)
        setDirectDstAttr(dst);
      else
        removeDirectDstAttr();
    }
  }];
}

def Coll_SendOp : Coll_SendingStepOp<"send", "send local chunks to the send peer",
    (ins Coll_ChunkAttr:$src), "custom<Chunk>($src)"> {
  let stepWrites = "ChunkAttr()";
  let builders = [OpBuilder<(ins "ChunkAttr":$src, "uint64_t":$id,
                                 "::mlir::DenseI64ArrayAttr":$deps),
    [{ build($_builder, $_state, src, id, deps, ChunkAttr()); }]>];
}
def Coll_RecvOp : Coll_StepOp<"recv", "receive chunks from the receive peer",
    (ins Coll_ChunkAttr:$dst), "`->` custom<Chunk>($dst)"> {
  let stepReceives = 1;
  let stepReads = "{}";
}
def Coll_RecvCopySendOp : Coll_SendingStepOp<"recv_copy_send",
    "receive chunks, store them and forward them to the send peer",
    (ins Coll_ChunkAttr:$dst), "`->` custom<Chunk>($dst)"> {
  let stepReceives = 1;
  let stepReads = "{}";
  let builders = [OpBuilder<(ins "ChunkAttr":$dst, "uint64_t":$id,
                                 "::mlir::DenseI64ArrayAttr":$deps),
    [{ build($_builder, $_state, dst, id, deps, ChunkAttr()); }]>];
}
def Coll_RecvReduceSendOp : Coll_SendingStepOp<"recv_reduce_send",
    "receive chunks, reduce them with local ones and send the result on",
    (ins Coll_ChunkAttr:$src), "custom<Chunk>($src)"> {
  let stepReceives = 1;
  let stepReduces = 1;
  let stepWrites = "ChunkAttr()";
  let builders = [OpBuilder<(ins "ChunkAttr":$src, "uint64_t":$id,
                                 "::mlir::DenseI64ArrayAttr":$deps),
    [{ build($_builder, $_state, src, id, deps, ChunkAttr()); }]>];
}
def Coll_RecvReduceCopyOp : Coll_StepOp<"recv_reduce_copy",
    "receive chunks, reduce them with local ones and store the result",
    (ins Coll_ChunkAttr:$src, Coll_ChunkAttr:$dst),
    "custom<Chunk>($src) `->` custom<Chunk>($dst)"> {
  let stepReceives = 1;
  let stepReduces = 1;
}
def Coll_RecvReduceCopySendOp : Coll_SendingStepOp<"recv_reduce_copy_send",
    "receive, reduce with local chunks, store and send the result on",
    (ins Coll_ChunkAttr:$src, Coll_ChunkAttr:$dst),
    "custom<Chunk>($src) `->` custom<Chunk>($dst)"> {
  let stepReceives = 1;
  let stepReduces = 1;
  let builders = [OpBuilder<(ins "ChunkAttr":$src, "ChunkAttr":$dst, "uint64_t":$id,
                                 "::mlir::DenseI64ArrayAttr":$deps),
    [{ build($_builder, $_state, src, dst, id, deps, ChunkAttr()); }]>];
}
def Coll_LocalCopyOp : Coll_StepOp<"local_copy", "copy chunks within the rank",
    (ins Coll_ChunkAttr:$src, Coll_ChunkAttr:$dst),
    "custom<Chunk>($src) `->` custom<Chunk>($dst)">;
def Coll_LocalReduceOp : Coll_StepOp<"local_reduce", "reduce chunks within the rank",
    (ins Coll_ChunkListAttr:$srcs, Coll_ChunkAttr:$dst),
    "custom<ChunkList>($srcs) `->` custom<Chunk>($dst)"> {
  let stepReduces = 1;
  let stepReads = "::llvm::to_vector<2>(getSrcs().getAsRange<ChunkAttr>())";
}

def Coll_MultimemLdReduceOp : Coll_StepOp<"multimem_ld_reduce",
    "reduce a chunk over every rank through an NVLink multicast load",
    (ins Coll_ChunkAttr:$src, Coll_ChunkAttr:$dst),
    "custom<Chunk>($src) `->` custom<Chunk>($dst)"> {
  let stepReduces = 1;
  let stepOnEveryRank = 1;
  let description = [{
    `src` names a chunk of this rank's buffer; the step reads that chunk on
    every rank of the plan at once (multimem.ld_reduce on the buffer's
    multicast address, reduced in the switch) and stores the result in the
    local `dst`. Nothing on any rank writes `src`'s chunks before this step.

    ```mlir
    coll.multimem_ld_reduce in[2][2] -> red[2][0]
    ```
  }];
}

def Coll_MultimemStOp : Coll_StepOp<"multimem_st",
    "store a chunk into every rank through an NVLink multicast store",
    (ins Coll_ChunkAttr:$src, Coll_ChunkAttr:$dst),
    "custom<Chunk>($src) `->` custom<Chunk>($dst)"> {
  let stepOnEveryRank = 1;
  let description = [{
    Stores the local `src` into `dst`'s chunk on every rank of the plan at
    once (multimem.st on the multicast address). Nothing else touches those
    chunks afterwards; the kernel ends with a barrier over the ranks.

    ```mlir
    coll.multimem_st red[2][0] -> out[2][2]
    ```
  }];
}

def Coll_ReadReduceOp : Coll_StepOp<"read_reduce",
    "reduce a chunk over every rank by loading it from each rank's window",
    (ins Coll_ChunkAttr:$src, Coll_ChunkAttr:$dst),
    "custom<Chunk>($src) `->` custom<Chunk>($dst)"> {
  let stepReduces = 1;
  let stepOnEveryRank = 1;
  let description = [{
    `multimem_ld_reduce` without a multicasting switch: the step loads
    `src`'s chunk from every rank's buffer window in turn (peer-to-peer
    loads over NVLink, a symmetric LSA window) and stores the reduction in
    the local `dst`. The same rules hold: nothing on any rank writes `src`'s
    chunks before this step.

    ```mlir
    coll.read_reduce in[2][2] -> red[2][0]
    ```
  }];
}

def Coll_PutOp : Coll_StepOp<"put",
    "store a chunk into every rank's window",
    (ins Coll_ChunkAttr:$src, Coll_ChunkAttr:$dst),
    "custom<Chunk>($src) `->` custom<Chunk>($dst)"> {
  let stepOnEveryRank = 1;
  let description = [{
    `multimem_st` without a multicasting switch: stores the local `src` into
    `dst`'s chunk on every rank, one peer-to-peer store per rank. Nothing
    else touches those chunks afterwards; the kernel ends with a barrier
    over the ranks.

    ```mlir
    coll.put red[2][0] -> out[2][2]
    ```
  }];
}

def Coll_GetOp : Coll_StepOp<"get",
    "load a chunk of another rank from its window",
    (ins Coll_ChunkAttr:$src, Coll_ChunkAttr:$dst),
    "custom<Chunk>($src) `->` custom<Chunk>($dst)"> {
  let description = [{
    Copies `src`, a chunk of another rank (its rank index names the peer),
    into the local `dst` with peer-to-peer loads. Nothing on the peer writes
    `src` during the plan: it holds the peer's input from the barrier that
    starts the kernel.

    ```mlir
    coll.get in[0][3] -> out[3][0]
    ```
  }];
}

#endif // COLL_PLAN_OPS
