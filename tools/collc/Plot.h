//===- Plot.h - Pictures of what collc simulated, drawn by matplotlib -----===//
#ifndef COLLC_TOOLS_PLOT_H
#define COLLC_TOOLS_PLOT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace collc {

/// Whether `path` ends in an extension the plots can be written as.
bool plotFormatKnown(llvm::StringRef path);

/// Draws `json` (plot.py's input: a busbw sweep or a timeline) into
/// `output`, whose extension (.svg, .png, .pdf) picks the format.
llvm::Error drawPlot(llvm::StringRef json, llvm::StringRef output);

} // namespace collc

#endif // COLLC_TOOLS_PLOT_H
