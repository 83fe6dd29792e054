"""Morphological boundary F (DAVIS f_boundary) against the numpy port of f_boundary.m."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st
from scipy import ndimage

from segmetrics_torch import MorphologicalBoundaryF
from segmetrics_torch.functional.boundary import boundary_radius, morphological_boundary_f
from segmetrics_torch.reference import boundary as ref


@st.composite
def mask_pairs(draw):
    h = draw(st.integers(2, 60))
    w = draw(st.integers(2, 60))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))

    def mask():
        m = ndimage.binary_dilation(rng.random((h, w)) < draw(st.floats(0.0, 0.05)), iterations=draw(st.integers(0, 4)))
        return m if draw(st.booleans()) else np.zeros_like(m) if draw(st.booleans()) else m

    return mask(), mask(), draw(st.sampled_from([0.008, 0.03, 0.1, 1, 3]))


@given(mask_pairs())
def test_equals_f_boundary_port(pair):
    fg, gt, th = pair
    got = morphological_boundary_f(torch.from_numpy(fg)[None], torch.from_numpy(gt)[None], bound_th=th)
    f, p, r = ref.f_boundary(fg, gt, th)
    assert float(got["f"][0]) == pytest.approx(f, abs=1e-15)
    assert float(got["precision"][0]) == pytest.approx(p, abs=1e-15)
    assert float(got["recall"][0]) == pytest.approx(r, abs=1e-15)


def test_edge_cases_and_radius():
    assert boundary_radius(0.008, 321, 481) == 5  # ceil(0.008 * 578.3)
    assert boundary_radius(3, 321, 481) == 3
    empty = torch.zeros(1, 20, 20, dtype=torch.bool)
    square = empty.clone()
    square[0, 5:15, 5:15] = True
    cases = [((empty, square), (0.0, 1.0, 0.0)), ((square, empty), (0.0, 0.0, 1.0)), ((empty, empty), (1.0, 1.0, 1.0))]
    for (pred, gt), (f, p, r) in cases:
        got = morphological_boundary_f(pred, gt)
        assert (float(got["f"][0]), float(got["precision"][0]), float(got["recall"][0])) == (f, p, r)


def test_metric_lists_and_batches(device):
    rng = np.random.default_rng(0)
    preds = [
        torch.from_numpy(ndimage.binary_dilation(rng.random(s) < 0.02, iterations=3))
        for s in ((30, 40), (30, 40), (25, 33))
    ]
    target = [
        torch.from_numpy(ndimage.binary_dilation(rng.random(s) < 0.02, iterations=3))
        for s in ((30, 40), (30, 40), (25, 33))
    ]
    per_image = [ref.f_boundary(p.numpy(), t.numpy()) for p, t in zip(preds, target, strict=True)]
    metric = MorphologicalBoundaryF().to(device)
    metric.update([p.to(device) for p in preds[:2]], [t.to(device) for t in target[:2]])
    metric.update(preds[2][None].to(device), target[2][None].to(device))
    got = metric.compute()
    np.testing.assert_allclose(
        [float(got[k]) for k in ("f", "precision", "recall")], np.mean(per_image, axis=0), rtol=0, atol=1e-15
    )
    functional = morphological_boundary_f(preds, target)
    np.testing.assert_allclose(functional["f"].numpy(), [v[0] for v in per_image], rtol=0, atol=1e-15)


def test_bad_input():
    m = torch.zeros(2, 10, 10, dtype=torch.bool)
    with pytest.raises(ValueError, match="same shape"):
        morphological_boundary_f([m[0]], [m[0, :5]])
    with pytest.raises(ValueError, match="boolean"):
        morphological_boundary_f(m.float() + 0.5, m)
    with pytest.raises(ValueError, match="bound_th"):
        MorphologicalBoundaryF(bound_th=0)
    with pytest.raises(ValueError, match="as many"):
        morphological_boundary_f([m[0], m[1]], [m[0]])
    with pytest.raises(ValueError, match="empty batch"):
        morphological_boundary_f(m[:0], m[:0])
