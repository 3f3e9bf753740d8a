//===- CollAttrs.td - Attributes of the coll dialect -----------*- tablegen -*-===//
#ifndef COLL_ATTRS
#define COLL_ATTRS

include "dialect/CollBase.td"

def Coll_ChunkAttr : AttrDef<Coll_Dialect, "Chunk"> {
  let mnemonic = "chunk";
  let summary = "a run of chunks of one rank's buffer";
  let description = [{
    `count` consecutive chunks starting at `index` of buffer `buffer` (`in`,
    `out` or a scratch buffer's name) on rank `rank`. Written `in[3][5]` for
    one chunk and `out[2][4:8]` (half-open) for a run.
  }];
  let parameters = (ins "::mlir::StringAttr":$buffer, "int64_t":$rank,
                        "int64_t":$index, "int64_t":$count);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// Prints `in[3][5]` or `in[3][4:8]`, the form used inside ops.
    void printBody(::mlir::AsmPrinter &printer) const;
    static ::mlir::FailureOr<ChunkAttr> parseBody(::mlir::AsmParser &parser);
    int64_t getEnd() const { return getIndex() + getCount(); }
  }];
}

// One or more chunks: the operands of a reduction.
def Coll_ChunkListAttr : ConfinedAttr<TypedArrayAttrBase<Coll_ChunkAttr, "chunks">,
                                      [ArrayMinCount<1>]> {
  let summary = "a non-empty array of chunks";
}

// A field of the steps of a run in a shared threadblock function (see
// coll.shape): the chunk index (or, for `peer`, the rank) that the k-th step
// of the run on rank r names, as (a*r + b*k + c) mod m. `role` says which
// operand (Coll_FieldRole). `count` chunks each, or `?` (kTableCount):
// as many as the table says, after the field's index, per step (the
// threadblocks of a shape may move chunk ranges of different lengths).
def Coll_AffineFieldAttr : AttrDef<Coll_Dialect, "AffineField"> {
  let mnemonic = "affine";
  let summary = "an operand that is an affine function of the rank and the step";
  let parameters = (ins EnumParameter<Coll_FieldRole>:$role, StringRefParameter<>:$buffer,
                        "int64_t":$count, "int64_t":$a, "int64_t":$b, "int64_t":$c,
                        "int64_t":$m);
  let assemblyFormat = [{
    `<` $role $buffer `[` `(` $a `*` `r` `+` $b `*` `k` `+` $c `)` `mod` $m `]` `x` custom<ChunkCount>($count) `>`
  }];
}

// A field that no affine function gives: each threadblock's table holds it,
// one value per step of the run (then its count, where that is `?`).
def Coll_TableFieldAttr : AttrDef<Coll_Dialect, "TableField"> {
  let mnemonic = "table";
  let summary = "an operand read from the threadblock's table";
  let parameters = (ins EnumParameter<Coll_FieldRole>:$role, StringRefParameter<>:$buffer,
                        "int64_t":$count);
  let assemblyFormat = "`<` $role $buffer `x` custom<ChunkCount>($count) `>`";
}

// How the runtime launches a plan, by message size: from `min_bytes` per
// rank on (up to the next range's), `replicas` copies of every threadblock,
// each on a share of the loops and on connections of its own, with
// `threads` threads each. Written `<0: 1 x 64, 8192: 2 x 512>`.
def Coll_LaunchAttr : AttrDef<Coll_Dialect, "Launch"> {
  let mnemonic = "launch";
  let summary = "launch shapes of a plan by message size";
  let parameters = (ins ArrayRefParameter<"::coll::LaunchRange", "ranges by size">:$ranges);
  let hasCustomAssemblyFormat = 1;
}

// Ids and channels count from 0; depths (FIFO slots, pipeline pieces) from 1.
def Coll_IndexAttr : ConfinedAttr<I64Attr, [IntNonNegative]>;
def Coll_DepthAttr : ConfinedAttr<I64Attr, [IntMinValue<1>]>;

#endif // COLL_ATTRS
