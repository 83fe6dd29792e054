"""Plain numpy oracle of the object-proposal evaluation (MCG ``eval_proposals.m`` / ``eval_one.m`` /
``jaccard.m`` / ``average_recall.m``), one proposal and one N at a time. Depends on numpy only."""

from __future__ import annotations

import numpy as np

__all__ = ["best_overlaps", "jaccard_counts", "proposal_summary"]


def jaccard_counts(proposal: np.ndarray, obj: np.ndarray, valid: np.ndarray) -> tuple[int, int, int, float]:
    """(inter, fp, fn, J) of one proposal and one object over the valid pixels; J = 0 when nothing is counted."""
    p = proposal.astype(bool) & valid
    g = obj.astype(bool) & valid
    inter = int((p & g).sum())
    fp = int((p & ~g).sum())
    fn = int((~p & g).sum())
    den = inter + fp + fn
    return inter, fp, fn, (inter / den if den else 0.0)


def best_overlaps(proposals: np.ndarray, objects: np.ndarray, counts, void: np.ndarray | None = None) -> dict:
    """For each N: each object's best J among the first min(N, P) proposals (first best on ties) and its counts."""
    valid = np.ones(objects.shape[1:], bool) if void is None else ~void.astype(bool)
    n_prop, n_obj = len(proposals), len(objects)
    table = np.zeros((n_prop, n_obj, 4))
    for i in range(n_prop):
        for k in range(n_obj):
            table[i, k] = jaccard_counts(proposals[i], objects[k], valid)
    out = {key: np.zeros((len(counts), n_obj)) for key in ("jaccard", "inter", "fp", "fn")}
    out["num_proposals"] = np.zeros(len(counts), np.int64)
    for li, n in enumerate(counts):
        m = min(n, n_prop)
        out["num_proposals"][li] = m
        for k in range(n_obj):
            best = int(np.argmax(table[:m, k, 3]))  # first maximum, as MATLAB's max
            out["jaccard"][li, k] = table[best, k, 3]
            out["inter"][li, k], out["fp"][li, k], out["fn"][li, k] = table[best, k, :3]
    return out


def proposal_summary(best: np.ndarray, classes: np.ndarray | None = None, inter=None, fp=None, fn=None) -> dict:
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
        per_class = []
        for c in np.unique(classes):
            sel = classes == c
            i, f, n = inter[:, sel].sum(1), fp[:, sel].sum(1), fn[:, sel].sum(1)
            den = i + f + n
            per_class.append(np.where(den > 0, i / np.where(den > 0, den, 1), 0.0))
        out["jaccard_class"] = np.mean(per_class, axis=0)
    return out
