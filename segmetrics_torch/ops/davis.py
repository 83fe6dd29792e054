"""The counts of the DAVIS J and F of every (prediction, object) pair of a stack of frames, in one batched op.

For label maps ``pred`` (ids 1..P, 0 background) and ``target`` (ids 1..K, 0 background, 255 void; ids above K are
no object) of T frames, with ``M_p = (pred == p)``, ``G_k = (target == k)`` and ``V = (target == 255)`` when void is
used (else empty): the pixel counts ``|M_p & G_k & ~V|`` of every pair (the joint histogram, from which J follows),
and, with ``b(.)`` the ``seg2bmap`` boundary of a mask restricted to ``~V`` and ``D_r`` the disk
``{(u, v): u^2 + v^2 <= r^2}``, ``|b(M_p) & (b(G_k) + D_r)|`` (``fg_match``), ``|b(G_k) & (b(M_p) + D_r)|``
(``gt_match``), ``|b(M_p)|`` and ``|b(G_k)|``: the counts of the morphological boundary F (``cv2.dilate`` with a disk
kernel: zero outside the image, the kernel centred).

Two implementations give the same integers: the compiled CPU kernel (:mod:`._kernels.davis`: one streaming pass per
frame marks each object's boundary in a bitmap of 64-pixel words, the disk tested row by row on the words, never
materialised) and the tensor code (one-hot masks, ``seg2bmap``, the dilation as one ``max_pool`` per distinct
half-width of the disk, on any device). Which one runs is :func:`~segmetrics_torch.ops.backend.resolve`'s choice.

:func:`decode_png_ids` is the fast path of the DAVIS mask reader (a plain 8-bit palette / gray PNG decoded with
zlib-ng's inflate and a compiled unfilter; anything else left to Pillow).
"""

from __future__ import annotations

import math
import struct
import zlib
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from segmetrics_torch._checks import Backend, check_tensor

from .backend import resolve
from .morphology import seg2bmap

__all__ = ["COUNT_NAMES", "davis_counts", "decode_png_ids", "dilate_disk_rows"]

#: the keys of :func:`davis_counts`' result
COUNT_NAMES = ("joint", "fg_match", "gt_match", "n_fg", "n_gt", "pred_max")


def _check_labels(x: Tensor, name: str) -> None:
    check_tensor(x, name)
    if x.ndim != 3:
        raise ValueError(f"Expected `{name}` to be a (T, H, W) label tensor, but got shape {tuple(x.shape)}.")
    if x.dtype not in (torch.uint8, torch.int16, torch.int32, torch.int64):
        raise TypeError(f"Expected `{name}` to be an integer label tensor, but got dtype {x.dtype}.")


def davis_counts(
    pred: Tensor,
    target: Tensor,
    *,
    num_preds: int,
    num_targets: int,
    radius: int,
    void: bool,
    diagonal: bool = False,
    backend: Backend = "auto",
    check_ids: bool = True,
) -> dict[str, Tensor]:
    """The J and F counts of every (prediction, object) pair of every frame (see the module doc).

    Args:
        pred: (T, H, W) integer ids in ``[0, num_preds]`` (checked: a larger id is a ``ValueError``).
        target: (T, H, W) integer ids; 255 is void, ids above ``num_targets`` (and 255 without ``void``) background.
        num_preds: P, the predicted objects (absent ones give empty masks).
        num_targets: K, the target objects (``<= 254``).
        radius: the disk's radius in pixels (an integer >= 0).
        void: leave the target's 255 pixels out of every mask and count (DAVIS' unsupervised path) or treat them
            as background (its semi-supervised path).
        diagonal: compute the boundary matches of the pairs ``(k, k)`` only (the others stay 0; P must equal K).
        backend: "auto", "numba" (compiled CPU kernel) or "torch" (tensor code, any device).
        check_ids: raise a ``ValueError`` naming the first frame with an id above ``num_preds`` (else the caller
            reads ``pred_max``; such pixels count as background).

    Returns:
        ``{"joint": (T, P+1, K+1), "fg_match": (T, P, K), "gt_match": (T, P, K), "n_fg": (T, P), "n_gt": (T, K),
        "pred_max": (T,)}``, int64 on the input's device (index 0 of ``joint`` is the background; ``pred_max`` the
        largest id of each frame of ``pred``, void pixels included).

    Example:
        >>> t = torch.zeros(1, 8, 8, dtype=torch.uint8); t[0, 2:6, 2:6] = 1
        >>> c = davis_counts(t, t, num_preds=1, num_targets=1, radius=1, void=False)
        >>> c["joint"][0].tolist(), c["fg_match"][0].tolist(), c["n_gt"][0].tolist()
        ([[48, 0], [0, 16]], [[16]], [16])
    """
    _check_labels(pred, "pred")
    _check_labels(target, "target")
    if pred.shape != target.shape:
        raise ValueError(
            f"Expected `pred` and `target` of the same shape, but got {tuple(pred.shape)} and {tuple(target.shape)}."
        )
    if pred.device != target.device:
        raise ValueError(f"Expected `pred` and `target` on one device, but got {pred.device} and {target.device}.")
    num_preds, num_targets, radius = int(num_preds), int(num_targets), int(radius)
    if not 0 <= num_targets <= 254 or not 0 <= num_preds <= 254 or radius < 0:
        raise ValueError(
            "Expected `num_targets` and `num_preds` in [0, 254] and `radius` >= 0, but got "
            f"{num_targets}, {num_preds} and {radius}."
        )
    if diagonal and num_preds != num_targets:
        raise ValueError(f"`diagonal` needs `num_preds` == `num_targets`, but got {num_preds} and {num_targets}.")
    if pred.dtype != torch.uint8 and pred.numel() and not bool(((pred >= 0) & (pred <= 255)).all()):
        raise ValueError(f"Expected `pred` ids in [0, 255], but got [{int(pred.min())}, {int(pred.max())}].")
    if resolve(backend, pred.device) == "numba" and pred.device.type == "cpu":
        out = _counts_numba(pred, target, num_preds, num_targets, radius, void, diagonal)
    else:
        out = _counts_torch(pred, target, num_preds, num_targets, radius, void, diagonal)
    if check_ids and out["pred_max"].numel():
        worst = int(out["pred_max"].max())  # one host sync per call, on the (T,) maxima
        if worst > num_preds:
            frame = int(torch.nonzero(out["pred_max"] > num_preds)[0, 0])
            raise ValueError(f"Expected `pred` ids in [0, {num_preds}], but frame {frame} has id {worst}.")
    return out


def _as_uint8(x: Tensor) -> np.ndarray:
    if x.dtype != torch.uint8:
        # an id outside [0, 254] other than 255 is no object: 0 (checked ids of `pred` never are)
        x = torch.where((x < 0) | ((x > 254) & (x != 255)), 0, x).to(torch.uint8)
    return x.cpu().contiguous().numpy()


def _counts_numba(
    pred: Tensor, target: Tensor, p: int, k: int, radius: int, void: bool, diagonal: bool
) -> dict[str, Tensor]:
    from ._kernels.davis import davis_counts as kernel

    t = pred.shape[0]
    joint = np.zeros((t, p + 1, k + 1), np.int64)
    fg_match = np.zeros((t, p, k), np.int64)
    gt_match = np.zeros((t, p, k), np.int64)
    n_fg = np.zeros((t, p), np.int64)
    n_gt = np.zeros((t, k), np.int64)
    pred_max = np.zeros(t, np.int64)
    kernel(
        _as_uint8(pred),
        _as_uint8(target),
        p,
        k,
        bool(void),
        bool(diagonal),
        radius,
        joint,
        fg_match,
        gt_match,
        n_fg,
        n_gt,
        pred_max,
    )
    out = {"joint": joint, "fg_match": fg_match, "gt_match": gt_match, "n_fg": n_fg, "n_gt": n_gt, "pred_max": pred_max}
    return {name: torch.from_numpy(v) for name, v in out.items()}


def dilate_disk_rows(mask: Tensor, radius: int) -> Tensor:
    """Binary dilation of (N, H, W) bool maps by the disk ``{(u, v): u^2 + v^2 <= radius^2}``, zero outside.

    The disk is a stack of horizontal segments (half-width ``floor(sqrt(r^2 - dy^2))`` at row offset ``dy``): one
    1-D ``max_pool`` per distinct half-width, shifted and OR-ed, on any device; equal to ``cv2.dilate`` with
    ``skimage.morphology.disk(radius)`` and to ``imdilate(mask, strel('disk'))`` with DAVIS' disk.
    """
    n, h, w = mask.shape
    if radius == 0 or n == 0:
        return mask.clone()
    rows = mask.to(torch.float16 if mask.is_cuda else torch.float32).reshape(n * h, 1, w)
    out = torch.zeros((n, h + 2 * radius, w), dtype=torch.bool, device=mask.device)
    pooled: dict[int, Tensor] = {}
    for dy in range(-radius, radius + 1):
        hw = math.isqrt(radius * radius - dy * dy)
        if hw not in pooled:
            pooled[hw] = F.max_pool1d(rows, 2 * hw + 1, 1, hw).reshape(n, h, w) > 0 if hw else mask
        # the segment at row offset dy of the disk around (y, x) covers row y + dy: the output at y + dy gets it
        out[:, radius + dy : radius + dy + h] |= pooled[hw]
    return out[:, radius : radius + h]


def _counts_torch(
    pred: Tensor, target: Tensor, p: int, k: int, radius: int, void: bool, diagonal: bool
) -> dict[str, Tensor]:
    t = pred.shape[0]
    dev = pred.device
    pred = pred.long()
    pred_max = pred.amax(dim=(1, 2)) if pred.numel() else torch.zeros(t, dtype=torch.int64, device=dev)
    pred = torch.where(pred > p, 0, pred)
    target = target.long()
    is_void = target == 255
    tgt = torch.where(is_void | (target > k), 0, target)
    valid = ~is_void if void else torch.ones_like(is_void)
    p_ids = torch.arange(1, p + 1, device=dev).view(p, 1, 1, 1)
    k_ids = torch.arange(1, k + 1, device=dev).view(k, 1, 1, 1)
    pm = (pred.unsqueeze(0) == p_ids) & valid  # (P, T, H, W)
    gm = (tgt.unsqueeze(0) == k_ids) & valid  # (K, T, H, W)
    # the joint histogram of the valid pixels
    key = pred.clamp(0, p) * (k + 1) + tgt
    joint = torch.zeros((t, (p + 1) * (k + 1)), dtype=torch.int64, device=dev)
    joint.scatter_add_(1, key.reshape(t, -1), valid.reshape(t, -1).long())
    joint = joint.view(t, p + 1, k + 1)
    pb = seg2bmap(pm)
    gb = seg2bmap(gm)
    h, w = pred.shape[-2:]
    pd = dilate_disk_rows(pb.reshape(-1, h, w), radius).view_as(pb)
    gd = dilate_disk_rows(gb.reshape(-1, h, w), radius).view_as(gb)
    n_fg = pb.sum(dim=(-2, -1)).T.contiguous()
    n_gt = gb.sum(dim=(-2, -1)).T.contiguous()
    if diagonal:
        fg_d = (pb & gd).sum(dim=(-2, -1)).T  # (T, K)
        gt_d = (gb & pd).sum(dim=(-2, -1)).T
        eye = torch.eye(k, dtype=torch.bool, device=dev)
        fg_match = torch.zeros((t, p, k), dtype=torch.int64, device=dev)
        gt_match = torch.zeros_like(fg_match)
        fg_match[:, eye] = fg_d
        gt_match[:, eye] = gt_d
    else:
        # exact integer sums in float64 (counts below 2^53)
        fg_match = torch.einsum("pthw,kthw->tpk", pb.double(), gd.double()).round().long()
        gt_match = torch.einsum("pthw,kthw->tpk", pd.double(), gb.double()).round().long()
    return {
        "joint": joint,
        "fg_match": fg_match,
        "gt_match": gt_match,
        "n_fg": n_fg,
        "n_gt": n_gt,
        "pred_max": pred_max,
    }


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# the chunks the fast decoder accepts: the critical ones of a still 8-bit gray / palette image and the common
# ancillary ones (which do not change the pixels); anything else (APNG frames, an unknown critical chunk) is
# Pillow's to decode or refuse
_PNG_CHUNKS = frozenset(b"IHDR PLTE tRNS IDAT IEND gAMA cHRM sRGB sBIT pHYs tEXt tIME bKGD hIST sPLT eXIf cICP".split())
# the shortest chunk Pillow accepts of each kind it reads the contents of (shorter: Pillow refuses the file, so the fast
# path must leave it to Pillow); the compressed ones (iCCP, zTXt, iTXt), whose contents Pillow also checks, are not
# taken at all
_PNG_MIN_LENGTHS = {b"IHDR": 13, b"gAMA": 4, b"cHRM": 32, b"sRGB": 1, b"pHYs": 9}
# Pillow's limit on the text of a file (PngImagePlugin.MAX_TEXT_MEMORY): beyond it Pillow refuses the file
_PNG_MAX_TEXT = 64 * 2**20


def _inflater() -> Any:  # zlib-ng's inflate when installed (its byte-exact output ~10x faster on masks' long runs)
    try:
        from zlib_ng import zlib_ng
    except ImportError:  # pragma: no cover - depends on the environment
        return None
    return zlib_ng


_INFLATE = _inflater()


def decode_png_ids(data: bytes, out: np.ndarray | None = None, *, max_pixels: int | None = None) -> np.ndarray | None:
    """The pixel values of an 8-bit palette (palette indices) or gray PNG, or ``None`` when the file is another kind.

    The fast path of a DAVIS mask reader: the chunks are parsed here (every CRC but the image data's checked, as
    Pillow does), the image data inflated in one call and its scanline filters undone by a compiled kernel that
    releases the GIL. It decodes only the plain case (bit depth 8, colour type 0 or 3, not interlaced, known
    chunks, an IEND, inflated data of exactly ``H * (W + 1)`` bytes, filter bytes 0..4) and returns ``None`` for
    anything else -- another format, a truncated or corrupt file, more than ``max_pixels`` pixels, or no fast inflater
    installed (the ``zlib-ng`` package; the standard library's zlib is slower than Pillow) -- so that the caller's
    Pillow path decodes or refuses it with its own message: the values returned are always Pillow's
    ``np.asarray(Image.open(path))``.

    Args:
        data: the file's bytes.
        out: an (H, W) uint8 C-contiguous array to decode into when the image has that size (else a new array).
        max_pixels: the largest ``W * H`` decoded here.

    Returns:
        (H, W) uint8 array (``out`` when used), or ``None``.

    Example:
        >>> import io, numpy as np
        >>> from PIL import Image
        >>> buf = io.BytesIO(); Image.fromarray(np.array([[0, 1], [2, 255]], np.uint8), mode="P").save(buf, "PNG")
        >>> ids = decode_png_ids(buf.getvalue())
        >>> ids is None or ids.tolist() == [[0, 1], [2, 255]]
        True
    """
    if _INFLATE is None or len(data) < 57 or data[:8] != _PNG_SIGNATURE or data[12:16] != b"IHDR":
        return None
    width, height, depth, colour, compression, filtering, interlace = struct.unpack(">IIBBBBB", data[16:29])
    if depth != 8 or colour not in (0, 3) or compression or filtering or interlace or not width or not height:
        return None
    if width >= 2**31 or height >= 2**31:  # the PNG specification's limit (and Pillow's)
        return None
    if max_pixels is not None and width * height > max_pixels:
        return None
    parts: list[bytes] = []
    pos, end, last_data_end, text = 8, len(data), -1, 0
    while True:
        if pos + 12 > end:
            return None  # no IEND
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        stop = pos + 12 + length
        if stop > end or kind not in _PNG_CHUNKS or length < _PNG_MIN_LENGTHS.get(kind, 0):
            return None
        if kind == b"IHDR" and pos != 8:
            return None  # a second header: Pillow reads the last one before the image data
        if kind == b"tRNS" and colour == 0 and length < 2:
            return None  # Pillow refuses a gray image's short transparency chunk
        if kind == b"tEXt":
            text += length
            if text > _PNG_MAX_TEXT:
                return None
        if kind == b"IDAT":
            if parts and pos != last_data_end:
                return None  # image data split by another chunk
            parts.append(data[pos + 8 : pos + 8 + length])
            last_data_end = stop
        elif zlib.crc32(data[pos + 4 : pos + 8 + length]) != struct.unpack(">I", data[stop - 4 : stop])[0]:
            return None  # Pillow refuses a header chunk whose CRC is wrong
        pos = stop
        if kind == b"IEND":
            break
    if not parts:
        return None
    expected = height * (width + 1)
    inflater = _INFLATE.decompressobj()
    try:
        raw = inflater.decompress(b"".join(parts), expected + 1)
    except _INFLATE.error:
        return None
    if len(raw) != expected or not inflater.eof:
        return None
    usable = out is not None and out.flags.c_contiguous and out.flags.writeable
    if out is None or not usable or out.shape != (height, width) or out.dtype != np.uint8:
        out = np.empty((height, width), np.uint8)
    from ._kernels.davis import png_unfilter

    if not png_unfilter(np.frombuffer(raw, np.uint8), out):
        return None
    return out
