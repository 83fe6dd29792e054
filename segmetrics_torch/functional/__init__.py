"""Functional API: pure functions returning per-image values; the Metric classes accumulate them."""

from .foreground import (
    FOREGROUND_KEYS,
    dice,
    e_measure,
    f_measure,
    foreground_measures,
    iou,
    mae,
    precision_recall,
    s_measure,
    weighted_f_measure,
)

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
