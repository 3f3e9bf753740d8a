//===- collc.cpp - The Coll compiler driver -------------------------------===//
//
// Parses a .coll file, elaborates it into global-view IR and proves that each
// algorithm implements its collective. Exits 0 when every algorithm is
// verified and 1 on any error in the user's program.
//
//===----------------------------------------------------------------------===//

#include "Help.h"
#include "HugePages.h"
#include "dialect/CollOps.h"
#include "lib/Analysis/Traffic.h"
#include "lib/Frontend/Elaborate.h"
#include "lib/Lowering/Pipelines.h"
#include "lib/Lowering/ProtocolOption.h"
#include "lib/Topology/Topology.h"
#include "lib/Frontend/Parser.h"
#include "lib/Support/Bytes.h"
#include "lib/Support/Names.h"
#include "lib/Support/Source.h"
#include "lib/Target/Kernel.h"
#include "lib/Target/MscclXml.h"
#include "Paths.h"
#include "Run.h"
#include "ranks/Names.h"
#include "RunLimits.h"
#include "Bound.h"
#include "Sim.h"
#include "Viz.h"
#include "Synth.h"
#include "Tune.h"
#include "Version.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {

enum class Emit { None, Coll, Plan, RankMap, MscclXml, Cuda, Header };

cl::OptionCategory category("collc options");

/// `collc run FILE.coll ...`: compile for the host and run on emulated ranks.
cl::SubCommand &runCommand() {
  static cl::SubCommand command("run", "Compile FILE.coll for the host and run it on --ranks "
                                       "emulated ranks, checking the result");
  return command;
}

/// An option of the compile that `collc run`, `sim` and `viz` read too, as
/// they compile FILE.coll first: each command's help lists what it reads.
struct CompilingCommands {
  void apply(cl::Option &option) const {
    option.addSubCommand(cl::SubCommand::getTopLevel());
    option.addSubCommand(runCommand());
    option.addSubCommand(collc::simCommand());
    option.addSubCommand(collc::vizCommand());
  }
};
constexpr CompilingCommands compilingCommands;

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<file.coll>"), cl::Required,
                               cl::cat(category), compilingCommands);
cl::opt<std::string> outputFile("o", cl::desc("Output file (default: standard output)"),
                                cl::value_desc("file"), cl::init("-"), cl::cat(category));
cl::list<std::string> defines("D", cl::Prefix,
                              cl::desc("Override an algorithm parameter: -D name=value"),
                              cl::value_desc("name=value"), cl::cat(category), compilingCommands);
cl::opt<std::string> algorithm("algorithm", cl::desc("Compile only this algorithm of the file"),
                               cl::value_desc("name"), cl::cat(category), compilingCommands);
cl::opt<std::string>
    algorithmName("name",
                  cl::desc("Name the emitted algorithm: entry point collc_<name>, descriptor "
                           "collc_algorithm_<name>; with several in the file, each algorithm a "
                           "becomes <name>_a"),
                  cl::value_desc("name"), cl::cat(category));
cl::opt<Emit, false, coll::NameParser<Emit>> emit(
    "emit", cl::desc("What to print"), cl::init(Emit::None),
    cl::values(clEnumValN(Emit::None, "none", "a one-line summary per algorithm (default)"),
               clEnumValN(Emit::Coll, "coll", "the verified global-view IR"),
               clEnumValN(Emit::Plan, "plan",
                          "per-rank threadblock streams, fused and "
                          "verified (deadlock-free, correct)"),
               clEnumValN(Emit::RankMap, "rank-map", "the GPU of each rank on --topology"),
               clEnumValN(Emit::MscclXml, "msccl-xml",
                          "MSCCL-IR XML for the MSCCL/RCCL runtimes: one "
                          "<algo>, the size range --message-size picks"),
               clEnumValN(Emit::Cuda, "cuda",
                          "kernels as C++ for nvcc (and for the host "
                          "emulation), all size ranges in one file"),
               clEnumValN(Emit::Header, "header", "the C header of the kernels' entry points")),
    cl::cat(category));
cl::opt<std::string> topology("topology",
                              cl::desc("Place ranks on this machine: " COLLC_TOPOLOGY_HELP),
                              cl::value_desc("name|file"), cl::cat(category), compilingCommands);
cl::opt<std::optional<coll::Protocol>>
    protocol("protocol", cl::desc("Force the wire protocol: Simple, LL or LL128"),
             cl::cat(category), compilingCommands);
cl::opt<std::string>
    messageSizeText("message-size",
                    cl::desc("Keep only the plan variant for this many bytes per rank (K, M, G "
                             "may follow)"),
                    cl::value_desc("bytes"), cl::cat(category));
/// --message-size, read; -1 keeps every variant.
int64_t messageSize = -1;
cl::opt<int64_t> pipelineDepth("pipeline",
                               cl::desc("Split every chunk into this many pipelined sub-chunks"),
                               cl::value_desc("k"), cl::init(1), cl::cat(category),
                               compilingCommands);
cl::opt<int64_t> instanceCount("instances",
                               cl::desc("Run this many copies of the program on separate channels"),
                               cl::value_desc("k"), cl::init(1), cl::cat(category),
                               compilingCommands);
cl::opt<int64_t> streamWidth("stream",
                             cl::desc("Most chunks one step moves: a wider copy or reduce "
                                      "streams as several steps, each through a FIFO slot "
                                      "(0: no limit)"),
                             cl::value_desc("k"), cl::init(coll::kDefaultStream), cl::cat(category),
                             compilingCommands);
cl::opt<bool> noMultimem("no-multimem",
                         cl::desc("Do not use NVLink multicast (multimem) or peer "
                                  "windows (read_reduce, put, get) even where --topology "
                                  "has them"),
                         cl::cat(category), compilingCommands);
cl::opt<std::string>
    kernelsFor("kernels-for",
               cl::desc("With --emit=cuda: the (type, op) pairs that plans which reduce get "
                        "a kernel of their own for, its arithmetic inlined, as "
                        "float32:sum,bfloat16:max or none (default: float32, float16 and "
                        "bfloat16 sums)"),
               cl::value_desc("pairs"), cl::cat(category), compilingCommands);
cl::opt<bool> noVerify("no-verify",
                       cl::desc("Skip the proof that each algorithm implements its "
                                "collective (to inspect a wrong program's IR)"),
                       cl::cat(category), compilingCommands);
cl::opt<bool> verifyEach("verify-each",
                         cl::desc("Check the IR's invariants after every pass, as collc-opt "
                                  "does (slower; for debugging collc)"),
                         cl::cat(category), compilingCommands);
cl::opt<bool> verifyDiagnostics(
    "verify-diagnostics",
    cl::desc("Check the errors against expected-error comments in the input (tests)"),
    cl::cat(category));

// Which command compiles: `collc run`, `sim` or `viz` rather than the
// compile alone.
bool runMode = false;
bool simMode = false;
bool vizMode = false;
cl::OptionCategory runCategory("collc run options");
cl::opt<int64_t> runRanks("ranks", cl::desc("Ranks to run (sets -D ranks= unless given)"),
                          cl::value_desc("R"), cl::init(0), cl::cat(runCategory),
                          cl::sub(runCommand()));
cl::opt<std::string> runCount("count",
                              cl::desc("Elements (NCCL's count) per rank; K, M, G may follow"),
                              cl::value_desc("N"), cl::init("1048576"), cl::cat(runCategory),
                              cl::sub(runCommand()));
cl::opt<std::string> runType("dtype",
                             cl::desc("int8 uint8 int32 uint32 int64 uint64 half float double "
                                      "bfloat16 (float16/32/64 too)"),
                             cl::value_desc("type"), cl::init("float"), cl::cat(runCategory),
                             cl::sub(runCommand()));
cl::opt<std::string> runOp("op", cl::desc("sum prod max min avg"), cl::value_desc("op"),
                           cl::init("sum"), cl::cat(runCategory), cl::sub(runCommand()));
cl::opt<bool> runInplace("inplace", cl::desc("Pass the same buffer as input and output"),
                         cl::cat(runCategory), cl::sub(runCommand()));
cl::opt<std::string> runIters("iters", cl::desc("Runs; the best time is printed"),
                              cl::value_desc("k"), cl::init("1"), cl::cat(runCategory),
                              cl::sub(runCommand()));
cl::opt<std::string> runTransport("transport",
                                  cl::desc("shm (the default), socket, or ib (an RDMA NIC)"),
                                  cl::value_desc("name"), cl::init("shm"), cl::cat(runCategory),
                                  cl::sub(runCommand()));
cl::opt<bool> runKeep("keep", cl::desc("Keep the generated kernel source and library"),
                      cl::cat(runCategory), cl::sub(runCommand()));

LogicalResult parseDefines(coll::ElaborateOptions &options) {
  for (const std::string &d : defines) {
    auto [name, value] = llvm::StringRef(d).split('=');
    name = name.trim();
    int64_t v;
    if (name.empty() || value.trim().getAsInteger(0, v)) {
      llvm::errs() << "collc: error: -D expects name=integer, got '" << d << "'\n";
      return failure();
    }
    options.defines.emplace_back(name.str(), v);
  }
  return success();
}

void printSummary(ModuleOp module, llvm::raw_ostream &os) {
  for (auto alg : module.getOps<coll::AlgorithmOp>()) {
    size_t ops = alg.getBody().front().getOperations().size();
    auto count = [&](uint64_t n, const char *what) {
      os << n << ' ' << what << (n == 1 ? "" : "s");
    };
    os << alg.getSymName() << ": " << coll::stringifyCollective(alg.getCollective()) << " on ";
    count(alg.getRanks(), "rank");
    os << ", ";
    count(alg.getChunks(), "chunk");
    os << ", ";
    count(ops, "chunk operation");
    os << (noVerify ? ": not verified\n" : ": verified\n");
  }
}

/// One line per rank, then how much traffic crosses nodes and rails.
void printRankMap(ModuleOp module, llvm::raw_ostream &os) {
  for (auto alg : module.getOps<coll::AlgorithmOp>()) {
    DenseI64ArrayAttr map = alg.getRankMapAttr();
    std::optional<StringRef> spec = alg.getTopology();
    llvm::Expected<coll::Topology> topo = coll::loadTopology(spec.value_or(""));
    if (!map || !spec || !topo) {
      llvm::consumeError(topo.takeError());
      continue;
    }
    os << alg.getSymName() << " on " << *spec << ":\n";
    for (auto [rank, gpu] : llvm::enumerate(map.asArrayRef())) {
      const coll::Gpu &g = topo->gpus[gpu];
      os << "  rank " << rank << " -> gpu " << gpu << " (node " << g.node << ", local " << g.local
         << ", nic " << g.nic << ")\n";
    }
    auto links = coll::rankPairTraffic(alg);
    int inter = 0, crossRail = 0;
    for (auto &[pair, chunks] : links) {
      auto [a, b] = pair;
      int ga = map[a], gb = map[b];
      if (topo->gpus[ga].node != topo->gpus[gb].node) {
        ++inter;
        crossRail += !topo->sameRail(ga, gb);
      }
    }
    os << "  rank pairs that communicate: " << links.size() << ", across nodes: " << inter
       << ", of which across rails: " << crossRail << "\n";
  }
}

/// The program's module, elaborated with the -D values; null on an error,
/// which is reported. A -D that no parameter takes is reported too.
OwningOpRef<ModuleOp> importProgram(MLIRContext &context, llvm::SourceMgr &sourceMgr,
                                    TimingScope &timing) {
  coll::ElaborateOptions options;
  if (failed(parseDefines(options)))
    return nullptr;
  options.algorithm = algorithm;

  std::string unused;
  OwningOpRef<ModuleOp> module = coll::importColl(sourceMgr, &context, options, timing, &unused);
  if (!unused.empty()) {
    auto define = llvm::find_if(options.defines, [&](const auto &d) { return d.first == unused; });
    llvm::errs() << "collc: error: -D " << unused << "=" << define->second << ": ";
    if (algorithm.empty())
      llvm::errs() << "no algorithm has a parameter named '" << unused << "'\n";
    else
      llvm::errs() << "algorithm '" << algorithm << "' has no parameter named '" << unused << "'\n";
  }
  return module;
}

/// Afterwards the module is lowered as far as --emit and the mode need, and
/// what the emitted code rests on is checked.
LogicalResult lower(MLIRContext &context, ModuleOp module, TimingScope &timing) {
  {
    TimingScope verifyTiming = timing.nest("verify IR");
    if (failed(mlir::verify(module)))
      return failure();
  }
  bool kernels = emit == Emit::Cuda || emit == Emit::Header || runMode;
  coll::CollLoweringOptions lowering;
  lowering.verifyAlgorithms = !noVerify;
  lowering.topology = topology;
  lowering.mapRanks = emit == Emit::RankMap;
  if (emit != Emit::Plan && emit != Emit::MscclXml && !kernels && !simMode && !vizMode)
    lowering.to = coll::LoweringStage::GlobalView;
  lowering.pipeline = pipelineDepth;
  lowering.instances = instanceCount;
  lowering.stream = streamWidth;
  // NVLink multicast where the machine has it (the host emulates it); MSCCL
  // has none.
  lowering.multimem = !noMultimem && emit != Emit::MscclXml;
  lowering.protocol = protocol;
  lowering.messageSize = messageSize;
  lowering.mscclLimits = emit == Emit::MscclXml;
  lowering.name = algorithmName;
  PassManager pm(&context);
  pm.enableTiming(timing);
  // What the plans compute is proved by the plan verifier. Every op's own
  // invariants are checked by collc-opt and the tests, which verify after
  // every pass; for plans of millions of steps that cost a third of the time
  // after each pass and a tenth once at the end, so collc checks them only
  // when asked, as clang leaves LLVM's verifier to debug builds. It always
  // checks what the emitted code rests on: that each threadblock's shape
  // makes exactly its steps, and that its deps name steps that exist.
  pm.enableVerifier(verifyEach);
  coll::buildCollLoweringPipeline(pm, lowering);
  if (failed(applyPassManagerCLOptions(pm)) || failed(pm.run(module)))
    return failure();
  TimingScope verifyTiming = timing.nest("verify shapes");
  for (auto plan : module.getOps<coll::PlanOp>())
    if (failed(plan.verifyRegions()))
      return failure();
  return success();
}

/// What is wrong with --dtype, --op and --transport of `collc run`, which
/// collc-launch would refuse only after the compile; empty if nothing.
std::string checkRunNames() {
  auto names = [](llvm::ArrayRef<const char *> list) {
    return llvm::SmallVector<llvm::StringRef>(list.begin(), list.end());
  };
  collDataType_t type;
  collRedOp_t op;
  if (!collc_launch::parseType(runType, type))
    return coll::unknownName("data type", runType, names(collc_launch::typeNames));
  if (!collc_launch::parseOp(runOp, op))
    return coll::unknownName("reduction op", runOp, names(collc_launch::opNames));
  llvm::StringRef transports[] = {"shm", "socket", "ib"};
  if (!llvm::is_contained(transports, runTransport))
    return coll::unknownName("transport", runTransport, transports);
  return "";
}

/// `collc run`: the lowered module compiled for the host and run on
/// emulated ranks; the exit status is the launcher's, or 2 for a run refused
/// before it starts, as the launcher refuses one.
int runLowered(ModuleOp module) {
  collc::RunRequest request;
  request.algorithm = algorithm;
  request.ranks = runRanks;
  request.dtype = runType;
  request.inplace = runInplace;
  if (llvm::Error e = collc::parseRunCount(runCount, request.count);
      e || (e = collc::checkRunMemory(module, request))) {
    llvm::errs() << "collc run: error: " << llvm::toString(std::move(e)) << "\n";
    return 2;
  }
  collc::RunOptions run;
  run.source = inputFile;
  run.algorithm = algorithm;
  run.ranks = runRanks;
  run.keep = runKeep;
  run.launchArgs = {"--count",     std::to_string(request.count),
                    "--dtype",     runType,
                    "--op",        runOp,
                    "--iters",     runIters,
                    "--transport", runTransport};
  if (runInplace)
    run.launchArgs.push_back("--inplace");
  return collc::runOnHost(module, run);
}

/// An MSCCL-IR file is one <algo> element, and the runtimes load one file
/// per algorithm and size range; several would make no XML document at all.
/// Says which plans there are and how to pick one.
void reportManyMscclPlans(ModuleOp module) {
  auto &os = llvm::errs();
  auto plans = module.getOps<coll::PlanOp>();
  int64_t n = std::distance(plans.begin(), plans.end());
  os << "collc: error: --emit=msccl-xml writes one <algo> per file, but " << n
     << " plans remain; pick one with --message-size=BYTES";
  if (algorithm.empty())
    os << " (and --algorithm=NAME)";
  os << ":\n";
  for (auto plan : plans) {
    uint64_t lo = plan.getMinBytes().value_or(0);
    os << "  " << plan.getSymName() << ": bytes [" << lo << ", ";
    if (auto hi = plan.getMaxBytes(); hi && *hi < (uint64_t(1) << 62))
      os << *hi << ")";
    else
      os << "...)";
    os << ", --message-size=" << lo << "\n";
  }
}

/// Writes what --emit asks for to -o; the file is kept only if all of it
/// was written.
int writeOutput(ModuleOp module, TimingScope &timing) {
  std::string error;
  auto output = openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << "collc: error: " << error << "\n";
    return 1;
  }
  TimingScope outputTiming = timing.nest("output");
  if (emit == Emit::RankMap) {
    printRankMap(module, output->os());
  } else if (emit == Emit::MscclXml) {
    auto plans = module.getOps<coll::PlanOp>();
    if (!llvm::hasSingleElement(plans)) {
      reportManyMscclPlans(module);
      return 1;
    }
    if (failed(coll::writeMscclXml(*plans.begin(), output->os())))
      return 1;
  } else if (emit == Emit::Cuda) {
    SmallVector<coll::TypedPair> typed = coll::defaultTypedPairs();
    if (kernelsFor.getNumOccurrences()) {
      std::string error;
      FailureOr<SmallVector<coll::TypedPair>> pairs = coll::parseTypedPairs(kernelsFor, error);
      if (failed(pairs)) {
        llvm::errs() << "collc: --kernels-for: " << error << "\n";
        return 1;
      }
      typed = std::move(*pairs);
    }
    if (failed(coll::writeKernels(module, inputFile, output->os(), typed)))
      return 1;
  } else if (emit == Emit::Header) {
    if (failed(coll::writeKernelHeader(module, inputFile, output->os())))
      return 1;
  } else if (emit != Emit::None)
    module->print(output->os());
  else
    printSummary(module, output->os());
  output->keep();
  return 0;
}

/// collc's exit status for the input: compiled, then emitted or run.
int compile(MLIRContext &context, llvm::SourceMgr &sourceMgr, TimingScope &timing) {
  OwningOpRef<ModuleOp> module = importProgram(context, sourceMgr, timing);
  if (!module)
    return 1;
  // The process ends after one compile: freeing millions of ops one by one
  // took a twentieth of collc's time at 1024 ranks, so the module is left
  // to the exit, as clang's -disable-free leaves its ASTs.
  struct LeaveToExit {
    OwningOpRef<ModuleOp> &module;
    ~LeaveToExit() { (void)module.release(); }
  } leave{module};
  if (failed(lower(context, *module, timing)))
    return 1;
  if (simMode)
    return collc::runSim(*module, topology);
  if (vizMode)
    return collc::runViz(*module, topology);
  if (runMode)
    return runLowered(*module);
  return writeOutput(*module, timing);
}

/// The words that may come first on collc's command line.
constexpr llvm::StringRef kCommands[] = {"run", "sim", "viz", "synth", "bound", "tune"};

/// Whether `word`, first on the command line, is meant as a command that
/// collc lacks: a bare lowercase word, not a file. `collc rn x.coll` would
/// otherwise read as two inputs, and `collc rn` as a missing file.
bool isUnknownCommand(llvm::StringRef word) {
  return !word.empty() && llvm::isLower(word.front()) &&
         llvm::all_of(word,
                      [](char c) { return llvm::isLower(c) || llvm::isDigit(c) || c == '-'; }) &&
         !llvm::is_contained(kCommands, word) && !llvm::sys::fs::exists(word);
}

} // namespace

int main(int argc, char **argv) {
  collc::adviseHugeHeap();
  llvm::InitLLVM init(argc, argv);
  if (argc > 1 && isUnknownCommand(argv[1])) {
    llvm::errs() << "collc: error: " << coll::unknownName("command", argv[1], kCommands)
                 << ", or a file to compile\n";
    return 1;
  }
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  // libLLVM registers hundreds of code generation options; show only ours
  // and the few MLIR ones that help users. llvm::cl lets every command take
  // the compile's options, but lists in a command's help only its own:
  // --mlir-timing, which times every command that compiles, joins them.
  cl::HideUnrelatedOptions(category);
  cl::HideUnrelatedOptions({&category, &runCategory}, runCommand());
  cl::HideUnrelatedOptions({&category, &collc::simCategory()}, collc::simCommand());
  cl::HideUnrelatedOptions({&category, &collc::vizCategory()}, collc::vizCommand());
  auto &registered = cl::getRegisteredOptions();
  for (llvm::StringRef name : {"mlir-timing", "mlir-print-debuginfo"})
    if (cl::Option *option = registered.lookup(name)) {
      option->setHiddenFlag(cl::NotHidden);
      option->addCategory(category);
      if (name == "mlir-timing") {
        option->removeArgument();
        compilingCommands.apply(*option);
        option->addArgument();
      }
    }
  // libLLVM's printer names LLVM's version, not collc's.
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "collc " COLLC_VERSION "\n" << "built with LLVM and MLIR " LLVM_VERSION_STRING "\n";
    // Which runtime `collc run` uses, as clang names its InstalledDir.
    const collc::Paths &paths = collc::paths();
    if (!paths.prefix.empty())
      os << "installed in " << paths.prefix << "\n";
    else
      os << "runtime from the build tree: " << paths.libDir << ", " << paths.deviceInclude << "\n";
  });
  // A command's help says what the command does; collc's, what collc does.
  bool command = argc > 1 && llvm::is_contained(kCommands, llvm::StringRef(argv[1]));
  cl::ParseCommandLineOptions(
      argc, argv,
      command ? "collc: a compiler for Coll collective algorithms\n"
              : "collc: compile a Coll collective algorithm\n\n"
                "Parses FILE.coll, evaluates its parameters, loops and conditions, and\n"
                "proves that each algorithm implements its declared collective; --emit\n"
                "writes it lowered. The subcommands run, simulate and tune it, or write\n"
                "and bound algorithms for a collective.\n\n"
                "Exit status: 0 on success; 1 on an error in the program or a flag;\n"
                "2 when `collc run` refuses its flags (docs/guide.md, \"Exit status\").\n");
  runMode = bool(runCommand());
  simMode = bool(collc::simCommand());
  vizMode = bool(collc::vizCommand());
  if (collc::synthRequested())
    return collc::runSynth();
  if (collc::boundRequested())
    return collc::runBound();
  if (collc::tuneRequested())
    return collc::runTune();

  if (simMode && !collc::checkSimOptions(topology))
    return 1;
  if (vizMode && !collc::checkVizOptions(topology))
    return 1;
  if (runMode) {
    int64_t count;
    llvm::Error e = collc::checkRunRanks(runRanks, runRanks.getNumOccurrences() > 0);
    if (!e)
      e = collc::parseRunCount(runCount, count);
    if (e) {
      llvm::errs() << "collc run: error: " << llvm::toString(std::move(e)) << "\n";
      return 2;
    }
    if (std::string refusal = checkRunNames(); !refusal.empty()) {
      llvm::errs() << "collc run: error: " << refusal << "\n";
      return 2;
    }
    bool given = llvm::any_of(defines, [](const std::string &d) {
      return llvm::StringRef(d).split('=').first.trim() == "ranks";
    });
    if (!given)
      defines.push_back("ranks=" + std::to_string(runRanks));
  }

  // The default -1 keeps every size range; the ranges end below 2^62 bytes.
  // A negative size is read to be reported as out of range.
  constexpr int64_t kMaxMessageSize = (int64_t(1) << 62) - 1;
  if (messageSizeText.getNumOccurrences()) {
    llvm::StringRef text = messageSizeText;
    if (std::optional<int64_t> bytes = coll::parseCount(text))
      messageSize = *bytes;
    else if (!text.starts_with("-") || text.getAsInteger(10, messageSize)) {
      llvm::errs() << "collc: error: --message-size=" << text
                   << " is not a number of bytes (K, M, G may follow)\n";
      return 1;
    }
  }
  if (messageSize < -1 || messageSize > kMaxMessageSize) {
    llvm::errs() << "collc: error: --message-size=" << messageSize << " is not in 0 .. "
                 << kMaxMessageSize << " bytes\n";
    return 1;
  }
  // Writing the output must not destroy the program it came from.
  if (outputFile != "-" && llvm::sys::fs::equivalent(inputFile, outputFile)) {
    llvm::errs() << "collc: error: -o " << outputFile << " is the input file; "
                 << "refusing to overwrite it\n";
    return 1;
  }

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      coll::openSource(inputFile, coll::ast::kMaxSourceBytes, error);
  if (!input) {
    llvm::errs() << "collc: error: " << error << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());

  DialectRegistry registry;
  registry.insert<coll::CollDialect>();
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);

  DefaultTimingManager timingManager;
  applyDefaultTimingManagerCLOptions(timingManager);
  TimingScope timing = timingManager.getRootScope();

  if (verifyDiagnostics) {
    SourceMgrDiagnosticVerifierHandler handler(sourceMgr, &context);
    compile(context, sourceMgr, timing);
    return failed(handler.verify()) ? 1 : 0;
  }
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  return compile(context, sourceMgr, timing);
}
