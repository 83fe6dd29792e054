"""Issue-15 foreground measures: segmetrics-torch vs pysodmetrics 1.6.2 on the same images, in one run.

Measures (both libraries, every mode, the same uint8 maps of ``bench_foreground.make_maps``):

* threshold measures: PySOD ``FmeasureV2`` with its ten handlers (fmeasure, precision, recall, specificity, FPR,
  BER, IoU, Dice, accuracy, kappa), adaptive + dynamic + binary, vs ``ThresholdMeasures``;
* size-invariant threshold measures: ``SizeInvarianceFmeasureV2`` (same handlers) vs ``SizeInvariantThresholdMeasures``;
* size-invariant MAE: ``SizeInvarianceMAE`` vs ``SizeInvariantMAE``;
* human correction effort: ``HumanCorrectionEffortMeasure`` vs ``HumanCorrectionEffort`` (both use OpenCV and
  scikit-image on the CPU; ours spreads images over the threads);
* context measure: ``ContextMeasure`` vs ``ContextMeasure`` (both OpenCV ``filter2D``; ours in threads);
* multi-scale IoU: ``MSIoU(with_dynamic, with_adaptive, with_binary)`` vs ``MultiScaleIoU`` (PySOD is slow here:
  fewer images).

Prints seconds per image for both -- elapsed (wall) and CPU time of all threads (``time.process_time``), best of
``--repeats`` -- the ratios and the largest difference of the dataset values. Run::

    python benchmarks/bench_foreground_extra.py                # CPU, 2 threads, 320x320 and 1024x1024
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np
import torch
from bench_foreground import make_maps

from segmetrics_torch import (
    ContextMeasure,
    HumanCorrectionEffort,
    MultiScaleIoU,
    SizeInvariantMAE,
    SizeInvariantThresholdMeasures,
    ThresholdMeasures,
)

HANDLER_NAMES = ("fmeasure", "precision", "recall", "specificity", "fpr", "ber", "iou", "dice", "accuracy", "kappa")


def pysod_metric(which: str):
    import py_sod_metrics as ps

    classes = (
        ps.FmeasureHandler,
        ps.PrecisionHandler,
        ps.RecallHandler,
        ps.SpecificityHandler,
        ps.FPRHandler,
        ps.BERHandler,
        ps.IOUHandler,
        ps.DICEHandler,
        ps.OverallAccuracyHandler,
        ps.KappaHandler,
    )
    if which in ("threshold", "si_threshold"):
        handlers = {n: c(True, True, with_binary=True) for n, c in zip(HANDLER_NAMES, classes, strict=True)}
        return ps.FmeasureV2(handlers) if which == "threshold" else ps.SizeInvarianceFmeasureV2(handlers)
    if which == "si_mae":
        return ps.SizeInvarianceMAE()
    if which == "hce":
        return ps.HumanCorrectionEffortMeasure()
    if which == "cm":
        return ps.ContextMeasure()
    return ps.MSIoU(with_dynamic=True, with_adaptive=True, with_binary=True)


def ours_metric(which: str):
    return {
        "threshold": ThresholdMeasures,
        "si_threshold": SizeInvariantThresholdMeasures,
        "si_mae": SizeInvariantMAE,
        "hce": HumanCorrectionEffort,
        "cm": ContextMeasure,
        "msiou": lambda: MultiScaleIoU(with_binary=True),
    }[which]()


def flat_pysod(which: str, res: dict) -> dict:
    if which in ("hce", "cm"):
        return {which: res[which]}
    if which == "si_mae":
        return {"si_mae": res["si_mae"]}
    if which == "msiou":
        return {"adp": res["adaptive"], "mean": res["dynamic"].mean(), "bin": res["binary"]}
    out = {}
    for name in HANDLER_NAMES:
        out[f"{name}/adp"], out[f"{name}/bin"] = res[name]["adaptive"], res[name]["binary"]
        dyn = res[name]["dynamic"]
        out[f"{name}/mean"] = np.mean([t.mean(0) for t in dyn]) if which == "si_threshold" else dyn.mean()
    return out


def flat_ours(which: str, res) -> dict:
    if which in ("hce", "cm"):
        return {which: float(res)}
    if which == "si_mae":
        return {"si_mae": float(res)}
    if which == "msiou":
        return {"adp": float(res["adaptive"]), "mean": float(res["mean"]), "bin": float(res["binary"])}
    out = {}
    for name in HANDLER_NAMES:
        r = res[name]
        out[f"{name}/adp"], out[f"{name}/bin"], out[f"{name}/mean"] = (
            float(r[k]) for k in ("adaptive", "binary", "mean")
        )
    return out


def time_pysod(preds, gts, which: str) -> tuple[float, float, dict]:
    """(wall s/img, CPU s/img of all threads, flat dataset values)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        metric = pysod_metric(which)
        start, cpu = time.perf_counter(), time.process_time()
        for p, g in zip(preds, gts, strict=True):
            metric.step(p, g)
        res = metric.get_results()
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    return elapsed / len(preds), cpu / len(preds), flat_pysod(which, res)


def time_ours(preds, gts, which: str, batch: int) -> tuple[float, float, dict]:
    """(wall s/img, CPU s/img of all threads, flat dataset values)."""
    p_all, g_all = torch.from_numpy(preds), torch.from_numpy(gts)
    metric = ours_metric(which)
    metric.update(p_all[:2], g_all[:2])  # warm-up: compiled kernels
    metric.reset()
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(0, len(preds), batch):
        metric.update(p_all[i : i + batch], g_all[i : i + batch])
    res = metric.compute()
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    return elapsed / len(preds), cpu / len(preds), flat_ours(which, res)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2, help="torch / numba CPU threads")
    parser.add_argument("--batch", type=int, default=50, help="images per update")
    parser.add_argument("--repeats", type=int, default=2, help="best of N runs")
    parser.add_argument("--measures", default="threshold,si_threshold,si_mae,hce,cm,msiou", help="which measures")
    parser.add_argument("--sizes", default="320:100,1024:10", help="size:count pairs (MSIoU uses count / 10)")
    args = parser.parse_args()
    import numba

    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))  # first: it resets torch's count
    torch.set_num_threads(args.threads)
    import cv2

    print(
        f"torch {torch.__version__}, CPU, {torch.get_num_threads()} torch / numba threads, "
        f"OpenCV {cv2.__version__} with {cv2.getNumThreads()} threads (both libraries); load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    print("wall = elapsed s/img, cpu = CPU s/img of all threads (time.process_time); best of --repeats each")
    print(
        f"{'inputs':<18}{'measure':<14}{'pysod wall':>11}{'ours wall':>11}{'x wall':>8}{'pysod cpu':>11}"
        f"{'ours cpu':>11}{'x cpu':>7}{'max |diff|':>12}"
    )
    for item in args.sizes.split(","):
        size, count = (int(v) for v in item.split(":"))
        preds, gts = make_maps(count, size, seed=size)
        for which in args.measures.split(","):
            n = max(2, count // 10) if which == "msiou" else count
            repeats = 1 if which == "msiou" else args.repeats
            runs_p = [time_pysod(preds[:n], gts[:n], which) for _ in range(repeats)]
            runs_o = [time_ours(preds[:n], gts[:n], which, args.batch) for _ in range(repeats)]
            wall_p, wall_o = min(r[0] for r in runs_p), min(r[0] for r in runs_o)
            cpu_p, cpu_o = min(r[1] for r in runs_p), min(r[1] for r in runs_o)
            diff = max(abs(runs_o[0][2][k] - runs_p[0][2][k]) for k in runs_p[0][2])
            print(
                f"{f'{n} x {size}x{size}':<18}{which:<14}{wall_p:>11.5f}{wall_o:>11.5f}{wall_p / wall_o:>7.1f}x"
                f"{cpu_p:>11.5f}{cpu_o:>11.5f}{cpu_p / cpu_o:>6.1f}x{diff:>12.1e}",
                flush=True,
            )
        print(f"load average now {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
