#!/usr/bin/env python3
"""Rules of the device primitives that only their PTX shows.

Compiles collc's CUDA output for sm_90 to PTX and checks, in every
instantiation of the LL128 step (cuda_ll128.h):
  - after the warp's last vote on the flags, the lines are loaded again
    before anything is stored: the load that saw a flag may hold older words
    of its line;
  - every line store follows a __syncwarp() after that vote, so that the
    eight lanes of a line store it as one warp store.

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


def functions(ptx, name):
    """(mangled name, body) of each definition whose name contains `name`."""
    pattern = r'^\.func[^\n]*?(\w*' + name + r'\w*)\([^;{]*?\)\s*\{(.*?)^\}'
    return [(m.group(1), m.group(2)) for m in re.finditer(pattern, ptx, re.S | re.M)]


def check_ll128(fn, body):
    """The problems of one ll128Move body."""
    ops = [op for line in body.splitlines()
           for op in (LOAD, STORE, VOTE, SYNC) if op in line]
    if VOTE not in ops:
        return [f'{fn}: no vote on the flags']
    last_vote = max(i for i, op in enumerate(ops) if op == VOTE)
    after = ops[last_vote + 1:]
    problems = []
    stores = [i for i, op in enumerate(after) if op == STORE]
    if not stores:
        return [f'{fn}: no line store after the last vote']
    if LOAD not in after[:stores[0]]:
        problems.append(f'{fn}: no reload of the lines between the last vote and the stores')
    if SYNC not in after[:stores[0]]:
        problems.append(f'{fn}: line stores without a __syncwarp() after the last vote')
    return problems


def main():
    collc, nvcc, include, device, example = sys.argv[1:6]
    with tempfile.TemporaryDirectory() as work:
        subprocess.run([collc, example, '-D', 'ranks=4', '--protocol=LL128', '--emit=cuda',
                        '-o', f'{work}/k.cu'], check=True)
        subprocess.run([nvcc, '-std=c++17', '-O3', '-arch=sm_90', '-ptx', f'-I{include}',
                        f'-I{device}', f'{work}/k.cu', '-o', f'{work}/k.ptx'], check=True)
        with open(f'{work}/k.ptx') as f:
            ptx = f.read()
    found = functions(ptx, 'll128Move')
    problems = [p for fn, body in found for p in check_ll128(fn, body)]
    print(f'{len(found)} instantiations of ll128Move')
    for p in problems:
        print(p)
    if not found or problems:
        print('FAIL')
        return 1
    print('PASS')
    return 0


if __name__ == '__main__':
    sys.exit(main())
