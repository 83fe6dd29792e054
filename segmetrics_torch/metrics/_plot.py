"""``Metric.plot()`` for every Metric of the package: curves as curves, scalars as torchmetrics plots them.

torchmetrics' ``plot`` draws a value per step: a scalar, or a dict of scalars. The curve families' results are
nested dicts of curves (a 256-point F-measure curve, a BSDS precision / recall curve, recall against the number of
proposals), which torchmetrics draws as 256 "steps" or rejects (``'dict' object has no attribute 'numel'``). Here a
result is looked at once and drawn as what it is:

* precision and recall curves (BSDS boundaries, ``ForegroundMeasures``' F-measure, hierarchies' Fb / Fop / Fr):
  a PR curve, recall on x, both axes [0, 1], one line per curve;
* a 256-point foreground curve (F, E, IoU, Dice, the threshold measures): the value against the threshold (entry i
  binarises at ``trunc(255 p) >= 255 - i``, so its threshold is ``(255 - i) / 255``);
* proposal recall: recall at J > 0.5 / 0.7 / 0.85 and the average recall against the number of proposals (log x);
* region benchmark curves against the hierarchy's parameters;
* anything else (scalars, or dicts of scalars): flattened to ``{"ods/f": value, ...}`` and handed to torchmetrics'
  own ``_plot`` (bars of a single value, lines over steps for a list of results).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

__all__ = ["plot_metric"]

_FOREGROUND_POINTS = 256


def _is_curve(value: Any) -> bool:
    return isinstance(value, Tensor) and value.ndim == 1 and value.numel() > 1


def _flat_scalars(value: Any, prefix: str = "") -> dict[str, Tensor]:
    out: dict[str, Tensor] = {}
    if isinstance(value, Mapping):
        for key, item in value.items():
            out.update(_flat_scalars(item, f"{prefix}{key}/"))
    elif isinstance(value, Tensor) and value.numel() == 1:
        out[prefix.rstrip("/")] = value.reshape(()).detach().cpu()
    return out


def _pr_lines(value: Mapping[str, Any], name: str) -> dict[str, tuple[Tensor, Tensor]]:
    if _is_curve(value.get("precision")) and _is_curve(value.get("recall")):
        return {name: (value["recall"], value["precision"])}
    lines: dict[str, tuple[Tensor, Tensor]] = {}
    for key, item in value.items():
        if isinstance(item, Mapping) and _is_curve(item.get("precision")) and _is_curve(item.get("recall")):
            lines[str(key)] = (item["recall"], item["precision"])
    return lines


def _threshold_x(n: int) -> tuple[Tensor, str]:
    if n == _FOREGROUND_POINTS:
        return (255 - torch.arange(n, dtype=torch.float64)) / 255, "threshold"
    return torch.arange(n, dtype=torch.float64), "threshold index"


def _curve_lines(value: Mapping[str, Any], name: str) -> dict[str, Tensor]:
    for key in ("curve", "dynamic"):
        if _is_curve(value.get(key)):
            return {name: value[key]}
    lines = {}
    for key, item in value.items():
        if isinstance(item, Mapping):
            for inner in ("curve", "dynamic"):
                if _is_curve(item.get(inner)):
                    lines[str(key)] = item[inner]
                    break
    return lines


def plot_metric(metric: Any, val: Any = None, ax: Any = None) -> tuple[Any, Any]:
    """Draw ``val`` (default: ``metric.compute()``) on ``ax`` (default: a new figure); ``(figure, axes)``.

    Needs matplotlib (``pip install 'segmetrics-torch[plot]'``), as torchmetrics' ``plot``.
    """
    val = metric.compute() if val is None else val
    name = type(metric).__name__
    if isinstance(val, Tensor) or (isinstance(val, Sequence) and not isinstance(val, Mapping)):
        if isinstance(val, Tensor) and val.numel() > 1:
            val = {name: val}  # a bare curve: drawn as a curve below
        else:
            items = (
                [_flat_scalars(v) if isinstance(v, Mapping) else v for v in val] if isinstance(val, Sequence) else val
            )
            return metric._plot(items, ax)
    if not isinstance(val, Mapping):
        raise TypeError(f"Expected `val` to be a result of {name}.compute(), but got {type(val).__name__}.")

    import matplotlib.pyplot as plt

    def axes() -> tuple[Any, Any]:
        if ax is not None:
            return ax.get_figure(), ax
        return plt.subplots()

    def finish(
        fig: Any,
        axis: Any,
        xlabel: str,
        ylabel: str,
        xlim: tuple[float, float] | None = None,
        ylim: tuple[float, float] | None = (0.0, 1.0),
        log: bool = False,
    ) -> tuple[Any, Any]:
        axis.set_xlabel(xlabel)
        axis.set_ylabel(ylabel)
        if log:
            axis.set_xscale("log")
        if xlim is not None:
            axis.set_xlim(*xlim)
        if ylim is not None:
            axis.set_ylim(*ylim)
        axis.grid(True, alpha=0.3)
        axis.set_title(name)
        if len(axis.get_lines()) > 1:
            axis.legend(loc="best", fontsize="small")
        return fig, axis

    def host(t: Tensor | np.ndarray) -> np.ndarray:
        return t.detach().to("cpu", torch.float64).numpy() if isinstance(t, Tensor) else np.asarray(t, np.float64)

    if _is_curve(val.get("counts")):  # object proposals: recall against the number of proposals
        fig, axis = axes()
        x = host(val.get("num_proposals", val["counts"]))
        for key, label in (
            ("recall_50", "recall J>0.5"),
            ("recall_70", "recall J>0.7"),
            ("recall_85", "recall J>0.85"),
            ("average_recall", "average recall"),
        ):
            if _is_curve(val.get(key)):
                axis.plot(x, host(val[key]), label=label)
        return finish(fig, axis, "number of proposals", "recall", log=True)

    pr = _pr_lines(val, name) if "curve" not in val else {}
    if pr:
        fig, axis = axes()
        for label, (recall, precision) in pr.items():
            axis.plot(host(recall), host(precision), label=label)
        return finish(fig, axis, "recall", "precision", xlim=(0.0, 1.0))

    curves = _curve_lines(val, name)
    if curves:
        fig, axis = axes()
        parameters = val.get("parameters")
        xlabel = "threshold"
        for label, curve in curves.items():
            if isinstance(parameters, Tensor) and _is_curve(parameters) and parameters.numel() == curve.numel():
                along, xlabel = parameters.to(torch.float64), "hierarchy parameter"
            else:
                along, xlabel = _threshold_x(curve.numel())
            axis.plot(host(along), host(curve), label=label)
        ylim = None if any(float(c.nan_to_num().max()) > 1 for c in curves.values()) else (0.0, 1.0)
        return finish(fig, axis, xlabel, "value", ylim=ylim)

    return metric._plot(_flat_scalars(val), ax)
