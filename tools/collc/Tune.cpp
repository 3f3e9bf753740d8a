//===- Tune.cpp - `collc tune`: flags in, table and library out -----------===//
//
// The tuner itself is lib/Tune; this reads its options from the command
// line, prints the table (or JSON, or a plot) and writes the library.
//
//===----------------------------------------------------------------------===//
#include "Help.h"
#include "Plot.h"
#include "Tune.h"

#include "dialect/CollDialect.h"
#include "lib/Frontend/Parser.h"
#include "lib/Support/Source.h"
#include "lib/Target/Kernel.h"
#include "lib/Tune/Tune.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

#include <chrono>

using namespace mlir;
namespace cl = llvm::cl;
using namespace coll::tune;

namespace {

cl::SubCommand
    tuneCommand("tune",
                "Simulate every candidate plan (the files, and with --synth every generator) "
                "per size and write one library that runs the fastest at each size");
cl::list<std::string> files(cl::Positional, cl::desc("<file.coll>..."), cl::sub(tuneCommand));
cl::opt<std::string> synthName("synth",
                               cl::desc("Add every generator's program for this collective"),
                               cl::value_desc("collective"), cl::sub(tuneCommand));
cl::opt<std::string> topologySpec("topology", cl::desc("The machine: " COLLC_TOPOLOGY_HELP),
                                  cl::value_desc("name|file"), cl::sub(tuneCommand));
cl::list<std::string> defines("D", cl::Prefix, cl::desc("Set a parameter of the files"),
                              cl::value_desc("name=value"), cl::sub(tuneCommand));
cl::opt<int64_t> rankCount("ranks", cl::value_desc("N"),
                           cl::desc("Ranks (default: every GPU of the topology)"), cl::init(0),
                           cl::sub(tuneCommand));
cl::opt<std::string> libraryName("name", cl::desc("The library's algorithm name"),
                                 cl::value_desc("name"), cl::init("tuned"), cl::sub(tuneCommand));
cl::list<std::string> protocols("protocols", cl::CommaSeparated,
                                cl::desc("Protocols to try (default Simple,LL,LL128)"),
                                cl::sub(tuneCommand));
cl::list<int64_t> instanceCounts("instances", cl::CommaSeparated,
                                 cl::desc("Instance counts to try (default 1,2, then 1,2,4,8 for "
                                          "the winners from 64 KiB up)"),
                                 cl::sub(tuneCommand));
cl::list<int64_t> pipelineDepths("pipeline", cl::CommaSeparated,
                                 cl::desc("Pipeline depths to try (default 1,2, then 1,2,4 for "
                                          "the winners from 64 KiB up)"),
                                 cl::sub(tuneCommand));
cl::opt<std::string> outputPath("o", cl::desc("Write the library (CUDA/host C++) here"),
                                cl::value_desc("file"), cl::sub(tuneCommand));
cl::opt<std::string> headerPath("header",
                                cl::desc("Write the C header of the library's entry points "
                                         "here (with -o)"),
                                cl::value_desc("file"), cl::sub(tuneCommand));
cl::opt<bool> tableOnStdout("table",
                            cl::desc("Print the table on standard output (else on "
                                     "standard error)"),
                            cl::sub(tuneCommand));
cl::opt<std::string> plotPath("plot",
                              cl::desc("Draw busbw against size (every candidate, the winner, "
                                       "NCCL's model, the bound) here: .svg, .png or .pdf"),
                              cl::value_desc("file"), cl::sub(tuneCommand));
cl::opt<bool> timing("timing",
                     cl::desc("Say on standard error how long each phase and candidate took"),
                     cl::sub(tuneCommand));
cl::opt<bool> verbose("verbose", cl::desc("Say every grid point the lowering refused, and why"),
                      cl::sub(tuneCommand));
cl::opt<bool> quiet("quiet", cl::desc("Say nothing on how far a long tune has got"),
                    cl::sub(tuneCommand));
cl::opt<bool> asJson("json",
                     cl::desc("Print every candidate's time per size and the ranges as JSON"),
                     cl::sub(tuneCommand));

/// Under --timing, says that `what` took the time since `start`.
void took(const llvm::Twine &what, std::chrono::steady_clock::time_point start) {
  if (!timing)
    return;
  llvm::errs()
      << "collc tune: " << what << ": "
      << llvm::format(
             "%.2f",
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count())
      << " s\n";
}

int fail(const llvm::Twine &message) {
  llvm::errs() << "collc tune: error: " << message << "\n";
  return 1;
}

/// The tuner's options from the flags; the files are read here.
llvm::Expected<TuneOptions> readOptions() {
  TuneOptions o;
  o.topology = topologySpec;
  if (rankCount.getNumOccurrences())
    o.ranks = rankCount;
  for (const std::string &p : protocols) {
    std::optional<coll::Protocol> v = coll::symbolizeProtocol(p);
    if (!v)
      return llvm::createStringError("--protocols: '" + p + "' is not Simple, LL or LL128");
    o.protocols.push_back(*v);
  }
  o.instances.assign(instanceCounts.begin(), instanceCounts.end());
  o.pipeline.assign(pipelineDepths.begin(), pipelineDepths.end());
  for (const std::string &d : defines) {
    auto [name, value] = llvm::StringRef(d).split('=');
    int64_t v;
    if (name.trim().empty() || value.trim().getAsInteger(0, v))
      return llvm::createStringError("-D expects name=integer, got '" + d + "'");
    o.defines.emplace_back(name.trim().str(), v);
  }
  for (const std::string &f : files) {
    std::string message;
    std::unique_ptr<llvm::MemoryBuffer> buffer =
        coll::openSource(f, coll::ast::kMaxSourceBytes, message);
    if (!buffer)
      return llvm::createStringError(message);
    o.files.push_back({f, buffer->getBuffer().str(), true});
  }
  o.synth = synthName;
  o.name = libraryName;
  o.timing = timing ? &llvm::errs() : nullptr;
  o.notes = &llvm::errs();
  o.refusals = verbose ? &llvm::errs() : nullptr;
  o.progress = quiet ? nullptr : &llvm::errs();
  return o;
}

/// Writes the library of `tuned`'s winners to --o.
int writeLibrary(Tuned &tuned) {
  llvm::Expected<OwningOpRef<ModuleOp>> library = tuned.library();
  if (!library)
    return fail(llvm::toString(library.takeError()));
  auto start = std::chrono::steady_clock::now();
  std::string message;
  auto output = openOutputFile(outputPath, &message);
  if (!output)
    return fail(message);
  llvm::raw_ostream &os = output->os();
  printWinners(os, tuned.candidates(), tuned.ranges, tuned.rows, tuned.sizes, tuned.heading);
  std::string source =
      ("tune of " + stringifyCollective(tuned.collective) + " on " + tuned.topology.name).str();
  if (failed(coll::writeKernels(**library, source, os)))
    return 1;
  std::unique_ptr<llvm::ToolOutputFile> header;
  if (!headerPath.empty()) {
    header = openOutputFile(headerPath, &message);
    if (!header)
      return fail(message);
    if (failed(coll::writeKernelHeader(**library, source, header->os())))
      return 1;
    header->keep();
  }
  output->keep();
  took("emit the library", start);
  return 0;
}

} // namespace

bool collc::tuneRequested() { return bool(tuneCommand); }

int collc::runTune() {
  auto tuneStart = std::chrono::steady_clock::now();
  if (!headerPath.empty() && outputPath.empty())
    return fail("--header writes the header of the library that -o writes: give -o too");
  if (!plotPath.empty() && !collc::plotFormatKnown(plotPath))
    return fail("--plot '" + plotPath + "' does not end in .svg, .png or .pdf");
  llvm::Expected<TuneOptions> options = readOptions();
  if (!options)
    return fail(llvm::toString(options.takeError()));
  DialectRegistry registry;
  registry.insert<coll::CollDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  llvm::Expected<Tuned> tuned = run(*options, context);
  if (!tuned)
    return fail(llvm::toString(tuned.takeError()));

  llvm::raw_ostream &tableOs = tableOnStdout ? llvm::outs() : llvm::errs();
  if (asJson)
    printJson(llvm::outs(), tuned->candidates(), tuned->ranges, tuned->sizes, tuned->references,
              tuned->busFactor);
  else
    printTable(tableOs, tuned->candidates(), tuned->ranges, tuned->rows, tuned->sizes,
               tuned->heading);
  if (!plotPath.empty()) {
    if (llvm::Error e =
            collc::drawPlot(plotJson(tuned->candidates(), tuned->ranges, tuned->sizes,
                                     tuned->references, tuned->busFactor, tuned->heading),
                            plotPath))
      return fail(llvm::toString(std::move(e)));
    tableOs << "busbw by size: " << plotPath << "\n";
  }
  for (const std::string &w : tuned->warnings)
    llvm::errs() << "collc tune: warning: " << w << "\n";
  int status = outputPath.empty() ? 0 : writeLibrary(*tuned);
  if (status == 0)
    took("in all", tuneStart);
  return status;
}
