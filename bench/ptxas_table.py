#!/usr/bin/env python3
"""Device-code benchmark: what ptxas makes of the generated kernels.

Emits the ring, two-shot and hierarchical allreduce for 8 ranks of an H100
node (the hierarchical one as 2 nodes of 4), compiles each with nvcc for
one architecture, and prints per plan kernel the registers, stack frame
and spill bytes that `ptxas -v` reports, with the worst of the device
functions it reaches in the PTX call graph (their frames and spills are
the kernel's too): the kernel for any (type, op) and those compiled for
one pair. Issue targets (sm_90): no spills, stack <= 64 bytes, registers
<= 128.

usage: bench/ptxas_table.py [--collc build/bin/collc] [--nvcc nvcc] [--arch sm_90]
                            [--define TYPE=... ...]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# name, example, collc flags (an H100 node unless a topology is given; the
# two-shot on an A100 node runs peer windows, read_reduce and put).
CASES = [
    ("ring", "ring_allreduce.coll", ["-D", "ranks=8"]),
    ("twoshot", "twoshot_allreduce.coll", ["-D", "ranks=8"]),
    ("windows", "twoshot_allreduce.coll", ["-D", "ranks=8", "--topology=dgx-a100"]),
    ("hier", "hier_allreduce.coll", ["-D", "nodes=2", "-D", "gpus=4"]),
]


def topology(flags):
    """The --topology flag collc gets: the case's, else an H100 node's."""
    return [] if any(f.startswith("--topology=") for f in flags) else ["--topology=hgx-h100"]
FUNC = re.compile(r"(?:Compiling entry function|Function properties for) '?(\w+)'?")
FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
REGS = re.compile(r"Used (\d+) registers")
HEAD = re.compile(r"^(?:\.visible\s+|\.weak\s+)*\.(?:func|entry)\s+(?:\([^)]*\)\s*)?(\w+)")
CALL = re.compile(r"\bcall(?:\.uni)?\s+(?:\([^)]*\),\s*)?(\w+)")


def bodies(ptx):
    """Function name -> its PTX text, in file order."""
    out, name, lines = {}, None, []
    for line in ptx.splitlines():
        m = HEAD.match(line)
        if m:
            if name:
                out[name] = "\n".join(lines)
            name, lines = m.group(1), []
        elif name:
            lines.append(line.split("//")[0])
    if name:
        out[name] = "\n".join(lines)
    return out


def demangle(names):
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True)
    return out.stdout.splitlines() if out.returncode == 0 else names


def nvcc(args, source, *extra):
    include = ["-I" + os.path.join(ROOT, "runtime", d) for d in ("include", "device")]
    cmd = [args.nvcc, "-std=c++17", "-O3", "-arch=" + args.arch, source] + list(extra) + \
        include + ["-D" + d for d in args.define]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(proc.stderr)
    return proc.stderr


def ptxas(args, source, work):
    """Per function: [registers, stack, spill stores, spill loads, entry?]."""
    funcs, current = {}, None
    for line in nvcc(args, source, "-Xptxas", "-v", "-c", "-o",
                     os.path.join(work, "k.o")).splitlines():
        m = FUNC.search(line)
        if m:
            current = funcs.setdefault(m.group(1), [0, 0, 0, 0, False])
            current[4] |= "entry function" in line
        elif current and FRAME.search(line):
            current[1:4] = [int(x) for x in FRAME.search(line).groups()]
        elif current and REGS.search(line):
            current[0] = int(REGS.search(line).group(1))
    return funcs


def callGraph(args, source, work):
    """Function -> the functions its PTX body calls."""
    ptx = os.path.join(work, "k.ptx")
    nvcc(args, source, "-ptx", "-o", ptx)
    with open(ptx) as f:
        return {fn: set(CALL.findall(body)) for fn, body in bodies(f.read()).items()}


def reachable(graph, fn):
    seen, todo = set(), [fn]
    while todo:
        for callee in graph.get(todo.pop(), ()):
            if callee not in seen:
                seen.add(callee)
                todo.append(callee)
    return seen


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--collc", default=os.path.join(ROOT, "build", "bin", "collc"))
    p.add_argument("--nvcc", default=os.environ.get("NVCC", "/usr/local/cuda/bin/nvcc"))
    p.add_argument("--arch", default="sm_90")
    p.add_argument("--define", action="append", default=[], help="a macro for nvcc")
    args = p.parse_args()
    print(f"{'kernel':<34} {'regs':>5} {'stack':>6} {'spill st':>9} {'spill ld':>9}"
          f"   worst callee: stack, spill st/ld")
    with tempfile.TemporaryDirectory() as work:
        for name, example, flags in CASES:
            source = os.path.join(work, name + ".cu")
            subprocess.run([args.collc, os.path.join(ROOT, "examples", example),
                            "--emit=cuda", "-o", source] + topology(flags) + flags, check=True)
            funcs = ptxas(args, source, work)
            graph = callGraph(args, source, work)
            names = dict(zip(funcs, demangle(list(funcs))))
            for fn, (regs, stack, st, ld, entry) in sorted(funcs.items(), key=lambda f: names[f[0]]):
                if not entry or "divideKernel" in names[fn]:
                    continue
                callees = [funcs[c] for c in reachable(graph, fn) if c in funcs]
                worst = [max((f[i] for f in callees), default=0) for i in (1, 2, 3)]
                # ring_LL::kernel (any type and op), ring_LL::kernel_float32_sum
                path = names[fn].split("(collc::")[0].replace("(anonymous namespace)::", "")
                kernel = "::".join(path.split("::")[-2:])
                if not kernel.startswith(name):  # the case's name, where the plan's is another
                    kernel = name + ":" + kernel
                print(f"{kernel:<34} {regs:>5} {stack:>6} {st:>9} {ld:>9}"
                      f"   {worst[0]}, {worst[1]}/{worst[2]}")


if __name__ == "__main__":
    main()
