//===- Run.cpp - `collc run`: compile for the host and run on emulated ranks ===//
//
// The same C++ that nvcc would compile, built by the host compiler against
// the host primitives and linked with collrt; collc-launch then starts one
// process per rank and checks the result.
//
//===----------------------------------------------------------------------===//
#include "Run.h"

#include "Paths.h"
#include "dialect/CollOps.h"
#include "lib/Target/Kernel.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <string>
#include <unistd.h>

using namespace mlir;

namespace {

std::string fromEnv(const char *name, const char *fallback) {
  const char *v = std::getenv(name);
  return v && *v ? v : fallback;
}

int fail(const llvm::Twine &message) {
  llvm::errs() << "collc run: error: " << message << "\n";
  return 1;
}

// The program collc waits for (the compiler, then collc-launch), and whether
// collc was interrupted. LLVM's signal handler removes the files registered
// with RemoveFileOnSignal, then calls onInterrupt, which passes the signal
// on: the launcher dies of it, and its ranks die with the launcher.
std::atomic<pid_t> waitingFor{0};
std::atomic<bool> interrupted{false};

void onInterrupt() {
  interrupted = true;
  if (pid_t pid = waitingFor.load())
    kill(pid, SIGTERM);
}

constexpr int kInterruptedStatus = 130; // as a shell reports SIGINT

/// Runs `program` to its end, unless collc is interrupted first. The result
/// is ExecuteAndWait's: the exit status, -1 if it did not start, -2 if it
/// died of a signal.
int runToEnd(llvm::StringRef program, llvm::ArrayRef<llvm::StringRef> args, std::string &error) {
  if (interrupted)
    return -2;
  bool failedToStart = false;
  llvm::sys::ProcessInfo child =
      llvm::sys::ExecuteNoWait(program, args, std::nullopt, {}, 0, &error, &failedToStart);
  if (failedToStart)
    return -1;
  waitingFor = child.Pid;
  if (interrupted) // the signal came between the two lines above
    kill(child.Pid, SIGTERM);
  llvm::sys::ProcessInfo done = llvm::sys::Wait(child, std::nullopt, &error);
  waitingFor = 0;
  return done.ReturnCode;
}

/// A file for this run in the temporary directory, removed on any exit.
std::error_code makeTemporary(llvm::StringRef suffix, llvm::SmallVectorImpl<char> &path, int *fd) {
  std::error_code ec = fd ? llvm::sys::fs::createTemporaryFile("collc-run", suffix, *fd, path)
                          : llvm::sys::fs::createTemporaryFile("collc-run", suffix, path);
  if (!ec)
    llvm::sys::RemoveFileOnSignal(llvm::StringRef(path.data(), path.size()));
  return ec;
}

std::string temporaryDirectory() {
  llvm::SmallString<128> dir;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, dir);
  return dir.str().str();
}

} // namespace

int collc::runOnHost(ModuleOp module, const RunOptions &options) {
  std::string name = options.algorithm;
  for (auto plan : module.getOps<coll::PlanOp>()) {
    if (name.empty())
      name = plan.getAlgorithm().value_or(plan.getSymName()).str();
  }
  if (name.empty())
    return fail("no algorithm to run");

  llvm::sys::SetInterruptFunction(onInterrupt);
  const std::string tmp = temporaryDirectory();
  llvm::SmallString<128> source, library;
  int sourceFd = -1;
  if (std::error_code ec = makeTemporary("cpp", source, &sourceFd))
    return fail("cannot create a file in the temporary directory " + tmp + ": " + ec.message() +
                " (set TMPDIR to a writable directory)");
  auto cleanup = [&](int status) {
    if (options.keep) {
      llvm::errs() << "collc run: generated files kept: " << source << " " << library << "\n";
    } else {
      llvm::sys::fs::remove(source);
      if (!library.empty())
        llvm::sys::fs::remove(library);
    }
    if (interrupted) {
      llvm::errs() << "collc run: interrupted\n";
      return kInterruptedStatus;
    }
    return status;
  };
  if (options.keep)
    llvm::sys::DontRemoveFileOnSignal(source);
  {
    llvm::raw_fd_ostream os(sourceFd, /*shouldClose=*/true);
    if (failed(coll::writeKernels(module, options.source, os)))
      return cleanup(1);
    os.close();
    if (std::error_code ec = os.error()) {
      os.clear_error(); // reported here, not as a fatal error when `os` goes
      return cleanup(fail("cannot write " + source + ": " + ec.message() +
                          " (is the temporary directory " + tmp + " full? set TMPDIR)"));
    }
  }
  if (std::error_code ec = makeTemporary("so", library, nullptr))
    return cleanup(fail("cannot create a file in the temporary directory " + tmp + ": " +
                        ec.message() + " (set TMPDIR to a writable directory)"));
  if (options.keep)
    llvm::sys::DontRemoveFileOnSignal(library);

  std::string cxx = fromEnv("COLLC_CXX", COLLC_HOST_CXX);
  std::string libDir = fromEnv("COLLC_LIB_DIR", COLLC_LIB_DIR);
  std::string include = "-I" + fromEnv("COLLC_RUNTIME_INCLUDE", COLLC_RUNTIME_INCLUDE);
  std::string device = "-I" + fromEnv("COLLC_DEVICE_INCLUDE", COLLC_DEVICE_INCLUDE);
  std::string rpath = "-Wl,-rpath," + libDir;
  std::string libFlag = "-L" + libDir;
  auto compiler = llvm::sys::findProgramByName(cxx);
  if (!compiler)
    return cleanup(fail("no C++ compiler '" + cxx + "' (set COLLC_CXX)"));
  llvm::SmallVector<llvm::StringRef> compile = {*compiler, "-std=c++17", "-O2",  "-fPIC", "-shared",
                                                include,   device,       source, "-o",    library,
                                                libFlag,   "-lcollrt",   rpath};
  std::string error;
  if (int rc = runToEnd(*compiler, compile, error))
    return cleanup(fail("compiling the generated kernels failed (" + llvm::Twine(rc) + ") " +
                        error +
                        "; if the compiler could not write, is the temporary "
                        "directory " +
                        tmp + " full?"));

  // The launcher dies with collc (it reads COLLC_PARENT_PID), and its ranks
  // with the launcher: killing collc leaves no process behind.
  setenv("COLLC_PARENT_PID", std::to_string(getpid()).c_str(), 1);
  std::string launcher = fromEnv("COLLC_LAUNCH", COLLC_BIN_DIR "/collc-launch");
  llvm::SmallVector<std::string> args = {
      launcher, library.str().str(), "--algorithm", name, "--ranks", std::to_string(options.ranks)};
  args.append(options.launchArgs.begin(), options.launchArgs.end());
  llvm::SmallVector<llvm::StringRef> argv(args.begin(), args.end());
  int rc = runToEnd(launcher, argv, error);
  if (rc == -1)
    return cleanup(fail("cannot run " + launcher + ": " + error));
  if (rc < 0 && !interrupted)
    return cleanup(fail(launcher + " " + error));
  return cleanup(rc);
}
