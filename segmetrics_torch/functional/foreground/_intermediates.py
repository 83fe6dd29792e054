"""The shared intermediates of the foreground measures and the one place that decides how they are computed.

Every foreground measure derives from :class:`ForegroundIntermediates` of a block of images (the shared pass of
principle 2): the adaptive-threshold and 256-threshold confusion counts, MAE and, when asked by
:class:`MeasureOptions`, the S-measure and the weighted F-measure. :func:`measure_values` computes them for one block,
either with the compiled CPU kernel (:func:`segmetrics_torch.ops.foreground.foreground_statistics`, for CPU tensors)
or with the tensor path (:mod:`._tensor_path`, any device: the CUDA path), as :func:`use_cpu_kernel` (that is,
:func:`segmetrics_torch.ops.backend.compiled_kernels`) says; :func:`run_per_image` validates the
inputs, splits them into blocks (images of one size stacked; on CPU a few images at a time: float64 temporaries of a
whole large batch fall out of cache and cost 10-30x more per image than small blocks) and maps a ``derive`` function
over them.

Import direction: the measure modules (:mod:`.mae`, :mod:`.overlap`, :mod:`.enhanced_alignment`,
:mod:`.structure_measure`, :mod:`.weighted_fmeasure`, :mod:`.suite`) import this module; it imports only
:mod:`._prepare`, :mod:`._tensor_path` and ``ops``. The few helpers that both those modules and the MATLAB-toolbox
protocol (:mod:`.matlab_toolbox`, which every measure function serves with ``protocol=``) need live here
(:func:`e_from_counts`, :func:`add_sums`, :func:`check_edt_backend`), so that :mod:`.matlab_toolbox` imports no
measure module and the measure modules can import it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

import torch
from torch import Tensor

from ..._checks import Backend, ImageBatch, as_image_list, check_bool, check_choice, check_image_stack, check_tensor
from ..._constants import EPS
from ...ops.backend import compiled_kernels
from ...ops.distance import distance_transform_edt
from ...ops.foreground import foreground_statistics
from ...ops.thresholds import BinaryCounts
from ._prepare import binarize_target, check_dtypes, check_values, prepare_maps
from ._tensor_path import all_counts, mae_of_maps, s_measure_of_maps, weighted_f_measure_of_maps

__all__ = [
    "EdtBackend",
    "EmptyQuadrant",
    "ForegroundIntermediates",
    "MeasureOptions",
    "add_sums",
    "check_edt_backend",
    "e_from_counts",
    "measure_values",
    "run_per_image",
    "use_cpu_kernel",
]

#: the S-measure's treatment of an empty region quadrant (see :mod:`.structure_measure`)
EmptyQuadrant = Literal["nan", "skip"]
#: the distance-transform backend of the weighted F-measure (see :func:`segmetrics_torch.ops.distance_transform_edt`)
EdtBackend = Backend


def check_edt_backend(edt_backend: object) -> None:
    """Validate the distance-transform backend ("auto", "numba" or "torch")."""
    check_choice(edt_backend, "edt_backend", get_args(EdtBackend))


def _phi(a: Tensor, c: Tensor) -> Tensor:
    xi = 2 * (a * c) / (a * a + c * c + EPS)
    return (xi + 1) ** 2 / 4


def e_from_counts(counts: BinaryCounts) -> Tensor:
    """E-measure from binary confusion counts (the closed form of :mod:`.enhanced_alignment`); shape of
    ``counts.tp`` ((B,) or (B, 256))."""
    tp, fp, fn, tn = counts.expand()
    n = counts.numel
    pos = counts.pos if tp.ndim == 1 else counts.pos[:, None]
    mu_fm = counts.pp / n
    mu_g = pos / n
    fm_fg, fm_bg = 1 - mu_fm, -mu_fm
    g_fg, g_bg = 1 - mu_g, -mu_g
    total = tp * _phi(fm_fg, g_fg) + fp * _phi(fm_fg, g_bg) + fn * _phi(fm_bg, g_fg) + tn * _phi(fm_bg, g_bg)
    total = torch.where(pos == 0, n - counts.pp, torch.where(pos == n, counts.pp, total))
    return total / (n - 1 + EPS)


def add_sums(state: Any, names: Sequence[str], values: Mapping[str, Tensor]) -> None:
    """Add a batch's per-image ``values`` to ``state``: ``state.{name}_sum += values[name].sum(0)`` for each name (on
    the state's device, in its dtype) and ``state.count += B``. The one update of every foreground accumulator:
    :class:`~segmetrics_torch.functional.ForegroundSums`, the toolbox's ``ToolboxSums`` and the foreground Metrics
    (whose torchmetrics states carry the same names)."""
    for name in names:
        total = getattr(state, f"{name}_sum")
        setattr(state, f"{name}_sum", total + values[name].sum(dim=0).to(total.device, total.dtype))
    state.count += next(iter(values.values())).shape[0]


# pixels per block on CPU for the tensor path: small enough for float64 temporaries to stay in cache
_CPU_BLOCK_PIXELS = 1 << 17
# pixels per block for the compiled kernel: bounds the distance transform's 16 bytes per pixel
_KERNEL_BLOCK_PIXELS = 1 << 22


@dataclass(frozen=True)
class MeasureOptions:
    """What :func:`measure_values` computes beyond counts and MAE, and the measures' parameters."""

    s_measure: bool = False
    weighted_f: bool = False
    alpha: float = 0.5
    empty_quadrant: EmptyQuadrant = "nan"
    wf_beta2: float = 1.0
    edt_backend: EdtBackend = "auto"
    #: ``False``: the caller reads only the S-measure / weighted F; the compiled kernel may then skip the counts and
    #: MAE (``adaptive``, ``curve`` and ``mae`` of the intermediates are then not meaningful)
    counts: bool = True


@dataclass(frozen=True)
class ForegroundIntermediates:
    """The shared intermediates of a block of B images; every foreground measure is a function of these.

    Attributes:
        adaptive: :class:`~segmetrics_torch.ops.thresholds.BinaryCounts` of the adaptive binary map, (B,).
        curve: :class:`~segmetrics_torch.ops.thresholds.BinaryCounts` at the 256 thresholds, (B, 256).
        mae: (B,) mean absolute error.
        s_measure: (B,) S-measure, or None unless ``MeasureOptions.s_measure``.
        weighted_f_measure: (B,) weighted F-measure, or None unless ``MeasureOptions.weighted_f``.
    """

    adaptive: BinaryCounts
    curve: BinaryCounts
    mae: Tensor
    s_measure: Tensor | None = None
    weighted_f_measure: Tensor | None = None


def use_cpu_kernel(device: torch.device) -> bool:
    """Whether the foreground family computes tensors on ``device`` with its compiled CPU kernels (the fused
    :func:`~segmetrics_torch.ops.foreground.foreground_statistics` and the others of ``ops``) or with the tensor
    path: the answer of :func:`segmetrics_torch.ops.backend.compiled_kernels`, asked here for every measure of the
    family, so that they all take one path and ``use_backend("tensor")`` moves them together (the tests run the
    CUDA path on CPU tensors that way). A module-level read per call: no host synchronisation."""
    return compiled_kernels(device)


def kernel_intermediates(preds: Tensor, g: Tensor, normalize: bool, options: MeasureOptions) -> ForegroundIntermediates:
    """The intermediates of raw (unprepared) CPU ``preds`` and bool ground truth ``g`` from the compiled kernel."""
    distance = None
    if options.weighted_f and options.edt_backend == "torch":
        distance = distance_transform_edt(g, backend="torch")
    stats = foreground_statistics(
        preds,
        g,
        normalize=normalize,
        s_measure=options.s_measure,
        alpha=options.alpha,
        skip_empty_quadrant=options.empty_quadrant == "skip",
        weighted_f=options.weighted_f,
        wf_beta2=options.wf_beta2,
        distance=distance,
        counts=options.counts,
    )
    cum = stats.histogram.flip(-1).cumsum(-1).to(torch.float64)  # [:, :, i]: pixels with bin >= 255 - i
    numel = preds.shape[1] * preds.shape[2]
    return ForegroundIntermediates(
        adaptive=BinaryCounts(tp=stats.tp_adaptive, pp=stats.pp_adaptive, pos=stats.pos, numel=numel),
        curve=BinaryCounts(tp=cum[:, 1], pp=cum[:, 1] + cum[:, 0], pos=stats.pos, numel=numel),
        mae=stats.mae,
        s_measure=stats.s_measure,
        weighted_f_measure=stats.weighted_f_measure,
    )


def tensor_intermediates(p: Tensor, g: Tensor, options: MeasureOptions) -> ForegroundIntermediates:
    """The intermediates of prepared (B, H, W) maps with tensor operations (any device)."""
    adaptive, curve = all_counts(p, g)
    return ForegroundIntermediates(
        adaptive=adaptive,
        curve=curve,
        mae=mae_of_maps(p, g),
        s_measure=s_measure_of_maps(p, g, options.alpha, options.empty_quadrant) if options.s_measure else None,
        weighted_f_measure=(
            weighted_f_measure_of_maps(p, g, options.wf_beta2, options.edt_backend) if options.weighted_f else None
        ),
    )


def measure_values(preds: Tensor, target: Tensor, normalize: bool, options: MeasureOptions) -> ForegroundIntermediates:
    """The shared intermediates of one block: the compiled kernel for CPU tensors, the tensor path otherwise."""
    if use_cpu_kernel(preds.device):
        return kernel_intermediates(preds, binarize_target(target), normalize, options)
    p, g = prepare_maps(preds, target, normalize)
    return tensor_intermediates(p, g, options)


def _blocks(batch: int, height: int, width: int, device: torch.device, kernel: bool) -> list[slice]:
    if device.type != "cpu":
        return [slice(0, batch)]
    step = max(1, (_KERNEL_BLOCK_PIXELS if kernel else _CPU_BLOCK_PIXELS) // (height * width))
    return [slice(i, min(i + step, batch)) for i in range(0, batch, step)]


#: maps the intermediates of a block of b images to a dict of tensors whose first dimension is b
Derive = Callable[[ForegroundIntermediates], dict[str, Tensor]]


def _run_stack(
    derive: Derive, preds: Tensor, target: Tensor, normalize: bool, options: MeasureOptions
) -> dict[str, Tensor]:
    parts: list[dict[str, Tensor]] = []
    kernel = use_cpu_kernel(preds.device)
    for block in _blocks(preds.shape[0], preds.shape[1], preds.shape[2], preds.device, kernel):
        parts.append(derive(measure_values(preds[block], target[block], normalize, options)))
    if len(parts) == 1:
        return parts[0]
    return {key: torch.cat([part[key] for part in parts]) for key in parts[0]}


def run_per_image(
    derive: Derive,
    preds: ImageBatch,
    target: ImageBatch,
    *,
    normalize: bool = True,
    validate_args: bool = True,
    options: MeasureOptions | None = None,
    names: tuple[str, str] = ("preds", "target"),
) -> dict[str, Tensor]:
    """Validate ``preds``/``target``, compute :func:`measure_values` per block, return ``derive(values)`` in order.

    ``derive`` maps the :class:`ForegroundIntermediates` of a block of b images to a dict of tensors whose first
    dimension is b.
    """
    options = MeasureOptions() if options is None else options
    check_bool(normalize, "normalize")
    return run_grouped(
        lambda p, t, indices, n: _run_stack(derive, p, t, normalize, options),
        preds,
        target,
        validate_args=validate_args,
        names=names,
    )


def run_grouped(
    run: Callable[[Tensor, Tensor, list[int] | None, int], dict[str, Tensor]],
    preds: ImageBatch,
    target: ImageBatch,
    *,
    validate_args: bool = True,
    names: tuple[str, str] = ("preds", "target"),
) -> dict[str, Tensor]:
    """The one validate-and-group step of the foreground functions: check ``preds``/``target`` (a (B, H, W) or
    (B, 1, H, W) stack, or lists of (H, W) / (1, H, W) images of any sizes; shapes, dtypes, devices, and values
    unless ``validate_args`` is False), stack the list images by (shape, dtypes, device), and return
    ``run(p, t, indices, n)`` of each stack (``indices``: the stacked images' positions among the ``n`` inputs;
    None for a stack given as one) with every output's first dimension in input order.
    """
    pname, tname = names
    check_bool(validate_args, "validate_args")  # bool("no") is True: a string must not switch the checks on or off
    plist, tlist = as_image_list(preds, pname), as_image_list(target, tname)
    if (plist is None) != (tlist is None):
        raise TypeError(f"Expected `{pname}` and `{tname}` to be both tensors or both lists of tensors.")
    if plist is None or tlist is None:  # both None (checked above)
        preds = check_image_stack(check_tensor(preds, pname), pname)
        target = check_image_stack(check_tensor(target, tname), tname)
        if preds.shape != target.shape:
            raise ValueError(
                f"Expected `{pname}` and `{tname}` to have the same shape, but got {tuple(preds.shape)} and "
                f"{tuple(target.shape)}."
            )
        if preds.device != target.device:
            raise ValueError(f"Expected `{pname}` and `{tname}` on one device, got {preds.device} and {target.device}.")
        check_dtypes(preds, target, pname, tname)
        if validate_args:
            check_values(preds, target, pname, tname)
        return run(preds, target, None, preds.shape[0])

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
        check_dtypes(p, t, f"{pname}[{i}]", f"{tname}[{i}]")
        groups.setdefault((tuple(p.shape), p.dtype, t.dtype, p.device), []).append(i)
    results: dict[str, Tensor] | None = None
    for indices in groups.values():
        p = torch.stack([plist[i] for i in indices])
        t = torch.stack([tlist[i] for i in indices])
        if validate_args:
            check_values(p, t, f"{pname}[{indices[0]}..]", f"{tname}[{indices[0]}..]")
        out = run(p, t, indices, len(plist))
        if results is None:
            results = {k: v.new_empty((len(plist), *v.shape[1:])) for k, v in out.items()}
        index = torch.tensor(indices, device=p.device)
        for k, v in out.items():
            results[k][index] = v
    assert results is not None
    return results
