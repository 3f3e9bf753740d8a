//===- ElaborateStmt.cpp - Statements and chunks --------------------------===//
//
// Runs `let`, `for`, `if`, `assert`, scratch declarations, copies and
// reductions, and turns each copy or reduction into a `coll.copy` or
// `coll.reduce` located at its statement, after checking its chunks.
//
//===----------------------------------------------------------------------===//

#include "lib/Frontend/Elaborator.h"

using namespace mlir;
using namespace coll;
using namespace coll::elaborate;

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
      if (!counting)
        ann.channel = builder.getI64IntegerAttr(*v);
    } else {
      if (*v < 1)
        return error(a.arg->loc) << "@pipeline needs a depth >= 1, got " << *v;
      if (!counting)
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
  bool annotatable = s.kind == Kind::Block || s.kind == Kind::For || s.kind == Kind::If ||
                     s.kind == Kind::Assign || s.kind == Kind::Reduce;
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
    return error(s.a->loc) << "scratch buffer '" << s.name << "' needs at least one chunk, got "
                           << *size;
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

FailureOr<ChunkRange> Elaborator::chunk(const ast::ChunkRef &ref) {
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
             << "chunk range " << *index << " .. " << end << " of " << ref.buffer << " is empty";
    if (end > *size)
      return outOfRange(ref.end->loc, end - 1);
  }
  return ChunkRange{ref.buffer, *size, *rank, *index, end - *index};
}

ChunkAttr Elaborator::attr(const ChunkRange &c) {
  auto buffer =
      llvm::find_if(bufferChunks, [&](const BufferChunks &b) { return b.name == c.buffer; });
  if (buffer == bufferChunks.end())
    buffer = bufferChunks.insert(buffer, {c.buffer.str(), StringAttr::get(context, c.buffer), {}});
  if (c.count != 1 || ranks * c.size > (int64_t(1) << 22))
    return ChunkAttr::get(context, buffer->attr, c.rank, c.index, c.count);
  if (buffer->single.empty())
    buffer->single.resize(ranks * c.size);
  ChunkAttr &a = buffer->single[c.rank * c.size + c.index];
  if (!a)
    a = ChunkAttr::get(context, buffer->attr, c.rank, c.index, 1);
  return a;
}

static std::string show(const ChunkRange &c) {
  std::string s = c.buffer.str() + "[" + std::to_string(c.rank) + "][" + std::to_string(c.index);
  if (c.count != 1)
    s += " .. " + std::to_string(c.end());
  return s + "]";
}

PhysicalRange Elaborator::physical(const ChunkRange &c) const {
  return physicalRange(collective, chunks, inplace, c.buffer, c.rank, c.index, c.end());
}

LogicalResult Elaborator::emit(const ast::Stmt &s, const ChunkRange &dst, ArrayRef<ChunkRange> srcs,
                               ArrayRef<ast::Loc> srcLocs, const Annotations &ann) {
  for (size_t i = 0; i < srcs.size(); ++i) {
    if (srcs[i].count != dst.count)
      return error(srcLocs[i]) << "source " << show(srcs[i]) << " has " << srcs[i].count << " chunk"
                               << (srcs[i].count == 1 ? "" : "s") << " but the destination "
                               << show(dst) << " has " << dst.count;
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
                               << (srcs[i] == dst
                                       ? ""
                                       : " (in place, " + show(dst) + " is the same memory)");
    return error(srcLocs[i]) << "source " << show(srcs[i]) << " overlaps the destination "
                             << show(dst);
  }
  // Each source chunk costs the verifier and the lowering one step.
  ops += uint64_t(dst.count) * srcs.size();
  if (ops > options.maxOps)
    return error(s.loc) << "the program is too large: more than " << options.maxOps
                        << " chunks copied or reduced";
  if (!counting)
    build(s, dst, srcs, ann);
  return success();
}

void Elaborator::build(const ast::Stmt &s, const ChunkRange &dst, ArrayRef<ChunkRange> srcs,
                       const Annotations &ann) {
  auto [it, inserted] = stmtLocs.try_emplace(&s, builder.getUnknownLoc());
  if (inserted)
    it->second = loc(s.loc);
  if (srcs.size() == 1) {
    CopyOp::create(builder, it->second, attr(srcs[0]), attr(dst), ann.channel, ann.protocol,
                   ann.pipeline);
    return;
  }
  SmallVector<Attribute> list;
  list.reserve(srcs.size());
  for (const ChunkRange &src : srcs)
    list.push_back(attr(src));
  ReduceOp::create(builder, it->second, builder.getArrayAttr(list), attr(dst), ann.channel,
                   ann.protocol, ann.pipeline);
}

LogicalResult Elaborator::execAssign(const ast::Stmt &s, const Annotations &ann) {
  FailureOr<ChunkRange> dst = chunk(s.dst);
  if (failed(dst))
    return failure();
  SmallVector<ChunkRange, 4> srcs;
  SmallVector<ast::Loc, 4> locs;
  if (s.accumulate) {
    srcs.push_back(*dst);
    locs.push_back(s.dst.loc);
  }
  for (const ast::ChunkRef &ref : s.srcs) {
    FailureOr<ChunkRange> src = chunk(ref);
    if (failed(src))
      return failure();
    srcs.push_back(*src);
    locs.push_back(ref.loc);
  }
  return emit(s, *dst, srcs, locs, ann);
}

LogicalResult Elaborator::execReduce(const ast::Stmt &s, const Annotations &ann) {
  FailureOr<ChunkRange> dst = chunk(s.dst);
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
  SmallVector<ChunkRange, 8> srcs;
  SmallVector<ast::Loc, 8> locs;
  for (int64_t p = *lo; p < *hi; ++p) {
    size_t mark = vars.size();
    if (failed(define(s.name, p, s.loc)))
      return failure();
    FailureOr<ChunkRange> src = chunk(s.srcs[0]);
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
