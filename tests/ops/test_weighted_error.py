"""The weighted-F loss's two paths (compiled CPU kernels, tensor code) agree with each other, with the metric and with
scipy's EDT, on random masks, empty and full ground truths, images narrower than the Gaussian, boxes at the border
and an image too long for the importance table."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import ndimage

from segmetrics_torch._constants import LOG_HALF_OVER_5
from segmetrics_torch.functional import weighted_f_measure
from segmetrics_torch.losses import weighted_f_measure_loss
from segmetrics_torch.ops import use_backend, weighted_error as we

pytest.importorskip("numba")


def _cases() -> list[tuple[str, torch.Tensor]]:
    gen = torch.Generator().manual_seed(0)
    cases = []
    for h, w in [(1, 1), (1, 9), (9, 1), (3, 5), (6, 6), (7, 7), (17, 23), (40, 31)]:
        g = torch.rand(3, h, w, generator=gen) < 0.3
        g[0] = False  # an empty ground truth
        cases.append((f"random-{h}x{w}", g))
    full = torch.zeros(2, 12, 14, dtype=torch.bool)
    full[0] = True
    full[1, :, :2] = True  # a box on the left border
    cases.append(("full-and-border", full))
    corner = torch.zeros(2, 20, 20, dtype=torch.bool)
    corner[0, 17:, 18:] = True  # the bottom-right corner: the Gaussian leaves the image
    corner[1, 0, 0] = True  # one pixel
    cases.append(("corners", corner))
    ties = torch.zeros(1, 15, 15, dtype=torch.bool)
    ties[0, ::4, ::4] = True  # a lattice: many equidistant nearest pixels
    cases.append(("ties", ties))
    return cases


CASES = _cases()


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize(("name", "g"), CASES, ids=[c[0] for c in CASES])
def test_kernels_equal_the_tensor_path(name: str, g: torch.Tensor, dtype: torch.dtype) -> None:
    gen = torch.Generator().manual_seed(len(name))
    p = torch.rand(g.shape, generator=gen, dtype=dtype)
    imp_k, idx_k, size_k = we.ground_truth_terms(g, dtype, path="numba")
    imp_t, idx_t, size_t = we.ground_truth_terms(g, dtype, path="torch")
    assert torch.equal(idx_k.long(), idx_t) and torch.equal(size_k, size_t)
    tol = 1e-14 if dtype == torch.float64 else 1e-6
    torch.testing.assert_close(imp_k, imp_t, rtol=0, atol=tol)
    fg_k, bg_k, won_k = we.weighted_error_sums(p, g, idx_k, imp_k, path="numba")
    fg_t, bg_t, won_t = we.weighted_error_sums(p, g, idx_t, imp_t, path="torch")
    assert torch.equal(won_k.to(dtype), won_t)
    sum_tol = 1e-12 if dtype == torch.float64 else 1e-4
    torch.testing.assert_close(fg_k, fg_t, rtol=0, atol=sum_tol)
    torch.testing.assert_close(bg_k, bg_t, rtol=0, atol=sum_tol)
    d_fg, d_bg = torch.rand(g.shape[0], generator=gen, dtype=dtype), torch.rand(g.shape[0], generator=gen, dtype=dtype)
    grad_k = we.weighted_error_grad(won_k, g, idx_k, imp_k, d_fg, d_bg, path="numba")
    grad_t = we.weighted_error_grad(won_t, g, idx_t, imp_t, d_fg, d_bg, path="torch")
    assert grad_k.dtype == dtype
    torch.testing.assert_close(grad_k, grad_t, rtol=0, atol=tol * 10)


@pytest.mark.parametrize(("name", "g"), CASES, ids=[c[0] for c in CASES])
def test_ground_truth_terms_match_scipy(name: str, g: torch.Tensor) -> None:
    importance, index, size = we.ground_truth_terms(g, torch.float64, path="numba")
    for b in range(g.shape[0]):
        mask = g[b].numpy()
        assert int(size[b]) == int(mask.sum())
        if not mask.any():
            assert torch.all(index[b] == 0) and torch.all(importance[b] == 2)
            continue
        dist, (iy, ix) = ndimage.distance_transform_edt(~mask, return_indices=True)
        expected = np.where(mask, 0.0, 2 - np.exp(LOG_HALF_OVER_5 * dist))
        np.testing.assert_array_equal(index[b].numpy(), (iy * mask.shape[1] + ix).ravel())
        np.testing.assert_allclose(importance[b].numpy(), expected, rtol=0, atol=1e-15)


def test_an_image_too_long_for_the_importance_table() -> None:
    """(H - 1)^2 + (W - 1)^2 above the table's limit: the importance is evaluated per pixel, with the same values."""
    g = torch.zeros(1, 1, 2200, dtype=torch.bool)
    g[0, 0, [3, 1500]] = True
    imp_k, idx_k, _ = we.ground_truth_terms(g, torch.float64, path="numba")
    imp_t, idx_t, _ = we.ground_truth_terms(g, torch.float64, path="torch")
    assert torch.equal(idx_k.long(), idx_t)
    torch.testing.assert_close(imp_k, imp_t, rtol=0, atol=1e-15)


@pytest.mark.parametrize("backend", ["auto", "tensor"])
def test_the_loss_on_either_path(backend: str) -> None:
    """Gradcheck and the metric's value (a soft map: the metric's formula) on the kernels and on the tensor path."""
    with use_backend(backend):
        _the_loss_and_the_metric()


def _the_loss_and_the_metric() -> None:
    gen = torch.Generator().manual_seed(2)
    g = torch.rand(3, 9, 12, generator=gen) > 0.6
    g[:, 2:5, 3:8] = True
    g[1] = False
    p = (0.05 + 0.9 * torch.rand(3, 9, 12, generator=gen, dtype=torch.float64)).requires_grad_()
    loss = lambda x: weighted_f_measure_loss(x, g, reduction="none")  # noqa: E731
    assert torch.autograd.gradcheck(loss, (p,), eps=1e-6, atol=1e-5)
    expected = 1 - weighted_f_measure(p.detach(), g, normalize=False)
    torch.testing.assert_close(weighted_f_measure_loss(p, g, reduction="none").detach(), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize(("forward", "backward"), [("auto", "tensor"), ("tensor", "auto")])
def test_the_backward_pass_takes_its_forward_passs_path(forward: str, backward: str) -> None:
    """The kernels' int32 index and uint8 ``won`` go back to the kernels even if the backend setting changed between
    ``forward`` and ``backward`` (a benchmark wrapper restoring it did exactly that)."""
    gen = torch.Generator().manual_seed(5)
    g = torch.rand(2, 30, 40, generator=gen) > 0.7
    p = torch.rand(2, 30, 40, generator=gen, dtype=torch.float64).requires_grad_()
    with use_backend(forward):
        (expected,) = torch.autograd.grad(weighted_f_measure_loss(p, g), p)
        loss = weighted_f_measure_loss(p, g)
    with use_backend(backward):
        (grad,) = torch.autograd.grad(loss, p)
    torch.testing.assert_close(grad, expected, rtol=0, atol=0)
