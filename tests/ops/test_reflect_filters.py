"""The windowed reflect-101 filter by FFT, its border gap and the mask moments, against OpenCV and plain numpy."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from segmetrics_torch.ops.filters import filter2d_reflect_gap, filter2d_reflect_window, reflect101_index
from segmetrics_torch.ops.masks import MOMENT_NAMES, mask_moments

cv2 = pytest.importorskip("cv2")


def opencv_filter(x: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    return cv2.filter2D(x, -1, kernel, borderType=cv2.BORDER_REFLECT_101)


@st.composite
def filter_cases(draw):
    """A (C, H, W) stack (1..40 per side: tiny images where the kernel is reflected several times too), an odd
    kernel (1..41 per side, any values: not symmetric) and a window inside the image."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    h, w = draw(st.integers(1, 40)), draw(st.integers(1, 40))
    kh, kw = 2 * draw(st.integers(0, 20)) + 1, 2 * draw(st.integers(0, 20)) + 1
    r0, c0 = draw(st.integers(0, h - 1)), draw(st.integers(0, w - 1))
    r1, c1 = draw(st.integers(r0 + 1, h)), draw(st.integers(c0 + 1, w))
    maps = rng.random((draw(st.integers(1, 3)), h, w))
    return maps, rng.normal(size=(kh, kw)), (r0, r1), (c0, c1)


@settings(max_examples=300, deadline=None)
@given(filter_cases(), st.sampled_from(("auto", "torch")))
def test_window_equals_opencv_filter2d(case, backend):
    maps, kernel, rows, cols = case
    out = filter2d_reflect_window(torch.from_numpy(maps), torch.from_numpy(kernel), rows, cols, backend=backend)
    assert out.shape == (maps.shape[0], rows[1] - rows[0], cols[1] - cols[0]) and out.dtype == torch.float64
    for c in range(maps.shape[0]):
        expected = opencv_filter(maps[c], kernel)[rows[0] : rows[1], cols[0] : cols[1]]
        np.testing.assert_allclose(out[c].numpy(), expected, rtol=0, atol=1e-12 * max(1.0, np.abs(kernel).sum()))


def test_window_takes_a_list_and_bool_maps():
    rng = np.random.default_rng(1)
    x, g = rng.random((30, 20)), rng.random((30, 20)) < 0.3
    k = rng.random((7, 9))
    out = filter2d_reflect_window([torch.from_numpy(x), torch.from_numpy(g)], torch.from_numpy(k), (3, 28), (0, 20))
    np.testing.assert_allclose(out[0].numpy(), opencv_filter(x, k)[3:28], atol=1e-13)
    np.testing.assert_allclose(out[1].numpy(), opencv_filter(g.astype(np.float64), k)[3:28], atol=1e-13)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((torch.zeros(5, 5), torch.ones(3, 3), (0, 5), (0, 5)), r"`maps` of shape \(C, H, W\)"),
        ((torch.zeros(1, 5, 5), torch.ones(2, 3), (0, 5), (0, 5)), "odd sizes"),
        ((torch.zeros(1, 5, 5), torch.ones(3, 3, dtype=torch.int64), (0, 5), (0, 5)), "floating"),
        ((torch.zeros(1, 5, 5), torch.ones(3, 3), (2, 2), (0, 5)), "non-empty window"),
        ((torch.zeros(1, 5, 5), torch.ones(3, 3), (0, 6), (0, 5)), "inside the 5x5"),
        (([torch.zeros(5, 5), torch.zeros(5, 4)], torch.ones(3, 3), (0, 5), (0, 4)), r"`maps\[1\]` of shape"),
        (([], torch.ones(3, 3), (0, 5), (0, 5)), "at least one map"),
    ],
)
def test_window_bad_arguments(args, match):
    with pytest.raises(ValueError, match=match):
        filter2d_reflect_window(*args)
    with pytest.raises(ValueError, match="`backend`"):
        filter2d_reflect_window(torch.zeros(1, 5, 5), torch.ones(3, 3), (0, 5), (0, 5), backend="cuda")


@pytest.mark.parametrize("length", [1, 2, 3, 7])
def test_reflect101_index_is_opencv_border_interpolate(length):
    expected = [cv2.borderInterpolate(p, length, cv2.BORDER_REFLECT_101) for p in range(-20, length + 20)]
    assert reflect101_index(length, -20, length + 20).tolist() == expected


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(1, 40),
    st.integers(1, 40),
    st.integers(0, 15),
    st.integers(0, 15),
    st.sampled_from(("bool", "float")),
)
def test_gap_is_the_difference_of_the_two_inner_products(seed, h, w, half_r, half_c, kind):
    rng = np.random.default_rng(seed)
    k = rng.random((2 * half_r + 1, 2 * half_c + 1))
    k = k + k[::-1, ::-1]  # point-symmetric
    x = rng.random((h, w))
    y = rng.random((h, w)) < rng.uniform(0, 0.6)
    y_float = y.astype(np.float64)
    expected = np.sum(x * opencv_filter(y_float, k)) - np.sum(opencv_filter(x, k) * y_float)
    got = filter2d_reflect_gap(
        torch.from_numpy(x), torch.from_numpy(y if kind == "bool" else y_float), torch.from_numpy(k)
    )
    assert got == pytest.approx(expected, abs=1e-11 * max(1.0, k.sum() * h * w))


def test_gap_is_zero_away_from_the_border_and_checks_symmetry():
    x = torch.rand(40, 50, dtype=torch.float64)
    y = torch.zeros(40, 50, dtype=torch.bool)
    y[15:25, 20:30] = True  # farther than half the kernel from every border
    k = torch.rand(9, 11, dtype=torch.float64)
    assert filter2d_reflect_gap(x, y, k + k.flip(0, 1)) == 0.0
    with pytest.raises(ValueError, match="point-symmetric"):
        filter2d_reflect_gap(x, y, k)
    with pytest.raises(ValueError, match="one \\(H, W\\) shape"):
        filter2d_reflect_gap(x, y[:, :4], k + k.flip(0, 1))


def numpy_moments(masks: np.ndarray) -> np.ndarray:
    rows = []
    for m in masks:
        i, j = np.nonzero(m)
        if i.size == 0:
            rows.append([0, 0, 0, 0, 0, 0, m.shape[0], -1, m.shape[1], -1])
        else:
            rows.append(
                [
                    i.size,
                    i.sum(),
                    j.sum(),
                    (i * i).sum(),
                    (j * j).sum(),
                    (i * j).sum(),
                    i.min(),
                    i.max(),
                    j.min(),
                    j.max(),
                ]
            )
    return np.array(rows, np.int64).reshape(len(masks), 10)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 4), st.integers(1, 50), st.integers(1, 50))
def test_mask_moments_both_backends_equal_numpy(seed, b, h, w):
    rng = np.random.default_rng(seed)
    masks = rng.random((b, h, w)) < rng.uniform(0, 1, (b, 1, 1))
    if b:
        masks[0] = False  # an empty mask
    expected = numpy_moments(masks)
    for backend in ("auto", "numba", "torch"):
        out = mask_moments(torch.from_numpy(masks), backend=backend)
        assert out.dtype == torch.int64 and out.shape == (b, len(MOMENT_NAMES))
        np.testing.assert_array_equal(out.numpy(), expected)


def test_mask_moments_checks_its_input():
    with pytest.raises(ValueError, match="`masks` to be a bool"):
        mask_moments(torch.zeros(2, 3, 4))
    with pytest.raises(ValueError, match="`backend`"):
        mask_moments(torch.zeros(2, 3, 4, dtype=torch.bool), backend="gpu")
