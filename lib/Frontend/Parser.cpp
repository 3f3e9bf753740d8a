//===- Parser.cpp - Coll source text to syntax tree -----------------------===//
//
// Runs the ANTLR-generated parser and converts its tree into the plain AST.
// This is the only code built with exceptions: ANTLR may throw, and nothing
// thrown here leaves `parseFile`.
//
//===----------------------------------------------------------------------===//

#include "lib/Frontend/Parser.h"

#include "CollLexer.h"
#include "CollParser.h"
#include "antlr4-runtime.h"

#include <algorithm>
#include <cstdio>

using namespace coll::ast;

namespace {

// Limits that keep recursion in ANTLR and in the compiler bounded, whatever
// the input.
constexpr int kMaxNesting = 256;
constexpr unsigned kMaxExprDepth = 4096;
// Limits that keep ANTLR's memory bounded beside kMaxSourceBytes: the
// source is lexed a block at a time and refused past a limit, before the
// parser runs. Statements end at `;`, `{` or `}`; no real one comes near the
// limit, and a long expression would be nested too deeply anyway.
constexpr size_t kMaxTokens = size_t(1) << 20;
constexpr size_t kMaxStatementTokens = size_t(1) << 16;

std::string quote(const std::string &text) {
  std::string out = "'";
  for (unsigned char c : text) {
    if ((c >= 0x20 && c < 0x7f) || c >= 0x80) { // input is valid UTF-8
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    }
  }
  return out + "'";
}

/// Maps ANTLR's columns (code points) to byte columns, which is what editors
/// and MLIR's diagnostics count.
class Columns {
public:
  explicit Columns(std::string_view text) : text(text) {
    starts.push_back(0);
    ascii.push_back(true);
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') {
        starts.push_back(i + 1);
        ascii.push_back(true);
      } else if (static_cast<unsigned char>(text[i]) >= 0x80) {
        ascii.back() = false;
      }
    }
  }

  /// 1-based byte column of the 0-based code point `col` on 1-based `line`.
  /// ASCII lines map directly; others resume from the last position asked
  /// for, since tokens arrive in order, so a long line costs linear time.
  unsigned byteColumn(size_t line, size_t col) const {
    if (line == 0 || line > starts.size() || ascii[line - 1])
      return col + 1;
    size_t start = starts[line - 1];
    if (cacheLine != line || cacheCol > col) {
      cacheLine = line;
      cacheCol = 0;
      cacheAt = start;
    }
    while (cacheCol < col && cacheAt < text.size() && text[cacheAt] != '\n') {
      ++cacheAt;
      while (cacheAt < text.size() && (static_cast<unsigned char>(text[cacheAt]) & 0xc0) == 0x80)
        ++cacheAt;
      ++cacheCol;
    }
    return cacheAt - start + 1;
  }

  /// Line and byte column of byte `offset`.
  Loc locate(size_t offset) const {
    size_t line = std::upper_bound(starts.begin(), starts.end(), offset) - starts.begin();
    return {static_cast<unsigned>(line), static_cast<unsigned>(offset - starts[line - 1] + 1)};
  }

private:
  std::string_view text;
  std::vector<size_t> starts;
  std::vector<bool> ascii;
  mutable size_t cacheLine = 0, cacheCol = 0, cacheAt = 0;
};

thread_local const Columns *columns = nullptr;

Loc makeLoc(size_t line, size_t col) {
  return {static_cast<unsigned>(line),
          columns ? columns->byteColumn(line, col) : static_cast<unsigned>(col) + 1};
}

/// The offset of the first byte that is not valid UTF-8, or npos. ANTLR's
/// input stream would throw on it.
size_t invalidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = text[i];
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xe  ? 3
                 : (c >> 3) == 0x1e ? 4
                                    : 0;
    if (len == 0 || i + len > text.size())
      return i;
    uint32_t cp = len == 1 ? c : c & (0x7f >> len);
    for (size_t k = 1; k < len; ++k) {
      unsigned char d = text[i + k];
      if ((d & 0xc0) != 0x80)
        return i;
      cp = cp << 6 | (d & 0x3f);
    }
    bool overlong =
        (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
      return i;
    i += len;
  }
  return std::string_view::npos;
}

/// Thrown inside the converter, caught in parseFile.
struct ConvertError {
  SyntaxError error;
};

/// Records the first syntax error, worded for users rather than as ANTLR's
/// internal messages.
class ErrorCollector : public antlr4::BaseErrorListener {
public:
  bool failed = false;
  SyntaxError first;

  void syntaxError(antlr4::Recognizer *recognizer, antlr4::Token *offending, size_t line,
                   size_t col, const std::string &msg, std::exception_ptr) override {
    if (failed)
      return;
    failed = true;
    first.loc = makeLoc(line, col);
    auto *parser = dynamic_cast<antlr4::Parser *>(recognizer);
    if (!parser || !offending) {
      first.message = lexerMessage(msg);
      return;
    }
    std::string found =
        offending->getType() == antlr4::Token::EOF ? "end of file" : quote(offending->getText());
    std::string expected;
    try {
      expected = describe(parser->getExpectedTokens(), parser->getVocabulary());
    } catch (...) {
    }
    first.message =
        expected.empty() ? "unexpected " + found : "expected " + expected + ", found " + found;
    // A missing `;` or `}` is best shown right after the token it should
    // follow, not at the start of the next line.
    antlr4::Token *previous = parser->getTokenStream()->LT(-1);
    bool wantsTerminator = expected.find("';'") != std::string::npos;
    if (wantsTerminator && previous && previous->getLine() < line) {
      std::string text = previous->getText();
      size_t codePoints = 0;
      for (unsigned char c : text)
        codePoints += (c & 0xc0) != 0x80;
      if (text.find('\n') == std::string::npos)
        first.loc = makeLoc(previous->getLine(), previous->getCharPositionInLine() + codePoints);
    }
  }

private:
  static std::string lexerMessage(const std::string &msg) {
    std::string::size_type at = msg.find("at: '");
    std::string text = at == std::string::npos ? "" : msg.substr(at + 5);
    if (!text.empty() && text.back() == '\'')
      text.pop_back();
    if (text.rfind("\"", 0) == 0)
      return "unterminated string";
    if (text.rfind("/*", 0) == 0)
      return "unterminated comment";
    // The first character, whole: it may take several bytes in UTF-8.
    size_t len = 1;
    while (len < text.size() && (static_cast<unsigned char>(text[len]) & 0xc0) == 0x80)
      ++len;
    return "unexpected character " + quote(text.substr(0, len));
  }

  static std::string describe(const antlr4::misc::IntervalSet &set,
                              const antlr4::dfa::Vocabulary &vocab) {
    std::vector<std::string> names;
    for (ssize_t t : set.toList()) {
      std::string name;
      if (t == ssize_t(antlr4::Token::EOF))
        name = "end of file";
      else if (t == CollParser::IDENT)
        name = "a name";
      else if (t == CollParser::INT)
        name = "an integer";
      else if (t == CollParser::STRING)
        name = "a string";
      else
        name = vocab.getDisplayName(t);
      if (std::find(names.begin(), names.end(), name) == names.end())
        names.push_back(name);
    }
    if (names.empty() || names.size() > 6)
      return "";
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) {
      if (i)
        out += i + 1 == names.size() ? " or " : ", ";
      out += names[i];
    }
    return out;
  }
};

Loc locOf(antlr4::Token *token) {
  return makeLoc(token->getLine(), token->getCharPositionInLine());
}
Loc locOf(antlr4::ParserRuleContext *ctx) { return locOf(ctx->getStart()); }

[[noreturn]] void fail(Loc loc, std::string message) {
  throw ConvertError{{loc, std::move(message)}};
}

/// Rejects, token by token, what would make the recursive-descent parser
/// recurse without bound or ANTLR hold gigabytes, before the parser runs.
class TokenChecks {
public:
  void check(antlr4::Token *token) {
    if (++count > kMaxTokens)
      fail(locOf(token), "the program is longer than " + std::to_string(kMaxTokens) + " tokens");
    std::string text = token->getText();
    // A complete /* */ comment is skipped by the lexer, so `/` right before
    // `*` can only open one that never ends.
    if (text == "*" && last && last->getText() == "/" &&
        last->getStopIndex() + 1 == token->getStartIndex())
      fail(locOf(last), "unterminated comment");
    last = token;
    if (text == "(" || text == "[" || text == "{") {
      if (++depth > kMaxNesting)
        fail(locOf(token), "nesting is deeper than " + std::to_string(kMaxNesting) + " levels");
    } else if (text == ")" || text == "]" || text == "}") {
      depth = depth > 0 ? depth - 1 : 0;
    }
    if (text == "-" || text == "!" || text == "~") {
      if (++prefixRun > kMaxNesting)
        fail(locOf(token), "too many operators in a row");
    } else {
      prefixRun = 0;
    }
    if (text == ";" || text == "{" || text == "}")
      statement = 0;
    else if (statement++ == 0)
      start = token;
    else if (statement > kMaxStatementTokens)
      fail(locOf(start),
           "statement is longer than " + std::to_string(kMaxStatementTokens) + " tokens");
  }

private:
  size_t count = 0, statement = 0;
  int depth = 0, prefixRun = 0;
  antlr4::Token *last = nullptr, *start = nullptr;
};

/// Tokens, lexed a block at a time and checked as they come, so that a
/// program past a limit is refused before ANTLR holds all of it.
class CheckedTokenStream : public antlr4::CommonTokenStream {
public:
  using CommonTokenStream::CommonTokenStream;

  /// Lexes the whole input unless the lexer reports an error (which comes
  /// first) or a check fails (throws ConvertError).
  void fillChecked(const ErrorCollector &errors) {
    constexpr size_t kBlock = 1000;
    TokenChecks checks;
    LA(1); // sets the stream up
    for (size_t scanned = 0;;) {
      size_t fetched = fetch(kBlock);
      if (errors.failed)
        return;
      for (; scanned < size(); ++scanned)
        checks.check(get(scanned));
      if (fetched < kBlock)
        return;
    }
  }
};

class Converter {
public:
  File file(CollParser::FileContext *ctx) {
    File out;
    for (auto *alg : ctx->algorithm())
      out.algorithms.push_back(algorithm(alg));
    return out;
  }

private:
  unsigned depth = 0;

  static std::string name(CollParser::NameContext *ctx) { return ctx->getText(); }

  Algorithm algorithm(CollParser::AlgorithmContext *ctx) {
    Algorithm alg;
    alg.loc = locOf(ctx);
    alg.name = name(ctx->name());
    alg.collectiveLoc = locOf(ctx->collective());
    alg.collective = ctx->collective()->getText();
    if (auto *params = ctx->params()) {
      for (auto *p : params->param())
        alg.params.push_back({locOf(p), name(p->name()), expr(p->expr())});
    }
    if (auto *chunks = ctx->chunksClause())
      alg.chunks = expr(chunks->expr());
    alg.inplace = ctx->inplaceClause() != nullptr;
    alg.body = block(ctx->block());
    return alg;
  }

  Block block(CollParser::BlockContext *ctx) {
    if (++depth > kMaxExprDepth)
      fail(locOf(ctx), "blocks are nested too deeply");
    Block out;
    for (auto *s : ctx->stmt())
      out.push_back(stmt(s));
    --depth;
    return out;
  }

  StmtPtr stmt(CollParser::StmtContext *ctx) {
    auto s = std::make_unique<Stmt>();
    s->loc = locOf(ctx->stmtBody());
    for (auto *a : ctx->annotation())
      s->annotations.push_back({locOf(a), name(a->name()), expr(a->expr())});
    auto *body = ctx->stmtBody();
    if (auto *b = dynamic_cast<CollParser::BlockStmtContext *>(body)) {
      s->kind = Stmt::Kind::Block;
      s->body = block(b->block());
    } else if (auto *l = dynamic_cast<CollParser::LetStmtContext *>(body)) {
      s->kind = Stmt::Kind::Let;
      s->name = name(l->name());
      s->a = expr(l->expr());
    } else if (auto *f = dynamic_cast<CollParser::ForStmtContext *>(body)) {
      s->kind = Stmt::Kind::For;
      s->name = name(f->name());
      s->a = expr(f->expr(0));
      s->b = expr(f->expr(1));
      if (f->expr().size() > 2)
        s->c = expr(f->expr(2));
      s->body = block(f->block());
    } else if (auto *i = dynamic_cast<CollParser::IfStmtContext *>(body)) {
      s->kind = Stmt::Kind::If;
      auto blocks = i->block();
      auto conds = i->expr();
      for (size_t k = 0; k < conds.size(); ++k)
        s->arms.emplace_back(expr(conds[k]), block(blocks[k]));
      if (blocks.size() > conds.size())
        s->orElse = block(blocks.back());
    } else if (auto *a = dynamic_cast<CollParser::AssertStmtContext *>(body)) {
      s->kind = Stmt::Kind::Assert;
      s->a = expr(a->expr());
      s->message = unescape(a->STRING()->getText());
    } else if (auto *sc = dynamic_cast<CollParser::ScratchStmtContext *>(body)) {
      s->kind = Stmt::Kind::Scratch;
      s->name = name(sc->name());
      s->a = expr(sc->expr());
    } else if (auto *as = dynamic_cast<CollParser::AssignStmtContext *>(body)) {
      s->kind = Stmt::Kind::Assign;
      s->accumulate = as->op->getText() == "+=";
      s->dst = chunk(as->chunk());
      for (auto *c : as->sources()->chunk())
        s->srcs.push_back(chunk(c));
    } else if (auto *r = dynamic_cast<CollParser::ReduceStmtContext *>(body)) {
      s->kind = Stmt::Kind::Reduce;
      s->dst = chunk(r->chunk(0));
      s->name = name(r->name());
      s->a = expr(r->expr(0));
      s->b = expr(r->expr(1));
      s->srcs.push_back(chunk(r->chunk(1)));
    } else {
      fail(s->loc, "unsupported statement");
    }
    return s;
  }

  ChunkRef chunk(CollParser::ChunkContext *ctx) {
    ChunkRef ref;
    ref.loc = locOf(ctx);
    ref.buffer = ctx->buffer()->getText();
    ref.rank = expr(ctx->expr(0));
    ref.index = expr(ctx->expr(1));
    if (ctx->expr().size() > 2)
      ref.end = expr(ctx->expr(2));
    return ref;
  }

  ExprPtr expr(CollParser::ExprContext *ctx) {
    if (++depth > kMaxExprDepth)
      fail(locOf(ctx), "expression is nested too deeply");
    auto e = std::make_unique<Expr>();
    e->loc = locOf(ctx);
    if (auto *p = dynamic_cast<CollParser::PrimaryExprContext *>(ctx)) {
      primary(p->primary(), *e);
    } else if (auto *u = dynamic_cast<CollParser::UnaryExprContext *>(ctx)) {
      e->kind = Expr::Kind::Unary;
      e->name = u->op->getText();
      e->args.push_back(expr(u->expr()));
    } else if (auto *b = dynamic_cast<CollParser::BinaryExprContext *>(ctx)) {
      e->kind = Expr::Kind::Binary;
      e->name = b->op->getText();
      e->opLoc = locOf(b->op);
      e->args.push_back(expr(b->expr(0)));
      e->args.push_back(expr(b->expr(1)));
    } else {
      fail(e->loc, "unsupported expression");
    }
    --depth;
    return e;
  }

  void primary(CollParser::PrimaryContext *ctx, Expr &e) {
    if (auto *i = dynamic_cast<CollParser::IntLitContext *>(ctx)) {
      e.kind = Expr::Kind::Int;
      e.value = integer(i->INT()->getSymbol());
    } else if (auto *c = dynamic_cast<CollParser::CallExprContext *>(ctx)) {
      e.kind = Expr::Kind::Call;
      e.name = name(c->name());
      for (auto *arg : c->expr())
        e.args.push_back(expr(arg));
    } else if (auto *v = dynamic_cast<CollParser::VarRefContext *>(ctx)) {
      e.kind = Expr::Kind::Var;
      e.name = name(v->name());
    } else if (auto *p = dynamic_cast<CollParser::ParenExprContext *>(ctx)) {
      // The parentheses leave no node: errors point into them.
      e = std::move(*expr(p->expr()));
    } else {
      fail(e.loc, "unsupported expression");
    }
  }

  static int64_t integer(antlr4::Token *token) {
    std::string text = token->getText();
    bool hex = text.size() > 2 && (text[1] == 'x' || text[1] == 'X');
    uint64_t base = hex ? 16 : 10, value = 0;
    for (size_t i = hex ? 2 : 0; i < text.size(); ++i) {
      char c = text[i];
      uint64_t digit = c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
      if (value > (uint64_t(INT64_MAX) - digit) / base)
        fail(locOf(token), "integer literal " + text + " does not fit in 64 bits");
      value = value * base + digit;
    }
    return static_cast<int64_t>(value);
  }

  static std::string unescape(const std::string &quoted) {
    std::string out;
    for (size_t i = 1; i + 1 < quoted.size(); ++i) {
      char c = quoted[i];
      if (c == '\\' && i + 2 < quoted.size()) {
        c = quoted[++i];
        c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
      }
      out += c;
    }
    return out;
  }
};

} // namespace

bool coll::ast::parseFile(std::string_view source, File &file, SyntaxError &error) {
  if (source.size() > kMaxSourceBytes) {
    error = {{1, 1},
             "the file is larger than " + std::to_string(kMaxSourceBytes) +
                 " bytes (16 MiB), the most a Coll program may have"};
    return false;
  }
  Columns map(source);
  if (size_t bad = invalidUtf8(source); bad != std::string_view::npos) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "0x%02x", static_cast<unsigned char>(source[bad]));
    error = {map.locate(bad),
             std::string("invalid UTF-8 byte ") + hex + "; Coll source is UTF-8 text"};
    return false;
  }
  struct Scope {
    explicit Scope(const Columns *c) { columns = c; }
    ~Scope() { columns = nullptr; }
  } scope(&map);
  try {
    antlr4::ANTLRInputStream input(source.data(), source.size());
    ErrorCollector errors;
    CollLexer lexer(&input);
    lexer.removeErrorListeners();
    lexer.addErrorListener(&errors);
    CheckedTokenStream tokens(&lexer);
    tokens.fillChecked(errors);
    if (errors.failed) {
      error = errors.first;
      return false;
    }
    CollParser parser(&tokens);
    parser.removeErrorListeners();
    parser.addErrorListener(&errors);
    CollParser::FileContext *tree = parser.file();
    if (errors.failed) {
      error = errors.first;
      return false;
    }
    file = Converter().file(tree);
    return true;
  } catch (ConvertError &e) {
    error = e.error;
  } catch (std::exception &e) {
    error = {{1, 1}, std::string("internal parser error: ") + e.what()};
  } catch (...) {
    error = {{1, 1}, "internal parser error"};
  }
  return false;
}
