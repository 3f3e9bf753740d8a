//===- Kernel.cpp - Plans as CUDA/host C++ --------------------------------===//
//
// Prints what the plan says and nothing else: a device function per
// coll.shape (coll-reroll), whose runs become loops of primitive calls with
// the operands the shape gives (with the direct destinations
// coll-select-protocol chose), each threadblock's table of what its shape
// reads from one (waits on other threadblocks, operands no affine function
// gives), and tables of the plan in abi.h's layout. Loop geometry, FIFOs
// and data types are the runtime's, at launch time.
//
//===----------------------------------------------------------------------===//

#include "lib/Target/Kernel.h"
#include "dialect/PeerSteps.h"
#include "lib/Target/KernelAbi.h"

#include "mlir/IR/Location.h"
#include "mlir/Support/IndentedOstream.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/FormattedStream.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace coll;

namespace {

/// Where a step's comment naming its source line starts.
constexpr unsigned kCommentColumn = 48;

std::string sourceLine(Location loc) {
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    return (llvm::sys::path::filename(file.getFilename().getValue()) + ":" + Twine(file.getLine()))
        .str();
  return "";
}

/// The ThreadblockFlag bits of a threadblock's table entry.
int32_t threadblockFlags(ThreadblockOp tb, bool waitedOn) {
  return (tb.getDirectRecv() ? collc::kTbDirectRecv : 0) |
         (tb.getDirectSend() ? collc::kTbDirectSend : 0) |
         (usesPeers(tb) ? collc::kTbPeerSteps : 0) | (usesMultimem(tb) ? collc::kTbMultimem : 0) |
         (waitedOn ? collc::kTbWaitedOn : 0);
}

/// A plan's threadblocks in table order (rank by rank), and what the
/// runtime's tables say about them.
struct PlanShape {
  SmallVector<std::pair<int64_t, ThreadblockOp>> threadblocks; // (rank, op)
  llvm::DenseMap<std::pair<int64_t, int64_t>, int64_t> index;  // (rank, id) -> entry
  SmallVector<int64_t> steps;                                  // per entry
  SmallVector<bool> waitedOn; // per entry: a threadblock of its rank waits for its steps
  int64_t widest = 1;         // chunks of the widest step
  SmallVector<std::string> scratchNames;
  explicit PlanShape(PlanOp plan) {
    for (auto rank : plan.getBody().getOps<RankOp>())
      for (auto tb : rank.getBody().getOps<ThreadblockOp>()) {
        index[{rank.getRank(), tb.getId()}] = threadblocks.size();
        threadblocks.push_back({rank.getRank(), tb});
        int64_t count = 0;
        for (auto step : tb.getBody().front().getOps<StepOpInterface>()) {
          ++count;
          widest = std::max(widest, step.getChunkCount());
        }
        steps.push_back(count);
      }
    waitedOn.assign(threadblocks.size(), false);
    for (auto [rank, tb] : threadblocks)
      for (auto step : tb.getBody().front().getOps<StepOpInterface>())
        for (StepRef dep : step.getDepRefs())
          waitedOn[index.lookup({rank, dep.tb})] = true;
    if (auto scratch = plan.getScratchAttr())
      for (NamedAttribute e : scratch)
        scratchNames.push_back(e.getName().str());
  }
};

/// What printing a module of plans needs: the output, indented by
/// raw_indented_ostream over a stream that counts columns (for the comments
/// naming source lines), the input's name, and the plan being printed.
class KernelEmitter {
public:
  KernelEmitter(raw_ostream &out, StringRef source)
      : columns(out), os(columns), source(llvm::sys::path::filename(source).str()) {}

  raw_indented_ostream &ostream() { return os; }
  /// Pads the current line to the column of end-of-line comments.
  raw_indented_ostream &toCommentColumn() {
    columns.PadToColumn(kCommentColumn);
    return os;
  }
  StringRef sourceFile() const { return source; }

  LogicalResult emitOperation(Operation &op);

  /// The plan being printed.
  const PlanShape *shape = nullptr;
  /// The (type, op) pairs that plans which reduce get kernels for.
  SmallVector<TypedPair> typed;

private:
  llvm::formatted_raw_ostream columns;
  raw_indented_ostream os;
  std::string source;
};

/// Whether a collective's plans reduce, and so get kernels per (type, op).
bool reduces(Collective c) {
  return c == Collective::allreduce || c == Collective::reducescatter || c == Collective::reduce;
}
std::string typedKernel(const TypedPair &p) { return "kernel_" + p.suffix; }

/// The device primitive of each step kind.
StringRef callee(RunKind step) {
  switch (step) {
  case RunKind::send:
    return "send";
  case RunKind::recv:
    return "recv";
  case RunKind::recv_copy_send:
    return "recvCopySend";
  case RunKind::recv_reduce_send:
    return "recvReduceSend";
  case RunKind::recv_reduce_copy:
    return "recvReduceCopy";
  case RunKind::recv_reduce_copy_send:
    return "recvReduceCopySend";
  case RunKind::local_copy:
    return "copy";
  case RunKind::local_reduce:
    return "reduce";
  case RunKind::multimem_ld_reduce:
    return "multimemLdReduce";
  case RunKind::multimem_st:
    return "multimemSt";
  case RunKind::read_reduce:
    return "readReduce";
  case RunKind::put:
    return "put";
  case RunKind::get:
    return "get";
  }
  llvm_unreachable("a step kind without a primitive");
}

/// `a*r + b*k + c` mod m as C++ over `r` (the rank) and `k` (the step in
/// its run, 0 when the run has one), without the mod where nothing reaches m.
std::string affine(AffineFieldAttr f, int64_t ranks, int64_t steps) {
  int64_t a = f.getA(), b = steps > 1 ? f.getB() : 0, c = f.getC(), m = f.getM();
  SmallVector<std::string, 3> terms;
  if (a)
    terms.push_back(a == 1 ? "r" : std::to_string(a) + " * r");
  if (b)
    terms.push_back(b == 1 ? "k" : std::to_string(b) + " * k");
  if (c || terms.empty())
    terms.push_back(std::to_string(c));
  std::string sum = llvm::join(terms, " + ");
  if (a * (ranks - 1) + b * (steps - 1) + c < m)
    return sum;
  return "(" + sum + ") % " + std::to_string(m);
}

/// A chunk as the primitives take it: `in(k + 3)`, `out(t[1], 4)`,
/// `scratch(kScratch_red, r)`, `in(t[0], int32_t(t[1]))` (a count from the
/// table).
std::string ref(StringRef buffer, const std::string &index, const std::string &count) {
  std::string args = index;
  if (count != "1")
    args += ", " + count;
  if (buffer == "in" || buffer == "out")
    return (buffer + "(" + args + ")").str();
  return "scratch(kScratch_" + cIdent(buffer) + ", " + args + ")";
}

/// What a step of a run names, as (role, C++ text): affine operands as
/// expressions, the others from the table at `t[offset]` on, each followed
/// there by its count where that is the table's.
SmallVector<std::pair<FieldRole, std::string>> operands(RunOp run, int64_t ranks, int64_t &offset) {
  SmallVector<std::pair<FieldRole, std::string>> out;
  auto next = [&] { return "t[" + std::to_string(offset++) + "]"; };
  for (Attribute attr : run.getFields()) {
    FieldRole role;
    StringRef buffer;
    int64_t count;
    std::string index;
    if (auto f = llvm::dyn_cast<AffineFieldAttr>(attr)) {
      role = f.getRole(), buffer = f.getBuffer(), count = f.getCount();
      index = affine(f, ranks, run.getCount());
    } else {
      auto t = llvm::cast<TableFieldAttr>(attr);
      role = t.getRole(), buffer = t.getBuffer(), count = t.getCount();
      index = next();
    }
    if (role == FieldRole::peer) {
      out.push_back({role, index});
      continue;
    }
    std::string chunks = count == kTableCount ? "int32_t(" + next() + ")" : std::to_string(count);
    out.push_back({role, ref(buffer, index, chunks)});
  }
  return out;
}

/// A run: its waits from the table, then one primitive call per step, in
/// a loop over `k` when it has several; with `fused` (the run after one
/// that says `fuse_next`), the call does that store too.
LogicalResult printOperation(KernelEmitter &e, RunOp run, int64_t ranks, RunOp fused = {}) {
  raw_indented_ostream &os = e.ostream();
  StringRef fn = fused ? "multimemAllReduce" : callee(run.getStep());
  int64_t offset = 0;
  SmallVector<std::string> waits;
  // A number of deps that differs between threadblocks comes first, and the
  // step's other values follow its deps.
  if (run.getTableWaits())
    waits.push_back("for (int64_t n = *t++; n > 0; --n, t += 3)\n  b.wait(t[0], t[1], t[2]);");
  for (int64_t w = 0; w < int64_t(run.getWaits()); ++w, offset += 3)
    waits.push_back(
        llvm::formatv("b.wait(t[{0}], t[{1}], t[{2}]);", offset, offset + 1, offset + 2));
  auto args = operands(run, ranks, offset);
  if (fused) {
    int64_t none = 0;
    args.push_back(operands(fused, ranks, none).back());
  }
  std::string call = ("b." + fn + "(").str();
  bool reduce = run.getStep() == RunKind::local_reduce;
  bool first = true;
  for (auto [i, arg] : llvm::enumerate(args)) {
    auto [role, text] = arg;
    bool src = role == FieldRole::src;
    bool firstSrc = src && (i == 0 || args[i - 1].first != FieldRole::src);
    bool lastSrc = src && (i + 1 == args.size() || args[i + 1].first != FieldRole::src);
    call += first ? "" : ", ";
    first = false;
    if (reduce && firstSrc)
      call += "{";
    call += role == FieldRole::direct ? "direct(" + text + ")" : text;
    if (reduce && lastSrc)
      call += "}";
  }
  call += ");";
  std::string line = sourceLine(run.getLoc());
  auto body = [&] {
    for (const std::string &w : waits)
      os << w << "\n";
    os << call;
    if (!line.empty())
      e.toCommentColumn() << "// " << line;
    os << "\n";
    if (offset)
      os << "t += " << offset << ";\n";
  };
  if (run.getCount() == 1) {
    body();
    return success();
  }
  auto loop = os.scope(
      llvm::formatv("for (int64_t k = 0; k < {0}; ++k) {{\n", run.getCount()).str(), "}\n");
  body();
  return success();
}

/// A shape as the device function its threadblocks share, over their rank
/// and their table.
LogicalResult printOperation(KernelEmitter &e, ShapeOp shape) {
  raw_indented_ostream &os = e.ostream();
  int64_t ranks = shape->getParentOfType<PlanOp>().getRanks();
  // Names only the parameters it reads, so that compilers see no unused one.
  bool rank = false, table = false;
  for (auto run : shape.getBody().front().getOps<RunOp>()) {
    table |= run.getWaits() > 0 || run.getTableWaits();
    for (Attribute attr : run.getFields()) {
      auto f = llvm::dyn_cast<AffineFieldAttr>(attr);
      rank |= f && f.getA() != 0;
      table |= !f;
    }
  }
  auto body = os.scope(llvm::formatv("template <class Block>\nCOLLC_DEVICE void shape{0}(Block &b, "
                                     "int64_t{1}, const int64_t *{2}) {{\n",
                                     shape.getId(), rank ? " r" : "", table ? "t" : "")
                           .str(),
                       "}\n\n");
  auto runs = llvm::to_vector(shape.getBody().front().getOps<RunOp>());
  for (size_t i = 0; i < runs.size(); ++i) {
    RunOp fused = runs[i].getFuseNext() ? runs[i + 1] : RunOp();
    if (failed(printOperation(e, runs[i], ranks, fused)))
      return failure();
    i += bool(fused);
  }
  return success();
}

/// The values a threadblock's shape reads from its table, step by step: the
/// number of deps where the run says `table_waits`, per dep the waited-for
/// threadblock's index, step and step count, then the operands no affine
/// function gives and the counts that are the table's.
SmallVector<int64_t> tableOf(ThreadblockOp tb, ShapeOp shape, const PlanShape &plan) {
  int64_t rank = tb->getParentOfType<RankOp>().getRank();
  SmallVector<int64_t> table;
  auto steps = tb.getBody().front().getOps<StepOpInterface>();
  auto it = steps.begin();
  for (auto run : shape.getBody().front().getOps<RunOp>()) {
    bool directSlot = runHasDirect(run);
    for (int64_t k = 0; k < int64_t(run.getCount()); ++k, ++it) {
      SmallVector<StepRef, 2> deps = (*it).getDepRefs();
      if (run.getTableWaits())
        table.push_back(deps.size());
      for (StepRef dep : deps) {
        int64_t other = plan.index.lookup({rank, dep.tb});
        table.append({other, dep.id, plan.steps[other]});
      }
      for (auto [field, attr] : llvm::zip(stepFields(*it, directSlot), run.getFields())) {
        auto affine = llvm::dyn_cast<AffineFieldAttr>(attr);
        if (!affine)
          table.push_back(field.value);
        if ((affine ? affine.getCount() : llvm::cast<TableFieldAttr>(attr).getCount()) ==
            kTableCount)
          table.push_back(field.count);
      }
    }
  }
  return table;
}

/// A plan as a namespace: its scratch buffers' indices, a device function
/// per shape, each threadblock's table, the kernel that dispatches to them
/// and the threadblock table.
LogicalResult printOperation(KernelEmitter &e, PlanOp plan) {
  if (auto scratch = plan.getScratchAttr(); scratch && scratch.size() > collc::kMaxScratch)
    return plan.emitError("at most ") << collc::kMaxScratch << " scratch buffers can be emitted";
  // Waits name steps by their position.
  if (failed(verifyStepsNumbered(plan)) || failed(verifyProtocolSelected(plan)))
    return failure();
  PlanShape shape(plan);
  e.shape = &shape;
  raw_indented_ostream &os = e.ostream();
  std::string ns = cIdent(plan.getSymName());
  os << "// Plan " << plan.getSymName() << ": " << stringifyCollective(plan.getCollective())
     << " on " << plan.getRanks() << " ranks, " << plan.getChunks() << " chunks per unit"
     << (plan.getInplace() ? ", in place" : "") << ", inputs of [" << plan.getMinBytes().value_or(0)
     << ", " << plan.getMaxBytes().value_or(INT64_MAX) << ") bytes per rank.\n";
  os << "namespace " << ns << " {\nusing namespace collc;\n";
  // The kernel is compiled for one protocol where all its FIFOs have it.
  Protocol protocol = plan.getProtocol().value_or(Protocol::Simple);
  bool one = llvm::all_of(shape.threadblocks, [&](auto entry) {
    ThreadblockOp tb = entry.second;
    return (!tb.getRecv() && !tb.getSend()) ||
           tb.getProtocol().value_or(Protocol::Simple) == protocol;
  });
  os << "constexpr int32_t kProtocol = " << (one ? abiName(protocol) : "kAnyProtocol") << ";\n";
  // How many primitive calls the shapes hold: a kernel with few inlines
  // them (collc/cuda.h).
  int64_t calls = 0;
  for (auto s : plan.getBody().front().getOps<ShapeOp>())
    calls += llvm::range_size(s.getBody().front().getOps<RunOp>());
  os << "constexpr int32_t kCalls = " << calls << ";\n";
  for (auto [i, n] : llvm::enumerate(shape.scratchNames))
    os << "constexpr int32_t kScratch_" << cIdent(n) << " = kScratch0 + " << i << ";\n";
  os << "\n";
  llvm::DenseMap<int64_t, ShapeOp> shapes;
  for (auto s : plan.getBody().front().getOps<ShapeOp>()) {
    shapes[s.getId()] = s;
    if (failed(printOperation(e, s)))
      return failure();
  }

  // Each threadblock's table, where its shape reads one: host data that a
  // launch hands to the kernel, so the kernel's code and data do not grow
  // with the threadblocks.
  SmallVector<size_t> tableLength;
  for (auto [index, entry] : llvm::enumerate(shape.threadblocks)) {
    auto [rank, tb] = entry;
    std::optional<uint64_t> id = tb.getShape();
    if (!id)
      return tb.emitOpError("has no shape; run coll-reroll first");
    SmallVector<int64_t> table = tableOf(tb, shapes.lookup(*id), shape);
    tableLength.push_back(table.size());
    if (table.empty())
      continue;
    os << "// Rank " << rank << ", threadblock " << tb.getId() << ".\n";
    os << "const int64_t t" << index << "[] = {";
    for (auto [i, v] : llvm::enumerate(table))
      os << (i ? (i % 16 ? ", " : ",\n    ") : "") << v;
    os << "};\n";
  }
  if (llvm::any_of(tableLength, [](size_t n) { return n; }))
    os << "\n";

  {
    auto run =
        os.scope("template <int32_t T, int32_t O> COLLC_DEVICE void run(const Args *a) {\n", "}\n");
    os << "BlockOf<kProtocol, T, O, kCalls> b(a);\n";
    // A threadblock keeps its shape, so each shape has a loop of its own:
    // what one hoists out of its loop is then live in that loop only, not
    // in one loop of every shape (the hierarchical Simple kernel's 72
    // bytes of spills, where each shape alone had none). The rank and the
    // table are read per loop, so that no register holds them across the
    // calls of peer steps (the two-shot's).
    os << "switch (a->shape) {\n";
    for (auto s : plan.getBody().front().getOps<ShapeOp>())
      os << "case " << s.getId() << ": while (b.nextLoop()) shape" << s.getId()
         << "(b, b.rank(), b.table()); break;\n";
    os << "}\n";
  }
  // One kernel for every (type, op), and where the plan reduces one per
  // common pair, its arithmetic inlined (built only for GPUs).
  os << "COLLC_KERNEL(kernel) { run<kAnyType, kAnyOp>(COLLC_BLOCK_ARGS); }\n";
  ArrayRef<TypedPair> typed = reduces(plan.getCollective()) ? e.typed : ArrayRef<TypedPair>();
  for (const TypedPair &p : typed)
    os << "COLLC_TYPED_KERNEL(" << typedKernel(p) << ", run<" << p.typeName << ", " << p.opName
       << ">)\n";
  os << "\n";
  if (!typed.empty()) {
    os << "const TypedKernel typed[] = {\n";
    for (const TypedPair &p : typed)
      os << "    {" << p.typeName << ", " << p.opName << ", COLLC_CUDA_FN(" << typedKernel(p)
         << ")},\n";
    os << "};\n";
  }

  os << "const ThreadblockDesc threadblocks[] = {\n";
  {
    ContinuationScope elements(os);
    os << "// rank, id, recv, send, channel, protocol, direct/peer steps, steps,\n"
       << "// shape, table\n";
    for (auto [index, entry] : llvm::enumerate(shape.threadblocks)) {
      auto [rank, tb] = entry;
      std::string table = tableLength[index]
                              ? std::to_string(tableLength[index]) + ", t" + std::to_string(index)
                              : "0, nullptr";
      os << llvm::formatv(
          "{{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}},\n", rank, tb.getId(),
          tb.getRecv() ? int64_t(*tb.getRecv()) : -1, tb.getSend() ? int64_t(*tb.getSend()) : -1,
          tb.getChannel(), abiName(tb.getProtocol().value_or(Protocol::Simple)),
          threadblockFlags(tb, shape.waitedOn[index]), shape.steps[index], *tb.getShape(), table);
    }
  }
  os << "};\n";
  if (LaunchAttr launch = plan.getLaunchAttr()) {
    os << "const LaunchShape launches[] = {\n";
    {
      ContinuationScope elements(os);
      os << "// from bytes per rank, replicas, threads\n";
      for (const LaunchRange &r : launch.getRanges())
        os << "{" << r.minBytes << "LL, " << r.replicas << ", " << r.threads << "},\n";
    }
    os << "};\n";
  }
  os << "} // namespace " << ns << "\n\n";
  e.shape = nullptr;
  return success();
}

/// A plan's entry in its algorithm's table of PlanDesc.
void printPlanDesc(raw_indented_ostream &os, PlanOp plan, ArrayRef<TypedPair> typed) {
  PlanShape shape(plan);
  std::string ns = cIdent(plan.getSymName());
  // Continuation lines align with the brace.
  os << "{\"" << plan.getSymName() << "\", collc::" << abiName(plan.getCollective()) << ", "
     << plan.getRanks() << ", " << plan.getChunks() << ", "
     << (plan.getRoot() ? int64_t(*plan.getRoot()) : -1) << ", " << (plan.getInplace() ? 1 : 0)
     << ",\n {";
  llvm::interleaveComma(shape.scratchNames, os, [&](const std::string &n) {
    os << llvm::cast<IntegerAttr>(plan.getScratchAttr().get(n)).getInt();
  });
  os << "}, " << shape.scratchNames.size() << ", " << plan.getMinBytes().value_or(0) << "LL, "
     << plan.getMaxBytes().value_or(INT64_MAX) << "LL, collc::" << abiName(*plan.getProtocol())
     << ", " << *plan.getSlots() << ", " << shape.widest << ",\n " << shape.threadblocks.size()
     << ", " << ns << "::threadblocks, COLLC_HOST_FN(" << ns << "::kernel), COLLC_CUDA_FN(" << ns
     << "::kernel),\n "
     << (CollDialect::of(plan.getContext())->getMovesChunksAttrHelper().isAttrPresent(plan) ? 1 : 0)
     << ", ";
  if (LaunchAttr launch = plan.getLaunchAttr())
    os << launch.getRanges().size() << ", " << ns << "::launches, ";
  else
    os << "0, nullptr, ";
  if (std::optional<StringRef> why = plan.getWhy())
    os << "\n " << cString(*why);
  else
    os << "nullptr";
  if (reduces(plan.getCollective()) && !typed.empty())
    os << ", " << typed.size() << ", " << ns << "::typed},\n";
  else
    os << ", 0, nullptr},\n";
}

/// An algorithm: its plans, their table, its AlgorithmDesc and its entry
/// point.
LogicalResult printAlgorithm(KernelEmitter &e, ArrayRef<PlanOp> plans) {
  raw_indented_ostream &os = e.ostream();
  // Internal linkage, so that plans of the same name in other files (the
  // same algorithm compiled for other ranks) link into one program: the
  // runtime reaches them through the descriptor's pointers.
  os << "// The plans are this file's own; the descriptor and the entry point\n"
     << "// below are its only global names.\nnamespace {\n\n";
  for (PlanOp plan : plans)
    if (failed(e.emitOperation(*plan)))
      return failure();
  os << "} // namespace\n\n";
  std::string alg = cIdent(algorithmOf(plans.front()));
  os << "static const collc::PlanDesc " << alg << "_plans[] = {\n";
  {
    ContinuationScope elements(os);
    os << "// name, collective, ranks, chunks, root, inplace, scratch chunks,\n"
       << "// scratch buffers, bytes [min, max), protocol, slots, widest step,\n"
       << "// threadblocks, their table, host kernel, CUDA kernel, whole chunks only,\n"
       << "// launches by size, why this plan, kernels per (type, op)\n";
    for (PlanOp plan : plans)
      printPlanDesc(os, plan, e.typed);
  }
  os << "};\n\n";
  os << "extern \"C\" const collc::AlgorithmDesc collc_algorithm_" << alg << " = {\n";
  {
    ContinuationScope elements(os);
    os << "\"" << alg << "\", " << cString(e.sourceFile()) << ", " << plans.size() << ", " << alg
       << "_plans};\n\n";
  }
  os << "extern \"C\" ";
  printEntryPoint(os, alg, " {\n");
  {
    auto body = os.scope("", "}\n\n");
    os << "return collLaunch(comm, &collc_algorithm_" << alg
       << ", sendbuff, recvbuff, count, datatype, op, stream);\n";
  }
  return success();
}

LogicalResult KernelEmitter::emitOperation(Operation &op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
      .Case<PlanOp>([&](auto o) { return printOperation(*this, o); })
      .Default([](Operation *o) { return o->emitOpError("cannot be emitted as a kernel"); });
}

} // namespace

LogicalResult coll::writeKernels(ModuleOp module, StringRef source, raw_ostream &out,
                                 ArrayRef<TypedPair> typed) {
  KernelEmitter emitter(out, source);
  emitter.typed.assign(typed.begin(), typed.end());
  raw_indented_ostream &os = emitter.ostream();
  os << "// Generated by collc from " << emitter.sourceFile() << ". Do not edit.\n"
     << "//\n"
     << "// nvcc compiles this file into CUDA kernels, a host C++ compiler into\n"
     << "// the host emulation; both need runtime/include and runtime/device.\n\n"
     << "#include \"collc/kernel.h\"\n#include \"collrt.h\"\n\n";
  auto algorithms = plansByAlgorithm(module);
  if (algorithms.empty())
    return module.emitError("no plan to emit");
  for (auto &plans : algorithms)
    if (failed(printAlgorithm(emitter, plans)))
      return failure();
  return success();
}
