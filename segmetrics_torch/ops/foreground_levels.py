"""Checked public ops in front of the compiled level kernels of the foreground measures (``ops._kernels.
foreground_levels``): only :mod:`segmetrics_torch.ops` imports ``ops._kernels`` (tested in
``tests/test_import_graph.py``); the functional modules call these.

Each op checks what the kernel would otherwise read out of bounds or misinterpret (array types, dtypes, shapes,
C order, index ranges) and raises ``ValueError`` / ``TypeError`` naming the argument; the kernels themselves stay
unchecked for speed. Host numpy arrays in, host numpy arrays out (the callers convert tensors).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["binary_half_counts", "component_boxes", "level_histograms", "measure_table", "msiou_counts", "row_max"]


def _array(value: Any, name: str, ndim: int, dtypes: tuple[Any, ...]) -> np.ndarray:
    if not isinstance(value, np.ndarray):
        raise TypeError(f"Expected `{name}` to be a numpy array, but got {type(value).__name__}.")
    if value.ndim != ndim:
        raise ValueError(f"Expected `{name}` to have {ndim} dimensions, but got shape {value.shape}.")
    if not any(value.dtype == np.dtype(d) for d in dtypes):
        names = " or ".join(np.dtype(d).name for d in dtypes)
        raise TypeError(f"Expected `{name}` of dtype {names}, but got {value.dtype}.")
    if not value.flags.c_contiguous:
        raise ValueError(f"Expected `{name}` to be C-contiguous.")
    return value


def _kernels() -> Any:
    from ._kernels import foreground_levels

    return foreground_levels


def binary_half_counts(raw: np.ndarray, g: np.ndarray, scale: float, normalize: bool) -> np.ndarray:
    """(B, 2) int64 ``[tp, pp]`` of ``p > 0.5`` per image: ``raw`` (B, H, W) uint8 or float64, ``g`` bool."""
    _array(raw, "raw", 3, (np.uint8, np.float64))
    if _array(g, "g", 3, (np.bool_,)).shape != raw.shape:
        raise ValueError(f"Expected `g` of `raw`'s shape {raw.shape}, but got {g.shape}.")
    return _kernels().binary_half_counts(raw, g, float(scale), bool(normalize))


def msiou_counts(v: np.ndarray, g: np.ndarray, sizes: np.ndarray, num_t: int) -> Any:
    """Multi-scale edge-cell counts (see the kernel): ``v`` (B, H, W) int16 levels, ``g`` bool, ``sizes`` (L,)."""
    _array(v, "v", 3, (np.int16,))
    if _array(g, "g", 3, (np.bool_,)).shape != v.shape:
        raise ValueError(f"Expected `g` of `v`'s shape {v.shape}, but got {g.shape}.")
    if (_array(sizes, "sizes", 1, (np.int64, np.int32)) < 1).any() or int(num_t) < 1:
        raise ValueError("Expected positive cell `sizes` and `num_t`.")
    return _kernels().msiou_counts(v, g, sizes, int(num_t))


def level_histograms(raw: np.ndarray, t: np.ndarray, tthr: int, starts: np.ndarray, boxes: np.ndarray) -> Any:
    """Level histograms split by the GT per image, per box and outside the boxes (see the kernel)."""
    _array(raw, "raw", 3, (np.uint8,))
    if _array(t, "t", 3, (np.uint8,)).shape != raw.shape:
        raise ValueError(f"Expected `t` of `raw`'s shape {raw.shape}, but got {t.shape}.")
    _array(starts, "starts", 1, (np.int64,))
    _array(boxes, "boxes", 2, (np.int64,))
    if starts.shape[0] != raw.shape[0] + 1 or (np.diff(starts) < 0).any() or starts[-1] != boxes.shape[0]:
        raise ValueError("Expected `starts` (B + 1,) offsets into `boxes`, from 0 to its length.")
    return _kernels().level_histograms(raw, t, tthr, starts, boxes)


def component_boxes(labels: np.ndarray, num: int) -> np.ndarray:
    """(num, 6) int64 area, image, y0, y1, x0, x1 of labels 1..num of a (B, H, W) integer label stack."""
    _array(labels, "labels", 3, (np.int32, np.int64))
    if labels.size and (int(labels.min()) < 0 or int(labels.max()) > int(num)):
        raise ValueError(f"Expected labels in [0, {num}], but got {labels.min()}..{labels.max()}.")
    return _kernels().component_boxes(labels, int(num))


def measure_table(
    tp: np.ndarray, fp: np.ndarray, tn: np.ndarray, fn: np.ndarray, codes: np.ndarray, beta2: float
) -> np.ndarray:
    """(M, B, W) float64: measure ``codes[m]`` of the (B, W) int64 counts (see the kernel)."""
    for name, value in (("tp", tp), ("fp", fp), ("tn", tn), ("fn", fn)):
        if _array(value, name, 2, (np.int64,)).shape != tp.shape:
            raise ValueError(f"Expected `{name}` of `tp`'s shape {tp.shape}, but got {value.shape}.")
    _array(codes, "codes", 1, (np.int64,))
    return _kernels().measure_table(tp, fp, tn, fn, codes, float(beta2))


def row_max(table: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """(M, K) float64 ``max(table[m, k, lo:hi])`` of a (M, K, W) float64 table."""
    _array(table, "table", 3, (np.float64,))
    if not 0 <= int(lo) < int(hi) <= table.shape[2]:
        raise ValueError(f"Expected 0 <= lo < hi <= {table.shape[2]}, but got {lo} and {hi}.")
    return _kernels().row_max(table, int(lo), int(hi))
