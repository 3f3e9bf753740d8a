"""Runs a command and fails unless it exits with the given status.

usage: exit-status.py STATUS COMMAND [ARGS...]

Unlike `not`, this checks the exact status (collc promises 1 for every error
in the user's program) and fails on a signal.
"""
import subprocess
import sys

expected = int(sys.argv[1])
result = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
if result.returncode != expected:
    sys.stderr.write(result.stderr.decode(errors="replace"))
    sys.exit("expected exit status %d, got %d" % (expected, result.returncode))
