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
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

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

} // namespace

int collc::runOnHost(ModuleOp module, const RunOptions &options) {
  std::string name = options.algorithm;
  for (auto plan : module.getOps<coll::PlanOp>()) {
    if (name.empty())
      name = plan.getSymName().rsplit('_').first.str();
  }
  if (name.empty())
    return fail("no algorithm to run");

  llvm::SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("collc-run", dir))
    return fail("cannot make a work directory: " + ec.message());
  std::string source = (dir + "/kernel.cpp").str(), library = (dir + "/kernel.so").str();
  auto cleanup = [&](int status) {
    if (options.keep)
      llvm::errs() << "collc run: generated files kept in " << dir << "\n";
    else
      llvm::sys::fs::remove_directories(dir);
    return status;
  };
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(source, ec);
    if (ec)
      return cleanup(fail("cannot write " + source + ": " + ec.message()));
    if (failed(coll::writeKernels(module, options.source, os)))
      return cleanup(1);
  }

  std::string cxx = fromEnv("COLLC_CXX", COLLC_HOST_CXX);
  std::string libDir = fromEnv("COLLC_LIB_DIR", COLLC_LIB_DIR);
  std::string include = "-I" + fromEnv("COLLC_RUNTIME_INCLUDE", COLLC_RUNTIME_INCLUDE);
  std::string device = "-I" + fromEnv("COLLC_DEVICE_INCLUDE", COLLC_DEVICE_INCLUDE);
  std::string rpath = "-Wl,-rpath," + libDir;
  std::string libFlag = "-L" + libDir;
  auto compiler = llvm::sys::findProgramByName(cxx);
  if (!compiler)
    return cleanup(fail("no C++ compiler '" + cxx + "' (set COLLC_CXX)"));
  llvm::SmallVector<llvm::StringRef> compile = {*compiler, "-std=c++17", "-O2", "-fPIC",
                                                "-shared", include, device, source,
                                                "-o", library, libFlag, "-lcollrt", rpath};
  std::string error;
  if (int rc = llvm::sys::ExecuteAndWait(*compiler, compile, std::nullopt, {}, 0, 0, &error))
    return cleanup(fail("compiling the generated kernels failed (" + llvm::Twine(rc) + ") " +
                        error));

  std::string launcher = fromEnv("COLLC_LAUNCH", COLLC_BIN_DIR "/collc-launch");
  llvm::SmallVector<std::string> args = {launcher, library, "--algorithm", name, "--ranks",
                                         std::to_string(options.ranks)};
  args.append(options.launchArgs.begin(), options.launchArgs.end());
  llvm::SmallVector<llvm::StringRef> argv(args.begin(), args.end());
  int rc = llvm::sys::ExecuteAndWait(launcher, argv, std::nullopt, {}, 0, 0, &error);
  if (rc < 0)
    return cleanup(fail("cannot run " + launcher + ": " + error));
  return cleanup(rc);
}
