"""The two speed-ups of the distance lists change no value: the batch cut to the bounding box of its foreground
(boundary points, surfel codes and their C order are those of the whole grid) and the KDTree's build and query
options (the exact nearest distance of every point, as a brute-force scan finds it)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from segmetrics_torch.functional.surface import surface_distances
from segmetrics_torch.functional.surface.distances import _crop_to_union, point_set_distances


def _embedded(masks: np.ndarray, pad: tuple[tuple[int, int], ...]) -> torch.Tensor:
    return torch.from_numpy(np.pad(masks, ((0, 0), *pad)))


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    ndim=st.sampled_from([2, 3]),
    pads=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=3, max_size=3),
    convention=st.sampled_from(["monai", "deepmind", "medpy"]),
)
def test_a_mask_in_a_larger_canvas_has_the_same_distances(seed, ndim, pads, convention) -> None:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 7, size=ndim)
    if ndim == 3:  # a volume of one slice is refused (read as MONAI's (B, 1, H, W) masks)
        sizes[0] = max(int(sizes[0]), 2)
    shape = (2, *sizes)
    p, g = rng.random(shape) < 0.4, rng.random(shape) < 0.4
    pad = tuple(pads[:ndim])
    spacing = tuple(float(s) for s in rng.uniform(0.5, 2.0, size=ndim))
    tight = surface_distances(torch.from_numpy(p), torch.from_numpy(g), convention=convention, spacing=spacing)
    wide = surface_distances(_embedded(p, pad), _embedded(g, pad), convention=convention, spacing=spacing)
    for row_tight, row_wide in zip(tight, wide, strict=True):
        for a, b in zip(row_tight, row_wide, strict=True):
            assert a is not None and b is not None
            np.testing.assert_array_equal(a.pred_to_gt, b.pred_to_gt)
            np.testing.assert_array_equal(a.gt_to_pred, b.gt_to_pred)
            for x, y in ((a.pred_sizes, b.pred_sizes), (a.gt_sizes, b.gt_sizes)):
                assert (x is None) == (y is None)
                if x is not None:
                    np.testing.assert_array_equal(x, y)
            assert (a.pred_empty, a.gt_empty) == (b.pred_empty, b.gt_empty)


def test_the_cut_keeps_the_foreground_and_leaves_empty_stacks_alone() -> None:
    stack = torch.zeros(3, 9, 10, 11, dtype=torch.bool)
    assert _crop_to_union(stack).shape == stack.shape
    stack[0, 2, 3, 4] = True
    stack[2, 5, 7, 4] = True
    cut = _crop_to_union(stack)
    assert cut.shape == (3, 4, 5, 1) and int(cut.sum()) == 2
    flat = torch.zeros(2, 6, 8, dtype=torch.bool)
    flat[1, 0, 7] = True
    assert _crop_to_union(flat).shape == (2, 1, 1)


@pytest.mark.parametrize("metric", ["euclidean", "chessboard", "taxicab"])
def test_the_tree_query_is_the_brute_force_minimum(metric: str) -> None:
    rng = np.random.default_rng(1)
    a, b = rng.random((30, 40, 20)) < 0.01, rng.random((30, 40, 20)) < 0.01
    spacing = (1.5, 0.7, 1.1)
    d_ab, d_ba = point_set_distances(a, b, spacing, metric, method="kdtree")
    if metric == "euclidean":
        # scipy's float operations on the integer offsets (each times its spacing, squared, added in axis order):
        # the references' bits, which the tree's subtracted coordinates missed by up to 4e-15
        offsets = (np.argwhere(a)[:, None, :] - np.argwhere(b)[None, :, :]) * np.asarray(spacing)
        squares = offsets * offsets
        brute = np.sqrt((squares[..., 0] + squares[..., 1]) + squares[..., 2])
        np.testing.assert_array_equal(d_ab, brute.min(axis=1))
        np.testing.assert_array_equal(d_ba, brute.min(axis=0))
        return
    pa, pb = np.argwhere(a) * spacing, np.argwhere(b) * spacing
    p = {"chessboard": np.inf, "taxicab": 1}[metric]
    brute = np.linalg.norm(pa[:, None, :] - pb[None, :, :], ord=p, axis=-1)
    np.testing.assert_allclose(d_ab, brute.min(axis=1), rtol=1e-15, atol=0)
    np.testing.assert_allclose(d_ba, brute.min(axis=0), rtol=1e-15, atol=0)
