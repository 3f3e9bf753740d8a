#!/usr/bin/env python3
"""End-to-end matrix: compile examples for the host, run them on emulated
ranks and check every output bit-exactly (collc-launch does the checking).

Every example runs at ranks {2, 3, 4, 5, 8} where it allows them (REJECTED
lists where not, and collc must refuse those with its message), with each
protocol forced in turn, plain, pipelined (--pipeline=2), replicated
(--instances=2) or both, a third of them placed on an H100 node (multimem
where the program allows it) and a third on an A100 node (peer-window loads
and stores), these with direct connections on (COLL_DIRECT=1), over the shm
transport and, one run in four of the others, the socket transport. Each compiled kernel then runs a rotating sample of
data type x op x count x in-place, so that across the matrix every value of
every dimension, and every (type, op) pair, appears many times; in a file of
several algorithms the launches take turns among them, so that each runs
with every protocol. Prints one line per failure and ends with `N passed, N failed`.
"""

import argparse
import itertools
import os
import re
import subprocess
import sys
import tempfile

DTYPES = ["int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float",
          "double", "bfloat16"]
OPS = ["sum", "prod", "max", "min", "avg"]
PROTOCOLS = ["Simple", "LL", "LL128"]
RANKS = [2, 3, 4, 5, 8]

# The rank counts of RANKS that an example does not allow, with what collc
# must say about them; it must compile at every other one. collc exiting
# non-zero anywhere else (a crash included) fails the test.
REJECTED = {
    "chain_broadcast": ({2, 3}, "error: root 3 is not a rank"),
    "recdoubling_allgather": ({3, 5}, "error: assertion failed: recursive doubling needs a "
                                      "power-of-two rank count"),
    "rechalving_allreduce": ({3, 5}, "error: assertion failed: recursive halving needs a "
                                     "power-of-two rank count"),
}

# Parameters an example needs besides `ranks`, per rank count.
def defines(example, ranks):
    if example.startswith("hier_"):
        if ranks % 2 or ranks < 4:
            return ["-D", f"nodes={ranks}", "-D", "gpus=1"]
        return ["-D", "nodes=2", "-D", f"gpus={ranks // 2}"]
    return ["-D", f"ranks={ranks}"]


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--collc", required=True)
    ap.add_argument("--launch", required=True)
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--include", action="append", default=[])
    ap.add_argument("--libdir", required=True)
    ap.add_argument("--examples", required=True)
    ap.add_argument("--only", help="run only this example (file stem)")
    ap.add_argument("--program", action="append", default=[],
                    help="run this test program as written (its own ranks) instead")
    ap.add_argument("--big", type=int, default=1000003, help="the large count")
    args = ap.parse_args()

    examples = sorted(f[:-5] for f in os.listdir(args.examples) if f.endswith(".coll"))
    if args.program:
        examples = args.program
    elif args.only:
        examples = [e for e in examples if e == args.only]
        if not examples:
            print(f"no example named {args.only}")
            return 1

    passed = failed = 0
    combos = list(itertools.product(DTYPES, OPS))
    with tempfile.TemporaryDirectory(prefix="collc-e2e-") as tmp:
        for index, example in enumerate(examples):
            path = example if args.program else os.path.join(args.examples, example + ".coll")
            example = os.path.basename(example).replace(".coll", "")
            turn = 17 * index
            for ranks, proto in itertools.product([0] if args.program else RANKS, PROTOCOLS):
                flags = [] if args.program else defines(example, ranks)
                refused, why = REJECTED.get(example, (set(), None))
                if not args.program and ranks in refused and proto != PROTOCOLS[0]:
                    continue  # refused once per rank count, below
                summary = run([args.collc, path] + flags)
                if not args.program and ranks in refused:
                    # collc must refuse it, saying why.
                    if summary.returncode == 1 and why in summary.stdout:
                        passed += 1
                    else:
                        failed += 1
                        print(f"FAIL {example} ranks={ranks}: expected collc to refuse it with "
                              f"'{why}', got exit status {summary.returncode}\n{summary.stdout}")
                    continue
                algorithms = [(m.group(1), int(m.group(3)), int(m.group(4))) for m in re.finditer(
                    r"^(\w+): (\w+) on (\d+) ranks?, (\d+) chunks?", summary.stdout, re.M)]
                if summary.returncode or not algorithms:
                    failed += 1
                    print(f"FAIL {example} ranks={ranks}: collc exits with status "
                          f"{summary.returncode}\n{summary.stdout}")
                    continue
                ranks = algorithms[0][1]  # a program's algorithms may differ; the first decides
                src = os.path.join(tmp, f"{example}_{ranks}_{proto}.cpp")
                lib = src[:-4] + ".so"
                # Pipelined and replicated plans take turns with plain ones.
                shape = [[], ["--pipeline=2"], ["--instances=2"], ["--pipeline=2", "--instances=2"]][
                    (ranks + PROTOCOLS.index(proto)) % 4]
                # On an H100 node, multimem where the program allows it; on an
                # A100 node, peer windows (the host emulates both over shared
                # memory).
                place = (ranks + index) % 3
                if place < 2:
                    shape = shape + ["--topology=" + ("hgx-h100", "dgx-a100")[place]]
                gen = run([args.collc, path, "--emit=cuda", "--protocol", proto, "-o", src] +
                          shape + flags)
                build = gen if gen.returncode else run(
                    [args.cxx, "-std=c++17", "-O1", "-fPIC", "-shared"] +
                    [f"-I{i}" for i in args.include] +
                    [src, "-o", lib, f"-L{args.libdir}", "-lcollrt", f"-Wl,-rpath,{args.libdir}"])
                if build.returncode:
                    failed += 1
                    print(f"FAIL {example} ranks={ranks} {proto}: does not build\n{build.stdout}")
                    continue
                for k in range(max(3, len(algorithms))):
                    name, size, chunks = algorithms[(k + PROTOCOLS.index(proto)) % len(algorithms)]
                    # Counts: empty, one element, a prime, fewer than the chunks, large.
                    counts = [0, 1, 7, max(chunks - 1, 1), args.big]
                    dtype, op = combos[turn % len(combos)]
                    count = counts[(turn + k) % len(counts)]
                    if count == args.big and dtype not in ("float", "int32", "bfloat16"):
                        count = 65537  # large counts on a few types keep CI short
                    inplace = (turn // len(combos) + k) % 2 == 1
                    turn += 1
                    cmd = [args.launch, lib, "--algorithm", name, "--ranks", str(size),
                           "--count", str(count), "--dtype", dtype, "--op", op]
                    if inplace:
                        cmd.append("--inplace")
                    placed = any(f.startswith("--topology") for f in shape)
                    transport = "socket" if (turn + k) % 4 == 0 and not placed else "shm"
                    cmd += ["--transport", transport]
                    # Placed builds store straight into receivers on their
                    # direct (NVLink Simple) connections.
                    env = dict(os.environ, COLL_DIRECT="1") if placed else None
                    res = run(cmd, timeout=300, env=env)
                    case = (f"{example} {name} ranks={size} {proto} {' '.join(shape)} {dtype} {op} count={count}"
                            f"{' inplace' if inplace else ''} {transport}")
                    if res.returncode == 0 and "PASS" in res.stdout:
                        passed += 1
                    else:
                        failed += 1
                        print(f"FAIL {case}\n{res.stdout}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
