"""Plain numpy oracle of the object-proposal evaluation (MCG ``eval_proposals.m`` / ``eval_one.m`` /
``jaccard.m`` / ``average_recall.m``), one proposal and one N at a time, and its boundary variant (DAVIS
``f_boundary.m`` per pair, boundary pixels on void left out of the counts). Depends on numpy and scipy only."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import ndimage

from .boundary import davis_f, seg2bmap

__all__ = [
    "best_boundary_f",
    "best_overlaps",
    "boundary_counts",
    "jaccard_counts",
    "proposal_boundary_summary",
    "proposal_summary",
]


def jaccard_counts(proposal: np.ndarray, obj: np.ndarray, valid: np.ndarray) -> tuple[int, int, int, float]:
    """(inter, fp, fn, J) of one proposal and one object over the valid pixels; J = 0 when nothing is counted."""
    p = proposal.astype(bool) & valid
    g = obj.astype(bool) & valid
    inter = int((p & g).sum())
    fp = int((p & ~g).sum())
    fn = int((~p & g).sum())
    den = inter + fp + fn
    return inter, fp, fn, (inter / den if den else 0.0)


def best_overlaps(
    proposals: np.ndarray, objects: np.ndarray, counts: Sequence[int], void: np.ndarray | None = None
) -> dict:
    """For each N: each object's best J among the first min(N, P) proposals (first best on ties) and its counts."""
    valid = np.ones(objects.shape[1:], bool) if void is None else ~void.astype(bool)
    n_prop, n_obj = len(proposals), len(objects)
    table = np.zeros((n_prop, n_obj, 4))
    for i in range(n_prop):
        for k in range(n_obj):
            table[i, k] = jaccard_counts(proposals[i], objects[k], valid)
    out: dict[str, np.ndarray] = {key: np.zeros((len(counts), n_obj)) for key in ("jaccard", "inter", "fp", "fn")}
    out["num_proposals"] = np.zeros(len(counts), np.int64)
    for li, n in enumerate(counts):
        m = min(n, n_prop)
        out["num_proposals"][li] = m
        for k in range(n_obj):
            best = int(np.argmax(table[:m, k, 3]))  # first maximum, as MATLAB's max
            out["jaccard"][li, k] = table[best, k, 3]
            out["inter"][li, k], out["fp"][li, k], out["fn"][li, k] = table[best, k, :3]
    return out


def proposal_summary(
    best: np.ndarray,
    classes: np.ndarray | None = None,
    inter: np.ndarray | None = None,
    fp: np.ndarray | None = None,
    fn: np.ndarray | None = None,
) -> dict:
    """Curves over the (L, O) best overlaps of all objects: mean, median, recalls, average recall, J_c."""
    out = {
        "jaccard_object": best.mean(1),
        "jaccard_median": np.median(best, axis=1),
        "recall_50": (best > 0.5).mean(1),
        "recall_70": (best > 0.7).mean(1),
        "recall_85": (best > 0.85).mean(1),
        "average_recall": np.mean([(best >= t).mean(1) for t in np.linspace(0.5, 0.95, 10)], axis=0),
    }
    if classes is not None:
        assert inter is not None and fp is not None and fn is not None, "per-class values need inter, fp and fn"
        per_class = []
        for c in np.unique(classes):
            sel = classes == c
            i, f, n = inter[:, sel].sum(1), fp[:, sel].sum(1), fn[:, sel].sum(1)
            den = i + f + n
            per_class.append(np.where(den > 0, i / np.where(den > 0, den, 1), 0.0))
        out["jaccard_class"] = np.mean(per_class, axis=0)
    return out


def boundary_counts(
    proposal: np.ndarray, obj: np.ndarray, valid: np.ndarray, bound_th: float = 0.008
) -> tuple[float, float, float]:
    """(F, precision, recall) of one proposal and one object as DAVIS ``f_boundary``, counting only the boundary
    pixels on valid pixels (boundaries and dilations come from the full masks)."""
    h, w = obj.shape
    radius = bound_th if bound_th >= 1 else np.ceil(bound_th * np.sqrt(h * h + w * w))
    r = int(np.floor(radius))
    yy, xx = np.mgrid[-r : r + 1, -r : r + 1]
    disk = xx**2 + yy**2 <= radius**2
    fg_b = seg2bmap(np.asarray(proposal, bool))
    gt_b = seg2bmap(np.asarray(obj, bool))
    fg_dil = ndimage.binary_dilation(fg_b, structure=disk)
    gt_dil = ndimage.binary_dilation(gt_b, structure=disk)
    n_fg, n_gt = int((fg_b & valid).sum()), int((gt_b & valid).sum())
    return davis_f(int((fg_b & valid & gt_dil).sum()), n_fg, int((gt_b & valid & fg_dil).sum()), n_gt)


def best_boundary_f(
    proposals: np.ndarray,
    objects: np.ndarray,
    counts: Sequence[int],
    void: np.ndarray | None = None,
    bound_th: float = 0.008,
) -> dict:
    """For each N: each object's best boundary F among the first min(N, P) proposals (first best on ties)."""
    valid = np.ones(objects.shape[1:], bool) if void is None else ~void.astype(bool)
    table = np.array([[boundary_counts(p, g, valid, bound_th) for g in objects] for p in proposals])  # (P, K, 3)
    out = {key: np.zeros((len(counts), len(objects))) for key in ("f", "precision", "recall")}
    out["num_proposals"] = np.array([min(n, len(proposals)) for n in counts])
    for li, m in enumerate(out["num_proposals"]):
        for k in range(len(objects)):
            best = int(np.argmax(table[:m, k, 0]))
            out["f"][li, k], out["precision"][li, k], out["recall"][li, k] = table[best, k]
    return out


def proposal_boundary_summary(best: np.ndarray, classes: np.ndarray | None = None) -> dict:
    """The Jaccard curves with the best boundary F; per class the mean best F, then the mean over classes."""
    base = proposal_summary(best)
    out = {f"boundary_{k.replace('jaccard', 'f')}": v for k, v in base.items()}
    if classes is not None:
        out["boundary_f_class"] = np.mean([best[:, classes == c].mean(1) for c in np.unique(classes)], axis=0)
    return out
