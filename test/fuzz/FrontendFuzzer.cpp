//===- FrontendFuzzer.cpp - Random inputs through parse, elaborate, verify ===//
//
// `LLVMFuzzerTestOneInput` runs one input through the whole front end and the
// semantic verifier and aborts when an invariant breaks: every rejected input
// must carry an error diagnostic, every accepted one must pass the IR
// verifier. Built with clang's -fsanitize=fuzzer it is a libFuzzer target;
// otherwise `main` below mutates a seed corpus for a bounded time, with a
// per-input watchdog, so that the test suite catches crashes and hangs.
//
//===----------------------------------------------------------------------===//

#include "dialect/CollOps.h"
#include "lib/Analysis/Semantics.h"
#include "lib/Frontend/Elaborate.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::DialectRegistry *registry = [] {
    auto *r = new mlir::DialectRegistry();
    r->insert<coll::CollDialect>();
    return r;
  }();
  mlir::MLIRContext context(*registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  bool sawError = false;
  context.getDiagEngine().registerHandler([&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error) {
      sawError = true;
      if (diag.str().empty())
        abort(); // every error must say something
    }
  });

  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.coll"),
      llvm::SMLoc());
  coll::ElaborateOptions options;
  // Small bounds keep each input fast; the limits themselves are exercised.
  options.maxOps = 1 << 16;
  options.maxSteps = 1 << 20;
  options.maxSlots = 1 << 18;
  mlir::TimingScope timing;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      coll::importColl(sourceMgr, &context, options, timing, nullptr);
  if (!module) {
    if (!sawError && options.defines.empty())
      abort(); // rejected without saying why
    return 0;
  }
  if (failed(mlir::verify(*module)))
    abort(); // the front end built invalid IR
  for (auto alg : module->getOps<coll::AlgorithmOp>())
    if (failed(coll::verifySemantics(alg)) && !sawError)
      abort();
  return 0;
}

#ifndef COLLC_LIBFUZZER

namespace {

std::string current; // the input being run, for the crash report

void report(int sig) {
  const char *what = sig == SIGALRM ? "hang (watchdog expired)" : "crash";
  (void)!write(2, "\ncollc-fuzz: ", 13);
  (void)!write(2, what, strlen(what));
  (void)!write(2, " on this input:\n-----\n", 22);
  (void)!write(2, current.data(), current.size());
  (void)!write(2, "\n-----\n", 7);
  _exit(1);
}

std::vector<std::string> loadSeeds(const std::vector<std::string> &dirs) {
  std::vector<std::string> seeds;
  for (const std::string &dir : dirs) {
    DIR *d = opendir(dir.c_str());
    if (!d)
      continue;
    while (dirent *e = readdir(d)) {
      std::string name = e->d_name;
      if (name.size() < 6 || name.substr(name.size() - 5) != ".coll")
        continue;
      std::ifstream in(dir + "/" + name);
      std::stringstream text;
      text << in.rdbuf();
      seeds.push_back(text.str());
    }
    closedir(d);
  }
  return seeds;
}

const char *const kTokens[] = {"algorithm",
                               "allreduce",
                               "reduce",
                               "alltoall",
                               "broadcast",
                               "allgather",
                               "reducescatter",
                               "chunks(",
                               "inplace",
                               "for ",
                               " in ",
                               " .. ",
                               "step",
                               "if ",
                               "else",
                               "let ",
                               "assert ",
                               "scratch ",
                               "in[",
                               "out[",
                               "][",
                               "]",
                               "{",
                               "}",
                               "(",
                               ")",
                               ";",
                               "=",
                               "+=",
                               "+",
                               "-",
                               "*",
                               "/",
                               "%",
                               "<<",
                               ">>",
                               "log2(",
                               "ispow2(",
                               "min(",
                               "@channel(",
                               "@protocol(LL)",
                               "@pipeline(",
                               "0",
                               "1",
                               "-1",
                               "63",
                               "64",
                               "9223372036854775807",
                               "ranks",
                               "root",
                               "\"",
                               "/*",
                               "//",
                               "\n"};

std::string mutate(std::string s, const std::vector<std::string> &seeds, std::mt19937_64 &rng) {
  auto pick = [&](size_t n) { return n ? size_t(rng() % n) : 0; };
  int rounds = 1 + pick(6);
  for (int i = 0; i < rounds; ++i) {
    size_t at = pick(s.size() + 1);
    switch (pick(6)) {
    case 0: // flip a byte
      if (!s.empty())
        s[pick(s.size())] = char(rng());
      break;
    case 1: // insert a token
      s.insert(at, kTokens[pick(std::size(kTokens))]);
      break;
    case 2: // delete a range
      s.erase(at, pick(16) + 1);
      break;
    case 3: { // duplicate a range
      size_t len = pick(64) + 1;
      s.insert(pick(s.size() + 1), s.substr(at, len));
      break;
    }
    case 4: { // splice in part of another seed
      const std::string &other = seeds[pick(seeds.size())];
      size_t from = pick(other.size());
      s.insert(at, other.substr(from, pick(200)));
      break;
    }
    default: { // replace a number with a boundary value
      size_t digit = s.find_first_of("0123456789", at);
      if (digit != std::string::npos)
        s.replace(digit, 1, kTokens[42 + pick(6)]);
      break;
    }
    }
  }
  return s.size() > 1 << 16 ? s.substr(0, 1 << 16) : s;
}

} // namespace

/// collc-fuzz [--seconds N] [--seed S] CORPUS_DIR...
int main(int argc, char **argv) {
  double seconds = 30;
  uint64_t seed = 1;
  std::vector<std::string> dirs;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--seconds" && i + 1 < argc)
      seconds = atof(argv[++i]);
    else if (arg == "--seed" && i + 1 < argc)
      seed = strtoull(argv[++i], nullptr, 0);
    else
      dirs.push_back(arg);
  }
  std::vector<std::string> seeds = loadSeeds(dirs);
  if (seeds.empty()) {
    fprintf(stderr, "collc-fuzz: no .coll seeds in the given directories\n");
    return 2;
  }
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGALRM})
    signal(sig, report);

  std::mt19937_64 rng(seed);
  auto start = std::chrono::steady_clock::now();
  uint64_t runs = 0;
  // Seeds first, unchanged, then mutants until the time is up.
  for (;; ++runs) {
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (runs >= seeds.size() && elapsed >= seconds)
      break;
    current = runs < seeds.size() ? seeds[runs] : mutate(seeds[rng() % seeds.size()], seeds, rng);
    alarm(10);
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(current.data()), current.size());
    alarm(0);
  }
  printf("collc-fuzz: %llu inputs in %.0f s, no crash, hang or broken invariant\n",
         static_cast<unsigned long long>(runs), seconds);
  return 0;
}

#endif // COLLC_LIBFUZZER
