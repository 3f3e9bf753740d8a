//===- Viz.cpp - `collc viz`: where a plan's threadblocks wait -------------===//
//
// Runs one plan in the simulator at one size with every step traced, and
// shows it two ways: a picture (ranks x threadblocks x time, a bar per step
// coloured by its operation, drawn by plot.py) and a text summary of the
// busiest threadblocks, which bound the plan's time, with each one's
// longest wait: the stalls a user looks for. Threadblocks whose steps take
// no time (receives, which their senders' transfers stand for) are left
// out of both. Every loop runs; none is extrapolated, so the size is
// bounded.
//
//===----------------------------------------------------------------------===//
#include "Viz.h"

#include "Plot.h"
#include "lib/Sim/SimPlan.h"
#include "lib/Sim/Simulator.h"
#include "lib/Topology/Topology.h"
#include "lib/Support/Bytes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

#include <algorithm>

namespace cl = llvm::cl;
using coll::formatBytes;

namespace {

cl::OptionCategory category("collc viz options");
cl::opt<std::string> sizeText("size", cl::desc("The message size M to trace (nccl-tests' size)"),
                              cl::value_desc("bytes"), cl::init("1MiB"), cl::cat(category),
                              cl::sub(collc::vizCommand()));
cl::opt<std::string> picture("plot",
                             cl::desc("Draw the timeline here (.svg, .png or .pdf; default "
                                      "ALGORITHM-timeline.svg, '-' for none)"),
                             cl::value_desc("file"), cl::cat(category),
                             cl::sub(collc::vizCommand()));
cl::opt<std::string> spansFile("spans", cl::desc("Write every traced step as JSON here"),
                               cl::value_desc("file"), cl::cat(category),
                               cl::sub(collc::vizCommand()));
cl::opt<unsigned> summaryRows("rows", cl::desc("Threadblocks listed, the busiest first"),
                              cl::init(16), cl::cat(category), cl::sub(collc::vizCommand()));

/// Steps traced at most: millions of bars draw nothing a user can read.
constexpr size_t kMaxSpans = 2000000;

int fail(const llvm::Twine &message) {
  llvm::errs() << "collc viz: error: " << message << "\n";
  return 1;
}

std::string fixed(double v, int digits = 2) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%.*f", digits, v);
  return s;
}

/// One threadblock's row: its spans in time order, and what they add up to.
struct Lane {
  int32_t threadblock = 0, replica = 0;
  int32_t ordinal = 0; // among its rank's threadblocks
  std::vector<const coll::SimSpan *> spans;
  double busy = 0;
  double wait = 0; // longest gap before a step
  const coll::SimSpan *waited = nullptr;
};

std::vector<Lane> lanes(const coll::SimPlan &plan, const std::vector<coll::SimSpan> &trace,
                        int64_t replicas) {
  std::vector<Lane> out(plan.threadblocks.size() * size_t(replicas));
  // A plan lists each rank's threadblocks together.
  std::vector<int32_t> ordinal(plan.threadblocks.size(), 0);
  for (size_t t = 1; t < ordinal.size(); ++t)
    if (plan.threadblocks[t].rank == plan.threadblocks[t - 1].rank)
      ordinal[t] = ordinal[t - 1] + 1;
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].threadblock = int32_t(i % plan.threadblocks.size());
    out[i].replica = int32_t(i / plan.threadblocks.size());
    out[i].ordinal = ordinal[out[i].threadblock];
  }
  for (const coll::SimSpan &s : trace)
    out[size_t(s.replica) * plan.threadblocks.size() + size_t(s.threadblock)].spans.push_back(&s);
  for (Lane &l : out) {
    llvm::sort(l.spans, [](auto *a, auto *b) { return a->start < b->start; });
    double free = 0;
    for (const coll::SimSpan *s : l.spans) {
      l.busy += s->end - s->start;
      if (s->start - free > l.wait) {
        l.wait = s->start - free;
        l.waited = s;
      }
      free = s->end;
    }
  }
  return out;
}

std::string laneName(const coll::SimPlan &plan, const Lane &l) {
  return "rank " + std::to_string(plan.threadblocks[l.threadblock].rank) + " tb " +
         std::to_string(l.ordinal);
}

void printSummary(llvm::raw_ostream &os, const coll::SimPlan &plan, llvm::ArrayRef<Lane> all,
                  double micros) {
  // The busiest threadblocks bound the plan's time; a threadblock whose
  // steps take no time (a receive that the sender's transfer stands for)
  // says nothing.
  std::vector<const Lane *> order;
  for (const Lane &l : all)
    if (l.busy > 0)
      order.push_back(&l);
  llvm::stable_sort(order, [](const Lane *a, const Lane *b) { return a->busy > b->busy; });
  auto cell = [&](const llvm::Twine &text, unsigned width) {
    os << llvm::right_justify(text.str(), width);
  };
  os << llvm::left_justify("rank", 6) << llvm::left_justify("threadblock", 13);
  cell("replica", 8);
  cell("steps", 8);
  cell("busy", 8);
  cell("wait", 10);
  os << "  before\n";
  size_t shown = std::min<size_t>(order.size(), summaryRows);
  for (size_t i = 0; i < shown; ++i) {
    const Lane &l = *order[i];
    const coll::SimPlan::Threadblock &tb = plan.threadblocks[l.threadblock];
    os << llvm::left_justify(std::to_string(tb.rank), 6)
       << llvm::left_justify(std::to_string(l.ordinal), 13);
    cell(llvm::Twine(l.replica), 8);
    cell(llvm::Twine(l.spans.size()), 8);
    cell(fixed(100 * l.busy / micros, 1) + "%", 8);
    cell(fixed(l.wait), 10);
    if (l.waited)
      os << "  step " << l.waited->step << " ("
         << plan.kinds[plan.steps[tb.stepBegin + l.waited->step].kind] << ") of loop "
         << l.waited->loop;
    os << "\n";
  }
  if (order.size() > shown)
    os << "... " << order.size() - shown << " more threadblocks (--rows)\n";
  os << "busiest first; busy: share of the plan's time in steps; wait: the longest gap "
        "before a step (us), on a message, a free slot or another threadblock\n";
}

std::string timelineJson(const coll::SimPlan &plan, llvm::ArrayRef<Lane> all, double micros,
                         const std::string &title) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream j(os);
  j.object([&] {
    j.attribute("kind", "timeline");
    j.attribute("title", title);
    j.attribute("micros", micros);
    j.attributeArray("kinds", [&] {
      for (const std::string &k : plan.kinds)
        j.value(k);
    });
    j.attributeArray("rows", [&] {
      // Replicas run the same steps on other loops: the first stands for
      // them, so that the rows stay readable.
      for (const Lane &l : all) {
        if (l.replica != 0 || l.busy <= 0)
          continue;
        j.object([&] {
          j.attribute("label", laneName(plan, l));
          j.attributeArray("spans", [&] {
            for (const coll::SimSpan *s : l.spans) {
              const coll::SimPlan::Step &step =
                  plan.steps[plan.threadblocks[l.threadblock].stepBegin + s->step];
              j.array([&] {
                j.value(s->start);
                j.value(s->end - s->start);
                j.value(step.kind);
              });
            }
          });
        });
      }
    });
  });
  return text;
}

llvm::Error writeSpans(llvm::StringRef path, const coll::SimPlan &plan,
                       const std::vector<coll::SimSpan> &trace) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return llvm::createStringError(ec, "cannot write " + path + ": " + ec.message());
  llvm::json::OStream j(os, 1);
  j.array([&] {
    for (const coll::SimSpan &s : trace)
      j.object([&] {
        const coll::SimPlan::Threadblock &tb = plan.threadblocks[s.threadblock];
        j.attribute("rank", tb.rank);
        j.attribute("threadblock", s.threadblock);
        j.attribute("replica", s.replica);
        j.attribute("loop", s.loop);
        j.attribute("step", s.step);
        j.attribute("op", plan.kinds[plan.steps[tb.stepBegin + s.step].kind]);
        j.attribute("start_us", s.start);
        j.attribute("end_us", s.end);
      });
  });
  os << "\n";
  return llvm::Error::success();
}

} // namespace

cl::SubCommand &collc::vizCommand() {
  static cl::SubCommand command("viz", "Lower FILE.coll to plans and trace one message size's "
                                       "steps on --topology: a timeline and the busiest "
                                       "threadblocks");
  return command;
}

cl::OptionCategory &collc::vizCategory() { return category; }

bool collc::checkVizOptions(llvm::StringRef topology) {
  if (topology.empty()) {
    fail("--topology is required: a preset (" + llvm::join(coll::presetNames(), ", ") +
         ") or a JSON file");
    return false;
  }
  std::optional<double> m = coll::parseBytes(sizeText);
  if (!m || *m <= 0) {
    fail("--size '" + sizeText + "' is not a positive size (8, 64K, 1MiB, 4G)");
    return false;
  }
  if (!picture.empty() && picture != "-" && !plotFormatKnown(picture)) {
    fail("--plot '" + picture + "' does not end in .svg, .png or .pdf");
    return false;
  }
  return true;
}

int collc::runViz(mlir::ModuleOp module, llvm::StringRef topology) {
  double bytes = *coll::parseBytes(sizeText);
  // The variant the runtime would run at this size, of the first algorithm
  // (--algorithm picks another).
  std::optional<coll::SimPlan> chosen;
  std::string topoSpec;
  for (auto plan : module.getOps<coll::PlanOp>()) {
    llvm::Expected<coll::SimPlan> sim = coll::buildSimPlan(plan);
    if (!sim)
      return fail(llvm::toString(sim.takeError()));
    if (chosen && chosen->algorithm != sim->algorithm)
      break;
    double in = sim->inputBytes(bytes);
    bool holds = double(sim->minBytes) <= in && in < double(sim->maxBytes);
    if (!chosen || holds) {
      chosen = std::move(*sim);
      topoSpec = plan.getTopology().value_or(topology).str();
    }
    if (holds)
      break;
  }
  if (!chosen)
    return fail("the module has no plan");
  llvm::Expected<coll::Topology> topo = coll::loadTopology(topoSpec);
  if (!topo)
    return fail("topology: " + llvm::toString(topo.takeError()));

  std::vector<coll::SimSpan> trace;
  coll::SimOptions options;
  // A dry run counts the loops, so that an oversized trace fails before it
  // fills the memory.
  llvm::Expected<coll::SimResult> dry = coll::simulate(*chosen, *topo, bytes, options);
  if (!dry)
    return fail(llvm::toString(dry.takeError()));
  double steps = double(chosen->steps.size()) * double(dry->loops);
  if (steps > double(kMaxSpans))
    return fail("tracing " + formatBytes(bytes) + " runs " + llvm::Twine(int64_t(steps)) +
                " steps, more than " + llvm::Twine(int64_t(kMaxSpans)) + "; pick a smaller --size");
  options.trace = &trace;
  llvm::Expected<coll::SimResult> r = coll::simulate(*chosen, *topo, bytes, options);
  if (!r)
    return fail(llvm::toString(r.takeError()));
  double micros = 0;
  for (const coll::SimSpan &s : trace)
    micros = std::max(micros, s.end);
  std::vector<Lane> all = lanes(*chosen, trace, r->replicas);

  std::string title;
  llvm::raw_string_ostream(title) << chosen->algorithm << ": "
                                  << coll::stringifyCollective(chosen->collective) << " on "
                                  << topo->name << ", " << chosen->ranks
                                  << " ranks, M = " << formatBytes(bytes) << ", plan "
                                  << chosen->name << ", " << r->loops
                                  << (r->loops == 1 ? " loop" : " loops") << " on " << r->replicas
                                  << (r->replicas == 1 ? " replica" : " replicas") << "; simulated "
                                  << fixed(r->micros) << " us";
  llvm::outs() << title << " (" << fixed(r->micros - micros) << " us of it launch latency)\n";
  printSummary(llvm::outs(), *chosen, all, micros);

  if (!spansFile.empty())
    if (llvm::Error e = writeSpans(spansFile, *chosen, trace))
      return fail(llvm::toString(std::move(e)));
  std::string out = picture.empty() ? chosen->algorithm + "-timeline.svg" : std::string(picture);
  if (out == "-")
    return 0;
  if (r->replicas > 1)
    title += "; replica 0 of " + std::to_string(r->replicas) + " shown";
  if (llvm::Error e = drawPlot(timelineJson(*chosen, all, micros, title), out))
    return fail(llvm::toString(std::move(e)));
  llvm::outs() << "timeline: " << out << "\n";
  return 0;
}
