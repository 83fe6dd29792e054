"""Semantic boundaries: segmetrics-torch vs pyEdgeEval 0.2.8 per (image, class), same maps, same thresholds, one run.

Both compute the per-threshold counts ``cntR, sumR, cntP, sumP`` of one class of one image (99 thresholds, numpy's
``linspace`` as pyEdgeEval's), from the same soft map (uint8, read as ``/ 255``), the same GT edges and the same class
map, with each protocol's switches:

* peer: pyEdgeEval's ``evaluate_boundaries_threshold`` (the per-(image, class) call of its SBD / Cityscapes
  evaluators), one call per (image, class), single-threaded;
* ours: ``semantic_boundary_counts`` on the image's classes at once; the first call compiles the numba kernels and is
  excluded (a warm-up on a small input). Ground truth is made once for both (pyEdgeEval precomputes it offline too).

Cases (SBD-size synthetic images, 375 x 500, SEAL GT from random overlapping regions; soft maps are blurred,
jittered copies of each class's borders with speckle on 5 % of the pixels, about the density of the SBD
benchmark's own sample maps (11-15 % of the pixels at the lowest thresholds), every threshold a different map):

* ``thin``: post-SEAL instance-sensitive thin protocol (thinned maps, GT radius 1 + thinning, max_dist 0.02);
* ``raw``: post-SEAL raw (no thinning, GT radius 2);
* ``thin+kill`` / ``raw+kill``: the pre-SEAL switches (kill_internal, skip_if_nonexistent), which take ours through
  its thin-then-kill path.

It prints seconds per (image, class) for both, the ratio, and whether ``sumR`` / ``sumP`` agree (raw: exactly; thin:
pyEdgeEval's thinning stops early now and then, a documented difference). Run::

    python benchmarks/bench_semantic_boundary.py                  # 2 images x 3 classes (~5-10 min, the peer)
    python benchmarks/bench_semantic_boundary.py --images 1 --classes 2 --threads 1
"""

from __future__ import annotations

import argparse
import contextlib
import io
import platform
import time
import warnings

import numba
import numpy as np
import torch
from scipy import ndimage

from segmetrics_torch.functional.semantic_boundary import regenerate_boundaries, semantic_boundary_counts

MAX_DIST = 0.02


def make_image(rng: np.random.Generator, shape: tuple[int, int], n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Class map (trainIds 0..K-1, 255 background), instance map (one id per region)."""
    h, w = shape
    yy, xx = np.mgrid[:h, :w]
    seg = np.full(shape, 255, np.int64)
    inst = np.zeros(shape, np.int64)
    for i in range(3 * n_classes):
        cy, cx, ry, rx = rng.uniform(0, h), rng.uniform(0, w), rng.uniform(0.1, 0.35) * h, rng.uniform(0.1, 0.35) * w
        mask = ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1
        seg[mask] = i % n_classes
        inst[mask] = i + 1
    return seg, inst


def soft_maps(rng: np.random.Generator, edges: np.ndarray) -> np.ndarray:
    out = np.zeros(edges.shape, np.uint8)
    for k, e in enumerate(edges):
        e = np.roll(e.astype(np.float64), (int(rng.integers(-2, 3)), int(rng.integers(-2, 3))), axis=(0, 1))
        soft = ndimage.gaussian_filter(e, 2.0)
        soft = soft / max(soft.max(), 1e-9)
        speckle = rng.random(e.shape) < 0.05  # false positives on 5 % of the pixels
        soft[speckle] += 0.5 * rng.random(int(speckle.sum()))
        out[k] = np.clip(np.rint(soft * 255), 0, 255)
    return out


def ground_truth(seg: np.ndarray, inst: np.ndarray, n_classes: int, thin: bool) -> np.ndarray:
    classes = {int(i): int(seg[inst == i][0]) for i in np.unique(inst) if i and (seg[inst == i] < 255).all()}
    return regenerate_boundaries(
        torch.from_numpy(seg),
        list(range(n_classes)),
        radius=1 if thin else 2,
        thin=thin,
        instances=torch.from_numpy(inst),
        instance_classes=classes,
    ).numpy()


def run_peer(thresholds, preds, gts, segs, thin: bool, kill: bool) -> tuple[float, np.ndarray]:
    from pyEdgeEval.common.multi_label import evaluate_boundaries_threshold

    out = np.zeros((len(preds), preds[0].shape[0], 4, len(thresholds)), np.int64)
    start = time.perf_counter()
    for b, (p, g, s) in enumerate(zip(preds, gts, segs, strict=True)):
        for k in range(p.shape[0]):
            res = evaluate_boundaries_threshold(
                thresholds=thresholds,
                pred=p[k] / 255,
                gt=g[k].astype(np.uint8),
                gt_seg=s == k,
                max_dist=MAX_DIST,
                apply_thinning=thin,
                kill_internal=kill,
                skip_if_nonexistent=kill,
            )
            out[b, k] = np.stack(res)
    return time.perf_counter() - start, out


def run_ours(thresholds, preds, gts, segs, thin: bool, kill: bool) -> tuple[float, np.ndarray]:
    start = time.perf_counter()
    c = semantic_boundary_counts(
        torch.from_numpy(np.stack(preds)),
        torch.from_numpy(np.stack(gts)),
        torch.from_numpy(np.stack(segs)),
        thresholds=torch.from_numpy(thresholds),
        max_dist=MAX_DIST,
        thin=thin,
        kill_internal=kill,
        skip_if_nonexistent=kill,
    )
    elapsed = time.perf_counter() - start
    return elapsed, torch.stack([c.cnt_r, c.sum_r, c.cnt_p, c.sum_p], 2).numpy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, default=2)
    parser.add_argument("--classes", type=int, default=3)
    parser.add_argument("--size", type=int, nargs=2, default=(375, 500))
    parser.add_argument("--thresholds", type=int, default=99)
    parser.add_argument("--threads", type=int, default=None, help="torch/numba threads for ours (default: all)")
    parser.add_argument("--cases", nargs="+", default=["thin", "raw", "thin+kill", "raw+kill"])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
        numba.set_num_threads(args.threads)
    warnings.filterwarnings("ignore")
    rng = np.random.default_rng(args.seed)
    k = args.thresholds
    thresholds = np.linspace(1.0 / (k + 1), 1.0 - 1.0 / (k + 1), k)  # pyEdgeEval's thresholds
    images = [make_image(rng, tuple(args.size), args.classes) for _ in range(args.images)]
    # warm-up: numba compilation of every path, on a small input
    wseg, winst = make_image(rng, (40, 50), args.classes)
    for thin in (True, False):
        wgt = ground_truth(wseg, winst, args.classes, thin)
        for kill in (True, False):
            run_ours(thresholds, [soft_maps(rng, wgt)], [wgt], [wseg], thin, kill)
    print(f"# semantic boundaries: {args.images} images x {args.classes} classes, {tuple(args.size)}, {k} thresholds")
    print(
        f"# {platform.processor() or platform.machine()}, torch {torch.__version__}, threads {torch.get_num_threads()}"
    )
    print(f"{'case':10s} {'ours s/(img,cls)':>17s} {'pyEdgeEval s/(img,cls)':>23s} {'ratio':>8s}  sums")
    for case in args.cases:
        thin, kill = case.startswith("thin"), case.endswith("kill")
        gts = [ground_truth(s, i, args.classes, thin) for s, i in images]
        preds = [soft_maps(rng, g) for g in gts]
        segs = [s for s, _ in images]
        t_ours, ours = run_ours(thresholds, preds, gts, segs, thin, kill)
        with contextlib.redirect_stdout(io.StringIO()):
            t_peer, peer = run_peer(thresholds, preds, gts, segs, thin, kill)
        n = args.images * args.classes
        same_r = np.array_equal(ours[:, :, 1], peer[:, :, 1])
        same_p = np.array_equal(ours[:, :, 3], peer[:, :, 3])
        dp = np.abs(ours[:, :, 3] - peer[:, :, 3]).max()
        sums = f"sumR {'equal' if same_r else 'differ'}, sumP {'equal' if same_p else f'max diff {dp}'}"
        print(f"{case:10s} {t_ours / n:17.4f} {t_peer / n:23.3f} {t_peer / t_ours:7.1f}x  {sums}", flush=True)


if __name__ == "__main__":
    main()
