"""Plain numpy/scipy oracles of the boundary measures, written for readability (loops allowed).

* BSR ``bench/benchmarks``: ``seg2bmap.m``, ``seg2bdry.m``, ``evaluation_bdry_image.m``, ``collect_eval_bdry.m``.
* Thinning: the conditions G1, G2, G3/G3' of Lam, Lee & Suen (TPAMI 1992), evaluated directly on the neighbour
  arrays (no lookup table), two parallel subiterations until nothing changes.
* Correspondence: the lexicographic optimum "maximum number of pairs, then least total cost" (cost
  ``rint(100 * distance)``) solved exactly with ``scipy.optimize.linear_sum_assignment`` on every connected
  component of the candidate graph (non-edges cost more than any matching). Optimal matchings can differ in *which*
  pixels they pair when costs tie, so compare the cardinality and the total cost, not the pairs.
* DAVIS ``f_boundary.m`` with ``scipy.ndimage.binary_dilation``.

Depends on numpy and scipy only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import ndimage
from scipy.optimize import linear_sum_assignment
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

__all__ = [
    "collect_eval_bdry",
    "correspond",
    "evaluation_bdry_image",
    "f_boundary",
    "matlab_linspace",
    "seg2bdry_image_size",
    "seg2bmap",
    "thin",
]


def matlab_linspace(d1: float, d2: float, n: int) -> np.ndarray:
    """MATLAB ``linspace``: ``d1 + (k * (d2 - d1)) / (n - 1)``, ends exact."""
    k = np.arange(n, dtype=np.float64)
    y = d1 + (k * (d2 - d1)) / (n - 1) if n > 1 else np.array([d2], dtype=np.float64)
    y[0], y[-1] = (d1, d2) if n > 1 else (d2, d2)
    return y


def seg2bmap(seg: np.ndarray) -> np.ndarray:
    """``seg2bmap.m`` (same size): label differs from the E, S or SE neighbour; special last row / column."""
    seg = np.asarray(seg)
    e = np.zeros_like(seg)
    s = np.zeros_like(seg)
    se = np.zeros_like(seg)
    e[:, :-1] = seg[:, 1:]
    s[:-1, :] = seg[1:, :]
    se[:-1, :-1] = seg[1:, 1:]
    b = (seg != e) | (seg != s) | (seg != se)
    b[-1, :] = seg[-1, :] != e[-1, :]
    b[:, -1] = seg[:, -1] != s[:, -1]
    b[-1, -1] = False
    return b


def seg2bdry_image_size(seg: np.ndarray) -> np.ndarray:
    """BSR ``seg2bdry(seg, 'imageSize')``: the double-size boundary grid sampled at ``(3:2:end, 3:2:end)``."""
    seg = np.asarray(seg)
    tx, ty = seg.shape
    bdry = np.zeros((2 * tx + 1, 2 * ty + 1))
    edgels_v = np.zeros((tx, ty), bool)
    edgels_v[:-1, :] = seg[:-1, :] != seg[1:, :]
    edgels_h = np.zeros((tx, ty), bool)
    edgels_h[:, :-1] = seg[:, :-1] != seg[:, 1:]
    bdry[2::2, 1::2] = edgels_v  # MATLAB bdry(3:2:end, 2:2:end)
    bdry[1::2, 2::2] = edgels_h  # MATLAB bdry(2:2:end, 3:2:end)
    bdry[2:-1:2, 2:-1:2] = np.maximum(
        np.maximum(edgels_h[:-1, :-1], edgels_h[1:, :-1]), np.maximum(edgels_v[:-1, :-1], edgels_v[:-1, 1:])
    )
    bdry[0, :] = bdry[1, :]
    bdry[:, 0] = bdry[:, 1]
    bdry[-1, :] = bdry[-2, :]
    bdry[:, -1] = bdry[:, -2]
    return bdry[2::2, 2::2] > 0


def thin(image: np.ndarray) -> np.ndarray:
    """Two-subiteration parallel thinning to convergence (skimage ``thin`` / MATLAB ``bwmorph(.., 'thin', Inf)``)."""
    img = np.pad(np.asarray(image, dtype=bool), 1)
    h, w = img.shape[0] - 2, img.shape[1] - 2

    def neighbours() -> list[np.ndarray]:
        # x1..x8: E, NE, N, NW, W, SW, S, SE
        steps = [(0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1), (1, 0), (1, 1)]
        return [img[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w] for dy, dx in steps]

    while True:
        changed = False
        for sub in (1, 2):
            x = neighbours()

            def px(i: int, x: list[np.ndarray] = x) -> np.ndarray:  # 1-based, cyclic
                return x[(i - 1) % 8]

            crossing = sum((~px(i) & (px(i + 1) | px(i + 2))).astype(int) for i in (1, 3, 5, 7))
            n1 = sum((px(i) | px(i + 1)).astype(int) for i in (1, 3, 5, 7))
            n2 = sum((px(i) | px(i + 1)).astype(int) for i in (2, 4, 6, 8))
            g2 = (np.minimum(n1, n2) >= 2) & (np.minimum(n1, n2) <= 3)
            if sub == 1:
                g3 = ~((px(2) | px(3) | ~px(8)) & px(1))
            else:
                g3 = ~((px(6) | px(7) | ~px(4)) & px(5))
            delete = img[1:-1, 1:-1] & (crossing == 1) & g2 & g3
            if delete.any():
                img[1:-1, 1:-1] &= ~delete
                changed = True
        if not changed:
            return img[1:-1, 1:-1].copy()


def correspond(machine: np.ndarray, gt: np.ndarray, max_dist_px: float) -> tuple[np.ndarray, np.ndarray, int]:
    """Optimal correspondence: most pairs within ``max_dist_px``, then least total ``rint(100 * distance)``.

    Returns ``(matched_machine, matched_gt, total_cost)``: bool maps of the matched pixels and the cost.
    """
    my, mx = np.nonzero(machine)
    gy, gx = np.nonzero(gt)
    rows, cols, costs = [], [], []
    for i in range(len(my)):
        d2 = (gy - my[i]) ** 2 + (gx - mx[i]) ** 2
        for j in np.nonzero(d2 <= max_dist_px * max_dist_px)[0]:
            rows.append(i)
            cols.append(j)
            costs.append(int(np.rint(100 * np.sqrt(d2[j]))))
    matched_m = np.zeros(machine.shape, bool)
    matched_g = np.zeros(gt.shape, bool)
    if not rows:
        return matched_m, matched_g, 0
    rows_a, cols_a, costs_a = np.array(rows), np.array(cols), np.array(costs, np.int64)
    n1, n2 = len(my), len(gy)
    graph = coo_matrix((np.ones(len(rows_a)), (rows_a, n1 + cols_a)), shape=(n1 + n2, n1 + n2))
    _, label = connected_components(graph, directed=False)
    big = int(costs_a.max() + 1) * (len(rows_a) + 1)  # a missing pair costs more than any whole matching
    total = 0
    for comp in np.unique(label[rows_a]):
        sel = label[rows_a] == comp
        r_ids, r_inv = np.unique(rows_a[sel], return_inverse=True)
        c_ids, c_inv = np.unique(cols_a[sel], return_inverse=True)
        cost = np.full((len(r_ids), len(c_ids)), big, np.int64)
        cost[r_inv, c_inv] = costs_a[sel]
        a, b = linear_sum_assignment(cost)
        real = cost[a, b] < big
        matched_m[my[r_ids[a[real]]], mx[r_ids[a[real]]]] = True
        matched_g[gy[c_ids[b[real]]], gx[c_ids[b[real]]]] = True
        total += int(cost[a, b][real].sum())
    return matched_m, matched_g, total


def evaluation_bdry_image(
    pb: np.ndarray | list[np.ndarray],
    gts: list[np.ndarray],
    thresholds: np.ndarray,
    max_dist: float = 0.0075,
    thin_pb: bool = True,
) -> np.ndarray:
    """BSR ``evaluation_bdry_image.m``: per threshold ``[cntR, sumR, cntP, sumP]`` (K, 4).

    ``pb`` is a soft map (machine map ``pb >= t``) or a list of K binary machine maps (one per level).

    Ties: where an annotator admits several maximum matchings of least cost, :func:`correspond` takes the one scipy's
    ``linear_sum_assignment`` returns, the fast path the first in pixel order; ``cntP`` (the union over annotators)
    may then differ by a few pixels, ``cntR``, ``sumR`` and ``sumP`` never (docs/boundaries.md).
    """
    h, w = gts[0].shape
    max_dist_px = max_dist * np.hypot(h, w) if max_dist < 1 else float(max_dist)
    out = np.zeros((len(thresholds), 4), np.int64)
    for k, t in enumerate(thresholds):
        bmap = np.asarray(pb[k], bool) if isinstance(pb, list) else pb >= t
        if thin_pb:
            bmap = thin(bmap)
        acc = np.zeros(bmap.shape, bool)
        for g in gts:
            m1, m2, _ = correspond(bmap, g, max_dist_px)
            acc |= m1
            out[k, 0] += m2.sum()
            out[k, 1] += np.asarray(g, bool).sum()
        out[k, 2] = acc.sum()
        out[k, 3] = bmap.sum()
    return out


def _fmeasure(r: Any, p: Any) -> Any:  # floats or arrays, elementwise
    return 2 * p * r / (p + r + ((p + r) == 0))


def _max_f(thresh: np.ndarray, r: np.ndarray, p: np.ndarray) -> tuple[float, float, float, float]:
    best = (thresh[0], r[0], p[0], _fmeasure(r[0], p[0]))
    for i in range(1, len(thresh)):
        for d in matlab_linspace(0.0, 1.0, 100):
            t = thresh[i] * d + thresh[i - 1] * (1 - d)
            rr = r[i] * d + r[i - 1] * (1 - d)
            pp = p[i] * d + p[i - 1] * (1 - d)
            f = _fmeasure(rr, pp)
            if f > best[3]:
                best = (t, rr, pp, f)
    return best


def _unique(x: np.ndarray, occurrence: str) -> tuple[np.ndarray, np.ndarray]:
    values = np.unique(x)
    idx = []
    for v in values:
        where = np.nonzero(x == v)[0]
        idx.append(where[0] if occurrence == "first" else where[-1])
    return values, np.array(idx, int)


def collect_eval_bdry(
    thresholds: np.ndarray, tables: list[np.ndarray], unique_occurrence: str = "last"
) -> dict[str, object]:
    """BSR ``collect_eval_bdry.m`` from per-image ``[cntR, sumR, cntP, sumP]`` tables, plus two R50s (where precision
    first reaches 0.5; Dollar's ``edgesEvalDir.m``) and pyEdgeEval's interpolated AP.

    Returns ``{"ods": (T, R, P, F), "ois": (R, P, F), "ap", "r50", "r50_dollar", "ap_pyedgeeval",
    "per_image": [(T, R, P, F), ...], "R", "P", "F"}``.
    """
    total = np.zeros((len(thresholds), 4), np.float64)
    ois = np.zeros(4, np.float64)
    per_image = []
    for tab in (np.asarray(t, np.float64) for t in tables):
        cnt_r, sum_r, cnt_p, sum_p = tab.T
        r = cnt_r / (sum_r + (sum_r == 0))
        p = cnt_p / (sum_p + (sum_p == 0))
        f = _fmeasure(r, p)
        per_image.append(_max_f(thresholds, r, p))
        total += tab
        k = np.nonzero(f == f.max())[0][0]
        ois += tab[k]
    cnt_r, sum_r, cnt_p, sum_p = total.T
    r = cnt_r / (sum_r + (sum_r == 0))
    p = cnt_p / (sum_p + (sum_p == 0))
    f = _fmeasure(r, p)
    ods = _max_f(thresholds, r, p)
    r_max = ois[0] / (ois[1] + (ois[1] == 0))
    p_max = ois[2] / (ois[3] + (ois[3] == 0))
    ru, ind = _unique(r, unique_occurrence)
    if len(ru) > 1:
        ri = np.arange(101) / 100
        p_int = np.interp(ri, ru, p[ind])
        p_int[(ri < ru[0]) | (ri > ru[-1])] = np.nan
        ap = float(np.nansum(p_int) * 0.01)
    else:
        ap = 0.0
    pu, o = _unique(p, "first")
    q = max(pu[0], 0.5)
    if q > pu[-1]:
        r50_dollar = float("nan")
    elif len(pu) == 1:
        r50_dollar = float(r[o[0]])
    else:
        r50_dollar = float(np.interp(q, pu, r[o]))
    # R50 where precision first reaches 0.5 from the lowest threshold (see functional/boundary/summary.py)
    r50 = float("nan")
    for k in range(len(p)):
        if p[k] >= 0.5:
            r50 = float(r[0]) if k == 0 else float(r[k - 1] + (0.5 - p[k - 1]) * (r[k] - r[k - 1]) / (p[k] - p[k - 1]))
            break
    # pyEdgeEval 0.2.8's AP (its calculate_metrics.py), 100 terms over 101
    ap_pyedgeeval = sum(float(np.max(p[r >= t], initial=0)) / 101 for t in np.arange(0, 1, 0.01))
    return {
        "ods": ods,
        "ois": (r_max, p_max, _fmeasure(r_max, p_max)),
        "ap": ap,
        "r50": r50,
        "r50_dollar": r50_dollar,
        "ap_pyedgeeval": ap_pyedgeeval,
        "per_image": per_image,
        "R": r,
        "P": p,
        "F": f,
    }


def f_boundary(foreground_mask: np.ndarray, gt_mask: np.ndarray, bound_th: float = 0.008) -> tuple[float, float, float]:
    """DAVIS ``f_boundary.m`` for one pair of binary masks: ``(F, precision, recall)``."""
    h, w = foreground_mask.shape
    bound_pix = bound_th if bound_th >= 1 else np.ceil(bound_th * np.sqrt(h * h + w * w))
    fg_boundary = seg2bmap(np.asarray(foreground_mask, bool))
    gt_boundary = seg2bmap(np.asarray(gt_mask, bool))
    r = int(np.ceil(bound_pix))
    yy, xx = np.mgrid[-r : r + 1, -r : r + 1]
    disk = xx**2 + yy**2 <= bound_pix**2
    fg_dil = ndimage.binary_dilation(fg_boundary, structure=disk)
    gt_dil = ndimage.binary_dilation(gt_boundary, structure=disk)
    gt_match = gt_boundary & fg_dil
    fg_match = fg_boundary & gt_dil
    return davis_f(int(fg_match.sum()), int(fg_boundary.sum()), int(gt_match.sum()), int(gt_boundary.sum()))


def davis_f(fg_matched: int, n_fg: int, gt_matched: int, n_gt: int) -> tuple[float, float, float]:
    """(F, precision, recall) from DAVIS' boundary counts, with its empty-boundary rules: no predicted boundary
    gives precision 1 and recall 0 (both 1 when the ground truth has none either), no ground-truth boundary
    precision 0 and recall 1."""
    if n_fg == 0 and n_gt > 0:
        precision, recall = 1.0, 0.0
    elif n_fg > 0 and n_gt == 0:
        precision, recall = 0.0, 1.0
    elif n_fg == 0 and n_gt == 0:
        precision, recall = 1.0, 1.0
    else:
        precision, recall = fg_matched / n_fg, gt_matched / n_gt
    f = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return float(f), float(precision), float(recall)
