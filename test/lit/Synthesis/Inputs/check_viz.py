#!/usr/bin/env python3
"""Checks `collc viz --spans` against the plan it traced: on each
threadblock (and replica) the steps run one at a time, in order, loop after
loop; every step of every loop ran exactly once; and the last step ends at
the time `collc sim --json` gives the same size, less the launch latency
collc viz reports. Prints OK or why not.
Usage: check_viz.py SPANS.json VIZ.txt SIM.json
"""
import json
import re
import sys


def main(spans_path, viz_path, sim_path):
    spans = json.load(open(spans_path))
    viz = open(viz_path).read()
    sim = json.load(open(sim_path))[0]["sizes"][0]
    errors = []
    lanes = {}
    for s in spans:
        lanes.setdefault((s["threadblock"], s["replica"]), []).append(s)
    steps_per_tb = {}
    for (tb, _), lane in lanes.items():
        steps_per_tb[tb] = max(steps_per_tb.get(tb, 0), max(s["step"] for s in lane) + 1)
    for key, lane in lanes.items():
        lane.sort(key=lambda s: s["start_us"])
        n = steps_per_tb[key[0]]
        for i, s in enumerate(lane):
            if s["end_us"] < s["start_us"]:
                errors.append(f"{key}: a step ends before it starts")
            if (s["loop"], s["step"]) != (i // n, i % n):
                errors.append(f"{key}: step {i} is loop {s['loop']} step {s['step']}")
                break
            if i and s["start_us"] < lane[i - 1]["end_us"] - 1e-9:
                errors.append(f"{key}: steps {i - 1} and {i} overlap")
                break
    m = re.search(r"simulated ([0-9.]+) us \(([0-9.]+) us of it launch latency\)", viz)
    if not m:
        errors.append("collc viz prints no simulated time")
    else:
        total, latency = float(m.group(1)), float(m.group(2))
        end = max(s["end_us"] for s in spans)
        if abs(total - sim["time_us"]) > 0.01:
            errors.append(f"collc viz says {total} us, collc sim {sim['time_us']}")
        if abs(end + latency - total) > 0.01:
            errors.append(f"the last step ends at {end} us, not {total} - {latency}")
    if sim["loops"] * sum(steps_per_tb.values()) != len(spans):
        errors.append(f"{len(spans)} steps ran, not {sim['loops']} loops of each")
    print("\n".join(errors) if errors else f"OK {len(spans)} steps on {len(lanes)} threadblocks")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
