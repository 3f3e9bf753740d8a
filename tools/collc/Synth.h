//===- Synth.h - `collc synth`: write a Coll program for a collective -----===//
#ifndef COLLC_TOOLS_SYNTH_H
#define COLLC_TOOLS_SYNTH_H

namespace collc {

/// Whether the command line chose the `synth` subcommand (after parsing).
bool synthRequested();

/// Runs `collc synth` on the parsed options. Returns the exit status: 0, or
/// 1 after printing why no program was written.
int runSynth();

} // namespace collc

#endif // COLLC_TOOLS_SYNTH_H
