r"""clDice (Shit et al., CVPR 2021): the centreline Dice of tubular masks, and its differentiable soft form.

Shit, Paetzold, Sekuboyina, Ezhov, Unger, Zhylka, Pluim, Bauer & Menze, "clDice - a Novel Topology-Preserving Loss
Function for Tubular Structure Segmentation", CVPR 2021. With S(X) the skeleton (centreline) of mask X:

.. math::
    T_\mathrm{prec} = \frac{|S(P) \cap G|}{|S(P)|}, \qquad
    T_\mathrm{sens} = \frac{|S(G) \cap P|}{|S(G)|}, \qquad
    \mathrm{clDice} = \frac{2\, T_\mathrm{prec}\, T_\mathrm{sens}}{T_\mathrm{prec} + T_\mathrm{sens}}

* :func:`cl_dice`: the measure on binary masks, with scikit-image's skeletons (the authors' ``cldice_metric``).
* :func:`soft_skeleton`, :func:`soft_cl_dice_loss`: the soft skeleton of min/max pooling and the loss
  ``1 - soft clDice`` of probabilities (the authors' ``soft_skeleton.py`` / ``cldice.py``; MONAI 1.6
  ``soft_skel`` / ``SoftclDiceLoss``, whose value it reproduces).
"""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Callable
from typing import Literal, Unpack, get_args

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from ..._checks import check_bool, check_choice, check_number_in, check_positive_float, check_tensor
from ._inputs import prepare_pairs, warn_empty
from .options import MASK_DEFAULTS, MaskOptions, with_defaults

__all__ = ["ClDiceWarning", "cl_dice", "soft_cl_dice_loss", "soft_skeleton"]

#: what :func:`cl_dice` returns where the authors' formula divides 0 by 0: "defined" values, or "nan" (the authors')
ZeroDivision = Literal["defined", "nan"]
#: how :func:`soft_cl_dice_loss` reduces: MONAI's three over the per-image losses, or "pooled" (the authors' loss)
SoftReduction = Literal["mean", "sum", "none", "pooled"]

_INSTALL = "pip install 'segmetrics-torch[opencv]'"


class ClDiceWarning(UserWarning):
    """:func:`cl_dice` met a 0/0 of non-empty masks: a skeleton that thinning removed entirely (scikit-image's 3-D
    Lee thinning erases, e.g., an isolated 2x2x2 cube or a tube of 2x2 cross-section), or, with
    ``zero_division="nan"``, Tprec = Tsens = 0.

    Besides its message it names the pair: ``image`` (the index in the batch), ``class_id`` (None for masks) and the
    ``value`` returned. Empty masks warn with the family's
    :class:`~segmetrics_torch.functional.surface.EmptyMaskWarning` instead.

    Example:
        >>> import warnings, torch
        >>> p = torch.zeros(1, 6, 6, 6, dtype=torch.bool); p[0, 2:4, 2:4, 2:4] = True
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     value = cl_dice(p, p)
        >>> float(value[0]), caught[0].category.__name__, caught[0].message.image
        (1.0, 'ClDiceWarning', 0)
    """

    def __init__(self, message: str, image: int = -1, class_id: int | None = None, value: str = "") -> None:
        super().__init__(message)
        self.image, self.class_id, self.value = image, class_id, value


def _skeletonize() -> Callable[..., np.ndarray]:
    """scikit-image's ``skeletonize`` (the reference's skeletons), or an ``ImportError`` naming the extra."""
    try:
        from skimage.morphology import skeletonize
    except ImportError as err:  # pragma: no cover - optional extra
        raise ImportError(
            "cl_dice computes its skeletons with scikit-image's `skeletonize`, as the authors' metric does: "
            f"{_INSTALL} (or `pip install scikit-image`)."
        ) from err
    return skeletonize


def _skeletons(masks: Tensor, skeletonize: Callable[..., np.ndarray]) -> Tensor:
    """The skeletons of (N, *spatial) bool masks, one image at a time through scikit-image on the CPU (Zhang's
    thinning in 2-D, Lee's in 3-D, named explicitly as the authors' ``skeletonize`` / ``skeletonize_3d`` use them),
    returned as a bool tensor on the masks' device. Empty masks are skipped (their skeleton is empty)."""
    method = "zhang" if masks.ndim == 3 else "lee"
    host = np.ascontiguousarray(masks.cpu().numpy())
    out = np.zeros_like(host)
    for i in np.flatnonzero(host.reshape(len(host), -1).any(axis=1)):
        out[i] = skeletonize(host[i], method=method)
    return torch.from_numpy(out).to(masks.device)


def _counts(x: Tensor) -> Tensor:
    """The number of True voxels of each image of a (N, *spatial) bool tensor, as float64 (exact below 2^53)."""
    return x.flatten(1).sum(1, dtype=torch.float64)


def cl_dice(
    preds: object,
    target: object,
    *,
    zero_division: ZeroDivision = "defined",
    **options: Unpack[MaskOptions],
) -> Tensor:
    r"""Per-image (and per-class) clDice, the centreline Dice of binary masks (2-D images or 3-D volumes).

    .. math::
        T_\mathrm{prec} = \frac{|S(P) \cap G|}{|S(P)|}, \quad
        T_\mathrm{sens} = \frac{|S(G) \cap P|}{|S(G)|}, \quad
        \mathrm{clDice}(P, G) = \frac{2\, T_\mathrm{prec}\, T_\mathrm{sens}}{T_\mathrm{prec} + T_\mathrm{sens}}

    with S(X) the skeleton of X: scikit-image's ``skeletonize`` (Zhang & Suen's thinning for 2-D images, Lee,
    Kashyap & Chu's for 3-D volumes, the method ``skeletonize_3d`` ran). Reference: Shit et al., "clDice - a Novel
    Topology-Preserving Loss Function for Tubular Structure Segmentation", CVPR 2021, and the authors'
    ``cldice_metric/cldice.py`` (``clDice(v_p, v_l)``; its variable ``tprec`` holds the paper's Tsens and vice versa,
    which the symmetric harmonic mean does not see). Its numbers are reproduced bit for bit in float64 wherever they
    are finite: the counts are exact and the ratios are formed in the same order.

    Computation: the skeletons are the reference's, computed by scikit-image **on the CPU, one image at a time**
    (masks on a CUDA device are copied to the host for them and the skeletons back); the counts and ratios are
    batched tensor operations on the input's device. scikit-image is part of the ``opencv`` extra
    (``pip install 'segmetrics-torch[opencv]'``); without it this raises ``ImportError``.

    Where the formula divides 0 by 0 (an empty skeleton, or Tprec = Tsens = 0), the authors' numpy code returns
    ``nan`` with a RuntimeWarning. ``zero_division`` chooses:

    ======================================================  ==========================  ========================
    case                                                    ``"defined"`` (default)     ``"nan"`` (the authors')
    ======================================================  ==========================  ========================
    both masks empty                                        1.0 (warns)                 NaN (warns)
    one mask empty                                          0.0 (warns)                 NaN (warns)
    non-empty mask whose skeleton is empty (3-D: see        the mask stands for its     NaN (warns)
    below)                                                  skeleton (warns)
    Tprec = Tsens = 0 (skeletons outside the other mask)    0.0                         NaN (warns)
    ======================================================  ==========================  ========================

    The defined values: two empty masks agree perfectly (1.0); a structure that is missed or invented entirely scores
    0.0; 0.0 is the limit of the harmonic mean as both terms go to 0. A non-empty mask whose skeleton is empty is its
    own centreline, so that identical masks score 1.0 and disjoint ones 0.0 (Tprec becomes ``|P ∩ G| / |P|``). This
    happens in 3-D: scikit-image's Lee thinning erases isolated 2x2x2 cubes and tubes of 2x2 or 4x4 cross-section
    entirely (scikit-image issue 3757, open; the clDice authors know of it, vessap issue 12); it was not seen in 2-D.
    A component erased among others is simply missing from the skeleton, as in the reference. Empty masks warn with
    the family's :class:`~segmetrics_torch.functional.surface.EmptyMaskWarning` naming the image, the class and the
    value; the other cases with :class:`ClDiceWarning`. No other NaN is returned, but the ``ignore_index`` class's
    column (NaN in every function of the family).

    Input convention: the boundary-distance family's (``functional/surface/_inputs.py``): a 3-D tensor is a batch of
    2-D images, a 4-D tensor a batch of volumes (B, D, H, W), never of channels (MONAI's (B, 1, H, W) is refused by
    its shape, one-hot channels by their values: pass ``input_format="one-hot"``); a list holds (H, W) or (D, H, W)
    tensors of different sizes. Label maps with ``num_classes`` score each class as its own binary pair.

    Args:
        preds: (B, H, W) or (B, D, H, W) binary masks (bool or {0, 1} integers / floats), or label maps with
            ``num_classes``; or a list of (H, W) / (D, H, W) tensors of different sizes.
        target: ground truth, same form and shape.
        zero_division: ``"defined"`` (default) or ``"nan"``, the values of the 0/0 cases (table above).
        **options: ``num_classes``, ``include_background``, ``ignore_index``, ``input_format``, ``validate_args``
            (:class:`~segmetrics_torch.functional.surface.options.MaskOptions`) as
            :func:`~segmetrics_torch.functional.surface.hausdorff_distance`; ``validate_args`` checks that masks
            hold only 0 and 1 (no NaN).

    Returns:
        (B,) float64 for binary masks, (B, C') for label maps.

    Raises:
        ValueError: shapes that differ or are not (B, H, W) / (B, D, H, W), values other than 0 and 1 (NaN
            included), an unknown ``zero_division``.
        TypeError: inputs that are not tensors (or lists of them), complex dtypes, an unknown keyword.
        ImportError: scikit-image is not installed.

    Example:
        A straight line scores 1.0 against itself. A one-pixel line is its own skeleton, so a line of 6 pixels on
        one of 12 has Tprec = 6/6 and Tsens = 6/12: clDice = 2 * 0.5 / 1.5 = 2/3.

        >>> import torch
        >>> line = torch.zeros(1, 9, 16, dtype=torch.bool); line[:, 4, 2:14] = True
        >>> float(cl_dice(line, line)[0])
        1.0
        >>> half = torch.zeros(1, 9, 16, dtype=torch.bool); half[:, 4, 2:8] = True
        >>> round(float(cl_dice(half, line)[0]), 6)
        0.666667
    """
    reading = with_defaults("cl_dice", options, MASK_DEFAULTS, ("zero_division",))
    mode = check_choice(zero_division, "zero_division", get_args(ZeroDivision))
    skeletonize = _skeletonize()
    pairs = prepare_pairs(preds, target, spacing=None, **reading)
    out = torch.full((pairs.batch_size, len(pairs.class_ids)), math.nan, dtype=torch.float64, device=pairs.device)
    for group in pairs.groups:
        p, g = group.preds, group.target
        n = p.shape[0]
        skel = _skeletons(torch.cat([p, g]), skeletonize)
        skel_p, skel_g = skel[:n], skel[n:]
        size_p, size_g, both = _counts(p), _counts(g), _counts(p & g)
        len_p, len_g = _counts(skel_p), _counts(skel_g)
        hit_p, hit_g = _counts(skel_p & g), _counts(skel_g & p)
        p_empty, g_empty = size_p == 0, size_g == 0
        lost_p, lost_g = (len_p == 0) & ~p_empty, (len_g == 0) & ~g_empty
        if mode == "defined":
            # a non-empty mask that thinning erased entirely stands for its own skeleton
            len_p, hit_p = torch.where(lost_p, size_p, len_p), torch.where(lost_p, both, hit_p)
            len_g, hit_g = torch.where(lost_g, size_g, len_g), torch.where(lost_g, both, hit_g)
        # the authors' operations in their order (their tprec / tsens swapped: the product and sum commute)
        tprec, tsens = hit_p / len_p, hit_g / len_g
        value = 2 * tprec * tsens / (tprec + tsens)
        missed = (tprec + tsens) == 0
        if mode == "defined":
            value = torch.where(missed, 0.0, value)
            value = torch.where(p_empty | g_empty, (p_empty & g_empty).double(), value)
            missed = torch.zeros_like(missed)  # a defined 0.0, the harmonic mean's limit: no warning
        out[group.images, group.columns] = value
        flags = torch.stack([p_empty, g_empty, lost_p, lost_g, missed]).cpu().numpy()
        if not flags.any():
            continue
        host = value.cpu().numpy()
        for row in np.flatnonzero(flags.any(axis=0)):
            pe, ge, lp, lg = (bool(f) for f in flags[:4, row])
            image, class_id = group.images[row], pairs.class_ids[group.columns[row]]
            shown = repr(float(host[row]))
            if pe or ge:
                warn_empty("cl_dice", image, class_id, pairs.binary, pe, ge, shown, stacklevel=3)
                continue
            where = f"cl_dice: image {image}" + ("" if pairs.binary else f", class {class_id}")
            if lp or lg:
                side = "prediction's and ground truth's" if lp and lg else "prediction's" if lp else "ground truth's"
                rule = (
                    "the mask stands for its skeleton"
                    if mode == "defined"
                    else "0/0 as in the authors' code (zero_division='defined' uses the mask as its skeleton)"
                )
                message = (
                    f"{where}: the {side} skeleton is empty (thinning removed every voxel of a non-empty mask); "
                    f"{rule}; the result is {shown}."
                )
            else:
                message = (
                    f"{where}: Tprec = Tsens = 0 (no skeleton voxel lies in the other mask): 0/0 as in the authors' "
                    f"code; the result is {shown} (zero_division='defined' gives 0.0)."
                )
            warnings.warn(ClDiceWarning(message, image, None if pairs.binary else class_id, shown), stacklevel=2)
    return pairs.finish(out)


# --- the soft skeleton and the loss -----------------------------------------------------------------------------


def _check_soft(x: object, name: str) -> Tensor:
    """``x`` (keeping its graph) if it is a dense (B, C, H, W) / (B, C, D, H, W) tensor with values."""
    check_tensor(x, name)
    assert isinstance(x, Tensor)
    if x.ndim not in (4, 5):
        hint = f" For (B, H, W) masks pass `{name}.unsqueeze(1)`." if x.ndim == 3 else ""
        raise ValueError(
            f"Expected `{name}` of shape (B, C, H, W) (2-D) or (B, C, D, H, W) (3-D), channels first as MONAI's, but "
            f"got shape {tuple(x.shape)}.{hint}"
        )
    if x.numel() == 0:
        raise ValueError(f"Expected `{name}` to hold values, but got an empty tensor of shape {tuple(x.shape)}.")
    return x


def _check_iterations(iterations: object) -> int:
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)):
        raise TypeError(f"Expected `iterations` to be a non-negative int, but got {iterations!r}.")
    if not 0 <= iterations <= MAX_ITERATIONS:
        # each iteration is a min- and a max-pool kept by autograd: 10^4 took 1.2 GB on a 2 x 2 x 16 x 16 input
        raise ValueError(f"Expected `iterations` to be an int in [0, {MAX_ITERATIONS}], but got {iterations!r}.")
    return int(iterations)


#: the most iterations of the soft skeleton (the authors use 3 to 10; MONAI's default is 3)
MAX_ITERATIONS = 1000


def _soft_erode(x: Tensor) -> Tensor:
    """Soft erosion: the minimum over the cross (one min-pool per axis, 3 long), zero padding never seen."""
    if x.ndim == 4:
        along = [-F.max_pool2d(-x, (3, 1), (1, 1), (1, 0)), -F.max_pool2d(-x, (1, 3), (1, 1), (0, 1))]
    else:
        along = [
            -F.max_pool3d(-x, (3, 1, 1), (1, 1, 1), (1, 0, 0)),
            -F.max_pool3d(-x, (1, 3, 1), (1, 1, 1), (0, 1, 0)),
            -F.max_pool3d(-x, (1, 1, 3), (1, 1, 1), (0, 0, 1)),
        ]
    out = torch.minimum(along[0], along[1])
    return out if len(along) == 2 else torch.minimum(out, along[2])


def _soft_dilate(x: Tensor) -> Tensor:
    """Soft dilation: the maximum over the 3x3 (3x3x3) square."""
    if x.ndim == 4:
        return F.max_pool2d(x, (3, 3), (1, 1), (1, 1))
    return F.max_pool3d(x, (3, 3, 3), (1, 1, 1), (1, 1, 1))


def _soft_skeleton(x: Tensor, iterations: int) -> Tensor:
    skel = F.relu(x - _soft_dilate(_soft_erode(x)))
    for _ in range(iterations):
        x = _soft_erode(x)
        delta = F.relu(x - _soft_dilate(_soft_erode(x)))
        skel = skel + F.relu(delta - skel * delta)
    return skel


def soft_skeleton(x: Tensor, iterations: int = 3) -> Tensor:
    r"""The differentiable soft skeleton of Shit et al. (CVPR 2021) by min/max pooling, 2-D or 3-D.

    .. math::
        s_0 = \mathrm{relu}(x - \mathrm{open}(x)), \quad x_k = \mathrm{erode}(x_{k-1}), \quad
        \delta_k = \mathrm{relu}(x_k - \mathrm{open}(x_k)), \quad s_k = s_{k-1} + \mathrm{relu}(\delta_k - s_{k-1}
        \delta_k)

    for k = 1..``iterations``, returning :math:`s_\mathrm{iterations}`: soft erosion is the minimum over the cross
    (min-pooling along each axis over 3 voxels), soft dilation the maximum over the 3x3 (3x3x3) square, opening the
    dilation of the erosion; borders are never part of a pooling window (padding of -inf / +inf). Reference: the
    authors' ``cldice_loss/pytorch/soft_skeleton.py`` (``SoftSkeletonize``) and MONAI 1.6 ``soft_skel(img, iter_)``,
    whose values this reproduces bit for bit (the same operations in the same order).

    Args:
        x: (B, C, H, W) for 2-D or (B, C, D, H, W) for 3-D images (channels first, as MONAI's), floating; usually
            probabilities in [0, 1]. Gradients flow to it. No value checks (no synchronisation).
        iterations: the number of erosions, an int >= 0 (MONAI's ``iter_``; the authors' loss uses 10, MONAI 3).

    Returns:
        The soft skeleton, of ``x``'s shape and dtype.

    Example:
        >>> import torch
        >>> x = torch.zeros(1, 1, 5, 7); x[0, 0, 1:4, 1:6] = 1.0
        >>> soft_skeleton(x)[0, 0, 2]
        tensor([0., 0., 1., 1., 1., 0., 0.])
    """
    x = _check_soft(x, "x")
    if not x.is_floating_point():
        raise TypeError(f"Expected `x` to be a floating tensor, but got dtype {x.dtype}.")
    return _soft_skeleton(x, _check_iterations(iterations))


def _check_loss_inputs(preds: Tensor, target: Tensor, validate_args: bool) -> None:
    if not preds.is_floating_point():
        raise TypeError(f"Expected `preds` to be a floating tensor of probabilities, but got dtype {preds.dtype}.")
    if target.is_complex():
        raise TypeError(f"Expected `target` to be bool, {{0, 1}} integers or floats in [0, 1], but got {target.dtype}.")
    if preds.shape != target.shape:
        raise ValueError(
            f"Expected `preds` and `target` of the same shape, but got {tuple(preds.shape)} and {tuple(target.shape)}"
            " (one-hot encode a (B, 1, ...) label map first)."
        )
    if not validate_args:
        return
    with torch.no_grad():
        checks = [*torch.aminmax(preds.detach().flatten())]
        if target.dtype != torch.bool:
            checks += torch.aminmax(target.detach().flatten())
        values = torch.stack([c.double() for c in checks]).tolist()  # one synchronisation
    if not all(math.isfinite(v) for v in values[:2]):
        raise ValueError("Expected `preds` to contain only finite values, but it contains NaN or inf.")
    if values[0] < 0 or values[1] > 1:
        raise ValueError(
            f"Expected `preds` to be probabilities in [0, 1], but got values in [{values[0]:g}, {values[1]:g}]; apply "
            "a sigmoid (or a softmax over the channels) first."
        )
    if len(values) > 2:
        lo, hi = values[2:]
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError("Expected `target` to contain only finite values, but it contains NaN or inf.")
        if lo < 0 or hi > 1:
            raise ValueError(f"Expected `target` to hold values in [0, 1], but got values in [{lo:g}, {hi:g}].")


def soft_cl_dice_loss(
    preds: Tensor,
    target: Tensor,
    *,
    iterations: int = 3,
    smooth_nr: float = 1.0,
    smooth_dr: float = 1.0,
    smooth: float = 1e-4,
    include_background: bool = True,
    reduction: SoftReduction = "mean",
    validate_args: bool = True,
) -> Tensor:
    r"""The soft clDice loss ``1 - soft clDice`` of probabilities (Shit et al., CVPR 2021), as MONAI's
    ``SoftclDiceLoss``.

    .. math::
        T_\mathrm{prec} = \frac{\sum S_P\, G + n}{\sum S_P + d}, \quad
        T_\mathrm{sens} = \frac{\sum S_G\, P + n}{\sum S_G + d}, \quad
        \mathcal{L} = 1 - \frac{2\, T_\mathrm{prec}\, T_\mathrm{sens}}{T_\mathrm{prec} + T_\mathrm{sens} + \epsilon}

    with :math:`S_X` = :func:`soft_skeleton` (X, ``iterations``), n = ``smooth_nr``, d = ``smooth_dr``,
    :math:`\epsilon` = ``smooth``, the sums over the channels and voxels of each image. Reference: MONAI 1.6.1
    ``SoftclDiceLoss(iter_, smooth_nr, smooth_dr, smooth, include_background, reduction)`` with probabilities (no
    activation, no ``to_onehot_y``), whose value this reproduces (float32 and float64: the same operations in the same
    order); the keywords have MONAI's names and defaults, ``iterations`` is its ``iter_``.

    The authors' ``soft_cldice(iter_, smooth)`` (``cldice_loss/pytorch/cldice.py``) differs in three ways, each
    available here: its sums run over the whole batch at once (``reduction="pooled"``), it has no epsilon in the
    harmonic mean (``smooth=0``), and its skeleton always takes 10 iterations whatever ``iter_`` says
    (``iterations=10``); its ``smooth`` is ``smooth_nr = smooth_dr``, and ``exclude_background=True`` is
    ``include_background=False``. Older MONAI (``SoftclDiceLoss(iter_=3, smooth=1.0)``, ``forward(y_true, y_pred)``,
    before ``smooth_nr`` / ``smooth_dr``) pooled the batch without epsilon and always dropped channel 0:
    ``reduction="pooled", smooth=0, include_background=False`` here (C >= 2); 1.6 keeps channel 0 by default.

    Args:
        preds: (B, C, H, W) or (B, C, D, H, W) probabilities in [0, 1] (channels first; apply a sigmoid or softmax to
            logits first), floating. Gradients flow to it. 2-D or 3-D is read from the number of dimensions.
        target: the same shape: bool, {0, 1} integers, or floats in [0, 1] (one-hot labels; soft labels as MONAI
            takes them). No gradient flows to it.
        iterations: soft-skeleton iterations, an int >= 0 (MONAI's ``iter_``).
        smooth_nr: added to the numerators of Tprec and Tsens (>= 0).
        smooth_dr: added to their denominators (> 0, so that an empty skeleton never divides 0 by 0).
        smooth: added to the denominator of the harmonic mean (>= 0; MONAI requires > 0, the authors use 0). At
            least one of ``smooth_nr`` and ``smooth`` must be > 0, so that the loss is never 0/0.
        include_background: False drops channel 0 (ignored with a warning when there is one channel, as MONAI).
        reduction: ``"mean"`` (default), ``"sum"`` or ``"none"`` ((B,)) over the per-image losses, as MONAI; or
            ``"pooled"``, one loss from the sums over the whole batch (the authors').
        validate_args: check that ``preds`` is finite in [0, 1] and ``target`` in [0, 1] (one synchronisation);
            ``False`` for a sync-free training step (shapes and dtypes are always checked).

    Returns:
        A 0-d tensor, or (B,) for ``reduction="none"``, in ``preds``' dtype (computed in float32 at least).

    Example:
        >>> import torch
        >>> target = torch.zeros(2, 1, 16, 16); target[:, :, 6:9, 2:14] = 1.0
        >>> preds = (0.8 * target + 0.1).requires_grad_()
        >>> loss = soft_cl_dice_loss(preds, target)
        >>> loss.backward()
        >>> round(loss.item(), 4), preds.grad.shape
        (0.0477, torch.Size([2, 1, 16, 16]))
    """
    preds = _check_soft(preds, "preds")
    target = _check_soft(target, "target").detach()
    n_iter = _check_iterations(iterations)
    nr = check_number_in(smooth_nr, "smooth_nr", 0.0, sys.float_info.max, "a finite number >= 0")
    dr = check_positive_float(smooth_dr, "smooth_dr")
    eps = check_number_in(smooth, "smooth", 0.0, sys.float_info.max, "a finite number >= 0")
    if nr == 0 and eps == 0:
        raise ValueError(
            "Expected `smooth_nr` > 0 or `smooth` > 0: with both 0, a prediction whose skeleton misses the target "
            "entirely gives 0/0."
        )
    check_bool(include_background, "include_background")
    check_bool(validate_args, "validate_args")
    mode = check_choice(reduction, "reduction", get_args(SoftReduction))
    _check_loss_inputs(preds, target, validate_args)

    out_dtype = preds.dtype
    work = torch.promote_types(preds.dtype, torch.float32)
    p, g = preds.to(work), target.to(work)
    if not include_background:
        if p.shape[1] == 1:
            warnings.warn("single channel prediction, `include_background=False` ignored.", stacklevel=2)
        else:
            p, g = p[:, 1:], g[:, 1:]
    skel_p, skel_g = _soft_skeleton(p, n_iter), _soft_skeleton(g, n_iter)
    dims = list(range(0 if mode == "pooled" else 1, p.ndim))
    tprec = (torch.sum(skel_p * g, dim=dims) + nr) / (torch.sum(skel_p, dim=dims) + dr)
    tsens = (torch.sum(skel_g * p, dim=dims) + nr) / (torch.sum(skel_g, dim=dims) + dr)
    loss = 1.0 - 2.0 * (tprec * tsens) / (tprec + tsens + eps)
    if mode == "mean":
        loss = loss.mean()
    elif mode == "sum":
        loss = loss.sum()
    return loss.to(out_dtype)
