"""torchmetrics Metrics of the boundary-distance measures: dataset means of the per-image (per-class) values of
:mod:`segmetrics_torch.functional.surface`.

Reduction: the mean over the images, per class, of the non-NaN values (MONAI's ``do_metric_reduction``), with a
named rule for a missed structure (one mask empty) in the distance Metrics, ``aggregation=``
(:mod:`segmetrics_torch.functional.surface.aggregation`): ``"inf"`` (the default: a distance of a pair with exactly
one empty mask counts as ``inf`` whatever its convention's value, so that a missed structure cannot vanish from a
table; MONAI's percentile HD is NaN there), ``"drop_nan"`` (MONAI's mean: the convention's values, NaN left out, inf
kept) or ``"worst_case"`` (BraTS: a missed structure counts as ``worst_case``). The scores (NSD, Boundary IoU,
clDice) are 0 for a missed structure and leave out NaN. :meth:`~_SurfaceMetric.dropped` counts the values each mean
left out. The class equal to ``ignore_index`` is no pair: NaN in every function, counted in no mean, so its
``compute()`` value is NaN (as TorchMetrics'), never ``inf``. The states are per-class sums of the finite values and
counts of the non-NaN, the infinite and the dropped values, summed over processes (``dist_reduce_fx="sum"``): the DDP
result equals one process's.

``compute()`` returns a 0-d tensor for binary masks and a (C',) tensor, one value per class, for label maps
(``num_classes``); :class:`SurfaceDistanceMeasures` returns a dict of them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any, Unpack

import torch
from torch import Tensor

from .._checks import check_choice, check_num_classes
from ..functional.surface import (
    EmptyMaskWarning,
    average_surface_distance,
    boundary_iou,
    cl_dice,
    hausdorff_distance,
    normalized_surface_distance,
    surface_distance_measures,
)
from ..functional.surface._inputs import INPUT_FORMATS, channel_columns
from ..functional.surface.aggregation import (
    Aggregation,
    aggregated_values,
    check_aggregation,
    unchecked_empty_sides,
)
from ..functional.surface.cldice import ZeroDivision
from ..functional.surface.options import (
    DISTANCE_DEFAULTS,
    MASK_DEFAULTS,
    DistanceOptions,
    MaskOptions,
    with_defaults,
)
from ._base import ExactMetric, MetricKeywords

__all__ = [
    "AverageSurfaceDistance",
    "BoundaryIoU",
    "ClDice",
    "HausdorffDistance",
    "NormalizedSurfaceDistance",
    "SurfaceDistanceMeasures",
]


class DistanceMetricOptions(DistanceOptions, MetricKeywords, total=False):
    """The keywords of the distance Metrics: the functions' shared ones and torchmetrics'."""


class MaskMetricOptions(MaskOptions, MetricKeywords, total=False):
    """The keywords of :class:`BoundaryIoU`: how the inputs are read, and torchmetrics'."""


class _SurfaceMetric(ExactMetric):
    """Per-class means over images of the values of ``self._values`` (see the module doc for the reduction)."""

    is_differentiable = False
    full_state_update = False
    #: the keys of the measures accumulated (one for the single-measure Metrics)
    _keys: tuple[str, ...] = ("value",)
    #: the voxel spacing of the constructor (None: unit), used when ``update`` gives none
    spacing: Any = None
    #: whether a batch since construction or ``reset()`` had empty pairs (named then, counted silently after)
    _empty_said = False
    #: inside ``forward``, whose own ``reset()`` keeps ``_empty_said``
    _in_forward = False

    #: the defaults of the shared keywords the function takes (:mod:`segmetrics_torch.functional.surface.options`)
    _shared: Mapping[str, Any] = DISTANCE_DEFAULTS

    #: how the means treat a missed structure (the distance Metrics' ``aggregation``; the scores leave out NaN)
    aggregation: str = "inf"
    #: the value of a missed structure with ``aggregation="worst_case"``
    worst_case: float | None = None

    def __init__(
        self,
        measure_options: Mapping[str, Any],
        kwargs: Mapping[str, Any],
        aggregation: object = "inf",
        worst_case: object = None,
        /,
    ) -> None:
        """``measure_options``: the function's own arguments, by name; ``kwargs``: the subclass's keywords, the
        shared ones (:mod:`segmetrics_torch.functional.surface.options`) and torchmetrics'; ``aggregation`` and
        ``worst_case``: the distance Metrics' rule for missed structures. The arguments are checked here, by one
        call of the function on a tiny pair, not at the first update."""
        self.aggregation, self.worst_case = check_aggregation(aggregation, worst_case)
        accepted = {**self._shared, **dict.fromkeys(_TORCHMETRICS_KEYWORDS)}
        chosen = with_defaults(type(self).__name__, kwargs, accepted, measure_options)
        options = {key: chosen[key] for key in self._shared}
        super().__init__(**{key: value for key, value in kwargs.items() if key not in self._shared})
        self._keyword_settings = tuple(self._shared)
        num_classes, input_format = options["num_classes"], options["input_format"]
        include_background = options["include_background"]
        if num_classes is not None:
            check_num_classes(num_classes, 1, " or None")
        self.input_format = check_choice(input_format, "input_format", INPUT_FORMATS)
        if input_format == "index" and num_classes == 1:
            raise ValueError(
                "Expected `num_classes` to be an integer >= 2 (or None for binary masks) for label maps, got 1."
            )
        if input_format != "index" and num_classes is None:
            raise ValueError(
                f"Expected `num_classes` (the number of channels) with input_format={input_format!r}: the Metric's "
                "per-class states are made at construction."
            )
        if not isinstance(include_background, bool):
            raise TypeError(f"Expected argument `include_background` to be a bool, but got {include_background!r}.")
        if not isinstance(options["validate_args"], bool):
            raise TypeError(f"Expected argument `validate_args` to be a bool, but got {options['validate_args']!r}.")
        self.num_classes: int | None = num_classes
        self.include_background: bool = include_background
        self.ignore_index: int | None = options["ignore_index"]
        self.validate_args: bool = options["validate_args"]
        self.spacing = options.pop("spacing", None)
        # the measure's options, held as attributes of the same names (what merge_state compares)
        self._options = (*measure_options, *(key for key in options if key not in MASK_DEFAULTS))
        for name in self._options:
            setattr(self, name, measure_options[name] if name in measure_options else options[name])
        # the classes of a label map (as the functions: class 0 only with include_background), or one for a mask
        if num_classes is None:
            self.num_columns = 1
        elif input_format != "index":  # channels: TorchMetrics keeps a single channel even without the background
            self.num_columns = len(channel_columns(num_classes, include_background))
        else:
            self.num_columns = len(range(0 if include_background else 1, num_classes))
        for key in self._keys:
            self.add_state(f"{key}_sum", torch.zeros(self.num_columns, dtype=torch.float64), dist_reduce_fx="sum")
            self.add_state(f"{key}_count", torch.zeros(self.num_columns, dtype=torch.int64), dist_reduce_fx="sum")
            self.add_state(f"{key}_inf", torch.zeros(self.num_columns, dtype=torch.int64), dist_reduce_fx="sum")
            self.add_state(f"{key}_dropped", torch.zeros(self.num_columns, dtype=torch.int64), dist_reduce_fx="sum")
        # per-class tolerances are checked against the classes at the first update
        self._probed = (
            None if isinstance(measure_options.get("tolerance"), (list, tuple)) else self._call(_PROBE, _PROBE)
        )

    def _class_options(self) -> dict[str, Any]:
        return {key: getattr(self, key) for key in MASK_DEFAULTS}

    #: the values of the latest ``update`` ({measure: (B,) or (B, C')}), for per-image reports: not a state (not
    #: synchronised, not reset)
    last_values: dict[str, Tensor] | None = None

    #: the empty (image, class) pairs of the latest ``update``, each an :class:`EmptyMaskWarning` naming the pair,
    #: the measure and its value, whether or not it was warned of (a caller that names every pair its own way, as the
    #: command names each file, reads them here: the warnings stop after the first such batch)
    last_empty: tuple[EmptyMaskWarning, ...] = ()

    #: the function of :mod:`segmetrics_torch.functional.surface` the Metric averages
    _function: Callable[..., Any]

    def _call(self, preds: Any, target: Any, spacing: Any = None) -> Any:
        """The function on a batch; on :data:`_PROBE` (the constructors' check of their arguments, on a tiny pair)
        without the class options and the spacing, whose validity depends on the images."""
        probe = preds is _PROBE
        options = {name: getattr(self, name) for name in self._options}
        if not probe:
            options.update(self._class_options())
        if "spacing" in self._shared:
            options["spacing"] = None if probe else spacing
        return type(self)._function(preds, target, **options)

    def _values(self, preds: Any, target: Any, spacing: Any) -> dict[str, Tensor]:
        value = self._call(preds, target, spacing)
        return value if isinstance(value, dict) else {"value": value}

    def update(self, preds: Any, target: Any, *, spacing: Any = None) -> None:
        """Add a batch: (B, H, W) / (B, D, H, W) masks or label maps, or lists of them (as the functions).

        ``spacing``: this batch's voxel spacing (e.g. from a NIfTI header), in place of the constructor's.
        """
        if spacing is not None and "spacing" not in self._shared:
            raise TypeError(f"{type(self).__name__}.update() takes no `spacing`: its measure counts pixels.")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            values = self._values(preds, target, self.spacing if spacing is None else spacing)
        self._pass_on(caught)
        self.last_values = values
        self.last_empty = tuple(r.message for r in caught if isinstance(r.message, EmptyMaskWarning))
        empties: tuple[Tensor, Tensor] | None = None
        for key, value in values.items():
            v = value.detach().to(torch.float64)
            v = v.reshape(v.shape[0], -1)
            distance = key in _DISTANCES or (key == "value" and self.higher_is_better is False)
            if distance and self.aggregation != "drop_nan" and not bool(torch.isfinite(v).all()):
                # a pair with an empty mask counts by the rule of `aggregation` (functional.surface.aggregation)
                if empties is None:
                    empties = unchecked_empty_sides(preds, target, self._class_options())  # checked by _values
                v = aggregated_values(v, empties[0], empties[1], self.aggregation, self.worst_case)
            state_sum = getattr(self, f"{key}_sum")
            finite = torch.isfinite(v)
            setattr(self, f"{key}_sum", state_sum + torch.where(finite, v, 0.0).sum(dim=0).to(state_sum.device))
            nan = torch.isnan(v)
            counted = (~nan).sum(dim=0).to(state_sum.device)
            setattr(self, f"{key}_count", getattr(self, f"{key}_count") + counted)
            setattr(self, f"{key}_inf", getattr(self, f"{key}_inf") + torch.isinf(v).sum(dim=0).to(state_sum.device))
            dropped = getattr(self, f"{key}_dropped")
            setattr(self, f"{key}_dropped", dropped + nan.sum(dim=0).to(dropped.device))

    def _pass_on(self, caught: list[warnings.WarningMessage]) -> None:
        """The functions warn once per empty (image, class) pair, naming it. A Metric updated every training step
        would repeat that for every image of every batch (Python folds no warning that names an image), so the first
        batch that has such pairs passes them on, with one more line saying that later ones are counted silently
        until ``reset()``; any other warning is passed on as it came (from this module, as before)."""
        said = False
        for record in caught:
            if issubclass(record.category, EmptyMaskWarning):
                if self._empty_said:
                    continue
                said = True
            warnings.warn(record.message, record.category, stacklevel=2)  # from update(), as before
        if said:
            self._empty_said = True
            name = type(self).__name__
            warnings.warn(
                EmptyMaskWarning(
                    f"{name}: further empty (image, class) pairs are counted without a warning until reset()",
                    measure=name,
                ),
                stacklevel=2,
            )

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """torchmetrics' ``forward`` (the batch's value, accumulated as ``update`` does); the ``reset()`` it runs
        inside does not make the empty pairs named again."""
        self._in_forward = True
        try:
            return super().forward(*args, **kwargs)
        finally:
            self._in_forward = False

    def reset(self) -> None:
        """torchmetrics' ``reset``; empty pairs are named again (their first batch) after it."""
        super().reset()
        if not self._in_forward:
            self._empty_said = False

    def dropped(self) -> Any:
        """The number of values each mean left out (NaN after the ``aggregation`` rule: both masks empty, MONAI's
        NaN with ``"drop_nan"``, the ``ignore_index`` class), as ``compute()`` is shaped: a 0-d / (C',) int64
        tensor, a dict of them for :class:`SurfaceDistanceMeasures`."""
        # synchronised over processes as compute() is (DDP: every rank's counts)
        with self.sync_context(
            dist_sync_fn=self.dist_sync_fn, should_sync=self._to_sync, should_unsync=self._should_unsync
        ):
            counts = {key: getattr(self, f"{key}_dropped").clone() for key in self._keys}
        shaped = {key: (c[0] if self.num_classes is None else c) for key, c in counts.items()}
        if len(self._keys) == 1:
            return shaped[self._keys[0]]
        return {key: shaped[key] for key in self._computed_keys()}

    def _computed_keys(self) -> tuple[str, ...]:
        return self._keys

    def _mean(self, key: str) -> Tensor:  # per-class means of the non-NaN values (the module doc), not the base's
        total, count, inf = (getattr(self, f"{key}_{part}") for part in ("sum", "count", "inf"))
        mean = torch.where(count > 0, total / count.clamp_min(1), torch.full_like(total, float("nan")))
        mean = torch.where(inf > 0, torch.full_like(mean, float("inf")), mean)
        return mean[0] if self.num_classes is None else mean

    def compute(self) -> Any:
        return self._mean(self._keys[0])


class HausdorffDistance(_SurfaceMetric):
    """Mean Hausdorff distance (or percentile Hausdorff, e.g. HD95) over images, per class for label maps.

    Args: ``directed`` and ``percentile`` of :func:`segmetrics_torch.functional.hausdorff_distance`, and
    the keywords every distance function shares (``**kwargs``, typed as ``DistanceMetricOptions``:
    :class:`~segmetrics_torch.functional.surface.options.DistanceOptions` and torchmetrics'; meanings and
    defaults at :func:`~segmetrics_torch.functional.hausdorff_distance`): ``convention``, ``spacing`` (the
    constructor's voxel spacing, used when ``update`` gives none), ``distance_metric``, ``connectivity``,
    ``num_classes``, ``include_background``, ``ignore_index``, ``input_format``, ``validate_args``; plus
    torchmetrics' Metric keywords (``compute_on_cpu``, ``dist_sync_on_step``, ``process_group``, ...).

    ``aggregation`` (``"inf"``, the default; ``"drop_nan"``, MONAI's mean; ``"worst_case"``, BraTS' fixed value
    ``worst_case``, required there): what a missed structure does to the mean
    (:mod:`segmetrics_torch.functional.surface.aggregation`); :meth:`dropped` counts the values left out.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) or (B, D, H, W) masks (bool or {0, 1}), or label maps (integers in [0, ``num_classes``))
      with ``num_classes``; or a list of (H, W) / (D, H, W) tensors of different sizes.
    - ``target``: ground truth of the same form and shape.
    - ``spacing`` (keyword, optional): this batch's voxel spacing, in place of the constructor's.

    As output of ``compute``: the mean over images of the per-image (percentile) Hausdorff distance, a 0-d float64
    tensor for masks or (C',) per class for label maps (NaN left out; with the default ``aggregation`` a missed
    structure makes it ``inf``).

    Example:
        >>> import torch
        >>> from segmetrics_torch.metrics.surface import HausdorffDistance
        >>> g = torch.zeros(2, 20, 20, dtype=torch.bool); g[:, 5:11, 5:11] = True
        >>> p = torch.zeros(2, 20, 20, dtype=torch.bool); p[:, 7:13, 6:13] = True
        >>> metric = HausdorffDistance(percentile=95)
        >>> metric.update(p, g)
        >>> round(float(metric.compute()), 4)
        2.2361
    """

    higher_is_better = False
    _function = staticmethod(hausdorff_distance)

    def __init__(
        self,
        *,
        directed: bool = False,
        percentile: float | None = None,
        aggregation: Aggregation = "inf",
        worst_case: float | None = None,
        **kwargs: Unpack[DistanceMetricOptions],
    ) -> None:
        super().__init__({"directed": directed, "percentile": percentile}, kwargs, aggregation, worst_case)


class AverageSurfaceDistance(_SurfaceMetric):
    """Mean (directed) average surface distance, or ASSD with ``symmetric=True``, over images.

    Args: ``symmetric`` of :func:`segmetrics_torch.functional.average_surface_distance`, and
    the keywords every distance function shares (``**kwargs``, typed as ``DistanceMetricOptions``:
    :class:`~segmetrics_torch.functional.surface.options.DistanceOptions` and torchmetrics'; meanings and
    defaults at :func:`~segmetrics_torch.functional.hausdorff_distance`): ``convention``, ``spacing`` (the
    constructor's voxel spacing, used when ``update`` gives none), ``distance_metric``, ``connectivity``,
    ``num_classes``, ``include_background``, ``ignore_index``, ``input_format``, ``validate_args``; plus
    torchmetrics' Metric keywords (``compute_on_cpu``, ``dist_sync_on_step``, ``process_group``, ...).

    ``aggregation`` (``"inf"``, the default; ``"drop_nan"``, MONAI's mean; ``"worst_case"``, BraTS' fixed value
    ``worst_case``, required there): what a missed structure does to the mean
    (:mod:`segmetrics_torch.functional.surface.aggregation`); :meth:`dropped` counts the values left out.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) or (B, D, H, W) masks (bool or {0, 1}), or label maps (integers in [0, ``num_classes``))
      with ``num_classes``; or a list of (H, W) / (D, H, W) tensors of different sizes.
    - ``target``: ground truth of the same form and shape.
    - ``spacing`` (keyword, optional): this batch's voxel spacing, in place of the constructor's.

    As output of ``compute``: the mean over images of the per-image (symmetric) average surface distance, a 0-d
    float64 tensor for masks or (C',) per class for label maps (NaN left out; with the default ``aggregation`` a
    missed structure makes it ``inf``).

    Example:
        >>> import torch
        >>> g = torch.zeros(1, 20, 20, dtype=torch.bool); g[:, 5:11, 5:11] = True
        >>> p = torch.zeros(1, 20, 20, dtype=torch.bool); p[:, 7:13, 6:13] = True
        >>> from segmetrics_torch.metrics.surface import AverageSurfaceDistance
        >>> metric = AverageSurfaceDistance(symmetric=True)
        >>> metric.update(p, g)
        >>> round(float(metric.compute()), 4)
        1.5226
    """

    higher_is_better = False
    _function = staticmethod(average_surface_distance)

    def __init__(
        self,
        *,
        symmetric: bool = False,
        aggregation: Aggregation = "inf",
        worst_case: float | None = None,
        **kwargs: Unpack[DistanceMetricOptions],
    ) -> None:
        super().__init__({"symmetric": symmetric}, kwargs, aggregation, worst_case)


class NormalizedSurfaceDistance(_SurfaceMetric):
    """Mean normalised surface distance (surface Dice at ``tolerance``) over images.

    ``tolerance`` is required, as in the function: a length in spacing units (mm with a spacing in mm) that depends
    on the structure and the dataset, with no sensible default (a missing one is Python's ``TypeError`` naming it).
    A missed structure scores 0, which needs no ``aggregation`` rule; NaN (both masks empty) is left out.

    Args: ``tolerance`` and ``use_subvoxels`` (:func:`segmetrics_torch.functional.normalized_surface_distance`), and
    the keywords every distance function shares (``**kwargs``, typed as ``DistanceMetricOptions``:
    :class:`~segmetrics_torch.functional.surface.options.DistanceOptions` and torchmetrics'; meanings and
    defaults at :func:`~segmetrics_torch.functional.hausdorff_distance`): ``convention``, ``spacing`` (the
    constructor's voxel spacing, used when ``update`` gives none), ``distance_metric``, ``connectivity``,
    ``num_classes``, ``include_background``, ``ignore_index``, ``input_format``, ``validate_args``; plus
    torchmetrics' Metric keywords (``compute_on_cpu``, ``dist_sync_on_step``, ``process_group``, ...).

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) or (B, D, H, W) masks (bool or {0, 1}), or label maps (integers in [0, ``num_classes``))
      with ``num_classes``; or a list of (H, W) / (D, H, W) tensors of different sizes.
    - ``target``: ground truth of the same form and shape.
    - ``spacing`` (keyword, optional): this batch's voxel spacing, in place of the constructor's.

    As output of ``compute``: the mean over images of the per-image NSD in [0, 1], a 0-d float64 tensor for masks or
    (C',) per class for label maps (NaN, both masks empty, left out).

    Example:
        >>> import torch
        >>> g = torch.zeros(1, 20, 20, dtype=torch.bool); g[:, 5:11, 5:11] = True
        >>> p = torch.zeros(1, 20, 20, dtype=torch.bool); p[:, 7:13, 6:13] = True
        >>> from segmetrics_torch.metrics.surface import NormalizedSurfaceDistance
        >>> metric = NormalizedSurfaceDistance(tolerance=1.0)
        >>> metric.update(p, g)
        >>> round(float(metric.compute()), 4)
        0.4048
    """

    higher_is_better = True
    _function = staticmethod(normalized_surface_distance)

    def __init__(
        self,
        *,
        tolerance: float | list[float],
        use_subvoxels: bool = False,
        **kwargs: Unpack[DistanceMetricOptions],
    ) -> None:
        super().__init__({"tolerance": tolerance, "use_subvoxels": use_subvoxels}, kwargs)


class BoundaryIoU(_SurfaceMetric):
    """Mean Boundary IoU (Cheng et al., CVPR 2021) over 2-D images.

    Args: ``dilation_ratio`` of :func:`segmetrics_torch.functional.boundary_iou`, and the keywords of the inputs
    (``num_classes``, ``include_background``, ``ignore_index``, ``input_format``, ``validate_args``; as
    :func:`~segmetrics_torch.functional.hausdorff_distance`) and torchmetrics' Metric keywords.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) masks (bool or {0, 1}), or label maps (integers in [0, ``num_classes``)) with
      ``num_classes``; or a list of (H, W) tensors of different sizes (2-D only: the band is in pixels, no spacing).
    - ``target``: ground truth of the same form and shape.

    As output of ``compute``: the mean over images of the per-image Boundary IoU in [0, 1], a 0-d float64 tensor for
    masks or (C',) per class for label maps (2-D only).

    Example:
        >>> import torch
        >>> g = torch.zeros(1, 20, 20, dtype=torch.bool); g[:, 5:11, 5:11] = True
        >>> p = torch.zeros(1, 20, 20, dtype=torch.bool); p[:, 7:13, 6:13] = True
        >>> from segmetrics_torch.metrics.surface import BoundaryIoU
        >>> metric = BoundaryIoU()
        >>> metric.update(p, g)
        >>> round(float(metric.compute()), 4)
        0.05
    """

    higher_is_better = True
    _function = staticmethod(boundary_iou)
    _shared = MASK_DEFAULTS

    def __init__(self, *, dilation_ratio: float = 0.02, **kwargs: Unpack[MaskMetricOptions]) -> None:
        super().__init__({"dilation_ratio": dilation_ratio}, kwargs)


class ClDice(_SurfaceMetric):
    """Mean clDice (centreline Dice; Shit et al., CVPR 2021) over 2-D images or 3-D volumes, per class for label maps.

    The per-image value is :func:`segmetrics_torch.functional.cl_dice`'s: the harmonic mean of the fraction of the
    predicted skeleton inside the ground truth and of the ground-truth skeleton inside the prediction (skeletons of
    scikit-image, as the authors' code; the ``opencv`` extra). NaN values (``zero_division="nan"``: the authors'
    0/0; an ``ignore_index`` class) are left out of the mean, as the family's other Metrics do.

    Args: ``zero_division`` of :func:`~segmetrics_torch.functional.cl_dice` (``"defined"``: empty masks and
    empty skeletons get the values of its table; ``"nan"``: the authors' NaN), the keywords of the inputs
    (``num_classes``, ``include_background``, ``ignore_index``, ``input_format``, ``validate_args``; as
    :func:`~segmetrics_torch.functional.hausdorff_distance`) and torchmetrics' Metric keywords.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) 2-D or (B, D, H, W) 3-D masks (bool or {0, 1}), or label maps (integers in
      [0, ``num_classes``)) with ``num_classes``; or a list of tensors of different sizes.
    - ``target``: ground truth of the same form and shape.

    As output of ``compute``: the mean over images of the per-image clDice in [0, 1], a 0-d float64 tensor for masks
    or (C',) per class for label maps.

    Example:
        >>> import torch
        >>> from segmetrics_torch import ClDice
        >>> g = torch.zeros(1, 9, 9, dtype=torch.bool)
        >>> g[0, 4, 1:8] = True  # a vessel one pixel wide
        >>> p = torch.zeros_like(g)
        >>> p[0, 4, 1:5] = True  # half of it found
        >>> metric = ClDice()
        >>> metric.update(p, g)
        >>> round(float(metric.compute()), 4)
        0.7273
    """

    higher_is_better = True
    _function = staticmethod(cl_dice)
    _shared = MASK_DEFAULTS

    def __init__(self, *, zero_division: ZeroDivision = "defined", **kwargs: Unpack[MaskMetricOptions]) -> None:
        super().__init__({"zero_division": zero_division}, kwargs)


class SurfaceDistanceMeasures(_SurfaceMetric):
    """Hausdorff, percentile Hausdorff, ASD, ASSD and NSD of a convention from one pass of distance transforms per
    batch (:func:`segmetrics_torch.functional.surface_distance_measures`), each averaged over images as the
    single-measure Metrics; ``compute()`` returns ``{measure: value}`` for the measures the convention defines.

    Args: ``percentile`` (95) and ``directed`` (False) of the Hausdorff distances, ``tolerance`` of the NSD (no
    default: a length in spacing units; None leaves the NSD out, see
    :func:`~segmetrics_torch.functional.surface_distance_measures`), and
    the keywords every distance function shares (``**kwargs``, typed as ``DistanceMetricOptions``:
    :class:`~segmetrics_torch.functional.surface.options.DistanceOptions` and torchmetrics'; meanings and
    defaults at :func:`~segmetrics_torch.functional.hausdorff_distance`): ``convention``, ``spacing`` (the
    constructor's voxel spacing, used when ``update`` gives none), ``distance_metric``, ``connectivity``,
    ``num_classes``, ``include_background``, ``ignore_index``, ``input_format``, ``validate_args``; plus
    torchmetrics' Metric keywords (``compute_on_cpu``, ``dist_sync_on_step``, ``process_group``, ...).

    ``aggregation`` (``"inf"``, the default; ``"drop_nan"``, MONAI's mean; ``"worst_case"``, BraTS' fixed value
    ``worst_case``, required there): what a missed structure does to the mean
    (:mod:`segmetrics_torch.functional.surface.aggregation`); :meth:`dropped` counts the values left out.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) or (B, D, H, W) masks (bool or {0, 1}), or label maps (integers in [0, ``num_classes``))
      with ``num_classes``; or a list of (H, W) / (D, H, W) tensors of different sizes.
    - ``target``: ground truth of the same form and shape.
    - ``spacing`` (keyword, optional): this batch's voxel spacing, in place of the constructor's.

    As output of ``compute``: ``{measure: mean}`` for the measures the convention defines (``hausdorff``,
    ``hausdorff_percentile``, ``asd``, ``assd``, and ``nsd`` with a ``tolerance``), each a 0-d float64 tensor for
    masks or (C',) per class.

    Example:
        >>> import torch
        >>> g = torch.zeros(1, 20, 20, dtype=torch.bool); g[:, 5:11, 5:11] = True
        >>> p = torch.zeros(1, 20, 20, dtype=torch.bool); p[:, 7:13, 6:13] = True
        >>> from segmetrics_torch.metrics.surface import SurfaceDistanceMeasures
        >>> metric = SurfaceDistanceMeasures(tolerance=1.0)
        >>> metric.update(p, g)
        >>> {k: round(float(v), 4) for k, v in metric.compute().items()}
        {'hausdorff': 2.8284, 'hausdorff_percentile': 2.2361, 'asd': 1.6046, 'assd': 1.5226, 'nsd': 0.4048}
    """

    higher_is_better = None  # mixed: distances (lower) and NSD (higher)
    _function = staticmethod(surface_distance_measures)
    _keys = ("hausdorff", "hausdorff_percentile", "asd", "assd", "nsd")

    def __init__(
        self,
        *,
        percentile: float = 95.0,
        tolerance: float | list[float] | None = None,
        directed: bool = False,
        aggregation: Aggregation = "inf",
        worst_case: float | None = None,
        **kwargs: Unpack[DistanceMetricOptions],
    ) -> None:
        super().__init__(
            {"percentile": percentile, "tolerance": tolerance, "directed": directed}, kwargs, aggregation, worst_case
        )
        measures = self._keys if self._probed is None else tuple(self._probed)
        # per-class tolerances skip the probe: the NSD is there exactly when a tolerance is (and the convention has it)
        no_nsd = tolerance is None or self.convention in ("medpy", "torchmetrics")
        self.measures: tuple[str, ...] = tuple(k for k in measures if k != "nsd" or not no_nsd)

    def _computed_keys(self) -> tuple[str, ...]:
        return tuple(key for key in self._keys if key in self.measures)

    def compute(self) -> dict[str, Tensor]:
        return {key: self._mean(key) for key in self._computed_keys()}


#: torchmetrics' Metric keywords, passed on to it
_TORCHMETRICS_KEYWORDS = tuple(MetricKeywords.__optional_keys__)

#: the measures that are distances (a missed structure: inf); NSD and Boundary IoU are scores (0 there)
_DISTANCES = frozenset({"hausdorff", "hausdorff_percentile", "asd", "assd"})


#: a tiny 2-D pair on which the constructors run their function once, so that bad arguments fail at construction
#: (``spacing`` and per-class tolerances are checked at the first update: they depend on the images)
_PROBE = torch.zeros(1, 4, 4, dtype=torch.bool)
_PROBE[0, 1:3, 1:3] = True
