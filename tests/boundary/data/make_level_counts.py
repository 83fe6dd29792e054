"""Regenerate ``level_counts.npz``: boundary counts of the matcher as it was before the issue-16 speed-up (189b3fb).

The speed-up of the correspondence kernel must not change a single count, so ``test_level_counts.py`` compares the
current kernel with these stored counts, computed by the unchanged code. Run from the repository root, on the commit
whose counts are to be frozen::

    python tests/boundary/data/make_level_counts.py

Cases (``cntR``, ``cntP``, ``sumP`` per image and threshold; ``sumR`` does not depend on the matching):

* ``distinct``: soft maps whose thresholded maps all differ, like edge-detector PNGs: the BSDS sample's
  ``ucm2[2::2, 2::2]`` Gaussian-blurred (sigma 1.5), divided by its 99th percentile, clipped to [0, 1] and rounded to
  1/255 (uint8); first 8 images, 99 and 9 thresholds.
* ``png``: BSR's ``bench/data/png`` soft maps (5 images), 99 thresholds.
* ``ucm2``: the sample's gPb ucm2 (first 8 images), 99 thresholds (few distinct levels).
* ``synthetic``: small random blurred maps with noise (stored here) against random line annotators, tolerance in
  pixels, with and without thinning.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import torch
from scipy import ndimage

from segmetrics_torch.functional.boundary import boundary_pr_counts
from segmetrics_torch.io import read_bsds_ground_truth, read_gray, read_mat_array

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parents[2].parent / "shared" / "bsds_sample"
N_IMAGES = 8


def sample_ids() -> list[str]:
    return sorted(p.stem for p in (SAMPLE / "BSDS500" / "ucm2" / "test").glob("*.mat"))[:N_IMAGES]


def sample_gt(image_id: str) -> np.ndarray:
    return read_bsds_ground_truth(SAMPLE / "BSDS500" / "data" / "groundTruth" / "test" / f"{image_id}.mat").boundaries


def sample_ucm2(image_id: str) -> np.ndarray:
    return read_mat_array(SAMPLE / "BSDS500" / "ucm2" / "test" / f"{image_id}.mat", "ucm2")


def distinct_map(ucm2: np.ndarray) -> np.ndarray:
    """uint8 soft map whose 99 thresholded maps all differ (blurred, stretched, rounded ucm2 soft map)."""
    b = ndimage.gaussian_filter(ucm2[2::2, 2::2], 1.5)
    return np.round(np.clip(b / np.quantile(b, 0.99), 0, 1) * 255).astype(np.uint8)


def png_case() -> tuple[list[np.ndarray], list[np.ndarray]]:
    bench = SAMPLE / "bench" / "data"
    ids = ["2018", "3063", "5096", "6046", "8068"]
    preds = [read_gray(bench / "png" / f"{i}.png") for i in ids]
    gts = [read_bsds_ground_truth(bench / "groundTruth" / f"{i}.mat").boundaries for i in ids]
    return preds, gts


def synthetic_case(seed: int = 16) -> tuple[list[np.ndarray], list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    preds, gts = [], []
    for h, w, a in ((40, 56, 3), (48, 40, 4), (33, 61, 2), (52, 52, 5)):
        gt = np.zeros((a, h, w), bool)
        for k in range(a):
            for _ in range(4):  # random straight segments per annotator
                y0, x0, y1, x1 = rng.integers(0, (h, w, h, w))
                n = max(abs(y1 - y0), abs(x1 - x0)) + 1
                gt[k, np.linspace(y0, y1, n).round().astype(int), np.linspace(x0, x1, n).round().astype(int)] = True
        soft = ndimage.gaussian_filter(gt.mean(0) + rng.normal(0, 0.15, (h, w)), 1.0)
        soft = np.clip((soft - soft.min()) / (soft.max() - soft.min()), 0, 1)
        preds.append(np.round(soft * 255).astype(np.uint8))
        gts.append(gt)
    return preds, gts


def digest(arrays: list[np.ndarray]) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def counts(preds, gts, **kw) -> np.ndarray:
    c = boundary_pr_counts([torch.from_numpy(p) for p in preds], [torch.from_numpy(g) for g in gts], **kw)
    return np.stack([c.cnt_r.numpy(), c.cnt_p.numpy(), c.sum_p.numpy()]).astype(np.int32)


def main() -> None:
    out: dict[str, np.ndarray] = {}
    ids = sample_ids()
    ucm2s = [sample_ucm2(i) for i in ids]
    gts = [sample_gt(i) for i in ids]
    dmaps = [distinct_map(u) for u in ucm2s]
    out["distinct_sha"] = np.array(digest(dmaps))
    out["distinct_99"] = counts(dmaps, gts, thresholds=99)
    out["distinct_9"] = counts(dmaps, gts, thresholds=9)
    out["ucm2_99"] = counts(ucm2s, gts, thresholds=99, input_format="ucm2")
    preds, pgts = png_case()
    out["png_99"] = counts(preds, pgts, thresholds=99)
    spreds, sgts = synthetic_case()
    for k, (p, g) in enumerate(zip(spreds, sgts, strict=True)):
        out[f"synthetic_pred_{k}"] = p
        out[f"synthetic_gt_{k}"] = g
        out[f"synthetic_thin_{k}"] = counts([p], [g], thresholds=99, max_dist=2.5)
        out[f"synthetic_nothin_{k}"] = counts([p], [g], thresholds=25, max_dist=3.2, thin=False)
    np.savez_compressed(HERE / "level_counts.npz", **out)


if __name__ == "__main__":
    main()
