"""Where the device time goes: torch.profiler tables (top kernels by device time) of the slow GPU steps.

Profiles, on CUDA (or ``--device cpu`` as a dry run): ``WeightedFMeasure.update``, ``SMeasure.update`` and
``ForegroundMeasures.update`` on a 320x320 uint8 batch of 256, and the weighted-F and E-measure losses' forward +
backward on (32, 1, 352, 352) float32 (``bench_gpu``'s inputs), and ``surface_distance_measures`` (HD, HD95, ASSD,
NSD, MONAI's convention) of ``bench_surface_gpu``'s 2-D batch (16 x 512x512 blobs). Prints the wall time per call
(median of 5 after a warm-up) and the profiler's top rows by self device time; for the surface step also Python's
profile by cumulative time (its host-side work: the boundary copies, the per-image reductions). Run:
``python benchmarks/profile_gpu.py [--rows 12] [--only TEXT]``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_foreground import make_maps
from bench_gpu import _maps, _timed
from bench_surface import blobs_2d

import segmetrics_torch as st
from segmetrics_torch import losses
from segmetrics_torch.functional.surface import surface_distance_measures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--rows", type=int, default=12)
    parser.add_argument("--only", default="", help="the steps whose name contains this text")
    args = parser.parse_args()
    dev = args.device
    p, g = (t.to(dev) for t in _maps(320, 256, "uint8"))
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(32, 1, 352, 352, generator=gen).to(dev).requires_grad_(True)
    target = torch.from_numpy(make_maps(32, 352, seed=1)[1] > 128)[:, None].to(dev)
    metrics = {name: getattr(st, name)().to(dev) for name in ("WeightedFMeasure", "SMeasure", "ForegroundMeasures")}

    def loss_step(fn):
        def run():
            logits.grad = None
            fn(torch.sigmoid(logits), target).backward()

        return run

    steps = {f"{name}.update (256 x 320x320)": (lambda m=m: m.update(p, g)) for name, m in metrics.items()}
    steps["weighted_f_measure_loss fwd+bwd (32 x 352x352)"] = loss_step(losses.weighted_f_measure_loss)
    steps["e_measure_loss fwd+bwd (32 x 352x352)"] = loss_step(losses.e_measure_loss)
    sp, sg = (torch.as_tensor(x).to(dev) for x in blobs_2d(16, 512))
    surface = "surface_distance_measures (16 x 512x512, monai)"
    steps[surface] = lambda: surface_distance_measures(sp, sg, percentile=95, tolerance=1.0)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev.startswith("cuda") else [])
    sort = "self_cuda_time_total" if dev.startswith("cuda") else "self_cpu_time_total"
    for name, step in steps.items():
        if args.only not in name:
            continue
        seconds = _timed(step, dev, 5)
        with profile(activities=activities) as prof:
            step()
            if dev.startswith("cuda"):
                torch.cuda.synchronize()
        print(f"\n=== {name}: {seconds * 1e3:.2f} ms per call")
        print(prof.key_averages().table(sort_by=sort, row_limit=args.rows, max_name_column_width=60))
        if name == surface:
            python_profile = cProfile.Profile()
            python_profile.runcall(step)
            text = io.StringIO()
            pstats.Stats(python_profile, stream=text).sort_stats("cumulative").print_stats(args.rows + 8)
            print(text.getvalue())


if __name__ == "__main__":
    main()
