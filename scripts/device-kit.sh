#!/usr/bin/env bash
# Packs what scripts/device-check.sh needs on a machine with a CUDA GPU that has the driver, the
# CUDA toolkit and PyTorch but none of PassLens's libraries (the `device` tool's machine):
#
#   bash scripts/device-kit.sh [BUILD_DIR]        # default: build/ (configured with CUDA)
#
# Writes out/device-kit/ (ignored by git), for two device calls that each carry at most 64 MiB:
#   core.tar.xz  passlens-cli, bench_exec, bench_transfer, bench/torch_latency.py and every shared
#                library they load except the CUDA driver's (lib/), plus Debian 12's glibc and
#                its loader (glibc/: used only where the device's glibc is older)
#   tests.tar.xz tst_exec_gpu, tst_kernels and the libraries they add (Qt Core / Test, ICU)
#   models-a/    mlp, transformer_encoder_layer, squeezenet1_1, mobilenet_v2 with their test data
#   models-b/    resnet18 with its test data (44.6 MiB)
# Call a carries core + tests + models-a, call b core + models-b.
# See docs/BENCHMARKS.md, "Execution on a CUDA GPU", for the two device calls.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

BUILD=${1:-build}
CORPUS=${PASSLENS_CORPUS_DIR:-../shared/corpus/onnx}
KIT=out/device-kit
CORE=("$BUILD/app/passlens-cli" "$BUILD/bench/bench_exec" "$BUILD/bench/bench_transfer")
TESTS=("$BUILD/tests/tst_exec_gpu" "$BUILD/tests/tst_kernels")
BINS=("${CORE[@]}" "${TESTS[@]}")

for b in "${BINS[@]}"; do
    [ -x "$b" ] || { echo "device-kit: $b is missing; build first (cmake --build $BUILD -j2)" >&2; exit 1; }
done
# the CUDA backend must be in: its kernels show up as a symbol of passlens-cli
if ! nm -C "$BUILD/app/passlens-cli" 2>/dev/null | grep "passlens::cuda::" >/dev/null; then
    echo "device-kit: $BUILD was configured without CUDA (no passlens::cuda symbols in passlens-cli)" >&2
    exit 1
fi
[ -f "$CORPUS/resnet18.onnx" ] || { echo "device-kit: corpus not found at $CORPUS (set PASSLENS_CORPUS_DIR)" >&2; exit 1; }

rm -rf "$KIT"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$KIT"
libs() { # the libraries binaries load, except the driver (libcuda comes with the GPU's driver)
    for b in "$@"; do ldd "$b"; done | awk '/=> \// {print $3} $1 ~ /^\/.*ld-linux/ {print $1}' | sort -u | grep -v -E '/libcuda\.so'
}
# glibc (libc, libm, the loader, ...) goes to glibc/: used only when the device's own glibc is too
# old for the binaries, through the kit's loader, never by the device's own programs
is_glibc() { case "$(basename "$1")" in ld-linux*|libc.so*|libm.so*|libmvec.so*|libpthread.so*|libdl.so*|librt.so*|libresolv.so*|libutil.so*) return 0 ;; *) return 1 ;; esac; }
mkdir -p "$stage/core/bin" "$stage/core/lib" "$stage/core/glibc" "$stage/tests/bin" "$stage/tests/lib"
cp "${CORE[@]}" bench/torch_latency.py "$stage/core/bin/"
libs "${BINS[@]}" | while read -r lib; do if is_glibc "$lib"; then cp -L "$lib" "$stage/core/glibc/"; fi; done
libs "${CORE[@]}" | while read -r lib; do is_glibc "$lib" || cp -L "$lib" "$stage/core/lib/"; done
cp "${TESTS[@]}" "$stage/tests/bin/"
libs "${TESTS[@]}" | while read -r lib; do
    is_glibc "$lib" || [ -e "$stage/core/lib/$(basename "$lib")" ] || cp -L "$lib" "$stage/tests/lib/"
done
tar -C "$stage/core" -cJf "$KIT/core.tar.xz" bin lib glibc
tar -C "$stage/tests" -cJf "$KIT/tests.tar.xz" bin lib

copy_model() { # copy_model DEST MODEL
    mkdir -p "$1/testdata/$2"
    cp "$CORPUS/$2.onnx" "$1/"
    cp -r "$CORPUS/testdata/$2/test_data_set_0" "$1/testdata/$2/"
}
for m in mlp transformer_encoder_layer squeezenet1_1 mobilenet_v2; do copy_model "$KIT/models-a" "$m"; done
copy_model "$KIT/models-b" resnet18

core=$(du -m "$KIT/core.tar.xz" | cut -f1)
tests=$(du -m "$KIT/tests.tar.xz" | cut -f1)
a=$(du -sm "$KIT/models-a" | cut -f1)
b=$(du -sm "$KIT/models-b" | cut -f1)
echo "device-kit: core.tar.xz ${core} MiB ($(ls "$stage/core/lib" | wc -l) libraries + $(ls "$stage/core/glibc" | wc -l) of glibc), tests.tar.xz ${tests} MiB, models-a ${a} MiB, models-b ${b} MiB"
echo "device-kit: call a carries core + tests + models-a ($((core + tests + a)) MiB), call b core + models-b ($((core + b)) MiB)"
if [ $((core + tests + a)) -gt 63 ] || [ $((core + b)) -gt 63 ]; then
    echo "device-kit: a call would carry more than 64 MiB" >&2
    exit 1
fi
