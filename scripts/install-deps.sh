#!/usr/bin/env bash
# Installs what collc needs on Debian 12, from Debian's packages only.
# Does nothing when everything is already there.
set -euo pipefail

packages=(
  cmake ninja-build g++ ccache python3 libgtest-dev
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools clang-format-22
  antlr4 libantlr4-runtime-dev
  openmpi-bin libopenmpi-dev
  libibverbs-dev python3-matplotlib help2man
)

missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "Installing: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
