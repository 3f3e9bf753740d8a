#!/usr/bin/env python3
"""Checks `collc tune --json` against the library it wrote: the ranges start
at 0 and each ends where the next begins; each range's winner is no slower
in the simulator than every other candidate at every size of the range; the
library's plans carry exactly these ranges, in order. Given `collc sim
--json` of the same single candidate, its times are the tuner's (which
reuses each plan's steady loop period across sizes). NCCL's model and the
bound come per size, and no winner is faster than the bound. Prints OK or
why not.
Usage: check_tune.py TUNE.json LIBRARY.cpp [SIM.json]
"""
import json
import re
import sys


def main(json_path, library_path, sim_path=None):
    with open(json_path) as f:
        tune = json.load(f)
    times = {c["name"]: c["micros"] for c in tune["candidates"]}
    ranges = tune["ranges"]
    errors = []
    if not ranges or ranges[0]["min_bytes"] != 0 or ranges[0]["first"] != 0:
        errors.append("the first range does not start at 0")
    if ranges and ranges[-1]["last"] != len(tune["sizes"]) - 1:
        errors.append("the last range does not reach the largest size")
    for a, b in zip(ranges, ranges[1:]):
        if a["max_bytes"] != b["min_bytes"] or a["last"] + 1 != b["first"]:
            errors.append(f"ranges {a} and {b} are not contiguous")
    for r in ranges:
        if r["min_bytes"] >= r["max_bytes"]:
            errors.append(f"range {r} is empty")
        won = times[r["winner"]]
        for i in range(r["first"], r["last"] + 1):
            for name, t in times.items():
                if t[i] < won[i]:
                    errors.append(f"{name} ({t[i]} us) beats winner {r['winner']} "
                                  f"({won[i]} us) at {tune['sizes'][i]} B")
    # The references: one per size, and no winner past the bound.
    sizes = tune["sizes"]
    for key in ("nccl_busbw", "bound_busbw"):
        if len(tune[key]) != len(sizes):
            errors.append(f"{len(tune[key])} {key} values for {len(sizes)} sizes")
    for r in ranges:
        for i in range(r["first"], r["last"] + 1):
            bound = tune["bound_busbw"][i]
            busbw = sizes[i] / times[r["winner"]][i] / 1e3 * tune["busbw_factor"]
            if bound is not None and busbw > bound * (1 + 1e-9):
                errors.append(f"winner {r['winner']} reaches {busbw} GB/s at {sizes[i]} B, "
                              f"past the bound's {bound}")
    with open(library_path) as f:
        emitted = [(int(lo), int(hi)) for lo, hi in
                   re.findall(r"(\d+)LL, (\d+)LL, collc::k", f.read())]
    wanted = [(r["min_bytes"], r["max_bytes"]) for r in ranges]
    if emitted != wanted:
        errors.append(f"the library's ranges {emitted} are not the tuned {wanted}")
    if sim_path:
        with open(sim_path) as f:
            sim = [row["time_us"] for row in json.load(f)[0]["sizes"]]
        (tuned,) = times.values()
        for size, a, b in zip(tune["sizes"], tuned, sim):
            if abs(a - b) > 1e-9 * b:
                errors.append(f"at {size} B the tuner says {a} us, collc sim {b} us")
    print("\n".join(errors) if errors else f"OK {len(ranges)} ranges")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
