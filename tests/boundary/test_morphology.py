"""Thinning, seg2bmap and disk dilation against scikit-image / scipy / the BSDS ground truth and the numpy oracle."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st
from scipy import ndimage
from skimage.morphology import thin as sk_thin

from segmetrics_torch.functional.boundary import annotator_boundaries
from segmetrics_torch.io import read_bsds_ground_truth
from segmetrics_torch.ops.morphology import dilate_disk, seg2bmap, thin
from segmetrics_torch.reference import boundary as ref
from tests.conftest import shared_path


@st.composite
def binary_maps(draw, max_side=40):
    h = draw(st.integers(1, max_side))
    w = draw(st.integers(1, max_side))
    density = draw(st.floats(0.05, 0.95))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    m = rng.random((h, w)) < density
    if draw(st.booleans()):  # thick blobs thin into long curves
        m = ndimage.binary_dilation(m, iterations=draw(st.integers(1, 3)))
    return m


@given(binary_maps())
def test_thin_backends_and_oracle_equal_skimage(m):
    expected = sk_thin(m)
    t = torch.from_numpy(m)
    assert np.array_equal(thin(t, backend="numba").numpy(), expected)
    assert np.array_equal(thin(t, backend="torch").numpy(), expected)
    assert np.array_equal(ref.thin(m), expected)


def test_thin_batched_shapes_and_edge_cases():
    rng = np.random.default_rng(1)
    m = ndimage.binary_dilation(rng.random((2, 3, 30, 41)) < 0.1, iterations=2)
    out = thin(torch.from_numpy(m))
    assert out.shape == m.shape and out.dtype == torch.bool
    for idx in np.ndindex(2, 3):
        assert np.array_equal(out[idx].numpy(), sk_thin(m[idx]))
    assert not thin(torch.zeros(5, 7, dtype=torch.bool)).any()
    assert thin(torch.ones(1, 1, dtype=torch.bool)).all()  # a lone pixel stays
    assert thin(torch.zeros(0, 4, 4, dtype=torch.bool)).shape == (0, 4, 4)
    with pytest.raises(TypeError, match="mask"):
        thin(torch.zeros(4, 4))
    with pytest.raises(ValueError, match="backend"):
        thin(torch.zeros(4, 4, dtype=torch.bool), backend="cuda")


@given(st.integers(1, 30), st.integers(1, 30), st.integers(1, 6), st.integers(0, 2**31 - 1))
def test_seg2bmap_equals_matlab_ports(h, w, k, seed):
    labels = np.random.default_rng(seed).integers(0, k, (h, w))
    got = seg2bmap(torch.from_numpy(labels)).numpy()
    assert np.array_equal(got, ref.seg2bmap(labels))
    # BSR's seg2bdry(seg, 'imageSize') samples a double-size grid; it is the same map
    assert np.array_equal(got, ref.seg2bdry_image_size(labels))


def test_seg2bmap_rejects_float_labels():
    with pytest.raises(TypeError, match="labels"):
        seg2bmap(torch.zeros(3, 3))


def test_bsds_boundaries_are_thinned_seg2bmap():
    """BSDS500 `Boundaries` == thin(seg2bmap(Segmentation)) for every annotation of the 20 sampled test images."""
    folder = shared_path("bsds_sample", "BSDS500", "data", "groundTruth", "test")
    files = sorted(folder.glob("*.mat"))
    assert len(files) == 20
    n = 0
    for f in files:
        gt = read_bsds_ground_truth(f)
        got = annotator_boundaries(torch.from_numpy(gt.segmentations)).numpy()
        assert np.array_equal(got, gt.boundaries), f.name
        n += len(got)
    assert n == 107


@given(binary_maps(30), st.floats(0.5, 6.0))
def test_dilate_disk_equals_scipy(m, radius):
    r = int(np.ceil(radius))
    yy, xx = np.mgrid[-r : r + 1, -r : r + 1]
    disk = xx**2 + yy**2 <= radius**2
    expected = ndimage.binary_dilation(m, structure=disk)
    for backend in ("numba", "torch"):
        got = dilate_disk(torch.from_numpy(m)[None], radius, backend=backend)[0].numpy()
        assert np.array_equal(got, expected)
