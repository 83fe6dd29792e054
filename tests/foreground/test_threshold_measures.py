"""Threshold measures (PySODMetrics ``FmeasureV2`` handler set): oracle, functional and Metric vs pysodmetrics 1.6.2.

* Random maps (hypothesis, the family's generators: empty/full/thin/one-pixel GT, constant/binary/noisy preds, sizes
  1..128): every measure in every mode, per image, from the numpy oracle, the compiled CPU path and the tensor path
  (the CUDA path on CPU tensors), all equal to pysodmetrics to 1e-6.
* Dataset values of the Metric (sample-based and pooled binary) vs pysodmetrics on lists of random maps; batch ==
  single updates; PySODMetrics' own test images vs ``version_performance.json`` (v1.4.3 keys).
* Bad input.
"""

from __future__ import annotations

import contextlib
import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from segmetrics_torch.functional.foreground.threshold_measures import THRESHOLD_MEASURES, threshold_measures
from segmetrics_torch.metrics.foreground_extra import ThresholdMeasures
from segmetrics_torch.ops import use_backend
from segmetrics_torch.reference import foreground as ref, foreground_extra as ref_extra
from tests.conftest import shared_path
from tests.reference.test_reference_vs_pysod import image_pairs

pysod = pytest.importorskip("py_sod_metrics")
cv2 = pytest.importorskip("cv2")

TOL = 1e-6
MODES = ("adaptive", "dynamic", "binary")
IMAGES = ("0001.png", "19.png", "aerial-1867541__340.png")
HANDLERS = {
    "fmeasure": pysod.FmeasureHandler,
    "precision": pysod.PrecisionHandler,
    "recall": pysod.RecallHandler,
    "specificity": pysod.SpecificityHandler,
    "fpr": pysod.FPRHandler,
    "ber": pysod.BERHandler,
    "iou": pysod.IOUHandler,
    "dice": pysod.DICEHandler,
    "accuracy": pysod.OverallAccuracyHandler,
    "kappa": pysod.KappaHandler,
}


def close(actual, expected, what: str) -> None:
    np.testing.assert_allclose(
        np.asarray(actual, np.float64), np.asarray(expected, np.float64), rtol=0, atol=TOL, err_msg=what
    )


@contextlib.contextmanager
def tensor_path(on: bool):
    """Route CPU tensors through the tensor path (the CUDA path) instead of the compiled kernel."""
    with use_backend("tensor" if on else "auto"):
        yield


def pysod_fmv2(preds, gts, sample_based=True, beta=0.3):
    handlers = {
        k: (
            h(True, True, with_binary=True, sample_based=sample_based, beta=beta)
            if k == "fmeasure"
            else h(True, True, with_binary=True, sample_based=sample_based)
        )
        for k, h in HANDLERS.items()
    }
    metric = pysod.FmeasureV2(handlers)
    for pred, gt in zip(preds, gts, strict=True):
        metric.step(pred, gt)
    return metric.get_results()


@settings(max_examples=120, deadline=None)
@given(image_pairs())
def test_random_maps_every_measure_every_mode(pair):
    pred, gt = pair
    expected = pysod_fmv2([pred], [gt])
    oracle = ref_extra.threshold_measures(*ref.prepare(pred, gt))
    results = []
    for on in (False, True):
        with tensor_path(on):
            results.append(threshold_measures(torch.from_numpy(pred)[None], torch.from_numpy(gt)[None]))
    for name in THRESHOLD_MEASURES:
        for mode in MODES:
            key = f"{name}/{mode}"
            close(oracle[key], expected[name][mode], f"oracle {key}")
            for path, out in zip(("kernel", "tensor"), results, strict=True):
                assert out[key].dtype == torch.float64
                close(out[key][0].numpy(), expected[name][mode], f"{path} {key}")
    torch.testing.assert_close(results[0], results[1], rtol=0, atol=1e-12)


@st.composite
def datasets(draw):
    return [draw(image_pairs()) for _ in range(draw(st.integers(1, 6)))]


@settings(max_examples=25, deadline=None)
@given(datasets(), st.booleans(), st.sampled_from((0.3, 1.0)))
def test_metric_dataset_values_match_pysod(data, sample_based, beta):
    preds = [p for p, _ in data]
    gts = [g for _, g in data]
    expected = pysod_fmv2(preds, gts, sample_based=sample_based, beta=beta)
    metric = ThresholdMeasures(sample_based=sample_based, beta2=beta)
    metric.update([torch.from_numpy(p) for p in preds], [torch.from_numpy(g) for g in gts])
    out = metric.compute()
    for name in THRESHOLD_MEASURES:
        close(out[name]["adaptive"], expected[name]["adaptive"], f"{name} adaptive")
        close(out[name]["dynamic"], expected[name]["dynamic"], f"{name} dynamic")
        close(out[name]["mean"], expected[name]["dynamic"].mean(), f"{name} mean")
        close(out[name]["max"], expected[name]["dynamic"].max(), f"{name} max")
        close(out[name]["binary"], expected[name]["binary"], f"{name} binary")
    # one image at a time == all at once
    single = ThresholdMeasures(sample_based=sample_based, beta2=beta)
    for p, g in zip(preds, gts, strict=True):
        single.update(torch.from_numpy(p)[None], torch.from_numpy(g)[None])
    torch.testing.assert_close(single.compute(), out, rtol=0, atol=1e-12)


def test_batch_equals_single_updates_same_size():
    rng = np.random.default_rng(3)
    preds = torch.from_numpy(rng.integers(0, 256, (5, 17, 23), dtype=np.uint8))
    target = torch.from_numpy((rng.random((5, 17, 23)) > 0.6).astype(np.uint8) * 255)
    for sample_based in (True, False):
        batch, single = ThresholdMeasures(sample_based=sample_based), ThresholdMeasures(sample_based=sample_based)
        batch.update(preds, target)
        for i in range(5):
            single.update(preds[i : i + 1], target[i : i + 1, None])
        torch.testing.assert_close(batch.compute(), single.compute(), rtol=0, atol=1e-12)


def test_aliases_keys_and_subsets():
    target = torch.zeros(2, 6, 6, dtype=torch.uint8)
    target[:, 1:4, 1:4] = 255
    preds = torch.rand(2, 6, 6, dtype=torch.float64)
    out = threshold_measures(preds, target, measures=["tpr", "recall", "oa"], modes="binary", return_counts=True)
    assert set(out) == {"tpr/binary", "recall/binary", "oa/binary", "counts/binary"}
    torch.testing.assert_close(out["tpr/binary"], out["recall/binary"])
    assert out["counts/binary"].shape == (2, 4) and out["counts/binary"].dtype == torch.int64
    assert int(out["counts/binary"].sum()) == 2 * 36
    metric = ThresholdMeasures(measures=["kappa"], modes=["dynamic"])
    metric.update(preds, target)
    assert set(metric.compute()["kappa"]) == {"dynamic", "mean", "max"}


@pytest.fixture(scope="module")
def real():
    root = shared_path("pysod_testdata")
    preds = [cv2.imread(str(root / "preds" / n), cv2.IMREAD_GRAYSCALE) for n in IMAGES]
    gts = [cv2.imread(str(root / "masks" / n), cv2.IMREAD_GRAYSCALE) for n in IMAGES]
    stored = json.loads((root / "version_performance.json").read_text())["v1_4_3"]
    return preds, gts, stored


# version_performance.json short names -> ours
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


@pytest.mark.parametrize("path", ["kernel", "tensor"])
def test_pysod_test_images_match_stored_values(real, path):
    preds, gts, stored = real
    with tensor_path(path == "tensor"):
        per_image = threshold_measures([torch.from_numpy(p) for p in preds], [torch.from_numpy(g) for g in gts])
        results = {}
        for sample_based in (True, False):
            for beta in (0.3, 1.0):
                metric = ThresholdMeasures(sample_based=sample_based, beta2=beta)
                metric.update([torch.from_numpy(p) for p in preds], [torch.from_numpy(g) for g in gts])
                results[sample_based, beta] = metric.compute()
    for short, name in [*SHORT.items(), ("f1", "fmeasure")]:
        beta = 1.0 if short == "f1" else 0.3
        sample, pooled = results[True, beta][name], results[False, beta][name]
        close(sample["adaptive"], stored[f"adp{short}"], f"adp{short}")
        close(sample["mean"], stored[f"mean{short}"], f"mean{short}")
        close(sample["max"], stored[f"max{short}"], f"max{short}")
        close(sample["binary"], stored[f"sample_bi{short}"], f"sample_bi{short}")
        close(pooled["binary"], stored[f"overall_bi{short}"], f"overall_bi{short}")
    # per image against a pysod run, every mode
    for i, (pred, gt) in enumerate(zip(preds, gts, strict=True)):
        expected = pysod_fmv2([pred], [gt])
        for name in THRESHOLD_MEASURES:
            for mode in MODES:
                close(per_image[f"{name}/{mode}"][i].numpy(), expected[name][mode], f"image {i} {name} {mode}")


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"measures": ["nope"]}, ValueError, "`measures`"),
        ({"measures": []}, TypeError, "`measures`"),
        ({"measures": [3]}, TypeError, "`measures`"),
        ({"modes": ["curve"]}, ValueError, "`modes`"),
        ({"modes": 3}, TypeError, "`modes`"),
        ({"beta2": 0}, ValueError, "`beta2`"),
        ({"sample_based": "yes"}, TypeError, "`sample_based`"),
        ({"normalize": 1}, TypeError, "`normalize`"),
        ({"validate_args": None}, TypeError, "`validate_args`"),
    ],
)
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        ThresholdMeasures(**kwargs)
    functional_kwargs = {k: v for k, v in kwargs.items() if k != "sample_based"}
    if functional_kwargs:
        with pytest.raises(error, match=match):
            threshold_measures(torch.zeros(1, 4, 4), torch.zeros(1, 4, 4), **functional_kwargs)


@pytest.mark.parametrize(
    ("preds", "target", "error", "match"),
    [
        (torch.zeros(4, 4), torch.zeros(4, 4), ValueError, "`preds` of shape"),
        (torch.zeros(1, 4, 4), torch.zeros(1, 4, 5), ValueError, "same shape"),
        (torch.full((1, 4, 4), 2.0), torch.zeros(1, 4, 4), ValueError, r"\[0, 1\]"),
        (torch.full((1, 4, 4), float("nan")), torch.zeros(1, 4, 4), ValueError, "finite"),
        (torch.zeros(1, 4, 4), torch.full((1, 4, 4), 0.5), ValueError, "binary"),
        (torch.zeros(1, 4, 4, dtype=torch.complex64), torch.zeros(1, 4, 4), TypeError, "`preds`"),
        ("x", torch.zeros(1, 4, 4), TypeError, "`preds`"),
        ([torch.zeros(4, 4)], torch.zeros(1, 4, 4), TypeError, "both tensors or both lists"),
        ([torch.zeros(4, 4)], [torch.zeros(4, 4), torch.zeros(4, 4)], ValueError, "as many"),
    ],
)
def test_bad_inputs(preds, target, error, match):
    with pytest.raises(error, match=match):
        threshold_measures(preds, target)
    metric = ThresholdMeasures()
    with pytest.raises(error, match=match):
        metric.update(preds, target)
