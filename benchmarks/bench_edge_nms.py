"""Edge NMS: segmetrics-torch ``ops.edge_nms`` vs pyEdgeEval 0.2.8 ``fast_nms`` on the same maps, in one run.

Maps: for each BSDS500 sample image (``../shared/bsds_sample/BSDS500/ucm2/test``, ``--data``), the detector-like soft
map of the tests: ``ucm2[2::2, 2::2]`` blurred (Gaussian, sigma 1.5), normalised, plus N(0, 0.02) noise, clipped to
[0, 1] (float64; nearly every level distinct), and its uint8 rounding (``--uint8``). Without the data a synthetic
stand-in is used (labelled so).

Timed per image (median of ``--repeat`` rounds over all maps, CPU time ``time.process_time`` and wall time):

* peer: ``pyEdgeEval.preprocess.fast_nms(map)`` (r=1, s=5, m=1.01; scipy convolutions, numpy orientation, its C++
  suppression; single-threaded);
* ours, one map per call: ``edge_nms(map[None])`` (torch smoothing / orientation, numba suppression kernel);
* ours, one batch per image size (the kernel runs the maps of a batch in parallel over the numba threads);
* ours with ``backend="torch"`` (smoothing / orientation as tensor ops, the GPU path, then the suppression kernel).

Printed: seconds per image, the ratio, and the agreement: the largest absolute difference between the outputs and
the number of differing pixels over every way of calling ours (0 expected: the op reproduces pyEdgeEval bit for
bit). ``--threads`` sets torch's and numba's thread counts (default: leave them). Run::

    python benchmarks/bench_edge_nms.py                 # ~1 minute
    python benchmarks/bench_edge_nms.py --threads 1     # per core
"""

from __future__ import annotations

import argparse
import contextlib
import io
import platform
import statistics
import time
from pathlib import Path

import numba
import numpy as np
import torch
from scipy import ndimage

from segmetrics_torch.io import read_mat_array
from segmetrics_torch.ops.edge_nms import edge_nms

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "bsds_sample"


def load_maps(data: Path, use_uint8: bool) -> tuple[list[np.ndarray], str]:
    rng = np.random.default_rng(0)
    folder = data / "BSDS500" / "ucm2" / "test"
    ids = sorted(p.stem for p in folder.glob("*.mat"))
    if ids:
        grids = [read_mat_array(folder / f"{i}.mat", "ucm2")[2::2, 2::2].astype(np.float64) for i in ids]
        source = f"{len(ids)} BSDS500 sample images ({folder})"
    else:
        grids = []
        for _ in range(20):  # random contours on a 321x481 grid
            g = np.zeros((321, 481))
            for _ in range(12):
                r, c = rng.integers(0, 321), rng.integers(0, 481)
                g[r, max(0, c - 60) : c + 60] = rng.uniform(0.2, 1)
                g[max(0, r - 40) : r + 40, c] = rng.uniform(0.2, 1)
            grids.append(g)
        source = "SYNTHETIC stand-in (20 random 321x481 contour maps): the BSDS sample was not found"
    maps = []
    for g in grids:
        blur = ndimage.gaussian_filter(g, 1.5)
        blur = blur / max(blur.max(), 1e-12)
        noisy = np.clip(blur + rng.normal(0, 0.02, blur.shape), 0, 1)
        maps.append(np.round(255 * noisy).astype(np.uint8) if use_uint8 else noisy)
    return maps, source


def timed(fn, repeat: int) -> tuple[float, float]:
    """Median over ``repeat`` rounds of (CPU seconds, wall seconds) of one call of ``fn``."""
    cpu, wall = [], []
    for _ in range(repeat):
        c, w = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return statistics.median(cpu), statistics.median(wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--uint8", action="store_true", help="the maps rounded to uint8 (read / 255 by both)")
    args = parser.parse_args()
    if args.threads:
        numba.set_num_threads(args.threads)  # first: it resets torch's OpenMP thread count to the default
        torch.set_num_threads(args.threads)
    with contextlib.redirect_stdout(io.StringIO()):  # pyEdgeEval prints a warning on import
        from pyEdgeEval.preprocess import fast_nms

    maps, source = load_maps(args.data, args.uint8)
    shapes = {m.shape for m in maps}
    print(
        f"{platform.processor() or platform.machine()}, torch {torch.__version__} ({torch.get_num_threads()} threads), "
        f"numba {numba.__version__} ({numba.get_num_threads()} threads), pyEdgeEval 0.2.8 (single-threaded)"
    )
    print(
        f"maps: {source}; {len(maps)} x {sorted(shapes)}; dtype {maps[0].dtype}; "
        f"distinct levels per map (median) {int(np.median([len(np.unique(m)) for m in maps]))}"
    )

    tensors = [torch.from_numpy(m)[None] for m in maps]
    groups = [torch.cat([t for t in tensors if t.shape[1:] == shape]) for shape in sorted(shapes)]  # same-size batches
    edge_nms(tensors[0])  # compile / load the kernels
    edge_nms(groups[0][:2])

    peer_out = [fast_nms(m) for m in maps]
    ours_out = [edge_nms(t)[0].numpy() for t in tensors]
    max_diff = max(float(np.abs(a - b).max()) for a, b in zip(peer_out, ours_out, strict=True))
    n_diff = sum(int((a != b).sum()) for a, b in zip(peer_out, ours_out, strict=True))
    for shape, group in zip(sorted(shapes), groups, strict=True):
        expected = np.stack([p for p, m in zip(peer_out, maps, strict=True) if m.shape == shape])
        n_diff += int((edge_nms(group).numpy() != expected).sum())
        n_diff += int((edge_nms(group, backend="torch").numpy() != expected).sum())

    n = len(maps)
    peer = timed(lambda: [fast_nms(m) for m in maps], args.repeat)
    rows = [
        ("pyEdgeEval fast_nms", peer),
        ("ours, one map per call", timed(lambda: [edge_nms(t) for t in tensors], args.repeat)),
        (
            f"ours, {len(groups)} batches (one per image size)",
            timed(lambda: [edge_nms(g) for g in groups], args.repeat),
        ),
        (
            "ours, one map per call, backend='torch'",
            timed(lambda: [edge_nms(t, backend="torch") for t in tensors], args.repeat),
        ),
    ]
    print("\n| implementation | CPU ms/img | wall ms/img | speed-up (CPU / wall) |\n|---|---|---|---|")
    for name, (cpu, wall) in rows:
        print(f"| {name} | {1e3 * cpu / n:.1f} | {1e3 * wall / n:.1f} | {peer[0] / cpu:.2f}x / {peer[1] / wall:.2f}x |")
    print(f"\nagreement: max |ours - pyEdgeEval| = {max_diff:g} over {n} maps; differing pixels: {n_diff}")


if __name__ == "__main__":
    main()
