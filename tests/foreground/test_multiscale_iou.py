"""Multi-scale IoU vs pysodmetrics 1.6.2 ``MSIoU``: oracle, compiled CPU path, tensor path, Metric, test images."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from segmetrics_torch.functional.foreground.multiscale_iou import multiscale_iou
from segmetrics_torch.metrics.foreground_extra import MultiScaleIoU
from segmetrics_torch.reference import foreground as ref, foreground_extra as ref_extra
from tests.conftest import shared_path
from tests.foreground.test_size_invariance import multi_object_pairs
from tests.foreground.test_threshold_measures import IMAGES, close, tensor_path
from tests.reference.test_reference_vs_pysod import image_pairs

pysod = pytest.importorskip("py_sod_metrics")
pytestmark = pytest.mark.filterwarnings("ignore:`trapz` is deprecated:DeprecationWarning")
cv2 = pytest.importorskip("cv2")
KEYS = ("adaptive", "binary", "dynamic")


def pysod_msiou(preds, gts, num_levels=10):
    metric = pysod.MSIoU(with_dynamic=True, with_adaptive=True, with_binary=True, num_levels=num_levels)
    # PySODMetrics 1.6.2's MSIoU calls np.trapz, which numpy 2.4 removed (renamed np.trapezoid in 2.0, same function):
    # on numpy >= 2.4 the reference itself raises AttributeError (seen on the H200 machine's numpy 2.5.2)
    shim = not hasattr(np, "trapz")
    if shim:
        setattr(np, "trapz", np.trapezoid)  # noqa: B010 (the name PySOD looks up)
    try:
        for pred, gt in zip(preds, gts, strict=True):
            metric.step(pred, gt)
    finally:
        if shim:
            delattr(np, "trapz")
    return metric.get_results()


@pytest.mark.slow  # ~2.5 min: PySOD's MSIoU is slow (200 maps, must-show 1 of issue 15)
@settings(max_examples=200, deadline=None)
@given(st.one_of(image_pairs(), multi_object_pairs()), st.sampled_from((10, 10, 4)))
def test_random_maps_all_paths_match_pysod(pair, num_levels):
    pred, gt = pair
    expected = pysod_msiou([pred], [gt], num_levels)
    outs = []
    for on in (False, True):
        with tensor_path(on):
            outs.append(multiscale_iou(torch.from_numpy(pred)[None], torch.from_numpy(gt)[None], num_levels=num_levels))
    for key in KEYS:
        for name, out in zip(("kernel", "tensor"), outs, strict=True):
            close(out[key][0].numpy(), expected[key], f"{name} {key}")
    if num_levels == 10 and max(gt.shape) <= 32:  # the oracle binarises 257 times: small maps only
        oracle = ref_extra.multiscale_iou(*ref.prepare(pred, gt))
        for key in KEYS:
            close(oracle[key], expected[key], f"oracle {key}")


def test_float16_denominator_oddity_reproduced():
    """PySOD's GT edge-cell counts are float16 sums: 2049.. round to even, > 65504 overflow (ratio 0)."""
    rng = np.random.default_rng(0)
    gt = ((rng.random((80, 90)) > 0.5) * 255).astype(np.uint8)  # ~7000 edge pixels at scale 1
    pred = rng.integers(0, 256, gt.shape).astype(np.uint8)
    expected = pysod_msiou([pred], [gt])
    out = multiscale_iou(torch.from_numpy(pred)[None], torch.from_numpy(gt)[None])
    for key in KEYS:
        close(out[key][0].numpy(), expected[key], key)


@settings(max_examples=6, deadline=None)
@given(st.lists(st.one_of(image_pairs(), multi_object_pairs()), min_size=1, max_size=4))
def test_metric_dataset_values_and_single_updates(data):
    preds, gts = [p for p, _ in data], [g for _, g in data]
    expected = pysod_msiou(preds, gts)
    metric = MultiScaleIoU(with_binary=True)
    metric.update([torch.from_numpy(p) for p in preds], [torch.from_numpy(g) for g in gts])
    out = metric.compute()
    for key in KEYS:
        close(out[key], expected[key], key)
    close(out["mean"], expected["dynamic"].mean(), "mean")
    close(out["max"], expected["dynamic"].max(), "max")
    single = MultiScaleIoU(with_binary=True)
    for p, g in zip(preds, gts, strict=True):
        single.update(torch.from_numpy(p)[None], torch.from_numpy(g)[None])
    torch.testing.assert_close(single.compute(), out, rtol=0, atol=1e-12)


def test_pysod_test_images_match_stored_values():
    root = shared_path("pysod_testdata")
    preds = [cv2.imread(str(root / "preds" / n), cv2.IMREAD_GRAYSCALE) for n in IMAGES]
    gts = [cv2.imread(str(root / "masks" / n), cv2.IMREAD_GRAYSCALE) for n in IMAGES]
    stored = json.loads((root / "version_performance.json").read_text())["v1_4_3"]
    metric = MultiScaleIoU(with_binary=True)
    metric.update([torch.from_numpy(p) for p in preds], [torch.from_numpy(g) for g in gts])
    out = metric.compute()
    # pysodmetrics 1.6.2 itself gives values 3.0-3.6e-6 away from the v1.4.3 MSIoU numbers stored in its repository
    # (0.8309110132887682 vs 0.8309076073697286 for adpmsiou): we match 1.6.2 to 1e-6 and the stored ones to 1e-5
    singles = [pysod_msiou([p], [g]) for p, g in zip(preds, gts, strict=True)]
    expected = {key: np.mean([r[key] for r in singles], axis=0) for key in KEYS}  # PySOD's get_results
    for ours, key, short in (("adaptive", "adaptive", "adpmsiou"), ("binary", "binary", "sample_bimsiou")):
        close(out[ours], expected[key], short)
        np.testing.assert_allclose(float(out[ours]), stored[short], rtol=0, atol=1e-5)
    close(out["mean"], expected["dynamic"].mean(), "meanmsiou")
    close(out["max"], expected["dynamic"].max(), "maxmsiou")
    np.testing.assert_allclose(float(out["mean"]), stored["meanmsiou"], rtol=0, atol=1e-5)
    np.testing.assert_allclose(float(out["max"]), stored["maxmsiou"], rtol=0, atol=1e-5)
    per_image = multiscale_iou([torch.from_numpy(p) for p in preds], [torch.from_numpy(g) for g in gts])
    for i in range(len(preds)):
        for key in KEYS:
            close(per_image[key][i].numpy(), singles[i][key], f"image {i} {key}")


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"num_levels": 1}, ValueError, "`num_levels`"),
        ({"num_levels": 2.5}, ValueError, "`num_levels`"),
        ({"with_dynamic": 1}, TypeError, "`with_dynamic`"),
        ({"with_dynamic": False, "with_adaptive": False}, ValueError, "at least one"),
        ({"normalize": None}, TypeError, "`normalize`"),
    ],
)
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        MultiScaleIoU(**kwargs)


@pytest.mark.parametrize(
    ("preds", "target", "error", "match"),
    [
        (torch.zeros(4, 4), torch.zeros(4, 4), ValueError, "`preds` of shape"),
        (torch.zeros(1, 4, 4), torch.zeros(1, 4, 5), ValueError, "same shape"),
        (torch.full((1, 4, 4), -1.0), torch.zeros(1, 4, 4), ValueError, r"\[0, 1\]"),
        (torch.zeros(1, 4, 4), torch.full((1, 4, 4), 3), ValueError, "binary"),
        ([torch.zeros(4, 4)], torch.zeros(1, 4, 4), TypeError, "both tensors or both lists"),
    ],
)
def test_bad_inputs(preds, target, error, match):
    with pytest.raises(error, match=match):
        multiscale_iou(preds, target)
    with pytest.raises(error, match=match):
        MultiScaleIoU().update(preds, target)
    with pytest.raises(ValueError, match="`modes`"):
        multiscale_iou(torch.zeros(1, 4, 4), torch.zeros(1, 4, 4), modes=["curve"])
