"""Batching, dtypes, devices, bad input and documented edge cases of the foreground measures."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import segmetrics_torch.functional as F
from segmetrics_torch import MAE, Dice, EMeasure, FMeasure, ForegroundMeasures, IoU, SMeasure, WeightedFMeasure
from segmetrics_torch.metrics.foreground import flatten_results
from segmetrics_torch.reference import foreground as ref

METRICS = (MAE, SMeasure, WeightedFMeasure, FMeasure, EMeasure, IoU, Dice, ForegroundMeasures)
FUNCTIONS = (
    F.mae,
    F.s_measure,
    F.weighted_f_measure,
    F.f_measure,
    F.e_measure,
    F.iou,
    F.dice,
    F.precision_recall,
    F.foreground_measures,
)


def random_batch(batch=6, h=23, w=31, seed=0):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:h, :w]
    gts = np.stack(
        [
            (
                (yy - rng.uniform(0, h)) ** 2 / rng.uniform(4, h) ** 2
                + (xx - rng.uniform(0, w)) ** 2 / rng.uniform(4, w) ** 2
                < 1
            )
            * 255
            for _ in range(batch)
        ]
    ).astype(np.uint8)
    preds = np.clip(gts * 0.6 + rng.normal(60, 50, gts.shape), 0, 255).astype(np.uint8)
    return torch.from_numpy(preds), torch.from_numpy(gts)


def assert_results_equal(a, b, tol=1e-12):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            assert_results_equal(a[k], b[k], tol)
    else:
        torch.testing.assert_close(a, b, rtol=0, atol=tol, equal_nan=True)


@pytest.mark.parametrize("metric_cls", METRICS)
def test_batch_equals_single_updates(metric_cls):
    preds, gts = random_batch()
    batched, single = metric_cls(), metric_cls()
    batched.update(preds, gts)
    for i in range(preds.shape[0]):
        single.update(preds[i : i + 1], gts[i : i + 1])
    assert_results_equal(batched.compute(), single.compute())


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_functional_batch_equals_per_image_and_channel_dim(fn):
    preds, gts = random_batch(batch=4)
    full = fn(preds, gts)
    with_channel = fn(preds[:, None], gts[:, None])
    assert_results_equal(full, with_channel, tol=0)
    for i in range(4):
        one = fn(preds[i : i + 1], gts[i : i + 1])
        if isinstance(full, dict):
            for k in full:
                torch.testing.assert_close(full[k][i : i + 1], one[k], rtol=0, atol=1e-12, equal_nan=True)
        else:
            torch.testing.assert_close(full[i : i + 1], one, rtol=0, atol=1e-12, equal_nan=True)


def test_list_of_different_sizes_keeps_order():
    a_p, a_g = random_batch(batch=3, h=20, w=30, seed=1)
    b_p, b_g = random_batch(batch=2, h=33, w=17, seed=2)
    preds = [a_p[0], b_p[0], a_p[1], b_p[1], a_p[2]]
    gts = [a_g[0], b_g[0], a_g[1], b_g[1], a_g[2]]
    out = F.foreground_measures(preds, gts)
    for i, (p, g) in enumerate(zip(preds, gts, strict=True)):
        one = F.foreground_measures(p[None], g[None])
        for k in out:
            torch.testing.assert_close(out[k][i], one[k][0], rtol=0, atol=1e-12, equal_nan=True)


def test_uint8_and_float_inputs_agree():
    preds, gts = random_batch()
    as_float = preds.double() / 255
    assert_results_equal(F.foreground_measures(preds, gts), F.foreground_measures(as_float, gts), tol=1e-12)
    # float32 and float16 maps are accepted (evaluation runs in float64 after the cast)
    F.foreground_measures(as_float.float(), gts > 128)
    F.foreground_measures(as_float.half(), (gts > 128).float())
    # bool GT and {0, 1} integer GT equal the uint8 > 128 binarisation
    assert_results_equal(F.foreground_measures(preds, gts), F.foreground_measures(preds, gts > 128), tol=0)
    assert_results_equal(F.foreground_measures(preds, gts), F.foreground_measures(preds, (gts > 128).long()), tol=0)


def test_device(device):
    """The whole suite on every available device equals the CPU result (CUDA when a GPU is present)."""
    preds, gts = random_batch(batch=5, h=40, w=57)
    cpu = F.foreground_measures(preds, gts)
    dev = F.foreground_measures(preds.to(device), gts.to(device))
    for k in cpu:
        assert dev[k].device.type == torch.device(device).type
        torch.testing.assert_close(dev[k].cpu(), cpu[k], rtol=0, atol=1e-12, equal_nan=True)
    metric = ForegroundMeasures().to(device)
    metric.update(preds.to(device), gts.to(device))
    assert metric.compute()["mae"].device.type == torch.device(device).type


# ---------------------------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------------------------
BAD = [
    (lambda p, g: (p[0], g[0]), ValueError, "preds"),  # (H, W): wrong ndim
    (lambda p, g: (p[:, None].expand(-1, 3, -1, -1), g[:, None].expand(-1, 3, -1, -1)), ValueError, "preds"),
    (lambda p, g: (p, g[:, :-1]), ValueError, "same shape"),
    (lambda p, g: (p[:0], g[:0]), ValueError, "empty batch"),
    (lambda p, g: (p.double().masked_fill(p > 200, float("nan")) / 255, g), ValueError, "NaN"),
    (lambda p, g: (p.double().masked_fill(p > 200, float("inf")), g), ValueError, "NaN or inf"),
    (lambda p, g: (p.double(), g), ValueError, "[0, 1]"),  # float preds on the 0..255 scale
    (lambda p, g: (p.double() / 255 - 0.5, g), ValueError, "[0, 1]"),
    (lambda p, g: (p, g.double() / 510), ValueError, "binary"),  # non-binary float GT (0, 0.5)
    (lambda p, g: (p.int(), g), TypeError, "preds"),
    (lambda p, g: (p.numpy(), g), TypeError, "preds"),
    (lambda p, g: (p, g.to(torch.complex64)), TypeError, "target"),
    (lambda p, g: ([], []), ValueError, "empty list"),
    (lambda p, g: ([p[0], p[1]], [g[0]]), ValueError, "as many"),
    (lambda p, g: ([p[0]], [g[0, :-1]]), ValueError, "same shape"),
    (lambda p, g: ([p[0]], g), TypeError, "both tensors"),
]


@pytest.mark.parametrize(("make", "error", "match"), BAD)
@pytest.mark.parametrize("fn", [F.foreground_measures, F.mae, F.s_measure])
def test_bad_input_functional(fn, make, error, match):
    preds, gts = random_batch(batch=3)
    p, g = make(preds, gts)
    with pytest.raises(error, match=match.replace("[", r"\[").replace("]", r"\]")):
        fn(p, g)


@pytest.mark.parametrize(("make", "error", "match"), BAD)
def test_bad_input_metric(make, error, match):
    preds, gts = random_batch(batch=3)
    p, g = make(preds, gts)
    with pytest.raises(error, match=match.replace("[", r"\[").replace("]", r"\]")):
        ForegroundMeasures().update(p, g)


def test_bad_arguments():
    preds, gts = random_batch(batch=1)
    with pytest.raises(ValueError, match="beta2"):
        F.f_measure(preds, gts, beta2=0)
    with pytest.raises(ValueError, match="alpha"):
        SMeasure(alpha=1.5)
    with pytest.raises(ValueError, match="empty_quadrant"):
        F.s_measure(preds, gts, empty_quadrant="zero")
    with pytest.raises(TypeError, match="normalize"):
        MAE(normalize="yes")
    with pytest.raises(ValueError, match="backend"):
        F.weighted_f_measure(preds, gts, edt_backend="opencv")


def test_validate_args_false_skips_value_checks():
    preds, gts = random_batch(batch=2)
    F.mae(preds.double(), gts, validate_args=False)  # 0..255 floats: not checked, no error


# ---------------------------------------------------------------------------------------------------------------
# documented edge cases (values as the reference)
# ---------------------------------------------------------------------------------------------------------------
def test_empty_gt_full_gt_constant_pred():
    rng = np.random.default_rng(3)
    pred = rng.integers(0, 256, (1, 17, 13), dtype=np.uint8)
    for gt_value in (0, 255):
        gt = np.full((1, 17, 13), gt_value, np.uint8)
        out = F.foreground_measures(torch.from_numpy(pred), torch.from_numpy(gt))
        p, g = ref.prepare(pred[0], gt[0])
        if gt_value == 0:
            assert float(out["weighted_f_measure"][0]) == 0.0
            assert float(out["f_adaptive"][0]) == 0.0
            assert torch.all(out["f_curve"] == 0)
            np.testing.assert_allclose(float(out["s_measure"][0]), 1 - p.mean(), atol=1e-12)
        else:
            np.testing.assert_allclose(float(out["s_measure"][0]), p.mean(), atol=1e-12)
            np.testing.assert_allclose(float(out["weighted_f_measure"][0]), ref.weighted_f_measure(p, g), atol=1e-12)
        em = ref.e_measure(p, g)
        np.testing.assert_allclose(out["e_curve"][0].numpy(), em["curve"], atol=1e-12)
    for value in (0, 100, 255):  # constant maps are not stretched: 100 stays 100/255
        const = torch.full((1, 9, 9), value, dtype=torch.uint8)
        gt = torch.zeros(1, 9, 9, dtype=torch.uint8)
        gt[:, 2:5, 3:7] = 255
        np.testing.assert_allclose(float(F.mae(const, gt)[0]), np.abs(value / 255 - (gt[0] > 128).numpy()).mean())


def test_perfect_prediction_values():
    gt = torch.zeros(1, 40, 30, dtype=torch.uint8)
    gt[:, 5:20, 4:19] = 255
    out = F.foreground_measures(gt.clone(), gt)
    n = 40 * 30
    assert float(out["e_adaptive"][0]) == pytest.approx(n / (n - 1), abs=1e-12)  # E > 1 by the N - 1 normalisation
    assert float(out["weighted_f_measure"][0]) == pytest.approx(1.0, abs=1e-12)
    assert float(out["s_measure"][0]) == pytest.approx(1.0, abs=1e-12)
    assert float(out["mae"][0]) == 0.0


def test_s_measure_nan_case_is_documented_and_warned():
    gt = torch.zeros(1, 10, 10, dtype=torch.uint8)
    gt[:, :, -1] = 255  # centroid on the last column: empty right quadrants
    pred = torch.randint(0, 256, (1, 10, 10), dtype=torch.uint8, generator=torch.Generator().manual_seed(0))
    assert torch.isnan(F.s_measure(pred, gt)[0])
    assert torch.isfinite(F.s_measure(pred, gt, empty_quadrant="skip")[0])
    metric = SMeasure()
    metric.update(pred, gt)
    with pytest.warns(RuntimeWarning, match="1 image"):
        assert torch.isnan(metric.compute())
    skip = SMeasure(empty_quadrant="skip")
    skip.update(pred, gt)
    assert torch.isfinite(skip.compute())


def test_metric_contract():
    for cls in METRICS:
        m = cls()
        assert m.full_state_update is False
        assert m.is_differentiable is False
        for name in m._defaults:
            assert m._reductions[name] is not None  # every state is reduced (sum) across processes
    preds, gts = random_batch(batch=3)
    metric = ForegroundMeasures()
    batch_value = metric(preds, gts)  # forward returns the batch value and accumulates
    assert_results_equal(batch_value, metric.compute())
    flat = flatten_results(metric.compute())
    assert "f_measure/max" in flat and all(v.numel() == 1 for v in flat.values())
    assert flatten_results(metric.compute(), curves=True)["e_measure/curve"].shape == (256,)
    metric.reset()
    assert int(metric.count) == 0
