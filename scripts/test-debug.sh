#!/usr/bin/env bash
# The IR, graph JSON, ONNX and CLI suites under AddressSanitizer + UndefinedBehaviorSanitizer
# (preset `debug`, build-debug/), built with warnings as errors (PASSLENS_WERROR=ON in the
# preset). CI runs it after scripts/test.sh; dependencies must be installed already
# (scripts/install-deps.sh). Any sanitizer report fails the test that made it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

TESTS=(tst_ir tst_graphjson tst_onnx tst_cli)
cmake --preset debug
cmake --build --preset debug -j2 --target "${TESTS[@]}"
regex="^($(IFS='|'; echo "${TESTS[*]}"))\$"
# --no-tests=error: a suite that is not registered (e.g. a missing target) fails instead of
# passing silently.
ctest --preset debug --output-on-failure -j2 --no-tests=error -R "$regex"
