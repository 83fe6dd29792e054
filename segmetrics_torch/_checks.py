"""Shared input validation with clear messages.

Every public function and Metric of the package validates through these helpers so that bad input fails the same way
everywhere: a ``TypeError`` for a wrong type or dtype, a ``ValueError`` for a wrong shape or value, each message naming
the argument, what was expected and what was received. Checks that read tensor *values* (NaN, range, binary-ness)
synchronise a CUDA device; they run only when ``validate_args=True`` (the default), so a training loop can switch
them off.
"""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, TypeGuard, TypeVar, get_args

import numpy as np
import torch
from torch import Tensor

from ._constants import MAX_CLASSES

__all__ = [
    "BACKENDS",
    "Backend",
    "ImageBatch",
    "as_binary_mask",
    "as_image_list",
    "check_bool",
    "check_choice",
    "check_dense",
    "check_image_stack",
    "check_num_classes",
    "check_number_in",
    "check_positive_float",
    "check_probability_map",
    "check_tensor",
    "check_tolerance",
    "check_uint8_target",
]

#: an image input: a (B, H, W) / (B, 1, H, W) tensor, or a sequence of (H, W) / (1, H, W) tensors (sizes may differ)
ImageBatch = Tensor | Sequence[Tensor]


#: where an op with a compiled CPU kernel and a tensor path runs: "numba" (the kernel; CPU), "torch" (tensor code on the
#: input's device, the CUDA path) or "auto" (numba for CPU tensors, torch otherwise)
Backend = Literal["auto", "numba", "torch"]
BACKENDS: tuple[str, ...] = get_args(Backend)

_C = TypeVar("_C", bound=str)


def check_choice(value: object, name: str, choices: Iterable[_C]) -> _C:
    """Return ``value`` if it is one of the strings ``choices``, else raise ``ValueError`` naming the argument.

    ``choices`` is a tuple of strings or a ``Literal[...]`` type's ``get_args``; the message lists them in order.
    """
    options = tuple(choices)
    if isinstance(value, str) and value in options:
        return value
    raise ValueError(f"Expected `{name}` to be one of {', '.join(map(repr, options))}, but got {value!r}.")


def check_tensor(x: object, name: str) -> Tensor:
    """Return ``x`` detached from any autograd graph if it is a dense tensor with values, else raise naming the
    argument.

    Evaluation measures are called on model outputs in training loops: like torchmetrics' functional metrics they
    compute on the detached values (the number equals the detached input's). The losses, which keep the graph, use
    their input rather than this return value. A tensor on the ``meta`` device has a shape but no values: it is a
    ``ValueError``, not an internal error later; a sparse tensor (any layout but ``torch.strided``) is a
    ``TypeError``. Every family reads its tensors through this check (directly, or through :func:`tensor_items` and
    :func:`batch_items`), so the rule holds for all of them.
    """
    if not isinstance(x, Tensor):
        raise TypeError(f"Expected `{name}` to be a torch.Tensor, but got {type(x).__name__}.")
    check_dense(x, name)
    if x.is_meta:
        raise ValueError(
            f"Expected `{name}` to hold values, but got a tensor on the 'meta' device (a shape without data); "
            "move it to 'cpu' or 'cuda' first."
        )
    return x.detach()


def check_dense(x: Tensor, name: str) -> None:
    """``TypeError`` naming the argument unless the tensor ``x`` has the dense (``torch.strided``) layout: sparse
    (COO, CSR, ...) tensors lack most of the indexing and reductions every family uses, and were refused only as a
    backend's ``NotImplementedError`` deep in a measure. Part of :func:`check_tensor`; :func:`batch_items` applies
    it to a whole batch before splitting it."""
    if x.layout != torch.strided:
        raise TypeError(
            f"Expected `{name}` to be a dense tensor (layout torch.strided), but got a tensor of layout {x.layout} "
            "(sparse); pass `x.to_dense()`."
        )


def as_binary_mask(x: Tensor, name: str, validate_args: bool = True) -> Tensor:
    """``x`` as a bool tensor: bool as is; integer / floating tensors must hold only 0 and 1 (checked when
    ``validate_args``; this synchronises a CUDA device); complex dtypes are rejected."""
    if x.dtype == torch.bool:
        return x
    if x.is_complex():
        raise TypeError(f"Expected `{name}` to be bool or a {{0, 1}} tensor, but got dtype {x.dtype}.")
    if validate_args and x.numel() and not bool(((x == 0) | (x == 1)).all()):
        if x.is_floating_point() and not bool(torch.isfinite(x).all()):
            raise ValueError(f"Expected `{name}` to be boolean (bool, or only 0 and 1), but it contains NaN or inf.")
        raise ValueError(
            f"Expected `{name}` to be boolean (bool, or only 0 and 1), but it holds other values "
            f"(range [{float(x.min()):g}, {float(x.max()):g}])."
        )
    return x != 0


def check_uint8_target(target: Tensor, name: str) -> None:
    """Reject a uint8 ground truth whose images hold only 0 and 1 (at least one 1): binarised ``> 128`` as an 8-bit
    image it would be all background, a silently wrong score, while its author meant a {0, 1} mask. Reads values
    (synchronises a CUDA device): call it only when ``validate_args``."""
    if target.dtype != torch.uint8 or not target.numel():
        return
    rows = target.shape[0] if target.ndim >= 3 else 1
    if target.device.type == "cpu":  # numpy: torch's threaded reduction stalls on a busy machine (same values)
        one = bool((target.detach().numpy().reshape(rows, -1).max(axis=1) == 1).any())
    else:
        one = bool((target.reshape(rows, -1).amax(dim=1) == 1).any())
    if one:
        raise ValueError(
            f"Expected `{name}` of dtype uint8 to be an 8-bit mask (0 / 255, foreground > 128), but an image holds "
            "only 0 and 1, which would read as an empty mask. Pass it as bool (`target.bool()`) or scale it to "
            "0/255 (`target * 255`)."
        )


def check_bool(value: object, name: str) -> bool:
    """``value`` if it is a bool, else ``TypeError`` naming the argument (``bool("no")`` is True: no coercion)."""
    if not isinstance(value, bool):
        raise TypeError(f"Expected argument `{name}` to be a bool, but got {value!r}.")
    return value


def check_num_classes(value: object, minimum: int, what: str = "") -> int:
    """``value`` if it is an int in ``[minimum, MAX_CLASSES]`` (not a bool), else ``ValueError`` naming
    ``num_classes`` (``what``: a note on the accepted values, e.g. " (or None for binary masks)")."""
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= MAX_CLASSES:
        raise ValueError(
            f"Expected `num_classes` to be an integer in [{minimum}, {MAX_CLASSES}]{what}, but got {value!r}."
        )
    return value


def check_positive_float(value: object, name: str) -> float:
    """``value`` as a float if it is a finite number > 0 (Python's or numpy's, not a bool), else ``ValueError``
    naming the argument."""
    number = float(value) if _is_number(value) else math.nan
    if not 0 < number < math.inf:
        raise ValueError(f"Expected argument `{name}` to be a finite positive number, but got {value!r}.")
    return number


def check_number_in(value: object, name: str, low: float, high: float, expected: str | None = None) -> float:
    """``value`` as a float if it is a number (Python's or numpy's, not a bool) in the closed interval
    [``low``, ``high``], else ``ValueError`` naming the argument; ``expected`` words the accepted values in the
    message (default "a number in [low, high]")."""
    number = float(value) if _is_number(value) else math.nan
    if not low <= number <= high:
        words = expected or f"a number in [{low:g}, {high:g}]"
        raise ValueError(f"Expected `{name}` to be {words}, but got {value!r}.")
    return number


def with_defaults(
    function: str, options: Mapping[str, object], defaults: Mapping[str, Any], named: Iterable[str] = ()
) -> dict[str, Any]:
    """``options`` over ``defaults``; a key that ``defaults`` lacks is the ``TypeError`` Python raises for an
    unexpected keyword of ``function``, with the nearest of its keywords (``defaults`` and the ones it ``named`` in
    its signature) as a hint."""
    check_keywords(function, options, [*defaults, *named], known=defaults)
    return {**defaults, **options}


def check_keywords(
    function: str, given: Iterable[str], candidates: Iterable[str], *, known: Iterable[str] | None = None
) -> None:
    """The ``TypeError`` Python raises for an unexpected keyword of ``function``, with the nearest of
    ``candidates`` (every keyword it takes) as a hint: raised for the first of ``given`` not in ``known`` (default:
    ``candidates``)."""
    candidates = list(candidates)
    accepted = set(candidates if known is None else known)
    for key in given:
        if key not in accepted:
            near = difflib.get_close_matches(key, candidates, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise TypeError(f"{function}() got an unexpected keyword argument {key!r}{hint}")


def check_numbers_per(value: object, n: int, name: str, each: str, *, zero_ok: bool) -> list[float]:
    """``value`` (a number, or a sequence or 1-D tensor of one or ``n`` numbers, one per ``each``) as ``n`` finite
    floats > 0 (>= 0 with ``zero_ok``); ``TypeError`` / ``ValueError`` naming the argument otherwise."""
    if isinstance(value, (Tensor, np.ndarray)):  # a NIfTI header's zooms may come as an array
        if value.ndim > 1:
            raise ValueError(
                f"Expected `{name}` to be a number or 1-D, but got a tensor of shape {tuple(value.shape)}."
            )
        value = value.tolist()
    values = [value] if _is_number(value) else value
    if not isinstance(values, Sequence) or isinstance(values, (str, bytes)):
        raise TypeError(
            f"Expected `{name}` to be a number or a sequence of numbers (one per {each}), but got {value!r}."
        )
    if len(values) == 1:
        values = list(values) * n
    if len(values) != n:
        raise ValueError(
            f"Expected `{name}` to have one entry per {each} ({n}) or be a single number, but got {len(values)} "
            f"entries: {value!r}."
        )
    bound = "a finite number >= 0" if zero_ok else "a finite positive number"
    out = [float(v) if _is_number(v) else math.nan for v in values]
    for v in out:
        if not (0 <= v if zero_ok else 0 < v) or not v < math.inf:
            raise ValueError(f"Expected every entry of `{name}` to be {bound}, but got {value!r}.")
    return out


def _is_number(value: object) -> TypeGuard[numbers.Real]:
    """A real number, numpy's too (nibabel's zooms are numpy float32, a percentile may be ``np.int64``), but not a
    bool: the one test of "a number" behind :func:`check_numbers_per`, :func:`check_positive_float` and
    :func:`check_number_in`."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def check_positive_counts(value: object, name: str, expected: str) -> Tensor:
    """``value`` (a number, a sequence of them or a tensor) as a (L,) int64 tensor of whole numbers >= 1, at least
    one; else a ValueError ``Expected `name` to be {expected}, but got ...``.

    Python floats are read in float64 whatever the default dtype (a Lightning ``"bf16-true"`` step sets bfloat16:
    ``1001.0`` would read 1000), so a whole float is never rounded to another whole number."""
    try:
        raw = torch.as_tensor(value, dtype=torch.float64 if _holds_floats(value) else None).flatten()
    except (TypeError, ValueError, RuntimeError):
        raw = None
    if (
        raw is None
        or raw.numel() == 0
        or raw.dtype == torch.bool
        or raw.is_complex()
        or (raw.is_floating_point() and not bool((torch.isfinite(raw) & (raw == raw.floor())).all()))
        or bool((raw < 1).any())
    ):
        raise ValueError(f"Expected `{name}` to be {expected}, but got {value!r}.")
    return raw.to(torch.int64)


def _holds_floats(value: object) -> bool:
    """Whether ``value`` is a Python float or a (nested) sequence holding one (not a tensor or an array: those keep
    their own dtype)."""
    if isinstance(value, float):
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_floats(v) for v in value)
    return False


def check_tolerance(pixels: float, value: float, name: str, height: int, width: int) -> float:
    """The tolerance ``pixels`` (from argument ``name`` = ``value``), capped at the image diagonal.

    Two pixels of an H x W image are at most ``hypot(H - 1, W - 1) < hypot(H, W)`` apart, so a radius beyond the
    diagonal reaches exactly the pixels the diagonal reaches: the cap changes no count, no match and no dilation, and
    keeps the offset tables sized by the image (``max_dist=1e6`` asked for terabytes). A fixed pixel tolerance thus
    also works on an image smaller than it (``bound_th=3`` on a 2x2 mask, as the DAVIS code).
    """
    del value, name  # kept for the callers' signature: a cap, not an error
    return min(pixels, math.hypot(height, width))


def check_probability_map(x: Tensor, name: str) -> None:
    """Raise ``ValueError`` unless every value of the floating tensor ``x`` is finite and in [0, 1] (syncs)."""
    if x.device.type == "cpu" and x.dtype in (torch.float16, torch.float32, torch.float64) and x.numel():
        # numpy on the host: torch's threaded reductions stall on a busy machine (same checks, same values)
        a = x.detach().numpy()
        if not np.isfinite(a).all():
            raise ValueError(f"Expected `{name}` to contain only finite values, but it contains NaN or inf.")
        lo, hi = float(a.min()), float(a.max())
    else:
        if not bool(torch.isfinite(x).all()):
            raise ValueError(f"Expected `{name}` to contain only finite values, but it contains NaN or inf.")
        lo, hi = float(x.min()), float(x.max())
    if lo < 0 or hi > 1:
        # negative values are logits (a network's raw output); values above 1 only, a 0..255 map given as floats
        hint = (
            "These look like logits: apply a sigmoid first (torch.sigmoid)."
            if lo < 0
            else "Pass uint8 maps (0..255) or divide by 255 first."
        )
        raise ValueError(f"Expected floating `{name}` to lie in [0, 1], but got values in [{lo:g}, {hi:g}]. {hint}")


def check_image_stack(x: Tensor, name: str) -> Tensor:
    """Return ``x`` as (B, H, W): accepts (B, H, W) or (B, 1, H, W); rejects anything else and empty batches."""
    if x.ndim == 4 and x.shape[1] == 1:
        x = x[:, 0]
    if x.ndim != 3:
        # the hint fits the shape: a channel dimension is not a missing batch dimension
        if x.ndim == 4:
            hint = (
                f"It has {x.shape[1]} channels: pass one map per image, (B, H, W) or (B, 1, H, W) (for one-hot or "
                "per-class scores, the foreground channel, or `x.argmax(1)` for a label map)."
            )
        elif x.ndim == 2:
            hint = "Use `x.unsqueeze(0)` for a single image."
        else:
            hint = "Pass a batch of maps, or a list of (H, W) tensors for images of different sizes."
        raise ValueError(
            f"Expected `{name}` of shape (B, H, W) or (B, 1, H, W), but got shape {tuple(x.shape)}. {hint}"
        )
    if x.shape[0] == 0:
        raise ValueError(f"Expected `{name}` to hold at least one image, but got an empty batch {tuple(x.shape)}.")
    if x.shape[1] == 0 or x.shape[2] == 0:
        raise ValueError(f"Expected `{name}` to have non-empty images, but got shape {tuple(x.shape)}.")
    return x


def tensor_items(x: object, name: str) -> list[Tensor]:
    """The tensors of a list/tuple input ``x``, each checked by :func:`check_tensor` as ``name[i]``.

    Raises:
        TypeError: ``x`` is not a list or tuple (or an item is not a tensor).
        ValueError: an empty list.
    """
    if not isinstance(x, Sequence) or isinstance(x, (str, bytes)):
        raise TypeError(f"Expected `{name}` to be a torch.Tensor or a list of tensors, but got {type(x).__name__}.")
    if len(x) == 0:
        raise ValueError(f"Expected `{name}` to hold at least one image, but got an empty list.")
    return [check_tensor(item, f"{name}[{i}]") for i, item in enumerate(x)]


def batch_items(x: object, name: str, ndim: int, layout: str) -> list[Tensor]:
    """The images of a batch: a tensor of ``ndim + 1`` dims split along its first (``layout`` names that shape in the
    error), or the tensors of a list (:func:`tensor_items`); an empty batch is a ``ValueError``."""
    if not isinstance(x, Tensor):
        return tensor_items(x, name)
    check_dense(x, name)  # the images themselves go through check_tensor, which names each
    if x.ndim != ndim + 1:
        raise ValueError(f"Expected `{name}` {layout} or a list, but got shape {tuple(x.shape)}.")
    if x.shape[0] == 0:
        raise ValueError(f"Expected `{name}` to hold at least one image, but got an empty batch.")
    return list(x.unbind(0))


def as_image_list(x: object, name: str) -> list[Tensor] | None:
    """Return the images of a list/tuple input as a list of (H, W) tensors, or None if ``x`` is a tensor."""
    if isinstance(x, Tensor):
        return None
    out = []
    for i, item in enumerate(tensor_items(x, name)):
        if item.ndim == 3 and item.shape[0] == 1:
            item = item[0]
        if item.ndim != 2:
            raise ValueError(f"Expected `{name}[{i}]` of shape (H, W) or (1, H, W), but got {tuple(item.shape)}.")
        out.append(item)
    return out
