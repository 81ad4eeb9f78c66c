#!/usr/bin/env bash
# Builds one libFuzzer target (preset `fuzz`, folder build-fuzz/) and runs it for SECONDS.
#
#   scripts/fuzz.sh TARGET SECONDS [LIBFUZZER_FLAG...]
#   scripts/fuzz.sh --no-build TARGET SECONDS     (the `fuzz` CTest entries: build already done)
#
# TARGET: graphjson, onnx, session, pipeline, escaper, npy, tensorproto or profile (fuzz/README.md). Installs clang with
# apt-get when it is missing (as root or through sudo). Seeds are gathered at every run from the
# repository (resources/examples, fuzz/seeds) and the ONNX corpus (PASSLENS_CORPUS_DIR, default
# ../shared/corpus/onnx beside the checkout) into build-fuzz/fuzz/seeds/TARGET; the corpus that
# libFuzzer grows is kept in build-fuzz/fuzz/corpus/TARGET, crashes go to
# build-fuzz/fuzz/artifacts/TARGET/. Exit status: 0 when the run found nothing, libFuzzer's
# status otherwise.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)

BUILD=1
if [[ ${1:-} == --no-build ]]; then BUILD=0; shift; fi
if [[ $# -lt 2 ]]; then
    echo "usage: scripts/fuzz.sh [--no-build] TARGET SECONDS [LIBFUZZER_FLAG...]" >&2
    echo "targets: graphjson onnx session pipeline escaper npy tensorproto profile" >&2
    exit 2
fi
TARGET=$1 SECONDS_TO_RUN=$2
shift 2
case $TARGET in
    graphjson|onnx|session|pipeline|escaper|npy|tensorproto|profile) ;;
    *) echo "fuzz.sh: unknown target '$TARGET' (graphjson onnx session pipeline escaper npy tensorproto profile)" >&2; exit 2 ;;
esac
if ! [[ $SECONDS_TO_RUN =~ ^[0-9]+$ ]] || [[ $SECONDS_TO_RUN -lt 1 ]]; then
    echo "fuzz.sh: SECONDS must be a positive whole number, got '$SECONDS_TO_RUN'" >&2
    exit 2
fi

B=${PASSLENS_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
if [[ $BUILD -eq 1 ]]; then
    if ! command -v clang++ >/dev/null 2>&1; then
        SUDO=()
        if [[ $(id -u) -ne 0 ]]; then SUDO=(sudo); fi
        echo "fuzz.sh: installing clang (libFuzzer)" >&2
        DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y --no-install-recommends clang libclang-rt-14-dev
    fi
    [[ -f $B/CMakeCache.txt ]] || cmake --preset fuzz
    nice cmake --build "$B" -j2 --target "fuzz_$TARGET" fuzz_seeds
fi
FUZZER=$B/fuzz/fuzz_$TARGET
[[ -x $FUZZER ]] || { echo "fuzz.sh: $FUZZER is not built" >&2; exit 1; }

CORPUS_ONNX=${PASSLENS_CORPUS_DIR:-$ROOT/../shared/corpus/onnx}
SEEDS=$B/fuzz/seeds/$TARGET
CORPUS=$B/fuzz/corpus/$TARGET
ARTIFACTS=$B/fuzz/artifacts/$TARGET
rm -rf "$SEEDS"
mkdir -p "$SEEDS" "$CORPUS" "$ARTIFACTS"

# Small corpus models only: libFuzzer mutates whole inputs, and a 1 MB seed is mostly weights.
small_models() { find "$CORPUS_ONNX" -maxdepth 1 -name '*.onnx' -size -200k 2>/dev/null | sort; }

case $TARGET in
    graphjson)
        cp resources/examples/*.graph.json "$SEEDS"/
        # the examples and the small corpus models as PassLens writes them (and its sessions)
        "$B/fuzz/fuzz_seeds" "$SEEDS/written" resources/examples/*.graph.json $(small_models) >/dev/null || true
        cp "$SEEDS"/written/*.graph.json "$SEEDS"/ 2>/dev/null || true
        rm -rf "$SEEDS/written"
        ;;
    onnx)
        cp resources/examples/*.onnx "$SEEDS"/
        for m in $(small_models); do cp "$m" "$SEEDS"/; done
        ;;
    session)
        "$B/fuzz/fuzz_seeds" "$SEEDS" resources/examples/*.graph.json $(small_models)
        rm -f "$SEEDS"/*.graph.json
        ;;
    pipeline|escaper|npy|profile)
        cp fuzz/seeds/"$TARGET"/* "$SEEDS"/
        ;;
    tensorproto)
        # first byte: the type the file is read as (fuzz_tensorproto.cpp); 0 = float32 tensor,
        # 3 = sequence of int64, 4 = optional float32, 5 = optional sequence of int32
        TESTDATA=${PASSLENS_ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}
        seed() { { printf "\\x$1"; cat "$2"; } > "$SEEDS/$3.pb"; }
        for f in $(find "$CORPUS_ONNX"/testdata -name 'input_*.pb' -size -64k 2>/dev/null | sort); do
            seed 00 "$f" "corpus-$(basename "$(dirname "$(dirname "$f")")")-$(basename "$f" .pb)"
        done
        for t in sequence_insert_at_back optional_get_element optional_get_element_sequence; do
            for f in "$TESTDATA"/node/test_$t/test_data_set_0/*.pb; do
                [[ -f $f ]] || continue
                case $t in sequence_*) k=03 ;; optional_get_element) k=04 ;; *) k=05 ;; esac
                seed $k "$f" "$t-$(basename "$f" .pb)"
            done
        done
        ;;
esac
# Regression inputs of earlier findings run first (tests/fixtures/fuzz/TARGET).
if [[ -d tests/fixtures/fuzz/$TARGET ]]; then cp tests/fixtures/fuzz/"$TARGET"/* "$SEEDS"/; fi

echo "fuzz.sh: fuzz_$TARGET for ${SECONDS_TO_RUN}s, $(ls "$SEEDS" | wc -l) seeds, corpus $CORPUS" >&2
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
exec nice "$FUZZER" -max_total_time="$SECONDS_TO_RUN" -rss_limit_mb=2048 -timeout=30 \
    -print_final_stats=1 -artifact_prefix="$ARTIFACTS/" "$@" "$CORPUS" "$SEEDS"
