#!/usr/bin/env bash
# Fresh Debian 12 machine to test results: install dependencies, configure with the default
# preset, build with 2 jobs, run every CTest suite.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh
cmake --preset default
cmake --build --preset default -j2
QT_QPA_PLATFORM=offscreen ctest --preset default --output-on-failure -j2
