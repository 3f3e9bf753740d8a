//===- Tune.h - `collc tune`: the fastest plan per size, as one library ---===//
#ifndef COLLC_TOOLS_TUNE_H
#define COLLC_TOOLS_TUNE_H

namespace collc {

/// Whether the command line chose the `tune` subcommand (after parsing).
bool tuneRequested();

/// Runs `collc tune` on the parsed options. Returns the exit status: 0, or
/// 1 after printing why no library was written.
int runTune();

} // namespace collc

#endif // COLLC_TOOLS_TUNE_H
