#!/usr/bin/env python3
"""Tuner benchmark: collc tune's winner against NCCL's model and the bound.

For each collective and topology, runs `collc tune --synth COLLECTIVE
--json` (every generator x protocol x instances x pipeline depth, simulated
from 8 B to 4 GiB) and prints, at a few sizes, the winner's busbw, the busbw
of NCCL's tuning formulas (a model, not a measurement), their ratio and the
share of the bound reached; then the targets, met or not, and where the
winner loses to NCCL's model:
- one node, allreduce: within 5% of NCCL's model or above it at >= 256 MiB;
- several nodes: >= 1.3x NCCL's model somewhere in 64 KiB - 4 MiB.
All-to-all has no NCCL model here (NCCL runs it as point-to-point sends).

usage: bench/tune_table.py [--collectives allreduce,allgather,...]
                           [--topologies hgx-h100,hgx-h100:nodes=2]
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHOWN = [8, 1 << 10, 64 << 10, 1 << 20, 4 << 20, 64 << 20, 256 << 20, 1 << 30, 4 << 30]


def size_name(b):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if b >= 1 << shift:
            return f"{b >> shift} {unit}"
    return f"{b} B"


def tune(collc, collective, topology):
    start = time.monotonic()
    proc = subprocess.run([collc, "tune", "--synth", collective, "--topology", topology,
                           "--json"], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"collc tune {collective} on {topology} failed:\n{proc.stderr}")
    return json.loads(proc.stdout), time.monotonic() - start


def winners(data):
    """Per size: (winner's name, its busbw)."""
    times = {c["name"]: c["micros"] for c in data["candidates"]}
    out = [None] * len(data["sizes"])
    for r in data["ranges"]:
        for i in range(r["first"], r["last"] + 1):
            busbw = data["sizes"][i] / times[r["winner"]][i] / 1e3 * data["busbw_factor"]
            out[i] = (r["winner"], busbw)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collc", default=os.path.join(ROOT, "build", "bin", "collc"))
    parser.add_argument("--collectives", default="allreduce,allgather,reducescatter,alltoall")
    parser.add_argument("--topologies", default="hgx-h100,hgx-h100:nodes=2")
    args = parser.parse_args()

    verdicts = []
    for topology in args.topologies.split(","):
        multi = ":nodes=" in topology and not topology.endswith(":nodes=1")
        for collective in args.collectives.split(","):
            data, seconds = tune(args.collc, collective, topology)
            won = winners(data)
            sizes = data["sizes"]
            print(f"\n{collective} on {topology}: {len(data['candidates'])} candidates, "
                  f"tuned in {seconds:.1f} s")
            print(f"{'size':>8} {'winner':<46} {'busbw':>8} {'nccl':>8} {'x nccl':>7} "
                  f"{'bound':>8} {'of bound':>8}")
            for i, b in enumerate(sizes):
                if int(b) not in SHOWN:
                    continue
                name, busbw = won[i]
                nccl, bound = data["nccl_busbw"][i], data["bound_busbw"][i]
                print(f"{size_name(int(b)):>8} {name:<46} {busbw:>8.2f} "
                      f"{nccl if nccl is None else round(nccl, 2)!s:>8} "
                      f"{'-' if not nccl else f'{busbw / nccl:.2f}':>7} "
                      f"{'-' if bound is None else f'{bound:.2f}':>8} "
                      f"{'-' if not bound else f'{busbw / bound:.0%}':>8}")
            ratio = {b: won[i][1] / data["nccl_busbw"][i] for i, b in enumerate(sizes)
                     if data["nccl_busbw"][i]}
            if not multi and collective == "allreduce":
                worst = min(r for b, r in ratio.items() if b >= 256 << 20)
                verdicts.append((f"{collective} on {topology}: >= 0.95x NCCL's model at "
                                 f">= 256 MiB", worst >= 0.95, f"worst {worst:.2f}x"))
            if multi and ratio:
                best = max(r for b, r in ratio.items() if 64 << 10 <= b <= 4 << 20)
                verdicts.append((f"{collective} on {topology}: >= 1.3x NCCL's model somewhere "
                                 f"in 64 KiB - 4 MiB", best >= 1.3, f"best {best:.2f}x"))
            losing = [size_name(int(b)) for b, r in ratio.items() if r < 1]
            if losing:
                print(f"slower than NCCL's model at: {', '.join(losing)}")
    print("\ntargets:")
    for what, met, detail in verdicts:
        print(f"  {'met   ' if met else 'MISSED'} {what} ({detail})")


if __name__ == "__main__":
    main()
