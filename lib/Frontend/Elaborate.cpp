//===- Elaborate.cpp - Coll syntax tree to global-view IR -----------------===//
//
// Evaluates a parsed program at compile time: parameters (with `-D`
// overrides), `let`, `for`, `if`, `assert` and `reduce(p in ..)` become a
// flat list of `coll.copy` / `coll.reduce` ops, each located at the statement
// that made it. Integer arithmetic is checked: overflow, division by zero and
// out-of-range shifts are errors, as the language contract requires.
//
//===----------------------------------------------------------------------===//

#include "lib/Frontend/Elaborate.h"

#include "dialect/CollOps.h"
#include "lib/Frontend/Parser.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace coll;
namespace ast = coll::ast;

namespace {

constexpr int64_t kMaxRanks = 1 << 16;

/// Annotations in force for a statement, inherited from enclosing blocks.
struct Annotations {
  IntegerAttr channel, pipeline;
  ProtocolAttr protocol;
};

class Elaborator {
public:
  Elaborator(MLIRContext *context, StringAttr file, const ElaborateOptions &options,
             llvm::StringSet<> &usedDefines)
      : context(context), builder(context), file(file), options(options),
        usedDefines(usedDefines) {}

  LogicalResult run(const ast::Algorithm &source, ModuleOp module);

private:
  struct Binding {
    std::string name;
    int64_t value;
    ast::Loc loc;
  };

  Location loc(ast::Loc at) { return FileLineColLoc::get(file, at.line, at.col); }
  InFlightDiagnostic error(ast::Loc at) { return emitError(loc(at)); }

  // Names
  const Binding *lookup(StringRef name) const;
  LogicalResult define(StringRef name, int64_t value, ast::Loc at);
  void popTo(size_t size) {
    while (vars.size() > size) {
      byName.erase(vars.back().name);
      vars.pop_back();
    }
  }

  // Expressions
  FailureOr<int64_t> eval(const ast::Expr &e);
  FailureOr<int64_t> evalBinary(const ast::Expr &e);
  FailureOr<int64_t> evalCall(const ast::Expr &e);

  // Statements
  LogicalResult execBlock(const ast::Block &block, const Annotations &outer);
  LogicalResult exec(const ast::Stmt &s, const Annotations &outer);
  LogicalResult execFor(const ast::Stmt &s, const Annotations &ann);
  LogicalResult execScratch(const ast::Stmt &s);
  LogicalResult execAssign(const ast::Stmt &s, const Annotations &ann);
  LogicalResult execReduce(const ast::Stmt &s, const Annotations &ann);
  FailureOr<Annotations> annotate(const ast::Stmt &s, Annotations ann);
  LogicalResult step(ast::Loc at);

  // Chunks
  std::optional<int64_t> bufferSize(StringRef name) const;
  FailureOr<ChunkAttr> chunk(const ast::ChunkRef &ref);
  PhysicalRange physical(ChunkAttr c) const;
  LogicalResult emit(const ast::Stmt &s, ChunkAttr dst, ArrayRef<ChunkAttr> srcs,
                     ArrayRef<ast::Loc> srcLocs, const Annotations &ann);

  LogicalResult declare(const ast::Algorithm &source);

  MLIRContext *context;
  OpBuilder builder;
  StringAttr file;
  const ElaborateOptions &options;
  llvm::StringSet<> &usedDefines;

  // Names never shadow each other, so each has at most one live binding.
  std::vector<Binding> vars;
  llvm::StringMap<unsigned> byName;
  AlgorithmOp alg;
  Collective collective = Collective::allreduce;
  int64_t ranks = 0, chunks = 1, slots = 0;
  bool inplace = false;
  llvm::StringMap<int64_t> scratchSizes;
  llvm::StringMap<ast::Loc> scratchLocs;
  llvm::DenseMap<const ast::Stmt *, Location> stmtLocs;
  uint64_t steps = 0, ops = 0;
};

} // namespace

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

const Elaborator::Binding *Elaborator::lookup(StringRef name) const {
  auto it = byName.find(name);
  return it == byName.end() ? nullptr : &vars[it->second];
}

LogicalResult Elaborator::define(StringRef name, int64_t value, ast::Loc at) {
  if (const Binding *previous = lookup(name)) {
    InFlightDiagnostic diag = error(at) << "'" << name << "' is already defined";
    diag.attachNote(loc(previous->loc)) << "previous definition is here";
    return failure();
  }
  byName[name] = vars.size();
  vars.push_back({name.str(), value, at});
  return success();
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

FailureOr<int64_t> Elaborator::eval(const ast::Expr &e) {
  switch (e.kind) {
  case ast::Expr::Kind::Int:
    return e.value;
  case ast::Expr::Kind::Var: {
    if (const Binding *b = lookup(e.name))
      return b->value;
    return error(e.loc) << "unknown name '" << e.name << "'";
  }
  case ast::Expr::Kind::Unary: {
    FailureOr<int64_t> v = eval(*e.args[0]);
    if (failed(v))
      return failure();
    if (e.name == "!")
      return int64_t(*v == 0);
    if (e.name == "~")
      return ~*v;
    if (*v == INT64_MIN)
      return error(e.loc) << "integer overflow in -(" << *v << ")";
    return -*v;
  }
  case ast::Expr::Kind::Binary:
    return evalBinary(e);
  case ast::Expr::Kind::Call:
    return evalCall(e);
  }
  return failure();
}

FailureOr<int64_t> Elaborator::evalBinary(const ast::Expr &e) {
  const std::string &op = e.name;
  FailureOr<int64_t> lhs = eval(*e.args[0]);
  if (failed(lhs))
    return failure();
  // && and || evaluate their right side only when needed, so that
  // `b != 0 && a / b > 1` is safe.
  if (op == "&&" && *lhs == 0)
    return int64_t(0);
  if (op == "||" && *lhs != 0)
    return int64_t(1);
  FailureOr<int64_t> rhs = eval(*e.args[1]);
  if (failed(rhs))
    return failure();
  int64_t a = *lhs, b = *rhs, r = 0;
  auto overflow = [&]() {
    return error(e.opLoc) << "integer overflow in " << a << " " << op << " " << b;
  };
  if (op == "&&" || op == "||")
    return int64_t(b != 0);
  if (op == "+")
    return __builtin_add_overflow(a, b, &r) ? FailureOr<int64_t>(overflow()) : r;
  if (op == "-")
    return __builtin_sub_overflow(a, b, &r) ? FailureOr<int64_t>(overflow()) : r;
  if (op == "*")
    return __builtin_mul_overflow(a, b, &r) ? FailureOr<int64_t>(overflow()) : r;
  if (op == "/" || op == "%") {
    if (b == 0)
      return error(e.opLoc) << (op == "/" ? "division" : "remainder") << " by zero";
    if (a == INT64_MIN && b == -1)
      return op == "/" ? FailureOr<int64_t>(overflow()) : int64_t(0);
    int64_t q = a / b, m = a % b;
    if (op == "/")
      return m != 0 && ((m < 0) != (b < 0)) ? q - 1 : q;
    return m < 0 ? (b < 0 ? m - b : m + b) : m;
  }
  if (op == "<<" || op == ">>") {
    if (b < 0 || b > 63)
      return error(e.opLoc) << "shift amount " << b << " is out of range [0, 63]";
    if (op == ">>")
      return a >> b;
    __int128 wide = static_cast<__int128>(a) * (static_cast<__int128>(1) << b);
    if (wide > INT64_MAX || wide < INT64_MIN)
      return overflow();
    return static_cast<int64_t>(wide);
  }
  if (op == "&")
    return a & b;
  if (op == "|")
    return a | b;
  if (op == "^")
    return a ^ b;
  if (op == "==")
    return int64_t(a == b);
  if (op == "!=")
    return int64_t(a != b);
  if (op == "<")
    return int64_t(a < b);
  if (op == "<=")
    return int64_t(a <= b);
  if (op == ">")
    return int64_t(a > b);
  if (op == ">=")
    return int64_t(a >= b);
  return error(e.opLoc) << "unknown operator '" << op << "'";
}

FailureOr<int64_t> Elaborator::evalCall(const ast::Expr &e) {
  size_t arity = e.name == "min" || e.name == "max" ? 2
                 : e.name == "abs" || e.name == "log2" || e.name == "ispow2" ? 1
                                                                              : 0;
  if (arity == 0)
    return error(e.loc) << "unknown function '" << e.name
                        << "'; the built-ins are min, max, abs, log2 and ispow2";
  if (e.args.size() != arity)
    return error(e.loc) << e.name << " takes " << arity << " argument"
                        << (arity == 1 ? "" : "s") << ", got " << e.args.size();
  SmallVector<int64_t, 2> args;
  for (const auto &arg : e.args) {
    FailureOr<int64_t> v = eval(*arg);
    if (failed(v))
      return failure();
    args.push_back(*v);
  }
  int64_t a = args[0];
  if (e.name == "min")
    return std::min(a, args[1]);
  if (e.name == "max")
    return std::max(a, args[1]);
  bool pow2 = a > 0 && (a & (a - 1)) == 0;
  if (e.name == "ispow2")
    return int64_t(pow2);
  if (e.name == "abs") {
    if (a == INT64_MIN)
      return error(e.loc) << "integer overflow in abs(" << a << ")";
    return a < 0 ? -a : a;
  }
  if (!pow2)
    return error(e.loc) << "log2(" << a << ") is not exact: " << a
                        << " is not a power of two";
  return int64_t(llvm::Log2_64(static_cast<uint64_t>(a)));
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

LogicalResult Elaborator::step(ast::Loc at) {
  if (++steps > options.maxSteps)
    return error(at) << "the program runs too long: more than " << options.maxSteps
                     << " statements and loop iterations";
  return success();
}

FailureOr<Annotations> Elaborator::annotate(const ast::Stmt &s, Annotations ann) {
  for (const ast::Annotation &a : s.annotations) {
    if (a.name == "protocol") {
      std::optional<Protocol> p;
      if (a.arg->kind == ast::Expr::Kind::Var)
        p = symbolizeProtocol(a.arg->name);
      if (!p)
        return error(a.arg->loc) << "@protocol expects Simple, LL or LL128";
      ann.protocol = ProtocolAttr::get(context, *p);
      continue;
    }
    if (a.name != "channel" && a.name != "pipeline")
      return error(a.loc) << "unknown annotation '@" << a.name
                          << "'; expected @channel, @protocol or @pipeline";
    FailureOr<int64_t> v = eval(*a.arg);
    if (failed(v))
      return failure();
    if (a.name == "channel") {
      if (*v < 0)
        return error(a.arg->loc) << "@channel needs a channel number >= 0, got " << *v;
      ann.channel = builder.getI64IntegerAttr(*v);
    } else {
      if (*v < 1)
        return error(a.arg->loc) << "@pipeline needs a depth >= 1, got " << *v;
      ann.pipeline = builder.getI64IntegerAttr(*v);
    }
  }
  return ann;
}

LogicalResult Elaborator::execBlock(const ast::Block &block, const Annotations &outer) {
  size_t mark = vars.size();
  for (const ast::StmtPtr &s : block)
    if (failed(exec(*s, outer)))
      return failure();
  popTo(mark);
  return success();
}

LogicalResult Elaborator::exec(const ast::Stmt &s, const Annotations &outer) {
  if (failed(step(s.loc)))
    return failure();
  using Kind = ast::Stmt::Kind;
  bool annotatable = s.kind == Kind::Block || s.kind == Kind::For ||
                     s.kind == Kind::If || s.kind == Kind::Assign ||
                     s.kind == Kind::Reduce;
  if (!s.annotations.empty() && !annotatable)
    return error(s.annotations.front().loc)
           << "annotations apply to copies, reductions and blocks only";
  FailureOr<Annotations> ann = annotate(s, outer);
  if (failed(ann))
    return failure();

  switch (s.kind) {
  case Kind::Block:
    return execBlock(s.body, *ann);
  case Kind::Let: {
    FailureOr<int64_t> v = eval(*s.a);
    return failed(v) ? failure() : define(s.name, *v, s.loc);
  }
  case Kind::For:
    return execFor(s, *ann);
  case Kind::If:
    for (const auto &[cond, body] : s.arms) {
      FailureOr<int64_t> v = eval(*cond);
      if (failed(v))
        return failure();
      if (*v != 0)
        return execBlock(body, *ann);
    }
    return execBlock(s.orElse, *ann);
  case Kind::Assert: {
    FailureOr<int64_t> v = eval(*s.a);
    if (failed(v))
      return failure();
    if (*v == 0)
      return error(s.loc) << "assertion failed: " << s.message;
    return success();
  }
  case Kind::Scratch:
    return execScratch(s);
  case Kind::Assign:
    return execAssign(s, *ann);
  case Kind::Reduce:
    return execReduce(s, *ann);
  }
  return failure();
}

LogicalResult Elaborator::execFor(const ast::Stmt &s, const Annotations &ann) {
  FailureOr<int64_t> lo = eval(*s.a), hi = eval(*s.b);
  if (failed(lo) || failed(hi))
    return failure();
  int64_t stride = 1;
  if (s.c) {
    FailureOr<int64_t> v = eval(*s.c);
    if (failed(v))
      return failure();
    if (*v == 0)
      return error(s.c->loc) << "loop step must not be zero";
    stride = *v;
  }
  for (int64_t i = *lo; stride > 0 ? i < *hi : i > *hi;) {
    if (failed(step(s.loc)))
      return failure();
    size_t mark = vars.size();
    if (failed(define(s.name, i, s.loc)) || failed(execBlock(s.body, ann)))
      return failure();
    popTo(mark);
    if (__builtin_add_overflow(i, stride, &i))
      break;
  }
  return success();
}

LogicalResult Elaborator::execScratch(const ast::Stmt &s) {
  if (s.name == "in" || s.name == "out")
    return error(s.loc) << "a scratch buffer may not be named '" << s.name << "'";
  if (auto it = scratchLocs.find(s.name); it != scratchLocs.end()) {
    InFlightDiagnostic diag = error(s.loc)
                              << "scratch buffer '" << s.name << "' is already declared";
    diag.attachNote(loc(it->second)) << "previous declaration is here";
    return failure();
  }
  FailureOr<int64_t> size = eval(*s.a);
  if (failed(size))
    return failure();
  if (*size < 1)
    return error(s.a->loc) << "scratch buffer '" << s.name
                           << "' needs at least one chunk, got " << *size;
  if (*size > options.maxSlots / ranks || (slots += *size * ranks) > options.maxSlots)
    return error(s.a->loc) << "scratch buffer '" << s.name << "' is too large";
  scratchSizes[s.name] = *size;
  scratchLocs[s.name] = s.loc;
  return success();
}

std::optional<int64_t> Elaborator::bufferSize(StringRef name) const {
  bool perRank = false;
  if (name == "in")
    perRank = collective == Collective::reducescatter || collective == Collective::alltoall;
  else if (name == "out")
    perRank = collective == Collective::allgather || collective == Collective::alltoall;
  else if (auto it = scratchSizes.find(name); it != scratchSizes.end())
    return it->second;
  else
    return std::nullopt;
  return perRank ? ranks * chunks : chunks;
}

FailureOr<ChunkAttr> Elaborator::chunk(const ast::ChunkRef &ref) {
  std::optional<int64_t> size = bufferSize(ref.buffer);
  if (!size)
    return error(ref.loc) << "unknown buffer '" << ref.buffer
                          << "'; expected in, out or a declared scratch buffer";
  FailureOr<int64_t> rank = eval(*ref.rank);
  if (failed(rank))
    return failure();
  if (*rank < 0 || *rank >= ranks)
    return error(ref.rank->loc) << "rank " << *rank << " is out of range: the algorithm has "
                                << ranks << " ranks (0 .. " << ranks << ")";
  FailureOr<int64_t> index = eval(*ref.index);
  if (failed(index))
    return failure();
  auto outOfRange = [&](ast::Loc at, int64_t chunk) {
    return error(at) << "chunk " << chunk << " of " << ref.buffer
                     << " is out of range: " << ref.buffer << " has " << *size << " chunk"
                     << (*size == 1 ? "" : "s") << " per rank (0 .. " << *size << ")";
  };
  if (*index < 0 || *index >= *size)
    return outOfRange(ref.index->loc, *index);
  int64_t end = *index + 1;
  if (ref.end) {
    FailureOr<int64_t> e = eval(*ref.end);
    if (failed(e))
      return failure();
    end = *e;
    if (end <= *index)
      return error(ref.index->loc)
             << "chunk range " << *index << " .. " << end << " of " << ref.buffer
             << " is empty";
    if (end > *size)
      return outOfRange(ref.end->loc, end - 1);
  }
  return ChunkAttr::get(context, StringAttr::get(context, ref.buffer), *rank,
                        *index, end - *index);
}

static std::string show(ChunkAttr c) {
  std::string s = c.getBuffer().str() + "[" + std::to_string(c.getRank()) + "][" +
                  std::to_string(c.getIndex());
  if (c.getCount() != 1)
    s += " .. " + std::to_string(c.getEnd());
  return s + "]";
}


PhysicalRange Elaborator::physical(ChunkAttr c) const {
  return physicalRange(collective, chunks, inplace, c);
}

LogicalResult Elaborator::emit(const ast::Stmt &s, ChunkAttr dst,
                               ArrayRef<ChunkAttr> srcs, ArrayRef<ast::Loc> srcLocs,
                               const Annotations &ann) {
  for (size_t i = 0; i < srcs.size(); ++i) {
    if (srcs[i].getCount() != dst.getCount())
      return error(srcLocs[i]) << "source " << show(srcs[i]) << " has "
                               << srcs[i].getCount() << " chunk"
                               << (srcs[i].getCount() == 1 ? "" : "s")
                               << " but the destination "
                               << show(dst) << " has " << dst.getCount();
    // Overlap is judged on memory, so `in` and `out` of an in-place
    // algorithm count as the same buffer.
    PhysicalRange from = physical(srcs[i]), to = physical(dst);
    if (!from.overlaps(to))
      continue;
    bool same = from.begin == to.begin && from.end == to.end;
    if (same && srcs.size() > 1)
      continue; // `a += b`: the destination is one of the terms
    if (same)
      return error(srcLocs[i]) << "copies " << show(srcs[i]) << " onto itself"
                               << (srcs[i] == dst ? "" : " (in place, " + show(dst) +
                                                             " is the same memory)");
    return error(srcLocs[i]) << "source " << show(srcs[i]) << " overlaps the destination "
                             << show(dst);
  }
  // Each source chunk costs the verifier and the lowering one step.
  ops += uint64_t(dst.getCount()) * srcs.size();
  if (ops > options.maxOps)
    return error(s.loc) << "the program is too large: more than " << options.maxOps
                        << " chunks copied or reduced";
  auto [it, inserted] = stmtLocs.try_emplace(&s, builder.getUnknownLoc());
  if (inserted)
    it->second = loc(s.loc);
  if (srcs.size() == 1) {
    CopyOp::create(builder, it->second, srcs[0], dst, ann.channel, ann.protocol,
                   ann.pipeline);
  } else {
    SmallVector<Attribute> list(srcs.begin(), srcs.end());
    ReduceOp::create(builder, it->second, builder.getArrayAttr(list), dst,
                     ann.channel, ann.protocol, ann.pipeline);
  }
  return success();
}

LogicalResult Elaborator::execAssign(const ast::Stmt &s, const Annotations &ann) {
  FailureOr<ChunkAttr> dst = chunk(s.dst);
  if (failed(dst))
    return failure();
  SmallVector<ChunkAttr, 4> srcs;
  SmallVector<ast::Loc, 4> locs;
  if (s.accumulate) {
    srcs.push_back(*dst);
    locs.push_back(s.dst.loc);
  }
  for (const ast::ChunkRef &ref : s.srcs) {
    FailureOr<ChunkAttr> src = chunk(ref);
    if (failed(src))
      return failure();
    srcs.push_back(*src);
    locs.push_back(ref.loc);
  }
  return emit(s, *dst, srcs, locs, ann);
}

LogicalResult Elaborator::execReduce(const ast::Stmt &s, const Annotations &ann) {
  FailureOr<ChunkAttr> dst = chunk(s.dst);
  if (failed(dst))
    return failure();
  FailureOr<int64_t> lo = eval(*s.a), hi = eval(*s.b);
  if (failed(lo) || failed(hi))
    return failure();
  if (*hi <= *lo)
    return error(s.a->loc) << "reduce over an empty range " << *lo << " .. " << *hi;
  if (static_cast<__int128>(*hi) - *lo > ranks * 64)
    return error(s.a->loc) << "reduce over " << *lo << " .. " << *hi
                           << " has too many terms (more than 64 per rank)";
  SmallVector<ChunkAttr, 8> srcs;
  SmallVector<ast::Loc, 8> locs;
  for (int64_t p = *lo; p < *hi; ++p) {
    size_t mark = vars.size();
    if (failed(define(s.name, p, s.loc)))
      return failure();
    FailureOr<ChunkAttr> src = chunk(s.srcs[0]);
    if (failed(src))
      return failure();
    popTo(mark);
    srcs.push_back(*src);
    locs.push_back(s.srcs[0].loc);
  }
  // A one-term reduction of the destination itself (a group of one) is a
  // no-op, not a copy onto itself.
  if (srcs.size() == 1) {
    PhysicalRange from = physical(srcs[0]), to = physical(*dst);
    if (from.overlaps(to) && from.begin == to.begin && from.end == to.end)
      return success();
  }
  return emit(s, *dst, srcs, locs, ann);
}

//===----------------------------------------------------------------------===//
// Algorithms
//===----------------------------------------------------------------------===//

LogicalResult Elaborator::declare(const ast::Algorithm &source) {
  std::optional<Collective> c = symbolizeCollective(source.collective);
  if (!c)
    return error(source.collectiveLoc)
           << "unknown collective '" << source.collective
           << "'; expected allreduce, reducescatter, allgather, alltoall, "
              "broadcast or reduce";
  collective = *c;
  for (const ast::Param &p : source.params) {
    // The last -D of a name wins, as with a C compiler.
    auto override = llvm::find_if(llvm::reverse(options.defines),
                                  [&](const auto &d) { return d.first == p.name; });
    int64_t value;
    if (override != llvm::reverse(options.defines).end()) {
      value = override->second;
      usedDefines.insert(p.name);
    } else {
      FailureOr<int64_t> v = eval(*p.value);
      if (failed(v))
        return failure();
      value = *v;
    }
    if (failed(define(p.name, value, p.loc)))
      return failure();
  }
  const Binding *r = lookup("ranks");
  if (!r)
    return error(source.collectiveLoc) << "the parameters must define 'ranks'";
  if (r->value < 1 || r->value > kMaxRanks)
    return error(r->loc) << "ranks must be in 1 .. " << kMaxRanks << ", got " << r->value;
  ranks = r->value;
  if (source.chunks) {
    FailureOr<int64_t> v = eval(*source.chunks);
    if (failed(v))
      return failure();
    if (*v < 1 || *v > options.maxSlots)
      return error(source.chunks->loc)
             << "chunks must be in 1 .. " << options.maxSlots << ", got " << *v;
    chunks = *v;
  }
  if (collective == Collective::broadcast || collective == Collective::reduce) {
    const Binding *root = lookup("root");
    if (root && (root->value < 0 || root->value >= ranks))
      return error(root->loc) << "root " << root->value << " is not a rank (0 .. "
                              << ranks << ")";
  }
  inplace = source.inplace;
  // in + out per rank, before scratch.
  int64_t perRank = *bufferSize("in") + *bufferSize("out");
  if (chunks > options.maxSlots / ranks || perRank > options.maxSlots / ranks)
    return error(source.loc) << "buffers of " << ranks << " ranks x " << perRank
                             << " chunks are too large";
  slots = perRank * ranks;
  return success();
}

LogicalResult Elaborator::run(const ast::Algorithm &source, ModuleOp module) {
  if (failed(declare(source)))
    return failure();
  builder.setInsertionPointToEnd(module.getBody());
  IntegerAttr root;
  if (collective == Collective::broadcast || collective == Collective::reduce) {
    const Binding *b = lookup("root");
    root = builder.getI64IntegerAttr(b ? b->value : 0);
  }
  SmallVector<NamedAttribute> params;
  for (const Binding &b : vars)
    if (b.name != "ranks" && b.name != "root")
      params.push_back(builder.getNamedAttr(b.name, builder.getI64IntegerAttr(b.value)));
  alg = AlgorithmOp::create(
      builder, loc(source.loc), builder.getStringAttr(source.name),
      CollectiveAttr::get(context, collective), builder.getI64IntegerAttr(ranks),
      builder.getI64IntegerAttr(chunks), root,
      inplace ? builder.getUnitAttr() : UnitAttr(), DictionaryAttr(),
      params.empty() ? DictionaryAttr() : builder.getDictionaryAttr(params));
  builder.setInsertionPointToEnd(&alg.getBody().emplaceBlock());
  if (failed(execBlock(source.body, Annotations())))
    return failure();
  if (!scratchSizes.empty()) {
    SmallVector<NamedAttribute> scratch;
    for (const auto &entry : scratchSizes)
      scratch.push_back(
          builder.getNamedAttr(entry.getKey(), builder.getI64IntegerAttr(entry.getValue())));
    alg.setScratchAttr(builder.getDictionaryAttr(scratch));
  }
  return success();
}

OwningOpRef<ModuleOp> coll::importColl(llvm::SourceMgr &sourceMgr, MLIRContext *context,
                                       const ElaborateOptions &options,
                                       TimingScope &timing, std::string *unusedDefine) {
  context->getOrLoadDialect<CollDialect>();
  const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  StringAttr file = StringAttr::get(context, buffer->getBufferIdentifier());
  ast::File tree;
  ast::SyntaxError syntax;
  TimingScope parseTiming = timing.nest("parse");
  if (!ast::parseFile(std::string_view(buffer->getBufferStart(), buffer->getBufferSize()),
                      tree, syntax)) {
    emitError(FileLineColLoc::get(file, syntax.loc.line, syntax.loc.col)) << syntax.message;
    return nullptr;
  }

  parseTiming.stop();
  TimingScope elaborateTiming = timing.nest("elaborate");
  OwningOpRef<ModuleOp> module = ModuleOp::create(FileLineColLoc::get(file, 1, 1));
  llvm::StringMap<ast::Loc> seen;
  llvm::StringSet<> usedDefines;
  bool found = false;
  for (const ast::Algorithm &alg : tree.algorithms) {
    auto [it, inserted] = seen.try_emplace(alg.name, alg.loc);
    if (!inserted) {
      InFlightDiagnostic diag = emitError(FileLineColLoc::get(file, alg.loc.line, alg.loc.col))
                                << "algorithm '" << alg.name << "' is defined twice";
      diag.attachNote(FileLineColLoc::get(file, it->second.line, it->second.col))
          << "first definition is here";
      return nullptr;
    }
    if (!options.algorithm.empty() && alg.name != options.algorithm)
      continue;
    found = true;
    if (failed(Elaborator(context, file, options, usedDefines).run(alg, *module)))
      return nullptr;
  }
  if (!found) {
    InFlightDiagnostic diag = emitError(FileLineColLoc::get(file, 1, 1));
    if (options.algorithm.empty())
      diag << "the file defines no algorithm";
    else
      diag << "no algorithm named '" << options.algorithm << "' in this file";
    return nullptr;
  }
  for (const auto &[name, value] : options.defines)
    if (!usedDefines.contains(name)) {
      if (unusedDefine)
        *unusedDefine = name;
      return nullptr;
    }
  return module;
}
