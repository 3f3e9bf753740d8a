#!/usr/bin/env bash
# Fails, naming each file and line, where a C, C++ or CUDA source differs
# from .clang-format. Fix with: scripts/check-format.sh --fix
set -euo pipefail
cd "$(dirname "$0")/.."
: "${CLANG_FORMAT:=clang-format-22}"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu' '*.c')
else
  mapfile -t files < <(find dialect lib runtime tools bench test examples \
    -name '*.cpp' -o -name '*.h' -o -name '*.cu' -o -name '*.c')
fi
if [ "${1:-}" = --fix ]; then
  exec "$CLANG_FORMAT" -i "${files[@]}"
fi
"$CLANG_FORMAT" --dry-run --Werror "${files[@]}"
echo "${#files[@]} files formatted as .clang-format says"
