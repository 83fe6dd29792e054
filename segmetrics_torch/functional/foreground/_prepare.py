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

import os
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor

from ..._checks import as_image_list, check_image_stack, check_probability_map, check_tensor

__all__ = ["MeasureOptions", "binarize_target", "measure_values", "prepare_maps", "run_per_image"]

# pixels per block on CPU for the tensor path: small enough for float64 temporaries to stay in cache
_CPU_BLOCK_PIXELS = 1 << 17
# pixels per block for the compiled kernel: bounds the distance transform's 16 bytes per pixel
_KERNEL_BLOCK_PIXELS = 1 << 22
#: route CPU tensors through the compiled kernel (tests switch it off to run the tensor path on CPU)
CPU_KERNEL = True


@dataclass(frozen=True)
class MeasureOptions:
    """What :func:`measure_values` computes beyond counts and MAE, and the measures' parameters."""

    s_measure: bool = False
    weighted_f: bool = False
    alpha: float = 0.5
    empty_quadrant: str = "nan"
    wf_beta2: float = 1.0
    edt_backend: str = "auto"


def _check_dtypes(preds: Tensor, target: Tensor, pname: str, tname: str) -> None:
    if not (preds.dtype in (torch.uint8, torch.bool) or preds.is_floating_point()):
        raise TypeError(
            f"Expected `{pname}` to be uint8 (0..255), bool or floating in [0, 1], but got dtype {preds.dtype}."
        )
    if target.is_complex():  # bool, integer and floating targets are accepted (non-uint8 ones validated {0, 1})
        raise TypeError(f"Expected `{tname}` to be bool, uint8 or a {{0, 1}} tensor, but got dtype {target.dtype}.")


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
    return p, binarize_target(target)


def binarize_target(target: Tensor) -> Tensor:
    """Ground truth as bool: uint8 ``> 128``, bool as is, other dtypes ``> 0.5`` (validated to be {0, 1})."""
    if target.dtype == torch.bool:
        return target
    if target.dtype == torch.uint8:
        return target > 128
    return target > 0.5


def use_cpu_kernel(device: torch.device) -> bool:
    """Whether CPU tensors go through the compiled kernel (``SEGMETRICS_CPU_KERNEL=0`` forces the tensor path)."""
    return device.type == "cpu" and CPU_KERNEL and os.environ.get("SEGMETRICS_CPU_KERNEL", "1") != "0"


def _blocks(batch: int, height: int, width: int, device: torch.device, kernel: bool) -> list[slice]:
    if device.type != "cpu":
        return [slice(0, batch)]
    step = max(1, (_KERNEL_BLOCK_PIXELS if kernel else _CPU_BLOCK_PIXELS) // (height * width))
    return [slice(i, min(i + step, batch)) for i in range(0, batch, step)]


def measure_values(preds: Tensor, target: Tensor, normalize: bool, options: MeasureOptions) -> dict:
    """The shared intermediates of one block: counts, MAE and (if asked) S-measure and weighted F per image.

    Returns a dict with ``adaptive`` and ``curve`` (:class:`BinaryCounts`), ``mae`` and optionally ``sm``, ``wfm``
    (tensors (B,)). CPU tensors use the compiled kernel, other devices the tensor path.
    """
    if use_cpu_kernel(preds.device):
        from ._cpu_path import kernel_values

        return kernel_values(preds, binarize_target(target), normalize, options)
    from ._tensor_path import tensor_values

    p, g = prepare_maps(preds, target, normalize)
    return tensor_values(p, g, options)


def _run_stack(derive: Callable[[dict], dict[str, Tensor]], preds: Tensor, target: Tensor, normalize: bool,
               options: MeasureOptions) -> dict[str, Tensor]:  # fmt: skip
    parts: list[dict[str, Tensor]] = []
    kernel = use_cpu_kernel(preds.device)
    for block in _blocks(preds.shape[0], preds.shape[1], preds.shape[2], preds.device, kernel):
        parts.append(derive(measure_values(preds[block], target[block], normalize, options)))
    if len(parts) == 1:
        return parts[0]
    return {key: torch.cat([part[key] for part in parts]) for key in parts[0]}


def run_per_image(
    derive: Callable[[dict], dict[str, Tensor]],
    preds: Tensor | list[Tensor],
    target: Tensor | list[Tensor],
    *,
    normalize: bool = True,
    validate_args: bool = True,
    options: MeasureOptions | None = None,
    names: tuple[str, str] = ("preds", "target"),
) -> dict[str, Tensor]:
    """Validate ``preds``/``target``, compute :func:`measure_values` per block, return ``derive(values)`` in order.

    ``derive`` maps the values of a block of b images to a dict of tensors whose first dimension is b.
    """
    options = MeasureOptions() if options is None else options
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
        return _run_stack(derive, preds, target, normalize, options)

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
        out = _run_stack(derive, p, t, normalize, options)
        if results is None:
            results = {k: v.new_empty((len(plist), *v.shape[1:])) for k, v in out.items()}
        index = torch.tensor(indices, device=p.device)
        for k, v in out.items():
            results[k][index] = v
    assert results is not None
    return results
