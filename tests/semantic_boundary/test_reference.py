"""The fast path against the plain numpy reference (``segmetrics_torch.reference.semantic_boundary``) on random
multi-class inputs: GT regeneration bit for bit, counts, summaries."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from segmetrics_torch.functional.semantic_boundary import (
    mask_boundaries,
    regenerate_boundaries,
    semantic_boundary_counts,
    semantic_boundary_pr,
)
from segmetrics_torch.reference import semantic_boundary as ref


def _blobs(rng: np.random.Generator, shape: tuple[int, int], values: int) -> np.ndarray:
    """A label map of a few rectangles (later ones on top)."""
    h, w = shape
    out = np.zeros(shape, np.int64)
    for _ in range(int(rng.integers(2, 6))):
        y0, x0 = rng.integers(0, h), rng.integers(0, w)
        out[y0 : y0 + rng.integers(2, h), x0 : x0 + rng.integers(2, w)] = rng.integers(1, values + 1)
    return out


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    h=st.integers(6, 24),
    w=st.integers(6, 24),
    radius=st.sampled_from([1.0, 2.0, 1.5, 3.0]),
    border=st.integers(0, 3),
    thin=st.booleans(),
    instances=st.booleans(),
)
def test_regeneration_equals_reference(seed, h, w, radius, border, thin, instances) -> None:
    rng = np.random.default_rng(seed)
    labels = _blobs(rng, (h, w), 3)
    ignore = np.zeros((h, w), bool)
    if border:
        ignore[:border] = ignore[-border:] = True
        ignore[:, :border] = ignore[:, -border:] = True
    inst = _blobs(rng, (h, w), 4) if instances else None
    classes = {i: int(rng.integers(1, 4)) for i in range(1, 5)} if instances else None
    expected = ref.regenerate_boundaries(labels, [1, 2, 3], radius, thin, ignore if border else None, inst, classes)
    got = regenerate_boundaries(
        torch.from_numpy(labels),
        [1, 2, 3],
        radius=radius,
        thin=thin,
        ignore=torch.from_numpy(ignore) if border else None,
        instances=torch.from_numpy(inst) if inst is not None else None,
        instance_classes=classes,
    )
    np.testing.assert_array_equal(got.numpy(), expected)


def test_mask_boundaries_both_sides_and_not_along_the_ignore_region() -> None:
    m = torch.zeros(1, 6, 8, dtype=torch.bool)
    m[0, :, 4:] = True
    ignore = torch.zeros(6, 8, dtype=torch.bool)
    ignore[:, 7] = True
    e = mask_boundaries(m, ignore, 1)[0]
    assert e[:, 3].all() and e[:, 4].all() and not e[:, [0, 1, 2, 5, 6]].any()
    np.testing.assert_array_equal(e.numpy(), ref.mask_boundaries(m[0].numpy(), ignore.numpy(), 1))


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    thin=st.booleans(),
    kill=st.booleans(),
    skip=st.booleans(),
    border=st.sampled_from([0, 2]),
    max_dist=st.sampled_from([0.05, 1.5, 2.0]),
)
def test_counts_equal_reference(seed, thin, kill, skip, border, max_dist) -> None:
    rng = np.random.default_rng(seed)
    b, k, h, w = 2, 3, 18, 22
    seg = np.stack([_blobs(rng, (h, w), k) - 1 for _ in range(b)])  # trainIds 0..k-1, -1 background
    gt = np.stack([ref.regenerate_boundaries(s, list(range(k)), 1.0, True) for s in seg])
    gt[1, 2] = False  # a class without edges in one image
    pb = np.clip(gt * rng.uniform(0.3, 1, gt.shape) + 0.6 * rng.random(gt.shape) ** 3, 0, 1)
    pb = np.round(pb * 255).astype(np.uint8)
    thresholds = np.array([0.0, 0.1, 0.3, 0.5, 0.7, 0.9])  # 0: every pixel on
    counts = semantic_boundary_counts(
        torch.from_numpy(pb),
        torch.from_numpy(gt),
        torch.from_numpy(seg),
        thresholds=thresholds,
        max_dist=max_dist,
        thin=thin,
        kill_internal=kill,
        skip_if_nonexistent=skip,
        ignore_border=border,
    )
    got = torch.stack([counts.cnt_r, counts.sum_r, counts.cnt_p, counts.sum_p], -1).numpy()  # (B, K, T, 4)
    for i in range(b):
        for c in range(k):
            expected = ref.evaluate_image_class(
                pb[i, c] / 255, gt[i, c], seg[i] == c, thresholds, max_dist, thin, kill, skip, border
            )
            np.testing.assert_array_equal(got[i, c], expected, err_msg=f"image {i}, class {c}")


def test_summaries_equal_reference() -> None:
    rng = np.random.default_rng(5)
    seg = np.stack([_blobs(rng, (20, 26), 2) - 1 for _ in range(3)])
    gt = np.stack([ref.regenerate_boundaries(s, [0, 1], 1.0, True) for s in seg])
    pb = np.clip(gt * 0.8 + 0.5 * rng.random(gt.shape) ** 2, 0, 1)
    thresholds = np.linspace(0.05, 0.95, 19)
    res = semantic_boundary_pr(
        torch.from_numpy(pb), torch.from_numpy(gt), thresholds=thresholds, max_dist=1.5, skip_if_nonexistent=True
    )
    tables = np.stack(
        [
            np.stack(
                [
                    ref.evaluate_image_class(pb[i, c], gt[i, c], None, thresholds, 1.5, skip_if_nonexistent=True)
                    for c in range(2)
                ]
            )
            for i in range(3)
        ]
    )
    expected = ref.semantic_summary(thresholds, tables)
    np.testing.assert_allclose(res["ods_f"].numpy(), expected["ods_f"], atol=1e-12)
    np.testing.assert_allclose(res["ois_f"].numpy(), expected["ois_f"], atol=1e-12)
    np.testing.assert_allclose(res["ap"].numpy(), expected["ap"], atol=1e-12)
    mean = res["mean"]
    assert [float(mean["ods_f"]), float(mean["ois_f"]), float(mean["ap"])] == pytest.approx(expected["mean"], abs=1e-12)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), thin=st.booleans(), kill=st.booleans())
def test_perfect_prediction_scores_one(seed, thin, kill) -> None:
    """Predicting the GT edges themselves: every class with edges has ODS = OIS = 1, whatever the switches."""
    rng = np.random.default_rng(seed)
    seg = np.stack([_blobs(rng, (16, 20), 3) - 1 for _ in range(2)])
    gt = np.stack([ref.regenerate_boundaries(s, [0, 1, 2], 1.0, True) for s in seg])
    res = semantic_boundary_pr(
        torch.from_numpy(gt.astype(np.float64)),
        torch.from_numpy(gt),
        torch.from_numpy(seg),
        thresholds=5,
        max_dist=1.0,
        thin=thin,
        kill_internal=kill,
        skip_if_nonexistent=True,
    )
    present = gt.any(axis=(0, 2, 3))
    np.testing.assert_allclose(res["ods_f"].numpy()[present], 1.0)
    np.testing.assert_allclose(res["ois_f"].numpy()[present], 1.0)
    assert (res["ods_f"].numpy()[~present] == 0).all()
