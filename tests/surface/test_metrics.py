"""The boundary-distance Metrics: dataset means of the functions' per-image values (NaN left out, inf kept), per class
for label maps, arguments checked at construction."""

from __future__ import annotations

import math
import warnings

import pytest
import torch

import segmetrics_torch as st
from segmetrics_torch.functional import (
    average_surface_distance,
    boundary_iou,
    hausdorff_distance,
    normalized_surface_distance,
    surface_distance_measures,
)


def _pair(seed: int, batch: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    g = torch.zeros(batch, 24, 26, dtype=torch.bool)
    p = torch.zeros_like(g)
    for b in range(batch):
        y, x = (int(v) for v in torch.randint(3, 10, (2,), generator=gen))
        g[b, y : y + 9, x : x + 10] = True
        p[b, y + 1 : y + 11, x - 2 : x + 9] = True
    return p, g


@pytest.mark.parametrize(
    ("metric", "fn"),
    [
        (lambda: st.HausdorffDistance(percentile=95), lambda p, g: hausdorff_distance(p, g, percentile=95)),
        (
            lambda: st.HausdorffDistance(convention="medpy", percentile=95),
            lambda p, g: hausdorff_distance(p, g, convention="medpy", percentile=95),
        ),
        (
            lambda: st.AverageSurfaceDistance(symmetric=True),
            lambda p, g: average_surface_distance(p, g, symmetric=True),
        ),
        (
            lambda: st.NormalizedSurfaceDistance(tolerance=1.5),
            lambda p, g: normalized_surface_distance(p, g, tolerance=1.5),
        ),
        (lambda: st.BoundaryIoU(), lambda p, g: boundary_iou(p, g)),
    ],
)
def test_the_mean_of_the_functions_values(metric, fn) -> None:
    m = metric()
    values = []
    for seed in (0, 1):
        p, g = _pair(seed)
        m.update(p, g)
        values.append(fn(p, g))
    torch.testing.assert_close(m.compute(), torch.cat(values).mean(), rtol=0, atol=1e-12)


def test_label_maps_give_one_value_per_class_and_the_suite_equals_the_function() -> None:
    p, g = _pair(3)
    pred, target = p.long(), g.long()
    pred[:, 18:, 18:], target[:, 19:, 17:] = 2, 2
    suite = st.SurfaceDistanceMeasures(num_classes=3, tolerance=1.0)
    suite.update(pred, target)
    expected = surface_distance_measures(pred, target, num_classes=3, tolerance=1.0)
    out = suite.compute()
    assert set(out) == set(expected)
    for key, value in out.items():
        assert value.shape == (2,)  # classes 1 and 2 (no background)
        torch.testing.assert_close(value, expected[key].mean(dim=0), rtol=0, atol=1e-12)


def test_a_missed_structure_keeps_the_mean_infinite_and_nan_is_left_out() -> None:
    p, g = _pair(4, batch=2)
    p[1] = False  # the prediction misses the structure of image 1
    m = st.HausdorffDistance()
    with pytest.warns(UserWarning, match="image 1"):
        m.update(p, g)
    assert math.isinf(float(m.compute()))  # MONAI's HD of image 1: inf; the mean does not drop it
    both = st.AverageSurfaceDistance(symmetric=True)
    p2, g2 = _pair(5, batch=2)
    p2[0], g2[0] = False, False  # both empty: NaN, left out of the mean
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both.update(p2, g2)
    torch.testing.assert_close(
        both.compute(), average_surface_distance(p2[1:], g2[1:], symmetric=True)[0], rtol=0, atol=1e-12
    )


def test_bad_arguments_fail_at_construction() -> None:
    with pytest.raises(ValueError, match="convention"):
        st.HausdorffDistance(convention="scipy")
    with pytest.raises(ValueError, match="percentile"):
        st.HausdorffDistance(convention="torchmetrics", percentile=95)
    with pytest.raises(ValueError, match="num_classes"):
        st.BoundaryIoU(num_classes=0)
    with pytest.raises((TypeError, ValueError), match="tolerance"):
        st.NormalizedSurfaceDistance(tolerance=-1.0)


def test_a_missed_structure_is_inf_in_the_percentile_mean_too() -> None:
    """MONAI's HD95 of a pair with one empty mask is NaN (the quantile of a list of inf), which its mean drops; here
    such a pair counts as inf in every distance's mean, and a pair of two empty masks stays left out."""
    p, g = _pair(6, batch=2)
    p[0] = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert torch.isnan(hausdorff_distance(p, g, percentile=95)[0])  # the convention's own value
        metric = st.HausdorffDistance(percentile=95)
        metric.update(p, g)
        assert math.isinf(float(metric.compute()))
        suite = st.SurfaceDistanceMeasures(tolerance=1.0)
        suite.update(p, g)
        out = suite.compute()
        assert all(math.isinf(float(out[k])) for k in ("hausdorff", "hausdorff_percentile", "asd", "assd"))
        assert 0 <= float(out["nsd"]) < 1
        both = st.HausdorffDistance(percentile=95)
        q, h = p.clone(), g.clone()
        h[0] = False
        both.update(q, h)
        torch.testing.assert_close(
            both.compute(), hausdorff_distance(q[1:], h[1:], percentile=95)[0], rtol=0, atol=1e-12
        )
