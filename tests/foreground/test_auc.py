"""AUC-ROC and AUC-PR as PySODMetrics' metric recorder computes them (si_sample_auc_roc / si_sample_auc_pr): each
target's area under its TPR-FPR (precision-recall) curve of SizeInvarianceFmeasureV2's sample-based dynamic handlers,
averaged over the image's targets, then over the images (issue 28, item 11)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from segmetrics_torch import ForegroundMeasures, SizeInvariantThresholdMeasures


def _maps() -> tuple[list[np.ndarray], list[np.ndarray]]:
    rng = np.random.default_rng(0)
    preds, gts = [], []
    for i in range(5):
        g = np.zeros((60, 80), np.uint8)
        g[5:25, 5:30] = 255
        g[35:55, 40 + i : 70] = 255
        if i == 3:
            g[:] = 0  # an empty GT: the whole image is its target, as PySOD
        preds.append(np.clip(g * 0.6 + rng.integers(0, 100, g.shape), 0, 255).astype(np.uint8))
        gts.append(g)
    return preds, gts


def _recorder_aucs(preds, gts) -> tuple[float, float]:
    ps = pytest.importorskip("py_sod_metrics")
    si = ps.SizeInvarianceFmeasureV2()
    for name, handler in (
        ("tpr", ps.TPRHandler),
        ("fpr", ps.FPRHandler),
        ("pre", ps.PrecisionHandler),
        ("rec", ps.RecallHandler),
    ):
        si.add_handler(name, handler(with_adaptive=False, with_dynamic=True, sample_based=True))
    for p, g in zip(preds, gts, strict=True):
        si.step(p, g)
    info = si.get_results()

    def area(y, x):  # the recorder's cal_auc on curves flipped to ascending thresholds
        y, x = np.flip(y, -1), np.flip(x, -1)
        order = np.argsort(x, axis=-1, kind="stable")
        return np.trapezoid(np.take_along_axis(y, order, -1), np.take_along_axis(x, order, -1), axis=-1)

    roc = np.mean([area(y, x).mean() for y, x in zip(info["tpr"]["dynamic"], info["fpr"]["dynamic"], strict=True)])
    pr = np.mean([area(y, x).mean() for y, x in zip(info["pre"]["dynamic"], info["rec"]["dynamic"], strict=True)])
    return float(roc), float(pr)


def test_auc_roc_and_pr_equal_the_recorder() -> None:
    preds, gts = _maps()
    roc, pr = _recorder_aucs(preds, gts)
    metric = SizeInvariantThresholdMeasures(measures=["recall", "fpr", "precision"], modes=["dynamic"])
    metric.update(torch.from_numpy(np.stack(preds)), torch.from_numpy(np.stack(gts)))
    res = metric.compute()
    assert float(res["auc_roc"]) == pytest.approx(roc, abs=1e-12)
    assert float(res["auc_pr"]) == pytest.approx(pr, abs=1e-12)
    suite = ForegroundMeasures(include=["size_invariant_f_measure"])
    suite.update(list(map(torch.from_numpy, preds)), list(map(torch.from_numpy, gts)))
    assert float(suite.compute()["size_invariant_f_measure"]["auc_roc"]) == pytest.approx(roc, abs=1e-12)


def test_no_area_without_its_curves() -> None:
    metric = SizeInvariantThresholdMeasures(measures=["fmeasure"], modes=["dynamic"])
    preds, gts = _maps()
    metric.update(torch.from_numpy(np.stack(preds)), torch.from_numpy(np.stack(gts)))
    assert "auc_roc" not in metric.compute() and "auc_pr" not in metric.compute()
