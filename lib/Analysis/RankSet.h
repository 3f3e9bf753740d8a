//===- RankSet.h - A set of ranks as sorted half-open runs ----------------===//
//
// The contributors to a reduced chunk. Ring, tree and halving algorithms
// accumulate contiguous (or wrapped) rank ranges, so a set is one or two runs
// whatever the rank count: the verifier stays linear in chunk operations.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_ANALYSIS_RANKSET_H
#define COLLC_ANALYSIS_RANKSET_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>

namespace coll {

class RankSet {
public:
  using Run = std::pair<uint32_t, uint32_t>; // [first, last)

  RankSet() = default;
  static RankSet single(uint32_t rank) { return range(rank, rank + 1); }
  static RankSet range(uint32_t first, uint32_t last) {
    RankSet s;
    if (first < last)
      s.runs.push_back({first, last});
    return s;
  }

  bool operator==(const RankSet &other) const { return runs == other.runs; }
  bool empty() const { return runs.empty(); }
  llvm::ArrayRef<Run> getRuns() const { return runs; }

  uint64_t size() const {
    uint64_t n = 0;
    for (const Run &r : runs)
      n += r.second - r.first;
    return n;
  }

  /// The smallest rank in both sets, if any.
  std::optional<uint32_t> firstCommon(const RankSet &other) const {
    size_t i = 0, j = 0;
    while (i < runs.size() && j < other.runs.size()) {
      uint32_t lo = std::max(runs[i].first, other.runs[j].first);
      uint32_t hi = std::min(runs[i].second, other.runs[j].second);
      if (lo < hi)
        return lo;
      (runs[i].second < other.runs[j].second ? i : j)++;
    }
    return std::nullopt;
  }

  /// The union of two disjoint sets (callers check firstCommon first).
  static RankSet unite(const RankSet &a, const RankSet &b) {
    RankSet out;
    size_t i = 0, j = 0;
    while (i < a.runs.size() || j < b.runs.size()) {
      bool fromA = j == b.runs.size() || (i < a.runs.size() && a.runs[i].first < b.runs[j].first);
      Run next = fromA ? a.runs[i++] : b.runs[j++];
      if (!out.runs.empty() && out.runs.back().second >= next.first)
        out.runs.back().second = std::max(out.runs.back().second, next.second);
      else
        out.runs.push_back(next);
    }
    return out;
  }

  /// Ranks of `this` that `other` lacks, at most `limit` of them.
  llvm::SmallVector<uint32_t> missingFrom(const RankSet &other, size_t limit) const {
    llvm::SmallVector<uint32_t> out;
    for (const Run &r : runs)
      for (uint32_t x = r.first; x < r.second && out.size() < limit; ++x)
        if (!other.contains(x))
          out.push_back(x);
    return out;
  }

  bool contains(uint32_t rank) const {
    for (const Run &r : runs)
      if (rank >= r.first && rank < r.second)
        return true;
    return false;
  }

  /// `3`, `0 .. 7` (half-open, as in the language) or `0 .. 3, 5`.
  std::string str() const {
    std::string out;
    llvm::raw_string_ostream os(out);
    for (size_t i = 0; i < runs.size(); ++i) {
      if (i)
        os << ", ";
      os << runs[i].first;
      if (runs[i].second != runs[i].first + 1)
        os << " .. " << runs[i].second;
    }
    return out;
  }

private:
  llvm::SmallVector<Run, 2> runs;
};

} // namespace coll

#endif // COLLC_ANALYSIS_RANKSET_H
