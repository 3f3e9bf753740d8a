//===- Passes.td - Lowering passes of collc --------------------*- tablegen -*-===//
#ifndef COLL_LOWERING_PASSES
#define COLL_LOWERING_PASSES

include "mlir/Pass/PassBase.td"

def CollMapRanksPass : Pass<"coll-map-ranks", "::mlir::ModuleOp"> {
  let summary = "Place logical ranks on the GPUs of a topology";
  let description = [{
    Chooses the physical GPU of each logical rank so that heavy traffic stays
    on fast links: ranks start in node-major order of the topology's GPUs
    (so a scrambled numbering does not matter), then pairwise swaps lower
    the α-β cost of the algorithm's traffic (bytes x per-byte cost of the
    path, which makes cross-rail network traffic dearer than rail-local).
    The result is the `rank_map` attribute, which `coll-to-rank-streams`
    carries into the plan. A preset without `:nodes=` grows to fit.
  }];
  let options = [
    Option<"topology", "topology", "std::string", /*default=*/"\"hgx-h100\"",
           "A preset name (hgx-h100, hgx-h200, dgx-a100, pcie-8, gb200-nvl72, "
           "with :nodes=N) or a JSON file">
  ];
  let dependentDialects = ["::coll::CollDialect"];
}

def CollSplitChunksPass : Pass<"coll-split-chunks", "::coll::AlgorithmOp"> {
  let summary = "Split chunks into sub-chunks and replicate over parallel instances";
  let description = [{
    Every chunk becomes `instances x pipeline` sub-chunks. Instance j moves
    sub-chunks j*P .. (j+1)*P of every chunk with the whole program, on its
    own channels (channel c becomes c + j * channels), as MSCCLang's
    instances do; within an instance each op is split into P ops of one
    sub-chunk range each (an op's `@pipeline(p)` asks for p pieces; P is the
    least common multiple of the option and every annotation), so that
    neighbours start forwarding the first piece while later ones arrive.
    A rank then injects P pieces before it forwards any, so the plan
    records `fifo_depth = P`, the slots its connections need. An op (or
    piece) over more than `stream` chunks streams: it becomes ops of at
    most `stream` chunks each, in order, each a step of its own, so that
    the runtime's slice (what a slot holds for the widest step) does not
    shrink with the widest op.
  }];
  let options = [
    Option<"pipeline", "pipeline", "int64_t", /*default=*/"1", "Sub-chunks per chunk">,
    Option<"instances", "instances", "int64_t", /*default=*/"1",
           "Parallel copies of the program on separate channels">,
    Option<"stream", "stream", "int64_t", /*default=*/"0",
           "Most chunks one op moves; a wider op streams as several (0: no limit)">
  ];
  let dependentDialects = ["::coll::CollDialect"];
}

def CollMultimemPass : Pass<"coll-multimem", "::mlir::ModuleOp"> {
  let summary = "Use NVLink multicast or peer windows within one NVLink switch domain";
  let description = [{
    Where all ranks share one NVLink switch domain, a reduce of one chunk
    over every rank becomes one load-reduce on the rank that keeps the
    result, and copies of one chunk to the same place on every rank one
    store to every rank, when nothing else can race with them: with
    `multimem` where the switches multicast (the topology's `multicast`,
    NVLS on Hopper and later), else with loads and stores through each
    rank's window (`read_reduce`, `put`). A copy of another rank's input
    that nothing reads afterwards becomes a `get` from that rank's window.
    Marks the ops (`coll.multimem`, `coll.read_reduce`,
    `coll.multimem_st = group`, `coll.put = group`, `coll.get`) for
    coll-to-rank-streams. Runs after coll-split-chunks, on the pieces.
  }];
  let options = [
    Option<"topology", "topology", "std::string", /*default=*/"\"\"",
           "The machine, if the algorithm does not name one (coll-map-ranks)">
  ];
  let dependentDialects = ["::coll::CollDialect"];
}

def CollToRankStreamsPass : Pass<"coll-to-rank-streams", "::mlir::ModuleOp"> {
  let summary = "Lower each global-view algorithm to per-rank threadblock streams";
  let description = [{
    Replaces every `coll.algorithm` by a `coll.plan`: each copy between ranks
    becomes a send and a receive, each reduction a receive-reduce (or a local
    reduce), ordered by data-dependency depth so that independent chunks
    pipeline as in NCCL's ring. Every connection (peer, direction, channel)
    belongs to one threadblock, which serves at most one receive and one send
    peer; a receive whose data is forwarded next shares a threadblock with
    that send so that `coll-fuse` can join them, and where a rank would need
    more than `max-threadblocks`, a connection that only sends shares one
    with a connection that only receives. Steps that touch a chunk
    another threadblock of the rank also touches carry explicit `deps`.
    An algorithm whose rank exchanges with more peers than `max-threadblocks`
    (the limit of `coll-assign-channels`) is refused before it is lowered.
  }];
  let options = [
    Option<"maxThreadblocks", "max-threadblocks", "int64_t", /*default=*/"128",
           "Threadblocks per rank">
  ];
  let dependentDialects = ["::coll::CollDialect"];
}

def CollAssignChannelsPass : Pass<"coll-assign-channels", "::coll::PlanOp"> {
  let summary = "Number channels densely and keep threadblocks within the limits";
  let description = [{
    Channels come from `@channel` and from instances; this pass renumbers the
    ones a plan uses as 0, 1, ... in order of first use and checks the limits
    of the runtime: at most `max-channels` channels (32, as MSCCL; NCCL's own
    maximum is 64) and at most `max-threadblocks` threadblocks on a rank (one
    CUDA block each, all co-resident: 128 leaves room on a 132-SM H100/H200).
  }];
  let options = [
    Option<"maxChannels", "max-channels", "int64_t", /*default=*/"32", "Channels per plan">,
    Option<"maxThreadblocks", "max-threadblocks", "int64_t", /*default=*/"128",
           "Threadblocks per rank">
  ];
  let dependentDialects = ["::coll::CollDialect"];
}

def CollFusePass : Pass<"coll-fuse", "::coll::PlanOp"> {
  let summary = "Fuse receives with the sends and reductions that follow them";
  let description = [{
    In each threadblock, a receive followed by a send of the received chunks
    becomes `recv_copy_send`; a receive-reduce followed by a send of the
    result becomes `recv_reduce_copy_send`, or `recv_reduce_send` when the
    stored result is never read before it is overwritten (and is not part of
    the collective's output). A rewrite pattern on each send: the fused step
    keeps the send's id, so no dep changes.
  }];
  let dependentDialects = ["::coll::CollDialect"];
}

def CollNumberStepsPass : Pass<"coll-number-steps", "::coll::PlanOp"> {
  let summary = "Rename each step by its position in its threadblock";
  let description = [{
    Steps keep their ids while others around them are erased or made (by
    `coll-fuse`, for one), so ids can have gaps. This pass renames every
    step to its position and its deps with it, as the emitters and MSCCL's
    XML, which count steps, expect; a plan whose ids are positions prints
    none.
  }];
}

def CollRerollPass : Pass<"coll-reroll", "::coll::PlanOp"> {
  let summary = "Give threadblocks with the same runs of steps one shared shape";
  let description = [{
    Groups each plan's threadblocks by their runs of like steps and gives
    each group a `coll.shape`: per run, every operand is an affine function
    of the rank and the step within the run where one fits, or a table
    entry. The emitter writes one function per shape, so the code of a
    regular algorithm does not grow with the rank count. The plan keeps its
    steps, which the verifier checks the shapes reproduce. A run of one
    `multimem_ld_reduce` followed by a run of one `multimem_st` that stores
    the chunk it reduced and waits for nothing gets `fuse_next`: the two
    are one primitive call, the reduced values kept in registers between.
  }];
}

def CollSelectProtocolPass : Pass<"coll-select-protocol", "::mlir::ModuleOp"> {
  let summary = "Choose Simple, LL or LL128 per message-size range";
  let description = [{
    Estimates each plan's time per protocol with the α-β cost model of its
    topology (the plan's `rank_map` and `topology`, or `topology`):
    `base + depth x hop latency + bytes on the busiest port / (bandwidth x
    payload efficiency)`, where depth is the longest threadblock. The
    message-size axis splits where the cheapest protocol changes, and the
    plan is replaced by one copy per range (`@name_LL`, ...) with `bytes
    [min, max)`, `algorithm("name")` and the protocol on every threadblock.
    LL128 is only chosen when every connection is NVLink. With `direct`,
    connections within an NVLink switch domain that run Simple at both ends
    become direct, and each of their sending steps whose receiving step
    stores what arrives (without reducing into it) names that destination
    as `direct(...)`.
    `protocol` forces one protocol for all sizes; `message-size` keeps only
    the range that holds that size.
  }];
  let options = [
    Option<"topology", "topology", "std::string", /*default=*/"\"\"",
           "Topology when the plan has none (default hgx-h100)">,
    Option<"protocol", "protocol", "std::optional<::coll::Protocol>",
           /*default=*/"std::nullopt",
           "Force Simple, LL or LL128 (lib/Lowering/ProtocolOption.h parses them)">,
    Option<"messageSize", "message-size", "int64_t", /*default=*/"-1",
           "Keep only the variant for this many bytes per rank">,
    Option<"direct", "direct", "bool", /*default=*/"true",
           "Use direct load/store on NVLink switch connections running Simple">
  ];
  let dependentDialects = ["::coll::CollDialect"];
}

def CollChooseChannelsPass : Pass<"coll-choose-channels", "::mlir::ModuleOp"> {
  let summary = "Choose replicas and threads per threadblock for each message size";
  let description = [{
    Gives each plan variant a `launch` table: from which size per rank the
    runtime runs how many replicas of the plan's threadblocks (each on a
    share of the loops, on connections of its own, like NCCL's channels),
    with how many threads each. At the top of the range the plan has as
    many replicas as its busiest link needs, at one threadblock's
    bandwidth each (NCCL's per-channel rate on Hopper), and 512 threads;
    below, NCCL's rule applies: while a chunk has fewer bytes than
    replicas x threads x the protocol's threshold (Simple 64, LL and LL128
    8 bytes a thread), halve the replicas, then the threads, down to 64.
    A threadblock with steps on other ranks' buffers (multimem, peer
    windows) counts as sending over its GPU's NVLink, as NCCL runs NVLS and
    its symmetric kernels on many channels; its replicas work on loops of
    their own and all arrive at the plan's barriers. `max-replicas` caps
    the replicas (1 when `--instances` already replicates the program).
  }];
  let options = [
    Option<"topology", "topology", "std::string", /*default=*/"\"\"",
           "Topology when the plan has none (default hgx-h100)">,
    Option<"maxReplicas", "max-replicas", "int64_t", /*default=*/"32",
           "The most replicas a plan may run">
  ];
  let dependentDialects = ["::coll::CollDialect"];
}

def CollNameAlgorithmsPass : Pass<"coll-name-algorithms", "::mlir::ModuleOp"> {
  let summary = "Rename the module's algorithms and their plans after a given name";
  let description = [{
    Gives the plans of a module the names their emitted symbols take, so
    that code compiled from one file several times (for other rank counts
    or parameters) links into one program. With one algorithm in the
    module, it takes `name`; with several, each algorithm `a` becomes
    `name_a`. A plan named after its algorithm (`@ring_LL` of `ring`) is
    renamed with it (`@name_LL`); any other plan `@p` becomes `@name_p`.
    `name` must be a C identifier.
  }];
  let options = [
    Option<"name", "name", "std::string", /*default=*/"\"\"",
           "The new name (a C identifier)">
  ];
}

def CollVerifyPlanPass : Pass<"coll-verify-plan", "::coll::PlanOp"> {
  let summary = "Prove that each plan runs without deadlock and computes its collective";
  let description = [{
    Executes every `coll.plan` with FIFOs of depth one, or of the plan's
    `fifo_depth` when it was pipelined (a plan that finishes so finishes with
    any deeper FIFO): every receive must find its send on
    the same connection in the same order with the same size, no step may wait
    forever (a cycle through threadblock order, dependencies and FIFO
    back-pressure), a step whose sender names a direct destination must
    store there what it receives without reducing into it, and the final
    buffers must satisfy the postcondition.
    Errors name the rank, threadblock and step.
  }];
  let options = [
    Option<"mscclLimits", "msccl-limits", "bool", /*default=*/"false",
           "Also enforce the MSCCL runtime's limits (32 channels, 32 send and "
           "32 receive threadblocks per channel, 256 steps per threadblock)">
  ];
  let dependentDialects = ["::coll::CollDialect"];
}

#endif // COLL_LOWERING_PASSES
