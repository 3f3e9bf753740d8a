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
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <poll.h>
#include <spawn.h>
#include <string>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

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

// Whom an interrupt stops (the compiler's process group, then collc-launch),
// and whether collc was interrupted. LLVM's signal handler removes the files
// registered with RemoveFileOnSignal, then calls onInterrupt, which passes
// the signal on: the launcher dies of it, and its ranks die with the
// launcher.
std::atomic<pid_t> stopTarget{0}; // a pid, or minus a process group's
std::atomic<bool> interrupted{false};

void onInterrupt() {
  interrupted = true;
  if (pid_t target = stopTarget.load())
    kill(target, SIGTERM);
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
  stopTarget = child.Pid;
  if (interrupted) // the signal came between the two lines above
    kill(child.Pid, SIGTERM);
  llvm::sys::ProcessInfo done = llvm::sys::Wait(child, std::nullopt, &error);
  stopTarget = 0;
  return done.ReturnCode;
}

/// Copies what the compiler's processes write to `from` onto stderr until
/// the last of them has closed it. After an interrupt, those still there
/// 2 s later are killed.
void relayUntilClosed(int from, pid_t group) {
  std::optional<std::chrono::steady_clock::time_point> since;
  char buffer[4096];
  for (;;) {
    if (interrupted && !since)
      since = std::chrono::steady_clock::now();
    if (since && std::chrono::steady_clock::now() - *since > std::chrono::seconds(2))
      kill(-group, SIGKILL);
    pollfd p = {from, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0)
      continue; // nothing yet, or a signal
    ssize_t n = read(from, buffer, sizeof buffer);
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
      return;
    if (n > 0)
      llvm::errs().write(buffer, size_t(n));
  }
}

/// Runs the host compiler as runToEnd runs a program, but in a process group
/// of its own, so that an interrupt stops every process it starts (cc1plus,
/// as, ld), not the driver alone, and returns only once all have ended:
/// none is left writing into the temporary directory after collc.
int compileToEnd(llvm::ArrayRef<llvm::StringRef> args, std::string &error) {
  if (interrupted)
    return -2;
  int out[2];
  if (pipe2(out, O_CLOEXEC)) {
    error = std::string("pipe: ") + strerror(errno);
    return -1;
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDERR_FILENO);
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<std::string> words(args.begin(), args.end());
  std::vector<char *> argv;
  for (std::string &w : words)
    argv.push_back(w.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(out[1]);
  if (rc) {
    close(out[0]);
    error = std::string("cannot run ") + argv[0] + ": " + strerror(rc);
    return -1;
  }
  stopTarget = -pid;
  if (interrupted) // the signal came between the two lines above
    kill(-pid, SIGTERM);
  relayUntilClosed(out[0], pid);
  close(out[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  stopTarget = 0;
  if (WIFSIGNALED(status)) {
    error = std::string("the compiler died of signal ") + std::to_string(WTERMSIG(status));
    return -2;
  }
  return WEXITSTATUS(status);
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
  // The launcher maps the library from there: refuse before compiling,
  // with a reason, rather than let the loader fail to map it.
  struct statvfs mount;
  if (!statvfs(tmp.c_str(), &mount) && (mount.f_flag & ST_NOEXEC))
    return fail("the temporary directory " + tmp +
                " is on a file system mounted noexec, from which the compiled kernels "
                "cannot be loaded (set TMPDIR to a directory that allows executables)");
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

  const Paths &found = paths();
  std::string cxx = fromEnv("COLLC_CXX", found.hostCompiler.c_str());
  std::string libDir = fromEnv("COLLC_LIB_DIR", found.libDir.c_str());
  std::string include = "-I" + fromEnv("COLLC_RUNTIME_INCLUDE", found.runtimeInclude.c_str());
  std::string device = "-I" + fromEnv("COLLC_DEVICE_INCLUDE", found.deviceInclude.c_str());
  std::string rpath = "-Wl,-rpath," + libDir;
  std::string libFlag = "-L" + libDir;
  auto compiler = llvm::sys::findProgramByName(cxx);
  if (!compiler)
    return cleanup(fail("no C++ compiler '" + cxx + "' (set COLLC_CXX)"));
  llvm::SmallVector<llvm::StringRef> compile = {
      *compiler, "-std=c++17", "-O2", "-pipe", "-fPIC", "-shared",  include,
      device,    source,       "-o",  library, libFlag, "-lcollrt", rpath};
  std::string error;
  if (int rc = compileToEnd(compile, error)) {
    std::string why = rc > 0 ? "exit status " + std::to_string(rc) : error;
    return cleanup(interrupted ? 1
                               : fail("compiling the generated kernels failed (" + why +
                                      "); if the compiler could not write, is the temporary "
                                      "directory " +
                                      tmp + " full?"));
  }

  // The launcher dies with collc (it reads COLLC_PARENT_PID), and its ranks
  // with the launcher: killing collc leaves no process behind.
  setenv("COLLC_PARENT_PID", std::to_string(getpid()).c_str(), 1);
  std::string launcher = fromEnv("COLLC_LAUNCH", found.launcher.c_str());
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
