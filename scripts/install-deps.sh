#!/usr/bin/env bash
# Installs the Debian 12 packages PassLens needs to build, test and run (libonnx-testdata: the ONNX
# backend conformance suite that tests/tst_conformance.cpp runs; clang-format: version 14, which
# scripts/check-format.sh runs in CI; clang: version 14, the compiler of the libFuzzer targets that
# scripts/fuzz-regressions.sh builds in CI, with libclang-rt-14-dev, its libFuzzer and sanitizer
# runtimes, which clang only recommends and CI installs without recommends). Idempotent: does nothing (no apt-get at all) when every
# package is already installed. Needs root, or sudo.
# CUDA is not installed here: nvcc, when present, comes preinstalled under /usr/local/cuda/bin.
#   bash scripts/install-deps.sh          install what is missing
#   bash scripts/install-deps.sh --list   print the package list, one per line (used by .ci/run)
set -euo pipefail

PACKAGES=(
    build-essential cmake ninja-build pkg-config clang-format clang libclang-rt-14-dev
    qt6-base-dev libgl-dev
    libgraphviz-dev
    libonnx-dev libprotobuf-dev protobuf-compiler
    nlohmann-json3-dev libcli11-dev libopenblas-dev libssl-dev zlib1g-dev
    fonts-dejavu-core
    libonnx-testdata
    xvfb xauth
)

if [[ "${1:-}" == "--list" ]]; then
    printf '%s\n' "${PACKAGES[@]}"
    exit 0
fi

missing=()
for package in "${PACKAGES[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null || true)
    if [[ "$status" != "installed" ]]; then
        missing+=("$package")
    fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
    echo "install-deps: all ${#PACKAGES[@]} packages already installed"
    exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=()
if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO=(sudo)
    else
        echo "install-deps: missing packages and not root (run as root or install sudo)" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update
"${SUDO[@]}" apt-get install -y --no-install-recommends "${PACKAGES[@]}"
