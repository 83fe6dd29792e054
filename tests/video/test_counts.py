"""The batched DAVIS counts (ops.davis): the compiled kernel and the tensor path against a per-object numpy + OpenCV
reference (``seg2bmap``, ``cv2.dilate`` with ``skimage.morphology.disk``, as davis2017-evaluation's ``f_measure``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from segmetrics_torch.ops.davis import davis_counts, dilate_disk_rows
from segmetrics_torch.reference.boundary import seg2bmap

cv2 = pytest.importorskip("cv2")
disk = pytest.importorskip("skimage.morphology").disk


def per_object_counts(pred, target, p, k, radius, void):
    """The counts one object and one frame at a time, as the reference computes them."""
    out = {n: [] for n in ("joint", "fg_match", "gt_match", "n_fg", "n_gt", "pred_max")}
    kernel = disk(radius).astype(np.uint8)
    for t in range(pred.shape[0]):
        v = (target[t] == 255) if void else np.zeros(target[t].shape, bool)
        tg = np.where((target[t] == 255) | (target[t] > k), 0, target[t])
        joint = np.zeros((p + 1, k + 1), np.int64)
        for a in range(p + 1):
            for b in range(k + 1):
                joint[a, b] = ((pred[t] == a) & (tg == b) & ~v).sum()
        pb = [seg2bmap(((pred[t] == a + 1) & ~v).astype(np.uint8)) for a in range(p)]
        gb = [seg2bmap(((tg == b + 1) & ~v).astype(np.uint8)) for b in range(k)]
        pd = [cv2.dilate(x.astype(np.uint8), kernel) > 0 for x in pb]
        gd = [cv2.dilate(x.astype(np.uint8), kernel) > 0 for x in gb]
        out["joint"].append(joint)
        out["fg_match"].append(np.array([[(pb[a] & gd[b]).sum() for b in range(k)] for a in range(p)]).reshape(p, k))
        out["gt_match"].append(np.array([[(gb[b] & pd[a]).sum() for b in range(k)] for a in range(p)]).reshape(p, k))
        out["n_fg"].append(np.array([x.sum() for x in pb], np.int64).reshape(p))
        out["n_gt"].append(np.array([x.sum() for x in gb], np.int64).reshape(k))
        out["pred_max"].append(int(pred[t].max()))
    return {name: np.stack(v) if name != "pred_max" else np.array(v) for name, v in out.items()}


@st.composite
def frames(draw):
    t = draw(st.integers(1, 3))
    h, w = draw(st.integers(1, 24)), draw(st.integers(1, 24))
    p, k = draw(st.integers(0, 4)), draw(st.integers(0, 4))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    if draw(st.booleans()):  # blobs: rectangles of each id
        pred = np.zeros((t, h, w), np.uint8)
        for a in range(1, p + 1):
            y0, x0 = rng.integers(0, h), rng.integers(0, w)
            pred[:, y0 : y0 + rng.integers(1, h + 1), x0 : x0 + rng.integers(1, w + 1)] = a
    else:  # noise: every pixel its own boundary
        pred = rng.integers(0, p + 1, (t, h, w)).astype(np.uint8)
    ids = np.array([0, 1, 2, 3, 5, 255], np.uint8)  # 5: above K, 255: void
    target = rng.choice(ids, (t, h, w), p=[0.4, 0.2, 0.15, 0.1, 0.05, 0.1])
    return pred, target, p, k, draw(st.integers(0, 5)), draw(st.booleans())


def assert_both_paths_equal_the_reference(pred, target, p, k, radius, void, label: str = "") -> None:
    """The compiled kernel and the tensor path each give :func:`per_object_counts`' counts, array for array."""
    want = per_object_counts(pred, target, p, k, radius, void)
    for backend in ("numba", "torch"):
        got = davis_counts(
            torch.from_numpy(pred),
            torch.from_numpy(target),
            num_preds=p,
            num_targets=k,
            radius=radius,
            void=void,
            backend=backend,
        )
        for name, value in want.items():
            np.testing.assert_array_equal(got[name].numpy(), value, err_msg=f"{backend} {name}{label}")


@settings(max_examples=60)
@given(frames())
def test_kernel_and_tensor_path_equal_the_per_object_reference(case):
    assert_both_paths_equal_the_reference(*case)


@settings(max_examples=25)
@given(frames())
def test_diagonal_fills_the_matched_pairs_only(case):
    pred, target, _, k, radius, void = case
    pred = np.minimum(pred, k).astype(np.uint8)
    full = davis_counts(
        torch.from_numpy(pred), torch.from_numpy(target), num_preds=k, num_targets=k, radius=radius, void=void
    )
    for backend in ("numba", "torch"):
        diag = davis_counts(
            torch.from_numpy(pred),
            torch.from_numpy(target),
            num_preds=k,
            num_targets=k,
            radius=radius,
            void=void,
            diagonal=True,
            backend=backend,
        )
        eye = torch.eye(k, dtype=torch.bool)
        for name in ("fg_match", "gt_match"):
            assert torch.equal(diag[name][:, eye], full[name][:, eye])
            assert int(diag[name][:, ~eye].abs().sum()) == 0


@pytest.mark.parametrize("radius", [0, 1, 3, 8])
def test_disk_dilation_is_opencvs(radius):
    rng = np.random.default_rng(radius)
    masks = rng.random((4, 37, 53)) < 0.01
    masks[0, 0, 0] = masks[1, -1, -1] = masks[2, 0, -1] = True  # corners: nothing wraps, the border is zero
    got = dilate_disk_rows(torch.from_numpy(masks), radius).numpy()
    kernel = disk(radius).astype(np.uint8)
    want = np.stack([cv2.dilate(m.astype(np.uint8), kernel) > 0 for m in masks])
    np.testing.assert_array_equal(got, want)


def test_ids_above_the_limit_are_reported_by_frame():
    pred = torch.zeros(3, 8, 8, dtype=torch.uint8)
    pred[2, 1, 1] = 4
    target = torch.zeros_like(pred)
    with pytest.raises(ValueError, match="frame 2 has id 4"):
        davis_counts(pred, target, num_preds=2, num_targets=1, radius=1, void=False)
    out = davis_counts(pred, target, num_preds=2, num_targets=1, radius=1, void=False, check_ids=False)
    assert out["pred_max"].tolist() == [0, 0, 4]
    assert int(out["joint"][2].sum()) == 64  # the out-of-range pixel is counted as background, never indexed


def test_device(device):
    rng = np.random.default_rng(3)
    pred = torch.from_numpy(rng.integers(0, 3, (2, 20, 30)).astype(np.uint8)).to(device)
    target = torch.from_numpy(rng.integers(0, 3, (2, 20, 30)).astype(np.uint8)).to(device)
    got = davis_counts(pred, target, num_preds=2, num_targets=2, radius=2, void=True)
    want = per_object_counts(pred.cpu().numpy(), target.cpu().numpy(), 2, 2, 2, True)
    for name, value in want.items():
        assert got[name].device.type == torch.device(device).type
        np.testing.assert_array_equal(got[name].cpu().numpy(), value)
