#!/usr/bin/env python3
"""End-to-end test of `collc synth`: every generator, for every collective it
serves, at several rank counts, writes a program that collc accepts unchanged
and that runs bit-exactly on emulated ranks (`collc run`, which checks every
output element). Where a generator refuses a rank count (power-of-two forms
at 5 or 6 ranks), collc synth must say why and name an alternative, and
`--list` must show exactly the generators that apply.

Runs rotate over data types, ops, counts, in place or not, and placement:
unplaced, on an H100 node (NVLink multicast, emulated) or on an A100 node
(peer windows). Hierarchical forms run on JSON machines of 2 x 2, 2 x 4,
3 x 2 and 4 x 2 GPUs (hierarchical-halving refuses the three nodes,
hierarchical-grid all but the four, a grid of 2 x 2).
Prints one line per failure and ends with `N passed, N failed`.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

# Generator -> the collectives it serves; POW2 ones need a power-of-two count.
GENERATORS = {
    "ring": ["allreduce", "reducescatter", "allgather", "broadcast", "reduce"],
    "bidir-ring": ["allreduce", "reducescatter", "allgather"],
    "multi-ring": ["allreduce", "reducescatter", "allgather"],
    "recursive-doubling": ["allreduce", "allgather"],
    "recursive-halving": ["allreduce", "reducescatter"],
    "bruck": ["reducescatter", "allgather", "alltoall"],
    "pat": ["reducescatter", "allgather"],
    "pairwise": ["alltoall"],
    "one-shot": ["allreduce", "reducescatter", "allgather", "broadcast", "reduce"],
    "two-shot": ["allreduce"],
    "tree": ["broadcast", "reduce"],
    "double-binary-tree": ["allreduce"],
}
# The two-level generators, on topologies of several nodes.
HIERARCHICAL = {
    "hierarchical": ["allreduce", "reducescatter", "allgather"],
    "hierarchical-direct": ["allreduce", "reducescatter", "allgather", "alltoall"],
    "hierarchical-halving": ["allreduce", "reducescatter", "allgather"],
    "hierarchical-grid": ["alltoall"],
}
POW2 = {"recursive-doubling", "recursive-halving"}
POW2_NODES = {"hierarchical-halving"}
GRID_NODES = {"hierarchical-grid"}  # node counts with a divisor from 2 to their root
# Generators run only at some of RANKS, to keep the test fast (--list is
# still checked at all): PAT at and between powers of two, multi-ring with
# the reverse ring (4) and with other strides (5, 8) as its second ring.
RUN_AT = {"pat": [5, 6, 8], "multi-ring": [4, 5, 8]}
COLLECTIVES = ["allreduce", "reducescatter", "allgather", "alltoall", "broadcast", "reduce"]
RANKS = [4, 5, 6, 8]
NODES = [(2, 2), (2, 4), (3, 2), (4, 2)]

DTYPES = ["float", "int32", "bfloat16", "uint8", "double", "half", "int64"]
OPS = ["sum", "max", "min", "prod", "avg"]
COUNTS = [1, 7, 1001, 65537, 0, 4099]
PLACES = [None, "hgx-h100", "dgx-a100"]


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          **kw)


class Matrix:
    def __init__(self, collc, tmp):
        self.collc, self.tmp = collc, tmp
        self.passed = self.failed = 0
        self.turn = 0

    def check(self, ok, what, output=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {what}\n{output}")

    def run_program(self, algorithm, collective, ranks, topology, place):
        """Synthesizes, compiles as is and runs one program."""
        t = self.turn
        self.turn += 1
        synth = [self.collc, "synth", collective, "--topology", topology, "--ranks", str(ranks),
                 "--algorithm", algorithm]
        if collective in ("broadcast", "reduce"):
            synth += ["--root", str((ranks - 1) if t % 2 else ranks // 2)]
        path = os.path.join(self.tmp, f"{algorithm}_{collective}_{ranks}.coll")
        res = run(synth + ["-o", path])
        what = f"{algorithm} {collective} ranks={ranks} on {os.path.basename(topology)}"
        if res.returncode:
            return self.check(False, what + ": synth fails", res.stdout)
        res = run([self.collc, path])
        if res.returncode or "verified" not in res.stdout:
            return self.check(False, what + ": collc refuses the program", res.stdout)
        dtype = DTYPES[t % len(DTYPES)]
        op = OPS[(t // len(DTYPES)) % len(OPS)]
        count = COUNTS[t % len(COUNTS)]
        cmd = [self.collc, "run", path, "--ranks", str(ranks), "--count", str(count),
               "--dtype", dtype, "--op", op]
        if t % 3 == 1:
            cmd.append("--inplace")
        if place:
            cmd.append("--topology=" + place)
        res = run(cmd, timeout=300)
        self.check(res.returncode == 0 and "PASS" in res.stdout,
                   f"{what}: {' '.join(cmd[2:])}", res.stdout)

    def check_list(self, collective, ranks, topology, expected):
        res = run([self.collc, "synth", collective, "--topology", topology, "--ranks",
                   str(ranks), "--list"])
        listed = [line.split()[0] for line in res.stdout.splitlines() if line.strip()]
        self.check(res.returncode == 0 and sorted(listed) == sorted(expected),
                   f"--list {collective} ranks={ranks}: expected {sorted(expected)}",
                   res.stdout)

    def check_refusal(self, algorithm, collective, ranks, topology,
                      needs="a power-of-two rank count"):
        res = run([self.collc, "synth", collective, "--topology", topology, "--ranks",
                   str(ranks), "--algorithm", algorithm])
        self.check(res.returncode == 1 and f"needs {needs}" in res.stdout
                   and "works for any" in res.stdout,
                   f"{algorithm} {collective} ranks={ranks}: expected a refusal naming an "
                   "alternative", res.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--collc", required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="collc-synth-") as tmp:
        m = Matrix(args.collc, tmp)
        for ranks in RANKS:
            pow2 = ranks & (ranks - 1) == 0
            for collective in COLLECTIVES:
                expected = [g for g, cs in GENERATORS.items()
                            if collective in cs and (pow2 or g not in POW2)]
                m.check_list(collective, ranks, "hgx-h100", expected)
            for algorithm, collectives in GENERATORS.items():
                for collective in collectives:
                    if algorithm in POW2 and not pow2:
                        m.check_refusal(algorithm, collective, ranks, "hgx-h100")
                    elif ranks in RUN_AT.get(algorithm, RANKS):
                        place = PLACES[m.turn % len(PLACES)]
                        m.run_program(algorithm, collective, ranks, "hgx-h100", place)
        for nodes, gpus in NODES:
            topology = os.path.join(tmp, f"nodes{nodes}x{gpus}.json")
            with open(topology, "w") as f:
                json.dump({"name": f"nodes{nodes}x{gpus}", "nodes": nodes,
                           "gpusPerNode": gpus, "network": {"nicsPerNode": gpus}}, f)
            for algorithm, collectives in HIERARCHICAL.items():
                for collective in collectives:
                    if algorithm in POW2_NODES and nodes & (nodes - 1):
                        m.check_refusal(algorithm, collective, nodes * gpus, topology,
                                        "a power-of-two node count")
                    elif algorithm in GRID_NODES and nodes != 4:
                        m.check_refusal(algorithm, collective, nodes * gpus, topology,
                                        "a node count with a divisor")
                    elif (nodes, gpus) != (4, 2) or algorithm in POW2_NODES | GRID_NODES:
                        m.run_program(algorithm, collective, nodes * gpus, topology, topology)
    print(f"{m.passed} passed, {m.failed} failed")
    return 1 if m.failed or not m.passed else 0


if __name__ == "__main__":
    sys.exit(main())
