#!/usr/bin/env bash
# The IR, graph JSON, ONNX and CLI suites and the emulated-GPU suites under AddressSanitizer +
# UndefinedBehaviorSanitizer (preset `debug`, build-debug/), built with warnings as errors
# (PASSLENS_WERROR=ON in the preset). CI runs it after scripts/test.sh; dependencies must be
# installed already (scripts/install-deps.sh). Any sanitizer report fails the test that made it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# `scripts/test-debug.sh --all`: every suite under the sanitizers (by hand: building all of them
# is too long for CI; docs/RELIABILITY.md "Sanitizers").
if [[ ${1:-} == --all ]]; then
    cmake --preset debug && cmake --build --preset debug -j2
    exec ctest --preset debug --output-on-failure -j2 --no-tests=error
fi

# tst_kernels_emu, tst_cudaemu and tst_exec_emu: the CUDA backend on the emulated device
# (kernels/README.md "Emulated device"; ~40 s here). tst_exec_emu runs every function, but
# cudaMatchesCpu only on the five small corpus models: the three CNNs (resnet18, mobilenet_v2,
# squeezenet1_1) and ch_PP-OCRv4_det_infer take about 3.5 minutes more under the sanitizers, and
# their kernels are checked one by one by cudaKernels / cudaKernelsEach; `ctest -L gpu-emulated` in
# scripts/test.sh runs all of them without the sanitizers.
TESTS=(tst_ir tst_graphjson tst_onnx tst_cli tst_kernels_emu tst_cudaemu tst_exec_emu)
export PASSLENS_GPU_MODELS=lstm,mlp,shape_ops,silero_vad_legacy,transformer_encoder_layer
cmake --preset debug
cmake --build --preset debug -j2 --target "${TESTS[@]}"
regex="^($(IFS='|'; echo "${TESTS[*]}"))\$"
# --no-tests=error: a suite that is not registered (e.g. a missing target) fails instead of
# passing silently.
ctest --preset debug --output-on-failure -j2 --no-tests=error -R "$regex"
