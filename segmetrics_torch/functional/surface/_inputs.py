"""Input handling shared by the boundary-distance measures: masks or label maps to per-(image, class) binary pairs.

Every measure of the family scores each (image, class) pair as its own binary problem, as MONAI, MedPy, DeepMind and
TorchMetrics do. This module turns the accepted inputs (a (B, H, W) / (B, D, H, W) batch or a list of (H, W) /
(D, H, W) tensors, binary or label maps with ``num_classes``) into groups of same-sized boolean stacks, so that the
boundary sets of a whole group are computed with one set of tensor operations, and assembles the per-pair numbers
back into a (B,) or (B, C') float64 tensor.

It also holds the rule that tells one-hot channels from volumes under ``input_format="index"``
(:func:`_refuse_channels`, and the shape test of a channel dimension of size 1 in :func:`_images`): the shapes
(B, C, H, W) and (B, D, H, W) are the same, so the values decide.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

from segmetrics_torch._checks import (
    as_binary_mask,
    check_bool,
    check_choice,
    check_num_classes,
    check_numbers_per,
    check_tensor,
    tensor_items,
)

from ...ops.distance import spacing_scale
from .options import CONVENTIONS, DISTANCE_METRICS, INPUT_FORMATS, EmptyMaskWarning

__all__ = [
    "CONVENTIONS",
    "DISTANCE_METRICS",
    "INPUT_FORMATS",
    "EmptyMaskWarning",
    "PairGroup",
    "Pairs",
    "as_tensor_input",
    "one_hot_inputs",
    "prepare_pairs",
]


@dataclass
class PairGroup:
    """Same-sized (image, class) pairs: ``preds`` / ``target`` are (N, *spatial) bool, row ``n`` is the pair
    (``images[n]``, ``columns[n]``) of the output."""

    preds: Tensor
    target: Tensor
    images: list[int]
    columns: list[int]


@dataclass
class Pairs:
    """The prepared input: groups of pairs, the output shape and the class label of each output column."""

    groups: list[PairGroup]
    batch_size: int
    class_ids: list[int]
    binary: bool
    ndim: int
    spacing: tuple[float, ...]
    #: output columns set to NaN without computing (the class equal to ``ignore_index``)
    ignored_columns: list[int] = field(default_factory=list)
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    #: one spacing per image where the caller gave a sequence of them (MONAI's per-item form), else None
    image_spacing: list[tuple[float, ...]] | None = None

    def spacing_of(self, image: int) -> tuple[float, ...]:
        """The spacing of input image ``image``."""
        return self.spacing if self.image_spacing is None else self.image_spacing[image]

    def finish(self, out: Tensor) -> Tensor:
        """(B, C') float64 on the input's device; (B,) for binary input."""
        out = out.to(self.device)
        return out[:, 0] if self.binary else out


def _from_numpy(x: np.ndarray) -> Tensor:
    """A numpy array as the tensor of its values (bool, integer or floating; unsigned types torch lacks widened)."""
    if x.dtype.kind not in "biuf":
        raise TypeError(f"Expected a numpy array of bool, integer or floating values, but got dtype {x.dtype}.")
    if x.dtype.kind == "u" and x.dtype.itemsize > 1:
        x = x.astype(np.int64)  # uint16 / uint32 label maps (NIfTI, 16-bit PNG): torch has no full support for them
    return torch.from_numpy(np.ascontiguousarray(x))


def as_tensor_input(x: object) -> object:
    """``x`` with numpy arrays read as tensors (an array, or the arrays of a list), as MONAI accepts them: the
    results equal the tensors'. Anything else is returned as is, for the checks that name it."""
    if isinstance(x, np.ndarray):
        return _from_numpy(x)
    if isinstance(x, (list, tuple)) and any(isinstance(item, np.ndarray) for item in x):
        return [_from_numpy(item) if isinstance(item, np.ndarray) else item for item in x]
    return x


def _images(x: object, name: str) -> tuple[list[Tensor], Tensor | None]:
    """The images of ``x`` (a batch tensor or a list) and the batch tensor itself (None for a list)."""
    if isinstance(x, Tensor):
        x = check_tensor(x, name)
        if x.ndim not in (3, 4):
            raise ValueError(
                f"Expected `{name}` of shape (B, H, W) (2-D images) or (B, D, H, W) (3-D volumes), but got shape "
                f"{tuple(x.shape)}. Use `x.unsqueeze(0)` for a single image or pass a list of tensors."
            )
        if x.shape[0] == 0:
            raise ValueError(f"Expected `{name}` to hold at least one image, but got an empty batch {tuple(x.shape)}.")
        if x.ndim == 4 and x.shape[1] == 1:
            raise ValueError(_ONE_SLICE.format(name=f"`{name}`", shape=tuple(x.shape), squeeze="x[:, 0]"))
        return list(x), x
    out = []
    for i, item in enumerate(tensor_items(x, name)):
        if item.ndim not in (2, 3):
            raise ValueError(f"Expected `{name}[{i}]` of shape (H, W) or (D, H, W), but got {tuple(item.shape)}.")
        if item.ndim == 3 and item.shape[0] == 1:
            raise ValueError(_ONE_SLICE.format(name=f"`{name}[{i}]`", shape=tuple(item.shape), squeeze="x[0]"))
        out.append(item)
    return out, None


#: a volume of one slice is refused: it is almost always a 2-D batch with MONAI's channel dimension, whose surfaces
#: (the slice's two faces) would give other distances than the 2-D contours without a word
_ONE_SLICE = (
    "Expected {name} of 2-D images (H, W) or of volumes with D >= 2 slices, but got shape {shape}: a channel "
    "dimension of size 1 (MONAI's (B, 1, H, W)) would be read as a volume of one slice with input_format='index' "
    "(the default). Pass the 2-D masks ({squeeze}), or the channels with input_format='one-hot'."
)

#: channels of C >= 2 read as volumes of C slices: every voxel of a 2-slice volume is on its surface, so the
#: distances are those of other sets than the 2-D contours, without a word
_CHANNELS = (
    "Expected `preds` and `target` of 2-D images or of volumes with input_format='index' (the default), but got "
    "{what} of shape {shape} whose values are one-hot channels along dim {dim} (only 0 and 1, exactly one 1 per "
    "pixel, in both): they would be scored as volumes of {c} slices. Pass input_format='one-hot' (the Metrics also "
    "need num_classes={c}), or the label maps (x.argmax({dim})) with num_classes. A volume whose every (h, w) column "
    "holds exactly one foreground voxel in both masks reads the same; validate_args=False, which skips every value "
    "check, takes it as a volume."
)


def _one_hot_like(x: Tensor, dim: int) -> tuple[bool, bool]:
    """``(partition, several)``: whether ``x`` holds only 0 and 1 with exactly one 1 along ``dim`` at every other
    index (one-hot channels), and whether some image of it (the indices before ``dim``) uses two channels or more.
    Reads values (synchronises a CUDA device)."""
    if x.is_complex() or x.shape[dim] < 2:
        return False, False
    # the first pixel's column first: a real volume's corner column is seldom exactly one foreground voxel, and this
    # reads C values instead of the whole volume
    if not bool((x[..., 0, 0].sum(dim=dim) == 1).all()):
        return False, False
    if x.dtype != torch.bool and not bool(((x == 0) | (x == 1)).all()):
        return False, False
    # a sum of 0/1 values is 1 exactly when one of them is 1, in any dtype (rounded sums of two or more ones stay >= 2)
    if not bool((x.sum(dim=dim) == 1).all()):
        return False, False
    used = x.flatten(dim + 1).ne(0).any(dim=-1)  # (..., C): the channels each image uses
    return True, bool((used.sum(dim=-1) >= 2).any())


def _refuse_channels(preds: list[Tensor] | Tensor, target: list[Tensor] | Tensor, list_input: bool) -> None:
    """The one rule that tells one-hot channels from volumes under ``input_format="index"``, for a (B, C, H, W)
    batch (``dim`` 1) or a list of (C, H, W) tensors (``dim`` 0; MONAI's decollated batch).

    A channel dimension of size 1 is refused by its shape (:data:`_ONE_SLICE`, in :func:`_images`). Beyond, the
    shape cannot tell C channels from D slices, the values can: ``preds`` and ``target`` both hold only 0 and 1 with
    exactly one 1 along that dimension at every pixel, and one of them uses two channels or more (a single used
    channel is a volume with one full slice as much as an image of one class). A real volume has columns without
    foreground or with several foreground voxels; one that has exactly one in every column of both masks is the
    rule's only ambiguity, and the error says how to pass it.
    """
    pairs = list(zip(preds, target, strict=True)) if list_input else [(preds, target)]
    dim = 0 if list_input else 1
    several = False
    for p, t in pairs:
        assert isinstance(p, Tensor) and isinstance(t, Tensor)
        t_partition, t_several = _one_hot_like(t, dim)  # the ground truth first: it rarely looks one-hot by chance
        if not t_partition:
            return
        p_partition, p_several = _one_hot_like(p, dim)
        if not p_partition:
            return
        several = several or t_several or p_several
    if several:
        p0 = pairs[0][0]
        assert isinstance(p0, Tensor)
        what = "`preds[0]`" if list_input else "`preds`"
        raise ValueError(_CHANNELS.format(what=what, shape=tuple(p0.shape), dim=dim, c=p0.shape[dim]))


def normalize_spacing(spacing: object, ndim: int) -> tuple[float, ...]:
    """``spacing`` (None, a number, or one number per spatial axis) as a tuple of ``ndim`` finite positive floats
    whose ratios the distance transforms can hold (:func:`~segmetrics_torch.ops.distance.spacing_scale`, checked here
    before any image is read)."""
    if spacing is None:
        return (1.0,) * ndim
    values = tuple(check_numbers_per(spacing, ndim, "spacing", "spatial axis", zero_ok=False))
    spacing_scale(values)
    return values


#: what a 0/255 image mask is, and how to pass it (never read as class 255)
_MASK_255 = (
    " It holds only 0 and 255: an 8-bit image mask? The foreground is not guessed from 255; pass `{name} > 0` (or "
    "`{name} == 255`) as a bool mask{labels}."
)


def _only_0_255(x: Tensor) -> bool:
    """Whether ``x`` holds 255 and no value but 0 and 255 (reads values: the error paths only)."""
    return x.numel() > 0 and bool((x == 255).any()) and bool(((x == 0) | (x == 255)).all())


def _binary_mask(x: Tensor, name: str, validate_args: bool) -> Tensor:
    """:func:`as_binary_mask`, whose error for a 0/255 mask says what to pass (the fix, not a silent conversion)."""
    try:
        return as_binary_mask(x, name, validate_args)
    except ValueError as error:
        if not _only_0_255(x):
            raise
        raise ValueError(f"{error}{_MASK_255.format(name=name, labels='')}") from None


def _check_labels(x: Tensor, name: str, num_classes: int, ignore_index: int | None) -> None:
    if x.dtype == torch.bool or x.is_floating_point() or x.is_complex():
        raise TypeError(f"Expected `{name}` to be an integer label map when `num_classes` is given, but got {x.dtype}.")
    if not x.numel():
        return
    valid = (x >= 0) & (x < num_classes)
    if ignore_index is not None:
        valid |= x == ignore_index
    if not bool(valid.all()):
        bad = x[~valid]
        raise ValueError(
            f"Expected `{name}` to hold labels in [0, {num_classes - 1}]"
            + (f" or `ignore_index`={ignore_index}" if ignore_index is not None else "")
            + f", but got {int(bad[0])}."
            + (
                _MASK_255.format(
                    name=name,
                    labels=" without `num_classes`"
                    + ("; a void label 255: `ignore_index=255`" if name == "target" else ""),
                )
                if _only_0_255(x)
                else ""
            )
        )


def _is_per_image(spacing: object) -> bool:
    """MONAI's per-item form: a sequence (or 2-D tensor or array) whose entries are themselves sequences."""
    if isinstance(spacing, (Tensor, np.ndarray)):
        return spacing.ndim == 2
    if not isinstance(spacing, Sequence) or isinstance(spacing, (str, bytes)) or len(spacing) == 0:
        return False
    return all(isinstance(v, (Sequence, Tensor)) and not isinstance(v, (str, bytes)) for v in spacing)


def normalize_image_spacing(spacing: object, ndim: int, batch: int) -> list[tuple[float, ...]]:
    """MONAI's per-item ``spacing``: one entry per image (a number in a 1-sequence, or one number per spatial
    axis), as ``batch`` tuples of ``ndim`` finite positive floats."""
    rows = spacing.tolist() if isinstance(spacing, (Tensor, np.ndarray)) else list(spacing)  # type: ignore[call-overload]
    if len(rows) != batch:
        raise ValueError(
            f"Expected one `spacing` entry per image ({batch}) in its per-image form (a sequence of sequences), but "
            f"got {len(rows)}."
        )
    return [normalize_spacing(row, ndim) for row in rows]


def _spacings(spacing: object, ndim: int, batch: int) -> tuple[tuple[float, ...], list[tuple[float, ...]] | None]:
    """``(shared spacing, per-image spacings or None)`` of a ``spacing`` argument: MONAI's per-item form gives one
    tuple per image (and a unit shared spacing), any other form one shared tuple."""
    if _is_per_image(spacing):
        return (1.0,) * ndim, normalize_image_spacing(spacing, ndim, batch)
    return normalize_spacing(spacing, ndim), None


def _as_channels(x: Tensor, name: str, validate_args: bool) -> Tensor:
    """A (B, C, *spatial) one-hot tensor as bool channels: floating scores arg-maxed over the channels and one-hot
    encoded again (TorchMetrics' reading), bool or 0/1 integer channels used as given (they may overlap)."""
    if x.is_floating_point():
        if x.shape[1] == 1:
            raise ValueError(
                f"Expected `{name}` with at least 2 channels of scores: floating one-hot input is arg-maxed over its "
                "channels, and the argmax of one channel is always 0 (TorchMetrics then scores an all-ones mask); "
                "give a bool or 0/1 integer tensor for a single channel."
            )
        if validate_args and bool(torch.isnan(x).any()):
            # the argmax of a NaN score is wherever the NaN lies: a silent class (-inf, a masked logit, is a score)
            raise ValueError(f"Expected `{name}` to contain no NaN scores (input_format one-hot), but it does.")
        return torch.nn.functional.one_hot(x.argmax(dim=1), x.shape[1]).movedim(-1, 1).bool()
    if x.dtype == torch.bool:
        return x
    if x.is_complex():
        raise TypeError(f"Expected `{name}` to be bool, integer or floating, but got {x.dtype}.")
    if validate_args and not bool(((x == 0) | (x == 1)).all()):
        raise ValueError(f"Expected the channels of `{name}` (input_format one-hot) to hold 0 or 1 only.")
    return x != 0


def one_hot_inputs(
    preds: object, target: object, input_format: str, num_classes: int | None, validate_args: bool = True
) -> tuple[Tensor, Tensor]:
    """``preds`` and ``target`` of TorchMetrics' "one-hot" or "mixed" layout as two (B, C, *spatial) bool channel
    stacks: one-hot sides as :func:`_as_channels` reads them, an index side of "mixed" ((B, *spatial) labels in
    [0, C)) one-hot encoded with the other side's C channels (or ``num_classes``)."""
    preds, target = as_tensor_input(preds), as_tensor_input(target)
    p = check_tensor(preds, "preds") if isinstance(preds, Tensor) else None
    t = check_tensor(target, "target") if isinstance(target, Tensor) else None
    if p is None or t is None:
        raise TypeError(f"Expected `preds` and `target` to be tensors with input_format={input_format!r}.")
    one_hot: tuple[Tensor | None, Tensor | None]
    if input_format == "one-hot" or p.ndim == t.ndim:
        if p.shape != t.shape:
            raise ValueError(
                f"Expected `preds` and `target` of the same (B, C, *spatial) shape (input_format {input_format!r}), "
                f"but got {tuple(p.shape)} and {tuple(t.shape)}."
            )
        one_hot = (p, t)
    elif abs(p.ndim - t.ndim) != 1:
        raise ValueError(
            "Expected one of `preds` and `target` to have one more dimension (the channels) than the other "
            f"(input_format 'mixed'), but got shapes {tuple(p.shape)} and {tuple(t.shape)}."
        )
    else:
        one_hot = (p, None) if p.ndim > t.ndim else (None, t)
    channel_side = p if one_hot[0] is not None else t
    if channel_side.ndim not in (4, 5) or channel_side.shape[1] == 0:
        raise ValueError(
            f"Expected (B, C, H, W) or (B, C, D, H, W) one-hot tensors, but got shape {tuple(channel_side.shape)}."
        )
    channels = channel_side.shape[1]
    if num_classes is not None and num_classes != channels:
        raise ValueError(f"Expected `num_classes` ({num_classes}) to equal the number of channels ({channels}).")
    out = []
    for x, name, is_channels in ((p, "preds", one_hot[0] is not None), (t, "target", one_hot[1] is not None)):
        if is_channels:
            out.append(_as_channels(x, name, validate_args))
            continue
        if x.shape[0] != channel_side.shape[0] or x.shape[1:] != channel_side.shape[2:]:
            raise ValueError(
                f"Expected `{name}` of shape {(channel_side.shape[0], *channel_side.shape[2:])} (the other side's "
                f"without its channels), but got {tuple(x.shape)}."
            )
        _check_labels(x, name, channels, None)
        out.append(torch.nn.functional.one_hot(x.long(), channels).movedim(-1, 1).bool())
    if out[0].device != out[1].device:
        raise ValueError(f"Expected `preds` and `target` on one device, but got {out[0].device} and {out[1].device}.")
    return out[0], out[1]


def channel_columns(channels: int, include_background: bool) -> list[int]:
    """The channels scored: all of them, or without channel 0 when ``include_background`` is False and there are
    several (TorchMetrics' rule; one channel is always kept)."""
    return list(range(0 if include_background or channels == 1 else 1, channels))


def _channel_pairs(p: Tensor, t: Tensor, include_background: bool, spacing: object, only_2d: str | None) -> Pairs:
    """The pairs of two (B, C, *spatial) bool channel stacks: one column per scored channel."""
    ndim = p.ndim - 2
    if min(p.shape[2:]) == 0:
        raise ValueError(f"Expected `preds` and `target` of non-empty images, but got shape {tuple(p.shape)}.")
    if only_2d is not None and ndim != 2:
        raise ValueError(
            f"Expected 2-D images ((B, C, H, W) one-hot): {only_2d} is defined on 2-D masks, but got {ndim}-D images."
        )
    spacing_t, image_spacing = _spacings(spacing, ndim, p.shape[0])
    class_ids = channel_columns(p.shape[1], include_background)
    b, n = p.shape[0], len(class_ids)
    pp, tt = p[:, class_ids], t[:, class_ids]
    group = PairGroup(
        pp.reshape(b * n, *pp.shape[2:]),
        tt.reshape(b * n, *tt.shape[2:]),
        [i for i in range(b) for _ in class_ids],
        [j for _ in range(b) for j in range(n)],
    )
    return Pairs([group], b, class_ids, False, ndim, spacing_t, [], p.device, image_spacing)


def prepare_pairs(
    preds: object,
    target: object,
    *,
    num_classes: int | None,
    include_background: bool,
    ignore_index: int | None,
    spacing: object,
    validate_args: bool = True,
    only_2d: str | None = None,
    input_format: str = "index",
) -> Pairs:
    """Validate the inputs and split them into groups of same-sized boolean (image, class) pairs; ``only_2d``: the
    name of a measure defined on 2-D masks only (its error names it)."""
    check_bool(include_background, "include_background")
    check_bool(validate_args, "validate_args")
    input_format = check_choice(input_format, "input_format", INPUT_FORMATS)
    if input_format != "index":
        if ignore_index is not None:
            raise ValueError(f"Expected `ignore_index` only with index label maps, but input_format={input_format!r}.")
        p_ch, t_ch = one_hot_inputs(preds, target, input_format, num_classes, validate_args)
        return _channel_pairs(p_ch, t_ch, include_background, spacing, only_2d)
    p_images, p_batch = _images(as_tensor_input(preds), "preds")
    t_images, t_batch = _images(as_tensor_input(target), "target")
    if (p_batch is None) != (t_batch is None):
        raise TypeError("Expected `preds` and `target` to be both tensors or both lists of tensors.")
    if len(p_images) != len(t_images):
        raise ValueError(f"Expected as many images in `preds` ({len(p_images)}) as in `target` ({len(t_images)}).")
    ndim = p_images[0].ndim
    for i, (p, t) in enumerate(zip(p_images, t_images, strict=True)):
        if p.shape != t.shape:
            hint = " (one side one-hot channels? input_format='mixed')" if abs(p.ndim - t.ndim) == 1 else ""
            raise ValueError(
                f"Expected `preds` and `target` of the same shape, but image {i} has shapes {tuple(p.shape)} and "
                f"{tuple(t.shape)}{hint}."
            )
        if p.ndim != ndim:
            raise ValueError("Expected every image of `preds` to have the same number of dimensions (2-D or 3-D).")
        if min(p.shape) == 0:
            raise ValueError(
                f"Expected `preds` and `target` of non-empty images, but image {i} has shape {tuple(p.shape)}."
            )
        if p.device != t.device:
            raise ValueError(f"Expected `preds` and `target` on one device, but got {p.device} and {t.device}.")
    if validate_args and ndim == 3:
        if p_batch is not None and t_batch is not None:
            _refuse_channels(p_batch, t_batch, list_input=False)
        else:
            _refuse_channels(p_images, t_images, list_input=True)
    if only_2d is not None and ndim != 2:
        raise ValueError(
            f"Expected 2-D images ((B, H, W) or a list of (H, W)): {only_2d} is defined on 2-D masks, but got "
            f"{ndim}-D images."
        )
    spacing_t, image_spacing = _spacings(spacing, ndim, len(p_images))

    if num_classes is None:
        if ignore_index is not None:
            raise ValueError("Expected `ignore_index` only with label maps (`num_classes`), but `num_classes` is None.")
        binary = True
        class_ids = [1]
        ignored: list[int] = []
    else:
        check_num_classes(num_classes, 2, " (or None for binary masks)")
        if ignore_index is not None and (isinstance(ignore_index, bool) or not isinstance(ignore_index, int)):
            raise TypeError(f"Expected `ignore_index` to be None or an int, but got {ignore_index!r}.")
        binary = False
        class_ids = list(range(0 if include_background else 1, num_classes))
        ignored = [j for j, c in enumerate(class_ids) if c == ignore_index]

    def binarise(p: Tensor, t: Tensor) -> tuple[Tensor, Tensor]:
        """(C', *spatial) bool stacks of one image (or a batch: (B, C', *spatial))."""
        if binary:
            return (
                _binary_mask(p, "preds", validate_args).unsqueeze(-ndim - 1),
                _binary_mask(t, "target", validate_args).unsqueeze(-ndim - 1),
            )
        assert num_classes is not None
        if validate_args:
            _check_labels(p, "preds", num_classes, None)
            _check_labels(t, "target", num_classes, ignore_index)
        keep = None if ignore_index is None else t != ignore_index
        ids = torch.tensor(class_ids, device=p.device).view(-1, *([1] * ndim))
        pp = p.unsqueeze(-ndim - 1) == ids
        tt = t.unsqueeze(-ndim - 1) == ids
        if keep is not None:
            # MONAI's label-encoded rule: the ignored pixels are background in both masks, for every class
            pp = pp & keep.unsqueeze(-ndim - 1)
            tt = tt & keep.unsqueeze(-ndim - 1)
        return pp, tt

    n_cols = len(class_ids)
    columns = [j for j in range(n_cols) if j not in ignored]
    groups = []
    if p_batch is not None and t_batch is not None:
        pp, tt = binarise(p_batch, t_batch)
        pp, tt = pp[:, columns], tt[:, columns]
        b = pp.shape[0]
        groups.append(
            PairGroup(
                pp.reshape(b * len(columns), *pp.shape[2:]),
                tt.reshape(b * len(columns), *tt.shape[2:]),
                [i for i in range(b) for _ in columns],
                [j for _ in range(b) for j in columns],
            )
        )
    else:
        by_shape: dict[tuple[int, ...], list[int]] = {}
        for i, p in enumerate(p_images):
            by_shape.setdefault(tuple(p.shape), []).append(i)
        for idx in by_shape.values():
            stacks = [binarise(p_images[i], t_images[i]) for i in idx]
            pp = torch.cat([s[0][columns] for s in stacks])
            tt = torch.cat([s[1][columns] for s in stacks])
            groups.append(PairGroup(pp, tt, [i for i in idx for _ in columns], [j for _ in idx for j in columns]))
    device = p_images[0].device
    return Pairs(groups, len(p_images), class_ids, binary, ndim, spacing_t, ignored, device, image_spacing)


def check_convention(convention: object, allowed: Sequence[str], measure: str) -> str:
    """``convention`` if it names a reference that defines ``measure``; ``ValueError`` naming the argument otherwise."""
    name = check_choice(convention, "convention", CONVENTIONS)
    if name not in allowed:
        raise ValueError(
            f"Expected `convention` to be one of {', '.join(map(repr, allowed))} for {measure}, but got {name!r}: "
            f"{name} does not define {measure}."
        )
    return name


def warn_empty(
    measure: str, image: int, class_id: int, binary: bool, p_empty: bool, g_empty: bool, value: str, stacklevel: int
) -> None:
    """The warning every empty (image, class) pair raises, naming the image, the class and the returned value."""
    if p_empty and g_empty:
        what = "prediction and ground truth are"
    else:
        what = "prediction is" if p_empty else "ground truth is"
    cls = "" if binary else f", class {class_id}"
    message = f"{measure}: image {image}{cls}: the {what} empty (no foreground); the result is {value}."
    warning = EmptyMaskWarning(message, image, None if binary else class_id, what, measure, value)
    warnings.warn(warning, stacklevel=stacklevel)
