"""The tensor path (what CUDA runs) timed on the CPU: the proxy for the GPU figures when no GPU is at hand.

The backend setting ``"tensor"`` (``segmetrics_torch.ops.set_backend``; until issue 42 the variable
``SEGMETRICS_CPU_KERNEL=0``) sends CPU tensors through the tensor code that CUDA runs instead of the compiled numba
kernels, so this machine measures the work the device path does (not its speed on a GPU). Printed, on a batch of
``--batch`` 320x320 maps (:func:`bench_foreground.make_maps`):

* ``distance_transform_edt(backend="torch")`` per image, beside the brute-force ``O(H W^2)`` row pass it replaced
  (kept here, verbatim in effect, as the "before" column; results checked equal) and the numba kernel;
* ``ForegroundMeasures(edt_backend="torch")`` per image on the tensor path, beside the compiled CPU path;
* the weighted-F and E-measure losses, forward + backward on (16, 1, 352, 352), as multiples of
  ``binary_cross_entropy_with_logits`` in the same run (three interleaved rounds; the weighted-F loss on the tensor
  path, whose EDT is the torch one since issue 42 (the numba kernel before: the figures of benchmarks/RESULTS.md up
  to then), and on the compiled CPU kernels that CPU tensors take by default).

Targets (issue "The GPU path earns its name", on this 2-core machine): EDT <= 12 ms per image, the tensor-path
suite <= 20 ms per image, weighted-F loss <= 4x BCE. Timing: the median of ``--repeats`` runs after a warm-up.
Run::

    python benchmarks/bench_tensor_path.py [--batch 32] [--repeats 5] [--threads N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_foreground import make_maps

import segmetrics_torch as st
from segmetrics_torch import losses
from segmetrics_torch.ops import set_backend, use_backend
from segmetrics_torch.ops.distance import distance_transform_edt


def _timed(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def brute_force_edt(mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The torch EDT before the monotone row pass: the same column pass, then an ``amin`` over every column of every
    row (``O(H W^2)``), chunked to 256 MiB of scratch. The "before" column; its results are checked equal."""
    b, h, w = mask.shape
    rows = torch.arange(h, dtype=torch.int64).view(1, h, 1)
    far = 2 * h + 1
    above = torch.where(mask, rows, -1).cummax(dim=1).values
    below = torch.where(mask, rows, far).flip(1).cummin(dim=1).values.flip(1)
    d_above = torch.where(above >= 0, rows - above, far)
    d_below = below - rows
    gy = torch.where(d_below < d_above, below, above).view(b * h, w)
    gd = torch.minimum(d_above, d_below)
    big = h * h + w * w
    gd2_key = torch.where(gd < h, gd * gd, big).mul_(w).view(b * h, w)
    cols = torch.arange(w, dtype=torch.int64)
    dx2_key = (cols.view(w, 1) - cols.view(1, w)).square_().mul_(w).add_(cols.view(1, w))
    chunk = max(1, 256 * 2**20 // (8 * w * w))
    key = torch.empty(b * h, w, dtype=torch.int64)
    for start in range(0, b * h, chunk):
        torch.amin(gd2_key[start : start + chunk, None, :] + dx2_key, dim=-1, out=key[start : start + chunk])
    col, d2 = key % w, key // w
    index = gy.gather(1, col).mul_(w).add_(col)
    dist = d2.double().sqrt()
    empty = d2 >= big
    return dist.masked_fill_(empty, float("inf")).view(b, h, w), index.masked_fill_(empty, -1).view(b, h, w)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    parser.add_argument("--skip-before", action="store_true", help="leave out the brute-force 'before' column")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    set_backend("tensor")  # CPU tensors take the tensor (CUDA) path; the compiled rows below say otherwise
    n = args.batch
    preds, gts = make_maps(n, 320, seed=0)
    p = torch.from_numpy(preds).double() / 255
    g = torch.from_numpy(gts) > 128
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, batch {n} of 320x320, tensor path")

    print("\ndistance_transform_edt, ms per image:")
    sparse = torch.rand(n, 320, 320, generator=torch.Generator().manual_seed(0)) < 0.01
    masks = {"GT masks": ~g, "1% random pixels": sparse}
    for label, mask in masks.items():
        new = _timed(lambda m=mask: distance_transform_edt(m, backend="torch"), args.repeats) / n * 1e3
        numba = _timed(lambda m=mask: distance_transform_edt(m, backend="numba"), args.repeats) / n * 1e3
        line = f"  {label:18s} torch {new:7.2f}   numba {numba:6.2f}"
        if not args.skip_before:
            d0, i0 = brute_force_edt(mask)
            d1, i1 = distance_transform_edt(mask, backend="torch")
            assert torch.equal(i0, i1) and torch.equal(d0.isinf(), d1.isinf())
            before = _timed(lambda m=mask: brute_force_edt(m), max(1, args.repeats // 2)) / n * 1e3
            line += f"   before (brute force) {before:7.2f}   speed-up {before / new:5.1f}x"
        print(line + ("   [target <= 12]" if label == "GT masks" else ""))

    print("\nForegroundMeasures, ms per image (update + compute):")

    def suite(backend: str) -> None:
        metric = st.ForegroundMeasures(edt_backend=backend)
        metric.update(p, g)
        metric.compute()

    tensor = _timed(lambda: suite("torch"), args.repeats) / n * 1e3
    with use_backend("auto"):
        compiled = _timed(lambda: suite("auto"), args.repeats) / n * 1e3
    print(f"  tensor path (edt_backend='torch') {tensor:7.2f}   compiled CPU path {compiled:6.2f}   [target <= 20]")

    print("\nLosses, forward + backward on (16, 1, 352, 352) float32, ms and x BCE-with-logits:")
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(16, 1, 352, 352, generator=gen)
    target = torch.from_numpy(make_maps(16, 352, seed=1)[1] > 128).float()[:, None]  # ellipse GTs, one empty

    def run(fn) -> None:
        x = logits.clone().requires_grad_(True)
        fn(x).backward()

    def compiled(fn):  # the same call with CPU tensors on the compiled kernels (the default on a CPU)
        def call(x):
            with use_backend("auto"):  # the backward pass takes its forward pass's path whatever the setting then
                return fn(x)

        return call

    timed = {}
    for _ in range(3):  # interleaved rounds: this VM's speed drifts, the ratios to BCE of one round do not
        for name, fn in {
            "bce": lambda x: F.binary_cross_entropy_with_logits(x, target),
            "wf": lambda x: losses.weighted_f_measure_loss(x.sigmoid(), target),
            "wf_cpu": compiled(lambda x: losses.weighted_f_measure_loss(x.sigmoid(), target)),
            "em": lambda x: losses.e_measure_loss(x.sigmoid(), target),
        }.items():
            timed.setdefault(name, []).append(_timed(lambda f=fn: run(f), args.repeats) * 1e3)
    bce = statistics.median(timed["bce"])

    def ratio(name: str) -> str:
        ms = statistics.median(timed[name])
        x = statistics.median(t / b for t, b in zip(timed[name], timed["bce"], strict=True))
        return f"{ms:7.2f}  = {x:5.1f}x BCE"

    print(f"  BCE with logits {bce:7.2f}")
    print(f"  weighted_f_measure_loss, tensor path   {ratio('wf')}")
    print(f"  weighted_f_measure_loss, CPU kernels   {ratio('wf_cpu')}   [target <= 4x]")
    print(f"  e_measure_loss                          {ratio('em')}")


if __name__ == "__main__":
    main()
