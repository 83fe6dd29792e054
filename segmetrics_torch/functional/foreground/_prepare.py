"""Input preparation for foreground maps, exactly as PySODMetrics 1.6.2 (``utils.prepare_data``), batched.

Convention:
    * ``preds`` uint8 (0..255): ``p = preds / 255`` in float64. Floating ``preds`` must lie in [0, 1] and are taken as
      that quotient already (cast to float64). bool ``preds`` are binary maps {0, 1}.
    * ``normalize=True`` (default): per image, ``p = (p - min p) / (max p - min p)`` in float64, in this order, unless
      the map is constant (a constant map is *not* stretched: a constant 100 stays 100/255). This is MATLAB's
      ``mapminmax(im2double(...))`` as the reference toolboxes apply it.
    * ``target`` uint8 is binarised ``> 128`` (ground truth read from an 8-bit image); bool is used as is; any other
      dtype must hold only 0 and 1. This does not depend on ``normalize``.

Inputs are (B, H, W) or (B, 1, H, W) tensors, or lists of (H, W) / (1, H, W) tensors whose sizes may differ: images
of one size are stacked and evaluated together. On CPU, batches are processed a few images at a time: float64
temporaries of a whole large batch fall out of cache and cost 10-30x more per image than small blocks.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from ..._checks import as_image_list, check_image_stack, check_probability_map, check_tensor

__all__ = ["prepare_maps", "run_per_image"]

# pixels per block on CPU: small enough for float64 temporaries to stay in cache
_CPU_BLOCK_PIXELS = 1 << 17


def _check_dtypes(preds: Tensor, target: Tensor, pname: str, tname: str) -> None:
    if not (preds.dtype in (torch.uint8, torch.bool) or preds.is_floating_point()):
        raise TypeError(
            f"Expected `{pname}` to be uint8 (0..255), bool or floating in [0, 1], but got dtype {preds.dtype}."
        )
    if target.is_complex() or not (target.dtype == torch.bool or target.dtype.is_floating_point or _is_int(target)):
        raise TypeError(f"Expected `{tname}` to be bool, uint8 or a {{0, 1}} tensor, but got dtype {target.dtype}.")


def _is_int(x: Tensor) -> bool:
    return not x.dtype.is_floating_point and not x.is_complex() and x.dtype != torch.bool


def _check_values(preds: Tensor, target: Tensor, pname: str, tname: str) -> None:
    """Value checks (these synchronise a CUDA device)."""
    if preds.is_floating_point():
        check_probability_map(preds, pname)
    if target.dtype not in (torch.bool, torch.uint8) and not bool(((target == 0) | (target == 1)).all()):
        raise ValueError(
            f"Expected `{tname}` of dtype {target.dtype} to be binary (only 0 and 1), but it holds other values. "
            "Binarise it, or pass an 8-bit image as uint8 (binarised > 128)."
        )


def prepare_maps(preds: Tensor, target: Tensor, normalize: bool = True) -> tuple[Tensor, Tensor]:
    """(B, H, W) inputs -> (p float64 in [0, 1], g bool), as PySODMetrics' ``prepare_data`` (see module doc)."""
    if preds.dtype == torch.uint8:
        p = preds.to(torch.float64) / 255
    else:
        p = preds.to(torch.float64)
    if normalize:
        lo = p.amin(dim=(1, 2), keepdim=True)
        hi = p.amax(dim=(1, 2), keepdim=True)
        stretch = hi != lo
        # constant maps: (p - 0) / 1 == p exactly, so one expression serves both cases without a host sync
        p = (p - torch.where(stretch, lo, 0.0)) / torch.where(stretch, hi - lo, 1.0)
    if target.dtype == torch.bool:
        g = target
    elif target.dtype == torch.uint8:
        g = target > 128
    else:
        g = target > 0.5
    return p, g


def _blocks(batch: int, height: int, width: int, device: torch.device) -> list[slice]:
    if device.type != "cpu":
        return [slice(0, batch)]
    step = max(1, _CPU_BLOCK_PIXELS // (height * width))
    return [slice(i, min(i + step, batch)) for i in range(0, batch, step)]


def _run_stack(fn: Callable[[Tensor, Tensor], dict[str, Tensor]], preds: Tensor, target: Tensor, normalize: bool):
    parts: list[dict[str, Tensor]] = []
    for block in _blocks(preds.shape[0], preds.shape[1], preds.shape[2], preds.device):
        p, g = prepare_maps(preds[block], target[block], normalize)
        parts.append(fn(p, g))
    if len(parts) == 1:
        return parts[0]
    return {key: torch.cat([part[key] for part in parts]) for key in parts[0]}


def run_per_image(
    fn: Callable[[Tensor, Tensor], dict[str, Tensor]],
    preds: Tensor | list[Tensor],
    target: Tensor | list[Tensor],
    *,
    normalize: bool = True,
    validate_args: bool = True,
    names: tuple[str, str] = ("preds", "target"),
) -> dict[str, Tensor]:
    """Validate and prepare ``preds``/``target``, apply ``fn(p, g)`` per block, return per-image results in order.

    ``fn`` maps prepared (b, H, W) maps to a dict of tensors whose first dimension is b.
    """
    pname, tname = names
    if not isinstance(normalize, bool):
        raise TypeError(f"Expected argument `normalize` to be a bool, but got {normalize!r}.")
    plist, tlist = as_image_list(preds, pname), as_image_list(target, tname)
    if (plist is None) != (tlist is None):
        raise TypeError(f"Expected `{pname}` and `{tname}` to be both tensors or both lists of tensors.")
    if plist is None:
        preds = check_image_stack(check_tensor(preds, pname), pname)
        target = check_image_stack(check_tensor(target, tname), tname)
        if preds.shape != target.shape:
            raise ValueError(
                f"Expected `{pname}` and `{tname}` to have the same shape, but got {tuple(preds.shape)} and "
                f"{tuple(target.shape)}."
            )
        if preds.device != target.device:
            raise ValueError(f"Expected `{pname}` and `{tname}` on one device, got {preds.device} and {target.device}.")
        _check_dtypes(preds, target, pname, tname)
        if validate_args:
            _check_values(preds, target, pname, tname)
        return _run_stack(fn, preds, target, normalize)

    if len(plist) != len(tlist):
        raise ValueError(f"Expected as many `{tname}` as `{pname}` images, but got {len(tlist)} and {len(plist)}.")
    groups: dict[tuple, list[int]] = {}
    for i, (p, t) in enumerate(zip(plist, tlist, strict=True)):
        if p.shape != t.shape:
            raise ValueError(
                f"Expected `{pname}[{i}]` and `{tname}[{i}]` to have the same shape, but got {tuple(p.shape)} and "
                f"{tuple(t.shape)}."
            )
        if p.shape[0] == 0 or p.shape[1] == 0:
            raise ValueError(f"Expected `{pname}[{i}]` to be a non-empty image, but got shape {tuple(p.shape)}.")
        _check_dtypes(p, t, f"{pname}[{i}]", f"{tname}[{i}]")
        groups.setdefault((tuple(p.shape), p.dtype, t.dtype, p.device), []).append(i)
    results: dict[str, Tensor] | None = None
    for indices in groups.values():
        p = torch.stack([plist[i] for i in indices])
        t = torch.stack([tlist[i] for i in indices])
        if validate_args:
            _check_values(p, t, f"{pname}[{indices[0]}..]", f"{tname}[{indices[0]}..]")
        out = _run_stack(fn, p, t, normalize)
        if results is None:
            results = {k: v.new_empty((len(plist), *v.shape[1:])) for k, v in out.items()}
        index = torch.tensor(indices, device=p.device)
        for k, v in out.items():
            results[k][index] = v
    assert results is not None
    return results
