#!/usr/bin/env bash
# Builds every libFuzzer target (preset `fuzz`, build-fuzz/; clang) and runs each once over its
# regression inputs (tests/fixtures/fuzz/TARGET) and its committed seeds (fuzz/seeds/TARGET),
# without fuzzing: libFuzzer given files runs each of them and exits. A crash, a sanitizer report
# or a broken message contract (fuzz/FuzzCommon.h) fails the script. CI runs it after the default
# tests (.ci/run); it also catches a fuzz build that no longer compiles (the preset is clang's,
# the default build gcc's). Dependencies must be installed already (scripts/install-deps.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# the targets, as fuzz/CMakeLists.txt lists them
read -r -a TARGETS < <(sed -n 's/^set(PASSLENS_FUZZ_TARGETS \(.*\))$/\1/p' fuzz/CMakeLists.txt)
[[ ${#TARGETS[@]} -gt 0 ]] || { echo "fuzz-regressions: no PASSLENS_FUZZ_TARGETS in fuzz/CMakeLists.txt" >&2; exit 1; }

[[ -f build-fuzz/CMakeCache.txt ]] || cmake --preset fuzz
cmake --build --preset fuzz -j2 --target fuzz_all

export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=()
for t in "${TARGETS[@]}"; do
    inputs=()
    for dir in "tests/fixtures/fuzz/$t" "fuzz/seeds/$t"; do
        [[ -d $dir ]] || continue
        while IFS= read -r -d '' f; do inputs+=("$f"); done < <(find "$dir" -type f -print0 | sort -z)
    done
    if [[ ${#inputs[@]} -eq 0 ]]; then
        echo "fuzz-regressions: fuzz_$t: no regression inputs or seeds in the repository"
        continue
    fi
    echo "fuzz-regressions: fuzz_$t over ${#inputs[@]} inputs"
    if ! "build-fuzz/fuzz/fuzz_$t" -rss_limit_mb=2048 -timeout=60 "${inputs[@]}" > "build-fuzz/fuzz-regressions-$t.log" 2>&1; then
        tail -n 40 "build-fuzz/fuzz-regressions-$t.log" >&2
        failed+=("$t")
    fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
    echo "fuzz-regressions: failed: ${failed[*]} (logs: build-fuzz/fuzz-regressions-TARGET.log)" >&2
    exit 1
fi
echo "fuzz-regressions: ${#TARGETS[@]} targets, no finding"
