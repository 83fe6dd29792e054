"""Losses: gradcheck in float64, finite gradients on edge cases and under autocast, parity with the metrics on binary
predictions, reductions and bad input."""

from __future__ import annotations

import pytest
import torch

from segmetrics_torch.functional import e_measure, f_measure, iou, weighted_f_measure
from segmetrics_torch.losses import (
    EMeasureLoss,
    SoftFMeasureLoss,
    SoftIoULoss,
    WeightedFMeasureLoss,
    e_measure_loss,
    soft_f_measure_loss,
    soft_iou_loss,
    weighted_f_measure_loss,
)

LOSSES = {
    "e": e_measure_loss,
    "wf": weighted_f_measure_loss,
    "f": soft_f_measure_loss,
    "iou": soft_iou_loss,
}


def _gt(batch=2, h=9, w=11, seed=0):
    gen = torch.Generator().manual_seed(seed)
    g = torch.rand(batch, h, w, generator=gen) > 0.6
    g[:, 2:5, 3:7] = True
    return g


@pytest.mark.parametrize("name", list(LOSSES))
def test_gradcheck_float64(name):
    g = _gt(2, 7, 8)
    gen = torch.Generator().manual_seed(1)
    p = (0.05 + 0.9 * torch.rand(2, 7, 8, generator=gen, dtype=torch.float64)).requires_grad_()
    fn = LOSSES[name]
    assert torch.autograd.gradcheck(lambda x: fn(x, g, reduction="none"), (p,), eps=1e-6, atol=1e-5)


@pytest.mark.parametrize("name", list(LOSSES))
@pytest.mark.parametrize("case", ["empty_gt", "full_gt", "saturated_zero", "saturated_one", "perfect"])
def test_finite_gradients_on_edge_cases(name, case):
    g = _gt(2, 8, 8)
    p = torch.rand(2, 8, 8, dtype=torch.float32)
    if case == "empty_gt":
        g = torch.zeros_like(g)
    elif case == "full_gt":
        g = torch.ones_like(g)
    elif case == "saturated_zero":
        p = torch.zeros_like(p)
    elif case == "saturated_one":
        p = torch.ones_like(p)
    else:
        p = g.float()
    p.requires_grad_()
    loss = LOSSES[name](p, g)
    loss.backward()
    assert torch.isfinite(loss) and torch.isfinite(p.grad).all()


@pytest.mark.parametrize("name", list(LOSSES))
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_autocast_and_half_inputs(name, dtype):
    g = _gt(2, 16, 16)
    net = torch.nn.Conv2d(1, 1, 3, padding=1)
    x = torch.rand(2, 1, 16, 16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        p = torch.sigmoid(net(x))
        loss = LOSSES[name](p, g[:, None])
    loss.backward()
    assert torch.isfinite(loss) and all(torch.isfinite(q.grad).all() for q in net.parameters())
    half = torch.rand(2, 16, 16).to(dtype).requires_grad_()
    out = LOSSES[name](half, g)
    assert out.dtype == dtype
    out.float().backward()
    assert torch.isfinite(half.grad.float()).all()


def test_binary_predictions_equal_one_minus_the_metric():
    g = _gt(4, 20, 24, seed=3)
    gen = torch.Generator().manual_seed(4)
    p = (torch.rand(4, 20, 24, generator=gen) > 0.5).double()
    p[:, 0, 0] = 1  # not all zero: the adaptive threshold keeps a binary map as it is
    g[2] = False  # an empty ground truth
    metrics = {
        "e": e_measure(p, g)["adaptive"],
        "wf": weighted_f_measure(p, g),
        "f": f_measure(p, g)["adaptive"],
        "iou": iou(p, g)["adaptive"],
    }
    for name, fn in LOSSES.items():
        torch.testing.assert_close(fn(p, g, reduction="none"), 1 - metrics[name], rtol=0, atol=1e-12, msg=name)


def test_weighted_f_loss_on_soft_maps_equals_the_metric_value():
    """The soft weighted F is the metric's formula on the soft map (the metric does not binarise)."""
    g = _gt(3, 15, 17, seed=5)
    p = torch.rand(3, 15, 17, dtype=torch.float64)
    expected = 1 - weighted_f_measure(p, g, normalize=False)
    torch.testing.assert_close(weighted_f_measure_loss(p, g, reduction="none"), expected, rtol=0, atol=1e-12)


def test_reductions_and_modules():
    g = _gt(3)
    p = torch.rand(3, 9, 11)
    for module, fn in (
        (EMeasureLoss, e_measure_loss),
        (WeightedFMeasureLoss, weighted_f_measure_loss),
        (SoftFMeasureLoss, soft_f_measure_loss),
        (SoftIoULoss, soft_iou_loss),
    ):
        per = fn(p, g, reduction="none")
        assert per.shape == (3,)
        torch.testing.assert_close(module()(p, g), per.mean())
        torch.testing.assert_close(module(reduction="sum")(p, g), per.sum())
    with pytest.raises(ValueError, match="reduction"):
        EMeasureLoss(reduction="max")


@pytest.mark.parametrize(
    ("preds", "target", "error", "match"),
    [
        (torch.rand(2, 4, 4), torch.zeros(2, 4, 5, dtype=torch.bool), ValueError, "same shape"),
        (torch.rand(4, 4), torch.zeros(4, 4, dtype=torch.bool), ValueError, "shape"),
        (torch.rand(2, 4, 4) * 2, torch.zeros(2, 4, 4, dtype=torch.bool), ValueError, "probabilities"),
        (torch.full((1, 2, 2), float("nan")), torch.zeros(1, 2, 2, dtype=torch.bool), ValueError, "NaN"),
        (torch.zeros(1, 2, 2, dtype=torch.long), torch.zeros(1, 2, 2, dtype=torch.bool), TypeError, "floating"),
        (torch.rand(1, 2, 2), torch.full((1, 2, 2), 0.5), ValueError, "binary"),
        (torch.rand(1, 2, 2), torch.tensor([[[0.0, 1.0], [1.0, 1 - 2**-24]]]), ValueError, "binary"),
        (torch.rand(1, 2, 2), torch.tensor([[[0.0, 1.0], [2.0, 1.0]]], dtype=torch.float64), ValueError, "binary"),
        (torch.rand(1, 2, 2), torch.tensor([[[0.0, 1.0], [-1.0, 1.0]]]), ValueError, "binary"),
        (torch.rand(1, 2, 2), torch.tensor([[[0.0, float("nan")], [0.0, 1.0]]]), ValueError, "binary"),
        (torch.rand(1, 2, 2), torch.tensor([[[0, 1], [2, 1]]]), ValueError, "binary"),
        (torch.rand(1, 2, 2), torch.tensor([[[0, 1], [-1, 1]]], dtype=torch.int8), ValueError, "binary"),
        (torch.rand(0, 2, 2), torch.zeros(0, 2, 2, dtype=torch.bool), ValueError, "at least one image"),
    ],
)
def test_bad_input(preds, target, error, match):
    for fn in LOSSES.values():
        with pytest.raises(error, match=match):
            fn(preds, target)


@pytest.mark.parametrize(
    "target",
    [
        torch.tensor([[[0.0, 1.0], [-0.0, 1.0]]]),
        torch.tensor([[[0, 1], [0, 1]]]),
        torch.tensor([[[0, 1], [0, 1]]], dtype=torch.float16),
        torch.tensor([[[0, 1], [0, 1]]], dtype=torch.bfloat16),
    ],
)
def test_binary_targets_of_every_dtype(target):
    """{0, 1} in any integer or floating dtype (-0.0 included) is the bool mask it stands for."""
    p = torch.rand(1, 2, 2, generator=torch.Generator().manual_seed(3))
    for fn in LOSSES.values():
        torch.testing.assert_close(fn(p, target), fn(p, target.bool()), rtol=0, atol=0)


def test_device_and_dtype(device):
    g = _gt(2).to(device)
    p = torch.rand(2, 9, 11, device=device, requires_grad=True)
    for fn in LOSSES.values():
        loss = fn(p, g)
        assert loss.device.type == torch.device(device).type and loss.dtype == torch.float32
        (grad,) = torch.autograd.grad(loss, p)
        assert torch.isfinite(grad).all()
