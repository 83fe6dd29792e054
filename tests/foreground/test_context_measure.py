"""Context measure vs pysodmetrics 1.6.2 ``ContextMeasure`` (random maps, test images, Metric, bad input)."""

from __future__ import annotations

import contextlib
import json
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st
from scipy import ndimage

from segmetrics_torch.functional.foreground.context_measure import context_measure
from segmetrics_torch.metrics.foreground_extra import ContextMeasure
from segmetrics_torch.ops import use_backend
from segmetrics_torch.reference import foreground as ref, foreground_extra as ref_extra
from tests.conftest import shared_path
from tests.foreground.test_hce import blob_pairs
from tests.foreground.test_size_invariance import multi_object_pairs
from tests.foreground.test_threshold_measures import IMAGES, close
from tests.reference.test_reference_vs_pysod import image_pairs

pysod = pytest.importorskip("py_sod_metrics")
cv2 = pytest.importorskip("cv2")


@contextlib.contextmanager
def _intermediates_flag(kernel: bool):
    """CPU tensors through the compiled / scipy path (True) or the tensor path CUDA inputs take (False)."""
    with use_backend("auto" if kernel else "tensor"):
        yield


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(image_pairs(), multi_object_pairs(), blob_pairs()), st.sampled_from(((1.0, 6.0), (1.0, 6.0), (0.3, 3.0)))
)
def test_random_maps_match_pysod(pair, params):
    pred, gt = pair
    beta2, alpha = params
    metric = pysod.ContextMeasure(beta2=beta2, alpha=alpha)
    try:
        with np.errstate(all="ignore"):
            metric.step(pred, gt)
        no_value = bool(np.isnan(metric.scores[0]))
    except np.linalg.LinAlgError:  # GT pixels on one slanted line: singular covariance, PySOD has no value
        no_value = True
    if no_value:  # (LinAlgError, or NaN where rounding leaves the covariance barely invertible)
        with pytest.raises(ValueError, match=r"`target`.*singular"):
            context_measure(torch.from_numpy(pred)[None], torch.from_numpy(gt)[None], beta2=beta2, alpha=alpha)
        return
    out = context_measure(torch.from_numpy(pred)[None], torch.from_numpy(gt)[None], beta2=beta2, alpha=alpha)
    close(out[0].numpy(), metric.scores[0], "cm")


@st.composite
def border_pairs(draw):
    """Maps whose GT touches or nears the image border (the reflected-border path), large kernels on small images
    (several reflections) and nearly collinear GTs (ill-conditioned covariance: PySOD's own arithmetic)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    h, w = draw(st.integers(2, 90)), draw(st.integers(2, 90))
    kind = draw(st.sampled_from(("edge", "corner", "tiny", "line", "full")))
    gt = np.zeros((h, w), np.uint8)
    if kind == "edge":
        r0 = draw(st.integers(0, h - 1))
        gt[r0 : r0 + draw(st.integers(1, h)), : draw(st.integers(1, w))] = 255
    elif kind == "corner":
        gt[h - draw(st.integers(1, h)) :, w - draw(st.integers(1, w)) :] = 255
    elif kind == "tiny":
        gt = (rng.random((h, w)) < 0.5).astype(np.uint8) * 255
    elif kind == "line":  # a slanted line and one pixel off it
        n = min(h, w)
        gt[np.arange(n), np.arange(n)] = 255
        gt[rng.integers(0, h), rng.integers(0, w)] = 255
    else:
        gt[:] = 255
    pred = np.clip(ndimage.gaussian_filter(gt.astype(float), 2) + rng.normal(0, 40, (h, w)), 0, 255).astype(np.uint8)
    return pred, gt


def _oracle(pred: np.ndarray, gt: np.ndarray, beta2: float = 1.0, alpha: float = 6.0) -> float | None:
    p, g = ref.prepare(pred, gt)
    try:
        return ref_extra.context_measure(p, g, beta2, alpha)
    except np.linalg.LinAlgError:
        return None


@settings(max_examples=150, deadline=None)
@given(st.one_of(border_pairs(), image_pairs(), multi_object_pairs()), st.sampled_from(((1.0, 6.0), (0.3, 3.0))))
def test_equal_to_the_numpy_oracle_on_every_path(pair, params):
    """The windowed FFT + border gap + exact-moment kernel == the whole-image float64 formula (1e-10), for uint8 and
    float maps and on the tensor (CUDA) path run on CPU tensors."""
    pred, gt = pair
    expected = _oracle(pred, gt, *params)
    beta2, alpha = params
    inputs = [
        (torch.from_numpy(pred)[None], torch.from_numpy(gt)[None]),
        (torch.from_numpy(pred.astype(np.float64) / 255)[None], torch.from_numpy(gt > 128)[None]),
    ]
    for tensor_path in (False, True):
        with _intermediates_flag(not tensor_path):
            for preds, target in inputs:
                if expected is None:
                    with pytest.raises(ValueError, match=r"`target`.*singular"):
                        context_measure(preds, target, beta2=beta2, alpha=alpha)
                    continue
                out = context_measure(preds, target, beta2=beta2, alpha=alpha)
                np.testing.assert_allclose(out.numpy(), [expected], rtol=0, atol=1e-10)


@settings(max_examples=100, deadline=None)
@given(st.one_of(border_pairs(), image_pairs()))
def test_numpy_oracle_matches_pysod(pair):
    pred, gt = pair
    metric = pysod.ContextMeasure()
    try:
        metric.step(pred, gt)
    except np.linalg.LinAlgError:
        assert _oracle(pred, gt) is None
        return
    close(_oracle(pred, gt), metric.scores[0], "cm oracle")


def test_half_size_at_a_rounding_tie_follows_pysod():
    """alpha = 12.5 sqrt(2) / 3 on a square GT puts both half sizes at round(12.5): decided by PySOD's arithmetic."""
    alpha = 12.5 * math.sqrt(2) / 3
    gt = np.zeros((64, 64), np.uint8)
    gt[5:25, 20:40] = 255
    pred = np.clip(ndimage.gaussian_filter(gt.astype(float), 3), 0, 255).astype(np.uint8)
    metric = pysod.ContextMeasure(alpha=alpha)
    metric.step(pred, gt)
    out = context_measure(torch.from_numpy(pred)[None], torch.from_numpy(gt)[None], alpha=alpha)
    close(out[0].numpy(), metric.scores[0], "cm at a tie")


def test_pysod_test_images_and_batches():
    root = shared_path("pysod_testdata")
    preds = [torch.from_numpy(cv2.imread(str(root / "preds" / n), cv2.IMREAD_GRAYSCALE)) for n in IMAGES]
    gts = [torch.from_numpy(cv2.imread(str(root / "masks" / n), cv2.IMREAD_GRAYSCALE)) for n in IMAGES]
    stored = json.loads((root / "version_performance.json").read_text())["v1_6_0"]["cm"]
    metric, single = ContextMeasure(), ContextMeasure()
    metric.update(preds, gts)
    close(metric.compute(), stored, "cm")
    for p, g in zip(preds, gts, strict=True):
        single.update([p], [g])
    close(single.compute(), stored, "cm single")


@pytest.mark.parametrize(("kwargs", "match"), [({"beta2": 0}, "`beta2`"), ({"alpha": -1}, "`alpha`")])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ContextMeasure(**kwargs)


@pytest.mark.parametrize(
    ("preds", "target", "error", "match"),
    [
        (torch.zeros(4, 4), torch.zeros(4, 4), ValueError, "`preds` of shape"),
        (torch.zeros(1, 4, 4), torch.zeros(1, 4, 5), ValueError, "same shape"),
        (torch.full((1, 4, 4), 2.0), torch.zeros(1, 4, 4), ValueError, r"\[0, 1\]"),
        (torch.zeros(1, 4, 4), torch.full((1, 4, 4), 0.5), ValueError, "binary"),
    ],
)
def test_bad_inputs(preds, target, error, match):
    with pytest.raises(error, match=match):
        ContextMeasure().update(preds, target)
    with pytest.raises(error, match=match):
        context_measure(preds, target)


def test_gt_on_one_slanted_line_is_a_clear_error():
    target = torch.zeros(1, 8, 8, dtype=torch.uint8)
    target[0, [1, 2, 3], [1, 2, 3]] = 255  # PySOD: numpy LinAlgError (singular covariance)
    with pytest.raises(ValueError, match=r"`target`.*singular"):
        context_measure(torch.full((1, 8, 8), 100, dtype=torch.uint8), target)


def _slanted_line_gt(size=32):
    g = np.zeros((size, size), np.uint8)
    for i in range(10):
        g[5 + i, 3 + 2 * i] = 255  # on one line of slope 1/2
    return g


def test_gt_where_pysod_returns_nan_is_a_clear_error():
    g = _slanted_line_gt()
    metric = pysod.ContextMeasure()
    with np.errstate(all="ignore"):
        metric.step(g.copy(), g)
    assert np.isnan(metric.scores[0])  # no LinAlgError here: the kernel is NaN, and so is PySOD's value
    with pytest.raises(ValueError, match=r"`target`.*singular"):
        context_measure(torch.from_numpy(g)[None].clone(), torch.from_numpy(g)[None])


def test_batch_error_names_the_image():
    target = torch.zeros(3, 32, 32, dtype=torch.uint8)
    target[:, 8:24, 8:24] = 255
    target[2] = torch.from_numpy(_slanted_line_gt())
    with pytest.raises(ValueError, match=r"^Image 2 of the batch: Expected a `target`.*singular"):
        context_measure(target.clone(), target)
    with pytest.raises(ValueError, match=r"^Image 1 of the batch: "):  # lists: the index in the list
        context_measure([target[0], target[2]], [target[0], target[2]])
    with pytest.raises(ValueError, match=r"^Expected a `target`"):  # one image: nothing to name
        context_measure(target[2:].clone(), target[2:])


def test_compute_after_only_failed_updates_warns():
    metric = ContextMeasure()
    target = torch.zeros(1, 8, 8, dtype=torch.uint8)
    target[0, [1, 2, 3], [1, 2, 3]] = 255
    with pytest.raises(ValueError, match="singular"):
        metric.update(torch.full((1, 8, 8), 100, dtype=torch.uint8), target)
    with pytest.warns(RuntimeWarning, match="no image has been added"):
        assert torch.isnan(metric.compute())


def test_empty_gt_is_zero():
    assert float(context_measure(torch.full((1, 8, 8), 200, dtype=torch.uint8), torch.zeros(1, 8, 8))[0]) == 0.0
    assert np.isfinite(float(context_measure(torch.zeros(1, 8, 8), torch.ones(1, 8, 8))[0]))


# ----------------------------------------------------------------------------------------------------------------
# camouflage context measure (needs the RGB image)
# ----------------------------------------------------------------------------------------------------------------
from segmetrics_torch.functional.foreground.context_measure import camouflage_context_measure  # noqa: E402
from segmetrics_torch.metrics.foreground_extra import CamouflageContextMeasure  # noqa: E402


def test_camouflage_batch_error_names_the_image():
    target = torch.zeros(3, 32, 32, dtype=torch.uint8)
    target[:, 8:24, 8:24] = 255
    target[2] = torch.from_numpy(_slanted_line_gt())
    images = torch.zeros(3, 32, 32, 3, dtype=torch.uint8)
    with pytest.raises(ValueError, match=r"^Image 2 of the batch: Expected a `target`.*singular"):
        camouflage_context_measure(target.clone(), target, images)


@st.composite
def camouflage_triples(draw):
    """(pred, gt, RGB image): smooth blobs, an image whose foreground is more or less like its surroundings."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    h, w = draw(st.integers(12, 72)), draw(st.integers(12, 72))
    gt = (ndimage.gaussian_filter(rng.random((h, w)), rng.uniform(1, 4)) > rng.uniform(0.45, 0.6)).astype(np.uint8)
    base = ndimage.gaussian_filter(rng.random((h, w, 3)), (2, 2, 0))
    shift = rng.uniform(0, 0.5) * gt[:, :, None] * rng.random(3)
    img = (np.clip(base + shift, 0, 1) * 255).astype(np.uint8)
    kind = draw(st.sampled_from(("noise", "gt", "const")))
    if kind == "noise":
        pred = rng.integers(0, 256, (h, w)).astype(np.uint8)
    elif kind == "gt":
        pred = np.clip(gt * 200 + rng.integers(0, 50, (h, w)), 0, 255).astype(np.uint8)
    else:
        pred = np.full((h, w), rng.integers(0, 256), np.uint8)
    return pred, gt * 255, img


@settings(max_examples=200, deadline=None)
@given(camouflage_triples())
def test_camouflage_random_maps_match_pysod(triple):
    pred, gt, img = triple
    metric = pysod.CamouflageContextMeasure()
    args = torch.from_numpy(pred)[None], torch.from_numpy(gt)[None], torch.from_numpy(img)[None]
    try:
        metric.step(pred, gt, img=img)
    except np.linalg.LinAlgError:  # one GT pixel, or GT on one slanted line: singular covariance, PySOD has no value
        with pytest.raises(ValueError, match=r"`target`.*singular"):
            camouflage_context_measure(*args)
        return
    out = camouflage_context_measure(*args)
    close(out[0].numpy(), metric.scores[0], "ccm")
    ours = CamouflageContextMeasure()
    ours.update([torch.from_numpy(pred)], [torch.from_numpy(gt)], [torch.from_numpy(img)])
    close(ours.compute(), metric.get_results()["ccm"], "ccm metric")


def test_camouflage_image_required_and_checked():
    preds, target = torch.zeros(1, 8, 8, dtype=torch.uint8), torch.zeros(1, 8, 8, dtype=torch.uint8)
    metric = CamouflageContextMeasure()
    with pytest.raises(ValueError, match="`images`"):
        metric.update(preds, target)
    with pytest.raises(ValueError, match=r"`images\[0\]` of size"):
        metric.update(preds, target, torch.zeros(1, 9, 8, 3, dtype=torch.uint8))
    with pytest.raises(ValueError, match="`images`"):
        metric.update(preds, target, torch.zeros(1, 8, 8, dtype=torch.uint8))
    with pytest.raises(ValueError, match=r"`images\[0\]` uint8"):
        metric.update(preds, target, [torch.zeros(8, 8, 3)])
    with pytest.raises(ValueError, match="as many `images`"):
        metric.update(preds, target, [])
    with pytest.raises(TypeError, match="`images`"):
        metric.update(preds, target, "rgb")
    with pytest.raises(ValueError, match="same shape"):
        metric.update(preds, torch.zeros(1, 8, 9), torch.zeros(1, 8, 8, 3, dtype=torch.uint8))
    with pytest.raises(ValueError, match="`gamma`"):
        CamouflageContextMeasure(gamma=0)


def test_two_pixel_ground_truths_follow_pysods_arithmetic():
    """Two GT pixels off one row and column: their covariance is singular in exact arithmetic and barely invertible
    after rounding. Where PySOD returns a number (its inverse evaluated as one contraction), the oracle and the kernel
    return the same number (1e-10; PySOD itself 1e-8, its filter is float32); where the kernel overflows (PySOD's NaN)
    both refuse the ground truth. (Found by hypothesis: the oracle summed the quadratic form in another order and was
    1.2e-3 off PySOD.)"""
    psm = pytest.importorskip("py_sod_metrics")
    rng = np.random.default_rng(0)
    cases = [((8, 8), ((5, 0), (7, 7)), True), ((33, 8), ((22, 0), (31, 7)), False)]
    for (h, w), points, defined in cases:
        pred = rng.integers(0, 256, (h, w)).astype(np.uint8)
        gt = np.zeros((h, w), np.uint8)
        for r, c in points:
            gt[r, c] = 255
        preds, target = torch.from_numpy(pred)[None], torch.from_numpy(gt)[None]
        if not defined:
            assert _oracle(pred, gt) is None
            with pytest.raises(ValueError, match=r"`target`.*singular"):
                context_measure(preds, target)
            continue
        peer = psm.ContextMeasure(beta2=1.0, alpha=6.0)
        peer.step(pred, gt)
        expected = _oracle(pred, gt)
        assert expected is not None
        assert abs(expected - float(peer.get_results()["cm"])) < 1e-8
        np.testing.assert_allclose(context_measure(preds, target).numpy(), [expected], rtol=0, atol=1e-10)


@pytest.mark.parametrize("shape", [(5, 40), (6, 6), (8, 6), (40, 5)])
def test_camouflage_small_images_pysod_scores_match(shape):
    """Sides of 5 and 6 reach a 7 x 7 patch once reflect-padded to the patch grid: PySOD scores them, so do we (a
    side of 4 or less is the ValueError of tests/bad_inputs/test_foreground_extra.py)."""
    h, w = shape
    rng = np.random.default_rng(h * 100 + w)
    gt = np.zeros((h, w), np.uint8)
    gt[1 : h - 1, 1 : max(2, w // 2)] = 255
    gt[h // 2, w // 2] = 255
    pred = rng.integers(0, 256, (h, w)).astype(np.uint8)
    img = rng.integers(0, 256, (h, w, 3)).astype(np.uint8)
    metric = pysod.CamouflageContextMeasure()
    try:
        metric.step(pred, gt, img=img)
    except np.linalg.LinAlgError:
        pytest.skip("a singular ground truth for PySOD")
    out = camouflage_context_measure(
        torch.from_numpy(pred)[None], torch.from_numpy(gt)[None], torch.from_numpy(img)[None]
    )
    close(out[0].numpy(), metric.scores[0], "ccm")
