#!/usr/bin/env python3
"""Draws what collc tune and collc viz simulated, with matplotlib.

    plot.py DATA.json OUT.{svg,png,pdf}

DATA.json is written by collc: {"kind": "busbw", ...} for the tuner's bus
bandwidth against message size, {"kind": "timeline", ...} for a plan's
steps on each threadblock over time. The format follows OUT's extension.
"""
import json
import sys


def fail(message, status=1):
    sys.stderr.write("plot.py: error: %s\n" % message)
    sys.exit(status)


# collc tries the next Python when this one lacks matplotlib.
NO_MATPLOTLIB = 3


try:
    import matplotlib
    matplotlib.use("Agg")
    # Text stays text in an SVG: smaller, searchable, and checked by tests.
    matplotlib.rcParams["svg.fonttype"] = "none"
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
    from matplotlib.ticker import FuncFormatter
except ImportError:
    fail("matplotlib is missing: install python3-matplotlib "
         "(scripts/install-deps.sh does)", NO_MATPLOTLIB)


def size_label(value, _pos=None):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return "%g %s" % (value, unit)
        value /= 1024.0


def busbw(data, out):
    """One line per candidate (thin), the winner, NCCL's model and the bound."""
    fig, ax = plt.subplots(figsize=(11, 6.5))
    sizes = data["sizes"]
    for c in data["candidates"]:
        ax.plot(sizes, c["busbw"], color="0.75", linewidth=0.8)
    ax.plot(sizes, data["winner"], color="tab:blue", linewidth=2.4,
            label="tuned (winner per size)")
    if data.get("nccl"):
        ax.plot(sizes, data["nccl"], color="tab:orange", linewidth=1.8,
                linestyle="--", label="NCCL's tuning model (a model)")
    if data.get("bound"):
        ax.plot(sizes, data["bound"], color="black", linewidth=1.2,
                linestyle=":", label="lower bound (collc bound)")
    ax.plot([], [], color="0.75", linewidth=0.8,
            label="each candidate (%d)" % len(data["candidates"]))
    for r in data.get("ranges", [])[1:]:
        ax.axvline(sizes[r["first"]], color="tab:blue", alpha=0.15)
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(size_label))
    ax.set_yscale("log")
    ax.set_xlabel("message size M (nccl-tests' size)")
    ax.set_ylabel("simulated bus bandwidth (GB/s)")
    ax.set_title(data["title"], fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper left", fontsize=9)
    fig.tight_layout()
    fig.savefig(out)


def timeline(data, out):
    """A bar per step on a row per threadblock, coloured by step kind."""
    rows = data["rows"]
    kinds = data["kinds"]
    colors = plt.get_cmap("tab10")
    height = min(40.0, 1.5 + 0.28 * len(rows))
    fig, ax = plt.subplots(figsize=(12, height))
    for y, row in enumerate(rows):
        by_kind = {}
        for start, length, kind in row["spans"]:
            by_kind.setdefault(kind, []).append((start, length))
        for kind, bars in by_kind.items():
            ax.broken_barh(bars, (y - 0.4, 0.8), facecolors=colors(kind % 10),
                           edgecolor="none")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r["label"] for r in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, data["micros"])
    ax.set_xlabel("simulated time (us)")
    ax.set_title(data["title"], fontsize=10)
    ax.legend(handles=[Patch(color=colors(k % 10), label=name)
                       for k, name in enumerate(kinds)],
              loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out)


def main():
    if len(sys.argv) != 3:
        fail("usage: plot.py DATA.json OUT.svg")
    try:
        with open(sys.argv[1]) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        fail("cannot read %s: %s" % (sys.argv[1], e))
    draw = {"busbw": busbw, "timeline": timeline}.get(data.get("kind"))
    if not draw:
        fail("unknown kind %r" % data.get("kind"))
    try:
        draw(data, sys.argv[2])
    except (OSError, ValueError) as e:
        fail("cannot write %s: %s" % (sys.argv[2], e))


if __name__ == "__main__":
    main()
