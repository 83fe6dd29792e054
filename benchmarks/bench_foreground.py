"""Foreground-map measures: segmetrics-torch vs pysodmetrics 1.6.2 on the same images, in one run.

For each image size, the same uint8 prediction / ground-truth maps are evaluated by

* pysodmetrics' five classes (MAE, Smeasure, WeightedFmeasure, Emeasure, Fmeasure), one ``step`` per image, and
  by segmetrics-torch's ``ForegroundMeasures`` (the same five plus IoU/Dice/precision/recall) in batches;
* pysodmetrics' ``WeightedFmeasure`` alone and ``WeightedFMeasure`` alone.

It prints seconds per image for both -- elapsed (wall) and CPU time of all threads (``time.process_time``; on a shared
machine the wall time also counts other processes' load, printed at the start) -- the ratios, and the largest
difference between the two libraries' dataset values (a benchmark that got the numbers wrong would be worthless).
Run::

    python benchmarks/bench_foreground.py                 # CPU, 2 threads: 200 x 320x320 and 20 x 1024x1024
    python benchmarks/bench_foreground.py --device cuda   # GPU timings for segmetrics-torch (pysod stays on CPU)
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
import torch

from segmetrics_torch import ForegroundMeasures, WeightedFMeasure


def make_maps(n: int, size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Ellipse ground truths (5-40 % foreground, every 25th empty) and noisy, blurred, range-shifted predictions."""
    from scipy import ndimage

    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:size, :size] / size
    gts = np.zeros((n, size, size), np.uint8)
    preds = np.zeros((n, size, size), np.uint8)
    for i in range(n):
        g = np.zeros((size, size), bool)
        if i % 25 != 24:
            for _ in range(rng.integers(1, 4)):
                cy, cx = rng.uniform(0.2, 0.8, 2)
                ry, rx = rng.uniform(0.05, 0.3, 2)
                g |= ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 < 1
        smooth = ndimage.gaussian_filter(rng.normal(size=(size // 8, size // 8)), 2)
        smooth = np.kron(smooth, np.ones((8, 8)))[:size, :size]
        soft = ndimage.gaussian_filter(g.astype(float), size / 100) + 0.3 * smooth + rng.normal(0, 0.08, (size, size))
        lo, hi = rng.uniform(0, 40), rng.uniform(180, 255)
        preds[i] = np.clip(lo + (hi - lo) * soft, 0, 255).astype(np.uint8)
        gts[i] = g * 255
    return preds, gts


def time_pysod(preds, gts, which: str) -> tuple[float, float, dict]:
    import py_sod_metrics as ps

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Fmeasure's deprecation warning
        if which == "suite":
            metrics = {
                "mae": ps.MAE(),
                "sm": ps.Smeasure(),
                "wfm": ps.WeightedFmeasure(),
                "em": ps.Emeasure(),
                "fm": ps.Fmeasure(),
            }
        else:
            metrics = {"wfm": ps.WeightedFmeasure()}
        start, cpu = time.perf_counter(), time.process_time()
        for p, g in zip(preds, gts, strict=True):
            for m in metrics.values():
                m.step(p, g)
        results = {k: m.get_results() for k, m in metrics.items()}
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    flat = {"wfm": results["wfm"]["wfm"]}
    if which == "suite":
        flat.update(
            mae=results["mae"]["mae"],
            sm=results["sm"]["sm"],
            adp_em=results["em"]["em"]["adp"],
            max_em=results["em"]["em"]["curve"].max(),
            mean_fm=results["fm"]["fm"]["curve"].mean(),
            adp_fm=results["fm"]["fm"]["adp"],
        )
    return elapsed / len(preds), cpu / len(preds), flat


def time_ours(preds, gts, which: str, device: str, batch: int) -> tuple[float, float, dict]:
    p_all = torch.from_numpy(preds).to(device)
    g_all = torch.from_numpy(gts).to(device)
    metric = (ForegroundMeasures() if which == "suite" else WeightedFMeasure()).to(device)
    metric.update(p_all[:2], g_all[:2])  # warm-up: compiled kernels, CUDA context
    metric.reset()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(0, len(preds), batch):
        metric.update(p_all[i : i + batch], g_all[i : i + batch])
    out = metric.compute()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    if which == "suite":
        flat = {
            "wfm": out["weighted_f_measure"],
            "mae": out["mae"],
            "sm": out["s_measure"],
            "adp_em": out["e_measure"]["adaptive"],
            "max_em": out["e_measure"]["max"],
            "mean_fm": out["f_measure"]["mean"],
            "adp_fm": out["f_measure"]["adaptive"],
        }
    else:
        flat = {"wfm": out}
    return elapsed / len(preds), cpu / len(preds), {k: float(v) for k, v in flat.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads (the reference CI machine has 2)")
    parser.add_argument("--batch", type=int, default=50, help="images per update")
    parser.add_argument("--repeats", type=int, default=2, help="best of N runs")
    parser.add_argument("--sizes", default="320:200,1024:20", help="size:count pairs")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(
        f"torch {torch.__version__}, device {args.device}, {torch.get_num_threads()} CPU threads; load average "
        f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
    )
    if args.device.startswith("cuda"):
        print(f"GPU: {torch.cuda.get_device_name()}")
    print("wall = elapsed s/img, cpu = CPU s/img of all threads (time.process_time); best of --repeats each")
    print(
        f"{'inputs':<18}{'measures':<11}{'pysod wall':>11}{'ours wall':>11}{'x wall':>8}{'pysod cpu':>11}"
        f"{'ours cpu':>11}{'x cpu':>7}{'max |diff|':>12}"
    )
    for item in args.sizes.split(","):
        size, count = (int(v) for v in item.split(":"))
        preds, gts = make_maps(count, size, seed=size)
        for which in ("suite", "wfm"):
            theirs = [time_pysod(preds, gts, which) for _ in range(args.repeats)]
            ours = [time_ours(preds, gts, which, args.device, args.batch) for _ in range(args.repeats)]
            t_wall, t_cpu = min(r[0] for r in theirs), min(r[1] for r in theirs)
            o_wall, o_cpu = min(r[0] for r in ours), min(r[1] for r in ours)
            diff = max(abs(o[2][k] - t[2][k]) for o, t in zip(ours, theirs, strict=True) for k in t[2])
            label = "5 measures" if which == "suite" else "wF only"
            print(
                f"{count} x {size}x{size:<8}{label:<11}{t_wall:>11.5f}{o_wall:>11.5f}{t_wall / o_wall:>7.1f}x"
                f"{t_cpu:>11.5f}{o_cpu:>11.5f}{t_cpu / o_cpu:>6.1f}x{diff:>12.1e}"
            )


if __name__ == "__main__":
    main()
