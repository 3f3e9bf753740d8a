#!/usr/bin/env bash
# One command for a fresh Debian 12 machine: install what is missing, build,
# and run the main job (compile and verify the ring allreduce example).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
echo
echo "== collc examples/ring_allreduce.coll -D ranks=8"
build/bin/collc examples/ring_allreduce.coll -D ranks=8
