"""``protocol=`` of the PySODMetrics-convention functions and Metrics (issue 49): a MATLAB-toolbox protocol gives the
toolbox's numbers (those of :func:`toolbox_measures` / :class:`MatlabToolboxMeasures`, themselves tested against the
toolbox's loop and its saved output in ``test_matlab_toolbox.py``), the default gives today's numbers bit for bit, and
the options the toolbox lacks are refused by name."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import segmetrics_torch.functional as F
from segmetrics_torch import MAE, Dice, EMeasure, FMeasure, ForegroundMeasures, IoU, SMeasure, WeightedFMeasure
from segmetrics_torch.functional.foreground.matlab_toolbox import (
    TOOLBOX_LAYOUTS,
    TOOLBOX_PROTOCOLS,
    TOOLBOX_RESULT_PATHS,
    toolbox_measures,
)
from segmetrics_torch.metrics.matlab_toolbox import MatlabToolboxMeasures
from segmetrics_torch.registry import FOREGROUND_PROTOCOLS, TOOLBOX_LINE_LAYOUTS, TOOLBOX_RESULTS

PROTOCOLS = tuple(TOOLBOX_PROTOCOLS)


def test_the_registry_s_protocols_are_the_library_s() -> None:
    """The torch-free registry's names (the command's ``--protocol`` and ``--toolbox-layout``) are the library's."""
    assert FOREGROUND_PROTOCOLS == ("pysodmetrics", *TOOLBOX_PROTOCOLS)
    assert TOOLBOX_LINE_LAYOUTS == tuple(TOOLBOX_LAYOUTS)
    assert TOOLBOX_RESULTS is TOOLBOX_RESULT_PATHS


def _batch(seed: int, dtype: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Random maps with an empty and a full-width ground truth, a constant map, and a centroid tie (0-based mean
    column 2.5, where MATLAB's and numpy's rounding part)."""
    rng = np.random.default_rng(seed)
    preds = rng.integers(0, 256, (5, 12, 14), dtype=np.uint8)
    target = rng.random((5, 12, 14)) > 0.55
    target[1] = False  # empty ground truth: TP = 0 everywhere
    preds[2] = 77  # constant map: not stretched
    target[3] = False
    target[3, 1:5, 0] = target[3, 1:5, 5] = True  # centroid tie
    p = torch.from_numpy(preds)
    if dtype == "float":
        p = p.to(torch.float64) / 255 * 0.8 + 0.05  # a float map whose range is not [0, 1]
    return p, torch.from_numpy(target)


# what each Metric's compute() returns, read from MatlabToolboxMeasures' result
_SUMMARY = {
    MAE: lambda r: r["mae"],
    SMeasure: lambda r: r["s_measure"],
    WeightedFMeasure: lambda r: r["weighted_f_measure"],
    EMeasure: lambda r: {k: r["e_measure"][k] for k in ("adaptive", "curve", "mean", "max")},
    IoU: lambda r: {k: r["iou"][k] for k in ("adaptive", "curve", "mean", "max")},
    Dice: lambda r: {k: r["dice"][k] for k in ("adaptive", "curve", "mean", "max")},
    FMeasure: lambda r: {
        **{k: r["f_measure"][k] for k in ("adaptive", "curve", "mean", "max")},
        "precision": r["precision"]["curve"],
        "recall": r["sensitivity"]["curve"],
    },
}


def _assert_same(ours: object, expected: object, what: str) -> None:
    if isinstance(expected, dict):
        assert isinstance(ours, dict) and set(ours) == set(expected), what
        for key in expected:
            _assert_same(ours[key], expected[key], f"{what}/{key}")
    else:
        assert isinstance(ours, torch.Tensor) and isinstance(expected, torch.Tensor)
        torch.testing.assert_close(ours, expected, rtol=0, atol=1e-12, equal_nan=True, msg=what)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("dtype", ["uint8", "float"])
def test_every_metric_with_a_toolbox_protocol_is_the_toolbox(protocol: str, dtype: str) -> None:
    preds, target = _batch(1, dtype)
    reference = MatlabToolboxMeasures(protocol=protocol, weighted_f=True)
    reference.update(preds, target)
    expected = reference.compute()
    for cls, read in _SUMMARY.items():
        metric = cls(protocol=protocol)
        metric.update(preds[:2], target[:2])
        metric.update(list(preds[2:]), list(target[2:]))  # a list of maps too
        _assert_same(metric.compute(), read(expected), f"{cls.__name__}[{protocol}, {dtype}]")
    suite = ForegroundMeasures(protocol=protocol)
    suite.update(preds, target)
    result = suite.compute()
    for key, family in (("f_measure", "f_measure"), ("e_measure", "e_measure"), ("iou", "iou"), ("dice", "dice")):
        for part in ("adaptive", "curve", "mean", "max"):
            _assert_same(result[key][part], expected[family][part], f"ForegroundMeasures {key}/{part}")
    for key in ("mae", "s_measure", "weighted_f_measure"):
        _assert_same(result[key], expected[key], f"ForegroundMeasures {key}")
    _assert_same(result["recall"], expected["sensitivity"]["adaptive"], "ForegroundMeasures recall")
    _assert_same(result["precision"], expected["precision"]["adaptive"], "ForegroundMeasures precision")
    assert suite.settings["protocol"] == protocol


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_function_with_a_toolbox_protocol_is_the_toolbox(protocol: str) -> None:
    preds, target = _batch(2, "uint8")
    v = toolbox_measures(preds, target, protocol=protocol, weighted_f=True)
    checks = {
        "mae": (F.mae(preds, target, protocol=protocol), v["mae"]),
        "s_measure": (F.s_measure(preds, target, protocol=protocol), v["s_measure"]),
        "weighted_f_measure": (F.weighted_f_measure(preds, target, protocol=protocol), v["weighted_f_measure"]),
        "e_measure": (
            F.e_measure(preds, target, protocol=protocol),
            {"adaptive": v["e_adaptive"], "curve": v["e_curve"]},
        ),
        "iou": (F.iou(preds, target, protocol=protocol), {"adaptive": v["iou_adaptive"], "curve": v["iou_curve"]}),
        "dice": (
            F.dice(preds, target, protocol=protocol),
            {"adaptive": v["dice_adaptive"], "curve": v["dice_curve"]},
        ),
        "f_measure": (
            F.f_measure(preds, target, protocol=protocol),
            {
                "adaptive": v["f_adaptive"],
                "curve": v["f_curve"],
                "precision": v["precision_curve"],
                "recall": v["sensitivity_curve"],
            },
        ),
        "precision_recall": (
            F.precision_recall(preds, target, protocol=protocol),
            {
                "adaptive_precision": v["precision_adaptive"],
                "adaptive_recall": v["sensitivity_adaptive"],
                "precision": v["precision_curve"],
                "recall": v["sensitivity_curve"],
            },
        ),
    }
    for name, (ours, expected) in checks.items():
        _assert_same(ours, expected, name)
    suite = F.foreground_measures(preds, target, protocol=protocol)
    assert set(suite) == set(F.FOREGROUND_KEYS)
    _assert_same(suite["recall_curve"], v["sensitivity_curve"], "foreground_measures recall_curve")
    _assert_same(suite["dice_adaptive"], v["dice_adaptive"], "foreground_measures dice_adaptive")


def test_the_toolbox_protocol_differs_from_the_default_where_documented() -> None:
    # the point of the protocol: on these maps the toolbox's numbers are not PySODMetrics'
    preds, target = _batch(3, "uint8")
    for fn in (F.dice, F.e_measure):
        default, toolbox = fn(preds, target), fn(preds, target, protocol="matlab-toolbox")
        assert not torch.allclose(default["curve"], toolbox["curve"], atol=1e-6), fn.__name__


@pytest.mark.parametrize("dtype", ["uint8", "float"])
def test_the_default_protocol_is_today_s_numbers_bit_for_bit(dtype: str) -> None:
    preds, target = _batch(4, dtype)
    for cls in (*_SUMMARY, ForegroundMeasures):
        plain, named = cls(), cls(protocol="pysodmetrics")
        plain.update(preds, target)
        named.update(preds, target)
        _assert_exactly(plain.compute(), named.compute(), cls.__name__)
    for fn in (F.mae, F.s_measure, F.weighted_f_measure, F.e_measure, F.f_measure, F.iou, F.dice):
        _assert_exactly(fn(preds, target), fn(preds, target, protocol="pysodmetrics"), fn.__name__)


def _assert_exactly(a: object, b: object, what: str) -> None:
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), what
        for key in a:
            _assert_exactly(a[key], b[key], f"{what}/{key}")
    else:
        assert isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
        assert torch.equal(a.nan_to_num(-7.0), b.nan_to_num(-7.0)), what


def test_options_the_toolbox_lacks_are_refused_by_name() -> None:
    preds, target = _batch(5, "uint8")
    with pytest.raises(ValueError, match=r"`protocol`.*'matlab-toolbox-2020-11'"):
        MAE(protocol="matlab")
    with pytest.raises(ValueError, match="`protocol`"):
        F.dice(preds, target, protocol="toolbox")
    with pytest.raises(ValueError, match="`normalize`"):
        Dice(protocol="matlab-toolbox", normalize=False)
    with pytest.raises(ValueError, match="`normalize`"):
        F.mae(preds, target, normalize=False, protocol="matlab-toolbox")
    with pytest.raises(ValueError, match="`alpha`"):
        SMeasure(alpha=0.4, protocol="matlab-toolbox")
    with pytest.raises(ValueError, match="`empty_quadrant`"):
        F.s_measure(preds, target, empty_quadrant="skip", protocol="matlab-toolbox")
    with pytest.raises(ValueError, match="`beta2`"):
        WeightedFMeasure(beta2=2.0, protocol="matlab-toolbox")
    with pytest.raises(ValueError, match="`wf_beta2`"):
        ForegroundMeasures(wf_beta2=0.5, protocol="matlab-toolbox-2020-11")
    with pytest.raises(ValueError, match="`include`"):
        ForegroundMeasures(include=["threshold_measures"], protocol="matlab-toolbox")
    # the F-measure's beta^2 is the toolbox's too (PraNet's F is beta = 1): passed on
    f1 = FMeasure(beta2=1.0, protocol="matlab-toolbox")
    f1.update(preds, target)
    expected = toolbox_measures(preds, target, beta2=1.0)["f_curve"].mean(0)
    torch.testing.assert_close(f1.compute()["curve"], expected, rtol=0, atol=1e-15)


def test_the_centroid_tie_is_matlab_s_on_both_paths() -> None:
    """The compiled kernel rounds the S-measure's centroid as numpy and the toolbox recomputes its ties; the tensor
    path rounds as MATLAB directly: the two agree, and on the tie image differ from PySODMetrics' value."""
    from segmetrics_torch.ops import use_backend

    preds, target = _batch(6, "uint8")
    kernel = toolbox_measures(preds, target)["s_measure"]
    with use_backend("tensor"):
        tensor = toolbox_measures(preds, target)["s_measure"]
    torch.testing.assert_close(kernel, tensor, rtol=0, atol=1e-12, equal_nan=True)
    numpy_rounded = F.s_measure(preds[3:4], target[3:4])  # PySODMetrics' map: mapminmax's up to the last bit
    assert abs(float(kernel[3]) - float(numpy_rounded[0])) > 1e-4
