#!/usr/bin/env python3
"""Device-code benchmark: what the PTX of the generated kernels calls and divides.

Emits the same allreduce plans as ptxas_table.py, compiles each to PTX with
nvcc, and prints per device function that moves data (the LL, LL128 and
Simple primitives and the reductions they use), and every other function
with a 64-bit `div`/`rem`, how many `call` and 64-bit division instructions
its body has, and which functions it calls. The
issue's facts: no call inside the LL, LL128 and Simple inner loops, no
64-bit division in any inner loop. A function here is one body; whether a
call sits in its loop is for the reader of the listed PTX (--keep DIR).

usage: bench/ptx_facts.py [--collc build/bin/collc] [--nvcc nvcc] [--arch sm_90] [--keep DIR]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

from ptxas_table import CALL, CASES, ROOT, bodies, demangle

# The functions whose bodies are the primitives' inner loops.
MOVERS = ("llMove", "ll128Move", "simpleMove", "simpleEdge", "reduceUnits", "reduceCopy",
          "reduceWords", "multimemReduceChunk", "multimemStoreChunk", "peerChunk")
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


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--collc", default=os.path.join(ROOT, "build", "bin", "collc"))
    p.add_argument("--nvcc", default=os.environ.get("NVCC", "/usr/local/cuda/bin/nvcc"))
    p.add_argument("--arch", default="sm_90")
    p.add_argument("--keep", help="a directory for the PTX files")
    args = p.parse_args()
    include = ["-I" + os.path.join(ROOT, "runtime", d) for d in ("include", "device")]
    print(f"{'plan':<8} {'function':<34} {'calls':>5} {'div64':>5}   called")
    with tempfile.TemporaryDirectory() as work:
        for name, example, flags in CASES:
            source = os.path.join(work, name + ".cu")
            ptx = os.path.join(work, name + ".ptx")
            subprocess.run([args.collc, os.path.join(ROOT, "examples", example),
                            "--topology=hgx-h100", "--emit=cuda", "-o", source] + flags, check=True)
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
                divides = len(DIV64.findall(body))
                if not names[fn].startswith(MOVERS) and not divides:
                    continue
                calls = CALL.findall(body)
                called = sorted({names.get(c, c) for c in calls})
                print(f"{name:<8} {names[fn]:<34} {len(calls):>5} {divides:>5}   "
                      f"{', '.join(called) or '-'}")


if __name__ == "__main__":
    main()
