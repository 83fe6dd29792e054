"""Boundary-distance measures: HD + HD95 + ASSD + NSD, ours beside MONAI, MedPy and DeepMind, same inputs, one run.

Cases: MONAI PR 7008's random masks (50^3, 100^3; 250^3 with --large) and a sphere (100^3; 250^3 with --large), and a
2-D batch of 512x512 blob masks. Per case and library, the best of ``--repeat`` wall times of:

* ours: ``surface_distance_measures`` (all four from one pass of distance transforms), convention "monai" (compared
  with MONAI and MedPy) and "deepmind" (compared with DeepMind);
* MONAI 1.6: ``compute_hausdorff_distance`` (max and percentile=95), ``compute_average_surface_distance(symmetric)``,
  ``compute_surface_dice`` (four calls: its API computes the distances per call);
* MedPy 0.5: ``hd``, ``hd95``, ``assd`` (no NSD);
* DeepMind surface-distance 0.1: ``compute_surface_distances`` once, then its robust HD (100, 95), average distance
  and surface Dice.

Run: ``python benchmarks/bench_surface.py [--large] [--repeat 3]``; CPU, torch threads as set by the environment.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable

import numpy as np
import torch
from scipy import ndimage

from segmetrics_torch.functional.surface import surface_distance_measures


def random_masks(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.random((n, n, n)) > 0.5, rng.random((n, n, n)) > 0.5


def spheres(n: int) -> tuple[np.ndarray, np.ndarray]:
    z, y, x = np.ogrid[:n, :n, :n]
    c = n / 2
    g = (z - c) ** 2 + (y - c) ** 2 + (x - c) ** 2 < (0.3 * n) ** 2
    p = (z - c - 0.04 * n) ** 2 + (y - c) ** 2 + (x - c + 0.02 * n) ** 2 < (0.28 * n) ** 2
    return p, g


def blobs_2d(batch: int, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((batch, n, n))
    b = a + 0.5 * rng.standard_normal((batch, n, n))
    sigma = (0, 8, 8)
    return ndimage.gaussian_filter(b, sigma) > 0.02, ndimage.gaussian_filter(a, sigma) > 0.02


def best(fn: Callable[[], object], repeat: int) -> float:
    if repeat > 1:
        fn()  # one untimed call: first-use costs (allocator growth, lazy imports) are not what the table compares
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", action="store_true", help="add the 250^3 cases (minutes in the references)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", default="", help="run the cases whose name contains this text (e.g. 'sphere')")
    args = parser.parse_args()
    warnings.simplefilter("ignore")

    cases: list[tuple[str, Callable[[], tuple[np.ndarray, np.ndarray]]]] = [
        ("random 50^3", lambda: random_masks(50)),
        ("random 100^3", lambda: random_masks(100)),
        ("sphere 100^3", lambda: spheres(100)),
        ("2-D 4 x 512^2 blobs", lambda: blobs_2d(4, 512)),
    ]
    if args.large:
        cases += [("random 250^3", lambda: random_masks(250)), ("sphere 250^3", lambda: spheres(250))]

    cases = [case for case in cases if args.only in case[0]]
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}; best of {args.repeat}; seconds")
    print(
        f"{'case':<22}{'ours(monai)':>12}{'MONAI':>9}{'x':>7}{'MedPy':>9}{'x':>7}"
        f"{'ours(dm)':>10}{'DeepMind':>10}{'x':>7}"
    )
    for name, make in cases:
        t = run_case(*make(), args.repeat, batch_2d=name.startswith("2-D"))
        print(
            f"{name:<22}{t['ours']:>12.3f}{t['monai']:>9.3f}{t['monai'] / t['ours']:>7.1f}{t['medpy']:>9.3f}"
            f"{t['medpy'] / t['ours']:>7.1f}{t['ours_dm']:>10.3f}{t['deepmind']:>10.3f}"
            f"{t['deepmind'] / t['ours_dm']:>7.1f}",
            flush=True,
        )


def run_case(p: np.ndarray, g: np.ndarray, repeat: int, batch_2d: bool = False) -> dict[str, float]:
    """Seconds per library on one case: a 3-D pair (D, H, W), or with ``batch_2d`` a batch (B, H, W) of 2-D images
    scored image by image (MedPy, DeepMind) or as one batch (ours, MONAI's (B, 1, H, W)). Both are 3-D arrays, so
    the caller says which: until 2026-11-28 the 2-D case was scored as one 4 x 512 x 512 volume by every library."""
    import surface_distance as deepmind
    from medpy.metric import binary as medpy
    from monai.metrics import compute_average_surface_distance, compute_hausdorff_distance, compute_surface_dice

    images = list(zip(p, g, strict=True)) if batch_2d else [(p, g)]
    P, G = torch.from_numpy(p), torch.from_numpy(g)
    if not batch_2d:
        P, G = P[None], G[None]
    yp, yg = P.float().unsqueeze(1), G.float().unsqueeze(1)

    def ours() -> None:
        surface_distance_measures(P, G, percentile=95, tolerance=1.0)

    def ours_dm() -> None:
        surface_distance_measures(P, G, percentile=95, tolerance=1.0, convention="deepmind")

    def monai() -> None:
        compute_hausdorff_distance(yp, yg, include_background=True)
        compute_hausdorff_distance(yp, yg, include_background=True, percentile=95)
        compute_average_surface_distance(yp, yg, include_background=True, symmetric=True)
        compute_surface_dice(yp, yg, [1.0], include_background=True)

    def medpy_all() -> None:
        for a, b in images:
            medpy.hd(a, b)
            medpy.hd95(a, b)
            medpy.assd(a, b)

    def deepmind_all() -> None:
        for a, b in images:
            sd = deepmind.compute_surface_distances(b, a, [1.0] * a.ndim)
            deepmind.compute_robust_hausdorff(sd, 100)
            deepmind.compute_robust_hausdorff(sd, 95)
            deepmind.compute_average_surface_distance(sd)
            deepmind.compute_surface_dice_at_tolerance(sd, 1.0)

    fns = {"ours": ours, "ours_dm": ours_dm, "monai": monai, "medpy": medpy_all, "deepmind": deepmind_all}
    return {k: best(fn, repeat) for k, fn in fns.items()}


if __name__ == "__main__":
    main()
