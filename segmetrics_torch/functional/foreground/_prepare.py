"""Input preparation for foreground maps, exactly as PySODMetrics 1.6.2 (``utils.prepare_data``), batched.

Convention:
    * ``preds`` uint8 (0..255): ``p = preds / 255`` in float64. Floating ``preds`` must lie in [0, 1] and are taken as
      that quotient already (cast to float64). bool ``preds`` are binary maps {0, 1}.
    * ``normalize=True`` (default): per image, ``p = (p - min p) / (max p - min p)`` in float64, in this order, unless
      the map is constant (a constant map is *not* stretched: a constant 100 stays 100/255). This is MATLAB's
      ``mapminmax(im2double(...))`` as the reference toolboxes apply it.
    * ``target`` uint8 is binarised ``> 128`` (ground truth read from an 8-bit image); bool is used as is; any other
      dtype must hold only 0 and 1. This does not depend on ``normalize``. A uint8 target image holding only 0 and
      1 (at least one 1) is a ``ValueError`` when values are validated: read ``> 128`` it would be empty, which is
      never what a {0, 1} mask's author meant (pass bool, or 0/255).

The batching (stacks, lists of differently sized maps, blocks) and the CPU-kernel / tensor-path dispatch are in
:mod:`._intermediates`.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ..._checks import check_probability_map, check_uint8_target
from ...ops.device_exact import divide_exactly

__all__ = ["binarize_target", "check_dtypes", "check_values", "prepare_maps"]


def check_dtypes(preds: Tensor, target: Tensor, pname: str, tname: str) -> None:
    if not (preds.dtype in (torch.uint8, torch.bool) or preds.is_floating_point()):
        raise TypeError(
            f"Expected `{pname}` to be uint8 (0..255), bool or floating in [0, 1], but got dtype {preds.dtype}."
        )
    if target.is_complex():  # bool, integer and floating targets are accepted (non-uint8 ones validated {0, 1})
        raise TypeError(f"Expected `{tname}` to be bool, uint8 or a {{0, 1}} tensor, but got dtype {target.dtype}.")


def check_values(preds: Tensor, target: Tensor, pname: str, tname: str) -> None:
    """Value checks (these synchronise a CUDA device)."""
    if preds.is_floating_point():
        check_probability_map(preds, pname)
    check_uint8_target(target, tname)
    if target.dtype not in (torch.bool, torch.uint8) and not bool(((target == 0) | (target == 1)).all()):
        raise ValueError(
            f"Expected `{tname}` of dtype {target.dtype} to be binary (only 0 and 1), but it holds other values. "
            "Binarise it, or pass an 8-bit image as uint8 (binarised > 128)."
        )


def prepare_maps(preds: Tensor, target: Tensor, normalize: bool = True) -> tuple[Tensor, Tensor]:
    """(B, H, W) inputs -> (p float64 in [0, 1], g bool), as PySODMetrics' ``prepare_data`` (see module doc)."""
    if preds.dtype == torch.uint8:
        p = divide_exactly(preds.to(torch.float64), 255)
    else:
        p = preds.to(torch.float64)
    if normalize:
        lo = p.amin(dim=(1, 2), keepdim=True)
        hi = p.amax(dim=(1, 2), keepdim=True)
        stretch = hi != lo
        # constant maps: (p - 0) / 1 == p exactly, so one expression serves both cases without a host sync
        p = (p - torch.where(stretch, lo, 0.0)) / torch.where(stretch, hi - lo, 1.0)
    return p, binarize_target(target)


def binarize_target(target: Tensor) -> Tensor:
    """Ground truth as bool: uint8 ``> 128``, bool as is, other dtypes ``> 0.5`` (validated to be {0, 1})."""
    if target.dtype == torch.bool:
        return target
    if target.dtype == torch.uint8:
        return target > 128
    return target > 0.5
