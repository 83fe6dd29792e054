"""Dataset summaries of hierarchies: SEISM's ODS/OIS/AP and the Berkeley region benchmark (``collect_eval_reg.m``).

Per-image results at L parameters (thresholds or region counts) are first reduced to sums over images
(:func:`hierarchy_state`; the fields of the Metric states, all reduced by ``sum``) and then summarised
(:func:`summarize_hierarchy`), so the functional and Metric paths give the same numbers.

SEISM (``src/scripts/gather_measure.m``, ``general_ods.m``, ``general_ois.m``, ``general_ap.m``), no interpolation:

* ``fb``: per parameter the counts are pooled over images, then (R, P) with SEISM's zero conventions and F.
  ``fop``, ``fr``: mean P and mean R over images, then F of the means. Other measures: the mean over images.
* ODS: the best dataset value over parameters (first best). OIS: per image its first best parameter by its own
  value (F for fb/fop/fr); fb pools the counts there, fop/fr average P and R there, the others average the values.
* AP (fb, fop, fr): ``interp1`` of the (recall, precision) curve at 0:0.01:1 over unique recalls, as BSR.
* "best" is the maximum, except for ``voi`` (a distance), where it is the minimum: SEISM's scripts take the maximum
  for every measure, which is meaningless for a distance; use ``nvoi`` for SEISM's similarity form.

Berkeley region benchmark (BSR ``collect_eval_reg.m``): covering ``R = sum cntR / sum sumR`` per threshold; ODS
its maximum (first); OIS pools each image's counts at its *last* best threshold; Best =
``sum cntR_best / sum sumR``. PRI and VoI: ODS the best mean over images (max / min, first), OIS the mean of the
per-image best values.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from ..boundary.summary import UniqueOccurrence, average_precision, check_unique_occurrence
from .segmentation import fb_precision_recall
from .tables import MEASURES

__all__ = ["hierarchy_state", "summarize_hierarchy"]

PR_MEASURES = ("fb", "fop", "fr")
LOWER_IS_BETTER = ("voi",)
_FB = ("fb_cnt_r", "fb_sum_r", "fb_cnt_p", "fb_sum_p")
_REG = ("reg_cnt_r", "reg_sum_r", "reg_cnt_p", "reg_sum_p")


def state_shapes(measures: tuple[str, ...], num_levels: int, region_benchmark: bool) -> dict[str, tuple]:
    """Names and shapes of the summed states for ``measures`` (float64, except the int64 ``fb_*`` counts)."""
    shapes: dict[str, tuple] = {"count": ()}
    for m in measures:
        if m == "fb":
            shapes.update(fb_counts=(4, num_levels), fb_ois_counts=(4,))
        elif m in ("fop", "fr"):
            shapes.update({f"{m}_precision_sum": (num_levels,), f"{m}_recall_sum": (num_levels,), f"{m}_ois": (2,)})
        else:
            shapes.update({f"{m}_sum": (num_levels,), f"{m}_ois": ()})
    if region_benchmark:
        shapes.update(reg_counts=(4, num_levels), reg_ois_counts=(4,), reg_best=())
    return shapes


def _first_best(values: Tensor, lower: bool = False) -> Tensor:
    # torch.argmax / argmin return the first occurrence, as MATLAB's max / min
    return values.argmin(-1) if lower else values.argmax(-1)


def _last_best(values: Tensor) -> Tensor:
    return values.shape[-1] - 1 - values.flip(-1).argmax(-1)


def _take(values: Tensor, idx: Tensor) -> Tensor:
    return values.gather(-1, idx.unsqueeze(-1)).squeeze(-1)


def hierarchy_state(results: dict[str, Tensor], measures: tuple[str, ...], region_benchmark: bool) -> dict[str, Tensor]:
    """Sums over the images of per-image (B, L) results (from :func:`.hierarchy.hierarchy_measures`).

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import hierarchy_measures, hierarchy_state
        >>> gt = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1]]])  # (K=1, H, W): left and right halves
        >>> levels = torch.stack([torch.zeros_like(gt[0]), gt[0]])  # (L=2, H, W): one region, then the halves
        >>> res = hierarchy_measures(torch.stack([levels, levels]), torch.stack([gt, gt]), input_format="stack",
        ...                          thresholds=2, measures=["voi"])  # the same image twice
        >>> state = hierarchy_state(res, ("voi",), region_benchmark=True)
        >>> float(state["count"]), [round(v, 4) for v in state["voi_sum"].tolist()], float(state["voi_ois"])
        (2.0, [2.0, 0.0], 0.0)
        >>> state["reg_counts"][0].tolist()  # covering counts summed over the images, per level
        [8.0, 16.0]
    """
    any_key = next(k for k in results if k != "thresholds")
    dev = results[any_key].device
    n_img = results[any_key].shape[0]
    state: dict[str, Tensor] = {"count": torch.tensor(float(n_img), dtype=torch.float64, device=dev)}
    for m in measures:
        if m == "fb":
            counts = torch.stack([results[k] for k in _FB])  # (4, B, L)
            f = results["fb"]
            idx = _first_best(f)
            state["fb_counts"] = counts.sum(1)
            state["fb_ois_counts"] = _take(counts, idx.expand(4, -1)).sum(1)
        elif m in ("fop", "fr"):
            p, r = results[f"{m}_precision"], results[f"{m}_recall"]
            idx = _first_best(results[m])
            state[f"{m}_precision_sum"] = p.sum(0)
            state[f"{m}_recall_sum"] = r.sum(0)
            state[f"{m}_ois"] = torch.stack([_take(p, idx).sum(), _take(r, idx).sum()])
        else:
            v = results[m]
            state[f"{m}_sum"] = v.sum(0)
            best = v.min(-1).values if m in LOWER_IS_BETTER else v.max(-1).values
            state[f"{m}_ois"] = best.sum()
    if region_benchmark:
        counts = torch.stack([results[k] for k in _REG])
        r = counts[0] / (counts[1] + (counts[1] == 0).double())
        idx = _last_best(r)
        state["reg_counts"] = counts.sum(1)
        state["reg_ois_counts"] = _take(counts, idx.expand(4, -1)).sum(1)
        state["reg_best"] = results["reg_cnt_r_best"].sum()
    return state


def _f(p: Tensor, r: Tensor) -> Tensor:
    s = p + r
    return torch.where(s > 0, 2 * p * r / torch.where(s > 0, s, 1.0), 0.0)


def summarize_hierarchy(
    state: dict[str, Tensor],
    parameters: Tensor,
    measures: tuple[str, ...],
    *,
    region_benchmark: bool = True,
    unique_occurrence: UniqueOccurrence = "first",
) -> dict[str, dict[str, Any]]:
    """Dataset summaries from summed states.

    Args:
        state: sums as :func:`hierarchy_state` (or a Metric's states).
        parameters: (L,) the thresholds (or region counts) of the levels, reported at the ODS.
        measures: the measures present in ``state``.
        region_benchmark: also summarise the ``reg_*`` states.
        unique_occurrence: which of equal recalls the AP keeps (MATLAB ``unique``: "first" in current MATLAB, as
            SEISM 2018 ran; "last" in MATLAB before R2013a).

    Returns:
        per measure a dict: ``ods``, ``ods_parameter``, ``ois`` and ``curve`` (L,); for fb/fop/fr also ``ap``,
        ``precision``, ``recall`` (L,), ``ods_precision``, ``ods_recall``, ``ois_precision``, ``ois_recall``. Key
        ``region_benchmark``: ``covering`` (ods, ods_parameter, ois, best, curve), ``pri`` and ``voi`` (ods,
        ods_parameter, ois, curve) as BSR's eval_cover.txt / eval_RI_VOI.txt.

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import hierarchy_measures, hierarchy_state, summarize_hierarchy
        >>> gt = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1]]])  # (K=1, H, W): left and right halves
        >>> levels = torch.stack([torch.zeros_like(gt[0]), gt[0]])  # (L=2, H, W): one region, then the halves
        >>> keys = ("pri", "voi")
        >>> res = hierarchy_measures(levels[None], gt[None], input_format="stack", thresholds=2, measures=keys)
        >>> out = summarize_hierarchy(hierarchy_state(res, keys, region_benchmark=True), res["thresholds"], keys)
        >>> [round(v, 4) for v in out["voi"]["curve"].tolist()], float(out["voi"]["ods"])  # best = lowest VoI
        ([1.0, 0.0], 0.0)
        >>> float(out["pri"]["ods"]), float(out["pri"]["ods_parameter"])
        (1.0, 2.0)
        >>> [float(v) for v in out["region_benchmark"]["covering"]["curve"]]
        [0.5, 1.0]
    """
    check_unique_occurrence(unique_occurrence)
    count = state["count"]
    if float(count) == 0:
        raise ValueError("No images were evaluated: the summary of an empty dataset is undefined.")
    out: dict[str, dict[str, Any]] = {}
    for m in measures:
        if m not in MEASURES:
            raise ValueError(f"Unknown measure {m!r}.")
        if m in PR_MEASURES:
            if m == "fb":
                f, p, r = fb_precision_recall(*state["fb_counts"])
                fo, po, ro = fb_precision_recall(*state["fb_ois_counts"])
            else:
                p, r = state[f"{m}_precision_sum"] / count, state[f"{m}_recall_sum"] / count
                f = _f(p, r)
                po, ro = state[f"{m}_ois"] / count
                fo = _f(po, ro)
            i = _first_best(f)
            out[m] = {
                "ods": f[i],
                "ods_parameter": parameters[i],
                "ods_precision": p[i],
                "ods_recall": r[i],
                "ois": fo,
                "ois_precision": po,
                "ois_recall": ro,
                "ap": average_precision(r, p, unique_occurrence=unique_occurrence),
                "curve": f,
                "precision": p,
                "recall": r,
            }
        else:
            curve = state[f"{m}_sum"] / count
            i = _first_best(curve, m in LOWER_IS_BETTER)
            out[m] = {"ods": curve[i], "ods_parameter": parameters[i], "ois": state[f"{m}_ois"] / count, "curve": curve}
    if region_benchmark:
        c = state["reg_counts"]
        cover = c[0] / (c[1] + (c[1] == 0).double())
        i = _first_best(cover)
        o = state["reg_ois_counts"]
        reg = {
            "covering": {
                "ods": cover[i],
                "ods_parameter": parameters[i],
                "ois": o[0] / (o[1] + (o[1] == 0).double()),
                "best": state["reg_best"] / c[1, 0],
                "curve": cover,
            }
        }
        for m in ("pri", "voi"):
            if m in out:
                reg[m] = out[m]
        out["region_benchmark"] = reg
    return out
