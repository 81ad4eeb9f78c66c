#!/usr/bin/env bash
# The GPU checks of the Execution issue, in one run on a machine with a CUDA GPU (the `device`
# tool's machine), from the repository root, with the kit of scripts/device-kit.sh:
#
#   bash scripts/device-check.sh a     # carry core.tar.xz, tests.tar.xz, models-a: mlp,
#                                      #   transformer_encoder_layer, squeezenet1_1, mobilenet_v2
#   bash scripts/device-check.sh b     # carry core.tar.xz, models-b: resnet18 (no Qt tests)
#
# Writes into $OUT (default /tmp/passlens-device-out; every name but the per-model ones carries
# the part, so a and b may share it): device-P.txt (GPU, driver, CUDA and torch versions),
# gpu-tests-exec-a.txt / gpu-tests-kernels-a.txt (tst_exec_gpu cudaMatchesCpu + cudaKernels,
# tst_kernels, with PASSLENS_TEST_GPU=1; part a only), run-MODEL.json (passlens-cli run --device
# cuda --check against the reference outputs, tolerance 1e-3), bench-cuda-b1-P.txt /
# bench-cuda-b64-P.txt (bench_exec --device cuda), bench-cpu-P.txt, torch.txt (PyTorch eager,
# same GPU, batch 1 and 64; part a), transfer.txt (bench_transfer: executor copies vs pinned
# cudaMemcpy; part a) and summary-P.txt (every step's exit status and time). Every step has its
# own time limit, all of them together within one device call (part a ~400 s, part b ~160 s); a
# failing step is recorded (its file says why) and the next one runs. The script exits 1 when a
# step failed, and when nvidia-smi sees a GPU but the CUDA runtime found no device or a GPU test
# skipped (a driver older than the kit's CUDA makes every GPU test skip): the summary's last line
# says which.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

part=${1:-a}
OUT=${OUT:-/tmp/passlens-device-out}
KIT=/tmp/passlens-kit
MODELS=$PWD/out/device-kit/models-$part
mkdir -p "$OUT"
summary=$OUT/summary-$part.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
failed=0

rm -rf "$KIT" && mkdir -p "$KIT"
kits=(core)
[ "$part" = a ] && kits+=(tests) # part b runs no Qt tests (its call carries no tests.tar.xz)
for k in "${kits[@]}"; do
    f=out/device-kit/$k.tar.xz
    [ -f "$f" ] || { note "kit: $f is missing (carry it; scripts/device-kit.sh makes it)"; exit 1; }
    tar -xJf "$f" -C "$KIT" || { note "kit: cannot unpack $f"; exit 1; }
done
[ -d "$MODELS" ] || { note "models: $MODELS is missing (carry out/device-kit/models-$part)"; exit 1; }
models=$(cd "$MODELS" && ls *.onnx | sed 's/\.onnx$//' | tr '\n' ' ')

# Library path of the kit's binaries only (never exported: the device's own programs - timeout,
# nvidia-smi, python3 - keep their libraries): the kit's libraries, then cuBLAS (opened with dlopen
# by the CUDA backend) from the CUDA toolkit, else from PyTorch's wheels.
kitpath=$KIT/lib
for d in /usr/local/cuda/lib64 /usr/local/cuda-*/lib64; do [ -d "$d" ] && kitpath=$kitpath:$d; done
torchlibs=$(python3 - 2>/dev/null <<'EOF'
import glob, os
try:
    import nvidia
    print(":".join(sorted(glob.glob(os.path.join(list(nvidia.__path__)[0], "*", "lib")))))
except Exception:
    pass
EOF
)
[ -n "$torchlibs" ] && kitpath=$kitpath:$torchlibs
# the binaries need Debian 12's glibc or newer; on an older system they run under the kit's
# loader with the kit's glibc
launch=(env "LD_LIBRARY_PATH=$kitpath")
if ! "${launch[@]}" "$KIT/bin/passlens-cli" --help >/dev/null 2>&1; then
    launch=("$KIT/glibc/ld-linux-x86-64.so.2" --library-path "$KIT/glibc:$kitpath")
    "${launch[@]}" "$KIT/bin/passlens-cli" --help >/dev/null 2>&1 || { note "kit: passlens-cli does not start here, not even under the kit's loader"; exit 1; }
    note "kit: started under the kit's own glibc loader"
fi
step() { # step NAME SECONDS OUTFILE COMMAND... (a COMMAND named like a kit binary runs the kit's)
    local name=$1 secs=$2 file=$3; shift 3
    local t0=$SECONDS cmd=("$@")
    [ -x "$KIT/bin/$1" ] && [[ $1 != *.py ]] && cmd=("${launch[@]}" "$KIT/bin/$1" "${@:2}")
    timeout "$secs" "${cmd[@]}" >"$file" 2>&1
    local rc=$?
    note "$name: rc $rc, $((SECONDS - t0)) s (limit $secs s) -> $(basename "$file")"
    [ $rc -eq 0 ] || failed=$((failed + 1))
    return $rc
}

{
    echo "date: $(date -u)"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
    nvidia-smi -q 2>/dev/null | grep -m1 "CUDA Version"
    python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" 2>&1
    echo "models: $models"
    # cuBLAS is opened with dlopen (ldd of the kit cannot show it): the first the search finds
    blas=
    for d in ${kitpath//:/ }; do
        for n in libcublas.so.13 libcublas.so.12 libcublas.so; do [ -z "$blas" ] && [ -e "$d/$n" ] && blas=$(readlink -f "$d/$n"); done
    done
    echo "libcublas: ${blas:-none in $kitpath, the ld.so cache decides}"
} >"$OUT/device-$part.txt"
note "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"

# the GPU tests synchronise after every step, so a kernel fault names its node
export PASSLENS_TEST_GPU=1 PASSLENS_CUDA_SYNC=1 PASSLENS_TEST_CORPUS=$MODELS PASSLENS_GPU_MODELS=${models// /,}
PASSLENS_GPU_MODELS=${PASSLENS_GPU_MODELS%,}
# the functions of tst_exec_gpu (tests/CMakeLists.txt, PASSLENS_EXEC_GPU_TESTS)
gpu_tests=(cudaMatchesCpu cudaKernels cudaKernelsEach cudaReductions cudaGemmShapes cudaElemwiseParameters cudaValidation
    cudaProfileAfterFailure)
if [ -x "$KIT/bin/tst_exec_gpu" ]; then
    step "gpu tests (tst_exec_gpu ${gpu_tests[*]})" 90 "$OUT/gpu-tests-exec-$part.txt" tst_exec_gpu "${gpu_tests[@]}"
    step "gpu tests (tst_kernels)" 20 "$OUT/gpu-tests-kernels-$part.txt" tst_kernels
fi
unset PASSLENS_CUDA_SYNC # the runs and benchmarks measure the normal path

for m in $models; do
    step "run $m --device cuda --check" 20 "$OUT/run-$m.json" \
        passlens-cli run "$MODELS/$m.onnx" --device cuda --inputs "$MODELS/testdata/$m/test_data_set_0" --check --tolerance 1e-3 --repeat 20 --json
done
step "bench_exec cuda batch 1" 45 "$OUT/bench-cuda-b1-$part.txt" bench_exec "$MODELS" --device cuda --phase final --batch 1 --models "${models// /,}"
step "bench_exec cuda batch 64" 60 "$OUT/bench-cuda-b64-$part.txt" bench_exec "$MODELS" --device cuda --phase final --batch 64 --models "${models// /,}"
step "bench_exec cpu (16 threads, for scale)" 30 "$OUT/bench-cpu-$part.txt" bench_exec "$MODELS" --phase final --threads 16 --models "${models// /,}"
if [ "$part" = a ]; then
    step "PyTorch eager (all five models)" 60 "$OUT/torch.txt" python3 "$KIT/bin/torch_latency.py" --batch 1,64
    step "bench_transfer" 15 "$OUT/transfer.txt" bench_transfer
fi

# A GPU the driver shows must be used: no skipped GPU test, no "no CUDA device" from the runtime.
if nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    for f in "$OUT/gpu-tests-exec-$part.txt" "$OUT/gpu-tests-kernels-$part.txt" "$OUT"/run-*.json; do
        [ -f "$f" ] || continue
        if grep -qE '^SKIP |no CUDA device' "$f"; then
            note "FAIL: nvidia-smi sees a GPU but $(basename "$f") skipped or found no CUDA device: $(grep -m1 -E '^SKIP |no CUDA device' "$f")"
            failed=$((failed + 1))
        fi
    done
fi
if [ $failed -gt 0 ]; then
    note "FAILED: $failed problem(s); done: $OUT"
    exit 1
fi
note "done: $OUT"
