#!/usr/bin/env python3
"""Checks collc sim against published measurements (validation.json).

Usage: check_validation.py COLLC VALIDATION.json EXAMPLES_DIR [--markdown]

For each point, runs `collc sim` at the point's size and compares NCCL's
model (of: nccl) or the simulated plan (of: plan) with the measured busbw
or time: error = predicted / measured - 1. A point must be within 20%,
unless it is marked as a known miss, which must still be off by more than
20% (so that the table is corrected when it no longer is). Prints one line
per point, the median absolute error, and `OK` or what failed.
"""
import json
import statistics
import subprocess
import sys

LIMIT = 0.20


def predict(collc, examples, p):
    source = p.get("file", "ring_allreduce.coll")
    cmd = [collc, "sim", f"{examples}/{source}", "-D", f"ranks={p['ranks']}",
           "--topology", p["topology"], "--sizes", str(p["bytes"]), "--json"] + p.get("args", [])
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stderr}")
    [size] = json.loads(out.stdout)[0]["sizes"]
    got = size["nccl_model"] if p["of"] == "nccl" else size
    key = "busbw" if "busbw" in p else "time_us"
    return got[key], p[key], key


def main():
    collc, path, examples = sys.argv[1:4]
    markdown = "--markdown" in sys.argv[4:]
    points = json.load(open(path))["points"]
    errors, failed = [], []
    if markdown:
        print("| case | compared | published | predicted | error | source |")
        print("| --- | --- | --- | --- | --- | --- |")
    for p in points:
        predicted, measured, key = predict(collc, examples, p)
        error = predicted / measured - 1
        errors.append(abs(error))
        unit = "GB/s busbw" if key == "busbw" else "µs"
        miss = p.get("miss")
        if markdown:
            what = "NCCL's model" if p["of"] == "nccl" else f"`{p['file']}` simulated"
            note = f" (known miss: {miss})" if miss else ""
            print(f"| {p['case']} | {what} | {measured:g} {unit} | {predicted:.2f} {unit} "
                  f"| {error:+.1%}{note} | {p['source']} |")
        else:
            print(f"{p['case']}: {p['of']} {predicted:.2f} against {measured:g} {unit}, "
                  f"{error:+.1%}{' (known miss)' if miss else ''}")
        if miss and abs(error) <= LIMIT:
            failed.append(f"{p['case']}: marked a miss but within {LIMIT:.0%} now")
        if not miss and abs(error) > LIMIT:
            failed.append(f"{p['case']}: {error:+.1%}, past {LIMIT:.0%}")
    within = sum(1 for p, e in zip(points, errors) if e <= LIMIT)
    print(f"{len(points)} points, {within} within {LIMIT:.0%}, "
          f"median |error| {statistics.median(errors):.1%}")
    for f in failed:
        print("FAIL", f)
    if not failed and not markdown:
        print("OK")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
