#!/usr/bin/env python3
"""Rules of the device primitives that only their PTX shows.

Compiles collc's CUDA output for sm_90 to PTX and checks every LL128 step
(cuda_ll128.h), wherever it is inlined: after each vote of a warp on the
flags, if a line store follows before the next vote,
  - the lines are loaded again before it: the load that saw a flag may
    hold older words of its line;
  - a __syncwarp() comes before it, so that the eight lanes of a line
    store it as one warp store.

Usage: ptx.py COLLC NVCC RUNTIME_INCLUDE DEVICE_INCLUDE EXAMPLE.coll
"""
import re
import subprocess
import sys
import tempfile

LOAD = 'ld.volatile.global.v2.u64'
STORE = 'st.volatile.global.v2.u64'
VOTE = 'vote.sync.any'
SYNC = 'bar.warp.sync'


def functions(ptx):
    """(mangled name, body) of each function and kernel."""
    pattern = r'^(?:\.visible\s+|\.weak\s+)*\.(?:func|entry)[^\n]*?(\w+)\([^;{]*?\{(.*?)^\}'
    return [(m.group(1), m.group(2)) for m in re.finditer(pattern, ptx, re.S | re.M)]


def check_ll128(fn, body):
    """(votes whose stores were checked, the problems) of one function."""
    ops = [op for line in body.splitlines()
           for op in (LOAD, STORE, VOTE, SYNC) if op in line]
    checked, problems = 0, []
    for i, op in enumerate(ops):
        if op != VOTE:
            continue
        j = i + 1
        while j < len(ops) and ops[j] not in (VOTE, STORE):
            j += 1
        if j == len(ops) or ops[j] != STORE:
            continue  # a step that receives only
        checked += 1
        between = ops[i + 1:j]
        if LOAD not in between:
            problems.append(f'{fn}: a vote on the flags, then line stores with no reload between')
        if SYNC not in between:
            problems.append(f'{fn}: a vote on the flags, then line stores with no __syncwarp()')
    return checked, problems


def main():
    collc, nvcc, include, device, example = sys.argv[1:6]
    with tempfile.TemporaryDirectory() as work:
        subprocess.run([collc, example, '-D', 'ranks=4', '--protocol=LL128', '--emit=cuda',
                        '-o', f'{work}/k.cu'], check=True)
        subprocess.run([nvcc, '-std=c++17', '-O3', '-arch=sm_90', '-ptx', f'-I{include}',
                        f'-I{device}', f'{work}/k.cu', '-o', f'{work}/k.ptx'], check=True)
        with open(f'{work}/k.ptx') as f:
            ptx = f.read()
    checked, problems = 0, []
    for fn, body in functions(ptx):
        n, found = check_ll128(fn, body)
        checked += n
        problems += found
    print(f'{checked} votes on LL128 flags followed by line stores')
    for p in problems:
        print(p)
    if not checked or problems:
        print('FAIL')
        return 1
    print('PASS')
    return 0


if __name__ == '__main__':
    sys.exit(main())
