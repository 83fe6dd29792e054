"""All foreground-map measures of a batch from one shared pass.

One input preparation, one 256-bin histogram per image (F-measure, E-measure, precision, recall, IoU, Dice curves and
their adaptive values), one distance transform (weighted F), one set of masked moments (S-measure).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from typing import Any

import torch
from torch import Tensor

from ..._checks import ImageBatch, check_bool, check_positive_float
from ...ops.thresholds import NUM_THRESHOLDS
from ._intermediates import (
    EdtBackend,
    EmptyQuadrant,
    ForegroundIntermediates,
    MeasureOptions,
    add_sums,
    check_edt_backend,
    e_from_counts,
    run_per_image,
)
from .matlab_toolbox import check_foreground_protocol, toolbox_foreground_values
from .overlap import f_from_counts, overlap_from_counts
from .structure_measure import check_s_options, warn_s_measure_nan

__all__ = ["FOREGROUND_KEYS", "ForegroundSums", "foreground_measures", "summarize_foreground"]

FOREGROUND_KEYS = {
    "mae": "mean absolute error (B,)",
    "s_measure": "S-measure (B,)",
    "weighted_f_measure": "weighted F-beta (B,)",
    "f_adaptive": "F-beta at the adaptive threshold (B,)",
    "f_curve": "F-beta at the 256 thresholds (B, 256)",
    "precision_curve": "precision as PySODMetrics Fmeasure (B, 256)",
    "recall_curve": "recall as PySODMetrics Fmeasure (B, 256)",
    "e_adaptive": "E-measure at the adaptive threshold (B,)",
    "e_curve": "E-measure at the 256 thresholds (B, 256)",
    "precision_adaptive": "precision at the adaptive threshold (B,)",
    "recall_adaptive": "recall at the adaptive threshold (B,)",
    "iou_adaptive": "IoU at the adaptive threshold (B,)",
    "iou_curve": "IoU at the 256 thresholds (B, 256)",
    "dice_adaptive": "Dice at the adaptive threshold (B,)",
    "dice_curve": "Dice at the 256 thresholds (B, 256)",
}


#: the defaults of the suite's measure settings, the keywords of :class:`~segmetrics_torch.ForegroundMeasures`,
#: :class:`ForegroundSums` and :func:`foreground_measures` (a test checks that their signatures agree)
SUITE_DEFAULTS: dict[str, Any] = {
    "beta2": 0.3,
    "wf_beta2": 1.0,
    "alpha": 0.5,
    "empty_quadrant": "nan",
    "edt_backend": "auto",
}


def suite_options(
    alpha: float, empty_quadrant: EmptyQuadrant, wf_beta2: float, edt_backend: EdtBackend
) -> MeasureOptions:
    """Validated options of the whole suite (S-measure and weighted F included)."""
    check_s_options(alpha, empty_quadrant)
    check_edt_backend(edt_backend)
    return MeasureOptions(
        s_measure=True,
        weighted_f=True,
        alpha=float(alpha),
        empty_quadrant=empty_quadrant,
        wf_beta2=check_positive_float(wf_beta2, "wf_beta2"),
        edt_backend=edt_backend,
    )


def derive_all(values: ForegroundIntermediates, beta2: float = 0.3) -> dict[str, Tensor]:
    """Every foreground measure per image from the shared intermediates (keys and shapes in ``FOREGROUND_KEYS``).

    ``values`` must hold the S-measure and the weighted F (the options of :func:`suite_options`).
    """
    adaptive, curve = values.adaptive, values.curve
    assert values.s_measure is not None and values.weighted_f_measure is not None
    f_curve, f_adaptive = f_from_counts(curve, beta2), f_from_counts(adaptive, beta2)
    o_curve, o_adaptive = overlap_from_counts(curve), overlap_from_counts(adaptive)
    return {
        "mae": values.mae,
        "s_measure": values.s_measure,
        "weighted_f_measure": values.weighted_f_measure,
        "f_adaptive": f_adaptive["f"],
        "f_curve": f_curve["f"],
        "precision_curve": f_curve["precision"],
        "recall_curve": f_curve["recall"],
        "e_adaptive": e_from_counts(adaptive),
        "e_curve": e_from_counts(curve),
        "precision_adaptive": o_adaptive["precision"],
        "recall_adaptive": o_adaptive["recall"],
        "iou_adaptive": o_adaptive["iou"],
        "iou_curve": o_curve["iou"],
        "dice_adaptive": o_adaptive["dice"],
        "dice_curve": o_curve["dice"],
    }


def foreground_measures(
    preds: ImageBatch,
    target: ImageBatch,
    *,
    beta2: float = 0.3,
    wf_beta2: float = 1.0,
    alpha: float = 0.5,
    empty_quadrant: EmptyQuadrant = "nan",
    edt_backend: EdtBackend = "auto",
    normalize: bool = True,
    validate_args: bool = True,
    protocol: str = "pysodmetrics",
) -> dict[str, Tensor]:
    """Per-image MAE, S-measure, weighted F, and the F/E/precision/recall/IoU/Dice adaptive values and curves.

    Each value equals the dedicated function's (:func:`mae`, :func:`s_measure`, :func:`weighted_f_measure`,
    :func:`f_measure`, :func:`e_measure`, :func:`iou`, :func:`dice`, :func:`precision_recall`), computed from one
    shared pass. ``precision_curve``/``recall_curve`` follow ``Fmeasure`` (precision 0 where nothing is predicted,
    recall ``tp / max(G, 1)``), which coincides with the ``FmeasureV2`` handlers.

    Args:
        preds, target: as :func:`f_measure`.
        beta2: F-measure :math:`\\beta^2` (0.3). wf_beta2: weighted-F :math:`\\beta^2` (1). alpha: S-measure weight.
        empty_quadrant, edt_backend, normalize, validate_args: as the dedicated functions.
        protocol: ``"pysodmetrics"`` (PySODMetrics 1.6.2, the default) or a MATLAB-toolbox protocol,
            ``"matlab-toolbox"`` or ``"matlab-toolbox-2020-11"`` (:mod:`.matlab_toolbox`,
            ``docs/matlab-toolbox.md``): the same keys with the toolbox's values (``alpha`` 0.5, ``wf_beta2`` 1,
            ``empty_quadrant="nan"`` and ``normalize=True`` then; its specificity:
            :func:`~.matlab_toolbox.toolbox_measures`).

    Returns:
        dict of per-image tensors; keys and shapes in ``FOREGROUND_KEYS``.

    Example:
        >>> import torch
        >>> g = torch.Generator().manual_seed(0)
        >>> preds = torch.rand(2, 16, 16, generator=g)
        >>> target = torch.zeros(2, 16, 16, dtype=torch.bool)
        >>> target[:, 4:12, 4:12] = True
        >>> from segmetrics_torch.functional import foreground_measures
        >>> out = foreground_measures(preds, target)
        >>> [round(v, 4) for v in out["mae"].tolist()]
        [0.4752, 0.5279]
        >>> [round(v, 4) for v in out["s_measure"].tolist()]
        [0.3555, 0.2788]
        >>> out["e_curve"].shape
        torch.Size([2, 256])
    """
    beta2 = check_positive_float(beta2, "beta2")
    options = suite_options(alpha, empty_quadrant, wf_beta2, edt_backend)
    fixed = {"alpha": (alpha, 0.5), "wf_beta2": (wf_beta2, 1.0), "empty_quadrant": (empty_quadrant, "nan")}
    if check_foreground_protocol(protocol, **fixed) != "pysodmetrics":
        v = toolbox_foreground_values(
            preds,
            target,
            protocol=protocol,
            beta2=beta2,
            weighted_f=True,
            edt_backend=edt_backend,
            normalize=normalize,
            validate_args=validate_args,
        )
        return {key: v[key] for key in FOREGROUND_KEYS}
    return run_per_image(
        lambda v: derive_all(v, beta2),
        preds,
        target,
        normalize=normalize,
        validate_args=validate_args,
        options=options,
    )


#: per-image scalar values and 256-point curves that a dataset summary averages
SUITE_SCALARS = tuple(k for k in FOREGROUND_KEYS if not k.endswith("_curve"))
SUITE_CURVES = tuple(k for k in FOREGROUND_KEYS if k.endswith("_curve"))


def summarize_foreground(means: Mapping[str, Tensor]) -> dict[str, Any]:
    """The result of the whole foreground suite from the image averages of its per-image values.

    ``means[key]`` is the average over a set of images of the per-image value ``key`` of :func:`foreground_measures`
    (every key of ``FOREGROUND_KEYS``: a scalar for the scalar measures, a (256,) curve for the ``*_curve`` ones).
    PySODMetrics 1.6.2's rule: the per-image curves are averaged first and a family's ``mean`` and ``max`` are taken
    of that averaged curve :math:`\\bar c`: ``mean`` :math:`= \\frac{1}{256} \\sum_t \\bar c_t`, ``max``
    :math:`= \\max_t \\bar c_t` (not the mean of per-image maxima). The averages of a dataset give
    :class:`ForegroundSums`' and :class:`~segmetrics_torch.ForegroundMeasures`' ``compute()``; one image's values
    give that image's own summary (its max F of its own curve, ...).

    Returns:
        ``mae``, ``s_measure``, ``weighted_f_measure``, ``precision``, ``recall`` (the adaptive ones): the means as
        given; ``f_measure``, ``e_measure``, ``iou``, ``dice``: ``{"adaptive", "curve", "mean", "max"}``, and
        ``f_measure`` also ``precision`` and ``recall`` curves (256,). A NaN average stays NaN (no warning here).

    Example:
        >>> import torch
        >>> g = torch.Generator().manual_seed(0)
        >>> preds = torch.rand(2, 16, 16, generator=g)
        >>> target = torch.zeros(2, 16, 16, dtype=torch.bool)
        >>> target[:, 4:12, 4:12] = True
        >>> from segmetrics_torch.functional import foreground_measures, summarize_foreground
        >>> values = foreground_measures(preds, target)
        >>> first = summarize_foreground({key: value[0] for key, value in values.items()})  # image 0 alone
        >>> round(float(first["mae"]), 4), round(float(first["f_measure"]["max"]), 4)
        (0.4752, 0.3358)
        >>> dataset = summarize_foreground({key: value.mean(0) for key, value in values.items()})
        >>> sorted(dataset["e_measure"])
        ['adaptive', 'curve', 'max', 'mean']
    """

    def curve(name: str, adaptive: str) -> dict[str, Tensor]:
        c = means[name]
        return {"adaptive": means[adaptive], "curve": c, "mean": c.mean(), "max": c.max()}

    f = curve("f_curve", "f_adaptive")
    f["precision"] = means["precision_curve"]
    f["recall"] = means["recall_curve"]
    return {
        "mae": means["mae"],
        "s_measure": means["s_measure"],
        "weighted_f_measure": means["weighted_f_measure"],
        "f_measure": f,
        "e_measure": curve("e_curve", "e_adaptive"),
        "iou": curve("iou_curve", "iou_adaptive"),
        "dice": curve("dice_curve", "dice_adaptive"),
        "precision": means["precision_adaptive"],
        "recall": means["recall_adaptive"],
    }


class ForegroundSums:
    """Every foreground measure of a dataset without torchmetrics: :class:`~segmetrics_torch.ForegroundMeasures`'
    state, update and ``compute()`` in plain tensors, with each batch's per-image values returned by ``update``.

    The state is, for every per-image value ``v`` of :func:`foreground_measures` (the scalars ``mae``,
    ``s_measure``, ``weighted_f_measure``, ``*_adaptive`` and the 256-point ``*_curve``; :attr:`NAMES`), the float64
    sum over the images :math:`S_v = \\sum_i v_i` (attribute ``{name}_sum``), and the image count ``count`` (0-d
    int64). ``compute()`` is :func:`summarize_foreground` of the averages :math:`S_v / N` (PySODMetrics 1.6.2:
    scalar measures are means of per-image values; a curve family's ``mean``/``max`` are those of the image-averaged
    curve). ``ForegroundMeasures`` holds the same sums as torchmetrics states, adds a batch with the same
    :func:`add_sums` of the same per-image values and summarises them with the same function, so the two give
    bit-identical results (tested).

    Use it where torchmetrics is not wanted (its import costs about a second: the ``segmetrics`` command
    accumulates here), or where each image's values are wanted too: ``update`` returns them (those of
    :func:`foreground_measures`, one pass for both). Use the Metric for Lightning and automatic DDP syncing; across
    processes, add every process's :meth:`sums` and counts and :meth:`load` the totals (see the example).

    Args:
        beta2, wf_beta2, alpha, empty_quadrant, edt_backend, normalize, validate_args: as
            :class:`~segmetrics_torch.ForegroundMeasures` and :func:`foreground_measures` (same defaults, same
            checks: ``TypeError`` / ``ValueError`` naming the argument). ``edt_backend`` may be changed between
            updates (an attribute): the distance transform is exact on every backend.
        device: where the sums live (default CPU); the per-image values stay on the inputs' device.

    Edge cases: with no image added, ``compute()`` returns NaN values and warns (as the Metric); an image whose
    S-measure is NaN (``empty_quadrant="nan"``, the ground-truth centroid on the last row or column) makes the
    dataset ``s_measure`` NaN and ``compute()`` warns, as ``ForegroundMeasures``. The Metric's ``skip_empty_gt`` and
    ``include`` are not offered here (filter the batch; use the Metric classes of the other measures).

    Example:
        >>> import torch
        >>> g = torch.Generator().manual_seed(0)
        >>> preds = torch.rand(2, 16, 16, generator=g)
        >>> target = torch.zeros(2, 16, 16, dtype=torch.bool)
        >>> target[:, 4:12, 4:12] = True
        >>> from segmetrics_torch.functional import ForegroundSums
        >>> sums = ForegroundSums()
        >>> values = sums.update(preds, target)  # per-image values, as foreground_measures(preds, target)
        >>> [round(v, 4) for v in values["mae"].tolist()]
        [0.4752, 0.5279]
        >>> result = sums.compute()  # as ForegroundMeasures().compute() after the same updates
        >>> int(sums.count), round(float(result["mae"]), 4), round(float(result["f_measure"]["max"]), 4)
        (2, 0.5016, 0.3033)
        >>> # another process's accumulator: add the sums and counts, load the totals
        >>> other = ForegroundSums()
        >>> _ = other.update(preds, target)
        >>> total = {name: sums.sums()[name] + other.sums()[name] for name in ForegroundSums.NAMES}
        >>> sums.load(total, int(sums.count) + int(other.count))
        >>> int(sums.count), round(float(sums.compute()["mae"]), 4)
        (4, 0.5016)
    """

    #: the names of the summed per-image values (``SUITE_SCALARS`` then ``SUITE_CURVES``)
    NAMES = (*SUITE_SCALARS, *SUITE_CURVES)

    count: Tensor

    def __init__(
        self,
        *,
        beta2: float = 0.3,
        wf_beta2: float = 1.0,
        alpha: float = 0.5,
        empty_quadrant: EmptyQuadrant = "nan",
        edt_backend: EdtBackend = "auto",
        normalize: bool = True,
        validate_args: bool = True,
        device: torch.device | str = "cpu",
    ) -> None:
        self.normalize = check_bool(normalize, "normalize")
        self.validate_args = check_bool(validate_args, "validate_args")
        self.beta2 = check_positive_float(beta2, "beta2")
        self._options = suite_options(alpha, empty_quadrant, wf_beta2, edt_backend)
        self._device = torch.device(device)
        self.reset()

    @property
    def settings(self) -> dict[str, Any]:
        """The measure settings (for reports): beta2, wf_beta2, alpha, empty_quadrant, edt_backend."""
        return suite_settings(self.beta2, self._options)

    @property
    def edt_backend(self) -> EdtBackend:
        """The weighted F's distance-transform backend (``"auto"``, ``"torch"``, ``"numba"``); settable."""
        return self._options.edt_backend

    @edt_backend.setter
    def edt_backend(self, value: EdtBackend) -> None:
        check_edt_backend(value)
        self._options = dataclasses.replace(self._options, edt_backend=value)

    def reset(self) -> None:
        """Forget every image: zero sums and count."""
        for name in self.NAMES:
            shape = (NUM_THRESHOLDS,) if name in SUITE_CURVES else ()
            setattr(self, f"{name}_sum", torch.zeros(shape, dtype=torch.float64, device=self._device))
        self.count = torch.zeros((), dtype=torch.int64, device=self._device)

    def update(self, preds: ImageBatch, target: ImageBatch) -> dict[str, Tensor]:
        """Add a batch (inputs as :func:`foreground_measures`) and return its per-image values: the dict of
        :func:`foreground_measures` (keys and shapes in ``FOREGROUND_KEYS``, on the inputs' device). A batch that
        fails the checks raises and adds nothing."""
        values = run_per_image(
            lambda v: derive_all(v, self.beta2),
            preds,
            target,
            normalize=self.normalize,
            validate_args=self.validate_args,
            options=self._options,
        )
        add_sums(self, self.NAMES, values)
        return values

    def mean(self, name: str) -> Tensor:
        """The image average of the per-image value ``name`` (NaN with no image)."""
        return getattr(self, f"{name}_sum") / self.count

    def compute(self) -> dict[str, Any]:
        """The dataset result, as :meth:`ForegroundMeasures.compute` (keys there; float64 tensors on ``device``)."""
        n = int(self.count)
        if not n:
            warnings.warn(
                "ForegroundSums.compute(): no image has been added, so the value is NaN.", RuntimeWarning, stacklevel=2
            )
        res = summarize_foreground({name: self.mean(name) for name in self.NAMES})
        if n and bool(torch.isnan(res["s_measure"])):
            warn_s_measure_nan("ForegroundSums: s_measure", "at least one image has")
        return res

    def sums(self) -> dict[str, Tensor]:
        """The sums by name (to be added across processes, then :meth:`load`-ed)."""
        return {name: getattr(self, f"{name}_sum") for name in self.NAMES}

    def load(self, sums: Mapping[str, Tensor], count: int) -> None:
        """Replace the state by ``sums`` (by name, as :meth:`sums`; moved to this state's device, float64) and
        ``count`` images."""
        for name in self.NAMES:
            total = getattr(self, f"{name}_sum")
            setattr(self, f"{name}_sum", sums[name].to(total.device, total.dtype))
        self.count = torch.tensor(count, dtype=torch.int64, device=self.count.device)


def suite_settings(beta2: float, options: MeasureOptions, protocol: str = "pysodmetrics") -> dict[str, Any]:
    """The measure settings of the whole suite, as reports record them: protocol, beta2, wf_beta2, alpha,
    empty_quadrant, edt_backend (one definition for :class:`~segmetrics_torch.ForegroundMeasures` and
    :class:`ForegroundSums`, whose protocol is always PySODMetrics')."""
    return {
        "protocol": protocol,
        "beta2": beta2,
        "wf_beta2": options.wf_beta2,
        "alpha": options.alpha,
        "empty_quadrant": options.empty_quadrant,
        "edt_backend": options.edt_backend,
    }
