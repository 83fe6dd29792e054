"""All foreground-map measures of a batch from one shared pass.

One input preparation, one 256-bin histogram per image (F-measure, E-measure, precision, recall, IoU, Dice curves and
their adaptive values), one distance transform (weighted F), one set of masked moments (S-measure).
"""

from __future__ import annotations

from torch import Tensor

from ..._checks import check_positive_float
from ._prepare import run_per_image
from .emeasure import e_from_counts
from .mae import mae_of_maps
from .overlap import all_counts, f_from_counts, overlap_from_counts
from .smeasure import s_measure_of_maps
from .weighted_fmeasure import weighted_f_measure_of_maps

__all__ = ["FOREGROUND_KEYS", "foreground_measures", "foreground_measures_of_maps"]

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


def foreground_measures_of_maps(
    p: Tensor, g: Tensor, *, beta2: float = 0.3, wf_beta2: float = 1.0, alpha: float = 0.5,
    empty_quadrant: str = "nan", edt_backend: str = "auto",
) -> dict[str, Tensor]:
    """Every foreground measure per image of prepared maps (keys and shapes in ``FOREGROUND_KEYS``)."""
    adaptive, curve = all_counts(p, g)
    f_curve, f_adaptive = f_from_counts(curve, beta2), f_from_counts(adaptive, beta2)
    o_curve, o_adaptive = overlap_from_counts(curve), overlap_from_counts(adaptive)
    return {
        "mae": mae_of_maps(p, g),
        "s_measure": s_measure_of_maps(p, g, alpha, empty_quadrant),
        "weighted_f_measure": weighted_f_measure_of_maps(p, g, wf_beta2, edt_backend),
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
    preds,
    target,
    *,
    beta2: float = 0.3,
    wf_beta2: float = 1.0,
    alpha: float = 0.5,
    empty_quadrant: str = "nan",
    edt_backend: str = "auto",
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
    """
    beta2 = check_positive_float(beta2, "beta2")
    wf_beta2 = check_positive_float(wf_beta2, "wf_beta2")
    if empty_quadrant not in ("nan", "skip"):
        raise ValueError(f"Expected argument `empty_quadrant` to be 'nan' or 'skip', but got {empty_quadrant!r}.")
    return run_per_image(
        lambda p, g: foreground_measures_of_maps(
            p, g, beta2=beta2, wf_beta2=wf_beta2, alpha=alpha, empty_quadrant=empty_quadrant, edt_backend=edt_backend
        ),
        preds,
        target,
        normalize=normalize,
        validate_args=validate_args,
    )
