#!/usr/bin/env python3
"""Every algorithm of every example, over both transports, started many times
at a small count: each start is a new communicator, so races at setup and
teardown get many chances to show. A race that hits 1 run in 20 survives
100 runs with probability 0.95^100 < 0.6%, per algorithm and transport.
No failure is allowed.

usage: stress.py --collc C --launch L --cxx CXX --include DIR... --libdir DIR
                 --examples DIR [--repeat N] [--only NAME] [--transport T]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

p = argparse.ArgumentParser()
p.add_argument("--collc", required=True)
p.add_argument("--launch", required=True)
p.add_argument("--cxx", required=True)
p.add_argument("--include", action="append", default=[])
p.add_argument("--libdir", required=True)
p.add_argument("--examples", required=True)
p.add_argument("--repeat", type=int, default=100)
p.add_argument("--only", action="append", default=[])
p.add_argument("--transport", action="append", default=[])
args = p.parse_args()

RANKS = 8
# Small, and not a multiple of the slice geometry, so that the last step is a
# short one (which is where a lost step showed); plans that move chunks
# around need whole chunks and get the nearest multiple below.
COUNT = 1000

def defines(example):
    return ["-D", "nodes=2", "-D", "gpus=4"] if example.startswith("hier_") else \
           ["-D", f"ranks={RANKS}"]


def build(example, work):
    """The host build of the example's kernels, and its algorithms' names."""
    source = os.path.join(work, example + ".cpp")
    library = os.path.join(work, example + ".so")
    subprocess.run([args.collc, os.path.join(args.examples, example + ".coll"),
                    *defines(example), "--emit=cuda", "-o", source], check=True)
    subprocess.run([args.cxx, "-std=c++17", "-O2", "-fPIC", "-shared",
                    *[f"-I{d}" for d in args.include], source, "-o", library,
                    f"-L{args.libdir}", "-lcollrt", f"-Wl,-rpath,{args.libdir}"], check=True)
    with open(source) as f:
        names = sorted(set(re.findall(r"\bcollc_algorithm_(\w+)\b", f.read())))
    return library, names


examples = sorted(f[:-5] for f in os.listdir(args.examples) if f.endswith(".coll"))
if args.only:
    examples = [e for e in examples if e in args.only]
runs = failed = 0
start = time.monotonic()
env = dict(os.environ, COLL_TIMEOUT="10")
with tempfile.TemporaryDirectory() as work:
    for example in examples:
        library, names = build(example, work)
        for name in names:
            for transport in args.transport or ("shm", "socket"):
                count = COUNT
                for attempt in range(2):
                    r = subprocess.run([args.launch, library, "--algorithm", name, "--ranks",
                                        str(RANKS), "--count", str(count), "--transport",
                                        transport, "--repeat", str(args.repeat)],
                                       capture_output=True, text=True, env=env)
                    whole = re.search(r"divisible by its (\d+) chunks", r.stdout + r.stderr)
                    if not whole:
                        break
                    count -= count % int(whole.group(1))
                out = r.stdout + r.stderr
                bad = re.search(r"FAIL (\d+) of (\d+) runs", out)
                lost = int(bad.group(1)) if bad else (0 if r.returncode == 0 else args.repeat)
                runs += args.repeat
                failed += lost
                status = "ok" if r.returncode == 0 else "FAILED"
                print(f"{example} {name} {transport}: {args.repeat - lost} of {args.repeat} "
                      f"passed ({status})", flush=True)
                if r.returncode:
                    print("  " + "\n  ".join(out.strip().splitlines()[-6:]))
print(f"stress: {runs - failed} of {runs} runs passed, in {time.monotonic() - start:.0f} s")
sys.exit(1 if failed else 0)
