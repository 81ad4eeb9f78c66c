#!/usr/bin/env bash
# Regenerates the user guide's screenshots with the real application (docs/images/*.png).
# Needs a build (scripts/run-gui.sh or cmake --build --preset default) and the ONNX corpus at
# ../shared/corpus/onnx. Runs offscreen: no display needed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export QT_QPA_PLATFORM=offscreen
app=build/app/passlens
corpus=../shared/corpus/onnx
mkdir -p docs/images
$app --screenshot docs/images/overview.png
$app "$corpus/transformer_encoder_layer.onnx" --phase gpuarray_graph_optimization --diff --screenshot docs/images/graphtogpu-diff.png
$app resources/examples/join_alloc.graph.json --pipeline cleanup --phase gpuarray_backward --diff --screenshot docs/images/backward-pass.png
$app resources/examples/join_alloc.graph.json --pipeline theano --phase gpuarray_graph_optimization --diff --screenshot docs/images/alloc-special-case.png
$app "$corpus/lstm.onnx" --phase gpuarray_cut_transfers --diff --screenshot docs/images/cut-transfers.png
$app "$corpus/mlp.onnx" --execute --screenshot docs/images/timing-overlay.png
$app "$corpus/resnet18.onnx" --group-scopes --screenshot docs/images/scope-groups.png
# the teaching example (user guide section 7), cropped to the Pipeline dock and the graph when
# ImageMagick is installed
for n in 8 10 15; do
    out=docs/images/teaching-$n.png
    $app resources/examples/teaching.graph.json --pipeline cleanup --step $n --diff --screenshot $out
    if convert -version 2>/dev/null | grep -q "^Version: ImageMagick"; then convert $out -crop 1165x805+0+0 +repage $out; fi
done
echo "screenshots in docs/images/"
