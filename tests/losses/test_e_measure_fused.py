"""The E-measure loss's fused forward and hand-written backward against the plain formula recorded by autograd:
the same values to the bit (every rounding in the same order), gradients to rounding, and torch.autograd.gradcheck in
float64, on random maps and on the special images (empty and full ground truth, one pixel, one row)."""

from __future__ import annotations

import pytest
import torch

from segmetrics_torch._constants import EPS
from segmetrics_torch.losses import e_measure_loss


def _plain(p: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    """Fan's enhanced alignment of a soft map as the module docstring writes it, per image, with autograd."""
    n = p.shape[-1] * p.shape[-2]
    gf = g.to(p.dtype)
    a = p - p.mean(dim=(1, 2), keepdim=True)
    c = gf - gf.mean(dim=(1, 2), keepdim=True)
    xi = (2 * a * c) / (a * a + c * c + EPS)
    total = ((1 + xi) * (1 + xi)).sum(dim=(1, 2)) / 4
    pos, pp = gf.sum(dim=(1, 2)), p.sum(dim=(1, 2))
    total = torch.where(pos == 0, n - pp, torch.where(pos == n, pp, total))
    return 1 - total / (n - 1 + EPS if n > 1 else n)


def _inputs(shape: tuple[int, ...], dtype: torch.dtype, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    p = torch.rand(shape, generator=gen, dtype=torch.float64).to(dtype)
    g = torch.rand(shape, generator=gen) < 0.35
    g[0] = False  # empty ground truth
    if shape[0] > 1:
        g[1] = True  # full ground truth
    return p, g


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(4, 37, 53), (3, 1, 1), (3, 1, 29), (3, 17, 1), (6, 64, 64)])
def test_values_equal_the_plain_formula_and_gradients_agree(dtype: torch.dtype, shape: tuple[int, ...]) -> None:
    p, g = _inputs(shape, dtype, seed=sum(shape))
    ours_x = p.clone().requires_grad_(True)
    plain_x = p.clone().requires_grad_(True)
    ours = e_measure_loss(ours_x, g, reduction="none")
    plain = _plain(plain_x, g)
    assert torch.equal(ours, plain)  # every rounding in the same order: the same bits
    upstream = torch.linspace(0.5, 2.0, shape[0], dtype=dtype)
    (ours * upstream).sum().backward()
    (plain * upstream).sum().backward()
    assert ours_x.grad is not None and plain_x.grad is not None
    tol = 1e-12 if dtype == torch.float64 else 2e-5
    torch.testing.assert_close(ours_x.grad, plain_x.grad, rtol=tol, atol=tol)


@pytest.mark.parametrize("shape", [(3, 5, 6), (2, 1, 7), (2, 1, 1), (3, 4, 4)])
def test_gradcheck_float64(shape: tuple[int, ...]) -> None:
    p, g = _inputs(shape, torch.float64, seed=7 * sum(shape))
    p = p.clamp(0.05, 0.95).requires_grad_(True)
    assert torch.autograd.gradcheck(lambda x: e_measure_loss(x, g, reduction="none"), (p,), eps=1e-6, atol=1e-7)


def test_a_soft_prediction_of_the_empty_and_full_images_has_the_constant_slope() -> None:
    # empty GT: the loss is 1 - (N - sum p) / (N - 1), so d/dp = 1 / (N - 1); full GT: -1 / (N - 1)
    p, g = _inputs((2, 6, 7), torch.float64, seed=3)
    x = p.requires_grad_(True)
    e_measure_loss(x, g, reduction="sum").backward()
    assert x.grad is not None
    n = 42
    torch.testing.assert_close(x.grad[0], torch.full((6, 7), 1 / (n - 1 + EPS), dtype=torch.float64))
    torch.testing.assert_close(x.grad[1], torch.full((6, 7), -1 / (n - 1 + EPS), dtype=torch.float64))
