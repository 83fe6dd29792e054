"""The foreground Metrics' float-map convention (issue 43, "Training logs"): by default a map is min-max stretched per
image as PySODMetrics does; ``normalize=False`` scores probabilities as they are, so that a value logged in a training
loop agrees with a loss computed on the same tensor. The docstrings say so; this file checks what they say."""

from __future__ import annotations

import inspect

import pytest
import torch

import segmetrics_torch
from segmetrics_torch import MAE
from segmetrics_torch.metrics import foreground, foreground_extra


def _sigmoid_batch(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(4, 1, 24, 24, generator=g) * 0.7  # probabilities in about (0.1, 0.9): not stretched to [0, 1]
    target = torch.rand(4, 1, 24, 24, generator=g) > 0.6
    return torch.sigmoid(logits), target


def test_mae_without_normalize_is_the_plain_mean_absolute_error_of_the_probabilities() -> None:
    probs, target = _sigmoid_batch(0)
    by_hand = (probs.double() - target.double()).abs().mean()
    metric = MAE(normalize=False)
    metric.update(probs[:2], target[:2])
    metric.update(probs[2:], target[2:])  # images of equal size: the mean of per-image means is the pixel mean
    assert float(metric.compute()) == pytest.approx(float(by_hand), abs=1e-12)
    # the loss-like reading of the same tensor: torch's own L1 loss agrees
    l1 = torch.nn.functional.l1_loss(probs.double(), target.double())
    assert float(metric.compute()) == pytest.approx(float(l1), abs=1e-12)


def test_the_default_stretches_a_map_whose_range_is_not_zero_to_one() -> None:
    probs, target = _sigmoid_batch(1)
    assert float(probs.amin()) > 0.01 and float(probs.amax()) < 0.99  # the premise: a range inside (0, 1)
    default, plain = MAE(), MAE(normalize=False)
    default.update(probs, target)
    plain.update(probs, target)
    assert abs(float(default.compute()) - float(plain.compute())) > 1e-3
    # the default is PySODMetrics' stretch: (p - min) / (max - min) per image, then the plain MAE
    p = probs.double().flatten(1)
    stretched = (p - p.amin(1, keepdim=True)) / (p.amax(1, keepdim=True) - p.amin(1, keepdim=True))
    by_hand = (stretched - target.double().flatten(1)).abs().mean(1).mean()
    assert float(default.compute()) == pytest.approx(float(by_hand), abs=1e-12)
    # a map already spanning [0, 1] exactly is left as it is: both agree
    full = probs.clone()
    full[:, :, 0, 0], full[:, :, 0, 1] = 0.0, 1.0
    a, b = MAE(), MAE(normalize=False)
    a.update(full, target)
    b.update(full, target)
    assert float(a.compute()) == pytest.approx(float(b.compute()), abs=1e-12)


def _public_foreground_metrics() -> list[type]:
    classes = []
    for module in (foreground, foreground_extra):
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, torch.nn.Module):
                classes.append(obj)
    return classes


@pytest.mark.parametrize("cls", _public_foreground_metrics(), ids=lambda c: c.__name__)
def test_every_foreground_metric_says_so_in_its_first_paragraph(cls: type) -> None:
    first = " ".join(inspect.getdoc(cls).split("\n\n")[0].split())
    assert "min-max stretched per image" in first and "``normalize=False``" in first, cls.__name__
    assert cls(normalize=False).normalize is False and cls().normalize is True  # the switch the sentence names
    assert cls.__name__ in segmetrics_torch.__all__
