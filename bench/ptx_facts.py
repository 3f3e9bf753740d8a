#!/usr/bin/env python3
"""Device-code benchmark: what the inner loops of the generated kernels call and divide.

Emits the same allreduce plans as ptxas_table.py, compiles each to PTX with
nvcc, and prints per kernel and device function its innermost loops (a
backward branch to a label, with no other loop inside), how many of them
hold a `call` and which functions those call, and how many hold a 64-bit
`div`/`rem`. The primitives' loops are inlined into the kernels (collc/
cuda.h), so a kernel's loops are theirs: the issue's facts are no call in
the LL, LL128 and Simple loops that move data, and no 64-bit division in
any inner loop. Calls that remain are on the slow paths of a loop: a wait
that has spun long (checkIn), a word that spans chunks (gather, scatter).
--keep DIR keeps the PTX to read.

usage: bench/ptx_facts.py [--collc build/bin/collc] [--nvcc nvcc] [--arch sm_90] [--keep DIR]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

from ptxas_table import CALL, CASES, ROOT, bodies, demangle, topology

DIV64 = re.compile(r"^\s*(?:@!?%p\d+\s+)?(?:div|rem)\.(?:[us]64)\b", re.M)


def short(demangled):
    """The unqualified name, template arguments kept: llMove<4>."""
    name = demangled.replace("(anonymous namespace)::", "").split("(")[0]
    name = re.sub(r"_INTERNAL_\w+::|collc::cuda::|collc::", "", name)
    depth, starts = 0, [0]
    for i, c in enumerate(name):
        depth += (c == "<") - (c == ">")
        if depth == 0 and name.startswith("::", i):
            starts.append(i + 2)
        elif depth == 0 and c == " ":  # after a return type
            starts = [i + 1]
    # A plan's kernel by its plan: ring_LL::kernel.
    return name[starts[-2 if name.endswith("::kernel") else -1]:]


LABEL = re.compile(r"^(\$L__\w+):", re.M)
BRANCH = re.compile(r"\bbra(?:\.uni)?\s+(\$L__\w+);")


def innermost_loops(body):
    """The instruction lines of each loop that holds no other loop."""
    lines = body.splitlines()
    at = {m.group(1): i for i, line in enumerate(lines) for m in [LABEL.match(line)] if m}
    loops = [(at[m.group(1)], j) for j, line in enumerate(lines)
             for m in [BRANCH.search(line)] if m and at.get(m.group(1), j + 1) <= j]
    inner = [(i, j) for i, j in loops
             if not any((i, j) != (a, b) and i <= a and b <= j for a, b in loops)]
    return [lines[i:j + 1] for i, j in inner]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--collc", default=os.path.join(ROOT, "build", "bin", "collc"))
    p.add_argument("--nvcc", default=os.environ.get("NVCC", "/usr/local/cuda/bin/nvcc"))
    p.add_argument("--arch", default="sm_90")
    p.add_argument("--keep", help="a directory for the PTX files")
    args = p.parse_args()
    include = ["-I" + os.path.join(ROOT, "runtime", d) for d in ("include", "device")]
    print(f"{'plan':<8} {'function':<34} {'loops':>5} {'w/call':>6} {'w/div64':>7}   called in loops")
    with tempfile.TemporaryDirectory() as work:
        for name, example, flags in CASES:
            source = os.path.join(work, name + ".cu")
            ptx = os.path.join(work, name + ".ptx")
            subprocess.run([args.collc, os.path.join(ROOT, "examples", example),
                            "--emit=cuda", "-o", source] + topology(flags) + flags, check=True)
            proc = subprocess.run([args.nvcc, "-std=c++17", "-O3", "-arch=" + args.arch, "-ptx",
                                   source, "-o", ptx] + include, capture_output=True, text=True)
            if proc.returncode:
                sys.exit(proc.stderr)
            if args.keep:
                os.makedirs(args.keep, exist_ok=True)
                shutil.copy(ptx, args.keep)
            with open(ptx) as f:
                funcs = bodies(f.read())
            names = {f: short(d) for f, d in zip(funcs, demangle(list(funcs)))}
            for fn, body in funcs.items():
                loops = innermost_loops(body)
                if not loops:
                    continue
                calling = [CALL.findall("\n".join(loop)) for loop in loops]
                dividing = sum(bool(DIV64.search("\n".join(loop))) for loop in loops)
                called = sorted({names.get(c, c) for calls in calling for c in calls})
                print(f"{name:<8} {names[fn]:<34} {len(loops):>5} {sum(map(bool, calling)):>6} "
                      f"{dividing:>7}   {', '.join(called) or '-'}")


if __name__ == "__main__":
    main()
