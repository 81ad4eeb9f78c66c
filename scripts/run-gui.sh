#!/usr/bin/env bash
# Install dependencies, build, and open the bundled example in the PassLens GUI.
# Extra arguments go to passlens (e.g. a FILE, or --screenshot out.png).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh
cmake --preset default
cmake --build --preset default -j2

args=("$@")
if [[ ${#args[@]} -eq 0 ]]; then
    args=(resources/examples/transformer_encoder_layer.onnx)
fi
if [[ -n "${DISPLAY:-}" || -n "${WAYLAND_DISPLAY:-}" || "${QT_QPA_PLATFORM:-}" == offscreen ]]; then
    exec build/app/passlens "${args[@]}"
else
    echo "run-gui: no DISPLAY, running under xvfb-run (use --screenshot OUT.png to see it)"
    exec xvfb-run -a -s "-screen 0 1280x1024x24" build/app/passlens "${args[@]}"
fi
