"""Functional partition measures (SEISM, Pont-Tuset & Marques) and the Berkeley region benchmark."""

from .segmentation import fb_precision_recall, partition_measures, partition_tables
from .tables import MEASURES, TABLE_MEASURES, measures_from_tables

__all__ = [
    "MEASURES",
    "TABLE_MEASURES",
    "fb_precision_recall",
    "measures_from_tables",
    "partition_measures",
    "partition_tables",
]
