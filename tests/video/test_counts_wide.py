"""The compiled DAVIS counts on frames wider than one 64-pixel word, with disks up to the bitmap path's limit (63) and
beyond it (the box path), against the per-object numpy + OpenCV reference of ``test_counts`` and the tensor path."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from segmetrics_torch.ops.davis import davis_counts
from tests.video.test_counts import assert_both_paths_equal_the_reference, per_object_counts

pytest.importorskip("cv2")
pytest.importorskip("skimage")


@st.composite
def wide_frames(draw):
    t = draw(st.integers(1, 3))
    h, w = draw(st.integers(1, 40)), draw(st.integers(60, 200))  # rows of 1 to 4 words, ragged ends
    p, k = draw(st.integers(0, 4)), draw(st.integers(0, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    yy, xx = np.mgrid[:h, :w]

    def blobs(n: int, top: int) -> np.ndarray:
        maps = np.zeros((t, h, w), np.uint8)
        for i in range(t):
            for a in range(1, n + 1):  # discs and bars touching the borders and each other
                cy, cx, r = rng.uniform(-5, h + 5), rng.uniform(-5, w + 5), rng.uniform(1, 40)
                maps[i][(yy - cy) ** 2 + (xx - cx) ** 2 < r * r] = min(a, top)
            if rng.random() < 0.3:
                maps[i, :, rng.integers(0, w) :] = rng.integers(0, top + 1)
        return maps

    pred = blobs(p + 1, p) if draw(st.booleans()) else rng.integers(0, p + 1, (t, h, w)).astype(np.uint8)
    target = blobs(k + 2, 255)  # ids above K (no object) and 255 (void) among them
    target[rng.random(target.shape) < 0.03] = 255
    radius = draw(st.sampled_from([0, 1, 2, 5, 8, 17, 63, 64, 70]))
    return pred, target, p, k, radius, draw(st.booleans())


@settings(max_examples=40, deadline=None)
@given(wide_frames())
def test_wide_frames_equal_the_per_object_reference(case):
    pred, target, p, k, radius, void = case
    assert_both_paths_equal_the_reference(pred, target, p, k, radius, void, f" radius {radius}")


@pytest.mark.parametrize("radius", [8, 63, 64])
def test_many_frames_share_the_per_thread_scratch(radius):
    # more frames than the kernel's blocks: each block's bitmaps are cleared between its frames
    rng = np.random.default_rng(radius)
    yy, xx = np.mgrid[:48, :130]
    target = np.zeros((19, 48, 130), np.uint8)
    for i in range(19):
        for a in range(1, 4):
            cy, cx, r = rng.uniform(0, 48), rng.uniform(0, 130), rng.uniform(3, 30)
            target[i][(yy - cy) ** 2 + (xx - cx) ** 2 < r * r] = a
    pred = np.roll(target, (2, -3), axis=(1, 2))
    pred[::3] = 0  # empty frames between full ones
    got = davis_counts(
        torch.from_numpy(pred), torch.from_numpy(target), num_preds=3, num_targets=3, radius=radius, void=False
    )
    want = per_object_counts(pred, target, 3, 3, radius, False)
    for name, value in want.items():
        np.testing.assert_array_equal(got[name].numpy(), value, err_msg=name)
