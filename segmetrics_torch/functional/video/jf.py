r"""Region similarity J and boundary F of every object and frame of a video at once (DAVIS, Perazzi et al. 2016).

For a frame's predicted mask ``S``, ground-truth mask ``G`` and void mask ``V`` (empty where no void is used):

.. math::

    J = \frac{|S \cap G \setminus V|}{|(S \cup G) \setminus V|} \quad (1 \text{ when the union is empty}),
    \qquad F = \frac{2PR}{P + R}

with ``P = |b(S) & dil(b(G))| / |b(S)|``, ``R = |b(G) & dil(b(S))| / |b(G)|``, ``b`` the ``seg2bmap`` boundary of
the mask with the void pixels removed, ``dil`` the dilation by the disk of radius ``ceil(bound_th * sqrt(H^2 + W^2))``
(``cv2.dilate`` with ``skimage.morphology.disk``: zero outside the image) and DAVIS' empty cases (no predicted boundary
but a GT one: P = 1, R = 0; the reverse: P = 0, R = 1; neither: F = 1; F = 0 when P + R = 0). As
``davis2017/metrics.py`` (``db_eval_iou``, ``f_measure``) of ``davis2017-evaluation`` computes them, bit for bit in
float64 (the division order included).

Inputs are label maps (ids ``1..``, 0 background; the target's 255 void): all objects of all frames go through one
batched op (:func:`segmetrics_torch.ops.davis.davis_counts`), whose CPU kernel never materialises a dilation.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from ..._checks import BACKENDS, Backend, check_bool, check_choice, check_positive_float, check_tensor
from ...ops.davis import davis_counts
from ..boundary.morphological import boundary_f_from_counts

__all__ = ["davis_j_and_f", "davis_radius", "jf_from_counts"]


def davis_radius(bound_th: float, height: int, width: int) -> int:
    """The disk's radius in pixels: ``ceil(bound_th * sqrt(H^2 + W^2))`` for ``bound_th < 1``, else ``bound_th``.

    Raises:
        ValueError: ``bound_th`` not positive, or >= 1 and not a whole number of pixels (the reference's disk of a
            fractional radius has an even size and an off-centre anchor, which nobody reports).

    Example:
        >>> davis_radius(0.008, 480, 854)
        8
    """
    bound_th = check_positive_float(bound_th, "bound_th")
    if bound_th >= 1:
        if bound_th != int(bound_th):
            raise ValueError(f"Expected `bound_th` < 1 or a whole number of pixels, but got {bound_th}.")
        # a disk wider than the diagonal covers what the diagonal's does (check_tolerance): 1e300 is no size
        return min(int(bound_th), math.ceil(math.hypot(height, width)))
    return math.ceil(bound_th * math.hypot(height, width))


def jf_from_counts(counts: dict[str, Tensor], *, diagonal: bool) -> tuple[Tensor, Tensor]:
    """(J, F) in float64 from :func:`~segmetrics_torch.ops.davis.davis_counts`' counts.

    Returns:
        ``diagonal``: (T, K) each; else (T, P, K).

    Example:
        >>> from segmetrics_torch.ops.davis import davis_counts
        >>> gt = torch.zeros(1, 16, 16, dtype=torch.uint8); gt[0, 4:12, 4:12] = 1
        >>> pred = torch.zeros_like(gt); pred[0, 4:12, 6:12] = 1
        >>> j, f = jf_from_counts(davis_counts(pred, gt, num_preds=1, num_targets=1, radius=1, void=False),
        ...                       diagonal=True)
        >>> j.tolist()
        [[0.75]]
    """
    joint = counts["joint"]
    inter = joint[:, 1:, 1:]
    pred_area = joint[:, 1:, :].sum(dim=-1)  # (T, P)
    target_area = joint[:, :, 1:].sum(dim=-2)  # (T, K)
    union = pred_area.unsqueeze(-1) + target_area.unsqueeze(-2) - inter
    j = torch.where(union == 0, 1.0, inter.double() / union.clamp_min(1).double())
    f, _, _ = boundary_f_from_counts(
        counts["fg_match"], counts["n_fg"].unsqueeze(-1), counts["gt_match"], counts["n_gt"].unsqueeze(-2)
    )
    if diagonal:
        return j.diagonal(dim1=-2, dim2=-1), f.diagonal(dim1=-2, dim2=-1)
    return j, f


def check_label_video(preds: object, target: object) -> None:
    """``preds`` and ``target``: (T, H, W) integer label-map tensors of one shape with at least one frame and pixel,
    ids in [0, 255] (255: void), else a ``TypeError`` / ``ValueError`` naming them (a numpy array, None, a float or
    bool map, an empty video, a negative id). Reads the ids' range: one host synchronisation per tensor."""
    for name, x in (("preds", preds), ("target", target)):
        check_tensor(x, name)
        assert isinstance(x, Tensor)
        if x.is_floating_point() or x.is_complex() or x.dtype == torch.bool:
            raise TypeError(f"Expected `{name}` to be integer label maps (uint8 ids, 255 void), but got {x.dtype}.")
    assert isinstance(preds, Tensor) and isinstance(target, Tensor)
    if preds.ndim != 3 or preds.shape != target.shape:
        raise ValueError(
            "Expected `preds` and `target` to be (T, H, W) label maps of one shape, but got "
            f"{tuple(preds.shape)} and {tuple(target.shape)}."
        )
    if preds.numel() == 0:
        raise ValueError(f"Expected `preds` and `target` with frames and pixels, but got shape {tuple(preds.shape)}.")
    for name, x in (("preds", preds), ("target", target)):
        if x.dtype != torch.uint8:
            low, high = torch.aminmax(x)
            if int(low) < 0 or int(high) > 255:
                raise ValueError(f"Expected `{name}` ids in [0, 255] (255: void), but got [{int(low)}, {int(high)}].")


def davis_j_and_f(
    preds: Tensor,
    target: Tensor,
    *,
    num_objects: int | None = None,
    num_preds: int | None = None,
    void: bool = False,
    pairs: str = "matched",
    bound_th: float = 0.008,
    backend: Backend = "auto",
) -> dict[str, Tensor]:
    """J and F of every object (or every (prediction, object) pair) in every frame of a video.

    Args:
        preds: (T, H, W) integer label maps of the prediction (ids ``1..P``, 0 background).
        target: (T, H, W) integer label maps of the ground truth (ids ``1..K``, 0 background, 255 void; ids above
            ``num_objects`` are no object).
        num_objects: K; default the largest id of the first target frame (DAVIS' rule), 255 apart.
        num_preds: P for ``pairs="all"``; default the largest id of ``preds``. With ``pairs="matched"`` the
            prediction's object ``k`` is compared with the target's object ``k`` and a prediction id above K is a
            ``ValueError`` (DAVIS' semi-supervised rule).
        void: leave the target's 255 pixels out of every count (DAVIS' unsupervised path) instead of counting them
            as background (its semi-supervised path).
        pairs: ``"matched"`` (object k with prediction k) or ``"all"`` (every pair).
        bound_th: boundary tolerance, a fraction of the image diagonal (< 1) or whole pixels (>= 1).
        backend: "auto", "numba" or "torch" (see :mod:`segmetrics_torch.ops.backend`).

    Returns:
        ``{"j", "f"}``: float64 (K, T) for ``"matched"``, (P, K, T) for ``"all"``, on the input's device.

    Example:
        >>> gt = torch.zeros(3, 40, 40, dtype=torch.uint8); gt[:, 10:30, 10:30] = 1
        >>> pred = gt.clone(); pred[1] = 0
        >>> davis_j_and_f(pred, gt)["j"]
        tensor([[1., 0., 1.]], dtype=torch.float64)
    """
    check_label_video(preds, target)
    check_choice(pairs, "pairs", ("matched", "all"))
    check_choice(backend, "backend", BACKENDS)
    check_bool(void, "void")
    for name, count in (("num_objects", num_objects), ("num_preds", num_preds)):
        if count is not None and (isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= 254):
            raise ValueError(f"Expected `{name}` to be None or an int in [0, 254], but got {count!r}.")
    if num_objects is None:
        first = target[0].long()  # (check_label_video: a frame and a pixel at least)
        num_objects = int(torch.where(first == 255, 0, first).max())
    if pairs == "matched":
        num_preds = num_objects
    elif num_preds is None:
        num_preds = int(preds.max())
        if num_preds > 254:
            raise ValueError("Expected `preds` ids in [0, 254] with pairs='all' (each id an object), but got 255.")
    radius = davis_radius(bound_th, preds.shape[-2], preds.shape[-1])
    counts = davis_counts(
        preds,
        target,
        num_preds=num_preds,
        num_targets=num_objects,
        radius=radius,
        void=void,
        diagonal=pairs == "matched",
        backend=backend,
        check_ids=False,
    )
    if int(counts["pred_max"].max()) > num_preds:  # one host sync, on the (T,) maxima
        frame = int(torch.nonzero(counts["pred_max"] > num_preds)[0, 0])
        bound = "num_objects (pairs='matched')" if pairs == "matched" else "num_preds"
        raise ValueError(
            f"Expected `preds` ids in [0, {num_preds}] ({bound}), but frame {frame} has id "
            f"{int(counts['pred_max'][frame])}."
        )
    j, f = jf_from_counts(counts, diagonal=pairs == "matched")
    if pairs == "matched":
        return {"j": j.T.contiguous(), "f": f.T.contiguous()}
    return {"j": j.permute(1, 2, 0).contiguous(), "f": f.permute(1, 2, 0).contiguous()}
