r"""Multi-scale IoU (Ahmadzadeh et al. ICIP 2021), PySODMetrics 1.6.2 ``MSIoU``, batched tensor ops (any device).

For a binary map ``M`` and the GT ``g``:

1. Edges: ``E(M) = (Sy != 0) | (Sx != 0)`` with ``Sy``/``Sx`` the Sobel responses of ``M`` (zero padding; this is
   ``scipy.ndimage.sobel`` as PySOD calls it on a *bool* array: the bool output keeps the integer responses' low
   byte, so "``hypot > 0``" is "a response is non-zero"; responses lie in [-4, 4], computed exactly in integers).
2. Scales: cell sizes ``2 ** linspace(0, 9, L, dtype=int)`` (``L = num_levels``, 10: 1, 2, ..., 512); at size ``s``
   the edge map is zero-padded at the top/left to a multiple of ``s`` and each ``s x s`` cell is "on" if any pixel
   is.
3. Ratios ``r_s = (|E_s(M) & E_s(g)| + 1) / (|E_s(g)| + 1)``; score = ``trapz(r, dx=1 / (L - 1))`` (numpy's term
   order and summation tree reproduced).

Modes: ``adaptive`` ``p >= min(2 mean p, 1)``; ``binary`` ``p > 0.5``; ``dynamic`` the **257** maps
``trunc(255 p) >= t`` for ``t = 0, 1, ..., 256`` in **ascending** order (PySOD's order for MSIoU, unlike the
descending 256-point F/E curves; ``t = 0`` keeps every pixel, ``t = 256`` none). Dataset values (PySOD):
means of per-image values; ``mean``/``max`` of the averaged dynamic curve.

Edge cases: empty GT: every ratio is ``(0 + 1) / (0 + 1) = 1``, score 1 whatever the prediction (as PySOD).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from ..._checks import ImageBatch
from ...ops.foreground_levels import msiou_counts
from ...ops.thresholds import adaptive_threshold
from ._extra_runner import run_raw
from ._intermediates import use_cpu_kernel
from ._prepare import prepare_maps
from .threshold_measures import check_modes

__all__ = ["multiscale_iou"]

MSIOU_MODES = ("adaptive", "dynamic", "binary")
#: thresholds of the dynamic curve per chunk (bounds the (B, T, H, W) temporaries)
_CHUNK_PIXELS = 1 << 22


def cell_sizes(num_levels: int) -> list[int]:
    """PySOD's ``np.power(2, np.linspace(0, 9, num=num_levels, dtype=int))``."""
    return [int(v) for v in np.power(2, np.linspace(0, 9, num=num_levels, dtype=int))]


def edges(mask: Tensor) -> Tensor:
    """``(Sobel_y != 0) | (Sobel_x != 0)`` of bool maps (..., H, W), zero padding, exact integer arithmetic."""
    m = F.pad(mask.to(torch.int8), (1, 1, 1, 1))
    dy = m[..., 2:, :] - m[..., :-2, :]  # (..., H, W + 2)
    sy = dy[..., :-2] + 2 * dy[..., 1:-1] + dy[..., 2:]
    dx = m[..., :, 2:] - m[..., :, :-2]  # (..., H + 2, W)
    sx = dx[..., :-2, :] + 2 * dx[..., 1:-1, :] + dx[..., 2:, :]
    return (sy != 0) | (sx != 0)


def shrink(edge: Tensor, size: int) -> Tensor:
    """Cells of ``size x size`` "on" if any pixel is (zero padding at the top/left to a multiple of ``size``)."""
    if size == 1:
        return edge
    h, w = edge.shape[-2:]
    pad_h, pad_w = (size - h % size) % size, (size - w % size) % size
    e = F.pad(edge, (pad_w, 0, pad_h, 0))
    hh, ww = e.shape[-2] // size, e.shape[-1] // size
    return e.reshape(*e.shape[:-2], hh, size, ww, size).any(dim=-1).any(dim=-2)


def _numpy_sum(terms: Tensor) -> Tensor:
    """numpy's float64 ``add.reduce`` of a short contiguous last axis (n <= 128: 8 accumulators when n >= 8)."""
    n = terms.shape[-1]
    if n < 8:
        res = terms[..., 0]
        for i in range(1, n):
            res = res + terms[..., i]
        return res
    acc = [terms[..., i] for i in range(8)]
    i = 8
    while i < n - n % 8:
        acc = [acc[j] + terms[..., i + j] for j in range(8)]
        i += 8
    res = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
    for j in range(i, n):
        res = res + terms[..., j]
    return res


def _auc(inter: Tensor, gcells: Tensor, num_levels: int) -> Tensor:
    """Scores from cell counts: ``inter`` (B, T, L) int64, ``gcells`` (B, 1, L) int64 -> (B, T) float64.

    PySOD's ratio denominators are float16 (its edge maps are float16 arrays): ``fl16(fl16(|E_s(g)|) + 1)``, which
    rounds counts above 2048 (to even) and overflows to inf (ratio 0) above 65504 -- reproduced.
    """
    den = (gcells.to(torch.float32).to(torch.float16) + 1).to(torch.float64)
    r = (inter + 1).to(torch.float64) / den
    dx = 1 / (num_levels - 1)
    return _numpy_sum(dx * (r[..., 1:] + r[..., :-1]) / 2.0)


def _scores(binary: Tensor, gt_cells: list[Tensor], sizes: list[int]) -> Tensor:
    """MSIoU of bool maps (B, T, H, W) against the GT's shrunk edge maps (B, 1, h_s, w_s) -> (B, T) float64."""
    edge = edges(binary)
    inter = torch.stack([(shrink(edge, s) & gc).sum(dim=(-2, -1)) for s, gc in zip(sizes, gt_cells, strict=True)], -1)
    gcells = torch.stack([gc.sum(dim=(-2, -1)) for gc in gt_cells], -1)
    return _auc(inter, gcells, len(sizes))


def _kernel_scores(levels: Tensor, g: Tensor, sizes: list[int], num_t: int) -> Tensor:
    """As :func:`_scores` for the maps ``levels >= t``, t < num_t, with the compiled CPU kernel -> (B, num_t)."""

    inter, gcells = msiou_counts(
        levels.to(torch.int16).contiguous().numpy(), g.contiguous().numpy(), np.asarray(sizes, dtype=np.int64), num_t
    )
    inter, gcells = torch.from_numpy(inter), torch.from_numpy(gcells)
    return _auc(inter.transpose(1, 2), gcells[:, None], len(sizes))


def msiou_of_maps(p: Tensor, g: Tensor, modes: tuple[str, ...], num_levels: int) -> dict[str, Tensor]:
    """MSIoU per mode of prepared (B, H, W) maps."""
    sizes = cell_sizes(num_levels)
    out: dict[str, Tensor] = {}
    if use_cpu_kernel(p.device):
        if "adaptive" in modes:
            out["adaptive"] = _kernel_scores(p >= adaptive_threshold(p).view(-1, 1, 1), g, sizes, 2)[:, 1]
        if "binary" in modes:
            out["binary"] = _kernel_scores(p > 0.5, g, sizes, 2)[:, 1]
        if "dynamic" in modes:
            out["dynamic"] = _kernel_scores((p * 255).to(torch.uint8), g, sizes, 257)
        return out
    g_edge = edges(g)[:, None]
    gt_cells = [shrink(g_edge, s) for s in sizes]
    if "adaptive" in modes:
        out["adaptive"] = _scores((p >= adaptive_threshold(p).view(-1, 1, 1))[:, None], gt_cells, sizes)[:, 0]
    if "binary" in modes:
        out["binary"] = _scores((p > 0.5)[:, None], gt_cells, sizes)[:, 0]
    if "dynamic" in modes:
        u = (p * 255).to(torch.uint8).to(torch.int16)[:, None]
        batch, h, w = p.shape
        step = max(1, _CHUNK_PIXELS // (batch * h * w))
        parts = []
        for start in range(0, 257, step):
            t = torch.arange(start, min(start + step, 257), device=p.device, dtype=torch.int16).view(1, -1, 1, 1)
            parts.append(_scores(u >= t, gt_cells, sizes))
        out["dynamic"] = torch.cat(parts, dim=1)
    return out


def check_msiou_args(modes: object, num_levels: object) -> tuple[str, ...]:
    """Validate ``modes`` (from :data:`MSIOU_MODES`) and ``num_levels`` (an integer >= 2)."""
    checked = check_modes(modes, MSIOU_MODES)
    if isinstance(num_levels, bool) or not isinstance(num_levels, int) or num_levels < 2:
        raise ValueError(f"Expected argument `num_levels` to be an integer >= 2, but got {num_levels!r}.")
    return checked


def multiscale_iou(
    preds: ImageBatch,
    target: ImageBatch,
    *,
    modes: str | list[str] | tuple[str, ...] = MSIOU_MODES,
    num_levels: int = 10,
    normalize: bool = True,
    validate_args: bool = True,
) -> dict[str, Tensor]:
    r"""Per-image multi-scale IoU (MSIoU) in the adaptive / dynamic / binary modes (module doc for the definition).

    .. math:: \mathrm{MSIoU} = \int_0^1 \frac{|E_s(M) \cap E_s(G)| + 1}{|E_s(G)| + 1}\,\mathrm{d}s
              \quad\text{(trapezoid rule over the } L \text{ cell sizes)}

    Reference: Ahmadzadeh et al., "Multiscale IOU: A Metric for Evaluation of Salient Object Detection with Fine
    Structures", ICIP 2021; PySODMetrics 1.6.2 ``MSIoU`` (to 1e-6).

    Args:
        preds, target: as :func:`segmetrics_torch.functional.f_measure`.
        modes: from ``("adaptive", "dynamic", "binary")``.
        num_levels: number of cell sizes ``L`` (>= 2).
        normalize, validate_args: as :func:`segmetrics_torch.functional.f_measure`.

    Returns:
        dict with ``adaptive``, ``binary`` (B,) and ``dynamic`` (B, 257) (ascending thresholds ``t = 0..256``).

    Example:
        >>> import torch
        >>> target = torch.zeros(1, 16, 16, dtype=torch.uint8); target[:, 4:12, 4:12] = 255
        >>> out = multiscale_iou(target.clone(), target, modes=["binary"])
        >>> float(out["binary"][0])
        1.0
    """
    modes = check_msiou_args(modes, num_levels)

    def fn(preds_b: Tensor, target_b: Tensor) -> dict[str, Tensor]:
        p, g = prepare_maps(preds_b, target_b, normalize)
        return msiou_of_maps(p, g, modes, num_levels)

    return run_raw(fn, preds, target, normalize=normalize, validate_args=validate_args)
