#!/usr/bin/env bash
# One command for a fresh Debian 12 machine: install what is missing, build,
# and run the main job: compile the ring allreduce example, run it on 8
# emulated ranks (one process each) and check the result bit-exactly.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
echo
echo "== collc run examples/ring_allreduce.coll --ranks 8 --count 1000003"
build/bin/collc run examples/ring_allreduce.coll --ranks 8 --count 1000003
