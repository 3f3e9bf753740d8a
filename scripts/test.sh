#!/usr/bin/env bash
# Runs every test through ctest: lit (dialect, front end, verifier, examples),
# unit tests, and the front-end fuzzer, also under AddressSanitizer and UBSan.
# Installs and builds what is missing first. Ends with ctest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh

cd build
ctest --output-on-failure -j2 "$@"
