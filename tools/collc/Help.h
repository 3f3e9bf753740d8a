//===- Help.h - What collc's subcommands say alike ------------------------===//
#ifndef COLLC_TOOLS_HELP_H
#define COLLC_TOOLS_HELP_H

// --topology, as every subcommand takes it (lib/Topology/Presets.cpp
// names the presets). A literal, so that it joins the text before it:
// cl::desc keeps a pointer, not a copy.
#define COLLC_TOPOLOGY_HELP                                                                        \
  "a preset (hgx-h100, hgx-h200, dgx-a100, pcie-8, gb200-nvl72, optionally :nodes=N) or a "        \
  "JSON file"

#endif // COLLC_TOOLS_HELP_H
