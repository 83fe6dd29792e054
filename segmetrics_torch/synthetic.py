"""An embedded synthetic foreground-segmentation dataset, generated in code (nothing to download).

Each ground-truth map is a binary uint8 image (0 / 255) of a few random objects: rotated ellipses, rounded
star-shaped blobs (a radius modulated by low harmonics) and thin structures (segments 2-4 px wide), covering about
5-40 % of the image. Image 1 (when ``n >= 2``) has an empty ground truth, the edge case every foreground measure
defines separately. Each "method" is a uint8 saliency map (0..255) derived from the ground truth with a graded amount
of damage:

* ``"good"``: the ground truth blurred slightly (sigma 1.5 px), scaled to 85-100 % confidence, with mild Gaussian noise;
* ``"blurry"``: blurred strongly (sigma 6-9 px), shifted by 4-10 px, scaled to 60-85 % confidence, little noise;
* ``"noisy"``: 75 % of the ground truth plus 2-4 soft false blobs and strong, lightly smoothed noise.

The expected ranking on every measure is ``good`` > ``blurry`` > ``noisy`` (lower MAE, higher S, F, E, IoU, Dice).

Determinism: image ``i`` of the ground truth comes from ``numpy.random.default_rng([seed, 0, i])`` and the map of the
method with registry index ``k`` from ``default_rng([seed, k + 1, i])``, so a dataset of ``n`` images is a prefix of a
larger one with the same seed and size, and a method's maps do not depend on which other methods are requested.
Everything is vectorised numpy over the pixel grid (loops only over images and objects); the Gaussian blur is
``scipy.ndimage.gaussian_filter``.

Example:
    >>> data = make_foreground_dataset(n=3, size=(60, 80))
    >>> data.gt.shape, data.gt.dtype, sorted(data.preds)
    ((3, 60, 80), dtype('uint8'), ['blurry', 'good', 'noisy'])
    >>> int(data.gt[1].max())  # the empty ground truth
    0
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
from PIL import Image
from scipy.ndimage import gaussian_filter

from .ops.morphology import seg2bmap, thin

__all__ = [
    "METHODS",
    "BoundaryDataset",
    "ForegroundDataset",
    "make_boundary_dataset",
    "make_foreground_dataset",
    "write_foreground_dataset",
]

#: index of the image whose ground truth is empty (when the dataset has more than one image)
EMPTY_INDEX = 1

_MIN_FRACTION, _MAX_FRACTION = 0.05, 0.40


class ForegroundDataset(NamedTuple):
    """A synthetic dataset: ground truth, prediction maps per method, and image names.

    Attributes:
        gt: (N, H, W) uint8 ground truth, values 0 and 255.
        preds: ``{method: (N, H, W) uint8 map 0..255}``, in the order requested.
        names: N file stems (``"img_000"``, ...), as written by :func:`write_foreground_dataset`.
    """

    gt: np.ndarray
    preds: dict[str, np.ndarray]
    names: list[str]


# ------------------------------------------------------------------------------------------------ ground truth


def _grid(size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    h, w = size
    rows, cols = np.mgrid[0:h, 0:w].astype(np.float64)
    return rows, cols


def _ellipse(rng: np.random.Generator, yy: np.ndarray, xx: np.ndarray, area: float) -> np.ndarray:
    h, w = yy.shape
    ratio = rng.uniform(0.4, 1.0)
    a = np.sqrt(area / (np.pi * ratio))
    b = a * ratio
    cy, cx = rng.uniform(0.15, 0.85) * h, rng.uniform(0.15, 0.85) * w
    t = rng.uniform(0, np.pi)
    dy, dx = yy - cy, xx - cx
    u = dx * np.cos(t) + dy * np.sin(t)
    v = -dx * np.sin(t) + dy * np.cos(t)
    return (u / a) ** 2 + (v / b) ** 2 <= 1.0


def _blob(rng: np.random.Generator, yy: np.ndarray, xx: np.ndarray, area: float) -> np.ndarray:
    h, w = yy.shape
    radius = np.sqrt(area / np.pi)
    cy, cx = rng.uniform(0.2, 0.8) * h, rng.uniform(0.2, 0.8) * w
    amplitudes = rng.uniform(0.0, 0.18, size=3)
    phases = rng.uniform(0, 2 * np.pi, size=3)
    # evaluate only in the bounding box of the largest possible radius (the trigonometry is the cost)
    reach = radius * (1 + amplitudes.sum()) + 1
    y0, y1 = max(int(cy - reach), 0), min(int(cy + reach) + 2, h)
    x0, x1 = max(int(cx - reach), 0), min(int(cx + reach) + 2, w)
    dy, dx = yy[y0:y1, x0:x1] - cy, xx[y0:y1, x0:x1] - cx
    theta = np.arctan2(dy, dx)
    r = np.ones_like(theta)
    for k, a, phi in zip((2, 3, 5), amplitudes, phases, strict=True):  # low harmonics keep the outline rounded
        r += a * np.cos(k * theta + phi)
    mask = np.zeros((h, w), dtype=bool)
    mask[y0:y1, x0:x1] = np.hypot(dy, dx) <= radius * r
    return mask


def _thin(rng: np.random.Generator, yy: np.ndarray, xx: np.ndarray) -> np.ndarray:
    """A segment 2-4 px wide, 30-70 % of the image diagonal long (a wire, a leg, a pole)."""
    h, w = yy.shape
    length = rng.uniform(0.3, 0.7) * np.hypot(h, w)
    width = rng.uniform(2.0, 4.0)
    y0, x0 = rng.uniform(0.1, 0.9) * h, rng.uniform(0.1, 0.9) * w
    t = rng.uniform(0, 2 * np.pi)
    y1, x1 = y0 + length * np.sin(t), x0 + length * np.cos(t)
    vy, vx = y1 - y0, x1 - x0
    s = np.clip(((yy - y0) * vy + (xx - x0) * vx) / (vy * vy + vx * vx), 0.0, 1.0)
    return np.hypot(yy - (y0 + s * vy), xx - (x0 + s * vx)) <= width / 2


def _gt_image(rng: np.random.Generator, size: tuple[int, int]) -> np.ndarray:
    yy, xx = _grid(size)
    mask = np.zeros(size, dtype=bool)
    for _ in range(50):  # redraw until the foreground fraction is in range (a few tries at most)
        fraction = rng.uniform(0.06, 0.33)
        k = int(rng.integers(1, 4))
        shares = rng.dirichlet(np.ones(k)) * fraction * size[0] * size[1]
        mask = np.zeros(size, dtype=bool)
        for area in shares:
            shape = _ellipse if rng.random() < 0.5 else _blob
            mask |= shape(rng, yy, xx, area)
        for _ in range(int(rng.integers(0, 3))):
            mask |= _thin(rng, yy, xx)
        if _MIN_FRACTION <= mask.mean() <= _MAX_FRACTION:
            break
    return mask


# -------------------------------------------------------------------------------------------------- predictions


def _shift(x: np.ndarray, dy: int, dx: int) -> np.ndarray:
    """Translate by (dy, dx) pixels, filling the uncovered border with zeros."""
    out = np.zeros_like(x)
    h, w = x.shape
    out[max(dy, 0) : h + min(dy, 0), max(dx, 0) : w + min(dx, 0)] = x[
        max(-dy, 0) : h + min(-dy, 0), max(-dx, 0) : w + min(-dx, 0)
    ]
    return out


def _good(rng: np.random.Generator, g: np.ndarray) -> np.ndarray:
    m = gaussian_filter(g, 1.5) * rng.uniform(0.85, 1.0)
    return m + rng.normal(0.0, 0.04, g.shape)


def _blurry(rng: np.random.Generator, g: np.ndarray) -> np.ndarray:
    dy, dx = (int(v) * int(rng.choice([-1, 1])) for v in rng.integers(4, 11, size=2))
    m = gaussian_filter(_shift(g, dy, dx), rng.uniform(6.0, 9.0)) * rng.uniform(0.6, 0.85)
    return m + rng.normal(0.0, 0.02, g.shape)


def _noisy(rng: np.random.Generator, g: np.ndarray) -> np.ndarray:
    yy, xx = _grid(g.shape)
    false = np.zeros_like(g)
    for _ in range(int(rng.integers(2, 5))):
        area = rng.uniform(0.01, 0.04) * g.size
        false = np.maximum(false, _blob(rng, yy, xx, area) * rng.uniform(0.5, 0.9))
    m = 0.7 * g + gaussian_filter(false, 2.0)
    return m + gaussian_filter(rng.normal(0.0, 0.7, g.shape), 1.0)


#: the methods, in registry order (the order fixes each method's random stream)
METHODS: dict[str, Callable[[np.random.Generator, np.ndarray], np.ndarray]] = {
    "good": _good,
    "blurry": _blurry,
    "noisy": _noisy,
}


def _to_uint8(m: np.ndarray) -> np.ndarray:
    return np.rint(np.clip(m, 0.0, 1.0) * 255).astype(np.uint8)


# --------------------------------------------------------------------------------------------------------- API


def make_foreground_dataset(
    n: int = 24,
    size: tuple[int, int] = (240, 320),
    seed: int = 0,
    methods: Sequence[str] = ("good", "blurry", "noisy"),
) -> ForegroundDataset:
    """Generate ``n`` ground-truth maps and, per method, ``n`` prediction maps of graded quality.

    Args:
        n: number of images (>= 1). Image ``EMPTY_INDEX`` (1) has an empty ground truth when ``n >= 2``.
        size: (H, W) of every image, each at least 16.
        seed: non-negative integer seed; the output is a deterministic function of (n, size, seed, methods).
        methods: names from :data:`METHODS` (``"good"``, ``"blurry"``, ``"noisy"``), no repeats.

    Returns:
        :class:`ForegroundDataset` ``(gt, preds, names)``: ``gt`` (N, H, W) uint8 in {0, 255}; ``preds`` maps each
        method to an (N, H, W) uint8 array; ``names`` the N stems ``img_000``, ``img_001``, ...

    Raises:
        ValueError: ``n`` < 1, a bad ``size`` or ``seed``, or an unknown or repeated method.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"Expected argument `n` to be a positive int, but got {n!r}.")
    if (
        not isinstance(size, (tuple, list))
        or len(size) != 2
        or not all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 16 for s in size)
    ):
        raise ValueError(f"Expected argument `size` to be (H, W) with H, W >= 16, but got {size!r}.")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"Expected argument `seed` to be a non-negative int, but got {seed!r}.")
    methods = [methods] if isinstance(methods, str) else list(methods)
    unknown = [m for m in methods if m not in METHODS]
    if unknown or len(set(methods)) != len(methods):
        raise ValueError(
            f"Expected argument `methods` to be distinct names from {sorted(METHODS)}, but got {methods!r}."
        )
    size = (int(size[0]), int(size[1]))
    registry = list(METHODS)
    gt = np.zeros((n, *size), dtype=np.uint8)
    preds = {m: np.zeros((n, *size), dtype=np.uint8) for m in methods}
    for i in range(n):
        mask = (
            np.zeros(size, dtype=bool)
            if (i == EMPTY_INDEX and n >= 2)
            else _gt_image(np.random.default_rng([seed, 0, i]), size)
        )
        gt[i] = mask * np.uint8(255)
        g = mask.astype(np.float64)
        for m in methods:
            rng = np.random.default_rng([seed, registry.index(m) + 1, i])
            preds[m][i] = _to_uint8(METHODS[m](rng, g))
    return ForegroundDataset(gt, preds, [f"img_{i:03d}" for i in range(n)])


def write_foreground_dataset(
    root: str | Path,
    n: int = 24,
    size: tuple[int, int] = (240, 320),
    seed: int = 0,
    methods: Sequence[str] = ("good", "blurry", "noisy"),
) -> ForegroundDataset:
    """Generate the dataset (as :func:`make_foreground_dataset`) and write it as 8-bit grayscale PNGs.

    Layout: ``root/gt/img_000.png``, ... and ``root/<method>/img_000.png``, ...; folders are created as needed and
    existing files of the same names are overwritten.

    Args:
        root: output folder.
        n, size, seed, methods: as :func:`make_foreground_dataset`.

    Returns:
        The :class:`ForegroundDataset` that was written (reading the PNGs back gives the same arrays).
    """

    data = make_foreground_dataset(n=n, size=size, seed=seed, methods=methods)
    root = Path(root)
    for folder, maps in (("gt", data.gt), *data.preds.items()):
        out = root / folder
        out.mkdir(parents=True, exist_ok=True)
        for name, image in zip(data.names, maps, strict=True):
            Image.fromarray(image).save(out / f"{name}.png")
    return data


# ------------------------------------------------------------------------------------------------- boundaries


class BoundaryDataset(NamedTuple):
    """Synthetic boundary-benchmark data: soft maps (B, H, W) float64 in [0, 1] (multiples of 1/255), annotator
    label maps (B, A, H, W) int64 and their boundary maps (B, A, H, W) bool (``thin(seg2bmap(labels))``)."""

    preds: np.ndarray
    segmentations: np.ndarray
    boundaries: np.ndarray


def _voronoi(rng: np.random.Generator, seeds: np.ndarray, size: tuple[int, int], jitter: float) -> np.ndarray:
    yy, xx = _grid(size)
    pts = seeds + rng.normal(0, jitter, seeds.shape)
    d = (yy[..., None] - pts[:, 0]) ** 2 + (xx[..., None] - pts[:, 1]) ** 2
    return d.argmin(-1).astype(np.int64)


def make_boundary_dataset(
    n: int = 4, size: tuple[int, int] = (64, 96), n_annotators: int = 3, *, n_regions: int = 8, seed: int = 0
) -> BoundaryDataset:
    """Voronoi partitions whose annotators jitter the seeds (as humans disagree), and a detector's soft map: the
    blurred boundaries of one more jittered partition, with noise, quantised to 1/255 like a PNG.

    The boundaries use the BSDS rule ``thin(seg2bmap(labels))`` (computed here with the package's own ops).
    """

    rng = np.random.default_rng(seed)
    h, w = size
    preds = np.zeros((n, h, w))
    segs = np.zeros((n, n_annotators, h, w), np.int64)
    for i in range(n):
        seeds = rng.uniform([0, 0], [h, w], (n_regions, 2))
        for a in range(n_annotators):
            segs[i, a] = _voronoi(rng, seeds, size, jitter=1.5)
        machine = seg2bmap(torch.from_numpy(_voronoi(rng, seeds, size, jitter=2.0))).numpy().astype(float)
        soft = gaussian_filter(machine, 1.0) + rng.normal(0, 0.03, (h, w)).clip(0)
        preds[i] = np.round(255 * soft / soft.max()) / 255
    bounds = thin(seg2bmap(torch.from_numpy(segs))).numpy()
    return BoundaryDataset(preds, segs, bounds)
