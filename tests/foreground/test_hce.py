"""Human Correction Effort vs pysodmetrics 1.6.2 ``HumanCorrectionEffortMeasure`` (exact counts)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st
from scipy import ndimage

from segmetrics_torch.functional.foreground.hce import human_correction_effort
from segmetrics_torch.metrics.foreground_extra import HumanCorrectionEffort
from tests.conftest import shared_path
from tests.foreground.test_size_invariance import multi_object_pairs
from tests.foreground.test_threshold_measures import IMAGES
from tests.reference.test_reference_vs_pysod import image_pairs

pysod = pytest.importorskip("py_sod_metrics")
cv2 = pytest.importorskip("cv2")


@st.composite
def blob_pairs(draw):
    """Smooth blobs with holes and thin parts, predictions = partly wrong, blurred GT (the HCE regime)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    h, w = draw(st.integers(5, 80)), draw(st.integers(5, 80))
    gt = (ndimage.gaussian_filter(rng.random((h, w)), rng.uniform(0.5, 3)) > 0.5).astype(np.uint8) * 255
    noise = ndimage.gaussian_filter(rng.random((h, w)), 1.5) * 255 * rng.uniform(0, 1)
    return np.clip(gt * 0.6 + noise, 0, 255).astype(np.uint8), gt


def pysod_hce(preds, gts, relax=5, epsilon=2.0):
    metric = pysod.HumanCorrectionEffortMeasure(relax=relax, epsilon=epsilon)
    for p, g in zip(preds, gts, strict=True):
        metric.step(p, g)
    return metric


@settings(max_examples=200, deadline=None)
@given(st.one_of(blob_pairs(), image_pairs(), multi_object_pairs()), st.sampled_from(((5, 2.0), (5, 2.0), (2, 1.0))))
def test_random_maps_match_pysod(pair, params):
    pred, gt = pair
    relax, epsilon = params
    expected = pysod_hce([pred], [gt], relax, epsilon).hces[0]
    out = human_correction_effort(
        torch.from_numpy(pred)[None], torch.from_numpy(gt)[None], relax=relax, epsilon=epsilon
    )
    assert float(out[0]) == expected
    if pred.dtype == np.uint8:  # the per-level route of uint8 maps == the prepared-map route of the same map
        as_float = torch.from_numpy(pred.astype(np.float64) / 255)[None]
        assert (
            float(human_correction_effort(as_float, torch.from_numpy(gt)[None], relax=relax, epsilon=epsilon)[0])
            == expected
        )


def test_pysod_test_images_and_metric():
    root = shared_path("pysod_testdata")
    preds = [cv2.imread(str(root / "preds" / n), cv2.IMREAD_GRAYSCALE) for n in IMAGES]
    gts = [cv2.imread(str(root / "masks" / n), cv2.IMREAD_GRAYSCALE) for n in IMAGES]
    expected = pysod_hce(preds, gts)
    metric = HumanCorrectionEffort()
    metric.update([torch.from_numpy(p) for p in preds], [torch.from_numpy(g) for g in gts])
    assert float(metric.compute()) == expected.get_results()["hce"]
    per_image = human_correction_effort([torch.from_numpy(p) for p in preds], [torch.from_numpy(g) for g in gts])
    assert per_image.tolist() == expected.hces
    # pysodmetrics 1.6.2 itself gives 74.333 (37, 185, 1) here; its repository stores 73.667 for v1.5.1
    stored = json.loads((root / "version_performance.json").read_text())["v1_5_1"]["HCE"]
    assert abs(float(metric.compute()) - stored) < 1.0


def test_batch_equals_single():
    rng = np.random.default_rng(2)
    gts = torch.from_numpy((ndimage.gaussian_filter(rng.random((4, 40, 40)), (0, 2, 2)) > 0.5).astype(np.uint8) * 255)
    preds = torch.from_numpy(rng.integers(0, 256, (4, 40, 40)).astype(np.uint8))
    batch, single = HumanCorrectionEffort(), HumanCorrectionEffort()
    batch.update(preds, gts)
    for i in range(4):
        single.update(preds[i : i + 1], gts[i : i + 1])
    assert float(batch.compute()) == float(single.compute())


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"relax": -1}, "`relax`"),
        ({"relax": 1.5}, "`relax`"),
        ({"epsilon": -2}, "`epsilon`"),
        ({"epsilon": "2"}, "`epsilon`"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        HumanCorrectionEffort(**kwargs)
    with pytest.raises(ValueError, match=match):
        human_correction_effort(torch.zeros(1, 4, 4), torch.zeros(1, 4, 4), **kwargs)


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
        HumanCorrectionEffort().update(preds, target)
