r"""Context measure (Wang et al. 2025, arXiv:2512.07076), PySODMetrics 1.6.2 ``ContextMeasure``.

With the prepared map ``p``, the GT ``g`` and a Gaussian kernel ``K`` shaped by the GT's pixel-coordinate covariance
``S`` (scaled to ``alpha^2 S / trace(S)``, half sizes ``round(3 alpha sigma_row / sqrt(trace S))`` and likewise for
columns; one GT pixel or none: ``S = diag(0.25, 0.25)``, half sizes 1; a zero variance is replaced by EPS):

* forward inference ``F = [p > 0] * (K * g)`` (``*``: OpenCV ``filter2D``, a correlation with border
  ``REFLECT_101``), ``mF = sum(F p) / (sum(p) + EPS)``;
* reverse deduction ``R = e / (e - 1) * g * (1 - exp(-(K * p)))``, ``wR = sum(R g) / (sum(g) + EPS)``;
* ``CM = (1 + beta2) mF wR / (beta2 mF + wR + EPS)``.

How it is computed (exact in float64; PySOD's own forward term is a float32 ``filter2D``, so the two agree to ~1e-7,
tested at 1e-6): ``R`` vanishes off the GT, so ``K * p`` is needed on the GT pixels only, and ``[p > 0] p = p``, so
``sum(F p) = sum(p (K * g))``. :func:`segmetrics_torch.ops.filters.filter2d_reflect_window` evaluates ``K * p`` on
the GT's bounding box by one FFT of the box grown by half the kernel. When the GT keeps more than half a kernel away
from every image border, ``sum(p (K * g)) = sum_g (K * p)`` (``K`` is symmetric and no reflection reaches the GT), so
one filtered box gives both terms; otherwise the two sums differ by the border term
:func:`segmetrics_torch.ops.filters.filter2d_reflect_gap` (the kernel taps that leave the image, reflected back),
computed exactly from the border band alone. The covariance comes from exact integer coordinate sums
(:func:`segmetrics_torch.ops.masks.mask_moments`, correctly rounded); where it is singular or ill-conditioned
(``det < 1e-6 S_00 S_11``) the kernel is built from the coordinate list with PySOD's own ``np.cov`` arithmetic, so
borderline kernels and PySOD's failure (below) are reproduced. The cost follows the GT box, not the image: ~0.8 ms
per 320x320 image, ~6.5 ms per 1024x1024 (RESULTS.md); no OpenCV needed. Runs on the input's device (``scipy.fft`` on
the CPU, ``torch.fft`` elsewhere; the border term on the host), one image at a time (each has its own kernel and
box). ``camouflage_context_measure`` (below) weights the reverse term by the camouflage degree of the RGB image.

Edge case: when the GT pixels all lie on one slanted line their covariance is singular and the kernel undefined;
where PySODMetrics 1.6.2 then has no value (numpy's ``LinAlgError``, or NaN where rounding leaves the covariance barely
invertible) it is a ``ValueError`` naming ``target`` (and, in a batch, the image); where rounding leaves a finite kernel
(some two-pixel masks), PySOD's number is reproduced.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import Tensor

from ..._checks import ImageBatch, check_positive_float
from ...ops.filters import filter2d_reflect_gap, filter2d_reflect_window
from ...ops.masks import mask_moments
from ._extra_runner import run_raw
from ._intermediates import use_cpu_kernel
from ._level_path import binary_target, numpy_levels
from ._prepare import prepare_maps

__all__ = ["camouflage_context_measure", "context_measure"]

EPS = float(np.spacing(1))
_E_FACTOR = math.e / (math.e - 1)
# a covariance with det < this x (product of the variances) is ill-conditioned: its kernel is built with PySOD's
# own np.cov arithmetic instead of the exact moments (both agree elsewhere to a few ulp)
_ILL_CONDITIONED = 1e-6


def _require(module: str) -> Any:  # the imported module
    """Import an optional dependency of the camouflage context measure, or say how to install it."""
    import importlib

    try:
        for name in ("cv2", "skimage", "sklearn"):  # all three, so one message names the extra once
            importlib.import_module(name)
    except ImportError as err:  # pragma: no cover - optional extra
        raise ImportError(
            "CamouflageContextMeasure needs OpenCV, scikit-image and scikit-learn (its colour, dilation and "
            "neighbour steps are those of PySODMetrics): pip install 'segmetrics-torch[opencv]'"
        ) from err
    return importlib.import_module(module)


_SINGULAR = (
    "Expected a `target` whose foreground pixels do not all lie on one slanted line: their covariance is singular "
    "and the context measure's Gaussian kernel is undefined (PySODMetrics 1.6.2 fails there too: numpy's LinAlgError, "
    "or NaN where rounding leaves the covariance barely invertible)."
)


def _gaussian(cov: np.ndarray, x_dis: int, y_dis: int) -> np.ndarray:
    try:
        inv = np.linalg.inv(cov)
    except np.linalg.LinAlgError:  # PySOD 1.6.2 raises numpy's LinAlgError here: no reference value exists
        raise ValueError(_SINGULAR) from None
    x, y = np.meshgrid(np.arange(-x_dis, x_dis + 1), np.arange(-y_dis, y_dis + 1), indexing="ij")
    z = np.stack([x, y], axis=-1)
    with np.errstate(all="ignore"):  # a (numerically) singular covariance: refused just below
        kernel = np.exp(-0.5 * np.einsum("...i,ij,...j->...", z, inv, z)) / (2 * np.pi * np.sqrt(np.linalg.det(cov)))
        kernel = kernel / np.sum(kernel)
    if not np.isfinite(kernel).all():  # PySOD 1.6.2 returns NaN here: never a silent NaN
        raise ValueError(_SINGULAR)
    return kernel


def _scaled(cov: np.ndarray, alpha: float) -> tuple[np.ndarray, int, int]:
    cov[0, 0] = cov[0, 0] if cov[0, 0] != 0 else EPS
    cov[1, 1] = cov[1, 1] if cov[1, 1] != 0 else EPS
    total = np.sqrt(cov[0, 0] + cov[1, 1])
    x_dis = round(3 * (alpha * np.sqrt(cov[0, 0]) / total))
    y_dis = round(3 * (alpha * np.sqrt(cov[1, 1]) / total))
    return alpha**2 * cov / total**2, x_dis, y_dis


def _kernel(g: np.ndarray, alpha: float) -> np.ndarray:
    """PySOD's kernel from the GT's coordinate list (``np.argwhere``, ``np.cov``)."""
    points = np.argwhere(g)
    if len(points) <= 1:
        return _gaussian(np.diag([0.25, 0.25]), 1, 1)
    return _gaussian(*_scaled(np.cov(points, rowvar=False), alpha))


def context_kernel(g: Tensor, moments: list[int], alpha: float) -> np.ndarray:
    """The context kernel of one bool GT ``g`` (H, W) with its :func:`mask_moments` row ``moments``."""
    n, si, sj, sii, sjj, sij = moments[:6]
    a, b, c = n * sii - si * si, n * sjj - sj * sj, n * sij - si * sj  # n (n - 1) cov, exact (Python integers)
    if n <= 1 or a == 0 or b == 0 or (a * b - c * c) < _ILL_CONDITIONED * a * b:
        return _kernel(g.cpu().numpy(), alpha)
    f = n * (n - 1)
    exact = np.array([[a / f, c / f], [c / f, b / f]])  # int / int: correctly rounded
    half = 3 * alpha * np.sqrt(np.diag(exact) / (exact[0, 0] + exact[1, 1]))
    if np.any(np.abs(half - np.floor(half) - 0.5) < 1e-9):  # a half size at a rounding tie: PySOD's arithmetic decides
        return _kernel(g.cpu().numpy(), alpha)
    cov, x_dis, y_dis = _scaled(exact, alpha)
    # well conditioned: the 2x2 inverse in closed form (LAPACK's to an ulp or two), the quadratic form on the grid
    det = cov[0, 0] * cov[1, 1] - cov[0, 1] * cov[1, 0]
    x = np.arange(-x_dis, x_dis + 1, dtype=np.float64)[:, None]
    y = np.arange(-y_dis, y_dis + 1, dtype=np.float64)[None, :]
    form = (cov[1, 1] * x * x - (cov[0, 1] + cov[1, 0]) * x * y + cov[0, 0] * y * y) / det
    kernel = np.exp(-0.5 * form) / (2 * np.pi * np.sqrt(det))
    return kernel / np.sum(kernel)


def context_terms(
    p_at: Callable[[int, int, int, int], Tensor], g: Tensor, moments: list[int], alpha: float
) -> tuple[Any, Any]:  # numpy values for CPU inputs, tensors otherwise
    """``(sum(p (K * g)), (K * p)[g])`` of one non-empty bool GT ``g`` (H, W) and its prepared map, of which
    ``p_at(r0, r1, c0, c1)`` gives the float64 values on rows ``r0:r1``, columns ``c0:c1`` (only the GT box and a
    border of two half kernels are read); the second in raster order of the GT pixels. numpy values for CPU inputs
    (no torch element-wise passes, which stall on a busy machine), tensors otherwise (module doc)."""
    k = context_kernel(g, moments, alpha)
    # symmetric by construction (z and -z give the same products); averaging with its flip makes that exact to the
    # bit whatever the einsum's summation order (the border gap's identity needs it), and changes no symmetric entry
    kernel = torch.from_numpy(0.5 * (k + k[::-1, ::-1]))
    h, w = g.shape
    hr, hc = kernel.shape[0] // 2, kernel.shape[1] // 2
    r0, r1, c0, c1 = moments[6:10]
    near_border = r0 <= hr or r1 >= h - 1 - hr or c0 <= hc or c1 >= w - 1 - hc  # a reflection reaches the GT
    # a crop holding the GT box and what the filter reads around it (twice that where the border gap is needed:
    # K * g is non-zero up to half a kernel from the GT); where it leaves the image it ends at the image's border,
    # so its reflection is the image's, and where it does not, its own border band meets no GT (gap terms vanish)
    grow_r, grow_c = (2 * hr, 2 * hc) if near_border else (hr, hc)
    y0, y1, x0, x1 = max(r0 - grow_r, 0), min(r1 + 1 + grow_r, h), max(c0 - grow_c, 0), min(c1 + 1 + grow_c, w)
    crop = p_at(y0, y1, x0, x1)
    cpu = use_cpu_kernel(g.device)
    filtered = filter2d_reflect_window(
        crop[None], kernel, (r0 - y0, r1 + 1 - y0), (c0 - x0, c1 + 1 - x0), backend="scipy" if cpu else "torch"
    )[0]
    inside = (g.numpy() if cpu else g)[r0 : r1 + 1, c0 : c1 + 1]
    on_gt = (filtered.numpy() if cpu else filtered)[inside]
    forward = on_gt.sum()
    if near_border:  # sum(p (K * g)) = sum(g (K * p)) + the border gap
        forward = forward + filter2d_reflect_gap(crop, g[y0:y1, x0:x1], kernel)
    return forward, on_gt


def _combine(m_forward: Any, w_reverse: Any, beta2: float) -> float:
    return float((1 + beta2) * m_forward * w_reverse / (beta2 * m_forward + w_reverse + EPS))


def context_of_maps(
    p_at: Callable[[int, int, int, int], Tensor],
    g: Tensor,
    moments: list[int],
    p_sum: float,
    beta2: float,
    alpha: float,
) -> float:
    """CM of one prepared map (``p_at`` as in :func:`context_terms`) and bool GT with its moments and ``sum(p)``."""
    if moments[0] == 0:  # no GT: wR = 0, so CM = 0 (as PySOD)
        return 0.0
    forward, on_gt = context_terms(p_at, g, moments, alpha)
    exp = np.exp if isinstance(on_gt, np.ndarray) else torch.exp
    w_reverse = _E_FACTOR * (1 - exp(-on_gt)).sum() / (moments[0] + EPS)
    return _combine(forward / (p_sum + EPS), w_reverse, beta2)


def context_measure(
    preds: ImageBatch,
    target: ImageBatch,
    *,
    beta2: float = 1.0,
    alpha: float = 6.0,
    normalize: bool = True,
    validate_args: bool = True,
) -> Tensor:
    r"""Per-image context measure (module doc), PySODMetrics 1.6.2 ``ContextMeasure`` (to 1e-6).

    Args:
        preds, target: as :func:`segmetrics_torch.functional.f_measure`.
        beta2: weight of forward inference vs reverse deduction (1.0).
        alpha: scale of the Gaussian context kernel (6.0).
        normalize, validate_args: as :func:`segmetrics_torch.functional.f_measure`.

    Returns:
        (B,) float64 on the input's device. Empty GT: 0 (``wR = 0``).

    Example:
        >>> import torch
        >>> target = torch.zeros(1, 32, 32, dtype=torch.uint8); target[:, 8:24, 8:24] = 255
        >>> round(float(context_measure(target.clone(), target)[0]), 4)
        0.6713
    """
    beta2 = check_positive_float(beta2, "beta2")
    alpha = check_positive_float(alpha, "alpha")

    def fn(preds_b: Tensor, target_b: Tensor) -> dict[str, Tensor]:
        p_at, sums, g = _map_access(preds_b, target_b, normalize)
        moments = mask_moments(g).tolist()  # its "auto" asks ops.backend, as use_cpu_kernel does
        # one image at a time: each has its own kernel and box
        values = [context_of_maps(p_at(i), g[i], moments[i], sums[i], beta2, alpha) for i in range(g.shape[0])]
        return {"cm": torch.tensor(values, dtype=torch.float64, device=preds_b.device)}

    return run_raw(fn, preds, target, normalize=normalize, validate_args=validate_args)["cm"]


def _map_access(
    preds: Tensor, target: Tensor, normalize: bool
) -> tuple[Callable[[int], Callable[[int, int, int, int], Tensor]], list[float], Tensor]:
    """``(p_at, sums, g)`` of a block: ``p_at(i)(r0, r1, c0, c1)`` the prepared map ``i`` (``prepare_maps``) on a
    rectangle, ``sums[i]`` its sum over the image, ``g`` the bool GT. CPU uint8 maps are prepared only where read,
    through the family's per-level values (bit-identical); their sum is ``sum(v - min) / (max - min)`` (or
    ``sum(v) / 255``) from exact integer sums."""
    if not use_cpu_kernel(preds.device) or preds.dtype != torch.uint8:
        p, g = prepare_maps(preds, target, normalize)
        return (lambda i: lambda r0, r1, c0, c1: p[i, r0:r1, c0:c1]), p.sum(dim=(1, 2)).tolist(), g
    raw = preds.contiguous().numpy()
    levels = numpy_levels(raw, normalize)
    flat = raw.reshape(raw.shape[0], -1)
    low, high = flat.min(axis=1).astype(np.int64), flat.max(axis=1).astype(np.int64)
    total = flat.sum(axis=1, dtype=np.int64)
    stretch = normalize & (high != low)
    sums = np.where(stretch, (total - flat.shape[1] * low) / np.where(stretch, high - low, 1), total / 255).tolist()
    return (
        (lambda i: lambda r0, r1, c0, c1: torch.from_numpy(levels[i][raw[i, r0:r1, c0:c1]])),
        sums,
        binary_target(target),
    )


# ----------------------------------------------------------------------------------------------------------------
# camouflage context measure
# ----------------------------------------------------------------------------------------------------------------
#: the side of the camouflage degree's patches (PySOD's default)
_PATCH = 7
#: the smallest side whose padding to the patch grid (stride 3) reaches a patch: 5 -> 7, 6 -> 7; 4 stays 4
_SMALLEST = 5


def _patch_grid(img: np.ndarray, mask: np.ndarray, size: int, step: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-left corners and flattened pixels of the ``size x size`` patches (stride ``step``, image reflect-padded
    at the bottom/right to the grid) that lie entirely inside ``mask`` (PySOD ``_extract_patches``)."""
    h, w, c = img.shape
    pad_h, pad_w = (step - (h - size) % step) % step, (step - (w - size) % step) % step
    img_p = np.pad(img, ((0, pad_h), (0, pad_w), (0, 0)), mode="reflect")
    mask_p = np.pad(mask, ((0, pad_h), (0, pad_w)))
    rows = np.arange(0, img_p.shape[0] - size + 1, step)
    cols = np.arange(0, img_p.shape[1] - size + 1, step)
    win = np.lib.stride_tricks.sliding_window_view(img_p, (size, size, c))[::step, ::step, 0]
    mwin = np.lib.stride_tricks.sliding_window_view(mask_p, (size, size))[::step, ::step]
    inside = (mwin > 0).all(axis=(2, 3)).reshape(-1)
    corners = np.stack(np.meshgrid(rows, cols, indexing="ij"), axis=-1).reshape(-1, 2)
    return corners[inside], win.reshape(-1, size * size * c)[inside]


def camouflage_degree(
    img: np.ndarray, g: np.ndarray, gamma: float, lambda_spatial: float, size: int = _PATCH
) -> np.ndarray:
    """PySOD's camouflage degree map: the foreground rebuilt from its nearest surrounding-background patches (Lab
    colour + scaled position, scikit-learn 1-NN), compared with CIEDE2000 and mapped by ``(e^(gamma s) - 1) /
    (e^gamma - 1)`` on the GT."""
    cv2 = _require("cv2")
    from skimage.color import deltaE_ciede2000, rgb2lab
    from sklearn.neighbors import NearestNeighbors
    from sklearn.preprocessing import StandardScaler

    fg = g.astype(np.uint8)
    bg = cv2.dilate(fg, np.ones((20, 20), np.uint8), iterations=1) - fg
    lab = cv2.cvtColor(img, cv2.COLOR_RGB2LAB)
    fg_corners, fg_feat = _patch_grid(lab * fg[:, :, None], fg, size, size // 2)
    bg_corners, bg_feat = _patch_grid(lab * bg[:, :, None], bg, size, size // 2)
    if len(fg_corners) == 0 or len(bg_corners) == 0:
        return np.zeros(g.shape, dtype=np.float64)
    coords = StandardScaler().fit_transform(np.vstack([bg_corners, fg_corners]))
    bg_aug = np.hstack([bg_feat, lambda_spatial * coords[: len(bg_corners)]]).astype(np.float32)
    fg_aug = np.hstack([fg_feat, lambda_spatial * coords[len(bg_corners) :]]).astype(np.float32)
    nearest = NearestNeighbors(n_neighbors=1, algorithm="auto", metric="euclidean").fit(bg_aug).kneighbors(fg_aug)[1]
    # paste every matched background patch onto its foreground patch, average the overlaps (integer sums)
    h, w = g.shape
    src = np.clip(bg_corners[nearest[:, 0]], 0, [h - size, w - size])
    dst = np.clip(fg_corners, 0, [h - size, w - size])
    dy, dx = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
    ty, tx = (dst[:, 0, None, None] + dy).reshape(-1), (dst[:, 1, None, None] + dx).reshape(-1)
    sy, sx = (src[:, 0, None, None] + dy).reshape(-1), (src[:, 1, None, None] + dx).reshape(-1)
    im_bg = img.astype(np.int64) * bg[:, :, None]
    recon = np.zeros(img.shape, dtype=np.int64)
    np.add.at(recon, (ty, tx), im_bg[sy, sx])
    hits = np.zeros(g.shape, dtype=np.int64)
    np.add.at(hits, (ty, tx), 1)
    counts = (hits + EPS)[:, :, None]  # EPS + k: the value PySOD's repeated "+= 1" on EPS reaches
    recon = np.round(recon / counts).astype(np.uint8)
    similarity = 1 - np.clip(
        deltaE_ciede2000(rgb2lab(recon), rgb2lab((img * fg[:, :, None]).astype(np.uint8))) / 100, 0, 1
    )
    return ((np.exp(gamma * similarity * fg) - 1) / (np.exp(gamma) - 1)).astype(np.float64)


def camouflage_context_of_maps(
    p: np.ndarray, g: np.ndarray, img: np.ndarray, beta2: float, alpha: float, gamma: float, lambda_spatial: float
) -> float:
    """CCM of one prepared map (float64), bool GT (numpy) and uint8 RGB image (H, W, 3): the context measure's terms
    (:func:`context_terms`) with the reverse term weighted by ``g + cd`` (``cd`` vanishes off the GT)."""
    pt, gt = torch.from_numpy(p), torch.from_numpy(g)
    moments = mask_moments(gt[None]).tolist()[0]
    if moments[0] == 0:  # no GT: no foreground patch, cd = 0, wR = 0 (as PySOD)
        return 0.0
    cd = camouflage_degree(img, g, gamma, lambda_spatial)
    forward, on_gt = context_terms(lambda r0, r1, c0, c1: pt[r0:r1, c0:c1], gt, moments, alpha)
    forward, on_gt = float(forward), np.asarray(on_gt)  # (tensors on the tensor path)
    w_reverse = _E_FACTOR * np.sum((1 - np.exp(-on_gt)) * (1 + cd[g])) / (moments[0] + np.sum(cd) + EPS)
    return _combine(forward / (np.sum(p) + EPS), w_reverse, beta2)


def camouflage_context_measure(
    preds: ImageBatch,
    target: ImageBatch,
    images: ImageBatch | None = None,
    *,
    beta2: float = 1.2,
    alpha: float = 6.0,
    gamma: float = 8.0,
    lambda_spatial: float = 20.0,
    normalize: bool = True,
    validate_args: bool = True,
) -> Tensor:
    r"""Per-image camouflage context measure, PySODMetrics 1.6.2 ``CamouflageContextMeasure`` (to 1e-6).

    The context measure (module doc) whose reverse term is weighted by ``g + cd``, ``cd`` the camouflage degree of
    the foreground in the RGB image: foreground 7x7 patches (stride 3) are rebuilt from their nearest patches of the
    surrounding background (a 20-pixel ring; Lab colour plus ``lambda_spatial`` x standardised position;
    scikit-learn 1-NN), the rebuilt and true foreground are compared with CIEDE2000 (scikit-image), and
    ``cd = (exp(gamma s) - 1) / (exp(gamma) - 1)`` on the GT. CPU only (OpenCV, scikit-learn, scikit-image), one image
    at a time; CUDA inputs are copied to the host.

    Args:
        preds, target: as :func:`segmetrics_torch.functional.f_measure`.
        images: the RGB images, uint8, (B, H, W, 3) or a list of (H, W, 3) (required; same H, W as ``preds``).
        beta2 (1.2), alpha (6.0), gamma (8), lambda_spatial (20): PySOD's parameters.

    Returns:
        (B,) float64 on the input's device.

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional import camouflage_context_measure
        >>> g = torch.Generator().manual_seed(0)
        >>> images = torch.randint(0, 256, (1, 48, 48, 3), dtype=torch.uint8, generator=g)
        >>> target = torch.zeros(1, 48, 48, dtype=torch.bool)
        >>> target[:, 16:32, 16:32] = True
        >>> [round(v, 4) for v in camouflage_context_measure(target.to(torch.uint8) * 255, target, images).tolist()]
        [0.6781]
    """
    beta2 = check_positive_float(beta2, "beta2")
    alpha = check_positive_float(alpha, "alpha")
    gamma = check_positive_float(gamma, "gamma")
    lambda_spatial = check_positive_float(lambda_spatial, "lambda_spatial")
    if images is None:
        raise ValueError("Expected `images` (the RGB images, uint8 (B, H, W, 3)), but got None.")
    if isinstance(images, Tensor):
        if images.ndim != 4 or images.shape[-1] != 3:
            raise ValueError(f"Expected `images` of shape (B, H, W, 3), but got {tuple(images.shape)}.")
        image_list = list(images)
    elif isinstance(images, (list, tuple)):
        image_list = list(images)
    else:
        raise TypeError(f"Expected `images` to be a tensor or a list of tensors, but got {type(images).__name__}.")
    for i, im in enumerate(image_list):
        if not isinstance(im, Tensor):
            raise TypeError(f"Expected `images[{i}]` to be a torch.Tensor, but got {type(im).__name__}.")
        if im.dtype != torch.uint8 or im.ndim != 3 or im.shape[-1] != 3:
            raise ValueError(f"Expected `images[{i}]` uint8 of shape (H, W, 3), but got {im.dtype} {tuple(im.shape)}.")
    # preds / target through the family's checks first (same messages as every other foreground measure)
    run_raw(
        lambda p_b, _: {"n": torch.zeros(p_b.shape[0])}, preds, target, normalize=normalize, validate_args=validate_args
    )
    p_list, t_list = list(preds), list(target)
    if len(p_list) != len(image_list):
        raise ValueError(f"Expected as many `images` as `preds`, but got {len(image_list)} and {len(p_list)}.")
    for i, (p_i, im) in enumerate(zip(p_list, image_list, strict=True)):
        if tuple(im.shape[:2]) != tuple(p_i.shape[-2:]):
            raise ValueError(
                f"Expected `images[{i}]` of size {tuple(p_i.shape[-2:])} (as `preds[{i}]`), but got "
                f"{tuple(im.shape[:2])}."
            )
        if min(im.shape[:2]) < _SMALLEST:  # PySOD fails inside numpy there (a patch larger than the padded image)
            raise ValueError(
                f"Expected `preds[{i}]` and `images[{i}]` of at least {_SMALLEST}x{_SMALLEST} pixels (the measure "
                f"compares {_PATCH}x{_PATCH} patches of the image reflect-padded to their grid), but got "
                f"{tuple(im.shape[:2])}."
            )
    values = []
    for i, (p_i, t_i) in enumerate(zip(p_list, t_list, strict=True)):
        p, g = _prepared_one(p_i, t_i, normalize, i)  # checked above
        img = image_list[i].cpu().numpy()
        try:
            values.append(camouflage_context_of_maps(p, g, img, beta2, alpha, gamma, lambda_spatial))
        except ValueError as err:
            if len(p_list) == 1:
                raise
            raise ValueError(f"Image {i} of the batch: {err}") from None
    device = p_list[0].device
    return torch.tensor(values, dtype=torch.float64, device=device)


def _prepared_one(pred: Tensor, target: Tensor, normalize: bool, i: int) -> tuple[np.ndarray, np.ndarray]:
    """One (checked) image through the family's preparation -> numpy (p, g)."""
    out = {}

    def keep(p_b: Tensor, t_b: Tensor) -> dict[str, Tensor]:
        p, g = prepare_maps(p_b.cpu(), t_b.cpu(), normalize)
        out["p"], out["g"] = p[0].numpy(), g[0].numpy()
        return {"n": torch.zeros(1)}

    run_raw(keep, [pred], [target], normalize=normalize, validate_args=False, names=(f"preds[{i}]", f"target[{i}]"))
    return out["p"], out["g"]
