r"""Context measure (Wang et al. 2025, arXiv:2512.07076), PySODMetrics 1.6.2 ``ContextMeasure``.

With the prepared map ``p``, the GT ``g`` and a Gaussian kernel ``K`` shaped by the GT's pixel-coordinate covariance
``S`` (scaled to ``alpha^2 S / trace(S)``, half sizes ``round(3 alpha sigma_row / sqrt(trace S))`` and likewise for
columns; one GT pixel or none: ``S = diag(0.25, 0.25)``, half sizes 1; a zero variance is replaced by EPS):

* forward inference ``F = [p > 0] * (K * g)`` (correlation in **float32**, OpenCV ``filter2D(CV_32F)``, border
  ``REFLECT_101``), ``mF = sum(F p) / (sum(p) + EPS)``;
* reverse deduction ``R = e / (e - 1) * g * (1 - exp(-(K * p)))`` (float64 ``filter2D``), ``wR = sum(R g) /
  (sum(g) + EPS)``;
* ``CM = (1 + beta2) mF wR / (beta2 mF + wR + EPS)``.

The correlations are OpenCV's own calls, as in PySOD (its float32 forward term and its DFT path for large kernels
decide the last digits), so this is exact by construction; the device story: the kernels differ per image and the
filtering runs with OpenCV on the CPU (CUDA inputs are copied to the host), one image at a time
(OpenCV parallelises each filter over its own ``cv2.getNumThreads()`` threads, as it does for PySOD).
``camouflage_context_measure`` (below) weights the reverse term by the camouflage degree of the RGB image.

Edge case: when the GT pixels all lie on one slanted line their covariance is singular and the kernel undefined;
PySODMetrics 1.6.2 stops with numpy's ``LinAlgError``, here it is a ``ValueError`` naming ``target``.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import Tensor

from ..._checks import check_positive_float
from ._extra_runner import run_raw
from ._level_path import numpy_maps
from ._prepare import prepare_maps

__all__ = ["context_measure"]

EPS = float(np.spacing(1))


def _require(module: str):
    """Import an optional dependency of the context measures, or say how to install it."""
    import importlib

    try:
        for name in ("cv2", "skimage", "sklearn"):  # all three, so one message names the extra once
            importlib.import_module(name)
    except ImportError as err:  # pragma: no cover - optional extra
        raise ImportError(
            "ContextMeasure / CamouflageContextMeasure need OpenCV, scikit-image and scikit-learn (their filters, "
            "colour and neighbour steps are those of PySODMetrics): pip install 'segmetrics-torch[opencv]'"
        ) from err
    return importlib.import_module(module)


def _kernel(g: np.ndarray, alpha: float) -> np.ndarray:
    points = np.argwhere(g)
    if len(points) <= 1:
        cov, x_dis, y_dis = np.diag([0.25, 0.25]), 1, 1
    else:
        cov = np.cov(points, rowvar=False)
        cov[0, 0] = cov[0, 0] if cov[0, 0] != 0 else EPS
        cov[1, 1] = cov[1, 1] if cov[1, 1] != 0 else EPS
        total = np.sqrt(cov[0, 0] + cov[1, 1])
        x_dis = round(3 * (alpha * np.sqrt(cov[0, 0]) / total))
        y_dis = round(3 * (alpha * np.sqrt(cov[1, 1]) / total))
        cov = alpha**2 * cov / total**2
    try:
        inv = np.linalg.inv(cov)
    except np.linalg.LinAlgError:  # PySOD 1.6.2 raises numpy's LinAlgError here: no reference value exists
        raise ValueError(
            "Expected a `target` whose foreground pixels do not all lie on one slanted line: their covariance is "
            "singular and the context measure's Gaussian kernel is undefined (PySODMetrics 1.6.2 fails there too)."
        ) from None
    x, y = np.meshgrid(np.arange(-x_dis, x_dis + 1), np.arange(-y_dis, y_dis + 1), indexing="ij")
    z = np.stack([x, y], axis=-1)
    kernel = np.exp(-0.5 * np.einsum("...i,ij,...j->...", z, inv, z)) / (2 * np.pi * np.sqrt(np.linalg.det(cov)))
    return kernel / np.sum(kernel)


def context_of_maps(p: np.ndarray, g: np.ndarray, beta2: float, alpha: float) -> float:
    """CM of one prepared map (float64) and bool GT (numpy, CPU, OpenCV)."""
    cv2 = _require("cv2")

    kernel = _kernel(g, alpha)
    # the same filter2D calls as PySOD; the per-pixel products are PySOD's ([p > 0] F p = F p as p >= 0, and the
    # reverse term vanishes off the GT, so exp runs on the GT pixels only); the sums may differ in the last bits
    relevance = cv2.filter2D(g.astype(np.float32), cv2.CV_32F, kernel).astype(np.float64)
    m_forward = np.sum(relevance * p) / (np.sum(p) + EPS)  # (not np.dot: BLAS threads spin on a busy machine)
    inside = cv2.filter2D(p, -1, kernel)[g]
    w_reverse = (math.e / (math.e - 1)) * np.sum(1 - np.exp(-1 * inside)) / (inside.size + EPS)
    return float((1 + beta2) * m_forward * w_reverse / (beta2 * m_forward + w_reverse + EPS))


def context_measure(
    preds: Tensor | list[Tensor],
    target: Tensor | list[Tensor],
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
        pn, gn = numpy_maps(preds_b, target_b, normalize)
        # one image at a time: OpenCV's filter2D already runs on its own threads (cv2.getNumThreads()); images in
        # torch's threads on top of it cost ~30 % more CPU time (measured on the 2-core VM)
        values = [context_of_maps(pn[i], gn[i], beta2, alpha) for i in range(pn.shape[0])]
        return {"cm": torch.tensor(values, dtype=torch.float64, device=preds_b.device)}

    return run_raw(fn, preds, target, normalize=normalize, validate_args=validate_args)["cm"]


# ----------------------------------------------------------------------------------------------------------------
# camouflage context measure
# ----------------------------------------------------------------------------------------------------------------
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


def camouflage_degree(img: np.ndarray, g: np.ndarray, gamma: float, lambda_spatial: float, size: int = 7) -> np.ndarray:
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
    similarity = 1 - np.clip(deltaE_ciede2000(rgb2lab(recon), rgb2lab((img * fg[:, :, None]).astype(np.uint8))) / 100,
                             0, 1)  # fmt: skip
    return ((np.exp(gamma * similarity * fg) - 1) / (np.exp(gamma) - 1)).astype(np.float64)


def camouflage_context_of_maps(p, g, img, beta2, alpha, gamma, lambda_spatial) -> float:
    """CCM of one prepared map, bool GT and uint8 RGB image (H, W, 3)."""
    cv2 = _require("cv2")

    cd = camouflage_degree(img, g, gamma, lambda_spatial)
    gf = g.astype(np.float64)
    kernel = _kernel(g, alpha)
    forward = (p > 0).astype(int) * cv2.filter2D(gf.astype(np.float32), cv2.CV_32F, kernel)
    m_forward = np.sum(forward * p) / (np.sum(p) + EPS)
    reverse = (math.e / (math.e - 1)) * gf * (1 - np.exp(-1 * cv2.filter2D(p, -1, kernel)))
    w_reverse = np.sum(reverse * (gf + cd)) / (np.sum(gf) + np.sum(cd) + EPS)
    return float((1 + beta2) * m_forward * w_reverse / (beta2 * m_forward + w_reverse + EPS))


def camouflage_context_measure(
    preds: Tensor | list[Tensor],
    target: Tensor | list[Tensor],
    images: Tensor | list[Tensor] | None = None,
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
    run_raw(lambda p_b, _: {"n": torch.zeros(p_b.shape[0])}, preds, target, normalize=normalize,
            validate_args=validate_args)  # fmt: skip
    p_list, t_list = list(preds), list(target)
    if len(p_list) != len(image_list):
        raise ValueError(f"Expected as many `images` as `preds`, but got {len(image_list)} and {len(p_list)}.")
    for i, (p_i, im) in enumerate(zip(p_list, image_list, strict=True)):
        if tuple(im.shape[:2]) != tuple(p_i.shape[-2:]):
            raise ValueError(
                f"Expected `images[{i}]` of size {tuple(p_i.shape[-2:])} (as `preds[{i}]`), but got "
                f"{tuple(im.shape[:2])}."
            )
    values = []
    for i, (p_i, t_i) in enumerate(zip(p_list, t_list, strict=True)):
        p, g = _prepared_one(p_i, t_i, normalize, i)  # checked above
        img = image_list[i].cpu().numpy()
        values.append(camouflage_context_of_maps(p, g, img, beta2, alpha, gamma, lambda_spatial))
    device = p_list[0].device
    return torch.tensor(values, dtype=torch.float64, device=device)


def _prepared_one(pred: Tensor, target: Tensor, normalize: bool, i: int):
    """One (checked) image through the family's preparation -> numpy (p, g)."""
    out = {}

    def keep(p_b: Tensor, t_b: Tensor) -> dict[str, Tensor]:
        p, g = prepare_maps(p_b.cpu(), t_b.cpu(), normalize)
        out["p"], out["g"] = p[0].numpy(), g[0].numpy()
        return {"n": torch.zeros(1)}

    run_raw(keep, [pred], [target], normalize=normalize, validate_args=False,
            names=(f"preds[{i}]", f"target[{i}]"))  # fmt: skip
    return out["p"], out["g"]
