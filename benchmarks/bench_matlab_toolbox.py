"""The MATLAB-toolbox protocol (issue 49): ours vs the toolbox's own per-image, per-threshold loop, same maps, one run.

The peer is :mod:`segmetrics_torch.reference.foreground_toolbox`, a numpy port of the toolbox's ``main.m`` loop (for
each image, for each of the 256 thresholds: binarise, count, evaluate the E-measure pixel by pixel), i.e. what the
MATLAB code does, in numpy. Ours is :class:`~segmetrics_torch.metrics.matlab_toolbox.MatlabToolboxMeasures` (batched
histogram of the first passed threshold, closed-form curves). Both on the uint8 maps of ``bench_foreground.make_maps``,
both without the weighted F by default (``--weighted-f`` adds it to both). Prints seconds per image (wall and CPU of
all threads, best of ``--repeats``), the ratio and the largest difference of the dataset values. Run::

    python benchmarks/bench_matlab_toolbox.py                       # CPU, 320x320, 2 threads
    python benchmarks/bench_matlab_toolbox.py --size 1024 --images 8 --reference-images 2
    python benchmarks/bench_matlab_toolbox.py --device cuda         # ours on the GPU (the reference stays numpy)
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from bench_foreground import make_maps

from segmetrics_torch.metrics.matlab_toolbox import MatlabToolboxMeasures
from segmetrics_torch.reference import foreground_toolbox as ref


def time_reference(preds: np.ndarray, gts: np.ndarray, protocol: str, weighted_f: bool) -> tuple[float, float, dict]:
    start, cpu = time.perf_counter(), time.process_time()
    out = ref.evaluate_dataset(zip(preds, gts, strict=True), protocol, weighted_f=weighted_f)
    return time.perf_counter() - start, time.process_time() - cpu, out


def time_ours(
    preds: np.ndarray, gts: np.ndarray, protocol: str, weighted_f: bool, device: str, batch: int
) -> tuple[float, float, dict]:
    metric = MatlabToolboxMeasures(protocol=protocol, weighted_f=weighted_f).to(device)
    p_all = torch.from_numpy(preds).to(device)
    g_all = torch.from_numpy(gts).to(device)
    if device == "cuda":
        torch.cuda.synchronize()
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(0, len(preds), batch):
        metric.update(p_all[i : i + batch], g_all[i : i + batch])
    res = metric.compute()
    if device == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start, time.process_time() - cpu, res


def largest_difference(ours: dict, reference: dict) -> float:
    worst = 0.0
    for family in ("dice", "iou", "sensitivity", "specificity", "precision", "f", "e"):
        name = {"f": "f_measure", "e": "e_measure"}.get(family, family)
        for part in ("mean", "max", "adaptive"):
            worst = max(worst, abs(float(ours[name][part]) - reference[f"{part}_{family}"]))
    for key in ("s_measure", "mae", "weighted_f_measure"):
        if key in reference:
            worst = max(worst, abs(float(ours[key]) - reference[key]))
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=320)
    parser.add_argument("--images", type=int, default=100, help="images for ours")
    parser.add_argument("--reference-images", type=int, default=10, help="the first N of them for the numpy loop")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--protocol", default="matlab-toolbox")
    parser.add_argument("--weighted-f", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    preds, gts = make_maps(args.images, args.size, seed=0)
    n_ref = min(args.reference_images, args.images)
    # warm-up (imports, numba compilation of the distance transform)
    time_ours(preds[:2], gts[:2], args.protocol, args.weighted_f, args.device, args.batch)

    best_ref = best_ours = (float("inf"), float("inf"))
    for _ in range(args.repeats):
        wall, cpu, reference = time_reference(preds[:n_ref], gts[:n_ref], args.protocol, args.weighted_f)
        best_ref = min(best_ref, (wall / n_ref, cpu / n_ref))
        wall, cpu, _ = time_ours(preds, gts, args.protocol, args.weighted_f, args.device, args.batch)
        best_ours = min(best_ours, (wall / args.images, cpu / args.images))
    _, _, same_images = time_ours(preds[:n_ref], gts[:n_ref], args.protocol, args.weighted_f, args.device, args.batch)

    print(
        f"{args.size}x{args.size}, protocol {args.protocol}, weighted F {'on' if args.weighted_f else 'off'}, "
        f"{args.threads} threads, device {args.device}; ours on {args.images} images (batches of {args.batch}), the "
        f"numpy toolbox loop on the first {n_ref}; seconds per image, best of {args.repeats}"
    )
    print(f"  numpy toolbox loop: wall {best_ref[0]:.4f}  cpu {best_ref[1]:.4f}")
    print(f"  ours              : wall {best_ours[0]:.4f}  cpu {best_ours[1]:.4f}")
    print(f"  ratio (loop / ours): wall {best_ref[0] / best_ours[0]:.1f}x  cpu {best_ref[1] / best_ours[1]:.1f}x")
    worst = largest_difference(same_images, reference)
    print(f"  largest difference of the dataset values on the same {n_ref} images: {worst:.2e}")


if __name__ == "__main__":
    main()
