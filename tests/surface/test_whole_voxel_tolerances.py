"""Distances in the references' bits, so that a tolerance of whole voxels falls where theirs does.

The NSD counts the boundary points with ``d <= tau``; a user's tolerance is often a whole number of voxels (``k * s``)
and a distance one ulp off flips whole boundaries (9 pixels at 0.1 mm came out ``0.9000000000000001``: NSD 0.72
against MONAI's and DeepMind's 1.0; found by a parity audit). DeepMind and MedPy take scipy's transform, whose float
operations are each offset times its spacing, squared, added in axis order; where features are equally near (1 pixel
at 0.3 and 3 pixels at 0.1) the lower rounded value. Both of our transforms (the compiled CPU kernel, the tensor
transform of CUDA inputs) and the tree route follow them bit for bit. MONAI compares its distances cast to float32.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from scipy import ndimage

from segmetrics_torch.functional.surface import normalized_surface_distance, point_set_distances
from segmetrics_torch.ops import use_backend

monai_metrics = pytest.importorskip("monai.metrics")
surface_distance = pytest.importorskip("surface_distance")
medpy_binary = pytest.importorskip("medpy.metric.binary")

SPACINGS = (0.1, 0.2, 0.3, 0.6, 0.7, 0.8, 0.9, 1.1, 1.2, 1.5, 2.5, 3.0)


def _references(p: np.ndarray, g: np.ndarray, spacing: tuple[float, ...], tau: float) -> tuple[float, float]:
    """MONAI's ``compute_surface_dice`` and DeepMind's ``compute_surface_dice_at_tolerance`` of one pair."""
    t = [torch.from_numpy(x.astype(np.float32))[None, None] for x in (p, g)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        monai = float(monai_metrics.compute_surface_dice(*t, [tau], include_background=True, spacing=list(spacing)))
    lists = surface_distance.compute_surface_distances(g, p, list(spacing))
    return monai, float(surface_distance.compute_surface_dice_at_tolerance(lists, tau))


def _ours(p: np.ndarray, g: np.ndarray, spacing: tuple[float, ...], tau: float, convention: str) -> float:
    P, G = torch.from_numpy(p)[None], torch.from_numpy(g)[None]
    return float(normalized_surface_distance(P, G, tolerance=tau, spacing=spacing, convention=convention)[0])


@pytest.mark.parametrize("backend", ["auto", "tensor"])  # the compiled kernel, and the path CUDA inputs take
def test_a_shift_of_k_voxels_is_within_a_tolerance_of_k_voxels(backend: str) -> None:
    flips = []
    g = np.zeros((14, 30), bool)
    g[2:12, 2:12] = True
    with use_backend(backend):
        for s in SPACINGS:
            for k in (1, 3, 7, 9):
                p = np.roll(g, k, axis=1)
                tau = k * s
                monai, deepmind = _references(p, g, (s, s), tau)
                ours = (_ours(p, g, (s, s), tau, "monai"), _ours(p, g, (s, s), tau, "deepmind"))
                if ours != (monai, deepmind):
                    flips.append((s, k, ours, (monai, deepmind)))
    assert not flips, flips


@pytest.mark.parametrize("method", ["edt", "kdtree"])
@pytest.mark.parametrize("backend", ["auto", "tensor"])
def test_distance_lists_are_scipy_s_bits_on_anisotropic_grids(method: str, backend: str) -> None:
    """Random smooth shapes on grids whose spacings are multiples of one another (0.3 and 0.1: features equally
    near, with rounded values an ulp apart): every distance equals MedPy's (scipy's transform), bit for bit."""
    rng = np.random.default_rng(5)
    surface = getattr(medpy_binary, "__surface_distances")
    checked = 0
    with use_backend(backend):
        for spacing in ((0.3, 0.1), (0.3, 0.1, 0.3), (0.6, 0.6, 0.2), (0.3, 0.1, 1.5), (0.7, 2.5, 0.9)):
            for _ in range(3):
                shape = tuple(int(rng.integers(8, 26 if len(spacing) == 2 else 12)) for _ in spacing)
                p = ndimage.gaussian_filter(rng.standard_normal(shape), 1.5) > 0.05
                g = ndimage.gaussian_filter(rng.standard_normal(shape), 1.5) > 0.05
                if not p.any() or not g.any():
                    continue
                structure = ndimage.generate_binary_structure(p.ndim, 1)
                pb, gb = (x & ~ndimage.binary_erosion(x, structure) for x in (p, g))
                d_pg, d_gp = point_set_distances(pb, gb, spacing, method=method)
                np.testing.assert_array_equal(d_pg, surface(p, g, spacing, 1))
                np.testing.assert_array_equal(d_gp, surface(g, p, spacing, 1))
                checked += 1
    assert checked >= 12


@pytest.mark.parametrize("backend", ["auto", "tensor"])
def test_equally_near_features_at_the_tolerance(backend: str) -> None:
    """One row (0.3) and three columns (0.30000000000000004) apart on a (0.3, 0.1) grid: DeepMind (float64) counts
    the rows within tau = 0.3 and not the columns, MONAI (its distances and tau in float32) both."""
    g = np.zeros((9, 20), bool)
    g[3:6, 4:16] = True
    p = np.zeros_like(g)
    p[2:7, 1:19] = True
    monai, deepmind = _references(p, g, (0.3, 0.1), 0.3)
    with use_backend(backend):
        assert _ours(p, g, (0.3, 0.1), 0.3, "monai") == pytest.approx(monai, rel=1e-7)  # MONAI returns float32
        assert _ours(p, g, (0.3, 0.1), 0.3, "deepmind") == pytest.approx(deepmind, rel=1e-12)  # areas summed
    assert monai > deepmind


@pytest.mark.parametrize("spacing", [1e-170, 1e-50, 1e50])
def test_monai_s_float32_comparison_keeps_any_spacing(spacing: float) -> None:
    """The float32 comparison on spacings outside float32's range: cast as they are, every distance and the tolerance
    became 0 (or inf) and all counted as within (NSD 1.0 for 0.5; a review). Scaled first by a power of two, the
    comparison is float32's at spacing 1."""
    g = np.zeros((14, 30), bool)
    g[2:12, 2:12] = True
    p = np.roll(g, 3, axis=1)
    unit = _ours(p, g, (1.0, 1.0), 1.0, "monai")
    assert unit < 1.0
    assert _ours(p, g, (spacing, spacing), spacing, "monai") == unit
