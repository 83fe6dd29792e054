"""Functional partition measures (SEISM, Pont-Tuset & Marques) and the Berkeley region benchmark."""

from .hierarchy import HIERARCHY_FORMATS, HierarchyFormat, hierarchy_measures, region_benchmark_counts
from .segmentation import fb_precision_recall, partition_measures, partition_tables
from .summary import hierarchy_state, summarize_hierarchy
from .tables import MEASURES, TABLE_MEASURES, measures_from_tables

__all__ = [
    "HIERARCHY_FORMATS",
    "MEASURES",
    "TABLE_MEASURES",
    "HierarchyFormat",
    "fb_precision_recall",
    "hierarchy_measures",
    "hierarchy_state",
    "measures_from_tables",
    "partition_measures",
    "partition_tables",
    "region_benchmark_counts",
    "summarize_hierarchy",
]
