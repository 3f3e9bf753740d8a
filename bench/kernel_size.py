#!/usr/bin/env python3
"""Emitted-kernel benchmark: how the CUDA output grows with the rank count.

For each example and rank count, runs `collc --emit=cuda` and reports the
source size (all of it, and without the tables: the threadblocks' operand
tables and their ThreadblockDesc rows, host data that grows with the
threadblocks), collc's time and peak memory, and, with
--nvcc, nvcc's time and peak memory for one architecture and the most
registers ptxas gives a kernel function. Issue targets: the source without
tables within 20% across 8 ... 1024 ranks, the tables at most linear in R per
rank, collc <= 10 s and nvcc <= 2x the 8-rank time at 1024 ranks.

usage: bench/kernel_size.py [--ranks 8,64,256,1024] [--examples ring_allreduce,...]
                            [--nvcc [--arch sm_90] [--nvcc-max-ranks 1024]]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Lines that grow with the threadblocks: their tables and table rows.
ENTRY = r"(-?\d+|t\d+|nullptr)"
TABLE_LINE = re.compile(r"^\s*(\{\d+, \d+, -?\d+, -?\d+, |" + ENTRY + r"(, " + ENTRY + r")*(,|\};)?$)"
                        r"|^const int64_t t\d+\[\] |^// Rank \d+, threadblock \d+\.$")


def timed(cmd):
    """Runs cmd under GNU time: (seconds, peak MB, stdout, stderr)."""
    start = time.monotonic()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, capture_output=True, text=True)
    wall = time.monotonic() - start
    lines = proc.stderr.rstrip().splitlines()
    peak = int(lines[-1]) / 1024.0 if lines and lines[-1].isdigit() else 0.0
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{proc.stderr}")
    return wall, peak, proc.stdout, "\n".join(lines[:-1])


def defines(example, ranks):
    if example.startswith("hier_"):
        gpus = 8 if ranks >= 16 else 2
        return ["-D", f"nodes={ranks // gpus}", "-D", f"gpus={gpus}"]
    return ["-D", f"ranks={ranks}"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collc", default=os.path.join(ROOT, "build", "bin", "collc"))
    parser.add_argument("--ranks", default="8,64,256,1024")
    parser.add_argument("--examples", default="ring_allreduce,rechalving_allreduce,hier_allreduce")
    parser.add_argument("--protocol", default="Simple")
    parser.add_argument("--nvcc", action="store_true", help="also compile with nvcc")
    parser.add_argument("--nvcc-path", default=os.environ.get("NVCC", "/usr/local/cuda/bin/nvcc"))
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--nvcc-max-ranks", type=int, default=1024)
    args = parser.parse_args()

    header = (f"{'example':<22} {'ranks':>5} {'source KB':>9} {'no tables KB':>12} "
              f"{'tables KB':>9} {'collc s':>7} {'collc MB':>8}")
    if args.nvcc:
        header += f" {'nvcc s':>7} {'nvcc MB':>7} {'regs':>4}"
    print(header)
    print("-" * len(header))
    with tempfile.TemporaryDirectory() as tmp:
        for example in args.examples.split(","):
            source = os.path.join(ROOT, "examples", example + ".coll")
            for ranks in [int(r) for r in args.ranks.split(",")]:
                cu = os.path.join(tmp, f"{example}_{ranks}.cu")
                wall, peak, _, _ = timed([args.collc, source, *defines(example, ranks),
                                          f"--protocol={args.protocol}", "--emit=cuda",
                                          "-o", cu])
                text = open(cu).read()
                tables = sum(len(l) + 1 for l in text.splitlines() if TABLE_LINE.search(l))
                row = (f"{example:<22} {ranks:>5} {len(text) / 1024:>9.1f} "
                       f"{(len(text) - tables) / 1024:>12.1f} {tables / 1024:>9.1f} "
                       f"{wall:>7.2f} {peak:>8.0f}")
                if args.nvcc and ranks <= args.nvcc_max_ranks:
                    nwall, npeak, _, err = timed(
                        [args.nvcc_path, "-std=c++17", "-O2", f"-arch={args.arch}", "-c",
                         "-Xptxas", "-v", f"-I{ROOT}/runtime/include", f"-I{ROOT}/runtime/device",
                         cu, "-o", cu + ".o"])
                    regs = [int(r) for r in re.findall(r"Used (\d+) registers", err)]
                    row += f" {nwall:>7.1f} {npeak:>7.0f} {max(regs, default=0):>4}"
                print(row, flush=True)


if __name__ == "__main__":
    main()
