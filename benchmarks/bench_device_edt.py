"""The device distance transform (what CUDA runs, here on CPU tensors) against the compiled host transform.

Cases: random smooth 3-D shapes (Gaussian-filtered noise, thresholded) at 32^3, 64^3 and 128^3 (``--sizes``),
spacing (2.0, 0.8, 0.8). As the boundary-distance family calls them: the features are one shape's boundary, the
distances are read at another's. Per size, the best of ``--repeat`` wall times of

* host: :func:`segmetrics_torch.ops.distance.distance_to_features` (the compiled numba kernel, every core);
* device: :func:`segmetrics_torch.ops.distance.distance_to_features_device` on CPU tensors (the tensor route, what
  CUDA runs; ``--device cuda`` times it on the GPU);
* before (``--before REV``, e.g. the commit before the O(N log n) transform): the same function from
  ``git show REV:segmetrics_torch/ops/distance.py``, loaded as a module beside the package, on the same masks.

Also prints the largest relative difference of the device distances from the host's (and scipy's) and checks the
feature indices of :func:`segmetrics_torch.ops.device_edt.feature_transform` (each names a feature at exactly the
returned distance). The load average is printed: these are wall times on a shared machine.

Run: ``python benchmarks/bench_device_edt.py [--sizes 32 64 128] [--repeat 5] [--before 0d222de] [--threads 1]
[--device cuda]``
(``--threads 1``: torch and numba on one thread each, the robust comparison on a busy machine, where a parallel
op's threads wait for each other).
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import torch
from scipy import ndimage

from segmetrics_torch.ops.device_edt import feature_transform
from segmetrics_torch.ops.distance import distance_to_features, distance_to_features_device

SPACING = (2.0, 0.8, 0.8)


def smooth_shapes(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two overlapping random smooth shapes of an n^3 volume (about half of it each)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n, n))
    b = a + 0.7 * rng.standard_normal((n, n, n))
    sigma = max(1.0, n / 16)
    return ndimage.gaussian_filter(a, sigma) > 0, ndimage.gaussian_filter(b, sigma) > 0


def boundary(mask: np.ndarray) -> np.ndarray:
    return mask & ~ndimage.binary_erosion(mask)


def best(fns: dict[str, Callable[[], object]], repeat: int, device: str) -> dict[str, float]:
    """The best wall time of each function over ``repeat`` rounds, the functions interleaved within a round (on a
    shared machine, a burst of other work then slows all of them alike rather than one); CUDA work waited for."""

    def sync() -> None:
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    for fn in fns.values():
        fn()  # untimed: first-use costs (compilation, allocator growth)
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            sync()
            t = time.perf_counter()
            fn()
            sync()
            times[name].append(time.perf_counter() - t)
    return {name: min(values) for name, values in times.items()}


def load_before(rev: str) -> ModuleType:
    """``segmetrics_torch/ops/distance.py`` at ``rev``, imported as a sibling module of the package's ``ops``."""
    root = Path(__file__).resolve().parents[1]
    source = subprocess.run(
        ["git", "show", f"{rev}:segmetrics_torch/ops/distance.py"], cwd=root, check=True, capture_output=True, text=True
    ).stdout
    path = Path(tempfile.mkdtemp()) / "distance_before.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("segmetrics_torch.ops._distance_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def check_indices(features: np.ndarray, device: str) -> float:
    """The largest relative gap between the returned distance and the distance to the feature the index names."""
    dist, index = feature_transform(torch.from_numpy(features).to(device), SPACING)
    assert index is not None
    dist = dist.cpu()
    flat = index.cpu().numpy().ravel()
    assert features.ravel()[flat].all(), "an index names no feature"
    named = np.stack(np.unravel_index(flat, features.shape), -1)
    own = np.stack(np.unravel_index(np.arange(features.size), features.shape), -1)
    exact = np.sqrt((((named - own) * np.asarray(SPACING)) ** 2).sum(-1))
    got = dist.numpy().ravel()
    return float(np.max(np.abs(got - exact) / np.maximum(exact, 1e-300)))


def run_size(n: int, repeat: int, before: ModuleType | None, device: str) -> float:
    """Time and check one size; print its line; return the device / host ratio."""
    a, b = smooth_shapes(n)
    f, at = boundary(b), boundary(a)
    ft, att = torch.from_numpy(f).to(device), torch.from_numpy(at).to(device)
    host = distance_to_features(f, SPACING, at=at)
    ours = distance_to_features_device(ft, SPACING, att).cpu().numpy()
    scipy = ndimage.distance_transform_edt(~f, sampling=SPACING)[at]
    rel_host = float(np.max(np.abs(ours - host) / np.maximum(host, 1e-300)))
    rel_scipy = float(np.max(np.abs(ours - scipy) / np.maximum(scipy, 1e-300)))
    fns: dict[str, Callable[[], object]] = {
        "host": lambda: distance_to_features(f, SPACING, at=at),
        "device": lambda: distance_to_features_device(ft, SPACING, att),
    }
    if before is not None:
        old = before.distance_to_features_device
        np.testing.assert_allclose(old(ft, SPACING, att).cpu().numpy(), ours, rtol=4e-16, atol=0)
        fns["before"] = lambda: old(ft, SPACING, att)
    t = best(fns, repeat, device)
    ratio = t["device"] / t["host"]
    line = f"{n:>5}^3 {1e3 * t['host']:9.2f} {1e3 * t['device']:10.2f} {ratio:6.1f}x"
    if before is not None:
        line += f" {1e3 * t['before']:10.2f} {t['before'] / t['host']:6.1f}x"
    print(line + f" {rel_host:15.2e} {rel_scipy:16.2e} {check_indices(f, device):10.2e}", flush=True)
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[32, 64, 128])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--before", default=None, help="a git revision whose device transform to time beside ours")
    parser.add_argument("--threads", type=int, default=None, help="torch and numba threads (default: as set)")
    parser.add_argument("--device", default="cpu", help="the device transform's device (cpu: the tensor route)")
    args = parser.parse_args()
    if args.threads is not None:
        import numba

        torch.set_num_threads(args.threads)
        numba.set_num_threads(args.threads)
    before = load_before(args.before) if args.before else None
    print(
        f"load average {os.getloadavg()}, torch threads {torch.get_num_threads()}, spacing {SPACING}, "
        f"device transform on {args.device}"
    )
    header = f"{'size':>6} {'host ms':>9} {'device ms':>10} {'ratio':>7}"
    if before is not None:
        header += f" {'before ms':>10} {'ratio':>7}"
    print(header + f" {'rel. diff host':>15} {'rel. diff scipy':>16} {'index gap':>10}")
    ratios = {n: run_size(n, args.repeat, before, args.device) for n in args.sizes}
    sizes = sorted(ratios)
    for small, large in itertools.pairwise(sizes):
        print(f"ratio growth {large}^3 / {small}^3: {ratios[large] / ratios[small]:.2f}")


if __name__ == "__main__":
    main()
