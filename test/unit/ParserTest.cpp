//===- ParserTest.cpp - Coll text to syntax tree --------------------------===//
#include "lib/Frontend/Parser.h"

#include <gtest/gtest.h>

using namespace coll::ast;

namespace {
SyntaxError parseError(const std::string &source) {
  File file;
  SyntaxError error;
  EXPECT_FALSE(parseFile(source, file, error)) << source;
  return error;
}
} // namespace

TEST(Parser, BuildsTheTreeOfTheRingExample) {
  File file;
  SyntaxError error;
  ASSERT_TRUE(parseFile("algorithm ring : allreduce(ranks = 8) chunks(ranks) inplace {\n"
                        "  for c in 0 .. ranks { in[(c + 1) % ranks][c] += in[c][c]; }\n"
                        "}\n",
                        file, error))
      << error.message;
  ASSERT_EQ(file.algorithms.size(), 1u);
  const Algorithm &alg = file.algorithms[0];
  EXPECT_EQ(alg.name, "ring");
  EXPECT_EQ(alg.collective, "allreduce");
  EXPECT_TRUE(alg.inplace);
  ASSERT_TRUE(alg.chunks);
  ASSERT_EQ(alg.body.size(), 1u);
  const Stmt &loop = *alg.body[0];
  EXPECT_EQ(loop.kind, Stmt::Kind::For);
  EXPECT_EQ(loop.name, "c");
  ASSERT_EQ(loop.body.size(), 1u);
  const Stmt &assign = *loop.body[0];
  EXPECT_EQ(assign.kind, Stmt::Kind::Assign);
  EXPECT_TRUE(assign.accumulate);
  EXPECT_EQ(assign.dst.buffer, "in");
  EXPECT_EQ(assign.loc.line, 2u);
  EXPECT_EQ(assign.loc.col, 25u);
  // `(c + 1) % ranks`: the parentheses leave no node of their own.
  EXPECT_EQ(assign.dst.rank->kind, Expr::Kind::Binary);
  EXPECT_EQ(assign.dst.rank->name, "%");
  EXPECT_EQ(assign.dst.rank->args[0]->name, "+");
}

TEST(Parser, KeywordsStayUsableAsNames) {
  File file;
  SyntaxError error;
  ASSERT_TRUE(parseFile("algorithm r : reduce(ranks = 2, step = 1) {\n"
                        "  let chunks = step; out[0][0] = reduce(p in 0 .. 2) in[p][0];\n"
                        "}\n",
                        file, error))
      << error.message;
  EXPECT_EQ(file.algorithms[0].collective, "reduce");
  EXPECT_EQ(file.algorithms[0].params[1].name, "step");
}

TEST(Parser, MissingSemicolonPointsAfterThePreviousToken) {
  SyntaxError e = parseError("algorithm a : allreduce(ranks = 2) {\n  let x = 1\n}\n");
  EXPECT_EQ(e.loc.line, 2u);
  EXPECT_EQ(e.loc.col, 12u);
  EXPECT_EQ(e.message, "expected ';', found '}'");
}

TEST(Parser, LexerErrorsAreWordedForUsers) {
  EXPECT_EQ(parseError("algorithm a : allreduce(ranks = 2) { # }").message,
            "unexpected character '#'");
  EXPECT_EQ(parseError("algorithm a : allreduce(ranks = 2) { assert 1, \"abc\n }").message,
            "unterminated string");
}

TEST(Parser, DeepNestingIsAnErrorNotACrash) {
  std::string deep = "algorithm a : allreduce(ranks = 2) { let x = " + std::string(100000, '(') +
                     "1" + std::string(100000, ')') + "; }";
  EXPECT_NE(parseError(deep).message.find("nesting"), std::string::npos);
  std::string chain = "algorithm a : allreduce(ranks = 2) { let x = 1";
  for (int i = 0; i < 5000; ++i)
    chain += " + 1";
  chain += "; }";
  EXPECT_NE(parseError(chain).message.find("too deeply"), std::string::npos);
}

TEST(Parser, OversizedLiteralIsRejected) {
  EXPECT_EQ(parseError("algorithm a : allreduce(ranks = 99999999999999999999) {}").message,
            "integer literal 99999999999999999999 does not fit in 64 bits");
}
