//===- Families.h - The generator families the registry lists -------------===//
//
// Internal to lib/Synthesis: one pair of functions (why not, the program)
// per family, and the helper that writes a program's declaration.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_SYNTHESIS_FAMILIES_H
#define COLLC_SYNTHESIS_FAMILIES_H

#include "lib/Synthesis/Generators.h"

namespace coll::synth {

/// A whole program: `comment` (lines already starting with `//`), then
/// `algorithm NAME_COLLECTIVE : COLLECTIVE(params)` with `ranks` (and
/// `root`) defaulting to `t`'s unless `params` is given, `let R = ranks;`,
/// an assert on the root where there is one, `body`, and the closing brace.
std::string program(const Target &t, llvm::StringRef name, llvm::StringRef comment,
                    llvm::StringRef chunks, bool inplace, llvm::StringRef body,
                    llvm::StringRef params = {});

/// Refusals shared by several families ("" when `t` is fine).
std::string needPowerOfTwo(const Target &t, llvm::StringRef algorithm);
std::string anyRanks(const Target &t);

// RingGenerators.cpp
std::string ring(const Target &t);
std::string bidirRing(const Target &t);
std::string refuseMultiRing(const Target &t);
std::string multiRing(const Target &t);
// LogGenerators.cpp
std::string recursiveDoubling(const Target &t);
std::string recursiveHalving(const Target &t);
std::string bruck(const Target &t);
// PatGenerators.cpp
std::string pat(const Target &t);
// DirectGenerators.cpp
std::string pairwise(const Target &t);
std::string oneShot(const Target &t);
std::string twoShot(const Target &t);
// TreeGenerators.cpp
std::string binomialTree(const Target &t);
std::string doubleBinaryTree(const Target &t);
// HierGenerators.cpp
/// Why `algorithm`, over two levels (nodes x gpus), cannot serve `t`.
std::string refuseTwoLevels(const Target &t, llvm::StringRef algorithm);
std::string refuseHierarchical(const Target &t);
std::string hierarchical(const Target &t);
std::string refuseHierarchicalDirect(const Target &t);
std::string hierarchicalDirect(const Target &t);
std::string refuseHierarchicalHalving(const Target &t);
std::string hierarchicalHalving(const Target &t);
std::string refuseHierarchicalGrid(const Target &t);
std::string hierarchicalGrid(const Target &t);

} // namespace coll::synth

#endif // COLLC_SYNTHESIS_FAMILIES_H
