"""Dataset summaries of the BSDS boundary benchmark from correspondence counts, as BSR ``collect_eval_bdry.m``.

Conventions (BSR, Arbelaez et al. TPAMI 2011; ``bench/benchmarks/collect_eval_bdry.m``):

* ``R = cntR / (sumR + (sumR == 0))``, ``P = cntP / (sumP + (sumP == 0))``, ``F = 2PR / (P + R + (P + R == 0))``:
  no ground-truth boundary gives R = 0, no machine boundary gives P = 0, and F = 0 when both are 0.
* **ODS**: counts summed over images per threshold; the best F along the piecewise-linear PR curve, searched with
  MATLAB's ``linspace(0, 1)`` (100 points) on every segment between consecutive thresholds, keeping a strictly
  greater F, so the ODS threshold may be fractional and ODS F may exceed every per-threshold F.
* **OIS**: per image the *first* threshold of maximal F (no interpolation); the counts there are pooled.
* **AP**: ``[Ru, i] = unique(R)``, ``interp1(Ru, P(i), 0:0.01:1)`` (linear, NaN outside [min R, max R] set to 0),
  ``sum * 0.01``; 0 with fewer than two distinct recalls. Where R repeats, MATLAB's ``unique`` picked the *last*
  occurrence before R2013a (when the benchmark's published numbers were produced) and the *first* since:
  ``unique_occurrence`` chooses.
* **R50**: recall at precision 0.5. Dollar's ``edgesEvalDir.m`` (BSR's ``collect_eval_bdry.m`` has none)
  interpolates along the curve sorted by *unique precision*, which is the recall where precision first reaches 0.5
  from the high-recall end when precision only grows with the threshold. On a curve that comes back to 0.5 (edge
  NMS leaves 2 pixels at a high threshold, one of them matched: P = 0.5 exactly at R ~ 0), Dollar's sort picks that
  stray point and reports R50 ~ 0 although the curve passes P = 0.5 at R ~ 0.8. So ``r50`` here is the recall where
  precision first reaches 0.5 walking from the lowest threshold (linear between that point and the one before),
  Dollar's value stays under ``r50_dollar`` (the command prints a warning line where the two differ by more than
  0.01). NaN when precision never reaches 0.5 (the Metric and the functional form warn).
* **AP of pyEdgeEval**: ``ap`` above is BSR's, which pyEdgeEval reports as ``AUC``; pyEdgeEval's own ``AP`` key is
  an interpolated average precision, ``sum_{t = 0, 0.01, ..., 0.99} max(P[R >= t]) / 101`` (100 terms over 101, as
  its code has it): ``ap_pyedgeeval``.
"""

from __future__ import annotations

from typing import Literal, get_args

import torch
from torch import Tensor

from ..._checks import check_choice

__all__ = [
    "average_precision",
    "best_f_interpolated",
    "boundary_summary",
    "matlab_linspace",
    "ois_counts",
    "precision_recall_f",
    "recall_at_precision",
]

#: which of equal recall values AP keeps (see the module doc)
UniqueOccurrence = Literal["first", "last"]


def matlab_linspace(start: float, stop: float, num: int, *, dtype: torch.dtype = torch.float64) -> Tensor:
    """MATLAB's ``linspace``: ``start + (k * (stop - start)) / (num - 1)``, last element exactly ``stop``.

    numpy computes ``start + k * ((stop - start) / (num - 1))`` instead, which differs in the last bit for some
    ``k``; thresholds equal to pixel values (e.g. 51/255 = 0.2) make that bit decide ``pb >= t``.

    Example:
        >>> import numpy as np
        >>> from segmetrics_torch.functional import matlab_linspace
        >>> matlab_linspace(0, 1, 5).tolist()
        [0.0, 0.25, 0.5, 0.75, 1.0]
        >>> t = matlab_linspace(0.01, 0.99, 99)  # BSR's 99 thresholds: the 50th is one bit below numpy's 0.5
        >>> float(t[49]), float(np.linspace(0.01, 0.99, 99)[49])
        (0.49999999999999994, 0.5)
    """
    if num == 1:
        return torch.tensor([stop], dtype=dtype)
    k = torch.arange(num, dtype=torch.float64)
    out = start + (k * (stop - start)) / (num - 1)
    out[0] = start
    out[-1] = stop
    return out.to(dtype)


def precision_recall_f(cnt_r: Tensor, sum_r: Tensor, cnt_p: Tensor, sum_p: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """(R, P, F) in float64 with the BSR zero-denominator conventions (see module doc).

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import precision_recall_f
        >>> # 3 of 4 annotator pixels and 3 of 6 machine pixels matched; then an image with no boundary at all
        >>> r, p, f = precision_recall_f(torch.tensor([3, 0]), torch.tensor([4, 0]), torch.tensor([3, 0]),
        ...                              torch.tensor([6, 0]))
        >>> r.tolist(), p.tolist(), f.tolist()
        ([0.75, 0.0], [0.5, 0.0], [0.6, 0.0])
    """
    cnt_r, sum_r, cnt_p, sum_p = (x.to(torch.float64) for x in (cnt_r, sum_r, cnt_p, sum_p))
    r = cnt_r / (sum_r + (sum_r == 0))
    p = cnt_p / (sum_p + (sum_p == 0))
    return r, p, _fmeasure(r, p)


def _fmeasure(r: Tensor, p: Tensor) -> Tensor:
    s = p + r
    return 2 * p * r / (s + (s == 0))


def best_f_interpolated(thresholds: Tensor, r: Tensor, p: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """BSR ``maxF``: best (T, R, P, F) along the linearly interpolated curve; ``r``/``p`` (..., K) -> (...) each.

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import best_f_interpolated
        >>> t = torch.tensor([0.2, 0.6], dtype=torch.float64)
        >>> r = torch.tensor([1.0, 0.5], dtype=torch.float64)
        >>> p = torch.tensor([0.5, 1.0], dtype=torch.float64)  # F = 2/3 at both thresholds
        >>> [round(float(v), 4) for v in best_f_interpolated(t, r, p)]  # F ~ 3/4 between them
        [0.402, 0.7475, 0.7525, 0.75]
    """
    thresholds = thresholds.to(device=r.device, dtype=torch.float64).expand_as(r)
    best = [thresholds[..., 0], r[..., 0], p[..., 0], _fmeasure(r[..., 0], p[..., 0])]
    if r.shape[-1] < 2:
        return best[0], best[1], best[2], best[3]
    d = matlab_linspace(0.0, 1.0, 100).to(r.device)
    one_minus = 1 - d

    def seg(x: Tensor) -> Tensor:  # (..., K-1, 100): x(i) * d + x(i-1) * (1 - d), MATLAB's operation order
        return x[..., 1:, None] * d + x[..., :-1, None] * one_minus

    t_i, r_i, p_i = seg(thresholds), seg(r), seg(p)
    f_i = _fmeasure(r_i, p_i).flatten(-2)
    # The loop keeps the first strictly greater F: the first maximum in iteration order, if it beats point 1.
    idx = f_i.argmax(dim=-1, keepdim=True)  # torch's argmax returns the first maximal index
    f_best = f_i.gather(-1, idx).squeeze(-1)
    better = f_best > best[3]
    out = []
    for cur, cand in zip(best, (t_i, r_i, p_i), strict=False):
        out.append(torch.where(better, cand.flatten(-2).gather(-1, idx).squeeze(-1), cur))
    out.append(torch.where(better, f_best, best[3]))
    return out[0], out[1], out[2], out[3]


def _unique_index(x: Tensor, occurrence: str) -> tuple[Tensor, Tensor]:
    """Sorted unique values of 1-D ``x`` and the index of their first or last occurrence (MATLAB ``unique``)."""
    order = torch.argsort(x, stable=True)
    xs = x[order]
    if occurrence == "first":
        keep = torch.ones_like(xs, dtype=torch.bool)
        keep[1:] = xs[1:] != xs[:-1]
    else:
        keep = torch.ones_like(xs, dtype=torch.bool)
        keep[:-1] = xs[:-1] != xs[1:]
    return xs[keep], order[keep]


def _interp1(x: Tensor, y: Tensor, xq: Tensor) -> Tensor:
    """MATLAB ``interp1(x, y, xq)`` (linear; NaN outside [x1, xn]) for strictly increasing 1-D ``x``."""
    i = torch.searchsorted(x, xq, right=True).clamp(1, x.numel() - 1)
    x0, x1, y0, y1 = x[i - 1], x[i], y[i - 1], y[i]
    out = y0 + (xq - x0) * (y1 - y0) / (x1 - x0)
    out = torch.where(xq == x1, y1, out)
    return torch.where((xq < x[0]) | (xq > x[-1]), torch.full_like(out, float("nan")), out)


def average_precision(r: Tensor, p: Tensor, *, unique_occurrence: UniqueOccurrence = "last") -> Tensor:
    """BSR ``Area_PR`` of a 1-D curve (see module doc); a 0-d float64 tensor.

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import average_precision
        >>> r = torch.tensor([1.0, 0.5], dtype=torch.float64)
        >>> p = torch.tensor([0.5, 1.0], dtype=torch.float64)
        >>> # P = 1.5 - R sampled at R = 0.50, 0.51, ..., 1.00 (0 below R = 0.5), times 0.01
        >>> round(float(average_precision(r, p)), 4)
        0.3825
        >>> float(average_precision(torch.tensor([0.5, 0.5], dtype=torch.float64), p))  # one distinct recall
        0.0
    """
    check_unique_occurrence(unique_occurrence)
    ru, idx = _unique_index(r, unique_occurrence)
    if ru.numel() < 2:
        return torch.zeros((), dtype=torch.float64, device=r.device)
    ri = torch.arange(101, dtype=torch.float64, device=r.device) / 100
    p_int = _interp1(ru, p[idx], ri)
    return torch.nan_to_num(p_int, nan=0.0).sum() * 0.01


def recall_at_precision(r: Tensor, p: Tensor, precision: float = 0.5) -> Tensor:
    """Dollar's R50: ``[~, o] = unique(P); interp1(P(o), R(o), max(P(o(1)), precision))``; NaN if unreachable.

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import recall_at_precision
        >>> r = torch.tensor([1.0, 0.8, 0.4], dtype=torch.float64)
        >>> p = torch.tensor([0.25, 0.5, 1.0], dtype=torch.float64)
        >>> round(float(recall_at_precision(r, p)), 4)  # precision 0.5 at recall 0.8
        0.8
        >>> round(float(recall_at_precision(r, p, 0.75)), 4)  # halfway between (0.5, 0.8) and (1.0, 0.4)
        0.6
    """
    pu, idx = _unique_index(p, "first")
    q = torch.clamp(torch.tensor(precision, dtype=torch.float64, device=p.device), min=pu[0])
    if pu.numel() < 2:
        return torch.where(q == pu[0], r[idx[0]], torch.tensor(float("nan"), dtype=torch.float64, device=p.device))
    return _interp1(pu, r[idx], q.reshape(1))[0]


def recall_where_precision_first_reaches(r: Tensor, p: Tensor, precision: float = 0.5) -> Tensor:
    """Recall where precision first reaches ``precision`` from the lowest threshold (the curve's high-recall end):
    ``r[0]`` if ``p[0]`` reaches it, else linear between the first point that does and the one before; NaN if none.
    ``r``, ``p``: (K,) curves over increasing thresholds."""
    nan = torch.tensor(float("nan"), dtype=torch.float64, device=p.device)
    reach = p >= precision
    if not bool(reach.any()):
        return nan
    k = int(reach.to(torch.int64).argmax())
    if k == 0:
        return r[0].to(torch.float64)
    p0, p1, r0, r1 = p[k - 1], p[k], r[k - 1], r[k]
    return (r0 + (precision - p0) * (r1 - r0) / (p1 - p0)).to(torch.float64)


def pyedgeeval_average_precision(r: Tensor, p: Tensor) -> Tensor:
    """pyEdgeEval 0.2.8's ``AP``: ``sum over t in arange(0, 1, 0.01) of max(p[r >= t], initial=0) / 101``."""
    t = torch.arange(100, dtype=torch.float64, device=r.device) * 0.01  # numpy's arange(0, 1, 0.01): i * 0.01
    above = r[None, :] >= t[:, None]
    best = torch.where(above, p[None, :], torch.zeros((), dtype=p.dtype, device=p.device)).amax(dim=1)
    return (best / 101).sum()


def check_unique_occurrence(unique_occurrence: object) -> None:
    check_choice(unique_occurrence, "unique_occurrence", get_args(UniqueOccurrence))


def boundary_summary(
    cnt_r: Tensor,
    sum_r: Tensor,
    cnt_p: Tensor,
    sum_p: Tensor,
    thresholds: Tensor,
    ois_counts: Tensor,
    *,
    unique_occurrence: UniqueOccurrence = "last",
) -> dict[str, object]:
    """ODS / OIS / AP / R50 and the PR curve from dataset counts.

    Args:
        cnt_r, sum_r, cnt_p, sum_p: (K,) counts summed over the images, per threshold.
        thresholds: (K,) threshold (or level) values.
        ois_counts: (4,) pooled per-image best-threshold counts ``[cntR, sumR, cntP, sumP]``.
        unique_occurrence: which duplicate recall AP keeps, see the module doc.

    Returns:
        ``{"ods": {"threshold", "recall", "precision", "f"}, "ois": {"recall", "precision", "f"}, "ap",
        "ap_pyedgeeval", "r50", "r50_dollar", "thresholds", "recall", "precision", "f"}``: 0-d float64 tensors and
        (K,) curves (see the module doc for the two APs and the two R50s).

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import boundary_summary, ois_counts
        >>> # two images at thresholds 0.25 and 0.75: (B, K) counts
        >>> cnt_r, sum_r = torch.tensor([[4, 3], [2, 1]]), torch.tensor([[4, 4], [2, 2]])
        >>> cnt_p, sum_p = torch.tensor([[4, 3], [2, 1]]), torch.tensor([[8, 3], [2, 1]])
        >>> res = boundary_summary(cnt_r.sum(0), sum_r.sum(0), cnt_p.sum(0), sum_p.sum(0),
        ...                        torch.tensor([0.25, 0.75], dtype=torch.float64),
        ...                        ois_counts(cnt_r, sum_r, cnt_p, sum_p))
        >>> [round(v, 4) for v in res["recall"].tolist()], [round(v, 4) for v in res["precision"].tolist()]
        ([1.0, 0.6667], [0.6, 1.0])
        >>> [round(v, 4) for v in res["f"].tolist()]
        [0.75, 0.8]
        >>> round(float(res["ods"]["f"]), 4), round(float(res["ois"]["f"]), 4)  # ODS between the thresholds
        (0.8199, 0.9091)
    """
    check_unique_occurrence(unique_occurrence)
    r, p, f = precision_recall_f(cnt_r, sum_r, cnt_p, sum_p)
    t, br, bp, bf = best_f_interpolated(thresholds, r, p)
    oir, oip, oif = precision_recall_f(*ois_counts.unbind(-1))
    r50, r50_dollar = recall_where_precision_first_reaches(r, p), recall_at_precision(r, p)
    return {
        "ods": {"threshold": t, "recall": br, "precision": bp, "f": bf},
        "ois": {"recall": oir, "precision": oip, "f": oif},
        "ap": average_precision(r, p, unique_occurrence=unique_occurrence),
        "ap_pyedgeeval": pyedgeeval_average_precision(r, p),
        "r50": r50,
        "r50_dollar": r50_dollar,
        "thresholds": thresholds.to(device=r.device, dtype=torch.float64),
        "recall": r,
        "precision": p,
        "f": f,
    }


def ois_counts(cnt_r: Tensor, sum_r: Tensor, cnt_p: Tensor, sum_p: Tensor) -> Tensor:
    """(4,) sums over images of the counts at each image's first threshold of maximal F; inputs (B, K).

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import ois_counts
        >>> cnt_r, sum_r = torch.tensor([[4, 3], [2, 1]]), torch.tensor([[4, 4], [2, 2]])
        >>> cnt_p, sum_p = torch.tensor([[4, 3], [2, 1]]), torch.tensor([[8, 3], [2, 1]])
        >>> # image 1: F = 2/3, 6/7 -> threshold 2 (3, 4, 3, 3); image 2: F = 1, 2/3 -> threshold 1 (2, 2, 2, 2)
        >>> ois_counts(cnt_r, sum_r, cnt_p, sum_p).tolist()
        [5, 6, 5, 5]
    """
    _, _, f = precision_recall_f(cnt_r, sum_r, cnt_p, sum_p)
    k = f.argmax(dim=-1, keepdim=True)  # first maximum, as ``ff = find(F == max(F)); ff(1)``
    stacked = torch.stack([cnt_r, sum_r, cnt_p, sum_p], dim=-1).to(torch.int64)  # (B, K, 4)
    return stacked.gather(1, k[..., None].expand(-1, 1, 4)).squeeze(1).sum(0)
