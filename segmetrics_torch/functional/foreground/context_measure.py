r"""Context measure (Wang et al. 2025, arXiv:2512.07076), PySODMetrics 1.6.2 ``ContextMeasure``.

With the prepared map ``p``, the GT ``g`` and a Gaussian kernel ``K`` shaped by the GT's pixel-coordinate covariance
``S`` (scaled to ``alpha^2 S / trace(S)``, half sizes ``round(3 alpha sigma_row / sqrt(trace S))`` and likewise for
columns; one GT pixel or none: ``S = diag(0.25, 0.25)``, half sizes 1; a zero variance is replaced by EPS):

* forward inference ``F = [p > 0] * (K * g)`` (correlation in **float32**, OpenCV ``filter2D(CV_32F)``, border
  ``REFLECT_101``), ``mF = sum(F p) / (sum(p) + EPS)``;
* reverse deduction ``R = e / (e - 1) * g * (1 - exp(-(K * p)))`` (float64 ``filter2D``), ``wR = sum(R g) /
  (sum(g) + EPS)``;
* ``CM = (1 + beta2) mF wR / (beta2 mF + wR + EPS)``.

The correlations are OpenCV's own calls, as in PySOD (its float32 forward term and its DFT path for large kernels
decide the last digits), so this is exact by construction; the device story: the kernels differ per image and the
filtering runs with OpenCV on the CPU (CUDA inputs are copied to the host), images spread over the torch threads.
``CamouflageContextMeasure`` (which needs the RGB image) is not implemented yet.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from ..._checks import check_positive_float
from ._extra_runner import run_raw
from ._prepare import prepare_maps

__all__ = ["context_measure"]

EPS = float(np.spacing(1))


def _kernel(g: np.ndarray, alpha: float) -> np.ndarray:
    points = np.argwhere(g)
    if len(points) <= 1:
        cov, x_dis, y_dis = np.diag([0.25, 0.25]), 1, 1
    else:
        cov = np.cov(points, rowvar=False)
        cov[0, 0] = cov[0, 0] if cov[0, 0] != 0 else EPS
        cov[1, 1] = cov[1, 1] if cov[1, 1] != 0 else EPS
        total = np.sqrt(cov[0, 0] + cov[1, 1])
        x_dis = round(3 * (alpha * np.sqrt(cov[0, 0]) / total))
        y_dis = round(3 * (alpha * np.sqrt(cov[1, 1]) / total))
        cov = alpha**2 * cov / total**2
    inv = np.linalg.inv(cov)
    x, y = np.meshgrid(np.arange(-x_dis, x_dis + 1), np.arange(-y_dis, y_dis + 1), indexing="ij")
    z = np.stack([x, y], axis=-1)
    kernel = np.exp(-0.5 * np.einsum("...i,ij,...j->...", z, inv, z)) / (2 * np.pi * np.sqrt(np.linalg.det(cov)))
    return kernel / np.sum(kernel)


def context_of_maps(p: np.ndarray, g: np.ndarray, beta2: float, alpha: float) -> float:
    """CM of one prepared map (float64) and bool GT (numpy, CPU, OpenCV)."""
    import cv2

    gf = g.astype(np.float64)
    kernel = _kernel(g, alpha)
    forward = (p > 0).astype(int) * cv2.filter2D(gf.astype(np.float32), cv2.CV_32F, kernel)
    m_forward = np.sum(forward * p) / (np.sum(p) + EPS)
    completeness = 1 - np.exp(-1 * cv2.filter2D(p, -1, kernel))
    reverse = (math.e / (math.e - 1)) * gf * completeness
    w_reverse = np.sum(reverse * gf) / (np.sum(gf) + EPS)
    return float((1 + beta2) * m_forward * w_reverse / (beta2 * m_forward + w_reverse + EPS))


def context_measure(
    preds: Tensor | list[Tensor],
    target: Tensor | list[Tensor],
    *,
    beta2: float = 1.0,
    alpha: float = 6.0,
    normalize: bool = True,
    validate_args: bool = True,
) -> Tensor:
    r"""Per-image context measure (module doc), PySODMetrics 1.6.2 ``ContextMeasure`` (to 1e-6).

    Args:
        preds, target: as :func:`segmetrics_torch.functional.f_measure`.
        beta2: weight of forward inference vs reverse deduction (1.0).
        alpha: scale of the Gaussian context kernel (6.0).
        normalize, validate_args: as :func:`segmetrics_torch.functional.f_measure`.

    Returns:
        (B,) float64 on the input's device. Empty GT: 0 (``wR = 0``).

    Example:
        >>> import torch
        >>> target = torch.zeros(1, 32, 32, dtype=torch.uint8); target[:, 8:24, 8:24] = 255
        >>> round(float(context_measure(target.clone(), target)[0]), 4)
        0.6713
    """
    beta2 = check_positive_float(beta2, "beta2")
    alpha = check_positive_float(alpha, "alpha")

    def fn(preds_b: Tensor, target_b: Tensor) -> dict[str, Tensor]:
        p, g = prepare_maps(preds_b.cpu(), target_b.cpu(), normalize)
        pn, gn = p.numpy(), g.numpy()
        workers = max(1, min(torch.get_num_threads(), pn.shape[0]))
        if workers == 1:
            values = [context_of_maps(pn[i], gn[i], beta2, alpha) for i in range(pn.shape[0])]
        else:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(workers) as pool:
                values = list(pool.map(lambda i: context_of_maps(pn[i], gn[i], beta2, alpha), range(pn.shape[0])))
        return {"cm": torch.tensor(values, dtype=torch.float64, device=preds_b.device)}

    return run_raw(fn, preds, target, normalize=normalize, validate_args=validate_args)["cm"]
