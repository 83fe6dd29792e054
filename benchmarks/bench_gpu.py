"""GPU throughput: the foreground family and the losses on CUDA, with the CPU figures of the same run beside them.

Measured (issue 18's targets are for an H100):

* ``ForegroundMeasures`` (MAE, S, weighted F, E and F curves, IoU/Dice/precision/recall in one pass) in images/s at
  320x320 in batches of 64 and 256 and at 1024x1024 in batches of 16, for uint8, float32 and float64 maps (what
  float64 costs on the GPU); each single-measure Metric at 320x320 in batches of 256;
* the largest difference between the GPU's dataset values and the CPU's on the same maps (must be ~1e-12: the GPU
  path is the tensor path, exact like the CPU kernel);
* the losses' forward + backward on a (32, 1, 352, 352) float32 batch next to ``binary_cross_entropy_with_logits``.

The same maps go through the CPU (all the machine's threads, the compiled CPU kernel that CPU inputs take) for the
comparison column. Timing: ``torch.cuda.synchronize()`` around ``perf_counter``, warm-up excluded, the median of
``--repeats`` runs. Maps come from :func:`bench_foreground.make_maps` (64 distinct maps per size, tiled to the
batch). Run::

    python benchmarks/bench_gpu.py                 # needs a CUDA device
    python benchmarks/bench_gpu.py --quick         # fewer repeats
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_foreground import make_maps

import segmetrics_torch as st
from segmetrics_torch import losses


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _timed(fn, device: str, repeats: int) -> float:
    fn()  # warm-up: kernels loaded / compiled, caches allocated
    _sync(device)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        _sync(device)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _flat(result) -> np.ndarray:
    if isinstance(result, dict):
        return np.concatenate([_flat(v) for _, v in sorted(result.items())])
    return torch.as_tensor(result, dtype=torch.float64).flatten().cpu().numpy()


def _maps(size: int, batch: int, dtype: str) -> tuple[torch.Tensor, torch.Tensor]:
    preds, gts = make_maps(min(batch, 64), size, seed=size)
    reps = -(-batch // len(preds))
    p = torch.from_numpy(np.tile(preds, (reps, 1, 1))[:batch])
    g = torch.from_numpy(np.tile(gts, (reps, 1, 1))[:batch] > 127)
    if dtype != "uint8":
        p = p.to(getattr(torch, dtype)) / 255
    return p, g


def metric_rate(make, p, g, device: str, updates: int, repeats: int) -> tuple[float, np.ndarray]:
    """Images/s of ``updates`` updates of one batch plus one compute; also the computed values."""
    p, g = p.to(device), g.to(device)
    metric = make().to(device)
    out: dict = {}

    def run():
        metric.reset()
        for _ in range(updates):
            metric.update(p, g)
        out["v"] = metric.compute()

    seconds = _timed(run, device, repeats)
    return updates * len(p) / seconds, _flat(out["v"])


def loss_time(name: str, device: str, repeats: int) -> float:
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(32, 1, 352, 352, generator=gen).to(device).requires_grad_(True)
    target = torch.from_numpy(make_maps(32, 352, seed=1)[1] > 128)[:, None].to(device)  # ellipse GTs
    fns = {
        "BCE (with logits)": lambda: F.binary_cross_entropy_with_logits(logits, target.float()),
        "e_measure_loss": lambda: losses.e_measure_loss(torch.sigmoid(logits), target),
        "weighted_f_measure_loss": lambda: losses.weighted_f_measure_loss(torch.sigmoid(logits), target),
        "soft_iou_loss": lambda: losses.soft_iou_loss(torch.sigmoid(logits), target),
    }

    def run():
        logits.grad = None
        fns[name]().backward()

    return _timed(run, device, repeats)


def edt_table(dev: str, repeats: int) -> None:
    """The exact distance transform on the device: the Triton kernels beside the tensor-only route (both exact;
    the backend setting ``"tensor"`` selects the second), ms per batch, ns per pixel and whether their outputs are
    identical. The Triton row pass is the envelope kernel at every size (``bench_edt_row_pass.py`` times it beside the
    tiled one): issue 44 asks that 1024^2 and 2048^2 be no slower per pixel than 768^2."""
    from segmetrics_torch.ops import distance, use_backend

    print("\nDistance transform with indices (ground truths of the maps): ms per batch on the device")
    print(f"{'masks':<22}{'Triton':>10}{'ns/px':>8}{'tensor ops':>12}{'speed-up':>10}{'identical':>11}")
    per_pixel = {}
    for size, batch in ((320, 256), (768, 32), (1024, 16), (2048, 4)):
        g = _maps(size, batch, "uint8")[1].to(dev)
        results, times = {}, {}
        for route in ("1", "0"):

            def run(route=route, g=g, results=results):
                results[route] = distance.distance_transform_edt(g, backend="torch")

            with use_backend("auto" if route == "1" else "tensor"):
                times[route] = _timed(run, dev, repeats)
        same = all(torch.equal(a, b) for a, b in zip(results["1"], results["0"], strict=True))
        per_pixel[size] = times["1"] * 1e9 / (batch * size * size)
        print(
            f"{f'{batch} x {size}x{size}':<22}{times['1'] * 1e3:>10.2f}{per_pixel[size]:>8.2f}"
            f"{times['0'] * 1e3:>12.2f}{times['0'] / times['1']:>9.1f}x{'yes' if same else 'NO':>11}"
        )
    for size in (1024, 2048):
        verdict = "met" if per_pixel[size] <= per_pixel[768] else "NOT met"
        ratio = per_pixel[size] / per_pixel[768]
        print(f"  {size}^2 per pixel / 768^2 per pixel: {ratio:.2f} (target <= 1: {verdict})")


def surface_table(dev: str, skip_cpu: bool) -> None:
    """HD, HD95, ASSD and NSD (``surface_distance_measures``, MONAI's convention) of inputs on the device beside the
    same inputs on the CPU: milliseconds per call (best of 2) and the largest difference."""
    from bench_surface import blobs_2d, random_masks, spheres

    from segmetrics_torch.functional.surface import surface_distance_measures

    print("\nBoundary distances (HD, HD95, ASSD, NSD from one call, convention monai): ms per call; the EDT on the")
    print("device (distance_to_features_device); MONAI's published cuCIM figures (its PR 7008) beside them")
    print(f"{'case':<26}{'GPU ms':>10}{'CPU ms':>10}{'GPU/CPU':>9}{'max |GPU-CPU|':>15}{'cuCIM ms':>10}")
    published = {"random 50^3": 47.0, "random 100^3": 140.0, "random 250^3": 1300.0, "sphere 250^3": 45.0}
    cases = [
        ("random 50^3", random_masks(50)),
        ("sphere 100^3", spheres(100)),
        ("random 100^3", random_masks(100)),
        ("sphere 250^3", spheres(250)),
        ("random 250^3", random_masks(250)),
        ("2-D 16 x 512x512", blobs_2d(16, 512)),
    ]
    for name, (p_np, g_np) in cases:
        p, g = torch.from_numpy(p_np), torch.from_numpy(g_np)
        if p.ndim == 3 and name != "2-D 16 x 512x512":
            p, g = p[None], g[None]
        out: dict[str, np.ndarray] = {}

        def call(device: str, p=p, g=g, out=out) -> None:
            pd, gd = p.to(device), g.to(device)
            out[device] = _flat(surface_distance_measures(pd, gd, tolerance=1.0))

        gpu = min(_timed(lambda: call(dev), dev, 1), _timed(lambda: call(dev), dev, 1))
        cpu = (
            float("nan")
            if skip_cpu
            else min(_timed(lambda: call("cpu"), "cpu", 1), _timed(lambda: call("cpu"), "cpu", 1))
        )
        diff = float("nan") if skip_cpu else float(np.nanmax(np.abs(out[dev] - out["cpu"])))
        print(
            f"{name:<26}{gpu * 1e3:>10.1f}{cpu * 1e3:>10.1f}{cpu / gpu:>8.1f}x{diff:>15.1e}"
            f"{published.get(name, float('nan')):>10.0f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--quick", action="store_true", help="3 repeats instead of 5")
    parser.add_argument("--skip-cpu", action="store_true", help="GPU figures only")
    parser.add_argument("--skip-surface", action="store_true", help="no boundary-distance table")
    args = parser.parse_args()
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device is available")
    repeats = 3 if args.quick else 5
    dev = args.device
    print(
        f"torch {torch.__version__} (CUDA {torch.version.cuda}), device {dev}"
        f"{f' ({torch.cuda.get_device_name()})' if dev.startswith('cuda') else ''}, "
        f"{os.cpu_count()} CPUs, torch CPU threads {torch.get_num_threads()}"
    )
    if dev.startswith("cuda"):
        edt_table(dev, repeats)

    print("\nForegroundMeasures (all measures, one pass): images/s; GPU vs CPU of the same maps")
    print(f"{'maps':<22}{'batch':>6}{'GPU img/s':>12}{'CPU img/s':>12}{'GPU/CPU':>9}{'max |GPU-CPU|':>15}")
    cases = [
        (320, 64, "uint8", 8),
        (320, 256, "uint8", 4),
        (320, 256, "float32", 4),
        (320, 256, "float64", 4),
        (1024, 16, "uint8", 4),
        (1024, 16, "float32", 4),
        (1024, 16, "float64", 4),
    ]
    worst, suite, rates = 0.0, (float("nan"), float("nan")), {}
    for size, batch, dtype, updates in cases:
        p, g = _maps(size, batch, dtype)
        gpu_rate, gpu_vals = metric_rate(st.ForegroundMeasures, p, g, dev, updates, repeats)
        if args.skip_cpu:
            print(f"{f'{size}x{size} {dtype}':<22}{batch:>6}{gpu_rate:>12.0f}")
            continue
        cpu_rate, cpu_vals = metric_rate(st.ForegroundMeasures, p, g, "cpu", 1, 1 if size > 512 else 2)
        diff = float(np.nanmax(np.abs(gpu_vals - cpu_vals)))
        worst = max(worst, diff)
        if (size, batch, dtype) == (320, 256, "uint8"):
            suite = (gpu_rate, gpu_rate / cpu_rate)
        print(
            f"{f'{size}x{size} {dtype}':<22}{batch:>6}{gpu_rate:>12.0f}{cpu_rate:>12.0f}"
            f"{gpu_rate / cpu_rate:>8.1f}x{diff:>15.1e}"
        )

    print("\nOne measure at a time, 320x320 uint8, batch 256: images/s")
    print(f"{'Metric':<22}{'GPU img/s':>12}{'CPU img/s':>12}{'GPU/CPU':>9}{'max |GPU-CPU|':>15}")
    p, g = _maps(320, 256, "uint8")
    for name in ("MAE", "FMeasure", "EMeasure", "SMeasure", "WeightedFMeasure", "IoU", "ThresholdMeasures"):
        make = getattr(st, name)
        gpu_rate, gpu_vals = metric_rate(make, p, g, dev, 4, repeats)
        rates[name] = gpu_rate
        if args.skip_cpu:
            print(f"{name:<22}{gpu_rate:>12.0f}")
            continue
        cpu_rate, cpu_vals = metric_rate(make, p, g, "cpu", 1, 2)
        diff = float(np.nanmax(np.abs(gpu_vals - cpu_vals)))
        worst = max(worst, diff)
        print(f"{name:<22}{gpu_rate:>12.0f}{cpu_rate:>12.0f}{gpu_rate / cpu_rate:>8.1f}x{diff:>15.1e}")

    print("\nLosses, forward + backward, (32, 1, 352, 352) float32: ms per batch")
    print(f"{'loss':<26}{'GPU ms':>9}{'CPU ms':>9}{'x BCE (GPU)':>13}")
    bce_gpu = loss_time("BCE (with logits)", dev, repeats)
    ratios = {}
    for name in ("BCE (with logits)", "e_measure_loss", "weighted_f_measure_loss", "soft_iou_loss"):
        gpu = loss_time(name, dev, repeats)
        cpu = float("nan") if args.skip_cpu else loss_time(name, "cpu", 2)
        ratios[name] = gpu / bce_gpu
        print(f"{name:<26}{gpu * 1e3:>9.2f}{cpu * 1e3:>9.1f}{gpu / bce_gpu:>12.1f}x")

    if not args.skip_surface:
        surface_table(dev, args.skip_cpu)

    if dev.startswith("cuda") and not args.skip_cpu:
        suite_rate, suite_ratio = suite
        print("\nTargets (issue 'The GPU path earns its name'):")
        wf_rate, e_loss = rates["WeightedFMeasure"], ratios["e_measure_loss"]
        wf_loss = ratios["weighted_f_measure_loss"]
        checks = [
            (f"ForegroundMeasures 320x320 batch 256 >= 10,000 img/s: {suite_rate:,.0f}", suite_rate >= 10_000),
            (f"ForegroundMeasures >= 4x the same machine's CPU: {suite_ratio:.1f}x", suite_ratio >= 4),
            (f"WeightedFMeasure >= 20,000 img/s: {wf_rate:,.0f}", wf_rate >= 20_000),
            (f"weighted-F loss <= 5x BCE: {wf_loss:.1f}x", wf_loss <= 5),
            (f"E-measure loss <= 3x BCE: {e_loss:.1f}x", e_loss <= 3),
            (f"|GPU - CPU| <= 1e-12 on every value: {worst:.1e}", worst <= 1e-12),
        ]
        for text, ok in checks:
            print(f"  {'met    ' if ok else 'NOT met'} {text}")


if __name__ == "__main__":
    main()
