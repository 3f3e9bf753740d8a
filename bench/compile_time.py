#!/usr/bin/env python3
"""Compile-time benchmark: parse, elaborate and verify the ring allreduce.

Runs `collc --mlir-timing` on examples/ring_allreduce.coll at 8 ... 1024 ranks
(about 2 R^2 chunk operations each) and prints the time of each phase and the
peak memory of the process. Target: 1024 ranks in <= 10 s and <= 2 GB on a
2-core machine, growing about linearly with the number of chunk operations.

usage: bench/compile_time.py [--collc build/bin/collc] [--ranks 8,16,...]
"""
import argparse
import os
import re
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PHASES = [("parse", "parse"), ("elaborate", "elaborate"),
          ("verify IR", "verify IR"), ("verify", "CollVerifyPass")]


def run(collc, source, ranks):
    cmd = [collc, source, "-D", f"ranks={ranks}", "--mlir-timing"]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    out, err = proc.communicate()
    wall = time.monotonic() - start
    # The peak RSS of children is a maximum over all so far; it grows with
    # the rank count here, so it is this run's.
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if proc.returncode != 0 or "verified" not in out:
        sys.exit(f"collc failed at {ranks} ranks:\n{out}{err}")
    ops = int(re.search(r"(\d+) chunk operations", out).group(1))
    times = {}
    for key, label in PHASES:
        m = re.search(r"^\s*([0-9.]+) \(\s*[0-9.]+%\)\s+" + re.escape(label) + r"\s*$",
                      err, re.M)
        times[key] = float(m.group(1)) if m else 0.0
    return ops, times, wall, peak_kb / 1024.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collc", default=os.path.join(ROOT, "build", "bin", "collc"))
    parser.add_argument("--ranks", default="8,16,32,64,128,256,512,1024")
    args = parser.parse_args()
    source = os.path.join(ROOT, "examples", "ring_allreduce.coll")

    header = (f"{'ranks':>6} {'chunk ops':>10} {'parse s':>8} {'elab s':>8} "
              f"{'IR vfy s':>8} {'verify s':>8} {'total s':>8} {'ns/op':>7} {'peak MB':>8}")
    print(header)
    print("-" * len(header))
    for ranks in [int(r) for r in args.ranks.split(",")]:
        ops, t, wall, peak = run(args.collc, source, ranks)
        print(f"{ranks:>6} {ops:>10} {t['parse']:>8.3f} {t['elaborate']:>8.3f} "
              f"{t['verify IR']:>8.3f} {t['verify']:>8.3f} {wall:>8.3f} "
              f"{wall * 1e9 / ops:>7.0f} {peak:>8.0f}")


if __name__ == "__main__":
    main()
