"""torchmetrics Metrics of the boundary-distance measures: dataset means of the per-image (per-class) values of
:mod:`segmetrics_torch.functional.surface`.

Reduction (MONAI's ``do_metric_reduction("mean")`` over the images, per class): NaN values (both masks empty under
most conventions) are left out of the mean; a value of ``inf`` (a missed structure: one mask empty) makes the class's
mean ``inf``, so that a missed structure cannot vanish from a table: a distance of a pair with exactly one empty mask
counts as ``inf`` whatever its convention's value (MONAI's percentile HD is NaN there, and MONAI's own mean drops
it, see the docs page). The class equal to ``ignore_index`` is no pair: NaN in every function, counted in no update,
so its ``compute()`` value is NaN (as TorchMetrics'), never ``inf``. The states are per-class sums of the finite
values and counts of the non-NaN and of the infinite values, summed over processes (``dist_reduce_fx="sum"``): the
DDP result equals one process's.

``compute()`` returns a 0-d tensor for binary masks and a (C',) tensor, one value per class, for label maps
(``num_classes``); :class:`SurfaceDistanceMeasures` returns a dict of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Unpack

import torch
from torch import Tensor

from .._checks import check_choice
from ..functional.surface import (
    average_surface_distance,
    boundary_iou,
    cl_dice,
    hausdorff_distance,
    normalized_surface_distance,
    surface_distance_measures,
)
from ..functional.surface._inputs import INPUT_FORMATS, channel_columns, one_hot_inputs
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

    #: the defaults of the shared keywords the function takes (:mod:`segmetrics_torch.functional.surface.options`)
    _shared: Mapping[str, Any] = DISTANCE_DEFAULTS

    def __init__(self, measure_options: Mapping[str, Any], kwargs: Mapping[str, Any], /) -> None:
        """``measure_options``: the function's own arguments, by name; ``kwargs``: the subclass's keywords, the
        shared ones (:mod:`segmetrics_torch.functional.surface.options`) and torchmetrics'. The arguments are
        checked here, by one call of the function on a tiny pair, not at the first update."""
        accepted = {**self._shared, **dict.fromkeys(_TORCHMETRICS_KEYWORDS)}
        chosen = with_defaults(type(self).__name__, kwargs, accepted, measure_options)
        options = {key: chosen[key] for key in self._shared}
        super().__init__(**{key: value for key, value in kwargs.items() if key not in self._shared})
        self._keyword_settings = tuple(self._shared)
        num_classes, input_format = options["num_classes"], options["input_format"]
        include_background = options["include_background"]
        if num_classes is not None and (
            isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 1
        ):
            raise ValueError(f"Expected `num_classes` to be a positive int or None, but got {num_classes!r}.")
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
        # per-class tolerances are checked against the classes at the first update
        self._probed = (
            None if isinstance(measure_options.get("tolerance"), (list, tuple)) else self._call(_PROBE, _PROBE)
        )

    def _class_options(self) -> dict[str, Any]:
        return {key: getattr(self, key) for key in MASK_DEFAULTS}

    #: the values of the latest ``update`` ({measure: (B,) or (B, C')}), for per-image reports: not a state (not
    #: synchronised, not reset)
    last_values: dict[str, Tensor] | None = None

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
        values = self._values(preds, target, self.spacing if spacing is None else spacing)
        self.last_values = values
        missed = None
        for key, value in values.items():
            v = value.detach().to(torch.float64)
            v = v.reshape(v.shape[0], -1)
            distance = key in _DISTANCES or (key == "value" and self.higher_is_better is False)
            if distance and bool(torch.isnan(v).any()):
                # a distance of a pair with exactly one empty mask (a missed or a hallucinated structure) counts as
                # inf in the mean, whatever its convention's own value (MONAI's percentile HD gives NaN there)
                missed = (
                    _one_empty(
                        preds, target, self.num_classes, self.include_background, self.ignore_index, self.input_format
                    ).to(v.device)
                    if missed is None
                    else missed
                )
                v = torch.where(missed & torch.isnan(v), torch.full_like(v, float("inf")), v)
            state_sum = getattr(self, f"{key}_sum")
            finite = torch.isfinite(v)
            setattr(self, f"{key}_sum", state_sum + torch.where(finite, v, 0.0).sum(dim=0).to(state_sum.device))
            counted = (~torch.isnan(v)).sum(dim=0).to(state_sum.device)
            setattr(self, f"{key}_count", getattr(self, f"{key}_count") + counted)
            setattr(self, f"{key}_inf", getattr(self, f"{key}_inf") + torch.isinf(v).sum(dim=0).to(state_sum.device))

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

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) or (B, D, H, W) masks (bool or {0, 1}), or label maps (integers in [0, ``num_classes``))
      with ``num_classes``; or a list of (H, W) / (D, H, W) tensors of different sizes.
    - ``target``: ground truth of the same form and shape.
    - ``spacing`` (keyword, optional): this batch's voxel spacing, in place of the constructor's.

    As output of ``compute``: the mean over images of the per-image (percentile) Hausdorff distance, a 0-d float64
    tensor for masks or (C',) per class for label maps (NaN left out; a missed structure makes it ``inf``).

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
        self, *, directed: bool = False, percentile: float | None = None, **kwargs: Unpack[DistanceMetricOptions]
    ) -> None:
        super().__init__({"directed": directed, "percentile": percentile}, kwargs)


class AverageSurfaceDistance(_SurfaceMetric):
    """Mean (directed) average surface distance, or ASSD with ``symmetric=True``, over images.

    Args: ``symmetric`` of :func:`segmetrics_torch.functional.average_surface_distance`, and
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

    As output of ``compute``: the mean over images of the per-image (symmetric) average surface distance, a 0-d
    float64 tensor for masks or (C',) per class for label maps (NaN left out; a missed structure makes it ``inf``).

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

    def __init__(self, *, symmetric: bool = False, **kwargs: Unpack[DistanceMetricOptions]) -> None:
        super().__init__({"symmetric": symmetric}, kwargs)


class NormalizedSurfaceDistance(_SurfaceMetric):
    """Mean normalised surface distance (surface Dice at ``tolerance``, in spacing units; 1 by default, as
    :class:`SurfaceDistanceMeasures`) over images.

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
        tolerance: float | list[float] = 1.0,
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

    Args: ``percentile`` (95) and ``tolerance`` (1) of the percentile Hausdorff distance and the NSD, and
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

    As output of ``compute``: ``{measure: mean}`` for the measures the convention defines (``hausdorff``,
    ``hausdorff_percentile``, ``asd``, ``assd``, ``nsd``), each a 0-d float64 tensor for masks or (C',) per class.

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
        tolerance: float | list[float] = 1.0,
        **kwargs: Unpack[DistanceMetricOptions],
    ) -> None:
        super().__init__({"percentile": percentile, "tolerance": tolerance}, kwargs)
        self.measures: tuple[str, ...] = self._keys if self._probed is None else tuple(self._probed)

    def compute(self) -> dict[str, Tensor]:
        return {key: self._mean(key) for key in self._keys if key in self.measures}


#: torchmetrics' Metric keywords, passed on to it
_TORCHMETRICS_KEYWORDS = tuple(MetricKeywords.__optional_keys__)

#: the measures that are distances (a missed structure: inf); NSD and Boundary IoU are scores (0 there)
_DISTANCES = frozenset({"hausdorff", "hausdorff_percentile", "asd", "assd"})


def _one_empty(
    preds: Any,
    target: Any,
    num_classes: int | None,
    include_background: bool,
    ignore_index: int | None,
    input_format: str = "index",
) -> Tensor:
    """(B, C') bool: the (image, class) pairs where exactly one of the two masks is empty (the classes as the
    functions take them; ``ignore_index`` pixels removed from both; False for the class ``ignore_index`` itself,
    which the functions do not score)."""
    if input_format != "index":
        p_ch, t_ch = one_hot_inputs(preds, target, input_format, num_classes, validate_args=False)
        columns = channel_columns(p_ch.shape[1], include_background)
        return p_ch[:, columns].flatten(2).any(2) != t_ch[:, columns].flatten(2).any(2)
    pairs = list(zip(preds, target, strict=True))
    rows = []
    for p, g in pairs:
        p, g = torch.as_tensor(p), torch.as_tensor(g)
        if num_classes is None:
            rows.append(torch.stack([p.bool().any() != g.bool().any()]))
            continue
        keep = (g != ignore_index) if ignore_index is not None else torch.ones_like(g, dtype=torch.bool)
        classes = range(0 if include_background else 1, num_classes)
        # the ignored class is no pair at all (NaN, left out of the means), not a structure the prediction missed:
        # its target pixels are removed while predictions of that label may remain
        no_pair = torch.zeros((), dtype=torch.bool, device=p.device)
        differ = [no_pair if c == ignore_index else ((p == c) & keep).any() != ((g == c) & keep).any() for c in classes]
        rows.append(torch.stack(differ))
    return torch.stack(rows)


#: a tiny 2-D pair on which the constructors run their function once, so that bad arguments fail at construction
#: (``spacing`` and per-class tolerances are checked at the first update: they depend on the images)
_PROBE = torch.zeros(1, 4, 4, dtype=torch.bool)
_PROBE[0, 1:3, 1:3] = True
