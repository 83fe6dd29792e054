r"""Weighted F-beta measure of foreground maps (Margolin, Zelnik-Manor & Tal, CVPR 2014), batched.

Pipeline of the authors' MATLAB ``WFb.m``, which PySODMetrics 1.6.2 ``WeightedFmeasure`` mirrors line by line:

1. ``D, I = bwdist(G)``: exact Euclidean distance to, and index of, the nearest ground-truth pixel
   (:func:`segmetrics_torch.ops.distance.distance_transform_edt`, scipy's tie rule: smallest column, then row).
2. Pixel dependency: ``E = |p - g|``; background pixels take the error of their nearest ground-truth pixel,
   ``Et = E[I]``; ``EA = imfilter(Et, fspecial('gaussian', 7, 5))`` with zero padding; on the ground truth
   ``min(E, EA)``.
3. Pixel importance: ``B = 2 - 0.5^(D / 5)`` off the ground truth, 1 on it; ``Ew = min(E, EA) * B``.
4. ``TPw = |G| - sum_G Ew``, ``FPw = sum_~G Ew``, ``R = 1 - mean_G(Ew)``, ``P = TPw / (TPw + FPw + eps)``,

.. math:: F^w_\beta = \frac{(1 + \beta^2) R P}{R + \beta^2 P + \epsilon}, \quad \beta^2 = 1.

Edge cases: all-zero ground truth gives 0 (PySODMetrics' guard; the MATLAB code would index with 0 and fail);
all-one ground truth is not special-cased. The kernel is MATLAB's, the border zero: kornia's ``gaussian_blur2d``
default (reflect) border changes results by up to 0.4 near image borders.
"""

from __future__ import annotations

from torch import Tensor

from ..._checks import ImageBatch, check_positive_float
from ._intermediates import EdtBackend, ForegroundIntermediates, MeasureOptions, check_edt_backend, run_per_image
from .matlab_toolbox import check_foreground_protocol, toolbox_foreground_values

__all__ = ["weighted_f_measure"]


def weighted_f_measure(
    preds: ImageBatch,
    target: ImageBatch,
    *,
    beta2: float = 1.0,
    edt_backend: EdtBackend = "auto",
    normalize: bool = True,
    validate_args: bool = True,
    protocol: str = "pysodmetrics",
) -> Tensor:
    """Per-image weighted F-beta measure (see the module docstring for the pipeline and edge cases).

    Reference: Margolin et al. CVPR 2014, MATLAB ``WFb.m``; PySODMetrics 1.6.2 ``WeightedFmeasure`` (to 1e-6; its
    ``beta`` argument is our ``beta2``).

    Args:
        preds: (B, H, W) or (B, 1, H, W) maps (uint8 0..255, or float in [0, 1]), or a list of (H, W) maps.
        target: ground truth of the same shape (uint8 binarised ``> 128``, bool, or {0, 1}).
        beta2: :math:`\\beta^2` (1 in the paper's experiments).
        edt_backend: distance-transform backend, ``"auto"`` (compiled CPU kernel for CPU tensors, torch otherwise),
            ``"torch"`` or ``"numba"``; all give identical results.
        normalize: per-image min-max stretch of ``preds`` as PySODMetrics (constant maps are left alone).
        validate_args: check values (NaN, range, binary target); these checks synchronise a CUDA device.
        protocol: ``"pysodmetrics"`` (PySODMetrics 1.6.2, the default) or a MATLAB-toolbox protocol,
            ``"matlab-toolbox"`` or ``"matlab-toolbox-2020-11"`` (the toolbox's map, thresholds and zero rules:
            :mod:`.matlab_toolbox`, ``docs/matlab-toolbox.md``); ``normalize`` must then be ``True``.

    Returns:
        (B,) float64 tensor.

    Example:
        >>> import torch
        >>> target = torch.zeros(1, 9, 9, dtype=torch.uint8); target[:, 3:6, 3:6] = 255
        >>> float(weighted_f_measure(target.clone(), target)[0])
        1.0
    """
    beta2 = check_positive_float(beta2, "beta2")
    check_edt_backend(edt_backend)
    if check_foreground_protocol(protocol, beta2=(beta2, 1.0)) != "pysodmetrics":
        v = toolbox_foreground_values(
            preds,
            target,
            protocol=protocol,
            weighted_f=True,
            edt_backend=edt_backend,
            normalize=normalize,
            validate_args=validate_args,
        )
        return v["weighted_f_measure"]
    options = MeasureOptions(weighted_f=True, wf_beta2=beta2, edt_backend=edt_backend, counts=False)

    def fn(values: ForegroundIntermediates) -> dict[str, Tensor]:
        assert values.weighted_f_measure is not None
        return {"weighted_f_measure": values.weighted_f_measure}

    return run_per_image(fn, preds, target, normalize=normalize, validate_args=validate_args, options=options)[
        "weighted_f_measure"
    ]
