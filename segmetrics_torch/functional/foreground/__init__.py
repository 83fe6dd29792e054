"""Functional foreground-map measures: per-image values of batches (B, H, W) or lists of differently sized maps."""

from .emeasure import e_measure
from .mae import mae
from .overlap import dice, f_measure, iou, precision_recall
from .smeasure import s_measure
from .suite import FOREGROUND_KEYS, foreground_measures
from .weighted_fmeasure import weighted_f_measure

__all__ = [
    "FOREGROUND_KEYS",
    "dice",
    "e_measure",
    "f_measure",
    "foreground_measures",
    "iou",
    "mae",
    "precision_recall",
    "s_measure",
    "weighted_f_measure",
]
