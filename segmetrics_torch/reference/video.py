"""Plain numpy oracle of the DAVIS video object segmentation protocol (``davis2017-evaluation``, Pont-Tuset,
Perazzi, Caelles et al., "The 2017 DAVIS Challenge on Video Object Segmentation", arXiv:1704.00675), one object and
one frame at a time, as that code computes it. Depends on numpy and scipy only (``dilate`` may be given OpenCV's);
opens no file (the caller's ``read`` decodes the PNGs, e.g. ``np.array(Image.open(path))``, as the reference does).

The steps, as in ``davis2017/{davis,results,metrics,evaluation,utils}.py`` and ``evaluation_method.py``:

* ground truth: ``Annotations[_unsupervised]/<res>/<seq>/*.png`` sorted by name, read as float64 frames; 255 is void
  (a mask of its own, then set to 0); objects 1..(the largest id of the first frame), one-hot over all frames;
* results: ``<results>/<seq>/<frame>.png`` for the evaluated frames, objects 1..(their largest id over those frames);
* semi-supervised: the first and the last frame left out; fewer result objects padded with empty masks, more an
  error; J and F without the void mask;
* unsupervised: all frames; at most 20 proposals; padded to the objects; J and F of every (proposal, object) pair with
  the void mask; the Hungarian matching (``linear_sum_assignment``) maximising the mean over frames of
  ``(J + F) / 2``; the matched pairs listed in proposal order (``row_ind`` ascending) and named ``<seq>_1..K`` in that
  order;
* J: ``|S & G & ~V| / |(S | G) & ~V|``, 1 when the union is empty;
* F: ``seg2bmap`` boundaries of ``mask & ~V``, dilation with the disk of radius ``ceil(0.008 * ||(H, W)||)``
  (``skimage.morphology.disk`` + ``cv2.dilate``: zero outside the image), precision / recall with DAVIS' empty cases;
* statistics: ``nanmean``; recall ``nanmean(x > 0.5)``; decay: the bin edges
  ``round(linspace(1, N, 5) + 1e-10) - 1`` cast to **uint8** (wrapping beyond 255), bins ``x[e_i : e_{i+1} + 1]``
  where ``e_{i+1} + 1`` is computed in int64 (numpy 1.x's promotion of ``uint8 + 1``, which the code was written
  for; numpy 2 would wrap ``255 + 1`` to 0 as well), decay ``nanmean(bin_0) - nanmean(bin_3)``;
* tables: global ``J&F-Mean`` = (mean of the objects' J means + mean of their F means) / 2, the other columns the
  means over objects; per object ``Sequence, J-Mean, F-Mean``; CSV as ``pandas.DataFrame.to_csv(index=False,
  float_format="%.3f")`` writes it.
"""

from __future__ import annotations

import csv
import io
import math
import os
import warnings
from collections.abc import Callable, Sequence

import numpy as np
from scipy import ndimage
from scipy.optimize import linear_sum_assignment

from .boundary import davis_f, seg2bmap

__all__ = [
    "GLOBAL_COLUMNS",
    "db_eval_boundary",
    "db_eval_iou",
    "db_statistics",
    "decay_edges",
    "disk",
    "evaluate_folder",
    "evaluate_semisupervised",
    "evaluate_unsupervised",
    "f_measure",
    "global_csv",
    "per_sequence_csv",
    "read_gt_masks",
    "read_result_masks",
]

GLOBAL_COLUMNS = ("J&F-Mean", "J-Mean", "J-Recall", "J-Decay", "F-Mean", "F-Recall", "F-Decay")
Dilate = Callable[[np.ndarray, np.ndarray], np.ndarray]
Read = Callable[[str], np.ndarray]


def disk(radius: float) -> np.ndarray:
    """``skimage.morphology.disk(radius)``: ``X^2 + Y^2 <= r^2`` on ``arange(-r, r + 1)``."""
    ax = np.arange(-radius, radius + 1)
    x, y = np.meshgrid(ax, ax)
    return (x**2 + y**2) <= radius**2


def _dilate_scipy(mask: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    # cv2.dilate with a symmetric odd kernel centred, borders not dilating: binary_dilation with zero border
    return ndimage.binary_dilation(mask.astype(bool), structure=kernel.astype(bool), border_value=0)


def db_eval_iou(annotation: np.ndarray, segmentation: np.ndarray, void: np.ndarray | None = None) -> np.ndarray:
    """J of each frame: ``|S & G & ~V| / |(S | G) & ~V|``, 1 where the union is empty."""
    annotation = annotation.astype(bool)
    segmentation = segmentation.astype(bool)
    not_void = np.ones_like(annotation) if void is None else ~void.astype(bool)
    inter = np.sum((segmentation & annotation) & not_void, axis=(-2, -1))
    union = np.sum((segmentation | annotation) & not_void, axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        j = inter / union
    j = np.asarray(j, dtype=np.float64)
    j[np.isclose(union, 0)] = 1
    return j


def f_measure(
    foreground: np.ndarray,
    gt: np.ndarray,
    void: np.ndarray | None = None,
    bound_th: float = 0.008,
    dilate: Dilate | None = None,
) -> float:
    """F of one frame (``metrics.f_measure``)."""
    not_void = np.ones(foreground.shape, bool) if void is None else ~void.astype(bool)
    bound_pix = bound_th if bound_th >= 1 else math.ceil(bound_th * np.linalg.norm(foreground.shape))
    fg_b = seg2bmap((foreground.astype(bool) & not_void).astype(np.uint8))
    gt_b = seg2bmap((gt.astype(bool) & not_void).astype(np.uint8))
    kernel = disk(bound_pix)
    dil = dilate or _dilate_scipy
    fg_dil = dil(fg_b, kernel).astype(bool)
    gt_dil = dil(gt_b, kernel).astype(bool)
    f, _, _ = davis_f(int((fg_b & gt_dil).sum()), int(fg_b.sum()), int((gt_b & fg_dil).sum()), int(gt_b.sum()))
    return f


def db_eval_boundary(
    annotation: np.ndarray,
    segmentation: np.ndarray,
    void: np.ndarray | None = None,
    bound_th: float = 0.008,
    dilate: Dilate | None = None,
) -> np.ndarray:
    """F of each frame of (T, H, W) stacks (the frame loop of ``metrics.db_eval_boundary``)."""
    out = np.zeros(annotation.shape[0])
    for t in range(annotation.shape[0]):
        out[t] = f_measure(segmentation[t], annotation[t], None if void is None else void[t], bound_th, dilate)
    return out


def decay_edges(n: int, *, wrap: bool = True) -> list[int]:
    """The five bin edges of ``utils.db_statistics`` for ``n`` frames (uint8-wrapped unless ``wrap=False``)."""
    ids = np.round(np.linspace(1, n, 5) + 1e-10) - 1
    return [int(v) % 256 if wrap else int(v) for v in ids]


def db_statistics(values: np.ndarray, *, wrap: bool = True) -> tuple[float, float, float]:
    """(mean, recall, decay) of one object's per-frame values (``utils.db_statistics``)."""
    values = np.asarray(values, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=RuntimeWarning)
        mean = float(np.nanmean(values))
        recall = float(np.nanmean(values > 0.5))
        e = decay_edges(len(values), wrap=wrap)
        bins = [values[e[i] : e[i + 1] + 1] for i in range(4)]
        decay = float(np.nanmean(bins[0]) - np.nanmean(bins[3]))
    return mean, recall, decay


def read_gt_masks(folder: str, read: Read) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(one-hot (K, T, H, W) bool, void (T, H, W), frame ids) of a ground-truth sequence folder (``DAVIS``);
    ``read(path)`` decodes a PNG (``np.array(Image.open(path))``: this module opens no file itself)."""
    names = sorted(n for n in os.listdir(folder) if n.endswith(".png"))
    first = read(os.path.join(folder, names[0]))
    masks = np.zeros((len(names), *first.shape))
    for i, name in enumerate(names):
        masks[i] = read(os.path.join(folder, name))
    void = masks == 255
    masks[void] = 0
    k = int(np.max(masks[0]))
    one_hot = np.ones((k, *masks.shape)) * np.arange(1, k + 1)[:, None, None, None] == masks[None]
    return one_hot, void, [n[: -len(".png")] for n in names]


def read_result_masks(folder: str, frame_ids: Sequence[str], read: Read) -> np.ndarray:
    """One-hot (P, T, H, W) of a result sequence's frames (``Results.read_masks``)."""
    first = read(os.path.join(folder, f"{frame_ids[0]}.png"))
    masks = np.zeros((len(frame_ids), *first.shape))
    for i, frame in enumerate(frame_ids):
        masks[i] = read(os.path.join(folder, f"{frame}.png"))
    p = int(np.max(masks))
    return np.ones((p, *masks.shape)) * np.arange(1, p + 1)[:, None, None, None] == masks[None]


def _pad(res: np.ndarray, k: int) -> np.ndarray:
    if res.shape[0] >= k:
        return res
    return np.concatenate([res, np.zeros((k - res.shape[0], *res.shape[1:]), bool)], axis=0)


def evaluate_semisupervised(
    gt: np.ndarray, res: np.ndarray, *, bound_th: float = 0.008, dilate: Dilate | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(J, F) of shape (K, T) of one sequence's evaluated frames (``_evaluate_semisupervised``: no void)."""
    if res.shape[0] > gt.shape[0]:
        raise ValueError("In your PNG files there is an index higher than the number of objects in the sequence!")
    res = _pad(res, gt.shape[0])
    j = np.zeros(gt.shape[:2])
    f = np.zeros(gt.shape[:2])
    for k in range(gt.shape[0]):
        j[k] = db_eval_iou(gt[k], res[k])
        f[k] = db_eval_boundary(gt[k], res[k], None, bound_th, dilate)
    return j, f


def evaluate_unsupervised(
    gt: np.ndarray,
    res: np.ndarray,
    void: np.ndarray,
    *,
    max_proposals: int = 20,
    bound_th: float = 0.008,
    dilate: Dilate | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(J, F, row_ind, col_ind): the matched pairs' (K, T) values in proposal order (``_evaluate_unsupervised``)."""
    if res.shape[0] > max_proposals:
        raise ValueError(f"index higher than the maximum number ({max_proposals}) of proposals allowed")
    res = _pad(res, gt.shape[0])
    j = np.zeros((res.shape[0], gt.shape[0], gt.shape[1]))
    f = np.zeros_like(j)
    for k in range(gt.shape[0]):
        for p in range(res.shape[0]):
            j[p, k] = db_eval_iou(gt[k], res[p], void)
            f[p, k] = db_eval_boundary(gt[k], res[p], void, bound_th, dilate)
    score = (np.mean(j, axis=2) + np.mean(f, axis=2)) / 2
    rows, cols = linear_sum_assignment(-score)
    return j[rows, cols], f[rows, cols], rows, cols


def evaluate_folder(
    davis_root: str,
    results: str,
    sequences: Sequence[str],
    read: Read,
    *,
    task: str = "semi-supervised",
    resolution: str = "480p",
    wrap: bool = True,
    bound_th: float = 0.008,
    dilate: Dilate | None = None,
) -> dict[str, dict]:
    """``DAVISEvaluation.evaluate`` of ``sequences`` (the set file's lines): ``{"J": {"M", "R", "D",
    "M_per_object"}, "F": {...}}``; ``read(path)`` decodes a PNG."""
    annotations = "Annotations" if task == "semi-supervised" else "Annotations_unsupervised"
    out: dict[str, dict] = {m: {"M": [], "R": [], "D": [], "M_per_object": {}} for m in ("J", "F")}
    for seq in sequences:
        gt, void, frames = read_gt_masks(os.path.join(davis_root, annotations, resolution, seq), read)
        if task == "semi-supervised":
            gt, frames = gt[:, 1:-1], frames[1:-1]
        res = read_result_masks(os.path.join(results, seq), frames, read)
        if task == "unsupervised":
            j, f, _, _ = evaluate_unsupervised(gt, res, void, bound_th=bound_th, dilate=dilate)
        else:
            j, f = evaluate_semisupervised(gt, res, bound_th=bound_th, dilate=dilate)
        for i in range(gt.shape[0]):
            for name, values in (("J", j[i]), ("F", f[i])):
                m, r, d = db_statistics(values, wrap=wrap)
                out[name]["M"].append(m)
                out[name]["R"].append(r)
                out[name]["D"].append(d)
                out[name]["M_per_object"][f"{seq}_{i + 1}"] = m
    return out


def _fmt(v: float) -> str:
    return "" if np.isnan(v) else f"{v:.3f}"  # "%.3f"; pandas writes NaN as an empty field


def _csv(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def global_csv(res: dict[str, dict]) -> str:
    """``global_results-<set>.csv`` as ``evaluation_method.py`` writes it."""
    j, f = res["J"], res["F"]
    values = [(np.mean(j["M"]) + np.mean(f["M"])) / 2.0]
    values += [np.mean(j["M"]), np.mean(j["R"]), np.mean(j["D"]), np.mean(f["M"]), np.mean(f["R"]), np.mean(f["D"])]
    return _csv([list(GLOBAL_COLUMNS), [_fmt(v) for v in values]])


def per_sequence_csv(res: dict[str, dict]) -> str:
    """``per-sequence_results-<set>.csv`` as ``evaluation_method.py`` writes it."""
    names = list(res["J"]["M_per_object"])
    rows = [["Sequence", "J-Mean", "F-Mean"]]
    rows += [[n, _fmt(res["J"]["M_per_object"][n]), _fmt(res["F"]["M_per_object"][n])] for n in names]
    return _csv(rows)
