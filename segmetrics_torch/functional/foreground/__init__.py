"""Functional foreground-map measures: per-image values of batches (B, H, W) or lists of differently sized maps, and
:class:`ForegroundSums`, the torchmetrics-free accumulator of the whole suite over a dataset; the MATLAB evaluation
toolbox of PraNet / Inf-Net / SINet as a named protocol (:func:`toolbox_measures`, :class:`ToolboxSums`,
:func:`summarize_toolbox`, :func:`format_toolbox_line`; ``protocol=`` of every function here)."""

from .context_measure import camouflage_context_measure, context_measure
from .enhanced_alignment import e_measure
from .hce import human_correction_effort
from .mae import mae
from .matlab_toolbox import (
    TOOLBOX_LAYOUTS,
    TOOLBOX_PROTOCOLS,
    ToolboxSums,
    format_toolbox_line,
    summarize_toolbox,
    toolbox_measures,
)
from .multiscale_iou import multiscale_iou
from .overlap import dice, f_measure, iou, precision_recall
from .size_invariance import SI_MAE_NAN_REASON, size_invariant_mae, size_invariant_threshold_measures
from .structure_measure import S_MEASURE_NAN_REASON, s_measure
from .suite import FOREGROUND_KEYS, ForegroundSums, foreground_measures, summarize_foreground
from .threshold_measures import threshold_measures
from .weighted_fmeasure import weighted_f_measure

__all__ = [
    "FOREGROUND_KEYS",
    "SI_MAE_NAN_REASON",
    "S_MEASURE_NAN_REASON",
    "TOOLBOX_LAYOUTS",
    "TOOLBOX_PROTOCOLS",
    "ForegroundSums",
    "ToolboxSums",
    "camouflage_context_measure",
    "context_measure",
    "dice",
    "e_measure",
    "f_measure",
    "foreground_measures",
    "format_toolbox_line",
    "human_correction_effort",
    "iou",
    "mae",
    "multiscale_iou",
    "precision_recall",
    "s_measure",
    "size_invariant_mae",
    "size_invariant_threshold_measures",
    "summarize_foreground",
    "summarize_toolbox",
    "threshold_measures",
    "toolbox_measures",
    "weighted_f_measure",
]
