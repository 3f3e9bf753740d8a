//===- Tune.h - The fastest plan per message size, as one library ---------===//
//
// Lowers every candidate program over a grid of protocols, instance counts
// and pipeline depths, simulates each plan at every size from 8 B to 4 GiB,
// and keeps the fastest per size. `collc tune` is its command line; the
// options below are everything it decides.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TUNE_TUNE_H
#define COLLC_TUNE_TUNE_H

#include "lib/Tune/Table.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace coll::tune {

/// A program to tune: a user's file or a generator's output.
struct Source {
  std::string name, text;
  bool file = false;
};

struct TuneOptions {
  /// The machine: a preset or a JSON file.
  std::string topology;
  /// Ranks; none takes every GPU of the topology.
  std::optional<int64_t> ranks;
  /// Programs given by the user (`file` set), compiled with `defines` and,
  /// unless those name it, `ranks`.
  std::vector<Source> files;
  std::vector<std::pair<std::string, int64_t>> defines;
  /// A collective whose every applicable generator joins the candidates.
  std::string synth;
  /// The grid; empty lists take the defaults (every protocol; instances
  /// and depths coarse, then refined for the winners).
  std::vector<Protocol> protocols;
  std::vector<int64_t> instances, pipeline;
  /// The library's algorithm name, a C identifier.
  std::string name = "tuned";
  /// Where to say how long each phase and candidate took; none: say nothing.
  llvm::raw_ostream *timing = nullptr;
  /// Where to say which candidates were left out and why.
  llvm::raw_ostream *notes = nullptr;
  /// Where to say each grid point the lowering refused, and why; none:
  /// only a program with no point left is reported.
  llvm::raw_ostream *refusals = nullptr;
  /// Where to say how far a long tune has got, at most once per
  /// `progressEvery` seconds; none: say nothing.
  llvm::raw_ostream *progress = nullptr;
  double progressEvery = 10;
};

struct Tuner;

/// What a tune found: every candidate's time per size, the size ranges and
/// their winners, and what they are compared with.
struct Tuned {
  Tuned();
  ~Tuned();
  Tuned(Tuned &&);

  Topology topology;
  Collective collective{};
  int64_t ranks = 0;
  std::vector<double> sizes;
  std::vector<Range> ranges;
  References references;
  std::vector<Row> rows;
  double busFactor = 1; // busbw over algbw
  /// "NAME: COLLECTIVE on TOPOLOGY, N ranks; ...": the table's heading.
  std::string heading;
  /// Candidates left out, each with its reason.
  std::vector<std::string> leftOut;
  /// Where the winner is below half of NCCL's model or of the bound: a
  /// sign of a missing candidate or a plan that does not scale.
  std::vector<std::string> warnings;

  /// Every candidate, in the order of the table; a range's `winner` and a
  /// row's `second` index these.
  llvm::ArrayRef<Candidate> candidates() const;

  /// One module of the winners: each range's winning plan lowered again,
  /// rerolled and checked, as a variant of the library's algorithm for
  /// that range's sizes. What the kernel emitter takes.
  llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> library();

private:
  friend llvm::Expected<Tuned> run(const TuneOptions &, mlir::MLIRContext &);
  std::unique_ptr<Tuner> tuner; // the candidates' sources, to lower again
  std::string name;
};

/// Tunes in `context`, which must have the coll dialect loaded and keeps
/// the candidates' IR. Errors say what was wrong with the options or which
/// candidate failed.
llvm::Expected<Tuned> run(const TuneOptions &options, mlir::MLIRContext &context);

} // namespace coll::tune

#endif // COLLC_TUNE_TUNE_H
