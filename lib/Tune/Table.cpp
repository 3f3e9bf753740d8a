//===- Table.cpp - What the tuner says about its choice -------------------===//
//
// Per size range: the winner's time and busbw, the fastest other algorithm
// and the margin, NCCL's model and the bound, as a table, as JSON and as the
// comment at the top of the library.
//
//===----------------------------------------------------------------------===//
#include "lib/Tune/Table.h"

#include "lib/Bound/Bound.h"
#include "lib/Sim/NcclModel.h"
#include "lib/Support/Bytes.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

using namespace coll::tune;
using coll::formatBytes;

static std::string fixed(double v, int digits = 2) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%.*f", digits, v);
  return s;
}

double coll::tune::busbw(double micros, double bytes, double factor) {
  return bytes / (micros * 1e3) * factor;
}

/// The fastest candidate of another algorithm than `winner`'s (the variants
/// of the winner's own program differ by a few percent and say little),
/// or of any other candidate when there is no other algorithm.
static std::optional<size_t> runnerUp(llvm::ArrayRef<Candidate> candidates, size_t i,
                                      size_t winner) {
  std::optional<size_t> other, any;
  for (size_t k = 0; k < candidates.size(); ++k) {
    if (k == winner)
      continue;
    if (!any || candidates[k].micros[i] < candidates[*any].micros[i])
      any = k;
    if (candidates[k].algorithm != candidates[winner].algorithm &&
        (!other || candidates[k].micros[i] < candidates[*other].micros[i]))
      other = k;
  }
  return other ? other : any;
}

llvm::Expected<References> coll::tune::references(llvm::ArrayRef<Candidate> candidates,
                                                  llvm::ArrayRef<double> sizes,
                                                  const coll::Topology &topo,
                                                  coll::Collective collective, int64_t ranks) {
  coll::NcclModel model(topo, candidates.front().sims.front().gpus);
  double bus = coll::busBandwidthFactor(collective, ranks);
  bool bounded = ranks >= 2 && ranks <= topo.size();
  coll::CollectiveBound perByte;
  if (bounded) {
    llvm::Expected<coll::CollectiveBound> b = coll::computeBound(collective, topo, int(ranks), 1.0);
    if (!b)
      return b.takeError();
    perByte = *b;
  }
  References refs;
  for (double bytes : sizes) {
    std::optional<double> nccl, bound;
    if (std::optional<coll::NcclChoice> n = model.choose(collective, bytes))
      nccl = busbw(n->micros, bytes, bus);
    if (bounded)
      bound = busbw(std::max(perByte.bandwidthUs * bytes, perByte.fanoutLatencyUs), bytes, bus);
    refs.ncclBusbw.push_back(nccl);
    refs.boundBusbw.push_back(bound);
  }
  return refs;
}

std::vector<Row> coll::tune::describe(llvm::ArrayRef<Candidate> candidates,
                                      llvm::ArrayRef<Range> ranges, llvm::ArrayRef<double> sizes,
                                      const References &refs, double bus) {
  std::vector<Row> rows;
  for (const Range &r : ranges) {
    size_t i = r.last;
    Row row;
    row.bytes = sizes[i];
    row.micros = candidates[r.winner].micros[i];
    row.busbw = busbw(row.micros, row.bytes, bus);
    row.second = runnerUp(candidates, i, r.winner);
    if (row.second)
      row.margin = candidates[*row.second].micros[i] / row.micros - 1;
    row.ncclBusbw = refs.ncclBusbw[i];
    row.boundBusbw = refs.boundBusbw[i];
    rows.push_back(row);
  }
  return rows;
}

std::vector<std::string> coll::tune::shortfalls(llvm::ArrayRef<Candidate> candidates,
                                                llvm::ArrayRef<Range> ranges,
                                                llvm::ArrayRef<double> sizes,
                                                const References &refs, double bus) {
  std::vector<std::string> said;
  auto check = [&](const Range &r, const std::vector<std::optional<double>> &ref,
                   llvm::StringRef what) {
    std::optional<size_t> worst;
    double worstRatio = 0.5;
    for (size_t i = r.first; i <= r.last; ++i) {
      if (!ref[i] || *ref[i] <= 0)
        continue;
      double ratio = busbw(candidates[r.winner].micros[i], sizes[i], bus) / *ref[i];
      if (ratio < worstRatio) {
        worst = i;
        worstRatio = ratio;
      }
    }
    if (!worst)
      return;
    size_t i = *worst;
    said.push_back(sizeSpan(sizes, r) + ": the winner " + candidates[r.winner].name + " reaches " +
                   fixed(busbw(candidates[r.winner].micros[i], sizes[i], bus)) + " GB/s at " +
                   formatBytes(sizes[i]) + ", " + fixed(worstRatio * 100, 0) + "% of " +
                   what.str() + " (" + fixed(*ref[i]) + " GB/s)");
  };
  for (const Range &r : ranges) {
    check(r, refs.ncclBusbw, "NCCL's model");
    check(r, refs.boundBusbw, "the bound");
  }
  return said;
}

std::string coll::tune::sizeSpan(llvm::ArrayRef<double> sizes, const Range &r) {
  if (r.first == r.last)
    return formatBytes(sizes[r.first]);
  return formatBytes(sizes[r.first]) + ".." + formatBytes(sizes[r.last]);
}

void coll::tune::printTable(llvm::raw_ostream &os, llvm::ArrayRef<Candidate> candidates,
                            llvm::ArrayRef<Range> ranges, llvm::ArrayRef<Row> rows,
                            llvm::ArrayRef<double> sizes, llvm::StringRef heading) {
  os << heading << "\n";
  auto cell = [&](const llvm::Twine &text, unsigned width) {
    os << llvm::right_justify(text.str(), width);
  };
  os << llvm::left_justify("sizes", 22) << llvm::left_justify("winner", 42);
  cell("time", 10);
  cell("busbw", 9);
  os << "  " << llvm::left_justify("runner-up", 42);
  cell("margin", 8);
  cell("nccl", 9);
  cell("bound", 9);
  os << "\n";
  for (auto [r, row] : llvm::zip(ranges, rows)) {
    os << llvm::left_justify(sizeSpan(sizes, r), 22)
       << llvm::left_justify(candidates[r.winner].name, 42);
    cell(fixed(row.micros), 10);
    cell(fixed(row.busbw), 9);
    os << "  " << llvm::left_justify(row.second ? candidates[*row.second].name : "-", 42);
    cell(row.second ? fixed(row.margin * 100, 1) + "%" : "-", 8);
    cell(row.ncclBusbw ? fixed(*row.ncclBusbw) : "-", 9);
    cell(row.boundBusbw ? fixed(*row.boundBusbw) : "-", 9);
    os << "\n";
  }
  os << "time (us), busbw (GB/s), runner-up (the fastest other algorithm) and margin at "
        "each range's largest size; nccl: busbw of NCCL's tuning formulas (a model); "
        "bound: busbw at collc bound's lower bound\n";
}

void coll::tune::printJson(llvm::raw_ostream &os, llvm::ArrayRef<Candidate> candidates,
                           llvm::ArrayRef<Range> ranges, llvm::ArrayRef<double> sizes,
                           const References &refs, double bus) {
  llvm::json::OStream j(os, 2);
  auto optionals = [&](llvm::StringRef name, const std::vector<std::optional<double>> &v) {
    j.attributeArray(name, [&] {
      for (const std::optional<double> &x : v)
        x ? j.value(*x) : j.value(nullptr);
    });
  };
  j.object([&] {
    j.attributeArray("sizes", [&] {
      for (double s : sizes)
        j.value(s);
    });
    j.attribute("busbw_factor", bus);
    optionals("nccl_busbw", refs.ncclBusbw);
    optionals("bound_busbw", refs.boundBusbw);
    j.attributeArray("candidates", [&] {
      for (const Candidate &c : candidates)
        j.object([&] {
          j.attribute("name", c.name);
          j.attributeArray("micros", [&] {
            for (double t : c.micros)
              j.value(t);
          });
        });
    });
    j.attributeArray("ranges", [&] {
      for (const Range &r : ranges)
        j.object([&] {
          j.attribute("winner", candidates[r.winner].name);
          j.attribute("first", int64_t(r.first));
          j.attribute("last", int64_t(r.last));
          j.attribute("min_bytes", r.minBytes);
          j.attribute("max_bytes", r.maxBytes);
        });
    });
  });
  os << "\n";
}

void coll::tune::printWinners(llvm::raw_ostream &os, llvm::ArrayRef<Candidate> candidates,
                              llvm::ArrayRef<Range> ranges, llvm::ArrayRef<Row> rows,
                              llvm::ArrayRef<double> sizes, llvm::StringRef heading) {
  os << "// " << heading << ".\n// Winners by size (M, time at the range's largest size, "
     << "the fastest other algorithm and its margin):\n";
  for (auto [r, row] : llvm::zip(ranges, rows)) {
    os << "//   input bytes [" << r.minBytes << ", " << r.maxBytes << "), M " << sizeSpan(sizes, r)
       << ": " << candidates[r.winner].name << ", " << fixed(row.micros) << " us";
    if (row.second)
      os << "; runner-up " << candidates[*row.second].name << ", +" << fixed(row.margin * 100, 1)
         << "%";
    os << "\n";
  }
}

std::string coll::tune::plotJson(llvm::ArrayRef<Candidate> candidates, llvm::ArrayRef<Range> ranges,
                                 llvm::ArrayRef<double> sizes, const References &refs, double bus,
                                 llvm::StringRef title) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream j(os);
  auto series = [&](llvm::ArrayRef<std::optional<double>> values) {
    return [&j, values] {
      for (const std::optional<double> &v : values)
        if (v)
          j.value(*v);
        else
          j.value(nullptr);
    };
  };
  j.object([&] {
    j.attribute("kind", "busbw");
    j.attribute("title", title);
    j.attributeArray("sizes", [&] {
      for (double s : sizes)
        j.value(s);
    });
    j.attributeArray("candidates", [&] {
      for (const Candidate &c : candidates)
        j.object([&] {
          j.attribute("name", c.name);
          j.attributeArray("busbw", [&] {
            for (size_t i = 0; i < sizes.size(); ++i)
              j.value(busbw(c.micros[i], sizes[i], bus));
          });
        });
    });
    j.attributeArray("winner", [&] {
      for (const Range &r : ranges)
        for (size_t i = r.first; i <= r.last; ++i)
          j.value(busbw(candidates[r.winner].micros[i], sizes[i], bus));
    });
    j.attributeArray("nccl", series(refs.ncclBusbw));
    j.attributeArray("bound", series(refs.boundBusbw));
    j.attributeArray("ranges", [&] {
      for (const Range &r : ranges)
        j.object([&] {
          j.attribute("winner", candidates[r.winner].name);
          j.attribute("first", int64_t(r.first));
          j.attribute("last", int64_t(r.last));
        });
    });
  });
  return text;
}
