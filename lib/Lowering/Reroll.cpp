//===- Reroll.cpp - Threadblocks of one shape share their code ------------===//
//
// After this pass every threadblock names a `coll.shape` that makes exactly
// its steps: runs of steps of one kind (the same buffers), whose operands
// are affine in the rank and in the step within the run, modulo the
// buffer's chunks (the ranks, for a get's peer), or else come from the
// threadblock's table, as deps always do. Threadblocks with the same runs
// share a shape, so the code emitted for a ring is the same at 8 ranks and
// at 1024; where their runs move ranges of different lengths or wait on
// different numbers of deps (recursive halving's rounds), the table holds
// those too, so the shapes stay as few as the kinds of threadblocks. What
// is not affine grows the tables, by at most a few values per step of a
// threadblock.
//
//===----------------------------------------------------------------------===//

#include "dialect/CollOps.h"
#include "lib/Lowering/Passes.h"

#include "mlir/IR/Builders.h"

#include <map>

namespace coll {
#define GEN_PASS_DEF_COLLREROLLPASS
#include "lib/Lowering/Passes.h.inc"
} // namespace coll

using namespace mlir;
using namespace coll;

namespace {

/// A run of a threadblock: its first step, how many steps, and where the
/// operands of its first step start in the member's values.
struct Run {
  size_t first, count, values;
};

/// What steps of one run have in common: kind, operand roles, buffers and
/// counts, how many deps, and whether a sending step has a direct
/// destination (a sending step's last field is that, or a stand-in with
/// buffer ""). A shape's key spells the kinds, roles and buffers only: its
/// threadblocks' counts, deps and direct destinations may differ.
struct Signature {
  OperationName name;
  SmallVector<std::tuple<FieldRole, StringRef, int64_t>, 4> fields; // role, buffer, count
  size_t deps = 0;

  Signature(StepOpInterface step, ArrayRef<StepField> stepFields) : name(step->getName()) {
    for (const StepField &f : stepFields)
      fields.push_back({f.role, f.buffer, f.count});
    if (DenseI64ArrayAttr d = step.getDepsAttr())
      deps = d.size() / 2;
  }
  bool operator==(const Signature &o) const {
    return name == o.name && fields == o.fields && deps == o.deps;
  }
  /// The direct destination's buffer: "" for a stand-in or none.
  StringRef direct() const {
    return !fields.empty() && std::get<0>(fields.back()) == FieldRole::direct
               ? std::get<1>(fields.back())
               : "";
  }
  std::string key(bool withDirect) const {
    std::string sig = name.stripDialect().str();
    for (auto [role, buffer, count] : fields)
      if (role != FieldRole::direct || withDirect)
        sig += "|" + stringifyFieldRole(role).str() + ":" + buffer.str();
    return sig;
  }
};

/// A threadblock, its steps, the runs they form (and their signatures), and
/// every step's operands (each field's value, in order), read once.
struct Member {
  int64_t rank;
  ThreadblockOp tb;
  SmallVector<StepOpInterface> steps;
  SmallVector<Run> runs;
  std::vector<Signature> signatures;
  std::vector<int64_t> values;
};

/// Members grouped by the runs they form, in the order they first appear;
/// `withDirect` also tells apart which steps have direct destinations.
std::vector<SmallVector<Member>> groupByRuns(std::vector<Member> members, bool withDirect) {
  std::map<std::string, size_t> groupOf;
  std::vector<SmallVector<Member>> groups;
  for (Member &member : members) {
    std::string key;
    for (const Signature &sig : member.signatures)
      key += ";" + sig.key(withDirect);
    for (const Run &run : member.runs)
      key += "#" + std::to_string(run.count);
    auto [it, fresh] = groupOf.try_emplace(key, groups.size());
    if (fresh)
      groups.emplace_back();
    groups[it->second].push_back(std::move(member));
  }
  return groups;
}

/// Whether members can share code that names a direct destination in a run
/// where some have none: all that have one name the same buffer, and those
/// that have none send on no direct connection, so nothing stores to the
/// stand-in.
bool directsAgree(ArrayRef<Member> members) {
  for (size_t r = 0; r < members.front().runs.size(); ++r) {
    StringRef buffer;
    for (const Member &m : members) {
      StringRef direct = m.signatures[r].direct();
      if (!direct.empty() && !buffer.empty() && direct != buffer)
        return false;
      if (!direct.empty())
        buffer = direct;
    }
    if (!buffer.empty())
      for (const Member &m : members)
        if (m.signatures[r].direct().empty() && ThreadblockOp(m.tb).getDirectSend())
          return false;
  }
  return true;
}

int64_t floorMod(int64_t v, int64_t m) { return ((v % m) + m) % m; }

/// (a*r + b*k + c) mod m over every member and step of a run, or nullopt.
/// `value(member, k)` is the operand of the run's k-th step in a member.
std::optional<std::array<int64_t, 3>> fitAffine(ArrayRef<Member> members, size_t steps, int64_t m,
                                                llvm::function_ref<int64_t(size_t, size_t)> value) {
  // Keeps a*r + b*k + c well inside int64_t in the generated code too.
  constexpr int64_t kLimit = int64_t(1) << 30;
  if (m < 1 || m > kLimit || int64_t(steps) > kLimit)
    return std::nullopt;
  int64_t r0 = members[0].rank;
  int64_t b = steps > 1 ? floorMod(value(0, 1) - value(0, 0), m) : 0;
  int64_t a = 0;
  if (members.size() > 1) {
    int64_t dr = floorMod(members[1].rank - r0, m);
    int64_t dv = floorMod(value(1, 0) - value(0, 0), m);
    if (dr == 1) {
      a = dv;
    } else {
      // a*dr = dv (mod m): small moduli only, where searching is cheap.
      if (m > (1 << 16))
        return std::nullopt;
      for (a = 0; a < m && (a * dr) % m != dv; ++a) {
      }
      if (a == m)
        return std::nullopt;
    }
  }
  int64_t c = floorMod(value(0, 0) - a * r0, m);
  for (size_t i = 0; i < members.size(); ++i)
    for (size_t k = 0; k < steps; ++k)
      if ((a * members[i].rank + b * int64_t(k) + c) % m != value(i, k))
        return std::nullopt;
  return std::array<int64_t, 3>{a, b, c};
}

struct CollRerollPass : coll::impl::CollRerollPassBase<CollRerollPass> {
  void runOnOperation() override {
    PlanOp plan = getOperation();
    for (auto shape : llvm::make_early_inc_range(plan.getBody().front().getOps<ShapeOp>()))
      shape.erase(); // a plan rerolled again gets fresh shapes
    std::vector<Member> all;
    for (auto rank : plan.getBody().front().getOps<RankOp>())
      for (auto tb : rank.getBody().front().getOps<ThreadblockOp>()) {
        Member member{int64_t(rank.getRank()), tb, {}, {}, {}, {}};
        for (auto step : tb.getBody().front().getOps<StepOpInterface>()) {
          SmallVector<StepField, 4> fields = stepFields(step, /*directSlot=*/true);
          Signature sig(step, fields);
          if (member.signatures.empty() || !(sig == member.signatures.back())) {
            member.runs.push_back({member.steps.size(), 0, member.values.size()});
            member.signatures.push_back(std::move(sig));
          }
          ++member.runs.back().count;
          member.steps.push_back(step);
          for (const StepField &f : fields)
            member.values.push_back(f.value);
        }
        all.push_back(std::move(member));
      }
    // Threadblocks with and without direct connections share code where
    // they can; where they cannot, which steps are direct tells shapes apart.
    std::vector<SmallVector<Member>> groups;
    for (SmallVector<Member> &group : groupByRuns(std::move(all), false)) {
      if (directsAgree(group)) {
        groups.push_back(std::move(group));
        continue;
      }
      for (SmallVector<Member> &apart :
           groupByRuns(std::vector<Member>(std::make_move_iterator(group.begin()),
                                           std::make_move_iterator(group.end())),
                       true))
        groups.push_back(std::move(apart));
    }

    OpBuilder b = OpBuilder::atBlockBegin(&plan.getBody().front());
    int64_t id = 0;
    for (SmallVector<Member> &members : groups) {
      auto shape = ShapeOp::create(b, plan.getLoc(), b.getI64IntegerAttr(id));
      OpBuilder inShape = OpBuilder::atBlockEnd(&shape.getBody().emplaceBlock());
      const Member &leader = members.front();
      for (auto [r, run] : llvm::enumerate(leader.runs)) {
        size_t first = run.first, count = run.count;
        StepOpInterface step = leader.steps[first];
        SmallVector<StepField, 4> fields = stepFields(step, /*directSlot=*/true);
        // Members have the same runs, so the run's values are at the same
        // place in each: field f of step k is values[start + k * fields + f].
        size_t stride = fields.size();
        // The direct destination's buffer, from a member that has one; none
        // where no member has one.
        StringRef direct;
        for (const Member &m : members)
          if (!m.signatures[r].direct().empty())
            direct = m.signatures[r].direct();
        // A count or a number of deps that differs between members is the
        // table's.
        auto same = [&](auto of) {
          return llvm::all_of(members, [&](const Member &m) { return of(m) == of(leader); });
        };
        bool tableWaits = !same([&, r = r](const Member &m) { return m.signatures[r].deps; });
        SmallVector<Attribute> attrs;
        for (auto [f, field] : llvm::enumerate(fields)) {
          if (field.role == FieldRole::direct) {
            if (direct.empty())
              continue;
            field.buffer = direct;
          }
          int64_t chunks = same([&, r = r, f = f](const Member &m) {
            return std::get<2>(m.signatures[r].fields[f]);
          })
                               ? field.count
                               : kTableCount;
          int64_t m = field.role == FieldRole::peer ? int64_t(plan.getRanks())
                                                    : plan.getBufferSize(field.buffer).value_or(0);
          auto value = [&, r = r, f = f, stride](size_t i, size_t k) {
            const Member &member = members[i];
            return member.values[member.runs[r].values + k * stride + f];
          };
          if (auto abc = fitAffine(members, count, m, value))
            attrs.push_back(AffineFieldAttr::get(&getContext(), field.role, field.buffer, chunks,
                                                 (*abc)[0], (*abc)[1], (*abc)[2], m));
          else
            attrs.push_back(TableFieldAttr::get(&getContext(), field.role, field.buffer, chunks));
        }
        // Every step op's mnemonic is a RunKind.
        RunKind kind = *symbolizeRunKind(step->getName().stripDialect());
        RunOp::create(inShape, step.getLoc(), kind, count, inShape.getArrayAttr(attrs),
                      tableWaits ? 0 : step.getDepRefs().size(), tableWaits);
      }
      // A multimem load-reduce and the store of its chunk right after it
      // are one call: the reduced values stay in registers between them.
      auto runs = llvm::to_vector(shape.getBody().front().getOps<RunOp>());
      for (size_t i = 0; i + 1 < runs.size(); ++i)
        if (fusesMultimem(runs[i], runs[i + 1]))
          runs[i].setFuseNext(true);
      for (Member &member : members)
        member.tb.setShape(id);
      ++id;
    }
  }
};

} // namespace
