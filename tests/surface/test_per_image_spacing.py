"""MONAI's per-item spacing: ``spacing`` as a sequence with one entry per image of the batch (each a number in a
1-sequence or one number per axis), in the functions and the Metrics, against MONAI 1.6 called the same way."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from segmetrics_torch.functional.surface import (
    average_surface_distance,
    hausdorff_distance,
    normalized_surface_distance,
    surface_distance_measures,
)
from segmetrics_torch.metrics.surface import SurfaceDistanceMeasures

SPACINGS = [(1.0, 2.0, 0.5), (3.0, 1.0, 1.0), (0.7, 0.7, 2.5)]


def _batch() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.zeros(3, 20, 24, 18, dtype=torch.bool)
    p = torch.zeros_like(g)
    for i in range(3):
        g[i, 4 + i : 14, 5 : 17 - i, 3:12] = True
        p[i, 5 : 15 - i, 4 + i : 16, 4:13] = True
    p[2, 1, 1, 1] = True  # an outlier voxel far from the ground truth
    return p, g


def _monai(name: str, p: torch.Tensor, g: torch.Tensor, spacing: object, **kwargs: object) -> np.ndarray:
    metrics = pytest.importorskip("monai.metrics")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = getattr(metrics, name)(
            p[:, None].float(), g[:, None].float(), include_background=True, spacing=spacing, **kwargs
        )
    return out.reshape(-1).double().numpy()


@pytest.mark.parametrize("percentile", [None, 95.0])
def test_hausdorff_matches_monai_per_item(percentile):
    p, g = _batch()
    ours = hausdorff_distance(p, g, spacing=SPACINGS, percentile=percentile).numpy()
    ref = _monai("compute_hausdorff_distance", p, g, [list(s) for s in SPACINGS], percentile=percentile)
    np.testing.assert_allclose(ours, ref, rtol=1e-6)


def test_assd_and_nsd_match_monai_per_item():
    p, g = _batch()
    spacing = [list(s) for s in SPACINGS]
    ours = average_surface_distance(p, g, spacing=SPACINGS, symmetric=True).numpy()
    np.testing.assert_allclose(
        ours, _monai("compute_average_surface_distance", p, g, spacing, symmetric=True), rtol=1e-6
    )
    ours = normalized_surface_distance(p, g, spacing=SPACINGS, tolerance=1.5).numpy()
    ref = _monai("compute_surface_dice", p, g, spacing, class_thresholds=[1.5])
    np.testing.assert_allclose(ours, ref, rtol=1e-6)


@pytest.mark.parametrize("convention", ["monai", "deepmind", "medpy"])
def test_per_item_equals_one_image_at_a_time(convention):
    p, g = _batch()
    together = surface_distance_measures(p, g, spacing=SPACINGS, convention=convention, tolerance=1.0)
    for i, spacing in enumerate(SPACINGS):
        alone = surface_distance_measures(
            p[i : i + 1], g[i : i + 1], spacing=spacing, convention=convention, tolerance=1.0
        )
        for key, value in alone.items():
            assert float(together[key][i]) == float(value[0]), (key, i)


def test_forms_of_the_per_item_spacing():
    p, g = _batch()
    expected = hausdorff_distance(p, g, spacing=SPACINGS)
    as_tensor = torch.tensor(SPACINGS, dtype=torch.float64)  # a (B, ndim) tensor (float64: 0.7 as given)
    assert torch.equal(hausdorff_distance(p, g, spacing=as_tensor), expected)
    iso = hausdorff_distance(p, g, spacing=[[2.0], [1.0], [0.5]])  # one number per image: isotropic
    for i, s in enumerate((2.0, 1.0, 0.5)):
        assert float(iso[i]) == float(hausdorff_distance(p[i : i + 1], g[i : i + 1], spacing=s)[0])
    # a flat sequence stays one number per axis for every image, as MONAI reads it
    shared = hausdorff_distance(p, g, spacing=[1.0, 2.0, 0.5])
    assert torch.equal(shared, hausdorff_distance(p, g, spacing=[SPACINGS[0]] * 3))


def test_per_item_spacing_of_the_wrong_length_is_a_clear_error():
    p, g = _batch()
    with pytest.raises(ValueError, match=r"one `spacing` entry per image \(3\).*got 2"):
        hausdorff_distance(p, g, spacing=SPACINGS[:2])
    with pytest.raises(ValueError, match="one entry per spatial axis"):
        hausdorff_distance(p, g, spacing=[(1.0, 2.0)] * 3)
    with pytest.raises(ValueError, match="finite positive"):
        hausdorff_distance(p, g, spacing=[(1.0, 2.0, 0.0)] * 3)


def test_metric_update_takes_a_per_item_spacing():
    p, g = _batch()
    metric = SurfaceDistanceMeasures(tolerance=1.0)
    metric.update(p[:2], g[:2], spacing=SPACINGS[:2])
    metric.update(p[2:], g[2:], spacing=[SPACINGS[2]])
    together = surface_distance_measures(p, g, spacing=SPACINGS, tolerance=1.0)
    for key, value in metric.compute().items():
        assert float(value) == pytest.approx(float(together[key].mean()), rel=1e-12), key
