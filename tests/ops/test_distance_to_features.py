"""``distance_to_features`` (the boundary-distance family's EDT with spacing) against scipy's
``distance_transform_edt(~mask, sampling=spacing)``: random, sparse, one-feature, full and empty masks, lines without
features along every axis, 2-D and 3-D, isotropic and anisotropic spacing, single-voxel axes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st
from scipy import ndimage

from segmetrics_torch.ops.distance import distance_to_features, distance_to_features_device

pytest.importorskip("numba")


def _scipy(mask: np.ndarray, spacing: tuple[float, ...]) -> np.ndarray:
    return np.asarray(ndimage.distance_transform_edt(~mask, sampling=spacing), dtype=np.float64)


def _check(mask: np.ndarray, spacing: tuple[float, ...]) -> None:
    got = distance_to_features(mask, spacing)
    assert got.shape == mask.shape and got.dtype == np.float64
    # read at some elements only (the last pass evaluates its envelope there alone): the same bits, in C order
    rng = np.random.default_rng(mask.size)
    # (sparse `at`: the last pass evaluated there alone; dense: the whole pass, then read)
    for at in (
        rng.random(mask.shape) < 0.1,
        rng.random(mask.shape) < 0.5,
        np.ones(mask.shape, bool),
        np.zeros(mask.shape, bool),
        mask,
    ):
        picked = distance_to_features(mask, spacing, at=at)
        assert picked.dtype == np.float64 and np.array_equal(picked, got[at])
        # the device transform (brute-force minimum per line; run here on CPU tensors): bitwise on a unit grid, an
        # ulp or two with spacing (the envelope may take the other of two parabolas equal to an ulp)
        device = distance_to_features_device(torch.from_numpy(mask), spacing, torch.from_numpy(at))
        assert device.dtype == torch.float64
        if all(s == 1.0 for s in spacing):
            assert np.array_equal(device.numpy(), picked)
        else:
            np.testing.assert_allclose(device.numpy(), picked, rtol=4e-16, atol=0)
    if not mask.any():
        assert np.isinf(got).all()
        return
    expected = _scipy(mask, spacing)
    # the squared distance is summed axis by axis: an ulp or two from scipy's order; bitwise on a unit grid
    tol = 0 if all(s == 1.0 for s in spacing) else 4e-16
    np.testing.assert_allclose(got, expected, rtol=tol, atol=0)


@pytest.mark.parametrize("spacing", [(1.0, 1.0, 1.0), (2.5, 0.7, 0.9), (0.3, 3.0, 1.0)])
@pytest.mark.parametrize("density", [0.5, 0.05, 0.001])
def test_random_volumes(spacing: tuple[float, ...], density: float) -> None:
    rng = np.random.default_rng(int(density * 1000))
    _check(rng.random((23, 31, 17)) < density, spacing)


@pytest.mark.parametrize(
    "shape", [(1, 1, 1), (1, 1, 9), (1, 9, 1), (9, 1, 1), (1, 12, 13), (5, 1, 7), (4, 6, 1), (1, 1), (1, 8), (8, 1)]
)
def test_thin_shapes(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(len(shape))
    mask = rng.random(shape) < 0.3
    mask.flat[0] = True
    spacing = tuple(float(s) for s in rng.uniform(0.5, 2, len(shape)))
    _check(mask, spacing)
    _check(mask, (1.0,) * len(shape))


def test_one_feature_full_and_empty() -> None:
    one = np.zeros((15, 16, 17), bool)
    one[3, 15, 0] = True
    _check(one, (1.0, 2.0, 0.5))
    _check(np.ones((4, 5, 6), bool), (1.0, 1.0, 1.0))
    _check(np.zeros((4, 5, 6), bool), (1.0, 1.0, 1.0))
    plane = np.zeros((9, 10, 11), bool)
    plane[:, 4, :] = True  # every line along the other two axes lacks a feature in the first pass but one
    _check(plane, (1.3, 0.6, 1.0))


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    ndim=st.sampled_from([2, 3]),
    density=st.sampled_from([0.0, 0.01, 0.2, 0.9]),
    iso=st.booleans(),
)
def test_hypothesis_masks(seed: int, ndim: int, density: float, iso: bool) -> None:
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(1, 14, ndim))
    mask = rng.random(shape) < density
    spacing = (1.0,) * ndim if iso else tuple(float(s) for s in rng.uniform(0.2, 3.0, ndim))
    _check(mask, spacing)


def test_at_of_another_shape_is_refused() -> None:
    with pytest.raises(ValueError, match="`at` of the features' shape"):
        distance_to_features(np.ones((3, 4), bool), (1.0, 1.0), at=np.ones((4, 3), bool))


def test_device_transform_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    # chunks of a few lines (the GPU's bound on the (lines, n, n) table) give the same values
    import segmetrics_torch.ops.distance as distance

    rng = np.random.default_rng(7)
    mask = rng.random((6, 9, 11)) < 0.1
    at = np.ones(mask.shape, bool)
    whole = distance_to_features_device(torch.from_numpy(mask), (1.0, 2.0, 0.5), torch.from_numpy(at))
    monkeypatch.setattr(distance, "_DEVICE_CHUNK", 3 * 11 * 11)
    chunked = distance_to_features_device(torch.from_numpy(mask), (1.0, 2.0, 0.5), torch.from_numpy(at))
    assert torch.equal(whole, chunked)
    with pytest.raises(ValueError, match="`at` of its shape"):
        distance_to_features_device(torch.from_numpy(mask), (1.0, 1.0, 1.0), torch.ones(2, 2, dtype=torch.bool))


@pytest.mark.parametrize("spacing", [(1.0, 1.0), (0.7, 1.3)])
def test_device_transform_refuses_masks_that_are_not_bool(spacing):
    """A uint8 mask is refused on either route: the unit grid's integer-keyed transform would read it as empty and
    return inf everywhere without a word."""
    f = torch.zeros(4, 5, dtype=torch.uint8)
    f[0, 0] = 3
    at = torch.ones(4, 5, dtype=torch.bool)
    with pytest.raises(TypeError, match=r"`features` to be a bool tensor, but got dtype torch\.uint8"):
        distance_to_features_device(f, spacing, at)
    with pytest.raises(TypeError, match=r"`at` to be a bool tensor, but got dtype torch\.uint8"):
        distance_to_features_device(f.bool(), spacing, at.to(torch.uint8))


@pytest.mark.parametrize(
    ("shape", "spacing", "features"),
    [
        # a CT-like spacing: two parabolas equal at one column and a third strictly nearer a hair to its right; a
        # kernel that kept a parabola whose interval had shrunk to a point within rounding returned the second
        # (109.12225513130402 for 109.12225373298347 at (0, 48), 1e8 ulps; found by a review)
        ((100, 256), (1.0, 0.9765625), [(99, 1), (99, 95), (59, 142)]),
        # the same on a (3, 1) grid: a squared distance off by 1.0 (1041130 for 1041129)
        ((265, 4100), (3.0, 1.0), [(81, 2009), (263, 2353), (9, 4020)]),
        # three features equally near one pixel (1 row at 0.3, 3 columns at 0.1 on either side): the lowest rounded
        # value, scipy's 0.3, not 0.30000000000000004
        ((9, 20), (0.3, 0.1), [(4, 10), (5, 7), (5, 13)]),
    ],
)
def test_the_nearest_feature_among_near_equal_parabolas(
    shape: tuple[int, int], spacing: tuple[float, float], features: list[tuple[int, int]]
) -> None:
    mask = np.zeros(shape, bool)
    for r, c in features:
        mask[r, c] = True
    expected = ndimage.distance_transform_edt(~mask, sampling=spacing)
    assert np.array_equal(distance_to_features(mask, spacing), expected)
    at = np.ones(shape, bool)
    device = distance_to_features_device(torch.from_numpy(mask), spacing, torch.from_numpy(at)).numpy()
    assert np.array_equal(device.reshape(shape), expected)
