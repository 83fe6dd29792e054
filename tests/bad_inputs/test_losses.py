"""Bad and edge inputs of the differentiable losses (functional forms and nn.Module forms), issue 20."""

from __future__ import annotations

import pytest
import torch

from segmetrics_torch import EMeasureLoss, SoftFMeasureLoss, SoftIoULoss, WeightedFMeasureLoss
from segmetrics_torch.losses import e_measure_loss, soft_f_measure_loss, soft_iou_loss, weighted_f_measure_loss

from .cases import close, meta, raises, run_case, value


def _p(b: int = 2, h: int = 8, w: int = 12) -> torch.Tensor:
    return torch.rand(b, h, w, generator=torch.Generator().manual_seed(2), dtype=torch.float64)


def _g(b: int = 2, h: int = 8, w: int = 12) -> torch.Tensor:
    g = torch.zeros(b, h, w, dtype=torch.bool)
    g[:, 2:6, 3:9] = True
    return g


P, G = _p(), _g()
LOSSES = {"e": e_measure_loss, "wf": weighted_f_measure_loss, "f": soft_f_measure_loss, "iou": soft_iou_loss}


def _grad_of(fn, p, g):
    x = p.clone().requires_grad_(True)
    fn(x, g).backward()
    return x.grad


def _finite(out) -> None:
    assert bool(torch.isfinite(out).all())


CASES = []
for key, fn in LOSSES.items():
    CASES += [
        raises(f"{key}-preds-none", lambda fn=fn: fn(None, G), TypeError, r"`preds` to be a torch.Tensor"),
        raises(f"{key}-preds-numpy", lambda fn=fn: fn(P.numpy(), G), TypeError, r"`preds` to be a torch.Tensor"),
        raises(f"{key}-target-list", lambda fn=fn: fn(P, list(G)), TypeError, r"`target` to be a torch.Tensor"),
        raises(
            f"{key}-preds-uint8",
            lambda fn=fn: fn((P * 255).to(torch.uint8), G),
            TypeError,
            r"`preds` to be a floating tensor of probabilities",
        ),
        raises(f"{key}-preds-complex", lambda fn=fn: fn(P.to(torch.complex64), G), TypeError, r"`preds` to be a float"),
        raises(
            f"{key}-target-complex",
            lambda fn=fn: fn(P, G.to(torch.complex64)),
            TypeError,
            r"`target` to be bool, uint8 or a \{0, 1\}",
        ),
        raises(
            f"{key}-2d", lambda fn=fn: fn(P[0], G[0]), ValueError, r"`preds` of shape \(B, H, W\) or \(B, 1, H, W\)"
        ),
        raises(f"{key}-shape", lambda fn=fn: fn(P, G[:, :4]), ValueError, r"`preds` and `target` of the same shape"),
        raises(f"{key}-batch", lambda fn=fn: fn(P, G[:1]), ValueError, r"`preds` and `target` of the same shape"),
        raises(f"{key}-empty-batch", lambda fn=fn: fn(P[:0], G[:0]), ValueError, r"`preds` to hold at least one"),
        raises(f"{key}-zero-size", lambda fn=fn: fn(P[:, :0], G[:, :0]), ValueError, r"`preds` to have non-empty"),
        raises(
            f"{key}-nan",
            lambda fn=fn: fn(P.masked_fill(P > 0.9, float("nan")), G),
            ValueError,
            r"`preds` to contain only finite values",
        ),
        raises(f"{key}-above-1", lambda fn=fn: fn(P * 3, G), ValueError, r"`preds` to be probabilities in \[0, 1\]"),
        raises(f"{key}-target-values", lambda fn=fn: fn(P, G.long() * 2), ValueError, r"`target` to be binary"),
        raises(f"{key}-meta", lambda fn=fn: fn(meta(P), G), ValueError, r"`preds` to hold values.*'meta'"),
        raises(f"{key}-reduction", lambda fn=fn: fn(P, G, reduction="max"), ValueError, r"`reduction` to be one of"),
        raises(f"{key}-validate-args", lambda fn=fn: fn(P, G, validate_args="no"), TypeError, r"`validate_args`"),
        value(f"{key}-empty-gt", lambda fn=fn: fn(P, torch.zeros_like(G), reduction="none"), _finite),
        value(f"{key}-full-gt", lambda fn=fn: fn(P, torch.ones_like(G), reduction="none"), _finite),
        value(f"{key}-constant-zero-map", lambda fn=fn: fn(torch.zeros_like(P), G, reduction="none"), _finite),
        value(f"{key}-one-pixel", lambda fn=fn: fn(torch.ones(1, 1, 1), torch.ones(1, 1, 1)), _finite),
        value(f"{key}-4d", lambda fn=fn: fn(P[:, None], G[:, None]), close(lambda fn=fn: fn(P, G))),
        value(f"{key}-uint8-target", lambda fn=fn: fn(P, G.to(torch.uint8) * 255), close(lambda fn=fn: fn(P, G))),
        value(f"{key}-float16", lambda fn=fn: fn(P.half(), G).dtype, lambda out: out == torch.float16),
        value(
            f"{key}-non-contiguous",
            lambda fn=fn: fn(P.transpose(1, 2), G.transpose(1, 2)),
            close(lambda fn=fn: fn(P.transpose(1, 2).contiguous(), G.transpose(1, 2).contiguous())),
        ),
        # losses keep the graph: a finite gradient, and the value equals the detached input's
        value(f"{key}-requires-grad", lambda fn=fn: _grad_of(fn, P, G), _finite),
        value(
            f"{key}-requires-grad-value",
            lambda fn=fn: fn(P.clone().requires_grad_(), G).detach(),
            close(lambda fn=fn: fn(P, G)),
        ),
        # validate_args=False: no value check; out-of-range probabilities go through the formula, non-binary
        # targets read as `target != 0`
        value(
            f"{key}-target-unvalidated",
            lambda fn=fn: fn(P, G.double() * 0.7, validate_args=False),
            close(lambda fn=fn: fn(P, G)),
        ),
    ]
for key, fn in (("wf", weighted_f_measure_loss), ("f", soft_f_measure_loss)):
    CASES += [
        raises(f"{key}-beta2-zero", lambda fn=fn: fn(P, G, beta2=0), ValueError, r"`beta2` to be a finite positive"),
        raises(f"{key}-beta2-nan", lambda fn=fn: fn(P, G, beta2=float("nan")), ValueError, r"`beta2`"),
        raises(f"{key}-beta2-bool", lambda fn=fn: fn(P, G, beta2=True), ValueError, r"`beta2`"),
    ]
CASES += [
    raises("EMeasureLoss-reduction", lambda: EMeasureLoss(reduction=None), ValueError, r"`reduction`"),
    raises("SoftIoULoss-validate-args", lambda: SoftIoULoss(validate_args=1), TypeError, r"`validate_args` to be a"),
    raises("WeightedFMeasureLoss-beta2", lambda: WeightedFMeasureLoss(beta2=-1), ValueError, r"`beta2`"),
    raises("SoftFMeasureLoss-beta2", lambda: SoftFMeasureLoss(beta2=float("inf")), ValueError, r"`beta2`"),
    raises("EMeasureLoss-forward-shape", lambda: EMeasureLoss()(P, G[:1]), ValueError, r"`preds` and `target`"),
    value("SoftIoULoss-forward-grad", lambda: _grad_of(SoftIoULoss(), P, G), _finite),
]


@pytest.mark.parametrize("case", [c.param() for c in CASES])
def test_losses_bad_input(case):
    run_case(case)


def test_enough_cases():
    assert len({c.id for c in CASES}) == len(CASES) >= 30
