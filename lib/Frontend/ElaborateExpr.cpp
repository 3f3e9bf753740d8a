//===- ElaborateExpr.cpp - Names and integer expressions ------------------===//
//
// Every integer the language computes is checked: overflow, division by zero
// and out-of-range shifts are errors at the operator, as the contract says.
//
//===----------------------------------------------------------------------===//

#include "lib/Frontend/Elaborator.h"

using namespace mlir;
using namespace coll;
using namespace coll::elaborate;

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

const Elaborator::Binding *Elaborator::lookup(StringRef name) const {
  auto it = byName.find(name);
  return it == byName.end() ? nullptr : &vars[it->second];
}

const Elaborator::Binding *Elaborator::lookup(const ast::Expr &var) const {
  // Names never shadow each other, so a live binding with the name is the one.
  if (var.binding < vars.size() && vars[var.binding].name == var.name)
    return &vars[var.binding];
  const Binding *b = lookup(var.name);
  if (b)
    var.binding = b - vars.data();
  return b;
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
    if (const Binding *b = lookup(e))
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
  StringRef op = e.name; // compared with many literals: no strlen each time
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
  size_t arity = e.name == "min" || e.name == "max"                          ? 2
                 : e.name == "abs" || e.name == "log2" || e.name == "ispow2" ? 1
                                                                             : 0;
  if (arity == 0)
    return error(e.loc) << "unknown function '" << e.name
                        << "'; the built-ins are min, max, abs, log2 and ispow2";
  if (e.args.size() != arity)
    return error(e.loc) << e.name << " takes " << arity << " argument" << (arity == 1 ? "" : "s")
                        << ", got " << e.args.size();
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
    return error(e.loc) << "log2(" << a << ") is not exact: " << a << " is not a power of two";
  return int64_t(llvm::Log2_64(static_cast<uint64_t>(a)));
}
