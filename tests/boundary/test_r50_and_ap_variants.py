"""R50 where precision first reaches 0.5 (and Dollar's value beside it), and pyEdgeEval's interpolated AP
(issue 28, item 4)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from segmetrics_torch.functional.boundary.summary import boundary_summary


def _summary(cnt_r, sum_r, cnt_p, sum_p, thresholds) -> dict:
    t = [torch.tensor(x, dtype=torch.int64) for x in (cnt_r, sum_r, cnt_p, sum_p)]
    ois = torch.stack([x[0] for x in t])
    return boundary_summary(*t, torch.tensor(thresholds, dtype=torch.float64), ois)


def test_a_stray_point_at_precision_half_does_not_make_r50_zero() -> None:
    """The new user's case: the curve passes P = 0.5 at R ~ 0.8, then a high threshold keeps 2 pixels, 1 matched
    (P = 0.5 exactly, R ~ 0): Dollar's unique-precision interpolation lands on that point."""
    thresholds = [0.1, 0.3, 0.5, 0.7, 0.93]
    sum_r = [1000] * 5
    cnt_r = [950, 820, 600, 300, 1]
    sum_p = [2600, 1400, 800, 350, 2]
    cnt_p = [950, 820, 600, 300, 1]  # P: 0.365, 0.586, 0.75, 0.857, 0.5
    res = _summary(cnt_r, sum_r, cnt_p, sum_p, thresholds)
    p, r = res["precision"].numpy(), res["recall"].numpy()
    expected = r[0] + (0.5 - p[0]) * (r[1] - r[0]) / (p[1] - p[0])
    assert float(res["r50"]) == pytest.approx(expected, abs=1e-12) and 0.8 < expected < 0.95
    assert float(res["r50_dollar"]) == pytest.approx(0.001, abs=1e-12)  # the stray point


def test_a_monotone_curve_gives_dollars_value() -> None:
    res = _summary([900, 700, 400, 100], [1000] * 4, [900, 700, 400, 100], [2000, 1000, 450, 105], [0.2, 0.4, 0.6, 0.8])
    assert float(res["r50"]) == pytest.approx(float(res["r50_dollar"]), abs=1e-12)


def test_pyedgeeval_ap_equals_pyedgeeval() -> None:
    calculate = pytest.importorskip("pyEdgeEval.common.binary_label.calculate_metrics").calculate_metrics
    rng = np.random.default_rng(3)
    thresholds = np.linspace(1 / 100, 1 - 1 / 100, 99)
    samples = []
    for i in range(4):
        sum_r = np.full(99, rng.integers(200, 400))
        cnt_r = np.sort(rng.integers(0, sum_r[0], 99))[::-1]
        sum_p = np.sort(rng.integers(50, 900, 99))[::-1]
        cnt_p = np.minimum(sum_p, (cnt_r * rng.uniform(0.7, 1.1)).astype(np.int64))
        samples.append({"name": f"im{i}", "counts": (cnt_r, sum_r, cnt_p, sum_p)})
    _, _, overall = calculate(eval_single=lambda s: s["counts"], samples=samples, thresholds=list(thresholds), nproc=1)
    totals = [sum(s["counts"][k] for s in samples) for k in range(4)]
    res = _summary(*totals, thresholds)
    assert float(res["ap_pyedgeeval"]) == pytest.approx(overall["AP"], abs=1e-12)
    assert float(res["ap"]) == pytest.approx(overall["AUC"], abs=2e-3)  # pyEdgeEval's AUC: BSR's AP on 0:0.01:0.99


def test_the_command_says_when_r50_is_a_lower_bound(tmp_path, capsys) -> None:
    """Precision above 0.5 already at the lowest threshold: R50 is that threshold's recall, and the command says so
    (from the new-user trial: 5 thresholds on a good map gave a silent R50)."""
    import scipy.io
    from PIL import Image

    from segmetrics_torch.app.cli import main

    seg = np.ones((120, 160), np.uint16)
    seg[:, 80:] = 2
    bnd = np.zeros_like(seg, dtype=np.uint8)
    bnd[:, 80] = 1
    cell = np.empty((1, 1), dtype=object)
    cell[0, 0] = {"Segmentation": seg, "Boundaries": bnd}
    (tmp_path / "gt").mkdir()
    (tmp_path / "pred").mkdir()
    scipy.io.savemat(tmp_path / "gt" / "a.mat", {"groundTruth": cell})
    soft = np.zeros((120, 160), np.uint8)
    soft[:, 81] = 200  # one pixel off the annotation: matched at every threshold it passes
    Image.fromarray(soft).save(tmp_path / "pred" / "a.png")
    assert (
        main(
            [
                "evaluate",
                "boundary",
                "--pred",
                str(tmp_path / "pred"),
                "--gt",
                str(tmp_path / "gt"),
                "--thresholds",
                "5",
                "--no-progress",
            ]
        )
        == 0
    )
    assert "precision is above 0.5 already at the lowest threshold" in capsys.readouterr().err
