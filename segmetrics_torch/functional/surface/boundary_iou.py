"""Boundary IoU (Cheng, Girshick, Dollar, Berg & Kirillov, CVPR 2021)."""

from __future__ import annotations

import math
from typing import Unpack

import numpy as np
import torch
from torch import Tensor

from ..._checks import check_positive_float
from ._inputs import prepare_pairs, warn_empty
from .edges import boundary_band, boundary_dilation
from .options import MASK_DEFAULTS, MaskOptions, with_defaults

__all__ = ["boundary_iou"]


def boundary_iou(
    preds: object,
    target: object,
    *,
    dilation_ratio: float = 0.02,
    **options: Unpack[MaskOptions],
) -> Tensor:
    r"""Per-image (and per-class) Boundary IoU of 2-D masks.

    .. math::
        \mathrm{BIoU}(P, G) = \frac{|B_d(P) \cap B_d(G)|}{|B_d(P) \cup B_d(G)|}, \qquad
        B_d(X) = X \setminus \mathrm{erode}^d(X)

    with ``d`` erosions by the 3x3 square (the pixels of X within chessboard distance d of the background or the
    image edge), :math:`d = \max(1, \mathrm{round}(\text{dilation\_ratio} \cdot \sqrt{H^2 + W^2}))` of the **image**
    diagonal, rounded half to even (Python's ``round``): the authors' ``mask_to_boundary`` (boundary-iou-api, cv2
    erosion of the one-pixel zero-padded mask; faster-coco-eval computes the same). No spacing: the band is in pixels.
    The COCO evaluation scores min(mask IoU, Boundary IoU) per detection; this is the Boundary IoU itself.

    Empty masks (warns, naming the image and class): one empty gives 0.0; both give ``NaN`` (0/0, what the plain
    division of the authors' formula returns; pycocotools' RLE ``iou`` returns 0.0 there).

    Args:
        preds: (B, H, W) binary masks or label maps (``num_classes``), or a list of (H, W) tensors.
        target: ground truth of the same form and shape.
        dilation_ratio: band width as a fraction of the image diagonal (> 0).
        **options: ``num_classes``, ``include_background``, ``ignore_index``, ``input_format``, ``validate_args``
            (:class:`~segmetrics_torch.functional.surface.options.MaskOptions`) as
            :func:`~segmetrics_torch.functional.surface.hausdorff_distance`.

    Returns:
        (B,) float64 for binary masks, (B, C') for label maps.

    Example:
        >>> import torch
        >>> g = torch.zeros(1, 20, 20, dtype=torch.bool); g[:, 5:11, 5:11] = True
        >>> p = torch.zeros(1, 20, 20, dtype=torch.bool); p[:, 7:13, 6:13] = True
        >>> float(boundary_iou(p, g)[0])
        0.05
    """
    reading = with_defaults("boundary_iou", options, MASK_DEFAULTS, ("dilation_ratio",))
    band_ratio = check_positive_float(dilation_ratio, "dilation_ratio")
    pairs = prepare_pairs(preds, target, spacing=None, only_2d="Boundary IoU", **reading)
    out = torch.full((pairs.batch_size, len(pairs.class_ids)), math.nan, dtype=torch.float64)
    for group in pairs.groups:
        h, w = group.preds.shape[1:]
        d = boundary_dilation(h, w, band_ratio)
        band_p, band_g = boundary_band(torch.cat([group.preds, group.target]), d).chunk(2)
        inter = (band_p & band_g).flatten(1).sum(1).cpu().numpy()
        union = (band_p | band_g).flatten(1).sum(1).cpu().numpy()
        p_empty = (~group.preds.flatten(1).any(1)).cpu().numpy()
        g_empty = (~group.target.flatten(1).any(1)).cpu().numpy()
        with np.errstate(invalid="ignore"):
            ratio = inter / union.astype(np.float64)
        for row in np.flatnonzero(p_empty | g_empty):
            warn_empty(
                "boundary_iou",
                group.images[row],
                pairs.class_ids[group.columns[row]],
                pairs.binary,
                bool(p_empty[row]),
                bool(g_empty[row]),
                repr(float(ratio[row])),
                stacklevel=3,
            )
        out[group.images, group.columns] = torch.from_numpy(ratio)
    return pairs.finish(out)
