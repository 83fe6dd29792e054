r"""Size-invariant MAE and threshold measures (Li et al. ICML 2024), PySODMetrics 1.6.2 ``size_invariance.py``.

Targets (PySOD ``parse_connected_components``): the 4-connected components of the ground truth (skimage
``label(connectivity=1)``; here ``scipy.ndimage.label`` with the cross structure, the same components) of at least
50 pixels; when there is none, every component of the largest area (ties all kept). Each target is represented by
its **bounding box** (PySOD ``encode_bboxwise_tgts_bitwise``): target ``k``'s masked image is ``p * box_k`` and
``g & box_k`` over the *whole* image (outside the box: ``p = 0``, ``g = 0``).

* ``size_invariant_mae``: with ``m`` targets, background ``Bg`` = pixels in no box (area ``a_bg``), ``r = a_bg /
  (N - a_bg)``, ``c = 1 / (m + r)``:
  ``SI-MAE = r * sum_Bg |p - g| / a_bg * c + sum_k (sum_{box_k} |p - g| / area_k) * c``;
  an image with empty GT (no target) scores the plain MAE.
* ``size_invariant_threshold_measures``: every :func:`threshold_measures` measure of each target's masked image (its
  counts over the whole image: outside the box every pixel is a true negative, except at the last dynamic threshold
  ``>= 0`` where they are false positives, and in the adaptive mode when the target's threshold
  ``min(2 mean(p * box), 1)`` is 0), then averaged over the image's targets. Empty GT: the measures of the whole image.

Oddities reproduced (PySODMetrics 1.6.2): when the boxes cover the whole image (e.g. a full GT) ``a_bg = 0`` and
SI-MAE is ``0 * 0 / 0 = NaN``; pixels of GT components too small to be targets count in the boxes they fall in or
in the background term. Not reproduced: PySOD raises an ``AssertionError`` when the targets' pixels are the whole
image (e.g. a full GT; ``encode_bboxwise_tgts_bitwise`` finds no background pixel); here such an image is
evaluated (one whole-image target; SI-MAE is then NaN by the formula above). Also PySOD encodes the boxes as bits
of a float64 map, which breaks with more than ~53 targets in one image; here every target keeps its exact box.

CPU fast path: uint8 maps are counted from raw-level histograms of every target box (``_level_path``), no
(K, H, W) temporaries; other inputs and devices use the tensor route below, with the same results.

Device story: the connected components are labelled on the CPU with ``scipy.ndimage.label`` (one call for the
whole batch; CUDA inputs are copied to the host for this step, which synchronises); everything else is tensor ops
on the input's device.
"""

from __future__ import annotations

import warnings

import numpy as np
import torch
from torch import Tensor

from ..._checks import ImageBatch, check_positive_float
from ...ops.foreground_levels import component_boxes, row_max
from ._extra_runner import run_raw
from ._intermediates import use_cpu_kernel
from ._level_path import binary_target, confusion_counts, si_mae_parts, target_counts
from ._prepare import prepare_maps
from .threshold_measures import (
    THRESHOLD_MEASURES,
    THRESHOLD_MODES,
    canonical_measures,
    check_modes,
    measure_table,
)

__all__ = ["SI_MAE_NAN_REASON", "size_invariant_mae", "size_invariant_threshold_measures"]

AREA_THRESHOLD = 50
_CROSS_3D = np.zeros((3, 3, 3), dtype=bool)
_CROSS_3D[1] = [[0, 1, 0], [1, 1, 1], [0, 1, 0]]


def gt_targets(g: Tensor, area_threshold: int = AREA_THRESHOLD) -> tuple[Tensor, Tensor]:
    """The targets of a (B, H, W) bool GT: ``(image index (K,), boxes (K, 4) = y0, y1, x0, x1 inclusive)``, int64."""

    # scipy.ndimage is imported here: at the module top it added 0.4 s to every `import segmetrics_torch.functional`
    from scipy import ndimage

    labels_np, num = ndimage.label(g.cpu().numpy(), structure=_CROSS_3D)
    device = g.device
    if num == 0:
        return torch.zeros(0, dtype=torch.int64, device=device), torch.zeros(0, 4, dtype=torch.int64, device=device)

    batch = g.shape[0]
    stats = torch.from_numpy(component_boxes(labels_np, num))
    area, img_of, boxes = stats[:, 0], stats[:, 1], stats[:, 2:]
    big = area >= area_threshold
    has_big = torch.zeros(batch, dtype=torch.bool).scatter_reduce(0, img_of, big, "amax", include_self=False)
    max_area = torch.zeros(batch, dtype=torch.int64).scatter_reduce(0, img_of, area, "amax", include_self=False)
    valid = torch.where(has_big[img_of], big, area == max_area[img_of])
    return img_of[valid].to(device), boxes[valid].to(device)


def _box_masks(image: Tensor, boxes: Tensor, h: int, w: int) -> Tensor:
    """(K, H, W) bool: pixel inside target k's box."""
    ys = torch.arange(h, device=boxes.device)
    xs = torch.arange(w, device=boxes.device)
    in_y = (ys[None] >= boxes[:, 0:1]) & (ys[None] <= boxes[:, 1:2])
    in_x = (xs[None] >= boxes[:, 2:3]) & (xs[None] <= boxes[:, 3:4])
    return in_y[:, :, None] & in_x[:, None, :]


def _target_counts(p: Tensor, g: Tensor, image: Tensor, masks: Tensor, modes: tuple[str, ...]) -> dict[str, tuple]:
    """int64 ``(tp, fp, tn, fn)`` per mode of every target's masked image (whole-image counts)."""
    k, h, w = masks.shape
    numel = h * w
    pk = p[image] * masks  # PySOD's pred * tgt_mask (exact: p * 1 = p, p * 0 = 0)
    gk = g[image] & masks
    pos = gk.sum(dim=(1, 2))
    out: dict[str, tuple] = {}

    def split(tp: Tensor, pp: Tensor) -> tuple:
        return confusion_counts(tp, pp, pos, numel)

    if "dynamic" in modes:
        bins = (pk * 255).to(torch.int64)
        key = bins + gk.to(torch.int64) * 256 + torch.arange(k, device=p.device).view(-1, 1, 1) * 512
        hist = torch.bincount(key.reshape(-1), minlength=k * 512).view(k, 2, 256)
        cum = hist.flip(-1).cumsum(-1)
        out["dynamic"] = split(cum[:, 1], cum[:, 1] + cum[:, 0])
    if "adaptive" in modes:
        thr = torch.clamp(2 * pk.mean(dim=(1, 2)), max=1.0)
        binary = pk >= thr.view(-1, 1, 1)
        out["adaptive"] = split((binary & gk).sum(dim=(1, 2)), binary.sum(dim=(1, 2)))
    if "binary" in modes:
        binary = pk > 0.5
        out["binary"] = split((binary & gk).sum(dim=(1, 2)), binary.sum(dim=(1, 2)))
    return out


def _targets_with_fallback(g: Tensor) -> tuple[Tensor, Tensor]:
    """Targets; an image without any (empty GT) gets one whole-image "target" (PySOD evaluates the image as is)."""
    batch, h, w = g.shape
    image, boxes = gt_targets(g)
    present = torch.zeros(batch, dtype=torch.bool, device=g.device)
    present[image] = True
    missing = (~present).nonzero().reshape(-1)
    if missing.numel():
        whole = torch.tensor([0, h - 1, 0, w - 1], device=g.device).expand(missing.numel(), 4)
        image, boxes = torch.cat([image, missing]), torch.cat([boxes, whole])
    return image, boxes


def _row_max(table: Tensor, lo: int, hi: int) -> Tensor:
    """(M, K) maxima of ``table[:, :, lo:hi]`` (compiled on the CPU: torch's strided reduction was slower than the
    measures themselves there)."""
    if use_cpu_kernel(table.device):
        return torch.from_numpy(row_max(table.numpy(), lo, hi))
    return table[:, :, lo:hi].amax(dim=2)


def _per_image_mean(values: Tensor, image: Tensor, batch: int) -> tuple[Tensor, Tensor]:
    """Sum over each image's targets and the number of targets, (B, ...) and (B,)."""
    index = image.view(-1, *([1] * (values.ndim - 1))).expand_as(values)
    total = values.new_zeros((batch, *values.shape[1:])).scatter_add_(0, index, values)
    count = torch.bincount(image, minlength=batch)
    return total, count


def size_invariant_threshold_measures(
    preds: ImageBatch,
    target: ImageBatch,
    *,
    measures: str | list[str] | tuple[str, ...] = THRESHOLD_MEASURES,
    modes: str | list[str] | tuple[str, ...] = THRESHOLD_MODES,
    beta2: float = 0.3,
    normalize: bool = True,
    validate_args: bool = True,
    return_counts: bool = False,
) -> dict[str, Tensor]:
    r"""Per-image size-invariant threshold measures: each measure averaged over the GT's targets (module doc).

    Reference: Li et al., "Size-invariance Matters: Rethinking Metrics and Losses for Imbalanced Multi-object Salient
    Object Detection", ICML 2024; PySODMetrics 1.6.2 ``SizeInvarianceFmeasureV2`` (to 1e-6). Arguments as
    :func:`segmetrics_torch.functional.threshold_measures`.

    Returns:
        dict ``"<measure>/<mode>"`` -> (B,) or (B, 256) float64: the mean over the image's targets;
        ``"<measure>/dynamic_max"`` (B,): the mean over the targets of each target's curve maximum (PySOD's
        recorder ``si_sample_maxXX`` averages these over images); ``"<measure>/dynamic_sum"`` (B, 256): the sum of the
        targets' curves and ``"targets"`` (B,) int64, the number of targets (for PySOD's ``sample_based=False``
        dynamic mean over all targets); with the dynamic mode, ``"auc_roc"`` (B,) (needs ``recall`` and ``fpr``) and
        ``"auc_pr"`` (B,) (needs ``precision`` and ``recall``): each target's area under its ROC / PR curve
        (:func:`curve_area`), averaged over the image's targets (the recorder's ``si_sample_auc_roc`` / ``_pr``
        average these over images); with ``return_counts``,
        ``"counts/<mode>"`` (B, 4) / (B, 256, 4): ``tp, fp, tn, fn`` summed over the targets (pooled dataset values).

    Example:
        >>> import torch
        >>> target = torch.zeros(1, 20, 20, dtype=torch.uint8)
        >>> target[:, 1:9, 1:9] = 255; target[:, 12:19, 12:19] = 255   # two targets of 64 and 49 pixels
        >>> out = size_invariant_threshold_measures(target.clone(), target, measures=["iou"], modes=["binary"])
        >>> float(out["iou/binary"][0]), int(out["targets"][0])
        (1.0, 1)
    """
    pairs = canonical_measures(measures)
    modes = check_modes(modes)
    beta2 = check_positive_float(beta2, "beta2")
    if not isinstance(return_counts, bool):
        raise TypeError(f"Expected argument `return_counts` to be a bool, but got {return_counts!r}.")

    def fn(preds_b: Tensor, target_b: Tensor) -> dict[str, Tensor]:
        if use_cpu_kernel(preds_b.device) and preds_b.dtype == torch.uint8:  # raw-level histograms per box
            batch = preds_b.shape[0]
            image, boxes = _targets_with_fallback(binary_target(target_b))
            counts = target_counts(preds_b, target_b, normalize, image, boxes, modes)
        else:
            p, g = prepare_maps(preds_b, target_b, normalize)
            batch, h, w = g.shape
            image, boxes = _targets_with_fallback(g)
            counts = _target_counts(p, g, image, _box_masks(image, boxes, h, w), modes)
        # every mode side by side, (K, 1 | 256 | 1) -> (K, W): all measures in one evaluation (elementwise, so the
        # values are those of per-mode evaluation), per-image sums in one index_add_
        k = image.shape[0]
        widths = [counts[m][0].reshape(k, -1).shape[1] for m in modes]
        joined = [torch.cat([counts[m][j].reshape(k, -1) for m in modes], dim=1) for j in range(4)]
        names = tuple(dict.fromkeys(name for _, name in pairs))
        table = measure_table(names, joined, beta2)  # (M, K, W)
        totals = table.new_zeros((len(names), batch, table.shape[2])).index_add_(1, image, table)
        n_targets = torch.bincount(image, minlength=batch)
        means = totals / n_targets[:, None]
        out: dict[str, Tensor] = {}
        if "dynamic" in modes:
            start = sum(widths[: modes.index("dynamic")])
            stop = start + widths[modes.index("dynamic")]
            peaks = _row_max(table, start, stop)
            peak_means = table.new_zeros((len(names), batch)).index_add_(1, image, peaks) / n_targets
            # areas under each target's ROC (recall against fpr) and PR (precision against recall) curves, averaged
            # over the image's targets: PySODMetrics' recorder (si_sample_auc_roc / _pr)
            for key, (y_name, x_name) in (("auc_roc", ("recall", "fpr")), ("auc_pr", ("precision", "recall"))):
                if y_name in names and x_name in names:
                    y, x = (table[names.index(n), :, start:stop] for n in (y_name, x_name))
                    area = curve_area(y, x)
                    out[key] = area.new_zeros(batch).index_add_(0, image, area) / n_targets
        for mode, start, width in zip(modes, np.cumsum([0, *widths[:-1]]).tolist(), widths, strict=True):
            for key, name in pairs:
                m = names.index(name)
                part = means[m, :, start : start + width]
                out[f"{key}/{mode}"] = part if mode == "dynamic" else part[:, 0]
                if mode == "dynamic":
                    out[f"{key}/dynamic_sum"] = totals[m, :, start : start + width]
                    out[f"{key}/dynamic_max"] = peak_means[m]
            if return_counts:
                stacked = torch.stack([c[:, start : start + width] for c in joined], dim=-1)
                summed = stacked.new_zeros((batch, *stacked.shape[1:])).index_add_(0, image, stacked)
                out[f"counts/{mode}"] = summed if mode == "dynamic" else summed[:, 0]
        out["targets"] = n_targets
        return out

    return run_raw(fn, preds, target, normalize=normalize, validate_args=validate_args)


def curve_area(y: Tensor, x: Tensor) -> Tensor:
    """The trapezoidal area under ``y`` against ``x`` of (..., 256) curves over descending thresholds, as
    PySODMetrics' recorder computes AUC-ROC and AUC-PR: flipped to ascending thresholds, sorted by ``x`` (stable),
    then ``trapz(y, x)``."""
    y, x = y.flip(-1), x.flip(-1)
    order = torch.argsort(x, dim=-1, stable=True)
    return torch.trapezoid(y.gather(-1, order), x.gather(-1, order), dim=-1)


def size_invariant_mae(
    preds: ImageBatch,
    target: ImageBatch,
    *,
    normalize: bool = True,
    validate_args: bool = True,
) -> Tensor:
    r"""Per-image size-invariant MAE (Li et al. ICML 2024), PySODMetrics 1.6.2 ``SizeInvarianceMAE`` (to 1e-6).

    .. math:: \mathrm{SI\text{-}MAE} = \frac{1}{m + r}\Big(r\,\frac{\sum_{Bg}|p-g|}{a_{bg}}
              + \sum_{k=1}^{m} \frac{\sum_{box_k}|p-g|}{area_k}\Big),\quad r = \frac{a_{bg}}{N - a_{bg}}

    Targets, boxes and edge cases: see the module documentation (empty GT: plain MAE; boxes covering the whole image:
    NaN, as PySODMetrics). Arguments as :func:`segmetrics_torch.functional.mae`.

    Returns:
        (B,) float64.

    Example:
        >>> import torch
        >>> target = torch.zeros(1, 20, 20, dtype=torch.uint8); target[:, 2:10, 2:10] = 255
        >>> preds = target.clone(); preds[:, 15:, 15:] = 255   # a 25-pixel false positive in the background
        >>> round(float(size_invariant_mae(preds, target)[0]), 6)
        0.0625
    """

    def fn(preds_b: Tensor, target_b: Tensor) -> dict[str, Tensor]:
        if use_cpu_kernel(preds_b.device) and preds_b.dtype == torch.uint8:  # raw-level histograms per box
            batch, h, w = preds_b.shape
            image, boxes = gt_targets(binary_target(target_b))
            box_err, box_area, bg_err, bg_area, plain = si_mae_parts(preds_b, target_b, normalize, image, boxes)
            box_sum, _ = _per_image_mean(box_err / box_area, image, batch)
            n_targets = torch.bincount(image, minlength=batch)
            ratio = bg_area / (h * w - bg_area)
            factor = 1 / (n_targets + ratio)
            si = ratio * bg_err / bg_area * factor + box_sum * factor
            return {"si_mae": torch.where(n_targets > 0, si, plain)}
        p, g = prepare_maps(preds_b, target_b, normalize)
        batch, h, w = g.shape
        numel = h * w
        err = (p - g.to(torch.float64)).abs()
        image, boxes = gt_targets(g)
        masks = _box_masks(image, boxes, h, w)
        box_sum, _ = _per_image_mean((err[image] * masks).sum(dim=(1, 2)) / masks.sum(dim=(1, 2)), image, batch)
        n_targets = torch.bincount(image, minlength=batch)
        covered = torch.zeros(g.shape, dtype=torch.int64, device=g.device).index_add_(0, image, masks.long()) > 0
        bg = ~covered
        bg_area = bg.sum(dim=(1, 2)).to(torch.float64)
        ratio = bg_area / (numel - bg_area)
        factor = 1 / (n_targets + ratio)
        bg_term = ratio * (err * bg).sum(dim=(1, 2)) / bg_area * factor
        si = bg_term + box_sum * factor
        plain = err.mean(dim=(1, 2))
        return {"si_mae": torch.where(n_targets > 0, si, plain)}

    values = run_raw(fn, preds, target, normalize=normalize, validate_args=validate_args)["si_mae"]
    nan = torch.isnan(values)
    if bool(nan.any()):  # the labelling above ran on the host already: this check costs no extra device sync
        warn_si_mae_nan("size_invariant_mae", nan.nonzero().flatten().tolist(), checked=validate_args)
    return values


#: why SI-MAE is NaN (PySODMetrics' value, reproduced)
SI_MAE_NAN_REASON = (
    "the ground truth's target boxes cover the whole image, so no background pixel is left (r = 0 / 0 in "
    "PySODMetrics' formula, whose value this is)"
)


def warn_si_mae_nan(what: str, images: list[int], count: int | None = None, *, checked: bool = True) -> None:
    """One ``RuntimeWarning`` for the documented NaN of the size-invariant MAE, naming the images (batch indices);
    ``checked=False`` (values not checked, ``validate_args=False``): a NaN or inf in the map is named as a cause too,
    as it was not refused."""
    number = len(images) if count is None else count
    if number > len(images) and images:  # a Metric keeps the first one's index only (a state of fixed size)
        where = f" (the first: index {images[0]})"
    elif images:
        where = f" (index {', '.join(map(str, images[:8]))}{' ...' if len(images) > 8 else ''})"
    else:
        where = ""
    reason = SI_MAE_NAN_REASON if checked else f"{SI_MAE_NAN_REASON}, or (validate_args=False) a NaN or inf in `preds`"
    warnings.warn(f"{what} is NaN for {number} image(s){where}: {reason}.", RuntimeWarning, stacklevel=3)
