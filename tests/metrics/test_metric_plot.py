"""``Metric.plot()`` returns a figure for every exported Metric class (issue 14): curves drawn as curves with their
axes, scalars as torchmetrics draws them."""

from __future__ import annotations

import inspect
import warnings

import pytest
import torch

pytest.importorskip("matplotlib")
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from torchmetrics import Metric

import segmetrics_torch as S

METRICS = sorted(
    name for name in S.__all__ if inspect.isclass(getattr(S, name)) and issubclass(getattr(S, name), Metric)
)


def _feed(name: str, metric) -> None:
    g = torch.zeros(1, 16, 16, dtype=torch.uint8)
    g[0, 4:12, 3:10] = 255
    p = (g.float() * 0.6 + 30).to(torch.uint8)
    labels = torch.zeros(1, 16, 16, dtype=torch.int64)
    labels[0, :, 8:] = 1
    if name == "SemanticBoundaryPR":  # two classes: a soft map each, and their boundaries
        soft = torch.zeros(1, 2, 16, 16)
        soft[0, 0, 8, 2:14] = 0.8
        soft[0, 1, 2:14, 6] = 0.7
        metric.update(soft, soft > 0.5)
        return
    if name == "VideoObjectSegmentation":  # one sequence of 5 frames, one object
        seq = torch.zeros(5, 16, 16, dtype=torch.uint8)
        seq[:, 4:12, 3:10] = 1
        metric.update(seq, seq)
        return
    if name == "BoundaryPR":
        soft = torch.zeros(1, 16, 16)
        soft[0, 8, 2:14] = 0.8
        boundary = torch.zeros(1, 1, 16, 16, dtype=torch.bool)
        boundary[0, 0, 8, 2:14] = True
        metric.update(soft, boundary)
    elif name == "MorphologicalBoundaryF":
        metric.update(g > 128, g > 128)
    elif name in ("HierarchyMeasures", "RegionBenchmark"):
        ucm2 = torch.zeros(1, 33, 33)
        ucm2[0, :, 16] = 0.7
        ucm2[0, 16, :] = 0.3
        metric.update(ucm2, labels[:, None])
    elif name == "ProposalRecall":
        metric.update((g[0] > 128)[None], (g[0] > 128)[None])
    elif name == "CamouflageContextMeasure":
        metric.update(p, g, images=torch.zeros(1, 16, 16, 3, dtype=torch.uint8))
    elif metric.__module__.endswith("partition"):
        metric.update(labels, labels[:, None])
    elif metric.__module__.endswith("surface"):  # the boundary-distance measures take masks
        metric.update(p > 100, g > 128)
    else:
        metric.update(p, g)


@pytest.mark.parametrize("name", METRICS)
def test_plot_returns_a_figure(name):
    required = {"NormalizedSurfaceDistance": ((), {"tolerance": 1.0}), "SemanticBoundaryPR": ((2,), {})}
    args, kwargs = required.get(name, ((), {}))
    metric = getattr(S, name)(*args, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _feed(name, metric)
        fig, _ = metric.plot()
    assert isinstance(fig, plt.Figure)
    plt.close(fig)


def test_curves_have_curve_axes():
    f = S.FMeasure()
    _feed("FMeasure", f)
    fig, ax = f.plot()
    assert ax.get_xlabel() == "threshold" and len(ax.get_lines()) == 1 and len(ax.get_lines()[0].get_xdata()) == 256
    plt.close(fig)
    b = S.BoundaryPR()
    _feed("BoundaryPR", b)
    fig, ax = b.plot()
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("recall", "precision")
    plt.close(fig)
    r = S.ProposalRecall()
    _feed("ProposalRecall", r)
    fig, ax = r.plot()
    assert ax.get_xlabel() == "number of proposals" and ax.get_xscale() == "log"
    plt.close(fig)
