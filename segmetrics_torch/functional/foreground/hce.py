r"""Human Correction Effort (HCE; Qin et al., ECCV 2022, DIS benchmark), PySODMetrics 1.6.2.

HCE estimates the number of mouse clicks a person needs to correct a prediction: with ``P = p > 0.5`` and the GT
``g``, the false positives / negatives are relaxed (``relax`` erosions of ``P | g`` and ``relax`` dilations, 3x3
cross), the GT skeleton's missed pixels are added to the false negatives, and

    HCE = (control points of the RDP polygons of the FP / FN boundary segments that touch the condition region)
        + (FP / FN connected regions none of whose boundary points needs an edit).

Steps and library calls are those of ``HumanCorrectionEffortMeasure.cal_hce``: ``skimage.morphology.skeletonize``,
``cv2.erode``/``cv2.dilate`` with ``skimage.morphology.disk(1)``, ``cv2.findContours(RETR_TREE,
CHAIN_APPROX_NONE)``, ``cv2.approxPolyDP(epsilon, closed=False)``; connected regions with 8-connectivity
(``skimage.measure.label``'s default; OpenCV's ``connectedComponents(connectivity=8)`` here, the same regions).

Device story (honest): contour tracing and polygon simplification are sequential by nature and are done by OpenCV
on the CPU, image by image, images spread over ``torch.get_num_threads()`` threads (an optional dependency:
``pip install opencv-python-headless``; scikit-image for the skeleton, run per component box). CUDA inputs are
copied to the host for the whole measure; the result is returned on the input's device.
What is ours is the per-contour-point work that PySOD does in a Python loop (condition test, "visited" test, cutting
contours into boundary segments, the wrap-around merge, the independent-region flags): vectorised with numpy.

Edge cases (as PySOD): a perfect prediction scores 0; an empty GT and empty prediction score 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

from ..._checks import ImageBatch
from ._extra_runner import run_raw
from ._level_path import binary_target, numpy_levels
from ._prepare import prepare_maps

__all__ = ["human_correction_effort"]

#: skimage.morphology.disk(1) (the 3x3 cross of PySOD's erosions / dilations), built once
_DISK1 = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], dtype=np.uint8)


def _imports() -> tuple[Any, Any]:  # (cv2, skimage.morphology)
    try:
        import cv2
        from skimage import morphology
    except ImportError as err:  # pragma: no cover - optional extra
        raise ImportError(
            "HumanCorrectionEffort needs OpenCV and scikit-image (contours and polygons are OpenCV's, as in "
            "PySODMetrics): pip install 'segmetrics-torch[opencv]' (or opencv-python-headless scikit-image)"
        ) from err
    # skimage loads its submodules lazily on first attribute access; touch what is used here so that threads
    # never see a half-built module
    morphology.disk, morphology.skeletonize  # noqa: B018
    return cv2, morphology


def _boundary_segments(
    contours: Sequence[np.ndarray], mask: np.ndarray, condition: np.ndarray, kernel: np.ndarray, cv2: Any
) -> tuple[list[np.ndarray], int]:
    """PySOD's ``filter_conditional_boundary``, vectorised over contour points: (segments, independent regions)."""
    condition = cv2.dilate(condition.astype(np.uint8), kernel)
    n_labels, labels = cv2.connectedComponents(mask.view(np.uint8), connectivity=8, ltype=cv2.CV_32S)
    n_labels -= 1  # OpenCV counts the background as label 0
    if not contours:
        return [], int(n_labels)
    lengths = np.array([len(c) for c in contours])
    pts = np.concatenate([c.reshape(-1, 2) for c in contours])  # (x, y) = (col, row)
    cid = np.repeat(np.arange(len(contours)), lengths)
    cols, rows = pts[:, 0], pts[:, 1]
    lin = rows.astype(np.int64) * mask.shape[1] + cols
    # a point is kept if the condition holds there and no earlier point of any contour was kept at that pixel:
    # the condition is a property of the pixel, so "kept before" = "an earlier occurrence exists"
    first = np.zeros(len(lin), dtype=bool)
    first[np.unique(lin, return_index=True)[1]] = True
    kept = (condition[rows, cols] != 0) & first
    touched = np.unique(labels[rows[kept], cols[kept]])
    independent = int(n_labels) - int(np.count_nonzero(touched))
    idx = np.nonzero(kept)[0]
    if idx.size == 0:
        return [], independent
    # runs of consecutive kept points within a contour
    new_run = np.ones(idx.size, dtype=bool)
    new_run[1:] = (idx[1:] != idx[:-1] + 1) | (cid[idx[1:]] != cid[idx[:-1]])
    starts = np.nonzero(new_run)[0]
    runs = np.split(idx, starts[1:])
    run_cid = cid[idx[starts]]
    segments: list[np.ndarray] = []
    bounds = np.searchsorted(run_cid, np.arange(len(contours) + 1))
    for c in np.nonzero(np.diff(bounds))[0]:
        group = runs[bounds[c] : bounds[c + 1]]
        if len(group) > 1:
            x0, y0 = pts[group[0][0]]
            x1, y1 = pts[group[-1][-1]]
            if max(abs(int(x0) - int(x1)), abs(int(y0) - int(y1))) == 1:  # 8-adjacent ends: close the ring
                group = [*group[1:-1], np.concatenate([group[-1], group[0][::-1]])]
        segments.extend(pts[g][:, None, :].astype(np.int32) for g in group)
    return segments, independent


def _missed_skeleton(g: np.ndarray, pred: np.ndarray, morphology: Any) -> np.ndarray:
    """``skeletonize(g) & ~pred`` (PySOD's ``skeleton ^ (tp & skeleton)``), the skeleton run per 8-connected component
    box.

    Zhang-Suen thinning decides every pixel from its 3x3 neighbourhood, so components separated by background evolve
    independently and the zeros outside a box are what skimage's own zero border gives: the result is identical,
    and the passes (as many as half the thickest object) sweep the boxes instead of the whole image. A component
    inside ``pred`` is skipped: its skeleton lies in it, so nothing of it is missed.
    """
    import cv2

    out = np.zeros(g.shape, dtype=bool)
    # OpenCV's 8-connected labelling with boxes: the components of scipy / skimage's 8-connectivity, in one pass
    n, labels, stats, _ = cv2.connectedComponentsWithStats(g.view(np.uint8), connectivity=8, ltype=cv2.CV_32S)
    for i in range(1, n):
        x, y, w, h = (int(v) for v in stats[i, :4])
        sl = (slice(y, y + h), slice(x, x + w))
        component = labels[sl] == i
        if not (component & ~pred[sl]).any():
            continue
        out[sl] |= morphology.skeletonize(component).astype(bool)
    return out & ~pred


def hce_of_maps(pred: np.ndarray, g: np.ndarray, relax: int, epsilon: float) -> float:
    """HCE of one binary prediction ``p > 0.5`` and bool GT (numpy, CPU)."""
    cv2, morphology = _imports()
    kernel = _DISK1
    missed_skeleton = _missed_skeleton(g, pred, morphology)
    union = g | pred
    tp = g & pred
    fp = pred ^ tp
    fn = g ^ tp
    # PySOD's relaxation on {0, 1} uint8 maps (no bool round trips; the same pixels)
    # an erosion by the 3x3 cross reaches one L1 step further each time, so it is done after H + W - 2 steps, and a
    # dilation inside a mask once it stops growing: the steps beyond change nothing (relax=10^7 ran for hours on a
    # 16 x 16 image)
    eroded = cv2.erode(union.view(np.uint8), kernel, iterations=min(relax, g.shape[0] + g.shape[1]))
    not_g, not_pred = (~g).view(np.uint8), (~pred).view(np.uint8)
    fp_ = _grown(fp.view(np.uint8) & eroded, not_g, relax, kernel, cv2)
    fp_ = fp & fp_.view(bool)
    fn_ = _grown(fn.view(np.uint8) & eroded, not_pred, relax, kernel, cv2)
    fn_ = (fn & fn_.view(bool)) | missed_skeleton
    contours_fp, _ = cv2.findContours(fp_.astype(np.uint8), cv2.RETR_TREE, cv2.CHAIN_APPROX_NONE)
    seg_fp, ind_fp = _boundary_segments(contours_fp, fp_, tp | fn_, kernel, cv2)
    contours_fn, _ = cv2.findContours(fn_.astype(np.uint8), cv2.RETR_TREE, cv2.CHAIN_APPROX_NONE)
    seg_fn, ind_fn = _boundary_segments(contours_fn, fn_, ~(tp | fp_ | fn_), kernel, cv2)
    points = sum(len(cv2.approxPolyDP(s, epsilon, False)) for s in (*seg_fp, *seg_fn))
    return float(points + ind_fp + ind_fn)


def _grown(seed: np.ndarray, inside: np.ndarray, steps: int, kernel: np.ndarray, cv2: Any) -> np.ndarray:
    """``steps`` dilations of the uint8 ``seed``, each kept ``inside``, stopped early once one adds nothing."""
    for _ in range(steps):
        grown = cv2.dilate(seed, kernel) & inside
        if np.array_equal(grown, seed):
            break
        seed = grown
    return seed


def check_hce_args(relax: object, epsilon: object) -> tuple[int, float]:
    if isinstance(relax, bool) or not isinstance(relax, int) or relax < 0:
        raise ValueError(f"Expected argument `relax` to be a non-negative integer, but got {relax!r}.")
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not epsilon >= 0:
        raise ValueError(f"Expected argument `epsilon` to be a non-negative number, but got {epsilon!r}.")
    return relax, float(epsilon)


def human_correction_effort(
    preds: ImageBatch,
    target: ImageBatch,
    *,
    relax: int = 5,
    epsilon: float = 2.0,
    normalize: bool = True,
    validate_args: bool = True,
) -> Tensor:
    r"""Per-image Human Correction Effort (lower is better), PySODMetrics 1.6.2 ``HumanCorrectionEffortMeasure``.

    See the module documentation for the definition and the device story (OpenCV on the CPU).
    Reference: Qin et al., "Highly Accurate Dichotomous Image Segmentation", ECCV 2022 (to 1e-6: equal counts).

    Args:
        preds, target: as :func:`segmetrics_torch.functional.f_measure`.
        relax: number of erosion / dilation steps of the relaxation (5).
        epsilon: tolerance of the Ramer-Douglas-Peucker polygon approximation (2.0).
        normalize, validate_args: as :func:`segmetrics_torch.functional.f_measure`.

    Returns:
        (B,) float64 on the input's device.

    Example:
        >>> import torch
        >>> target = torch.zeros(1, 32, 32, dtype=torch.uint8); target[:, 8:24, 8:24] = 255
        >>> float(human_correction_effort(target.clone(), target)[0])
        0.0
    """
    relax, epsilon = check_hce_args(relax, epsilon)

    def fn(preds_b: Tensor, target_b: Tensor) -> dict[str, Tensor]:
        preds_c, target_c = preds_b.cpu(), target_b.cpu()
        if preds_c.dtype == torch.uint8:  # only p > 0.5 is used: decide it per level (bit-identical p(v))
            # numpy, image by image: torch's two-thread reductions / gathers cost more than the measure on the
            # shared test machine
            raw = preds_c.contiguous().numpy()
            levels = numpy_levels(raw, normalize)
            above = levels > 0.5
            pn = np.stack([above[i][raw[i]] for i in range(raw.shape[0])])
            gn = binary_target(target_c).numpy()
        else:
            p, g = prepare_maps(preds_c, target_c, normalize)
            pn, gn = (p > 0.5).numpy(), g.numpy()
        workers = max(1, min(torch.get_num_threads(), pn.shape[0]))
        _imports()  # before the threads: concurrent first imports of skimage's lazy submodules see them half-built
        if workers == 1:
            values = [hce_of_maps(pn[i], gn[i], relax, epsilon) for i in range(pn.shape[0])]
        else:  # OpenCV and skimage's skeleton release the GIL: images in parallel threads
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(workers) as pool:
                values = list(pool.map(lambda i: hce_of_maps(pn[i], gn[i], relax, epsilon), range(pn.shape[0])))
        return {"hce": torch.tensor(values, dtype=torch.float64, device=preds_b.device)}

    return run_raw(fn, preds, target, normalize=normalize, validate_args=validate_args)["hce"]
