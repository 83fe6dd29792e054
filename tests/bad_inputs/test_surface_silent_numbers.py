"""Silent numbers of the boundary-distance family: one-hot channels read as volumes, spacings whose squares leave
float64's range, an ignored class read as inf or NaN by turns, numpy scalars refused as percentiles."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from segmetrics_torch.functional.surface import (
    average_surface_distance,
    boundary_iou,
    hausdorff_distance,
    hd95,
    normalized_surface_distance,
    surface_distance_measures,
    surface_distances,
)
from segmetrics_torch.functional.surface.distances import point_set_distances
from segmetrics_torch.functional.surface.edges import surfel_size_table
from segmetrics_torch.metrics.surface import (
    AverageSurfaceDistance,
    BoundaryIoU,
    HausdorffDistance,
    NormalizedSurfaceDistance,
    SurfaceDistanceMeasures,
)
from segmetrics_torch.ops.distance import distance_to_features, distance_to_features_device


def _one_hot(x: torch.Tensor, c: int = 2) -> torch.Tensor:
    return torch.nn.functional.one_hot(x.long(), c).movedim(-1, 1)


def _masks() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.zeros(2, 16, 16, dtype=torch.bool)
    g[:, 3:13, 3:13] = True
    p = torch.zeros(2, 16, 16, dtype=torch.bool)
    p[:, 4:13, 3:13] = True
    return p, g


FUNCTIONS: list[tuple[str, Callable[..., Any]]] = [
    ("hausdorff_distance", hausdorff_distance),
    ("hd95", hd95),
    ("average_surface_distance", average_surface_distance),
    ("normalized_surface_distance", lambda p, g, **kw: normalized_surface_distance(p, g, tolerance=1.0, **kw)),
    ("boundary_iou", boundary_iou),
    ("surface_distance_measures", surface_distance_measures),
    ("surface_distances", surface_distances),
]
METRICS = [HausdorffDistance, AverageSurfaceDistance, NormalizedSurfaceDistance, BoundaryIoU, SurfaceDistanceMeasures]


# ------------------------------------------------------------------------------------- 1. one-hot channels, default


@pytest.mark.parametrize(("name", "function"), FUNCTIONS, ids=[n for n, _ in FUNCTIONS])
@pytest.mark.parametrize("dtype", [torch.bool, torch.int64, torch.float32])
def test_one_hot_channels_with_the_default_input_format_are_refused(
    name: str, function: Callable[..., Any], dtype: torch.dtype
) -> None:
    """MONAI's (B, 2, H, W) one-hot was scored as two-slice volumes (HD95 0.0 for a pair whose 2-D HD95 is 1.0)."""
    p, g = _masks()
    with pytest.raises(ValueError, match=r"input_format.*\(2, 2, 16, 16\)|\(2, 2, 16, 16\).*input_format"):
        function(_one_hot(p).to(dtype), _one_hot(g).to(dtype))


@pytest.mark.parametrize("metric", METRICS, ids=[m.__name__ for m in METRICS])
def test_one_hot_channels_are_refused_by_the_metrics(metric: type) -> None:
    p, g = _masks()
    with pytest.raises(ValueError, match=r"input_format.*\(2, 2, 16, 16\)"):
        metric(**({"tolerance": 1.0} if metric is NormalizedSurfaceDistance else {})).update(_one_hot(p), _one_hot(g))


def test_the_rule_covers_any_channel_count_label_maps_and_lists() -> None:
    labels = torch.zeros(2, 16, 16, dtype=torch.long)
    labels[:, 2:8, 2:8] = 1
    labels[:, 9:14, 3:12] = 2
    shifted = labels.roll(1, dims=1)
    three = (_one_hot(shifted, 3), _one_hot(labels, 3))
    with pytest.raises(ValueError, match=r"input_format.*\(2, 3, 16, 16\)"):
        hausdorff_distance(*three)
    with pytest.raises(ValueError, match=r"input_format.*\(2, 3, 16, 16\)"):
        hausdorff_distance(*three, num_classes=3)  # 0/1 integers are valid labels of a 3-class volume too
    with pytest.raises(ValueError, match=r"input_format.*\(3, 16, 16\)"):
        hausdorff_distance(list(three[0]), list(three[1]))  # MONAI's decollated list of (C, H, W)
    # the same channels with the format said: scored as the 2-D label maps
    one_hot = hausdorff_distance(*three, input_format="one-hot")
    assert torch.equal(one_hot, hausdorff_distance(shifted, labels, num_classes=3))


def test_genuine_volumes_with_few_slices_are_not_refused() -> None:
    """A (B, D, H, W) volume is told from (B, C, H, W) channels by its values: channels hold 0/1 with exactly one 1
    per pixel in both preds and target. Real volumes have columns without foreground, or with more than one."""
    g = torch.zeros(2, 2, 12, 12, dtype=torch.bool)
    g[:, :, 3:8, 3:8] = True  # a blob through both slices
    p = g.roll(1, dims=3)
    assert torch.isfinite(hausdorff_distance(p, g)).all()
    q = torch.zeros(1, 3, 6, 6, dtype=torch.bool)
    q[0, 0, 1, 1] = True  # single voxels: most columns empty
    r = torch.zeros(1, 3, 6, 6, dtype=torch.bool)
    r[0, 2, 1, 1] = True
    assert float(hausdorff_distance(q, r)[0]) == 2.0
    # both slices of one column, each in one side only, all other columns empty
    assert float(hausdorff_distance(q[:, :2], q[:, :2].flip(1))[0]) == 1.0
    # a volume whose every column has one foreground voxel on each side is the rule's one ambiguity:
    # validate_args=False (which skips every value check) reads it as given
    p2, g2 = _masks()
    vol_p, vol_g = _one_hot(p2).bool(), _one_hot(g2).bool()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert hausdorff_distance(vol_p, vol_g, validate_args=False).shape == (2,)


# --------------------------------------------------------------------------------------- 2. spacing out of float64


def _two_voxels() -> tuple[torch.Tensor, torch.Tensor]:
    a = torch.zeros(1, 5, 2, 2, dtype=torch.bool)
    b = a.clone()
    a[0, 0, 0, 0] = True
    b[0, 2, 0, 0] = True
    return a, b


@pytest.mark.parametrize(
    ("spacing", "expected"),
    [((1e155, 1.0, 1.0), 2e155), ((1e-170, 1.0, 1.0), 2e-170), ((1e-170,) * 3, 2e-170), ((1e150,) * 3, 2e150)],
)
def test_extreme_spacings_give_exact_distances(spacing: tuple[float, ...], expected: float) -> None:
    """Was nan / inf (squares overflow) and 0.0 (squares underflow), silently."""
    a, b = _two_voxels()
    # DeepMind's surfel areas are products of two spacings: 1e-340 is not a float64 (refused below)
    conventions = ("monai", "medpy") if max(spacing) < 1e-160 else ("monai", "medpy", "deepmind")
    for convention in conventions:
        assert float(hausdorff_distance(a, b, spacing=spacing, convention=convention)[0]) == expected
    assert float(average_surface_distance(a, b, spacing=spacing, symmetric=True)[0]) == expected
    an, bn = a[0].numpy(), b[0].numpy()
    for method in ("edt", "kdtree"):
        d_ab, d_ba = point_set_distances(an, bn, spacing, method=method)
        assert d_ab.tolist() == d_ba.tolist() == [expected]
    assert distance_to_features(bn, spacing, at=an).tolist() == [expected]
    assert distance_to_features_device(b[0], spacing, a[0]).tolist() == [expected]


def test_extreme_spacings_keep_the_other_axes_exact() -> None:
    """The small axis still counts where the large one does not differ (the nearest point along it)."""
    a = torch.zeros(1, 3, 4, 2, dtype=torch.bool)
    b = a.clone()
    a[0, 1, 0, 0] = True
    b[0, 1, 3, 0] = True
    # 3 * 1e-170 (2.9999999999999998e-170): the offset times its spacing, scipy's operations (whose square
    # underflows to 0 in scipy itself)
    for spacing, expected in [((1e155, 1.0, 1.0), 3.0), ((1.0, 1e-170, 1.0), 3 * 1e-170)]:
        assert float(hausdorff_distance(a, b, spacing=spacing)[0]) == expected


def test_ordinary_spacings_are_unchanged_by_the_scaling() -> None:
    """The transform runs on the spacing divided by a power of two, exactly: a scaled spacing scales every distance
    by the same power of two, bit for bit."""
    rng = np.random.default_rng(3)
    f = rng.random((9, 11, 7)) < 0.1
    at = rng.random((9, 11, 7)) < 0.3
    base = distance_to_features(f, (0.7, 1.3, 2.5), at=at)
    for k in (-600, -3, 1, 500):
        scaled = distance_to_features(f, tuple(math.ldexp(s, k) for s in (0.7, 1.3, 2.5)), at=at)
        assert np.array_equal(scaled, np.ldexp(base, k))
    t = torch.from_numpy
    device_base = distance_to_features_device(t(f), (0.7, 1.3, 2.5), t(at)).numpy()
    assert np.array_equal(distance_to_features_device(t(f), (1.4, 2.6, 5.0), t(at)).numpy(), device_base * 2)
    table = surfel_size_table((0.7, 1.3, 2.5))
    assert np.array_equal(surfel_size_table((0.7 * 2**-400, 1.3 * 2**-400, 2.5 * 2**-400)) * 2.0**800, table)


def test_spacings_float64_cannot_hold_are_refused_naming_spacing() -> None:
    a, b = _two_voxels()
    with pytest.raises(ValueError, match="`spacing`"):
        hausdorff_distance(a, b, spacing=(1e-300, 1e300, 1.0))  # a ratio of 1e600: squares leave float64
    with pytest.raises(ValueError, match="`spacing`"):
        hausdorff_distance(a, b, spacing=(1e308, 1.0, 1.0))  # 2e308 is not a float64
    with pytest.raises(ValueError, match="`spacing`"):
        hausdorff_distance(a, b, spacing=(1e200,) * 3, convention="deepmind")  # surfel areas of 1e400
    with pytest.raises(ValueError, match="`spacing`"):
        hausdorff_distance(a, b, spacing=(1e-170,) * 3, convention="deepmind")  # surfel areas of 1e-340
    with pytest.raises(ValueError, match="`spacing`"):
        distance_to_features(b[0].numpy(), (1e-300, 1e300, 1.0))


# ------------------------------------------------------------------------------------------------ 3. ignore_index


def _labels() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return torch.randint(0, 3, (2, 12, 12), generator=gen), torch.randint(0, 3, (2, 12, 12), generator=gen)


def test_the_ignored_class_is_nan_in_functions_suite_and_metrics() -> None:
    """Was inf in the Metrics (the ignored class's prediction pixels left, its target removed: 'a missed
    structure'), NaN in the functions."""
    p, g = _labels()
    kw: dict[str, Any] = {"num_classes": 3, "ignore_index": 2}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = {
            "hd": hausdorff_distance(p, g, **kw),
            "asd": average_surface_distance(p, g, **kw),
            "nsd": normalized_surface_distance(p, g, tolerance=1.0, **kw),
            "biou": boundary_iou(p, g, **kw),
            **surface_distance_measures(p, g, tolerance=1.0, **kw),
        }
        metrics = (HausdorffDistance, AverageSurfaceDistance, NormalizedSurfaceDistance, BoundaryIoU)
        for metric in (m(**kw, **({"tolerance": 1.0} if m is NormalizedSurfaceDistance else {})) for m in metrics):
            metric.update(p, g)
            values[type(metric).__name__] = metric.compute()[None]
        suite = SurfaceDistanceMeasures(tolerance=1.0, **kw)
        suite.update(p, g)
        values.update({f"metric {k}": v[None] for k, v in suite.compute().items()})
    for name, v in values.items():
        assert torch.isnan(v[:, 1]).all(), name  # class 2 is column 1 (class 0, the background, is left out)
        assert torch.isfinite(v[:, 0]).all(), name
    assert surface_distances(p, g, **kw)[0][1] is None


def test_the_ignored_class_is_left_out_of_the_metric_mean() -> None:
    """Over several updates the other classes' means equal the mean of the function's values; the ignored class
    stays NaN (no update counts for it)."""
    p, g = _labels()
    metric = HausdorffDistance(num_classes=3, ignore_index=1, include_background=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        metric.update(p, g)
        metric.update(g, p.masked_fill(g == 1, 1))
        mean = metric.compute()
        first = hausdorff_distance(p, g, num_classes=3, ignore_index=1, include_background=True)
        second = hausdorff_distance(g, p.masked_fill(g == 1, 1), num_classes=3, ignore_index=1, include_background=True)
    both = torch.cat([first, second])
    assert torch.isnan(mean[1]) and torch.isnan(both[:, 1]).all()
    assert torch.allclose(mean[[0, 2]], both[:, [0, 2]].mean(0), rtol=1e-15, atol=0)


# ---------------------------------------------------------------------------------------------- 6. numpy numbers


@pytest.mark.parametrize("q", [np.int64(95), np.float32(95), np.float64(95), np.int32(95)])
def test_numpy_scalars_are_percentiles(q: object) -> None:
    p, g = _masks()
    assert torch.equal(hausdorff_distance(p, g, percentile=q), hausdorff_distance(p, g, percentile=95))
    assert torch.equal(surface_distance_measures(p, g, percentile=q)["hausdorff_percentile"], hd95(p, g))
    metric = HausdorffDistance(percentile=q)
    metric.update(p, g)
    assert float(metric.compute()) == float(hd95(p, g).mean())


def test_numpy_scalars_are_tolerances_spacings_and_ratios() -> None:
    p, g = _masks()
    ref = normalized_surface_distance(p, g, tolerance=1.0, spacing=(2.0, 1.0))
    out = normalized_surface_distance(p, g, tolerance=np.float32(1), spacing=(np.int64(2), np.float32(1)))
    assert torch.equal(out, ref)
    assert torch.equal(boundary_iou(p, g, dilation_ratio=np.float32(0.125)), boundary_iou(p, g, dilation_ratio=0.125))


def test_bools_and_nonfinite_numpy_values_stay_refused() -> None:
    p, g = _masks()
    with pytest.raises(ValueError, match="`percentile`"):
        hausdorff_distance(p, g, percentile=np.float32("nan"))
    with pytest.raises(ValueError, match="`percentile`"):
        hausdorff_distance(p, g, percentile=np.bool_(True))
    with pytest.raises(ValueError, match="`percentile`"):
        hausdorff_distance(p, g, percentile=np.int64(101))
    with pytest.raises(TypeError, match="`spacing`"):
        hausdorff_distance(p, g, spacing=True)
    with pytest.raises(TypeError, match="`tolerance`"):
        normalized_surface_distance(p, g, tolerance=False)
    with pytest.raises(ValueError, match="`dilation_ratio`"):
        boundary_iou(p, g, dilation_ratio=np.bool_(True))
