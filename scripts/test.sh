#!/usr/bin/env bash
# Runs every test through ctest: lit (dialect, front end, verifier, examples),
# unit tests, and the front-end fuzzer, also under AddressSanitizer and UBSan;
# the sources' formatting, with warnings as errors in the build.
# Installs and builds what is missing first. Ends with ctest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Warnings fail the build here, and formatting fails a test (ctest's `format`).
scripts/build.sh -DCOLLC_WERROR=ON

cd build
ctest --output-on-failure -j2 "$@"
