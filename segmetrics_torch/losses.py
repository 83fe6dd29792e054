r"""Differentiable losses from the foreground measures: ``1 - measure`` of a soft prediction, no thresholds.

Each loss evaluates its measure's formula on the probability map ``p`` itself (Fan et al. 2018 suggest the E-measure
as a training loss), so on a binary ``p`` it equals ``1 -`` the metric's per-image value:

* :func:`e_measure_loss`: ``a = p - mean(p)``, ``c = g - mean(g)``, ``xi = 2ac / (a^2 + c^2 + eps)``,
  ``E = sum((1 + xi)^2 / 4) / (N - 1 + eps)``; all-zero GT: ``sum(1 - p)``, all-one GT: ``sum(p)`` in place of the sum
  (Fan's ``Enhancedmeasure.m``, as :func:`segmetrics_torch.functional.e_measure`). The ``N - 1`` normalisation makes
  a perfect prediction score ``N / (N - 1)``, so the loss reaches ``-1 / (N - 1)``, not 0; it stays in
  ``[-1, 1]``. A one-pixel image (``N - 1 = 0``, where the metric divides by ``eps`` and PySODMetrics returns
  ~4.5e15) is normalised by ``N``: its loss is ``|p - g|``.
* :func:`weighted_f_measure_loss`: Margolin et al.'s weighted F with the error ``E = |p - g|`` of the soft map;
  the distance transform, its nearest-pixel indices and the importance ``B`` depend on the GT only and are computed
  without gradient by the metric's exact ops; the Gaussian dependency term and ``min(E, EA)`` are differentiated.
  Empty GT: the metric's value is 0, the loss is 1 with zero gradient.
* :func:`soft_f_measure_loss`: ``TP = sum p g``, ``P = TP / sum p``, ``R = TP / sum g``,
  ``F = (1 + beta^2) P R / (beta^2 P + R)`` (0 when ``TP = 0``), beta^2 = 0.3 as the SOD F-measure.
* :func:`soft_iou_loss`: ``IoU = TP / (sum p + sum g - TP)``, 0 when the union is empty, as the metric.
* :func:`soft_cl_dice_loss` (:class:`SoftClDiceLoss`): ``1 -`` the soft clDice of tubular structures (Shit et al.,
  CVPR 2021), MONAI 1.6's ``SoftclDiceLoss`` to the bit; channel-first inputs as MONAI's, (B, C, H, W) or
  (B, C, D, H, W) (defined in :mod:`segmetrics_torch.functional.surface.cldice`, beside the measure).

Parity caveat: the metrics binarise at the adaptive threshold ``min(2 mean(p), 1)``, which keeps a binary map as it
is except an all-zero one (threshold 0 turns it all on); the losses use ``p`` as given.

Inputs: ``preds`` (B, H, W) or (B, 1, H, W) probabilities in [0, 1] (apply the sigmoid first; no min-max stretch);
``target`` of the same shape, bool / {0, 1} / uint8 (binarised ``> 128``). Precision: the loss is computed in
float32 for half-precision inputs (float16 / bfloat16, e.g. under autocast, as torch's own losses do) and returned
in that dtype; float32 and float64 inputs stay in their dtype. ``reduction``: ``"mean"`` (default), ``"sum"`` or
``"none"`` (per image, (B,)).

Gradients flow through these functions and the ``nn.Module`` forms; a Metric's ``update`` / ``compute`` never carry
gradients (they accumulate detached statistics): train with a loss, log with a Metric.
"""

from __future__ import annotations

import math
from typing import Any, Literal, get_args

import torch
from torch import Tensor, nn
from torch.autograd.function import once_differentiable

from ._checks import check_bool, check_choice, check_image_stack, check_positive_float, check_tensor, check_uint8_target
from ._constants import EPS
from .functional.surface.cldice import SoftReduction, soft_cl_dice_loss
from .ops.weighted_error import ground_truth_terms, resolve_path, weighted_error_grad, weighted_error_sums

__all__ = [
    "EMeasureLoss",
    "SoftClDiceLoss",
    "SoftFMeasureLoss",
    "SoftIoULoss",
    "WeightedFMeasureLoss",
    "e_measure_loss",
    "soft_cl_dice_loss",
    "soft_f_measure_loss",
    "soft_iou_loss",
    "weighted_f_measure_loss",
]

#: how per-image losses are reduced: their mean, their sum, or none (a (B,) tensor)
Reduction = Literal["mean", "sum", "none"]


def _prepare(preds: Tensor, target: Tensor, validate_args: bool) -> tuple[Tensor, Tensor, torch.dtype]:
    check_tensor(preds, "preds")  # the losses keep the graph: `preds` itself is used, not the detached copy
    target = check_tensor(target, "target")
    check_bool(validate_args, "validate_args")
    if not preds.is_floating_point():
        raise TypeError(f"Expected `preds` to be a floating tensor of probabilities, but got dtype {preds.dtype}.")
    if target.is_complex():
        raise TypeError(f"Expected `target` to be bool, uint8 or a {{0, 1}} tensor, but got dtype {target.dtype}.")
    given = tuple(preds.shape), tuple(target.shape)  # named in the error as the caller passed them
    preds = check_image_stack(preds, "preds")
    if target.ndim == 4 and target.shape[1] == 1:
        target = target[:, 0]
    if preds.shape != target.shape:
        raise ValueError(f"Expected `preds` and `target` of the same shape, but got {given[0]} and {given[1]}.")
    checks: list[Tensor] = []  # extrema read back together: one synchronisation for all the value checks
    if target.dtype == torch.uint8:
        if validate_args:
            check_uint8_target(target, "target")
        g = target > 128
    elif target.dtype == torch.bool:
        g = target
    else:
        # `bool()` is "nonzero" (NaN included) and a vectorised cast: 10x faster than `target != 0` on the CPU
        g = target.bool()
        if validate_args:
            with torch.no_grad():
                # binary iff in [0, 1] and, for floats, equal to its ceiling there (NaN fails both): three reductions
                # and no bool mask compared (`torch.equal(g, target == 1)` cost 2 ms for 16 x 352 x 352 on 2 cores)
                checks += torch.aminmax(target.detach())
                if target.is_floating_point():
                    checks.append(torch.ceil(target.detach()).sub_(target.detach()).amax())
    if validate_args:
        with torch.no_grad():
            # NaN propagates into the extrema, +-inf lies outside [0, 1]
            checks = [*torch.aminmax(preds.detach()), *checks]
            low, high, *rest = torch.stack([c.double() for c in checks]).tolist()
            if not (math.isfinite(low) and math.isfinite(high)):
                raise ValueError("Expected `preds` to contain only finite values, but it contains NaN or inf.")
            if low < 0 or high > 1:
                raise ValueError("Expected `preds` to be probabilities in [0, 1]; apply a sigmoid first.")
            if rest and not (rest[0] >= 0 and rest[1] <= 1 and (len(rest) == 2 or rest[2] == 0)):
                if any(math.isnan(v) for v in rest):
                    found = "NaN"
                elif rest[0] < 0 or rest[1] > 1:
                    found = f"values in [{rest[0]:g}, {rest[1]:g}]"
                else:
                    found = "values strictly between 0 and 1"
                raise ValueError(
                    f"Expected `target` to be binary (bool, {{0, 1}}, or uint8 binarised > 128), but it holds {found}."
                )
    out_dtype = preds.dtype
    work = torch.promote_types(preds.dtype, torch.float32)
    return preds.to(work), g, out_dtype


def _reduce(values: Tensor, reduction: Reduction, dtype: torch.dtype) -> Tensor:
    if reduction == "mean":
        values = values.mean()
    elif reduction == "sum":
        values = values.sum()
    return values.to(dtype)


def _check_reduction(reduction: object) -> None:
    check_choice(reduction, "reduction", get_args(Reduction))


def e_measure_loss(
    preds: Tensor, target: Tensor, *, reduction: Reduction = "mean", validate_args: bool = True
) -> Tensor:
    """``1 - E`` of the soft map (see the module doc); (B,) with ``reduction="none"``.

    Args:
        preds: (B, H, W) or (B, 1, H, W) probabilities in [0, 1], float16 / bfloat16 / float32 / float64 (apply
            ``torch.sigmoid`` to logits first; no min-max stretch). Gradients flow to it.
        target: the same shape, bool, {0, 1} floats or uint8 (binarised ``> 128``); no gradient.
        reduction: ``"mean"`` (default) or ``"sum"`` over the images, or ``"none"`` for the (B,) per-image losses.
        validate_args: check shapes, dtypes and values (one pass and one synchronisation); ``False`` for a
            sync-free training step.

    Returns:
        A 0-d tensor (``"mean"`` / ``"sum"``) or a (B,) tensor (``"none"``) in ``preds``' dtype (computed in
        float32 at least).

    Example:
        >>> import torch
        >>> from segmetrics_torch.losses import e_measure_loss
        >>> target = torch.zeros(2, 16, 16)
        >>> target[:, 4:12, 4:12] = 1
        >>> logits = torch.zeros(2, 16, 16, requires_grad=True)
        >>> loss = e_measure_loss(torch.sigmoid(logits), target)
        >>> loss.backward()
        >>> round(loss.item(), 4), logits.grad.shape
        (0.749, torch.Size([2, 16, 16]))
    """
    _check_reduction(reduction)
    p, g, dtype = _prepare(preds, target, validate_args)
    n = p.shape[-1] * p.shape[-2]
    with torch.no_grad():  # the ground truth's part, once per batch: 2c = 2 g - 2 mean(g) and c^2, three passes
        pos = g.sum(dim=(1, 2), dtype=p.dtype)
        # 2 c in one promoting add (doubling commutes with rounding: exactly twice the c of g - mean(g)); the counts
        # are exact, so -2 pos / n (n / 2 is exact) is -2 mean(g) to the bit
        two_c = torch.add(pos.div(-0.5 * n).view(-1, 1, 1), g, alpha=2)
        c2 = (two_c * two_c).mul_(0.25)  # (2c)^2 / 4 = c^2, exactly
    return _reduce(_EMeasureLoss.apply(p, pos, two_c, c2), reduction, dtype)


class _EMeasureLoss(torch.autograd.Function):
    """Per image ``1 - E``: ``E = sum((1 + xi)^2) / 4 / (N - 1 + eps)`` with ``xi = 2 a c / (a^2 + c^2 + eps)``,
    ``a = p - mean(p)``, ``c`` the centred ground truth (no gradient; ``sum(1 - p)`` / ``sum(p)`` in place of the sum
    for an empty / full ground truth), forward and backward each one chain of tensor operations without autograd's
    graph.

    ``d sum / d p_j = f'(a_j) - mean(f'(a))`` (``a`` depends on ``p_j`` directly and through the mean), where
    ``f'(a) = (1 + xi) c (c^2 + eps - a^2) / den^2`` and ``den = a^2 + c^2 + eps``; an empty / full ground truth has
    ``c = 0``, so its slope is 0 and its gradient the constant ``-/+ 1 / (N - 1 + eps)``. The forward evaluates the
    unfused formula's operations in its order (``2 a c`` as ``a (2 c)`` and ``/ 4`` are exact), the backward those
    autograd recorded for the unfused Function and the selections around it (doubling the slope and halving its
    factor are exact): the values and the gradients are the unfused ones to the bit. First-order only.
    """

    @staticmethod
    def forward(ctx: Any, p: Tensor, pos: Tensor, two_c: Tensor, c2: Tensor) -> Tensor:
        n = p.shape[-1] * p.shape[-2]
        # N - 1 = 0 for a one-pixel image: the metric's value (total / eps, ~4.5e15) means nothing there, and no loss
        # may be unbounded; that one case is normalised by N, so the loss is |p - g| in [0, 1]
        norm = n - 1 + EPS if n > 1 else n
        pp = p.sum(dim=(1, 2))
        # mean(p) as sum / N (torch's CPU mean, to the bit) from the sum the empty / full case needs anyway
        a = p - (pp / n).view(-1, 1, 1)
        den = (a * a).add_(c2).add_(EPS)
        one_plus_xi = (a * two_c).div_(den).add_(1)
        total = (one_plus_xi * one_plus_xi).sum(dim=(1, 2)) / 4
        empty, full = pos == 0, pos == n
        total = torch.where(empty, n - pp, torch.where(full, pp, total))
        # the sign of the constant gradient of sum(p) (empty GT: d (N - sum p) / dp = -1; full: +1; otherwise none)
        sign = torch.where(empty, -1.0, full.to(p.dtype))
        ctx.save_for_backward(two_c, c2, den, one_plus_xi, sign)
        ctx.norm = norm
        return 1 - total / norm

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, d_loss: Tensor) -> tuple[Tensor | None, ...]:
        two_c, c2, den, one_plus_xi, sign = ctx.saved_tensors
        d_total = d_loss.neg() / ctx.norm  # of 1 - total / norm
        # c^2 + eps - a^2 = 2 (c^2 + eps) - den; times 2 c instead of c (twice the slope, exactly: doubling commutes
        # with every rounding here, the mean included), undone by the halved factor. An empty / full ground truth has
        # c = 0: its slope is 0 whatever the factor (the unfused Function got a factor 0 there: the same zeros)
        slope = c2.add(EPS).mul_(2).sub_(den).mul_(two_c).mul_(one_plus_xi).div_(den).div_(den)
        slope.sub_(slope.mean(dim=(1, 2), keepdim=True)).mul_((d_total * 0.5).view(-1, 1, 1))
        return slope.add_((d_total * sign).view(-1, 1, 1)), None, None, None


def weighted_f_measure_loss(
    preds: Tensor, target: Tensor, *, beta2: float = 1.0, reduction: Reduction = "mean", validate_args: bool = True
) -> Tensor:
    """``1 - F^w_beta`` of the soft map (Margolin et al. CVPR 2014; see the module doc).

    Args:
        preds: (B, H, W) or (B, 1, H, W) probabilities in [0, 1], float16 / bfloat16 / float32 / float64 (apply
            ``torch.sigmoid`` to logits first; no min-max stretch). Gradients flow to it.
        target: the same shape, bool, {0, 1} floats or uint8 (binarised ``> 128``); no gradient.
        beta2: ``beta^2`` of the weighted F (1, as Margolin et al. and PySODMetrics). An image whose target is
            empty has the metric's value 0 there: its loss is 1 with a zero gradient.
        reduction: ``"mean"`` (default) or ``"sum"`` over the images, or ``"none"`` for the (B,) per-image losses.
        validate_args: check shapes, dtypes and values (one pass and one synchronisation); ``False`` for a
            sync-free training step.

    Returns:
        A 0-d tensor (``"mean"`` / ``"sum"``) or a (B,) tensor (``"none"``) in ``preds``' dtype (computed in
        float32 at least).

    Example:
        >>> import torch
        >>> from segmetrics_torch.losses import weighted_f_measure_loss
        >>> target = torch.zeros(2, 16, 16)
        >>> target[:, 4:12, 4:12] = 1
        >>> preds = torch.full((2, 16, 16), 0.5, requires_grad=True)
        >>> loss = weighted_f_measure_loss(preds, target, reduction="none")
        >>> [round(v, 4) for v in loss.tolist()]
        [0.7128, 0.7128]
    """
    _check_reduction(reduction)
    beta2 = check_positive_float(beta2, "beta2")
    p, g, dtype = _prepare(preds, target, validate_args)
    path = resolve_path("auto", p.device)
    with torch.no_grad():  # everything that depends on the ground truth only: once per batch, no graph
        # on the tensor path the EDT's "auto" asks ops.backend as well (the setting that chose `path`)
        importance_bg, index, pos = ground_truth_terms(g, p.dtype, path="numba" if path == "numba" else "auto")
    ew_fg, fpw = _WeightedErrorSums.apply(p, g, index, importance_bg, path)
    tpw = pos - ew_fg
    recall = 1 - ew_fg / pos.clamp_min(1)
    precision = tpw / (tpw + fpw + EPS)
    q = (1 + beta2) * recall * precision / (recall + beta2 * precision + EPS)
    return _reduce(1 - torch.where(pos == 0, torch.zeros_like(q), q), reduction, dtype)


class _WeightedErrorSums(torch.autograd.Function):
    """The two sums of Margolin's weighted error map ``E^w`` of a soft map, per image, with a hand-written backward
    (:mod:`segmetrics_torch.ops.weighted_error` has the formulas and both paths: compiled kernels for CPU tensors,
    tensor code elsewhere).

    Autograd of the same expression recorded about thirty full-size tensors; the adjoint is one sweep per image on
    the CPU, four tensor passes elsewhere. First-order only (``once_differentiable``); gradcheck in float64 in the
    tests.
    """

    @staticmethod
    def forward(
        ctx: Any, p: Tensor, g: Tensor, index: Tensor, importance_bg: Tensor, path: Literal["numba", "torch"]
    ) -> tuple[Tensor, Tensor]:
        ew_fg, fpw, won = weighted_error_sums(p, g, index, importance_bg, path=path)
        ctx.save_for_backward(won, g, index, importance_bg)
        ctx.path = path
        return ew_fg, fpw

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, d_fg: Tensor, d_bg: Tensor) -> tuple[Tensor | None, ...]:
        won, g, index, importance_bg = ctx.saved_tensors
        grad = weighted_error_grad(won, g, index, importance_bg, d_fg, d_bg, path=ctx.path)
        return grad, None, None, None, None


def soft_f_measure_loss(
    preds: Tensor, target: Tensor, *, beta2: float = 0.3, reduction: Reduction = "mean", validate_args: bool = True
) -> Tensor:
    """``1 - F_beta`` of soft counts (see the module doc).

    Args:
        preds: (B, H, W) or (B, 1, H, W) probabilities in [0, 1], float16 / bfloat16 / float32 / float64 (apply
            ``torch.sigmoid`` to logits first; no min-max stretch). Gradients flow to it.
        target: the same shape, bool, {0, 1} floats or uint8 (binarised ``> 128``); no gradient.
        beta2: ``beta^2`` (0.3, as the SOD F-measure).
        reduction: ``"mean"`` (default) or ``"sum"`` over the images, or ``"none"`` for the (B,) per-image losses.
        validate_args: check shapes, dtypes and values (one pass and one synchronisation); ``False`` for a
            sync-free training step.

    Returns:
        A 0-d tensor (``"mean"`` / ``"sum"``) or a (B,) tensor (``"none"``) in ``preds``' dtype (computed in
        float32 at least).

    Example:
        >>> import torch
        >>> from segmetrics_torch.losses import soft_f_measure_loss
        >>> target = torch.zeros(2, 16, 16)
        >>> target[:, 4:12, 4:12] = 1
        >>> preds = torch.full((2, 16, 16), 0.5, requires_grad=True)
        >>> round(soft_f_measure_loss(preds, target).item(), 4)
        0.7174
    """
    _check_reduction(reduction)
    beta2 = check_positive_float(beta2, "beta2")
    p, g, dtype = _prepare(preds, target, validate_args)
    gf = g.to(p.dtype)
    tp = (p * gf).sum(dim=(1, 2))
    precision = tp / p.sum(dim=(1, 2)).clamp_min(torch.finfo(p.dtype).tiny)
    recall = tp / gf.sum(dim=(1, 2)).clamp_min(1)
    den = (beta2 * precision + recall).clamp_min(torch.finfo(p.dtype).tiny)
    f = torch.where(tp > 0, (1 + beta2) * precision * recall / den, torch.zeros_like(tp))
    return _reduce(1 - f, reduction, dtype)


def soft_iou_loss(
    preds: Tensor, target: Tensor, *, reduction: Reduction = "mean", validate_args: bool = True
) -> Tensor:
    """``1 - IoU`` of soft counts (see the module doc).

    Args:
        preds: (B, H, W) or (B, 1, H, W) probabilities in [0, 1], float16 / bfloat16 / float32 / float64 (apply
            ``torch.sigmoid`` to logits first; no min-max stretch). Gradients flow to it.
        target: the same shape, bool, {0, 1} floats or uint8 (binarised ``> 128``); no gradient.
        reduction: ``"mean"`` (default) or ``"sum"`` over the images, or ``"none"`` for the (B,) per-image losses.
        validate_args: check shapes, dtypes and values (one pass and one synchronisation); ``False`` for a
            sync-free training step.

    Returns:
        A 0-d tensor (``"mean"`` / ``"sum"``) or a (B,) tensor (``"none"``) in ``preds``' dtype (computed in
        float32 at least).

    Example:
        >>> import torch
        >>> from segmetrics_torch.losses import soft_iou_loss
        >>> target = torch.zeros(2, 16, 16)
        >>> target[:, 4:12, 4:12] = 1
        >>> preds = torch.full((2, 16, 16), 0.5, requires_grad=True)
        >>> round(soft_iou_loss(preds, target).item(), 4)
        0.8
    """
    _check_reduction(reduction)
    p, g, dtype = _prepare(preds, target, validate_args)
    gf = g.to(p.dtype)
    tp = (p * gf).sum(dim=(1, 2))
    union = p.sum(dim=(1, 2)) + gf.sum(dim=(1, 2)) - tp
    iou = torch.where(union > 0, tp / union.clamp_min(torch.finfo(p.dtype).tiny), torch.zeros_like(tp))
    return _reduce(1 - iou, reduction, dtype)


class _Loss(nn.Module):
    def __init__(self, reduction: Reduction = "mean", validate_args: bool = True) -> None:
        super().__init__()
        _check_reduction(reduction)
        if not isinstance(validate_args, bool):
            raise TypeError(f"Expected argument `validate_args` to be a bool, but got {validate_args!r}.")
        self.reduction = reduction
        self.validate_args = validate_args

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"


class EMeasureLoss(_Loss):
    """``1 - E-measure`` of a probability map (:func:`e_measure_loss`).

    Example:
        >>> import torch
        >>> from segmetrics_torch import EMeasureLoss
        >>> target = torch.zeros(2, 16, 16)
        >>> target[:, 4:12, 4:12] = 1
        >>> criterion = EMeasureLoss()
        >>> preds = torch.full((2, 16, 16), 0.5, requires_grad=True)
        >>> loss = criterion(preds, target)
        >>> loss.backward()
        >>> round(loss.item(), 4)
        0.749
    """

    def forward(self, preds: Tensor, target: Tensor) -> Tensor:
        return e_measure_loss(preds, target, reduction=self.reduction, validate_args=self.validate_args)


class WeightedFMeasureLoss(_Loss):
    """``1 - weighted F`` of a probability map (:func:`weighted_f_measure_loss`).

    Example:
        >>> import torch
        >>> from segmetrics_torch import WeightedFMeasureLoss
        >>> target = torch.zeros(2, 16, 16)
        >>> target[:, 4:12, 4:12] = 1
        >>> criterion = WeightedFMeasureLoss()
        >>> round(float(criterion(torch.full((2, 16, 16), 0.5), target)), 4)
        0.7128
    """

    def __init__(self, beta2: float = 1.0, reduction: Reduction = "mean", validate_args: bool = True) -> None:
        super().__init__(reduction, validate_args)
        self.beta2 = check_positive_float(beta2, "beta2")

    def forward(self, preds: Tensor, target: Tensor) -> Tensor:
        return weighted_f_measure_loss(
            preds, target, beta2=self.beta2, reduction=self.reduction, validate_args=self.validate_args
        )


class SoftFMeasureLoss(_Loss):
    """``1 - F_beta`` of soft counts (:func:`soft_f_measure_loss`, beta^2 = 0.3 by default).

    Example:
        >>> import torch
        >>> from segmetrics_torch import SoftFMeasureLoss
        >>> target = torch.zeros(2, 16, 16)
        >>> target[:, 4:12, 4:12] = 1
        >>> criterion = SoftFMeasureLoss(beta2=1.0)
        >>> round(float(criterion(torch.full((2, 16, 16), 0.5), target)), 4)
        0.6667
    """

    def __init__(self, beta2: float = 0.3, reduction: Reduction = "mean", validate_args: bool = True) -> None:
        super().__init__(reduction, validate_args)
        self.beta2 = check_positive_float(beta2, "beta2")

    def forward(self, preds: Tensor, target: Tensor) -> Tensor:
        return soft_f_measure_loss(
            preds, target, beta2=self.beta2, reduction=self.reduction, validate_args=self.validate_args
        )


class SoftIoULoss(_Loss):
    """``1 - IoU`` of soft counts (:func:`soft_iou_loss`).

    Example:
        >>> import torch
        >>> from segmetrics_torch import SoftIoULoss
        >>> target = torch.zeros(2, 16, 16)
        >>> target[:, 4:12, 4:12] = 1
        >>> criterion = SoftIoULoss(reduction="none")
        >>> [round(v, 4) for v in criterion(torch.full((2, 16, 16), 0.5), target).tolist()]
        [0.8, 0.8]
    """

    def forward(self, preds: Tensor, target: Tensor) -> Tensor:
        return soft_iou_loss(preds, target, reduction=self.reduction, validate_args=self.validate_args)


class SoftClDiceLoss(nn.Module):
    """``1 - soft clDice`` of probability maps (Shit et al., CVPR 2021), MONAI 1.6's ``SoftclDiceLoss``
    (:func:`soft_cl_dice_loss`: soft skeletons of min / max pooling, ``iterations`` thinning steps).

    Inputs are channel first, as MONAI's: (B, C, H, W) or (B, C, D, H, W) probabilities and targets; the value equals
    MONAI's for the same keywords (``smooth_nr``, ``smooth_dr``, ``smooth``, ``include_background``, ``reduction``;
    ``reduction="pooled"`` is the authors' loss over the whole batch).

    Example:
        >>> import torch
        >>> from segmetrics_torch import SoftClDiceLoss
        >>> target = torch.zeros(1, 1, 16, 16)
        >>> target[..., 7:9, 2:14] = 1  # a vessel
        >>> preds = torch.full((1, 1, 16, 16), 0.5, requires_grad=True)
        >>> loss = SoftClDiceLoss()(preds, target)
        >>> loss.backward()
        >>> round(loss.item(), 4)
        0.3158
    """

    def __init__(
        self,
        iterations: int = 3,
        smooth_nr: float = 1.0,
        smooth_dr: float = 1.0,
        smooth: float = 1e-4,
        include_background: bool = True,
        reduction: SoftReduction = "mean",
        validate_args: bool = True,
    ) -> None:
        super().__init__()
        self.iterations, self.smooth_nr, self.smooth_dr, self.smooth = iterations, smooth_nr, smooth_dr, smooth
        self.include_background, self.reduction, self.validate_args = include_background, reduction, validate_args
        # the arguments are checked now, not at the first batch: one call on a tiny two-channel pair (a single
        # channel would warn that include_background=False is ignored)
        self(torch.zeros(1, 2, 3, 3), torch.zeros(1, 2, 3, 3))

    def forward(self, preds: Tensor, target: Tensor) -> Tensor:
        return soft_cl_dice_loss(
            preds,
            target,
            iterations=self.iterations,
            smooth_nr=self.smooth_nr,
            smooth_dr=self.smooth_dr,
            smooth=self.smooth,
            include_background=self.include_background,
            reduction=self.reduction,
            validate_args=self.validate_args,
        )

    def extra_repr(self) -> str:
        return f"iterations={self.iterations}, reduction={self.reduction!r}"
