//===- Generators.h - Classic collective algorithms as Coll programs ------===//
//
// Each generator writes one family of algorithms (rings, recursive doubling,
// trees, ...) as Coll source: a program a person can read and edit, which
// the front end parses and the verifier proves like a hand-written one. The
// registry says which collectives each serves and on which rank counts.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_SYNTHESIS_GENERATORS_H
#define COLLC_SYNTHESIS_GENERATORS_H

#include "dialect/CollOps.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace coll::synth {

/// What a program is generated for; its values become the defaults of the
/// program's parameters, which `collc -D` can still override.
struct Target {
  Collective collective = Collective::allreduce;
  int64_t ranks = 8;
  /// GPUs per node of the topology: hierarchical forms split the ranks into
  /// nodes of this many (rank r on node r / gpusPerNode).
  int64_t gpusPerNode = 8;
  int64_t root = 0; // broadcast and reduce
};

struct Generator {
  llvm::StringRef name;    // what `--algorithm` takes
  llvm::StringRef summary; // one line: the algorithm and where it wins
  llvm::ArrayRef<Collective> collectives;
  /// Why the algorithm cannot serve `t`, naming one that can; empty when it
  /// can. Called only for a collective in `collectives`.
  std::string (*refuse)(const Target &t);
  /// The program: one `algorithm` with a comment saying how it works.
  std::string (*generate)(const Target &t);

  bool serves(Collective c) const { return llvm::is_contained(collectives, c); }
};

/// Every generator, in the order `--list` prints them.
llvm::ArrayRef<Generator> generators();
/// The generator named `name`, or null.
const Generator *findGenerator(llvm::StringRef name);

/// `allreduce`, `reduce-scatter`, `all_gather`, ...: the language's names,
/// with `-` and `_` ignored.
std::optional<Collective> parseCollective(llvm::StringRef name);

} // namespace coll::synth

#endif // COLLC_SYNTHESIS_GENERATORS_H
