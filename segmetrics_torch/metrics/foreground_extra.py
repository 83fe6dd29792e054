"""torchmetrics ``Metric`` classes of the foreground measures beyond the suite (PySODMetrics 1.6.2's remaining classes).

States are float64 sums of per-image values / 256-point curves, int64 pooled confusion counts and an int64 image
count, all reduced with ``"sum"``: a dataset split across DDP processes gives the single-process result (up to
float64 summation order, ~1e-16). Dataset values follow PySODMetrics: per-image values are averaged; curves are
averaged first and ``mean``/``max`` are taken of the averaged curve.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, cast

import torch
from torch import Tensor

from .._checks import ImageBatch, check_positive_float
from .._lazy import deprecated_alias
from ..functional.foreground.context_measure import camouflage_context_measure, context_measure
from ..functional.foreground.hce import check_hce_args, human_correction_effort
from ..functional.foreground.multiscale_iou import check_msiou_args, multiscale_iou
from ..functional.foreground.size_invariance import (
    size_invariant_mae,
    size_invariant_threshold_measures,
    warn_si_mae_nan,
)
from ..functional.foreground.threshold_measures import (
    THRESHOLD_MEASURES,
    THRESHOLD_MODES,
    canonical_measures,
    check_modes,
    measure_from_counts,
    threshold_measures,
)
from ..ops.thresholds import NUM_THRESHOLDS
from ..registry import DEPRECATED_CLASSES
from ._base import ExactMetric

__all__ = [
    "CamouflageContextMeasure",
    "ContextMeasure",
    "HumanCorrectionEffort",
    "MultiScaleIoU",
    "SizeInvariantMAE",
    "SizeInvariantThresholdMeasures",
    "ThresholdMeasures",
]


def __getattr__(name: str) -> Any:
    if name in DEPRECATED_CLASSES:
        return deprecated_alias(name, globals())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_F64 = torch.float64


class _SumMetric(ExactMetric):
    """Common checks and the image count of these Metrics.

    The measures with one value per image (``SizeInvariantMAE``, ``HumanCorrectionEffort``, ``ContextMeasure``) also
    keep the per-image values of their latest ``update`` in ``last_image_values`` ((B,) float64, in input order; None
    before the first update): a convenience for per-image reports, not a state (not synchronised, not reset).
    """

    #: the per-image values of the latest update (the per-image measures only)
    last_image_values: Tensor | None = None

    is_differentiable = False
    higher_is_better: bool | None = True
    full_state_update = False
    plot_lower_bound = 0.0
    plot_upper_bound: float | None = 1.0

    count: Tensor
    #: pooled (tp, fp, tn, fn) of the binary mode when not sample-based (ThresholdMeasures,
    #: SizeInvariantThresholdMeasures)
    pooled_counts: Tensor

    def __init__(self, *, normalize: bool = True, validate_args: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(normalize, bool):
            raise TypeError(f"Expected argument `normalize` to be a bool, but got {normalize!r}.")
        if not isinstance(validate_args, bool):
            raise TypeError(f"Expected argument `validate_args` to be a bool, but got {validate_args!r}.")
        self.normalize = normalize
        self.validate_args = validate_args
        self.add_state("count", default=torch.zeros((), dtype=torch.int64), dist_reduce_fx="sum")

    def _add(self, name: str, value: Tensor) -> None:
        state = getattr(self, name)
        setattr(self, name, state + value.to(device=state.device, dtype=state.dtype))


class _ThresholdSetMetric(_SumMetric):
    """The states of a set of confusion-count measures in adaptive / dynamic / binary modes (per-image sums), shared
    by :class:`ThresholdMeasures` and :class:`SizeInvariantThresholdMeasures`; each adds its own states in the two
    hooks."""

    def __init__(
        self,
        measures: str | list[str] | tuple[str, ...] = THRESHOLD_MEASURES,
        modes: str | list[str] | tuple[str, ...] = THRESHOLD_MODES,
        *,
        sample_based: bool = True,
        beta2: float = 0.3,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.measures = canonical_measures(measures)
        self.modes = check_modes(modes)
        if not isinstance(sample_based, bool):
            raise TypeError(f"Expected argument `sample_based` to be a bool, but got {sample_based!r}.")
        self.sample_based = sample_based
        self.beta2 = check_positive_float(beta2, "beta2")
        for key, _ in self.measures:
            if "adaptive" in self.modes:
                self.add_state(f"{key}_adaptive", torch.zeros((), dtype=_F64), dist_reduce_fx="sum")
            if "dynamic" in self.modes:
                self.add_state(f"{key}_dynamic", torch.zeros(NUM_THRESHOLDS, dtype=_F64), dist_reduce_fx="sum")
            self._per_key_states(key)
            if "binary" in self.modes and sample_based:
                self.add_state(f"{key}_binary", torch.zeros((), dtype=_F64), dist_reduce_fx="sum")
        if "binary" in self.modes and not sample_based:
            self.add_state("pooled_counts", torch.zeros(4, dtype=torch.int64), dist_reduce_fx="sum")
        self._global_states()

    #: the function of the per-image values (``threshold_measures`` or its size-invariant form)
    _function: Callable[..., dict[str, Tensor]]

    def _values(self, preds: ImageBatch, target: ImageBatch) -> dict[str, Tensor]:
        """The function's values of a batch, with the counts of the binary mode when they are pooled."""
        return type(self)._function(
            preds,
            target,
            measures=[k for k, _ in self.measures],
            modes=self.modes,
            beta2=self.beta2,
            normalize=self.normalize,
            validate_args=self.validate_args,
            return_counts="binary" in self.modes and not self.sample_based,
        )

    def _per_key_states(self, key: str) -> None:
        """States of measure ``key`` beside the per-mode sums."""

    def _global_states(self) -> None:
        """States of the whole set."""


class ThresholdMeasures(_ThresholdSetMetric):
    r"""PySODMetrics' ``FmeasureV2`` over a dataset: confusion-count measures in adaptive/dynamic/binary modes.
    A float map is min-max stretched per image as PySODMetrics does (``normalize=True``, the default); pass
    ``normalize=False`` to score probabilities as they are, e.g. in a training loop, so that the logged value agrees
    with a loss computed on the same tensor.

    Measures (see :mod:`segmetrics_torch.functional.foreground.threshold_measures` for the formulas):
    ``fmeasure`` (:math:`F_\beta`, :math:`\beta^2 = 0.3`), ``precision``, ``recall`` (``tpr``, ``sensitivity``),
    ``specificity`` (``tnr``), ``fpr``, ``ber``, ``iou``, ``dice``, ``accuracy`` (``oa``), ``kappa``.
    Modes: ``adaptive`` (``p >= min(2 mean p, 1)``), ``dynamic`` (256 thresholds ``trunc(255 p) >= 255 - i``,
    descending), ``binary`` (``p > 0.5``). ``adaptive`` and ``dynamic`` are always per-image averages (as
    PySODMetrics); ``binary`` is the mean of per-image values when ``sample_based=True`` and the measure of the
    dataset's pooled counts otherwise (PySODMetrics' ``sample_based`` is per handler; here it applies to all the
    measures of one Metric -- use two Metrics to mix).

    Reference: PySODMetrics 1.6.2 ``FmeasureV2`` with the handlers above (to 1e-6).

    Args:
        measures: measure names (or aliases); the result keys use the names as given.
        modes: subset of ``("adaptive", "dynamic", "binary")``.
        sample_based: see above (``binary`` mode only).
        beta2: :math:`\beta^2` of ``fmeasure``.
        normalize, validate_args: see :func:`segmetrics_torch.functional.threshold_measures`.

    ``compute()`` returns ``{measure: {"adaptive": (), "dynamic": (256,), "mean": (), "max": (), "binary": ()}}``
    (float64; keys present per ``modes``; ``mean``/``max`` are of the averaged ``dynamic`` curve, PySODMetrics'
    ``meanXX``/``maxXX``).

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) or (B, 1, H, W) maps, float in [0, 1] or uint8 0..255 (min-max normalised per image
      unless ``normalize=False``), or a list of (H, W) maps of any sizes.
    - ``target``: ground truth of the same shape (or a list), bool / {0, 1} / uint8 (binarised ``> 128``).

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - ``{measure: {"adaptive": (), "dynamic": (256,), "mean": (), "max": (), "binary": ()}}``: float64 tensors,
      keys per ``measures`` and ``modes``.

    Example:
        >>> import torch
        >>> metric = ThresholdMeasures(measures=["iou", "recall"], modes=["adaptive", "binary"], sample_based=False)
        >>> target = torch.zeros(2, 8, 8, dtype=torch.uint8); target[:, 2:6, 2:6] = 255
        >>> metric.update(target.clone(), target)
        >>> {k: float(v["binary"]) for k, v in metric.compute().items()}
        {'iou': 1.0, 'recall': 1.0}
    """

    _function = staticmethod(threshold_measures)
    #: mixed: FPR and BER are errors (lower is better), the other measures scores (the registry's directions)
    higher_is_better = None

    def update(self, preds: ImageBatch, target: ImageBatch) -> None:
        """Add a batch: ``preds``/``target`` (B, H, W) or (B, 1, H, W) tensors, or lists of (H, W) tensors."""
        values = self._values(preds, target)
        for key, _ in self.measures:
            for mode in self.modes:
                if mode != "binary" or self.sample_based:
                    self._add(f"{key}_{mode}", values[f"{key}/{mode}"].sum(dim=0))
        if "binary" in self.modes and not self.sample_based:
            self._add("pooled_counts", values["counts/binary"].sum(dim=0))
        self.count += next(iter(values.values())).shape[0]

    def compute(self) -> dict[str, dict[str, Tensor]]:
        out: dict[str, dict[str, Tensor]] = {}
        for key, name in self.measures:
            res: dict[str, Tensor] = {}
            if "adaptive" in self.modes:
                res["adaptive"] = self._mean(f"{key}_adaptive")
            if "dynamic" in self.modes:
                curve = self._mean(f"{key}_dynamic")
                res.update(dynamic=curve, mean=curve.mean(), max=curve.max())
            if "binary" in self.modes:
                if self.sample_based:
                    res["binary"] = self._mean(f"{key}_binary")
                else:
                    tp, fp, tn, fn = self.pooled_counts.unbind()
                    res["binary"] = measure_from_counts(name, tp, fp, tn, fn, beta2=self.beta2)
            out[key] = res
        return out


class SizeInvariantMAE(_SumMetric):
    r"""Size-invariant MAE over a dataset (Li et al. ICML 2024), PySODMetrics 1.6.2 ``SizeInvarianceMAE``.
    A float map is min-max stretched per image as PySODMetrics does (``normalize=True``, the default); pass
    ``normalize=False`` to score probabilities as they are, e.g. in a training loop, so that the logged value agrees
    with a loss computed on the same tensor.

    The mean of the per-image values of :func:`segmetrics_torch.functional.size_invariant_mae` (targets = GT
    components of >= 50 pixels, each weighted by its bounding box; see there for the formula and edge cases: empty
    GT gives the plain MAE, boxes covering the whole image give NaN as in PySODMetrics). ``compute()`` returns a
    scalar float64 tensor (PySODMetrics' ``si_mae``).

    Args:
        normalize: min-max stretch each map to [0, 1] first, as PySODMetrics (default ``True``).
        validate_args: check shapes, dtypes and values (NaN, range, binary target); ``False`` skips the checks
            (never memory safety). torchmetrics' own options (``dist_sync_on_step``, ``sync_on_compute``,
            ``process_group``, ``compute_on_cpu``, ...) are accepted as keywords.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) or (B, 1, H, W) maps, float in [0, 1] or uint8 0..255 (min-max normalised per image
      unless ``normalize=False``), or a list of (H, W) maps of any sizes.
    - ``target``: ground truth of the same shape (or a list), bool / {0, 1} / uint8 (binarised ``> 128``).

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a 0-d float64 tensor: the mean over images of the per-image size-invariant MAE.

    Example:
        >>> import torch
        >>> metric = SizeInvariantMAE()
        >>> target = torch.zeros(2, 20, 20, dtype=torch.uint8); target[:, 2:10, 2:10] = 255
        >>> metric.update(target.clone(), target)
        >>> float(metric.compute())
        0.0
    """

    higher_is_better = False

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.add_state("si_mae_sum", torch.zeros((), dtype=_F64), dist_reduce_fx="sum")
        self.add_state("si_mae_nan", torch.zeros((), dtype=_F64), dist_reduce_fx="sum")
        self._first_nan: int | None = None  # this process's first NaN image, counted from the first update

    def update(self, preds: ImageBatch, target: ImageBatch) -> None:
        """Add a batch: ``preds``/``target`` (B, H, W) or (B, 1, H, W) tensors, or lists of (H, W) tensors."""
        with warnings.catch_warnings():  # announced once, by compute(), not per batch
            warnings.simplefilter("ignore", RuntimeWarning)
            values = size_invariant_mae(preds, target, normalize=self.normalize, validate_args=self.validate_args)
        nan = torch.isnan(values)
        if self._first_nan is None and bool(nan.any()):
            self._first_nan = int(self.count) + int(nan.nonzero()[0, 0])
        self._add("si_mae_sum", values.sum())
        self._add("si_mae_nan", nan.sum())
        self.last_image_values = values
        self.count += values.shape[0]

    def compute(self) -> Tensor:
        value = self._mean("si_mae_sum")
        nan_images = int(cast(Tensor, self.si_mae_nan))
        if nan_images:
            first = [] if self._first_nan is None else [self._first_nan]
            warn_si_mae_nan("SizeInvariantMAE", first, nan_images, checked=self.validate_args)
        return value

    def reset(self) -> None:
        super().reset()
        self._first_nan = None


class SizeInvariantThresholdMeasures(_ThresholdSetMetric):
    r"""Size-invariant threshold measures over a dataset, PySODMetrics 1.6.2 ``SizeInvarianceFmeasureV2``.
    A float map is min-max stretched per image as PySODMetrics does (``normalize=True``, the default); pass
    ``normalize=False`` to score probabilities as they are, e.g. in a training loop, so that the logged value agrees
    with a loss computed on the same tensor.

    Every measure of :class:`ThresholdMeasures` computed per target (GT components of >= 50 pixels, each on its
    bounding box; see :func:`segmetrics_torch.functional.size_invariant_threshold_measures`) and averaged over an
    image's targets (Li et al. ICML 2024). Dataset values as PySODMetrics and its recorder:

    * ``adaptive``: mean over images of the per-image target means (PySOD ``si_sample_adpXX``, also with
      ``sample_based=False``);
    * ``sample_based=True``: ``dynamic`` = mean over images of the per-image mean curves, ``mean`` = its mean,
      ``max`` = mean over images of the per-image mean of each target's curve maximum (PySOD returns the raw list of
      per-image (T, 256) arrays; ``si_sample_meanXX``/``si_sample_maxXX`` of its recorder are these numbers);
      ``binary`` = mean over images of the per-image target means (``si_sample_biXX``);
    * ``sample_based=False``: ``dynamic`` = mean curve over all targets of all images, ``mean``/``max`` of it
      (``si_overall_meanXX``/``si_overall_maxXX``); ``binary`` = the measure of the counts pooled over all targets
      (``si_overall_biXX``).

    Args: as :class:`ThresholdMeasures` (``beta2``, ``modes``, ``sample_based``, ``normalize``,
    ``validate_args``). ``compute()`` returns ``{measure: {"adaptive", "dynamic", "mean", "max",
    "binary"}}`` (float64; keys per ``modes``).

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) or (B, 1, H, W) maps, float in [0, 1] or uint8 0..255 (min-max normalised per image
      unless ``normalize=False``), or a list of (H, W) maps of any sizes.
    - ``target``: ground truth of the same shape (or a list), bool / {0, 1} / uint8 (binarised ``> 128``).

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - ``{measure: {"adaptive", "dynamic", "mean", "max", "binary"}}``: float64 tensors (``dynamic`` (256,)), keys
      per ``measures`` and ``modes``; with the dynamic curves of ``recall`` and ``fpr`` (``precision`` and
      ``recall``), ``"auc_roc"`` (``"auc_pr"``): the mean over images of the targets' mean area under their ROC (PR)
      curve, PySODMetrics' recorder's ``si_sample_auc_roc`` (``si_sample_auc_pr``).

    Example:
        >>> import torch
        >>> metric = SizeInvariantThresholdMeasures(measures=["fmeasure"], modes=["adaptive"])
        >>> target = torch.zeros(2, 20, 20, dtype=torch.uint8); target[:, 2:10, 2:10] = 255
        >>> metric.update(target.clone(), target)
        >>> float(metric.compute()["fmeasure"]["adaptive"])
        1.0
    """

    #: mixed, as :class:`ThresholdMeasures`' (FPR and BER are errors)
    higher_is_better = None

    def _per_key_states(self, key: str) -> None:
        if "dynamic" in self.modes and self.sample_based:
            self.add_state(f"{key}_dynamic_max", torch.zeros((), dtype=_F64), dist_reduce_fx="sum")

    def _global_states(self) -> None:
        names = {name for _, name in self.measures}
        #: the areas under the targets' ROC / PR curves (PySODMetrics' recorder), when the curves are measured
        self.areas = [
            key
            for key, needed in (("auc_roc", {"recall", "fpr"}), ("auc_pr", {"precision", "recall"}))
            if "dynamic" in self.modes and self.sample_based and needed <= names
        ]
        for key in self.areas:
            self.add_state(f"{key}_sum", torch.zeros((), dtype=_F64), dist_reduce_fx="sum")
        if not self.sample_based:
            self.add_state("targets", torch.zeros((), dtype=torch.int64), dist_reduce_fx="sum")

    _function = staticmethod(size_invariant_threshold_measures)

    def update(self, preds: ImageBatch, target: ImageBatch) -> None:
        """Add a batch: ``preds``/``target`` (B, H, W) or (B, 1, H, W) tensors, or lists of (H, W) tensors."""
        values = self._values(preds, target)
        for key, _ in self.measures:
            if "adaptive" in self.modes:
                self._add(f"{key}_adaptive", values[f"{key}/adaptive"].sum(dim=0))
            if "dynamic" in self.modes:
                if self.sample_based:
                    self._add(f"{key}_dynamic", values[f"{key}/dynamic"].sum(dim=0))
                    self._add(f"{key}_dynamic_max", values[f"{key}/dynamic_max"].sum(dim=0))
                else:
                    self._add(f"{key}_dynamic", values[f"{key}/dynamic_sum"].sum(dim=0))
            if "binary" in self.modes and self.sample_based:
                self._add(f"{key}_binary", values[f"{key}/binary"].sum(dim=0))
        for key in self.areas:
            self._add(f"{key}_sum", values[key].sum())
        if not self.sample_based:
            self._add("targets", values["targets"].sum())
            if "binary" in self.modes:
                self._add("pooled_counts", values["counts/binary"].sum(dim=0))
        self.count += values["targets"].shape[0]

    def compute(self) -> dict[str, dict[str, Tensor]]:
        out: dict[str, dict[str, Tensor]] = {}
        for key, name in self.measures:
            res: dict[str, Tensor] = {}
            if "adaptive" in self.modes:
                res["adaptive"] = self._mean(f"{key}_adaptive")
            if "dynamic" in self.modes:
                if self.sample_based:
                    curve = self._mean(f"{key}_dynamic")
                    res.update(dynamic=curve, mean=curve.mean(), max=self._mean(f"{key}_dynamic_max"))
                else:
                    curve = getattr(self, f"{key}_dynamic") / self.targets
                    res.update(dynamic=curve, mean=curve.mean(), max=curve.max())
            if "binary" in self.modes:
                if self.sample_based:
                    res["binary"] = self._mean(f"{key}_binary")
                else:
                    tp, fp, tn, fn = self.pooled_counts.unbind()
                    res["binary"] = measure_from_counts(name, tp, fp, tn, fn, beta2=self.beta2)
            out[key] = res
        for key in self.areas:
            out[key] = self._mean(f"{key}_sum")  # type: ignore[assignment]
        return out


class MultiScaleIoU(_SumMetric):
    r"""Multi-scale IoU over a dataset (Ahmadzadeh et al. ICIP 2021), PySODMetrics 1.6.2 ``MSIoU``.
    A float map is min-max stretched per image as PySODMetrics does (``normalize=True``, the default); pass
    ``normalize=False`` to score probabilities as they are, e.g. in a training loop, so that the logged value agrees
    with a loss computed on the same tensor.

    Per image the MSIoU of :func:`segmetrics_torch.functional.multiscale_iou` (edges of the binary map and of the GT
    compared on grids of 1..512-pixel cells, area under the ratio curve); dataset values are means over images.

    Args:
        with_dynamic: the 257-threshold curve (``trunc(255 p) >= t``, t = 0..256, ascending as PySOD).
        with_adaptive: the adaptive map ``p >= min(2 mean p, 1)``.
        with_binary: the map ``p > 0.5``.
        num_levels: number of cell sizes (10).
        normalize, validate_args: as :class:`ThresholdMeasures`.

    ``compute()`` returns ``{"adaptive": (), "dynamic": (257,), "mean": (), "max": (), "binary": ()}`` (float64; keys
    per the ``with_*`` flags; ``mean``/``max`` of the averaged curve are PySOD's ``meanmsiou``/``maxmsiou``).

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) or (B, 1, H, W) maps, float in [0, 1] or uint8 0..255 (min-max normalised per image
      unless ``normalize=False``), or a list of (H, W) maps of any sizes.
    - ``target``: ground truth of the same shape (or a list), bool / {0, 1} / uint8 (binarised ``> 128``).

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - ``{"adaptive": (), "dynamic": (257,), "mean": (), "max": (), "binary": ()}``: float64 tensors, keys per the
      ``with_*`` flags.

    Example:
        >>> import torch
        >>> metric = MultiScaleIoU(with_dynamic=False, with_adaptive=True, with_binary=True)
        >>> target = torch.zeros(2, 16, 16, dtype=torch.uint8); target[:, 4:12, 4:12] = 255
        >>> metric.update(target.clone(), target)
        >>> {k: float(v) for k, v in metric.compute().items()}
        {'adaptive': 1.0, 'binary': 1.0}
    """

    def __init__(
        self,
        with_dynamic: bool = True,
        with_adaptive: bool = True,
        with_binary: bool = False,
        num_levels: int = 10,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        for name, flag in (
            ("with_dynamic", with_dynamic),
            ("with_adaptive", with_adaptive),
            ("with_binary", with_binary),
        ):
            if not isinstance(flag, bool):
                raise TypeError(f"Expected argument `{name}` to be a bool, but got {flag!r}.")
        modes = tuple(
            m for m, f in (("adaptive", with_adaptive), ("dynamic", with_dynamic), ("binary", with_binary)) if f
        )
        if not modes:
            raise ValueError("Expected at least one of `with_dynamic`, `with_adaptive`, `with_binary` to be True.")
        self.modes = check_msiou_args(modes, num_levels)
        self.num_levels = num_levels
        for mode in self.modes:
            shape = (257,) if mode == "dynamic" else ()
            self.add_state(f"msiou_{mode}", torch.zeros(shape, dtype=_F64), dist_reduce_fx="sum")

    def update(self, preds: ImageBatch, target: ImageBatch) -> None:
        """Add a batch: ``preds``/``target`` (B, H, W) or (B, 1, H, W) tensors, or lists of (H, W) tensors."""
        values = multiscale_iou(
            preds,
            target,
            modes=self.modes,
            num_levels=self.num_levels,
            normalize=self.normalize,
            validate_args=self.validate_args,
        )
        for mode in self.modes:
            self._add(f"msiou_{mode}", values[mode].sum(dim=0))
        self.count += values[self.modes[0]].shape[0]

    def compute(self) -> dict[str, Tensor]:
        out: dict[str, Tensor] = {}
        if "adaptive" in self.modes:
            out["adaptive"] = self._mean("msiou_adaptive")
        if "dynamic" in self.modes:
            curve = self._mean("msiou_dynamic")
            out.update(dynamic=curve, mean=curve.mean(), max=curve.max())
        if "binary" in self.modes:
            out["binary"] = self._mean("msiou_binary")
        return out


#: PySODMetrics' class name


class HumanCorrectionEffort(_SumMetric):
    r"""Human Correction Effort over a dataset (Qin et al. ECCV 2022), PySOD 1.6.2 ``HumanCorrectionEffortMeasure``.
    A float map is min-max stretched per image as PySODMetrics does (``normalize=True``, the default); pass
    ``normalize=False`` to score probabilities as they are, e.g. in a training loop, so that the logged value agrees
    with a loss computed on the same tensor.

    The mean of the per-image HCE of :func:`segmetrics_torch.functional.human_correction_effort` (lower is better;
    PySOD's ``hce``). Contours and polygons are OpenCV's on the CPU (optional extra ``opencv-python-headless``);
    CUDA inputs are copied to the host for this measure. ``compute()`` returns a scalar float64 tensor.

    Args:
        relax: erosion / dilation steps (5). epsilon: RDP tolerance (2.0). normalize, validate_args: as
            :class:`ThresholdMeasures`.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) or (B, 1, H, W) maps, float in [0, 1] or uint8 0..255 (min-max normalised per image
      unless ``normalize=False``), or a list of (H, W) maps of any sizes.
    - ``target``: ground truth of the same shape (or a list), bool / {0, 1} / uint8 (binarised ``> 128``).

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a 0-d float64 tensor: the mean over images of the per-image HCE (lower is better).

    Example:
        >>> import torch
        >>> metric = HumanCorrectionEffort()
        >>> target = torch.zeros(2, 32, 32, dtype=torch.uint8); target[:, 8:24, 8:24] = 255
        >>> metric.update(target.clone(), target)
        >>> float(metric.compute())
        0.0
    """

    higher_is_better = False
    plot_upper_bound = None

    def __init__(self, relax: int = 5, epsilon: float = 2.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.relax, self.epsilon = check_hce_args(relax, epsilon)
        self.add_state("hce_sum", torch.zeros((), dtype=_F64), dist_reduce_fx="sum")

    def update(self, preds: ImageBatch, target: ImageBatch) -> None:
        """Add a batch: ``preds``/``target`` (B, H, W) or (B, 1, H, W) tensors, or lists of (H, W) tensors."""
        values = human_correction_effort(
            preds,
            target,
            relax=self.relax,
            epsilon=self.epsilon,
            normalize=self.normalize,
            validate_args=self.validate_args,
        )
        self._add("hce_sum", values.sum())
        self.last_image_values = values
        self.count += values.shape[0]

    def compute(self) -> Tensor:
        return self._mean("hce_sum")


class ContextMeasure(_SumMetric):
    r"""Context measure over a dataset (Wang et al. 2025, arXiv:2512.07076), PySODMetrics 1.6.2 ``ContextMeasure``.
    A float map is min-max stretched per image as PySODMetrics does (``normalize=True``, the default); pass
    ``normalize=False`` to score probabilities as they are, e.g. in a training loop, so that the logged value agrees
    with a loss computed on the same tensor.

    The mean of the per-image values of :func:`segmetrics_torch.functional.context_measure` (forward inference and
    reverse deduction weighted by a GT-shaped Gaussian context kernel; PySOD's ``cm``), filtered on each GT's box by
    FFT on the input's device (no OpenCV). ``compute()`` returns a scalar float64 tensor.

    Args:
        beta2 (1.0), alpha (6.0): see the functional. normalize, validate_args: as :class:`ThresholdMeasures`.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) or (B, 1, H, W) maps, float in [0, 1] or uint8 0..255 (min-max normalised per image
      unless ``normalize=False``), or a list of (H, W) maps of any sizes.
    - ``target``: ground truth of the same shape (or a list), bool / {0, 1} / uint8 (binarised ``> 128``).

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a 0-d float64 tensor: the mean over images of the per-image context measure.

    Example:
        >>> import torch
        >>> metric = ContextMeasure()
        >>> target = torch.zeros(2, 32, 32, dtype=torch.uint8); target[:, 8:24, 8:24] = 255
        >>> metric.update(target.clone(), target)
        >>> round(float(metric.compute()), 4)
        0.6713
    """

    def __init__(self, beta2: float = 1.0, alpha: float = 6.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.beta2 = check_positive_float(beta2, "beta2")
        self.alpha = check_positive_float(alpha, "alpha")
        self.add_state("cm_sum", torch.zeros((), dtype=_F64), dist_reduce_fx="sum")

    def update(self, preds: ImageBatch, target: ImageBatch) -> None:
        """Add a batch: ``preds``/``target`` (B, H, W) or (B, 1, H, W) tensors, or lists of (H, W) tensors."""
        values = context_measure(
            preds,
            target,
            beta2=self.beta2,
            alpha=self.alpha,
            normalize=self.normalize,
            validate_args=self.validate_args,
        )
        self._add("cm_sum", values.sum())
        self.last_image_values = values
        self.count += values.shape[0]

    def compute(self) -> Tensor:
        return self._mean("cm_sum")


class CamouflageContextMeasure(_SumMetric):
    r"""Camouflage context measure over a dataset, PySODMetrics 1.6.2 ``CamouflageContextMeasure`` (``ccm``).
    A float map is min-max stretched per image as PySODMetrics does (``normalize=True``, the default); pass
    ``normalize=False`` to score probabilities as they are, e.g. in a training loop, so that the logged value agrees
    with a loss computed on the same tensor.

    ``update(preds, target, images)``: the RGB images (uint8, (B, H, W, 3) or a list of (H, W, 3)) are required;
    without them, or with a size other than the maps', ``update`` raises ``ValueError``. Per image the value of
    :func:`segmetrics_torch.functional.camouflage_context_measure` (context measure whose reverse term is weighted by
    the camouflage degree of the foreground); CPU only (OpenCV, scikit-learn, scikit-image as PySOD).

    Args:
        beta2 (1.2), alpha (6.0), gamma (8), lambda_spatial (20): PySOD's parameters. normalize, validate_args: as
            :class:`ThresholdMeasures`.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) or (B, 1, H, W) maps, float in [0, 1] or uint8 0..255 (min-max normalised per image
      unless ``normalize=False``), or a list of (H, W) maps of any sizes.
    - ``target``: ground truth of the same shape (or a list), bool / {0, 1} / uint8 (binarised ``> 128``).
    - ``images``: the RGB images, uint8 (B, H, W, 3) or a list of (H, W, 3), the maps' sizes.

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a 0-d float64 tensor: the mean over images of the per-image camouflage context measure.

    Example:
        >>> import torch
        >>> from segmetrics_torch import CamouflageContextMeasure
        >>> g = torch.Generator().manual_seed(0)
        >>> images = torch.randint(0, 256, (1, 48, 48, 3), dtype=torch.uint8, generator=g)
        >>> target = torch.zeros(1, 48, 48, dtype=torch.bool)
        >>> target[:, 16:32, 16:32] = True
        >>> metric = CamouflageContextMeasure()
        >>> metric.update(target.to(torch.uint8) * 255, target, images)
        >>> round(float(metric.compute()), 4)
        0.6781
    """

    def __init__(
        self, beta2: float = 1.2, alpha: float = 6.0, gamma: float = 8.0, lambda_spatial: float = 20.0, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.beta2 = check_positive_float(beta2, "beta2")
        self.alpha = check_positive_float(alpha, "alpha")
        self.gamma = check_positive_float(gamma, "gamma")
        self.lambda_spatial = check_positive_float(lambda_spatial, "lambda_spatial")
        self.add_state("ccm_sum", torch.zeros((), dtype=_F64), dist_reduce_fx="sum")

    def update(self, preds: ImageBatch, target: ImageBatch, images: ImageBatch | None = None) -> None:
        """Add a batch of maps, ground truths and their RGB images (required)."""
        values = camouflage_context_measure(
            preds,
            target,
            images,
            beta2=self.beta2,
            alpha=self.alpha,
            gamma=self.gamma,
            lambda_spatial=self.lambda_spatial,
            normalize=self.normalize,
            validate_args=self.validate_args,
        )
        self._add("ccm_sum", values.sum())
        self.count += values.shape[0]

    def compute(self) -> Tensor:
        return self._mean("ccm_sum")
