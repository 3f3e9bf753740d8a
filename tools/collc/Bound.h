//===- Bound.h - `collc bound`: lower bounds on a collective's time -------===//
#ifndef COLLC_TOOLS_BOUND_H
#define COLLC_TOOLS_BOUND_H

namespace collc {

/// Whether the command line chose the `bound` subcommand (after parsing).
bool boundRequested();

/// Runs `collc bound` on the parsed options. Returns the exit status: 0, or
/// 1 after printing why there is no bound.
int runBound();

} // namespace collc

#endif // COLLC_TOOLS_BOUND_H
