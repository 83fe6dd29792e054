"""The notes' cases A-E and thin wrappers calling each reference library on one binary pair (numpy bool arrays).

Each wrapper imports its library lazily; the tests call ``pytest.importorskip`` first.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import ndimage


def case(name: str) -> tuple[np.ndarray, np.ndarray, tuple[float, ...]]:
    """(pred, gt, spacing) of the conventions notes' section 6 (D and E smaller: 48^3 blobs, a 48x48 slice)."""
    if name in ("A", "A'"):
        g = np.zeros((20, 20), bool)
        g[5:11, 5:11] = True
        p = np.zeros((20, 20), bool)
        p[7:13, 6:13] = True
        return p, g, (1.0, 1.0) if name == "A" else (2.0, 0.5)
    if name == "B":
        g = np.zeros((20, 20, 20), bool)
        g[4:12, 4:12, 4:12] = True
        return np.roll(g, (1, 2, 3), axis=(0, 1, 2)), g, (2.0, 1.0, 0.5)
    if name == "C":
        g = np.zeros((40, 40), bool)
        g[5:15, 5:15] = True
        p = g.copy()
        p[30:32, 30:32] = True
        return p, g, (1.0, 1.0)
    if name in ("D", "E"):
        rng = np.random.default_rng(0)
        a = rng.standard_normal((48, 48, 48))
        b = a + 0.5 * rng.standard_normal((48, 48, 48))
        g = ndimage.gaussian_filter(a, 4) > 0.02
        p = ndimage.gaussian_filter(b, 4) > 0.02
        if name == "E":
            return p[24], g[24], (1.0, 1.0)
        return p, g, (1.0, 1.0, 1.0)
    raise KeyError(name)


CASES = ("A", "A'", "B", "C", "D", "E")


def _t(x: np.ndarray):  # type: ignore[no-untyped-def]
    import torch

    return torch.from_numpy(x.astype(np.float32))[None, None]


def monai_hd(p, g, spacing, percentile=None, directed=False, metric="euclidean") -> float:  # type: ignore[no-untyped-def]
    from monai.metrics import compute_hausdorff_distance

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = compute_hausdorff_distance(
            _t(p),
            _t(g),
            include_background=True,
            distance_metric=metric,
            percentile=percentile,
            directed=directed,
            spacing=list(spacing),
        )
    return float(out.reshape(-1)[0])


def monai_asd(p, g, spacing, symmetric=False) -> float:  # type: ignore[no-untyped-def]
    from monai.metrics import compute_average_surface_distance

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = compute_average_surface_distance(
            _t(p), _t(g), include_background=True, symmetric=symmetric, spacing=list(spacing)
        )
    return float(out.reshape(-1)[0])


def monai_nsd(p, g, spacing, tolerance, use_subvoxels=False) -> float:  # type: ignore[no-untyped-def]
    from monai.metrics import compute_surface_dice

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = compute_surface_dice(
            _t(p), _t(g), [tolerance], include_background=True, spacing=list(spacing), use_subvoxels=use_subvoxels
        )
    return float(out.reshape(-1)[0])


def medpy_all(p, g, spacing, connectivity=1) -> dict[str, float]:  # type: ignore[no-untyped-def]
    from medpy.metric import binary

    kw = {"voxelspacing": spacing, "connectivity": connectivity}
    return {
        "hd": float(binary.hd(p, g, **kw)),
        "hd95": float(binary.hd95(p, g, **kw)),
        "asd": float(binary.asd(p, g, **kw)),
        "assd": float(binary.assd(p, g, **kw)),
    }


def deepmind_all(p, g, spacing, tolerance=1.0) -> dict[str, float]:  # type: ignore[no-untyped-def]
    import surface_distance as sd_lib

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its deprecated scipy.ndimage.filters namespace
        sd = sd_lib.compute_surface_distances(g, p, list(spacing))
        gt_to_pred, pred_to_gt = sd_lib.compute_average_surface_distance(sd)
        return {
            "hd": float(sd_lib.compute_robust_hausdorff(sd, 100)),
            "hd95": float(sd_lib.compute_robust_hausdorff(sd, 95)),
            "asd": float(pred_to_gt),
            "assd": (float(gt_to_pred) + float(pred_to_gt)) / 2,
            "nsd": float(sd_lib.compute_surface_dice_at_tolerance(sd, tolerance)),
        }


def torchmetrics_hd(p, g, spacing, metric="euclidean", directed=False) -> float:  # type: ignore[no-untyped-def]
    import torch
    from torchmetrics.functional.segmentation import hausdorff_distance

    pp = torch.from_numpy(p.astype(np.int64))[None, None]
    gg = torch.from_numpy(g.astype(np.int64))[None, None]
    out = hausdorff_distance(
        pp, gg, num_classes=1, include_background=True, distance_metric=metric, spacing=list(spacing), directed=directed
    )
    return float(out.reshape(-1)[0])


def authors_boundary_iou(p, g, dilation_ratio=0.02) -> float:  # type: ignore[no-untyped-def]
    """boundary-iou-api's ``mask_to_boundary`` (cv2, uint8, one-pixel zero pad) and the plain IoU of the bands."""
    import cv2

    def mask_to_boundary(mask: np.ndarray) -> np.ndarray:
        h, w = mask.shape
        img_diag = np.sqrt(h**2 + w**2)
        dilation = int(round(dilation_ratio * img_diag))  # noqa: RUF046 (the authors' line, verbatim)
        if dilation < 1:
            dilation = 1
        new_mask = cv2.copyMakeBorder(mask, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)
        kernel = np.ones((3, 3), dtype=np.uint8)
        new_mask_erode = cv2.erode(new_mask, kernel, iterations=dilation)
        mask_erode = new_mask_erode[1 : h + 1, 1 : w + 1]
        return mask - mask_erode

    bg, bp = mask_to_boundary(g.astype(np.uint8)), mask_to_boundary(p.astype(np.uint8))
    inter = ((bg * bp) > 0).sum()
    union = ((bg + bp) > 0).sum()
    return math.nan if union == 0 else float(inter / union)
