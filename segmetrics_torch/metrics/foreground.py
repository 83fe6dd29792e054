"""torchmetrics ``Metric`` classes of the foreground-map measures.

States are float64 sums of per-image values, float64 sums of per-image 256-point curves, and an int64 image count,
all reduced with ``"sum"``: a dataset split across DDP processes gives the single-process result (up to float64
summation order, ~1e-16), and Lightning logs the objects unchanged. Dataset values follow PySODMetrics 1.6.2: scalar
measures are means of the per-image values; for curve families the per-image curves are averaged first and the
dataset ``mean``/``max`` are taken of that averaged curve (not means of per-image maxima).

Gradients: ``update`` never records a graph (torchmetrics runs it under ``no_grad`` outside ``forward``); use the
functional API or the losses of :mod:`segmetrics_torch.losses` to train.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, cast

import torch
from torch import Tensor
from torchmetrics import Metric

from .._checks import ImageBatch, check_positive_float
from ..functional.foreground._intermediates import (
    EdtBackend,
    EmptyQuadrant,
    ForegroundIntermediates,
    MeasureOptions,
    run_grouped,
    run_per_image,
)
from ..functional.foreground.enhanced_alignment import e_from_counts
from ..functional.foreground.matlab_toolbox import check_foreground_protocol, toolbox_foreground_values
from ..functional.foreground.overlap import f_from_counts, overlap_from_counts
from ..functional.foreground.structure_measure import check_s_options, warn_s_measure_nan
from ..functional.foreground.suite import (
    SUITE_CURVES,
    SUITE_SCALARS,
    add_sums,
    derive_all,
    suite_options,
    suite_settings,
    summarize_foreground,
)
from ..functional.foreground.weighted_fmeasure import check_edt_backend
from ..ops.thresholds import NUM_THRESHOLDS
from ..registry import INCLUDABLE
from . import foreground_extra
from ._base import ExactMetric

__all__ = [
    "MAE",
    "Dice",
    "EMeasure",
    "FMeasure",
    "ForegroundMeasures",
    "IoU",
    "SMeasure",
    "WeightedFMeasure",
    "flatten_results",
]

_F64 = torch.float64


class _ForegroundMetric(ExactMetric):
    """Shared machinery: input preparation, per-image evaluation, sum states, summaries of curves."""

    is_differentiable = False
    higher_is_better: bool | None = True
    full_state_update = False
    plot_lower_bound = 0.0
    plot_upper_bound: float | None = 1.0

    #: names of per-image scalar values summed into states
    _scalars: tuple[str, ...] = ()
    #: names of per-image 256-point curves summed into states
    _curves: tuple[str, ...] = ()

    count: Tensor
    skipped_empty_gt: Tensor
    #: the S-measure's NaN-image count (SMeasure, ForegroundMeasures)
    sm_is_nan_sum: Tensor

    def __init__(
        self,
        *,
        normalize: bool = True,
        validate_args: bool = True,
        skip_empty_gt: bool = False,
        protocol: str = "pysodmetrics",
        **kwargs: Any,
    ) -> None:
        """The arguments every foreground Metric takes (as keywords).

        Args:
            normalize: min-max stretch each map to [0, 1] first, as PySODMetrics (default ``True``); ``False``
                scores probabilities as they are (a training loop's sigmoid outputs).
            validate_args: check shapes, dtypes and values; ``False`` skips the checks (never memory safety).
            skip_empty_gt: leave out the images whose ground truth has no foreground pixel (COD10K's convention;
                PySODMetrics keeps them), counting them in the state ``skipped_empty_gt``; default ``False``.
            protocol: ``"pysodmetrics"`` (PySODMetrics 1.6.2, the default) or a MATLAB-toolbox protocol,
                ``"matlab-toolbox"`` or ``"matlab-toolbox-2020-11"`` (the evaluation toolbox of PraNet / Inf-Net /
                SINet: ``docs/matlab-toolbox.md``); a toolbox protocol needs ``normalize=True`` (the toolbox always
                stretches the map) and the toolbox's values of the measure's own options.
            **kwargs: torchmetrics' own options (``dist_sync_on_step``, ``sync_on_compute``, ``process_group``, ...).
        """
        super().__init__(**kwargs)
        flags = (("normalize", normalize), ("validate_args", validate_args), ("skip_empty_gt", skip_empty_gt))
        for name, value in flags:
            if not isinstance(value, bool):
                raise TypeError(f"Expected argument `{name}` to be a bool, but got {value!r}.")
        #: the convention: ``"pysodmetrics"`` or a MATLAB-toolbox protocol
        self.protocol = check_foreground_protocol(protocol, normalize=(normalize, True))
        self.normalize = normalize
        self.validate_args = validate_args
        self.skip_empty_gt = skip_empty_gt
        #: images left out by ``skip_empty_gt`` (their ground truth has no foreground pixel), summed over processes
        self.add_state("skipped_empty_gt", default=torch.zeros((), dtype=torch.int64), dist_reduce_fx="sum")
        for name in self._scalars:
            self.add_state(f"{name}_sum", default=torch.zeros((), dtype=_F64), dist_reduce_fx="sum")
        for name in self._curves:
            self.add_state(f"{name}_sum", default=torch.zeros(NUM_THRESHOLDS, dtype=_F64), dist_reduce_fx="sum")
        self.add_state("count", default=torch.zeros((), dtype=torch.int64), dist_reduce_fx="sum")

    #: what the shared pass computes besides counts and MAE (subclasses set S-measure / weighted-F options)
    _options = MeasureOptions()

    def _derive(self, values: ForegroundIntermediates) -> dict[str, Tensor]:
        """Per-image values of the states' names from the shared intermediates of a block."""
        raise NotImplementedError

    def _without_empty_gt(self, preds: ImageBatch, target: ImageBatch) -> tuple[ImageBatch, ImageBatch] | None:
        """``skip_empty_gt``: the batch without its images of empty ground truth (counted in ``skipped_empty_gt``);
        ``None`` when every image was left out.

        COD10K's convention (camouflaged-object benchmarks leave out the images with no object). Reading which images
        are empty synchronises a CUDA device once per batch; without ``skip_empty_gt`` nothing is read, and inputs
        that are not tensors (or lists of them) of one length are passed on untouched, for the checks to name.
        """
        if not self.skip_empty_gt:
            return preds, target
        # the batch is checked whole first, as without the option: an invalid image (NaN, a target that is not
        # binary, an empty size) must not be left out as an "empty ground truth" and the batch counted silently
        run_grouped(lambda p, t, indices, n: {}, preds, target, validate_args=self.validate_args)

        def binary(t: Tensor) -> Tensor:
            if t.dtype == torch.bool:
                return t
            return t > 128 if t.dtype == torch.uint8 and bool(t.max() > 1) else t > 0.5

        if isinstance(target, Tensor) and isinstance(preds, Tensor):
            g = target[:, 0] if target.ndim == 4 else target
            if g.ndim != 3 or g.shape[0] == 0 or preds.shape[0] != g.shape[0] or g.is_complex():
                return preds, target  # not a batch this filter can read: the checks name the problem
            keep = binary(g).flatten(1).any(dim=1)
            if bool(keep.all()):
                return preds, target
            self.skipped_empty_gt += int((~keep).sum())
            return (preds[keep], target[keep]) if bool(keep.any()) else None
        if not (
            isinstance(preds, (list, tuple))
            and isinstance(target, (list, tuple))
            and preds
            and len(preds) == len(target)
            and all(isinstance(t, Tensor) for t in (*preds, *target))
        ):
            return preds, target
        kept = [(p, t) for p, t in zip(preds, target, strict=True) if t.numel() and bool(binary(t).any())]
        if len(kept) == len(preds):
            return preds, target
        self.skipped_empty_gt += len(preds) - len(kept)
        return ([p for p, _ in kept], [t for _, t in kept]) if kept else None

    def update(self, preds: ImageBatch, target: ImageBatch) -> None:
        """Add a batch: ``preds``/``target`` (B, H, W) or (B, 1, H, W) tensors, or lists of (H, W) tensors."""
        batch = self._without_empty_gt(preds, target)
        if batch is not None:  # None: every image of the batch was left out by skip_empty_gt
            self._update_kept(*batch, checked=self.skip_empty_gt)

    def _update_kept(self, preds: ImageBatch, target: ImageBatch, *, checked: bool = False) -> None:
        """Add a batch that ``skip_empty_gt`` has already filtered (``checked``: its values were checked whole
        before the filter, so the kept images' values are not read a second time; shapes and dtypes still are)."""
        names = (*self._scalars, *self._curves)
        validate_args = self.validate_args and not checked
        if self.protocol != "pysodmetrics":
            values = toolbox_foreground_values(
                preds,
                target,
                protocol=self.protocol,
                beta2=getattr(self, "beta2", 0.3),
                weighted_f=bool({"wfm", "weighted_f_measure"} & set(names)),
                edt_backend=self._options.edt_backend,
                validate_args=validate_args,
            )
            s_measure = values["s_measure"]
            # the states' names where they differ from the per-image keys
            named = {"wfm": "weighted_f_measure", "sm": "s_measure"}
            add_sums(
                self,
                names,
                {n: torch.isnan(s_measure).to(_F64) if n == "sm_is_nan" else values[named.get(n, n)] for n in names},
            )
            return
        values = run_per_image(
            self._derive,
            preds,
            target,
            normalize=self.normalize,
            validate_args=validate_args,
            options=self._options,
        )
        add_sums(self, names, values)

    def _mean(self, name: str) -> Tensor:
        return super()._mean(f"{name}_sum")

    def _curve_summary(self, name: str, adaptive: str | None) -> dict[str, Tensor]:
        curve = self._mean(name)
        out = {"curve": curve, "mean": curve.mean(), "max": curve.max()}
        if adaptive is not None:
            out = {"adaptive": self._mean(adaptive), **out}
        return out


class MAE(_ForegroundMetric):
    """Mean absolute error over a dataset (mean of per-image MAE), PySODMetrics 1.6.2 ``MAE``.
    A float map is min-max stretched per image as PySODMetrics does (``normalize=True``, the default); pass
    ``normalize=False`` to score probabilities as they are, e.g. in a training loop, so that the logged value agrees
    with a loss computed on the same tensor.

    See :func:`segmetrics_torch.functional.mae`. ``compute()`` returns a scalar float64 tensor.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) or (B, 1, H, W) maps, float in [0, 1] or uint8 0..255 (min-max normalised per image
      unless ``normalize=False``), or a list of (H, W) maps of any sizes.
    - ``target``: ground truth of the same shape (or a list), bool / {0, 1} / uint8 (binarised ``> 128``).

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a 0-d float64 tensor: the mean over images of the per-image MAE.

    Example:
        >>> import torch
        >>> metric = MAE()
        >>> target = torch.zeros(2, 4, 4, dtype=torch.uint8); target[:, :2] = 255
        >>> metric.update(target.clone(), target)
        >>> float(metric.compute())
        0.0
    """

    higher_is_better = False
    _scalars = ("mae",)

    def _derive(self, values: ForegroundIntermediates) -> dict[str, Tensor]:
        return {"mae": values.mae}

    def compute(self) -> Tensor:
        return self._mean("mae")


class SMeasure(_ForegroundMetric):
    """S-measure over a dataset (Fan et al. ICCV 2017), PySODMetrics 1.6.2 ``Smeasure``.
    A float map is min-max stretched per image as PySODMetrics does (``normalize=True``, the default); pass
    ``normalize=False`` to score probabilities as they are, e.g. in a training loop, so that the logged value agrees
    with a loss computed on the same tensor.

    See :func:`segmetrics_torch.functional.s_measure` for the formula and edge cases. An image whose value is NaN
    (centroid on the last row/column, with ``empty_quadrant="nan"``, as PySODMetrics) makes the dataset value NaN, as
    in PySODMetrics; ``compute()`` then warns with the number of such images. ``compute()`` returns a scalar tensor.

    Args:
        alpha: weight of the object term (0.5).
        empty_quadrant: ``"nan"`` (reference) or ``"skip"`` (drop the empty, zero-weight quadrant).
        normalize, validate_args, protocol: see :func:`segmetrics_torch.functional.s_measure` (a MATLAB-toolbox
            ``protocol`` needs ``alpha=0.5``, ``empty_quadrant="nan"``). skip_empty_gt: leave out images of empty
            ground truth (COD10K's convention), counted in ``skipped_empty_gt``.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) or (B, 1, H, W) maps, float in [0, 1] or uint8 0..255 (min-max normalised per image
      unless ``normalize=False``), or a list of (H, W) maps of any sizes.
    - ``target``: ground truth of the same shape (or a list), bool / {0, 1} / uint8 (binarised ``> 128``).

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a 0-d float64 tensor: the mean over images of the per-image S-measure (NaN, with a warning, if an image's
      value is NaN).

    Example:
        >>> import torch
        >>> g = torch.Generator().manual_seed(0)
        >>> preds = torch.rand(2, 16, 16, generator=g)
        >>> target = torch.zeros(2, 16, 16, dtype=torch.bool)
        >>> target[:, 4:12, 4:12] = True
        >>> from segmetrics_torch import SMeasure
        >>> metric = SMeasure()
        >>> metric.update(preds, target)
        >>> round(float(metric.compute()), 4)
        0.3172
    """

    _scalars = ("sm", "sm_is_nan")

    def __init__(self, *, alpha: float = 0.5, empty_quadrant: EmptyQuadrant = "nan", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        check_s_options(alpha, empty_quadrant)
        check_foreground_protocol(self.protocol, alpha=(alpha, 0.5), empty_quadrant=(empty_quadrant, "nan"))
        self.alpha = float(alpha)
        self.empty_quadrant = empty_quadrant
        self._options = MeasureOptions(s_measure=True, alpha=self.alpha, empty_quadrant=empty_quadrant)

    def _derive(self, values: ForegroundIntermediates) -> dict[str, Tensor]:
        sm = values.s_measure
        assert sm is not None
        return {"sm": sm, "sm_is_nan": torch.isnan(sm).to(sm.dtype)}

    def compute(self) -> Tensor:
        value = self._mean("sm")
        nan_images = int(self.sm_is_nan_sum)
        if nan_images:
            warn_s_measure_nan("SMeasure", f"{nan_images} image(s) have")
        return value


class WeightedFMeasure(_ForegroundMetric):
    """Weighted F-beta over a dataset (Margolin et al. CVPR 2014), PySODMetrics 1.6.2 ``WeightedFmeasure``.
    A float map is min-max stretched per image as PySODMetrics does (``normalize=True``, the default); pass
    ``normalize=False`` to score probabilities as they are, e.g. in a training loop, so that the logged value agrees
    with a loss computed on the same tensor.

    See :func:`segmetrics_torch.functional.weighted_f_measure`. Images with empty ground truth score 0.
    ``compute()`` returns a scalar tensor.

    Args:
        beta2: :math:`\\beta^2` (1). edt_backend: ``"auto"``, ``"torch"`` or ``"numba"``.
        normalize: min-max stretch each map to [0, 1] first, as PySODMetrics (default ``True``).
        validate_args: check shapes, dtypes and values (NaN, range, binary target); ``False`` skips the checks
            (never memory safety). skip_empty_gt: leave out images of empty ground truth (COD10K's convention),
            counted in ``skipped_empty_gt``. protocol: ``"pysodmetrics"`` (default) or a MATLAB-toolbox protocol
            (``docs/matlab-toolbox.md``). torchmetrics' own options (``dist_sync_on_step``, ``sync_on_compute``,
            ``process_group``, ``compute_on_cpu``, ...) are accepted as keywords.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) or (B, 1, H, W) maps, float in [0, 1] or uint8 0..255 (min-max normalised per image
      unless ``normalize=False``), or a list of (H, W) maps of any sizes.
    - ``target``: ground truth of the same shape (or a list), bool / {0, 1} / uint8 (binarised ``> 128``).

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a 0-d float64 tensor: the mean over images of the per-image weighted F-beta.

    Example:
        >>> import torch
        >>> g = torch.Generator().manual_seed(0)
        >>> preds = torch.rand(2, 16, 16, generator=g)
        >>> target = torch.zeros(2, 16, 16, dtype=torch.bool)
        >>> target[:, 4:12, 4:12] = True
        >>> from segmetrics_torch import WeightedFMeasure
        >>> metric = WeightedFMeasure()
        >>> metric.update(preds, target)
        >>> round(float(metric.compute()), 4)
        0.3461
    """

    _scalars = ("wfm",)

    def __init__(self, *, beta2: float = 1.0, edt_backend: EdtBackend = "auto", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.beta2 = check_positive_float(beta2, "beta2")
        check_foreground_protocol(self.protocol, beta2=(self.beta2, 1.0))
        check_edt_backend(edt_backend)
        self.edt_backend = edt_backend
        self._options = MeasureOptions(weighted_f=True, wf_beta2=self.beta2, edt_backend=edt_backend, counts=False)

    def _derive(self, values: ForegroundIntermediates) -> dict[str, Tensor]:
        assert values.weighted_f_measure is not None
        return {"wfm": values.weighted_f_measure}

    def compute(self) -> Tensor:
        return self._mean("wfm")


class FMeasure(_ForegroundMetric):
    """F-beta measure over a dataset: adaptive, mean and max F, and the F, precision and recall curves.
    A float map is min-max stretched per image as PySODMetrics does (``normalize=True``, the default); pass
    ``normalize=False`` to score probabilities as they are, e.g. in a training loop, so that the logged value agrees
    with a loss computed on the same tensor.

    PySODMetrics 1.6.2 ``Fmeasure`` (beta^2 = 0.3). See :func:`segmetrics_torch.functional.f_measure`.

    ``compute()`` returns a dict: ``adaptive`` (mean of per-image adaptive F), ``curve`` (256,) image-averaged F at
    the thresholds ``trunc(255 p) >= 255 - i`` (descending), ``mean``/``max`` of that curve, ``precision`` and
    ``recall`` (256,) image-averaged curves (for the PR curve).

    Args:
        beta2: :math:`\\beta^2` of the F-measure (0.3, as PySODMetrics).
        normalize: min-max stretch each map to [0, 1] first, as PySODMetrics (default ``True``).
        validate_args: check shapes, dtypes and values (NaN, range, binary target); ``False`` skips the checks
            (never memory safety). skip_empty_gt: leave out images of empty ground truth (COD10K's convention),
            counted in ``skipped_empty_gt``. protocol: ``"pysodmetrics"`` (default) or a MATLAB-toolbox protocol
            (``docs/matlab-toolbox.md``). torchmetrics' own options (``dist_sync_on_step``, ``sync_on_compute``,
            ``process_group``, ``compute_on_cpu``, ...) are accepted as keywords.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) or (B, 1, H, W) maps, float in [0, 1] or uint8 0..255 (min-max normalised per image
      unless ``normalize=False``), or a list of (H, W) maps of any sizes.
    - ``target``: ground truth of the same shape (or a list), bool / {0, 1} / uint8 (binarised ``> 128``).

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a dict of float64 tensors: ``adaptive`` (), ``mean`` (), ``max`` (), ``curve`` (256,) F-beta, and the
      ``precision`` and ``recall`` (256,) curves, averaged over the images.

    Example:
        >>> import torch
        >>> g = torch.Generator().manual_seed(0)
        >>> preds = torch.rand(2, 16, 16, generator=g)
        >>> target = torch.zeros(2, 16, 16, dtype=torch.bool)
        >>> target[:, 4:12, 4:12] = True
        >>> from segmetrics_torch import FMeasure
        >>> metric = FMeasure()
        >>> metric.update(preds, target)
        >>> {k: round(float(v), 4) for k, v in metric.compute().items() if v.ndim == 0}
        {'adaptive': 0.0516, 'mean': 0.2544, 'max': 0.3033}
    """

    _scalars = ("f_adaptive",)
    _curves = ("f_curve", "precision_curve", "recall_curve")

    def __init__(self, *, beta2: float = 0.3, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.beta2 = check_positive_float(beta2, "beta2")

    def _derive(self, values: ForegroundIntermediates) -> dict[str, Tensor]:
        c = f_from_counts(values.curve, self.beta2)
        return {
            "f_adaptive": f_from_counts(values.adaptive, self.beta2)["f"],
            "f_curve": c["f"],
            "precision_curve": c["precision"],
            "recall_curve": c["recall"],
        }

    def compute(self) -> dict[str, Tensor]:
        out = self._curve_summary("f_curve", "f_adaptive")
        out["precision"] = self._mean("precision_curve")
        out["recall"] = self._mean("recall_curve")
        return out


class EMeasure(_ForegroundMetric):
    """E-measure over a dataset (Fan et al. IJCAI 2018): adaptive, mean and max E, and the 256-point curve.
    A float map is min-max stretched per image as PySODMetrics does (``normalize=True``, the default); pass
    ``normalize=False`` to score probabilities as they are, e.g. in a training loop, so that the logged value agrees
    with a loss computed on the same tensor.

    PySODMetrics 1.6.2 ``Emeasure``. See :func:`segmetrics_torch.functional.e_measure`. Values can exceed 1
    (normalisation by ``N - 1``). ``compute()`` returns a dict ``adaptive``, ``mean``, ``max``, ``curve`` (256,).

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) or (B, 1, H, W) maps, float in [0, 1] or uint8 0..255 (min-max normalised per image
      unless ``normalize=False``), or a list of (H, W) maps of any sizes.
    - ``target``: ground truth of the same shape (or a list), bool / {0, 1} / uint8 (binarised ``> 128``).

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a dict of float64 tensors: ``adaptive`` (), ``mean`` (), ``max`` () and ``curve`` (256,), averaged over the
      images (thresholds ``trunc(255 p) >= 255 - i``, descending).

    Example:
        >>> import torch
        >>> g = torch.Generator().manual_seed(0)
        >>> preds = torch.rand(2, 16, 16, generator=g)
        >>> target = torch.zeros(2, 16, 16, dtype=torch.bool)
        >>> target[:, 4:12, 4:12] = True
        >>> from segmetrics_torch import EMeasure
        >>> metric = EMeasure()
        >>> metric.update(preds, target)
        >>> {k: round(float(v), 4) for k, v in metric.compute().items() if k != 'curve'}
        {'adaptive': 0.2911, 'mean': 0.3952, 'max': 0.6542}
    """

    plot_upper_bound = None
    _scalars = ("e_adaptive",)
    _curves = ("e_curve",)

    def _derive(self, values: ForegroundIntermediates) -> dict[str, Tensor]:
        return {"e_adaptive": e_from_counts(values.adaptive), "e_curve": e_from_counts(values.curve)}

    def compute(self) -> dict[str, Tensor]:
        return self._curve_summary("e_curve", "e_adaptive")


class _OverlapMetric(_ForegroundMetric):
    _key = ""

    def _derive(self, values: ForegroundIntermediates) -> dict[str, Tensor]:
        return {
            f"{self._key}_adaptive": overlap_from_counts(values.adaptive)[self._key],
            f"{self._key}_curve": overlap_from_counts(values.curve)[self._key],
        }

    def compute(self) -> dict[str, Tensor]:
        return self._curve_summary(f"{self._key}_curve", f"{self._key}_adaptive")


class IoU(_OverlapMetric):
    """Intersection over union (Jaccard) of thresholded maps: adaptive, mean, max and the 256-point curve.
    A float map is min-max stretched per image as PySODMetrics does (``normalize=True``, the default); pass
    ``normalize=False`` to score probabilities as they are, e.g. in a training loop, so that the logged value agrees
    with a loss computed on the same tensor.

    PySODMetrics 1.6.2 ``FmeasureV2`` + ``IOUHandler`` (``sample_based=True``). See
    :func:`segmetrics_torch.functional.iou`. ``compute()`` returns a dict ``adaptive``, ``mean``, ``max``, ``curve``.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) or (B, 1, H, W) maps, float in [0, 1] or uint8 0..255 (min-max normalised per image
      unless ``normalize=False``), or a list of (H, W) maps of any sizes.
    - ``target``: ground truth of the same shape (or a list), bool / {0, 1} / uint8 (binarised ``> 128``).

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a dict of float64 tensors: ``adaptive`` (), ``mean`` (), ``max`` () and ``curve`` (256,), averaged over the
      images (thresholds ``trunc(255 p) >= 255 - i``, descending).

    Example:
        >>> import torch
        >>> g = torch.Generator().manual_seed(0)
        >>> preds = torch.rand(2, 16, 16, generator=g)
        >>> target = torch.zeros(2, 16, 16, dtype=torch.bool)
        >>> target[:, 4:12, 4:12] = True
        >>> from segmetrics_torch import IoU
        >>> metric = IoU()
        >>> metric.update(preds, target)
        >>> {k: round(float(v), 4) for k, v in metric.compute().items() if k != 'curve'}
        {'adaptive': 0.0147, 'mean': 0.1761, 'max': 0.2505}
    """

    _key = "iou"
    _scalars = ("iou_adaptive",)
    _curves = ("iou_curve",)


class Dice(_OverlapMetric):
    """Dice coefficient of thresholded maps: adaptive, mean, max and the 256-point curve.
    A float map is min-max stretched per image as PySODMetrics does (``normalize=True``, the default); pass
    ``normalize=False`` to score probabilities as they are, e.g. in a training loop, so that the logged value agrees
    with a loss computed on the same tensor.

    PySODMetrics 1.6.2 ``FmeasureV2`` + ``DICEHandler``. See :func:`segmetrics_torch.functional.dice`.
    ``compute()`` returns a dict ``adaptive``, ``mean``, ``max``, ``curve``.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) or (B, 1, H, W) maps, float in [0, 1] or uint8 0..255 (min-max normalised per image
      unless ``normalize=False``), or a list of (H, W) maps of any sizes.
    - ``target``: ground truth of the same shape (or a list), bool / {0, 1} / uint8 (binarised ``> 128``).

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a dict of float64 tensors: ``adaptive`` (), ``mean`` (), ``max`` () and ``curve`` (256,), averaged over the
      images (thresholds ``trunc(255 p) >= 255 - i``, descending).

    Example:
        >>> import torch
        >>> g = torch.Generator().manual_seed(0)
        >>> preds = torch.rand(2, 16, 16, generator=g)
        >>> target = torch.zeros(2, 16, 16, dtype=torch.bool)
        >>> target[:, 4:12, 4:12] = True
        >>> from segmetrics_torch import Dice
        >>> metric = Dice()
        >>> metric.update(preds, target)
        >>> {k: round(float(v), 4) for k, v in metric.compute().items() if k != 'curve'}
        {'adaptive': 0.0286, 'mean': 0.2934, 'max': 0.4006}
    """

    _key = "dice"
    _scalars = ("dice_adaptive",)
    _curves = ("dice_curve",)


class ForegroundMeasures(_ForegroundMetric):
    """Every foreground measure of a dataset from one shared pass per batch.
    A float map is min-max stretched per image as PySODMetrics does (``normalize=True``, the default); pass
    ``normalize=False`` to score probabilities as they are, e.g. in a training loop, so that the logged value agrees
    with a loss computed on the same tensor.

    One preparation, one histogram, one distance transform per image; each value equals the dedicated metric's. The
    same state, update and ``compute()`` without torchmetrics, ``update`` returning each image's values:
    :class:`~segmetrics_torch.functional.ForegroundSums`.

    ``compute()`` returns a dict: ``mae``, ``s_measure``, ``weighted_f_measure`` (scalars); ``f_measure`` (dict as
    :class:`FMeasure`), ``e_measure`` (as :class:`EMeasure`), ``iou`` and ``dice`` (as :class:`IoU`), and
    ``precision``/``recall`` at the adaptive threshold (scalars). Use :func:`flatten_results` to log it.

    Args:
        beta2, wf_beta2, alpha, empty_quadrant, edt_backend, normalize, validate_args, protocol: as
            :func:`segmetrics_torch.functional.foreground_measures` (``protocol="matlab-toolbox"`` or
            ``"matlab-toolbox-2020-11"``: the MATLAB evaluation toolbox's numbers, ``docs/matlab-toolbox.md``; then
            without ``include``).
        include: the other PySODMetrics measures to accumulate beside them, by name (a sequence) or with their
            options (a mapping name -> keyword arguments): ``threshold_measures`` (:class:`ThresholdMeasures`),
            ``size_invariant_f_measure`` (:class:`SizeInvariantThresholdMeasures`), ``size_invariant_mae``
            (:class:`SizeInvariantMAE`), ``multiscale_iou`` (:class:`MultiScaleIoU`), ``human_correction_effort``
            (:class:`HumanCorrectionEffort`), ``context_measure`` (:class:`ContextMeasure`). Each is a child Metric
            that gets every batch (``normalize`` and ``validate_args`` passed on); its ``compute()`` result appears
            under its name. ``CamouflageContextMeasure`` needs the RGB images and is not offered here.
        skip_empty_gt: leave out the images whose ground truth is empty (COD10K's convention), for the included
            measures too; counted in ``skipped_empty_gt``.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) or (B, 1, H, W) maps, float in [0, 1] or uint8 0..255 (min-max normalised per image
      unless ``normalize=False``), or a list of (H, W) maps of any sizes.
    - ``target``: ground truth of the same shape (or a list), bool / {0, 1} / uint8 (binarised ``> 128``).

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a dict: ``mae``, ``s_measure``, ``weighted_f_measure``, ``precision``, ``recall`` (0-d float64 tensors);
      ``f_measure``, ``e_measure``, ``iou``, ``dice`` (dicts as :class:`FMeasure`, :class:`EMeasure`, :class:`IoU`);
      and each included measure's result under its name.

    Example:
        >>> import torch
        >>> from segmetrics_torch import ForegroundMeasures
        >>> gt = torch.zeros(2, 32, 32, dtype=torch.bool)
        >>> gt[:, 8:24, 8:24] = True
        >>> m = ForegroundMeasures(include=["threshold_measures", "size_invariant_mae"])
        >>> m.update(gt.to(torch.uint8) * 255, gt)
        >>> res = m.compute()
        >>> round(float(res["mae"]), 4), round(float(res["size_invariant_mae"]), 4)
        (0.0, 0.0)
        >>> sorted(res["threshold_measures"])[:3]
        ['accuracy', 'ber', 'dice']
    """

    #: mixed directions (MAE: lower is better; the others: higher), as torchmetrics says of such Metrics
    higher_is_better = None

    _scalars = SUITE_SCALARS
    _curves = SUITE_CURVES
    _in_forward = False
    #: the batch forward() passes on to the included Metrics (as skip_empty_gt filtered it)
    _forward_batch: tuple[Any, Any] | None = None

    included: torch.nn.ModuleDict

    def __init__(
        self,
        *,
        beta2: float = 0.3,
        wf_beta2: float = 1.0,
        alpha: float = 0.5,
        empty_quadrant: EmptyQuadrant = "nan",
        edt_backend: EdtBackend = "auto",
        include: Sequence[str] | Mapping[str, Mapping[str, Any]] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.beta2 = check_positive_float(beta2, "beta2")
        self._options = suite_options(alpha, empty_quadrant, wf_beta2, edt_backend)
        fixed = {"alpha": (alpha, 0.5), "wf_beta2": (wf_beta2, 1.0), "empty_quadrant": (empty_quadrant, "nan")}
        check_foreground_protocol(self.protocol, **fixed)
        if self.protocol != "pysodmetrics" and include:
            raise ValueError(
                f"Expected `include` to be empty with protocol={self.protocol!r} (the measures it names are not part "
                f"of the MATLAB toolbox), but got {include!r}."
            )
        # the children get every torchmetrics setting of the composite (syncing, process group, CPU compute), as
        # torchmetrics' own compositions do: dist_sync_on_step=True syncs the included measures' batch values too
        shared = {key: value for key, value in kwargs.items() if key in _TORCHMETRICS_SETTINGS}
        self.included = torch.nn.ModuleDict(
            _included_metrics(include, normalize=self.normalize, validate_args=self.validate_args, **shared)
        )

    @property
    def settings(self) -> dict[str, Any]:
        """The measure settings (for reports): protocol, beta2, wf_beta2, alpha, empty_quadrant, edt_backend."""
        return suite_settings(self.beta2, self._options, self.protocol)

    def _derive(self, values: ForegroundIntermediates) -> dict[str, Tensor]:
        return derive_all(values, self.beta2)

    def _included(self) -> dict[str, Metric]:
        """The included Metrics by name (``self.included`` typed)."""
        return {name: cast(Metric, metric) for name, metric in self.included.items()}

    def update(self, preds: ImageBatch, target: ImageBatch) -> None:
        """Add a batch (as :class:`FMeasure`); the included measures get it too (without the images
        ``skip_empty_gt`` leaves out)."""
        super().update(preds, target)

    def _update_kept(self, preds: ImageBatch, target: ImageBatch, *, checked: bool = False) -> None:
        super()._update_kept(preds, target, checked=checked)
        if self._in_forward:  # forward() feeds the included Metrics itself, once, with this filtered batch
            self._forward_batch = (preds, target)
            return
        for metric in self._included().values():
            metric.update(preds, target)

    def forward(self, preds: ImageBatch, target: ImageBatch) -> Any:
        """The batch's results (and accumulate it), the included measures' batch results under their names (of the
        images ``skip_empty_gt`` keeps; when it keeps none, their values on no image, NaN, as this Metric's)."""
        self._in_forward = True
        self._forward_batch = None
        try:
            res = super().forward(preds, target)
        finally:
            self._in_forward = False
        kept, self._forward_batch = self._forward_batch, None
        for name, metric in self._included().items():
            value = metric(*kept) if kept is not None else _value_of_no_image(metric)
            if isinstance(res, dict):
                res[name] = value
        return res

    def persistent(self, mode: bool = False) -> None:
        """Whether the states (the included measures' too) go into ``state_dict``."""
        super().persistent(mode)
        for metric in self._included().values():
            metric.persistent(mode)

    def merge_state(self, incoming_state: dict[str, Any] | Metric) -> None:
        """Merge another ``ForegroundMeasures``' states, the included measures' each into its own. A dict of states
        (torchmetrics' other form, ``other.metric_state``) holds this Metric's own states only: with ``include`` it is
        a ``ValueError`` (the included measures would keep this Metric's batches alone), without it it is merged."""
        if isinstance(incoming_state, dict) and len(self.included):
            raise ValueError(
                f"Cannot merge a dict of states into a ForegroundMeasures that includes {sorted(self.included)}: the "
                "dict holds the core measures' states only, not the included measures'; pass the other "
                "ForegroundMeasures itself."
            )
        if isinstance(incoming_state, ForegroundMeasures):
            mine, theirs = sorted(self.included), sorted(incoming_state.included)
            if mine != theirs:
                raise ValueError(
                    f"Cannot merge ForegroundMeasures states: the two Metrics include different measures ({mine} "
                    f"here, {theirs} there); merge Metrics built alike."
                )
            super().merge_state(incoming_state)
            for name, metric in self._included().items():
                metric.merge_state(cast(Metric, incoming_state.included[name]))
            return
        super().merge_state(incoming_state)

    def reset(self) -> None:
        """Reset the states, the included measures' too (not inside forward(), which keeps the dataset's)."""
        super().reset()
        if not self._in_forward:
            for metric in getattr(self, "included", {}).values():
                metric.reset()

    def compute(self) -> dict[str, Any]:
        res = summarize_foreground({name: self._mean(name) for name in (*self._scalars, *self._curves)})
        if int(self.count) and bool(torch.isnan(res["s_measure"])):
            warn_s_measure_nan("ForegroundMeasures: s_measure", "at least one image has")
        if not self._in_forward:  # forward() adds the included Metrics' own batch results
            for name, metric in self._included().items():
                res[name] = metric.compute()
        return res


def _value_of_no_image(metric: Metric) -> Any:
    """``metric``'s result on a batch of no image (NaN values), its accumulated states untouched."""

    empty = copy.deepcopy(metric)
    empty.reset()
    with warnings.catch_warnings():  # "compute before update", "no image has been added": the point here
        warnings.simplefilter("ignore")
        return empty.compute()


#: torchmetrics' own Metric settings (passed on by composite Metrics to their children)
_TORCHMETRICS_SETTINGS = frozenset(
    {
        "compute_on_cpu",
        "dist_sync_on_step",
        "process_group",
        "dist_sync_fn",
        "distributed_available_fn",
        "sync_on_compute",
        "compute_with_cache",
    }
)


def _included_metrics(include: object, *, normalize: bool, validate_args: bool, **shared: Any) -> dict[str, Metric]:
    """The child Metrics of ``ForegroundMeasures(include=...)``, checked by name (the table:
    :data:`segmetrics_torch.registry.INCLUDABLE`)."""
    if isinstance(include, (str, bytes)) or not isinstance(include, (Sequence, Mapping)):
        raise TypeError(
            f"Expected `include` to be a sequence of measure names or a mapping name -> options, but got {include!r}."
        )
    options = dict(include) if isinstance(include, Mapping) else {name: {} for name in include}

    out: dict[str, Metric] = {}
    for name, kwargs in options.items():
        if name not in INCLUDABLE:
            raise ValueError(
                f"Expected `include` to name measures among {', '.join(map(repr, INCLUDABLE))}, but got {name!r}."
            )
        if not isinstance(kwargs, Mapping):
            raise TypeError(f"Expected the options of `include[{name!r}]` to be a mapping, but got {kwargs!r}.")
        cls = getattr(foreground_extra, INCLUDABLE[name])
        out[name] = cls(normalize=normalize, validate_args=validate_args, **{**shared, **dict(kwargs)})
    return out


def flatten_results(results: dict[str, Any], prefix: str = "", *, curves: bool = False) -> dict[str, Tensor]:
    """Flatten a nested ``compute()`` dict to ``{"f_measure/max": tensor, ...}`` (e.g. for ``log_dict``).

    Curves (tensors with more than one element) are dropped unless ``curves=True``.

    Example:
        >>> import torch
        >>> from segmetrics_torch import flatten_results
        >>> results = {'mae': torch.tensor(0.1), 'e_measure': {'max': torch.tensor(0.9), 'curve': torch.zeros(256)}}
        >>> flatten_results(results)
        {'mae': tensor(0.1000), 'e_measure/max': tensor(0.9000)}
        >>> sorted(flatten_results(results, 'val/', curves=True))
        ['val/e_measure/curve', 'val/e_measure/max', 'val/mae']
    """
    flat: dict[str, Tensor] = {}
    for key, value in results.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten_results(value, f"{name}/", curves=curves))
        elif curves or value.numel() == 1:
            flat[name] = value
    return flat
