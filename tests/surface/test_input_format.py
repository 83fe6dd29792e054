"""TorchMetrics' ``input_format`` ("index", "one-hot", "mixed"): against TorchMetrics 1.9's own ``hausdorff_distance``
(2-D, square images: its issue 3300 makes non-square ones wrong) and, for every layout, equal to the same classes
given as index label maps (2-D and 3-D, every measure and the Metrics)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from segmetrics_torch.functional.surface import (
    boundary_iou,
    hausdorff_distance,
    surface_distance_measures,
)
from segmetrics_torch.metrics.surface import HausdorffDistance, SurfaceDistanceMeasures


def _labels(shape: tuple[int, ...], seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    coarse = (shape[0], *[max(1, n // 4) for n in shape[1:]])
    p = torch.randint(0, 3, coarse, generator=gen)
    g = torch.randint(0, 3, coarse, generator=gen)
    for dim in range(1, len(shape)):
        p, g = p.repeat_interleave(4, dim), g.repeat_interleave(4, dim)
    return p, g


def _one_hot(x: torch.Tensor, c: int = 3) -> torch.Tensor:
    return F.one_hot(x, c).movedim(-1, 1)


@pytest.mark.parametrize("layout", ["one-hot", "index", "mixed-pred-one-hot", "mixed-target-one-hot"])
@pytest.mark.parametrize("include_background", [False, True])
def test_matches_torchmetrics(layout, include_background):
    tm = pytest.importorskip("torchmetrics.functional.segmentation")
    lp, lg = _labels((2, 24, 24))
    p, g = {
        "one-hot": (_one_hot(lp), _one_hot(lg)),
        "index": (lp, lg),
        "mixed-pred-one-hot": (_one_hot(lp), lg),
        "mixed-target-one-hot": (lp, _one_hot(lg)),
    }[layout]
    fmt = layout if not layout.startswith("mixed") else "mixed"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = tm.hausdorff_distance(p, g, 3, include_background=include_background, input_format=fmt)
    ours = hausdorff_distance(
        p, g, num_classes=3, include_background=include_background, input_format=fmt, convention="torchmetrics"
    )
    np.testing.assert_allclose(ours.numpy(), ref.double().numpy(), rtol=1e-6)


def test_float_scores_are_arg_maxed_as_torchmetrics_does():
    tm = pytest.importorskip("torchmetrics.functional.segmentation")
    scores = torch.randn(2, 3, 24, 24, generator=torch.Generator().manual_seed(1))
    _, lg = _labels((2, 24, 24))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = tm.hausdorff_distance(scores, _one_hot(lg), 3, input_format="one-hot")
    ours = hausdorff_distance(scores, _one_hot(lg), input_format="one-hot", convention="torchmetrics")
    np.testing.assert_allclose(ours.numpy(), ref.double().numpy(), rtol=1e-6)
    assert torch.equal(ours, hausdorff_distance(scores.argmax(1), lg, num_classes=3, convention="torchmetrics"))


@pytest.mark.parametrize("shape", [(2, 20, 28), (2, 12, 16, 8)])
@pytest.mark.parametrize("convention", ["monai", "deepmind", "medpy"])
def test_one_hot_equals_index_labels(shape, convention):
    lp, lg = _labels(shape, seed=3)
    index = surface_distance_measures(lp, lg, num_classes=3, convention=convention, tolerance=1.0)
    for p, g, fmt in (
        (_one_hot(lp), _one_hot(lg), "one-hot"),
        (_one_hot(lp), lg, "mixed"),
        (lp, _one_hot(lg).bool(), "mixed"),
    ):
        got = surface_distance_measures(p, g, convention=convention, tolerance=1.0, input_format=fmt)
        for key, value in index.items():
            assert torch.equal(got[key], value), (fmt, key)


def test_overlapping_channels_are_scored_as_given():
    # multi-label channels (e.g. nested tumour regions) are not exclusive: each is its own pair
    g = torch.zeros(1, 2, 20, 20, dtype=torch.bool)
    g[0, 0, 2:18, 2:18] = True
    g[0, 1, 6:12, 6:12] = True  # inside channel 0
    p = g.clone()
    p[0, 1, 6:14, 6:12] = True
    out = hausdorff_distance(p, g, input_format="one-hot", include_background=True)
    assert out.shape == (1, 2)
    assert float(out[0, 0]) == 0.0 and float(out[0, 1]) == 2.0


def test_boundary_iou_takes_one_hot():
    lp, lg = _labels((2, 24, 24), seed=5)
    assert torch.equal(
        boundary_iou(_one_hot(lp), _one_hot(lg), input_format="one-hot"), boundary_iou(lp, lg, num_classes=3)
    )


def test_metrics_take_one_hot():
    lp, lg = _labels((4, 24, 24), seed=7)
    lp[0][lp[0] == 2] = 0  # a class the prediction misses: its distance counts as inf in the mean
    by_index = SurfaceDistanceMeasures(num_classes=3, tolerance=1.0)
    by_channels = SurfaceDistanceMeasures(num_classes=3, tolerance=1.0, input_format="one-hot")
    for i in (0, 2):
        by_index.update(lp[i : i + 2], lg[i : i + 2])
        by_channels.update(_one_hot(lp[i : i + 2]), _one_hot(lg[i : i + 2]))
    a, b = by_index.compute(), by_channels.compute()
    for key in a:
        assert torch.equal(a[key], b[key]), key
    hd = HausdorffDistance(num_classes=3, input_format="mixed")
    hd.update(_one_hot(lp), lg)
    assert torch.equal(hd.compute(), HausdorffDistance(num_classes=3).forward(lp, lg))


def test_clear_errors():
    lp, lg = _labels((2, 16, 16))
    with pytest.raises(ValueError, match="input_format"):
        hausdorff_distance(lp, lg, num_classes=3, input_format="onehot")
    with pytest.raises(ValueError, match="at least 2 channels of scores"):
        hausdorff_distance(torch.rand(2, 1, 16, 16), _one_hot(lg)[:, :1], input_format="one-hot")
    with pytest.raises(ValueError, match="0 or 1 only"):
        hausdorff_distance(_one_hot(lp) * 2, _one_hot(lg), input_format="one-hot")
    # scores with a NaN channel were arg-maxed silently (the argmax lands on the NaN); a -inf logit is a score
    scores = torch.rand(2, 3, 16, 16)
    scores[:, 1] = float("nan")
    with pytest.raises(ValueError, match="`preds` to contain no NaN"):
        hausdorff_distance(scores, _one_hot(lg), input_format="one-hot")
    scores[:, 1] = -math.inf
    assert hausdorff_distance(scores, _one_hot(lg), input_format="one-hot").shape == (2, 2)
    with pytest.raises(ValueError, match="same"):
        hausdorff_distance(_one_hot(lp), _one_hot(lg, 4), input_format="one-hot")
    with pytest.raises(ValueError, match=r"num_classes.*channels"):
        hausdorff_distance(_one_hot(lp), _one_hot(lg), num_classes=4, input_format="one-hot")
    with pytest.raises(ValueError, match="labels in"):
        hausdorff_distance(_one_hot(lp), lg + 3, input_format="mixed")
    with pytest.raises(ValueError, match="ignore_index"):
        hausdorff_distance(_one_hot(lp), _one_hot(lg), input_format="one-hot", ignore_index=0)
    with pytest.raises(TypeError, match="tensors"):
        hausdorff_distance(list(_one_hot(lp)), list(_one_hot(lg)), input_format="one-hot")
    with pytest.raises(ValueError, match="num_classes"):
        HausdorffDistance(input_format="one-hot")
