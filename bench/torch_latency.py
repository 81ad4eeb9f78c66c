#!/usr/bin/env python3
"""PyTorch eager latency of the corpus models on one CUDA GPU: the reference of the issue's GPU
target (PassLens at most 1.2x PyTorch's time, same GPU, batch 1 and 64).

    python3 bench/torch_latency.py [--batch 1,64] [--runs 30] [--warmup 5] [--device cuda]

The models are rebuilt in PyTorch as the corpus MANIFEST describes them (torchvision resnet18,
mobilenet_v2, squeezenet1_1 with weights=None; the MLP 784-256-256-10; nn.TransformerEncoderLayer
d_model 64, 4 heads, feed-forward 128, batch_first), in eval mode under torch.inference_mode, fp32,
TF32 off (PassLens computes in plain fp32). Random weights: latency does not depend on them.
Batch: dim 0 of the corpus input shape replaced (as bench_exec --batch does). One line per model
and batch: median and min of the runs, each run timed with torch.cuda.synchronize around it.
A model whose torchvision definition is missing is reported as such, not skipped silently.
"""
import argparse
import statistics
import sys
import time

import torch


def models():
    out = {}
    try:
        import torchvision.models as tvm
        out["resnet18"] = (lambda: tvm.resnet18(weights=None), [1, 3, 224, 224])
        out["mobilenet_v2"] = (lambda: tvm.mobilenet_v2(weights=None), [1, 3, 224, 224])
        out["squeezenet1_1"] = (lambda: tvm.squeezenet1_1(weights=None), [1, 3, 224, 224])
    except Exception as e:  # torchvision absent or too old
        for m in ("resnet18", "mobilenet_v2", "squeezenet1_1"):
            out[m] = (None, "torchvision unavailable: %s" % e)
    out["mlp"] = (lambda: torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256), torch.nn.ReLU(),
                                              torch.nn.Linear(256, 10), torch.nn.ReLU()), [64, 784])
    out["transformer_encoder_layer"] = (lambda: torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0,
                                                                                 batch_first=True), [2, 16, 64])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", default="1,64")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--device", default="cuda")
    a = ap.parse_args()
    if a.device == "cuda" and not torch.cuda.is_available():
        print("torch_latency: no CUDA device visible to PyTorch %s" % torch.__version__)
        return 3
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device(a.device)
    name = torch.cuda.get_device_name(0) if a.device == "cuda" else "cpu"
    print("torch_latency: torch %s, device %s, median of %d runs after %d warm-ups" % (torch.__version__, name, a.runs, a.warmup))
    sync = torch.cuda.synchronize if a.device == "cuda" else (lambda: None)
    for m, (make, shape) in models().items():
        if make is None:
            print("%s\terror\t%s" % (m, shape))
            continue
        net = make().eval().to(dev)
        for b in [int(x) for x in a.batch.split(",")]:
            s = list(shape)
            s[0] = b
            x = torch.randn(*s, device=dev)
            with torch.inference_mode():
                for _ in range(a.warmup):
                    net(x)
                sync()
                t = []
                for _ in range(a.runs):
                    t0 = time.perf_counter()
                    net(x)
                    sync()
                    t.append((time.perf_counter() - t0) * 1e3)
            print("%s\ttorch\tbatch=%d\tmedian_ms=%.3f\tmin_ms=%.3f\tdevice=%s" % (m, b, statistics.median(t), min(t), a.device))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
