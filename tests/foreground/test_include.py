"""ForegroundMeasures(include=...): the issue-15 measures accumulated beside the suite equal their own Metrics."""

from __future__ import annotations

import pytest
import torch

from segmetrics_torch import (
    ContextMeasure,
    ForegroundMeasures,
    HumanCorrectionEffort,
    MultiScaleIoU,
    SizeInvariantMAE,
    SizeInvariantThresholdMeasures,
    ThresholdMeasures,
)
from segmetrics_torch.synthetic import make_foreground_dataset

STANDALONE = {
    "threshold_measures": ThresholdMeasures,
    "size_invariant_f_measure": SizeInvariantThresholdMeasures,
    "size_invariant_mae": SizeInvariantMAE,
    "multiscale_iou": MultiScaleIoU,
    "human_correction_effort": HumanCorrectionEffort,
    "context_measure": ContextMeasure,
}


def _assert_same(a, b, where=""):
    if isinstance(a, dict):
        assert set(a) == set(b), where
        for k in a:
            _assert_same(a[k], b[k], f"{where}/{k}")
    else:
        torch.testing.assert_close(torch.as_tensor(a), torch.as_tensor(b), rtol=0, atol=0, msg=where)


@pytest.fixture(scope="module")
def data():
    d = make_foreground_dataset(n=5, size=(40, 56), methods=("good",), seed=3)
    return torch.from_numpy(d.preds["good"]), torch.from_numpy(d.gt)


def test_included_measures_equal_their_own_metrics(data):
    preds, gt = data
    suite = ForegroundMeasures(include=list(STANDALONE))
    suite.update(preds[:2], gt[:2])
    suite.update(preds[2:], gt[2:])
    res = suite.compute()
    plain = ForegroundMeasures()
    plain.update(preds[:2], gt[:2])
    plain.update(preds[2:], gt[2:])
    base = plain.compute()
    for key, value in base.items():
        _assert_same(res[key], value, key)
    for name, cls in STANDALONE.items():
        alone = cls()
        alone.update(preds[:2], gt[:2])
        alone.update(preds[2:], gt[2:])
        _assert_same(res[name], alone.compute(), name)


def test_options_reach_the_included_metric_and_forward_reset_work(data):
    preds, gt = data
    suite = ForegroundMeasures(include={"threshold_measures": {"measures": ["iou"], "modes": ["binary"]}})
    first = suite(preds[:2], gt[:2])  # forward: the batch's values, accumulated once
    alone = ThresholdMeasures(measures=["iou"], modes=["binary"])
    _assert_same(first["threshold_measures"], alone(preds[:2], gt[:2]), "forward")
    suite.update(preds[2:], gt[2:])
    alone.update(preds[2:], gt[2:])
    _assert_same(suite.compute()["threshold_measures"], alone.compute(), "after forward + update")
    assert int(suite.included["threshold_measures"].count) == 5
    suite.reset()
    assert int(suite.count) == 0 and int(suite.included["threshold_measures"].count) == 0


@pytest.mark.parametrize(
    ("include", "error", "match"),
    [
        ("threshold_measures", TypeError, "`include` to be a sequence"),
        (["camouflage_context_measure"], ValueError, "`include` to name measures among"),
        ({"size_invariant_mae": 3}, TypeError, "options of `include"),
    ],
)
def test_bad_include_is_a_clear_error(include, error, match):
    with pytest.raises(error, match=match):
        ForegroundMeasures(include=include)
