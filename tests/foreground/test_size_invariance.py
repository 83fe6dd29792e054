"""Size-invariant MAE and threshold measures vs pysodmetrics 1.6.2 (``SizeInvarianceMAE``,
``SizeInvarianceFmeasureV2``).

* Random maps: the family's generators plus multi-object GTs (many small components around the 50-pixel target
  threshold, touching and overlapping boxes, one-pixel objects): numpy oracle and functional == pysod per image.
* Dataset values of the Metrics (sample-based and pooled, PySOD's recorder keys) on lists of random maps; batch ==
  single updates; PySODMetrics' test images vs ``version_performance.json`` (v1.5.0 ``si_*`` keys).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from segmetrics_torch.functional.foreground.size_invariance import (
    size_invariant_mae,
    size_invariant_threshold_measures,
)
from segmetrics_torch.functional.foreground.threshold_measures import THRESHOLD_MEASURES
from segmetrics_torch.metrics.foreground_extra import SizeInvariantMAE, SizeInvariantThresholdMeasures
from segmetrics_torch.reference import foreground as ref, foreground_extra as ref_extra
from tests.conftest import shared_path
from tests.foreground.test_threshold_measures import HANDLERS, IMAGES, MODES, close, tensor_path
from tests.reference.test_reference_vs_pysod import image_pairs

pysod = pytest.importorskip("py_sod_metrics")
cv2 = pytest.importorskip("cv2")


@st.composite
def multi_object_pairs(draw):
    """uint8 (pred, gt): 1..12 rectangles / blobs of 1..150 pixels on a 8..96 canvas, assorted preds."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    h, w = draw(st.integers(8, 96)), draw(st.integers(8, 96))
    gt = np.zeros((h, w), np.uint8)
    for _ in range(draw(st.integers(1, 12))):
        y, x = rng.integers(0, h), rng.integers(0, w)
        size = rng.choice([1, 2, 5, 7, 8, 12])
        gt[y : y + rng.integers(1, size + 1), x : x + rng.integers(1, size + 1)] = 255
    kind = draw(st.sampled_from(("noise", "noisy_gt", "const", "binary", "perfect")))
    if kind == "noise":
        pred = rng.integers(0, 256, (h, w)).astype(np.uint8)
    elif kind == "noisy_gt":
        pred = np.clip(gt * 0.7 + rng.integers(0, 80, (h, w)), 0, 255).astype(np.uint8)
    elif kind == "const":
        pred = np.full((h, w), rng.integers(0, 256), np.uint8)
    elif kind == "binary":
        pred = (rng.random((h, w)) > 0.7).astype(np.uint8) * 255
    else:
        pred = gt.copy()
    return pred, gt


def pysod_si(preds, gts, sample_based=True, beta=0.3):
    handlers = {
        k: (
            h(True, True, with_binary=True, sample_based=sample_based, beta=beta)
            if k == "fmeasure"
            else h(True, True, with_binary=True, sample_based=sample_based)
        )
        for k, h in HANDLERS.items()
    }
    metric, mae = pysod.SizeInvarianceFmeasureV2(handlers), pysod.SizeInvarianceMAE()
    with np.errstate(invalid="ignore", divide="ignore"):
        for pred, gt in zip(preds, gts, strict=True):
            metric.step(pred, gt)
            mae.step(pred, gt)
    return metric.get_results(), mae


def pysod_fails(gt) -> bool:
    """PySOD asserts (``encode_bboxwise_tgts_bitwise``) when the targets' pixels are the whole image (e.g. full GT)."""
    try:
        pysod_si([np.zeros_like(gt)], [gt])
    except AssertionError:
        return True
    return False


def check_one(pred, gt):
    p, g = ref.prepare(pred, gt)
    oracle = ref_extra.size_invariant_threshold_measures(p, g)
    out = size_invariant_threshold_measures(
        torch.from_numpy(pred)[None], torch.from_numpy(gt)[None], return_counts=True
    )
    # the tensor path (the CUDA path, on CPU tensors) == the CPU route (raw-level histograms for uint8 maps)
    with tensor_path(True):
        tensor = size_invariant_threshold_measures(
            torch.from_numpy(pred)[None], torch.from_numpy(gt)[None], return_counts=True
        )
        tensor_mae = size_invariant_mae(torch.from_numpy(pred)[None], torch.from_numpy(gt)[None])
    torch.testing.assert_close(tensor, out, rtol=0, atol=1e-12)
    torch.testing.assert_close(
        tensor_mae,
        size_invariant_mae(torch.from_numpy(pred)[None], torch.from_numpy(gt)[None]),
        rtol=0,
        atol=1e-12,
        equal_nan=True,
    )
    if pysod_fails(gt):  # no reference value: ours is the measure of the one whole-image target; oracle == ours
        for name in THRESHOLD_MEASURES:
            for mode in MODES:
                close(out[f"{name}/{mode}"][0].numpy(), oracle[f"{name}/{mode}"], f"{name} {mode}")
        return
    results, mae = pysod_si([pred], [gt])
    for name in THRESHOLD_MEASURES:
        for mode in ("adaptive", "binary"):
            close(oracle[f"{name}/{mode}"], results[name][mode], f"oracle {name} {mode}")
            close(out[f"{name}/{mode}"][0].numpy(), results[name][mode], f"{name} {mode}")
        per_target = results[name]["dynamic"][0]  # (T, 256): PySOD keeps the per-target curves
        close(oracle[f"{name}/dynamic"], per_target.mean(0), f"oracle {name} dynamic")
        close(out[f"{name}/dynamic"][0].numpy(), per_target.mean(0), f"{name} dynamic")
        close(out[f"{name}/dynamic_max"][0].numpy(), per_target.max(1).mean(), f"{name} dynamic_max")
        assert int(out["targets"][0]) == per_target.shape[0]
    with np.errstate(invalid="ignore", divide="ignore"):
        close(ref_extra.size_invariant_mae(p, g), mae.maes[0], "oracle si_mae")
    close(
        size_invariant_mae(torch.from_numpy(pred)[None], torch.from_numpy(gt)[None])[0].numpy(), mae.maes[0], "si_mae"
    )


@settings(max_examples=110, deadline=None)
@given(multi_object_pairs())
def test_random_multi_object_maps(pair):
    check_one(*pair)


@settings(max_examples=50, deadline=None)
@given(image_pairs())
def test_random_maps_family_generators(pair):
    check_one(*pair)


@st.composite
def datasets(draw):
    pairs = [draw(st.one_of(multi_object_pairs(), image_pairs())) for _ in range(draw(st.integers(1, 5)))]
    return [(p, g) for p, g in pairs if not pysod_fails(g)] or [(pairs[0][0], np.zeros_like(pairs[0][1]))]


def check_dataset(preds, gts, sample_based, beta=0.3):
    results, mae = pysod_si(preds, gts, sample_based=sample_based, beta=beta)
    metric = SizeInvariantThresholdMeasures(sample_based=sample_based, beta2=beta)
    metric.update([torch.from_numpy(p) for p in preds], [torch.from_numpy(g) for g in gts])
    out = metric.compute()
    for name in THRESHOLD_MEASURES:
        res = results[name]
        close(out[name]["adaptive"], res["adaptive"], f"{name} adaptive")
        close(out[name]["binary"], res["binary"], f"{name} binary")
        if sample_based:  # PySOD's recorder: si_sample_meanXX / si_sample_maxXX
            close(out[name]["dynamic"], np.mean([t.mean(0) for t in res["dynamic"]], axis=0), f"{name} dynamic")
            close(out[name]["mean"], np.mean([t.mean(0) for t in res["dynamic"]]), f"{name} mean")
            close(out[name]["max"], np.mean([t.max(1).mean() for t in res["dynamic"]]), f"{name} max")
        else:
            close(out[name]["dynamic"], res["dynamic"], f"{name} dynamic")
            close(out[name]["mean"], res["dynamic"].mean(), f"{name} mean")
            close(out[name]["max"], res["dynamic"].max(), f"{name} max")
    si_mae = SizeInvariantMAE()
    si_mae.update([torch.from_numpy(p) for p in preds], [torch.from_numpy(g) for g in gts])
    with np.errstate(invalid="ignore"):
        close(si_mae.compute(), mae.get_results()["si_mae"], "si_mae")
    return metric


@settings(max_examples=20, deadline=None)
@given(datasets(), st.booleans())
def test_metric_dataset_values_match_pysod(data, sample_based):
    preds, gts = [p for p, _ in data], [g for _, g in data]
    metric = check_dataset(preds, gts, sample_based)
    single = SizeInvariantThresholdMeasures(sample_based=sample_based)
    for p, g in zip(preds, gts, strict=True):
        single.update(torch.from_numpy(p)[None], torch.from_numpy(g)[None])
    torch.testing.assert_close(single.compute(), metric.compute(), rtol=0, atol=1e-12, equal_nan=True)


def test_batch_equals_single_same_size():
    rng = np.random.default_rng(5)
    gts = np.zeros((4, 40, 50), np.uint8)
    for i in range(4):
        for _ in range(i * 3):
            y, x = rng.integers(0, 35, 2)
            gts[i, y : y + rng.integers(1, 12), x : x + rng.integers(1, 12)] = 255
    preds = rng.integers(0, 256, gts.shape).astype(np.uint8)
    for sample_based in (True, False):
        batch = SizeInvariantThresholdMeasures(sample_based=sample_based)
        single = SizeInvariantThresholdMeasures(sample_based=sample_based)
        batch.update(torch.from_numpy(preds), torch.from_numpy(gts))
        for i in range(4):
            single.update(torch.from_numpy(preds[i : i + 1]), torch.from_numpy(gts[i : i + 1]))
        torch.testing.assert_close(batch.compute(), single.compute(), rtol=0, atol=1e-12)


def test_boxes_covering_the_image_give_nan_mae_as_pysod():
    gt = np.zeros((10, 10), np.uint8)
    gt[:, 0] = gt[0, :] = gt[:, 9] = gt[9, :] = 255  # one ring: its box is the image, its pixels are not
    pred = np.zeros((10, 10), np.uint8)
    _, mae = pysod_si([pred], [gt])
    assert np.isnan(mae.maes[0])
    assert torch.isnan(size_invariant_mae(torch.from_numpy(pred)[None], torch.from_numpy(gt)[None])).all()
    assert pysod_fails(np.full((10, 10), 255, np.uint8))  # full GT: PySOD raises; ours evaluates the whole image
    full = torch.full((1, 10, 10), 255, dtype=torch.uint8)
    assert torch.isnan(size_invariant_mae(full, full)).all()


SHORT = {
    "pre": "precision",
    "rec": "recall",
    "spec": "specificity",
    "fpr": "fpr",
    "ber": "ber",
    "iou": "iou",
    "dice": "dice",
    "oa": "accuracy",
    "kappa": "kappa",
    "fm": "fmeasure",
}


def test_pysod_test_images_match_stored_values():
    root = shared_path("pysod_testdata")
    preds = [torch.from_numpy(cv2.imread(str(root / "preds" / n), cv2.IMREAD_GRAYSCALE)) for n in IMAGES]
    gts = [torch.from_numpy(cv2.imread(str(root / "masks" / n), cv2.IMREAD_GRAYSCALE)) for n in IMAGES]
    stored = json.loads((root / "version_performance.json").read_text())["v1_5_0"]
    mae = SizeInvariantMAE()
    mae.update(preds, gts)
    close(mae.compute(), stored["si_mae"], "si_mae")
    for beta, shorts in ((0.3, SHORT), (1.0, {"f1": "fmeasure"})):
        sample = SizeInvariantThresholdMeasures(beta2=beta)
        overall = SizeInvariantThresholdMeasures(beta2=beta, sample_based=False)
        sample.update(preds, gts)
        overall.update(preds, gts)
        s, o = sample.compute(), overall.compute()
        for short, name in shorts.items():
            close(s[name]["adaptive"], stored[f"si_sample_adp{short}"], f"si_sample_adp{short}")
            close(s[name]["mean"], stored[f"si_sample_mean{short}"], f"si_sample_mean{short}")
            close(s[name]["max"], stored[f"si_sample_max{short}"], f"si_sample_max{short}")
            close(s[name]["binary"], stored[f"si_sample_bi{short}"], f"si_sample_bi{short}")
            close(o[name]["mean"], stored[f"si_overall_mean{short}"], f"si_overall_mean{short}")
            close(o[name]["max"], stored[f"si_overall_max{short}"], f"si_overall_max{short}")
            close(o[name]["binary"], stored[f"si_overall_bi{short}"], f"si_overall_bi{short}")


@pytest.mark.parametrize(
    ("preds", "target", "error", "match"),
    [
        (torch.zeros(4, 4), torch.zeros(4, 4), ValueError, "`preds` of shape"),
        (torch.zeros(1, 4, 4), torch.zeros(1, 4, 5), ValueError, "same shape"),
        (torch.full((1, 4, 4), 2.0), torch.zeros(1, 4, 4), ValueError, r"\[0, 1\]"),
        (torch.zeros(1, 4, 4), torch.full((1, 4, 4), 0.5), ValueError, "binary"),
        ("x", torch.zeros(1, 4, 4), TypeError, "`preds`"),
    ],
)
def test_bad_inputs(preds, target, error, match):
    for call in (
        size_invariant_mae,
        size_invariant_threshold_measures,
        SizeInvariantMAE().update,
        SizeInvariantThresholdMeasures().update,
    ):
        with pytest.raises(error, match=match):
            call(preds, target)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"measures": ["nope"]}, ValueError, "`measures`"),
        ({"modes": ["x"]}, ValueError, "`modes`"),
        ({"beta2": -1}, ValueError, "`beta2`"),
        ({"sample_based": 1}, TypeError, "`sample_based`"),
        ({"normalize": "no"}, TypeError, "`normalize`"),
    ],
)
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        SizeInvariantThresholdMeasures(**kwargs)
