"""Random masks (hypothesis): the tensor path against the numpy oracle (``reference/surface.py``, brute-force
distances) for every convention and measure, and against MONAI, MedPy and DeepMind themselves.

Masks: noise, smooth blobs, one-voxel-thick lines, single voxels and boxes touching the image border, 2-D and small
3-D, unit and anisotropic spacing.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st

from segmetrics_torch.functional.surface import (
    average_surface_distance,
    boundary_iou,
    hausdorff_distance,
    normalized_surface_distance,
    surface_distance_measures,
)
from segmetrics_torch.functional.surface.distances import point_set_distances
from segmetrics_torch.reference import surface as ref

from ._masks import mask_pairs
from ._refs import authors_boundary_iou, deepmind_all, medpy_all, monai_asd, monai_hd, monai_nsd

F32 = {"rel": 1e-6, "abs": 1e-6}
F64 = {"rel": 1e-12, "abs": 1e-9}
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _b(x: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(x)[None]


def _check_against_oracle(p: np.ndarray, g: np.ndarray, sp: tuple[float, ...]) -> None:
    P, G = _b(p), _b(g)
    for conv in ("monai", "medpy", "deepmind"):
        ours = surface_distance_measures(P, G, spacing=sp, convention=conv, percentile=95, tolerance=1.5)
        assert float(ours["hausdorff"][0]) == pytest.approx(ref.hausdorff_distance(p, g, sp, convention=conv), **F64)
        assert float(ours["hausdorff_percentile"][0]) == pytest.approx(
            ref.hausdorff_distance(p, g, sp, convention=conv, percentile=95), **F64
        )
        assert float(ours["asd"][0]) == pytest.approx(ref.average_surface_distance(p, g, sp, convention=conv), **F64)
        assert float(ours["assd"][0]) == pytest.approx(
            ref.average_surface_distance(p, g, sp, convention=conv, symmetric=True), **F64
        )
        if conv != "medpy":
            assert float(ours["nsd"][0]) == pytest.approx(
                ref.normalized_surface_distance(p, g, sp, 1.5, corners=conv == "deepmind"), **F64
            )
    directed = hausdorff_distance(P, G, spacing=sp, percentile=30, directed=True)
    assert float(directed[0]) == pytest.approx(ref.hausdorff_distance(p, g, sp, percentile=30, directed=True), **F64)
    for metric in ("chessboard", "taxicab"):
        for conv in ("monai", "torchmetrics"):
            if conv == "monai" and any(s != 1.0 for s in sp):
                # MONAI's chessboard / taxicab ignore the spacing: the combination is refused, not given in voxels
                with pytest.raises(ValueError, match=r"`spacing`=None .*convention='torchmetrics'"):
                    hausdorff_distance(P, G, spacing=sp, convention=conv, distance_metric=metric)
                continue
            ours_m = hausdorff_distance(P, G, spacing=sp, convention=conv, distance_metric=metric)
            assert float(ours_m[0]) == pytest.approx(
                ref.hausdorff_distance(p, g, sp, convention=conv, metric=metric), **F64
            )
    assert float(normalized_surface_distance(P, G, tolerance=0.5, spacing=sp, use_subvoxels=True)[0]) == (
        pytest.approx(ref.normalized_surface_distance(p, g, sp, 0.5, corners=True), **F64)
    )
    if p.ndim == 2:
        assert float(hausdorff_distance(P, G, spacing=sp, convention="medpy", connectivity=2)[0]) == pytest.approx(
            ref.hausdorff_distance(p, g, sp, convention="medpy", connectivity=2), **F64
        )
        for ratio in (0.02, 0.2):
            assert float(boundary_iou(P, G, dilation_ratio=ratio)[0]) == pytest.approx(
                ref.boundary_iou(p, g, ratio), **F64
            )


@SETTINGS
@given(mask_pairs(ndim=2, max_side=24))
def test_2d_against_oracle(pair: tuple[np.ndarray, np.ndarray, tuple[float, ...]]) -> None:
    _check_against_oracle(*pair)


@SETTINGS
@given(mask_pairs(ndim=3, max_side=8))
def test_3d_against_oracle(pair: tuple[np.ndarray, np.ndarray, tuple[float, ...]]) -> None:
    _check_against_oracle(*pair)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["edt", "kdtree"]), st.booleans())
def test_edt_and_kdtree_paths_agree(seed: int, method: str, three_d: bool) -> None:
    rng = np.random.default_rng(seed)
    shape = (7, 6, 5) if three_d else (13, 9)
    a, b = rng.random(shape) < 0.2, rng.random(shape) < 0.05
    sp = tuple(float(s) for s in rng.choice([0.5, 1.0, 2.5], size=len(shape)))
    other = "kdtree" if method == "edt" else "edt"
    for x, y in zip(
        point_set_distances(a, b, sp, method=method), point_set_distances(a, b, sp, method=other), strict=True
    ):
        np.testing.assert_allclose(x, y, rtol=1e-13, atol=0)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(mask_pairs(ndim=2, max_side=20), mask_pairs(ndim=3, max_side=7)))
def test_against_reference_libraries(pair: tuple[np.ndarray, np.ndarray, tuple[float, ...]]) -> None:
    pytest.importorskip("monai")
    pytest.importorskip("medpy")
    pytest.importorskip("surface_distance")
    p, g, sp = pair
    P, G = _b(p), _b(g)
    monai = surface_distance_measures(P, G, spacing=sp, convention="monai", tolerance=1.0)
    assert float(monai["hausdorff"][0]) == pytest.approx(monai_hd(p, g, sp), **F32)
    assert float(monai["asd"][0]) == pytest.approx(monai_asd(p, g, sp), **F32)
    assert float(monai["assd"][0]) == pytest.approx(monai_asd(p, g, sp, symmetric=True), **F32)
    assert float(monai["nsd"][0]) == pytest.approx(monai_nsd(p, g, sp, 1.0), **F32)
    assert float(normalized_surface_distance(P, G, tolerance=1.0, spacing=sp, use_subvoxels=True)[0]) == (
        pytest.approx(monai_nsd(p, g, sp, 1.0, use_subvoxels=True), **F32)
    )
    medpy = surface_distance_measures(P, G, spacing=sp, convention="medpy")
    ref_m = medpy_all(p, g, sp)
    assert [float(medpy[k][0]) for k in ("hausdorff", "hausdorff_percentile", "asd", "assd")] == pytest.approx(
        [ref_m[k] for k in ("hd", "hd95", "asd", "assd")], **F64
    )
    dm = surface_distance_measures(P, G, spacing=sp, convention="deepmind", tolerance=1.0)
    ref_d = deepmind_all(p, g, sp)
    assert [float(dm[k][0]) for k in ("hausdorff", "hausdorff_percentile", "asd", "assd", "nsd")] == pytest.approx(
        [ref_d[k] for k in ("hd", "hd95", "asd", "assd", "nsd")], **F64
    )
    if p.ndim == 2 and pytest.importorskip("cv2"):
        assert float(boundary_iou(P, G)[0]) == pytest.approx(authors_boundary_iou(p, g), **F64)


def test_batch_equals_single_images() -> None:
    """A batch, a list of differently sized images, and one call per image give the same numbers."""
    rng = np.random.default_rng(7)
    masks = [(rng.random((12, 15)) < 0.4, rng.random((12, 15)) < 0.4) for _ in range(3)]
    batch = average_surface_distance(
        torch.from_numpy(np.stack([m[0] for m in masks])), torch.from_numpy(np.stack([m[1] for m in masks]))
    )
    singles = [float(average_surface_distance(_b(p), _b(g))[0]) for p, g in masks]
    assert batch.tolist() == singles
    odd = (rng.random((9, 21)) < 0.4, rng.random((9, 21)) < 0.4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        listed = hausdorff_distance(
            [torch.from_numpy(m[0]) for m in [*masks, odd]],
            [torch.from_numpy(m[1]) for m in [*masks, odd]],
            percentile=95,
        )
    expected = [float(hausdorff_distance(_b(p), _b(g), percentile=95)[0]) for p, g in [*masks, odd]]
    assert listed.dtype == torch.float64 and listed.tolist() == expected
