//===- Elaborate.cpp - Coll syntax tree to global-view IR -----------------===//
//
// Evaluates a parsed program at compile time: parameters (with `-D`
// overrides), `let`, `for`, `if`, `assert` and `reduce(p in ..)` become a
// flat list of `coll.copy` / `coll.reduce` ops, each located at the statement
// that made it. Integer arithmetic is checked: overflow, division by zero and
// out-of-range shifts are errors, as the language contract requires.
//
//===----------------------------------------------------------------------===//

#include "lib/Frontend/Elaborator.h"

#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace coll;
using namespace coll::elaborate;

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
      return error(root->loc) << "root " << root->value << " is not a rank (0 .. " << ranks << ")";
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
  if (counting)
    return execBlock(source.body, Annotations());
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
  alg = AlgorithmOp::create(builder, loc(source.loc), builder.getStringAttr(source.name),
                            CollectiveAttr::get(context, collective),
                            builder.getI64IntegerAttr(ranks), builder.getI64IntegerAttr(chunks),
                            root, inplace ? builder.getUnitAttr() : UnitAttr(), DictionaryAttr(),
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
                                       const ElaborateOptions &options, TimingScope &timing,
                                       std::string *unusedDefine) {
  context->getOrLoadDialect<CollDialect>();
  const llvm::MemoryBuffer *buffer = sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  StringAttr file = StringAttr::get(context, buffer->getBufferIdentifier());
  ast::File tree;
  ast::SyntaxError syntax;
  TimingScope parseTiming = timing.nest("parse");
  if (!ast::parseFile(std::string_view(buffer->getBufferStart(), buffer->getBufferSize()), tree,
                      syntax)) {
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
    // Counting first reports the same first error as building would, and
    // builds only a program within the limits.
    for (bool counting : {true, false})
      if (failed(Elaborator(context, file, options, usedDefines, counting).run(alg, *module)))
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
