//===- Table.h - What the tuner says about its choice ---------------------===//
#ifndef COLLC_TUNE_TABLE_H
#define COLLC_TUNE_TABLE_H

#include "lib/Sim/SimPlan.h"
#include "lib/Sim/Simulator.h"
#include "lib/Topology/Topology.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace coll::tune {

/// One lowering of one algorithm: its plan variants and their times.
struct Candidate {
  std::string name, algorithm;
  size_t source = 0; // the tuner's, which the refinement lowers again
  int protocol = 0;  // coll::Protocol
  int64_t instances = 1, pipeline = 1;
  bool fifo = false; // copies between ranks over FIFOs, where peer steps could run
  std::vector<coll::SimPlan> sims;
  std::vector<std::unique_ptr<coll::SimPeriods>> periods; // per plan, kept across sizes
  std::vector<size_t> variant;                            // per size: which plan ran
  std::vector<double> micros;                             // per size
};

/// Adjacent sizes [first, last] with one winner.
struct Range {
  size_t first, last, winner;
  int64_t minBytes, maxBytes; // input bytes per rank
};

/// What the table prints of one range, at its largest size.
struct Row {
  double bytes, micros, busbw;
  std::optional<size_t> second;
  double margin = 0; // the runner-up's time over the winner's, minus 1
  std::optional<double> ncclBusbw, boundBusbw;
};

/// What every size is compared with: NCCL's model (none for all-to-all)
/// and the bound (none past the topology), as busbw. An error where the
/// bound is not finite.
struct References {
  std::vector<std::optional<double>> ncclBusbw, boundBusbw; // per size
};
llvm::Expected<References> references(llvm::ArrayRef<Candidate> candidates,
                                      llvm::ArrayRef<double> sizes, const coll::Topology &topo,
                                      coll::Collective collective, int64_t ranks);

/// nccl-tests' busbw (GB/s) of `bytes` in `micros`, `factor` its busbw over
/// algbw.
double busbw(double micros, double bytes, double factor);

/// The rows of the table, one per range.
std::vector<Row> describe(llvm::ArrayRef<Candidate> candidates, llvm::ArrayRef<Range> ranges,
                          llvm::ArrayRef<double> sizes, const References &refs, double bus);
/// Per range and reference, where the winner's busbw falls below half of
/// NCCL's model or of the bound: the range, the winner, its worst ratio
/// and the size where it is.
std::vector<std::string> shortfalls(llvm::ArrayRef<Candidate> candidates,
                                    llvm::ArrayRef<Range> ranges, llvm::ArrayRef<double> sizes,
                                    const References &refs, double bus);
/// "8 B..4 KiB": the sizes M of range `r`.
std::string sizeSpan(llvm::ArrayRef<double> sizes, const Range &r);
void printTable(llvm::raw_ostream &os, llvm::ArrayRef<Candidate> candidates,
                llvm::ArrayRef<Range> ranges, llvm::ArrayRef<Row> rows,
                llvm::ArrayRef<double> sizes, llvm::StringRef heading);
/// Every candidate's time per size, the ranges, and per size NCCL's model
/// and the bound as busbw (null where there is none), with busbw's factor.
void printJson(llvm::raw_ostream &os, llvm::ArrayRef<Candidate> candidates,
               llvm::ArrayRef<Range> ranges, llvm::ArrayRef<double> sizes, const References &refs,
               double bus);
/// plot.py's input: every candidate's busbw per size, the winner's, NCCL's
/// model and the bound.
std::string plotJson(llvm::ArrayRef<Candidate> candidates, llvm::ArrayRef<Range> ranges,
                     llvm::ArrayRef<double> sizes, const References &refs, double bus,
                     llvm::StringRef title);
/// The comment at the top of the library: each range's winner and margin.
void printWinners(llvm::raw_ostream &os, llvm::ArrayRef<Candidate> candidates,
                  llvm::ArrayRef<Range> ranges, llvm::ArrayRef<Row> rows,
                  llvm::ArrayRef<double> sizes, llvm::StringRef heading);

} // namespace coll::tune

#endif // COLLC_TUNE_TABLE_H
