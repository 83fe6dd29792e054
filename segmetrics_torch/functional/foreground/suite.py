"""All foreground-map measures of a batch from one shared pass.

One input preparation, one 256-bin histogram per image (F-measure, E-measure, precision, recall, IoU, Dice curves and
their adaptive values), one distance transform (weighted F), one set of masked moments (S-measure).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict

import torch
from torch import Tensor

from ..._checks import ImageBatch, check_positive_float
from ..._docs import fill_doc
from ...ops.thresholds import NUM_THRESHOLDS
from ._intermediates import EdtBackend, EmptyQuadrant, ForegroundIntermediates, MeasureOptions, run_per_image
from .enhanced_alignment import e_from_counts
from .overlap import f_from_counts, overlap_from_counts
from .structure_measure import check_s_options
from .weighted_fmeasure import check_edt_backend

__all__ = [
    "FOREGROUND_KEYS",
    "SUITE_CURVES",
    "SUITE_DEFAULTS",
    "SUITE_SCALARS",
    "SuiteSettings",
    "SuiteSums",
    "add_sums",
    "derive_all",
    "foreground_measures",
    "suite_options",
    "suite_settings",
    "summarize_foreground",
]

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


class SuiteSettings(TypedDict, total=False):
    """The measure settings of the whole suite: :class:`~segmetrics_torch.ForegroundMeasures`' and
    :func:`foreground_measures`' keywords of the same names (what they mean: there)."""

    beta2: float
    wf_beta2: float
    alpha: float
    empty_quadrant: EmptyQuadrant
    edt_backend: EdtBackend


#: the defaults of :class:`SuiteSettings`
SUITE_DEFAULTS: dict[str, Any] = {
    "beta2": 0.3, "wf_beta2": 1.0, "alpha": 0.5, "empty_quadrant": "nan", "edt_backend": "auto",
}  # fmt: skip


def suite_options(
    alpha: float, empty_quadrant: EmptyQuadrant, wf_beta2: float, edt_backend: EdtBackend
) -> MeasureOptions:
    """Validated options of the whole suite (S-measure and weighted F included)."""
    check_s_options(alpha, empty_quadrant)
    check_edt_backend(edt_backend)
    return MeasureOptions(
        s_measure=True, weighted_f=True, alpha=float(alpha), empty_quadrant=empty_quadrant,
        wf_beta2=check_positive_float(wf_beta2, "wf_beta2"), edt_backend=edt_backend,
    )  # fmt: skip


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


@fill_doc
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

    Returns:
        dict of per-image tensors; keys and shapes in ``FOREGROUND_KEYS``.

    Example:
        {{foreground_batch}}
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
    return run_per_image(
        lambda v: derive_all(v, beta2), preds, target, normalize=normalize, validate_args=validate_args,
        options=options,
    )  # fmt: skip


#: per-image scalar values and 256-point curves that a dataset summary averages
SUITE_SCALARS = tuple(k for k in FOREGROUND_KEYS if not k.endswith("_curve"))
SUITE_CURVES = tuple(k for k in FOREGROUND_KEYS if k.endswith("_curve"))


def add_sums(state: Any, names: Sequence[str], values: Mapping[str, Tensor]) -> None:
    """Add a batch's per-image ``values`` to ``state``: ``state.{name}_sum += values[name].sum(0)`` for each name (on
    the state's device, in its dtype) and ``state.count += B``. The one update of every foreground accumulator:
    :class:`SuiteSums` and the foreground Metrics (whose torchmetrics states carry the same names)."""
    for name in names:
        total = getattr(state, f"{name}_sum")
        setattr(state, f"{name}_sum", total + values[name].sum(dim=0).to(total.device, total.dtype))
    state.count += next(iter(values.values())).shape[0]


class SuiteSums:
    """The state of the whole foreground suite over a dataset, without torchmetrics: the float64 sum over images of
    every per-image value of ``SUITE_SCALARS`` and ``SUITE_CURVES`` (attributes ``{name}_sum``) and the number of
    images (``count``, int64).

    :class:`~segmetrics_torch.ForegroundMeasures` holds this very state as torchmetrics states of the same names (so
    that DDP sums them) and updates it with the same :func:`add_sums`; the ``segmetrics`` command accumulates in a
    ``SuiteSums`` (``app.foreground_sums``: torchmetrics costs about a second of its start-up). Both summarise it with
    :func:`summarize_foreground` of :meth:`mean`, so their results are identical.

    Example:
        >>> import torch
        >>> state = SuiteSums()
        >>> state.add({name: torch.ones(2, *([256] if name in SUITE_CURVES else [])) for name in SuiteSums.NAMES})
        >>> int(state.count), float(state.mean("mae")), tuple(state.mean("f_curve").shape)
        (2, 1.0, (256,))
    """

    #: the names of the summed per-image values
    NAMES = (*SUITE_SCALARS, *SUITE_CURVES)

    count: Tensor

    def __init__(self, device: torch.device | str = "cpu") -> None:
        for name in self.NAMES:
            shape = (NUM_THRESHOLDS,) if name in SUITE_CURVES else ()
            setattr(self, f"{name}_sum", torch.zeros(shape, dtype=torch.float64, device=device))
        self.count = torch.zeros((), dtype=torch.int64, device=device)

    def add(self, values: Mapping[str, Tensor]) -> None:
        """Add a batch's per-image values (:func:`derive_all`'s)."""
        add_sums(self, self.NAMES, values)

    def mean(self, name: str) -> Tensor:
        """The image average of ``name`` (NaN with no image)."""
        return getattr(self, f"{name}_sum") / self.count

    def sums(self) -> dict[str, Tensor]:
        """The sums by name (to be added across processes: :meth:`load`)."""
        return {name: getattr(self, f"{name}_sum") for name in self.NAMES}

    def load(self, sums: Mapping[str, Tensor], count: int) -> None:
        """Replace the state by ``sums`` (on this state's device) and ``count``."""
        for name in self.NAMES:
            total = getattr(self, f"{name}_sum")
            setattr(self, f"{name}_sum", sums[name].to(total.device, total.dtype))
        self.count = torch.tensor(count, dtype=torch.int64, device=self.count.device)


def summarize_foreground(mean: Callable[[str], Tensor]) -> dict[str, Any]:
    """The dataset result of the whole suite from ``mean(key)``, the image average of a key of ``FOREGROUND_KEYS``.

    PySODMetrics' rule: the per-image curves are averaged first, and ``mean`` / ``max`` are taken of that curve.
    """

    def curve(name: str, adaptive: str) -> dict[str, Tensor]:
        c = mean(name)
        return {"adaptive": mean(adaptive), "curve": c, "mean": c.mean(), "max": c.max()}

    f = curve("f_curve", "f_adaptive")
    f["precision"] = mean("precision_curve")
    f["recall"] = mean("recall_curve")
    return {
        "mae": mean("mae"),
        "s_measure": mean("s_measure"),
        "weighted_f_measure": mean("weighted_f_measure"),
        "f_measure": f,
        "e_measure": curve("e_curve", "e_adaptive"),
        "iou": curve("iou_curve", "iou_adaptive"),
        "dice": curve("dice_curve", "dice_adaptive"),
        "precision": mean("precision_adaptive"),
        "recall": mean("recall_adaptive"),
    }


def suite_settings(beta2: float, options: MeasureOptions) -> dict[str, Any]:
    """The measure settings of the whole suite, as reports record them: beta2, wf_beta2, alpha, empty_quadrant,
    edt_backend (one definition for :class:`~segmetrics_torch.ForegroundMeasures` and the command's accumulator)."""
    return {"beta2": beta2, "wf_beta2": options.wf_beta2, "alpha": options.alpha,
            "empty_quadrant": options.empty_quadrant, "edt_backend": options.edt_backend}  # fmt: skip
