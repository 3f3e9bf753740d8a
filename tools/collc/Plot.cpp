//===- Plot.cpp - Pictures of what collc simulated, drawn by matplotlib ---===//
//
// collc writes the numbers; tools/collc/plot.py draws them with matplotlib,
// a well-kept plotting library, rather than collc drawing axes by hand. The
// script is found where `cmake --install` puts it (share/collc beside bin/),
// else in the source tree collc was built from (Paths.cpp).
//
//===----------------------------------------------------------------------===//
#include "Plot.h"

#include "Paths.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <optional>
#include <vector>

using namespace llvm;

namespace {

Error error(const Twine &message) { return createStringError(inconvertibleErrorCode(), message); }

/// plot.py's exit status when its Python has no matplotlib.
constexpr int kNoMatplotlib = 3;

/// The Pythons to try in turn: $COLLC_PYTHON alone when set, else the
/// first python3 on PATH and Debian's, where python3-matplotlib installs
/// (a PATH may put another Python first).
std::vector<std::string> interpreters() {
  if (const char *chosen = std::getenv("COLLC_PYTHON"); chosen && *chosen)
    return {chosen};
  std::vector<std::string> out;
  if (ErrorOr<std::string> first = sys::findProgramByName("python3"))
    out.push_back(*first);
  if (sys::fs::can_execute("/usr/bin/python3") &&
      (out.empty() || !sys::fs::equivalent(out.front(), "/usr/bin/python3")))
    out.push_back("/usr/bin/python3");
  return out;
}

} // namespace

bool collc::plotFormatKnown(StringRef path) {
  StringRef ext = sys::path::extension(path);
  return ext == ".svg" || ext == ".png" || ext == ".pdf";
}

Error collc::drawPlot(StringRef json, StringRef output) {
  if (!plotFormatKnown(output))
    return error("'" + output + "' does not end in .svg, .png or .pdf");
  std::string path = paths().plotScript;
  if (!sys::fs::exists(path))
    return error("the plotting script " + path + " is missing");

  SmallString<128> data, log;
  if (std::error_code ec = sys::fs::createTemporaryFile("collc-plot", "json", data))
    return error("cannot create a temporary file: " + ec.message());
  if (std::error_code ec = sys::fs::createTemporaryFile("collc-plot", "log", log)) {
    sys::fs::remove(data);
    return error("cannot create a temporary file: " + ec.message());
  }
  scope_exit cleanup([&] {
    sys::fs::remove(data);
    sys::fs::remove(log);
  });
  {
    std::error_code ec;
    raw_fd_ostream os(data, ec);
    if (ec)
      return error("cannot write " + data + ": " + ec.message());
    os << json;
  }
  std::vector<std::string> pythons = interpreters();
  if (pythons.empty())
    return error("python3 is not on PATH; it draws the picture (with matplotlib)");
  std::string outputPath = output.str();
  std::optional<StringRef> redirects[] = {std::nullopt, std::nullopt, StringRef(log)};
  std::string message;
  int rc = -1;
  for (const std::string &python : pythons) {
    SmallVector<StringRef, 4> args = {python, path, data, outputPath};
    rc = sys::ExecuteAndWait(python, args, std::nullopt, redirects, 0, 0, &message);
    if (rc == 0)
      return Error::success();
    if (rc != kNoMatplotlib)
      break;
  }
  std::string said;
  if (ErrorOr<std::unique_ptr<MemoryBuffer>> b = MemoryBuffer::getFile(log))
    said = (*b)->getBuffer().trim().str();
  return error(
      "drawing " + output + " failed: " +
      (said.empty() ? message.empty() ? "exit status " + std::to_string(rc) : message : said));
}
