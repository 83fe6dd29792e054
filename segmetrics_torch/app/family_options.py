"""The measure options of each family in an evaluation configuration (``options.<family>`` of ``eval.yaml``): what
each accepts, checked with a message that names the expected value, and the defaults (those of the family's
``segmetrics evaluate`` subcommand)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..registry import MAX_CLASSES, MAX_THRESHOLDS, PARTITION, SURFACE, canonical, canonical_list, measure_error


def is_int(value: Any) -> bool:
    """An int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def _surface_measure(name: Any) -> bool:
    """Whether ``name`` is text naming a surface measure (``str()`` of any value built by YAML aliases could take
    gigabytes)."""
    return isinstance(name, str) and canonical(name, "surface") is not None


def is_number(value: Any) -> bool:
    """A finite int or float that is not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


#: per family, per option: (check(value) -> truthy when valid, what was expected: text, or a function of the value)
OPTION_CHECKS: dict[str, dict[str, tuple[Callable[[Any], Any], str | Callable[[Any], str]]]] = {
    "foreground": {
        "measures": (
            lambda v: isinstance(v, list) and canonical_list(v, "foreground") is not None,
            lambda v: f"a list of measure names ({measure_error(v, 'foreground')})",
        ),
    },
    "boundary": {
        "thresholds": (lambda v: is_int(v) and 1 <= v <= MAX_THRESHOLDS, f"an integer from 1 to {MAX_THRESHOLDS}"),
        "max_dist": (lambda v: is_number(v) and v > 0, "a positive number"),
        "thin": (lambda v: isinstance(v, bool), "true or false"),
        "nms": (lambda v: isinstance(v, bool), "true or false"),
    },
    "partition": {
        "measures": (
            lambda v: isinstance(v, list) and v and all(m in PARTITION for m in v),
            f"a list of some of {', '.join(PARTITION)}",
        ),
        "thresholds": (
            lambda v: (
                (is_int(v) and 1 <= v <= MAX_THRESHOLDS) or (isinstance(v, list) and v and all(map(is_number, v)))
            ),
            f"an integer from 1 to {MAX_THRESHOLDS} or a list of numbers",
        ),
        "num_regions": (
            lambda v: isinstance(v, list) and v and all(is_int(n) and 1 <= n < 2**63 for n in v),
            "a list of positive integers below 2^63",
        ),
        "rule": (lambda v: v in ("seism", "bsr"), "seism or bsr"),
        "gamma_obj": (lambda v: is_number(v) and 0 <= v <= 1, "a number in [0, 1]"),
        "max_dist": (lambda v: is_number(v) and v > 0, "a positive number"),
    },
    "proposals": {
        "counts": (
            lambda v: isinstance(v, list) and v and all(is_int(n) and 1 <= n < 2**63 for n in v),
            "a list of positive integers below 2^63",
        ),
        "num_classes": (lambda v: is_int(v) and 1 <= v <= MAX_CLASSES, f"an integer from 1 to {MAX_CLASSES}"),
        "chunk_size": (lambda v: v is None or (is_int(v) and v >= 1), "a positive integer"),
        "boundary": (lambda v: isinstance(v, bool), "true or false"),
        "bound_th": (lambda v: is_number(v) and v > 0, "a positive number"),
        "void_label": (lambda v: v is None or (is_int(v) and v >= 0), "a label >= 0 or null"),
    },
    "surface": {
        "measures": (
            lambda v: v is None or (isinstance(v, list) and v and all(_surface_measure(m) for m in v)),
            f"null (the one pass: hd, hd95, asd, assd, nsd) or a list of some of {', '.join(SURFACE)}",
        ),
        "num_classes": (
            lambda v: v is None or (is_int(v) and 2 <= v <= MAX_CLASSES),
            f"an integer from 2 to {MAX_CLASSES} or null (masks)",
        ),
        "include_background": (lambda v: isinstance(v, bool), "true or false"),
        "convention": (
            lambda v: v in ("monai", "medpy", "deepmind", "torchmetrics"),
            "monai, medpy, deepmind or torchmetrics",
        ),
        "percentile": (lambda v: is_number(v) and 0 <= v <= 100, "a number in [0, 100]"),
        "tolerance": (
            lambda v: (
                v is None
                or (is_number(v) and v >= 0)
                or (isinstance(v, list) and v and all(is_number(t) and t >= 0 for t in v))
            ),
            "null (no NSD: a tolerance has no default), a non-negative number or a list of them (one per class)",
        ),
        "directed": (lambda v: isinstance(v, bool), "true or false"),
        "distance_metric": (
            lambda v: v in ("euclidean", "chessboard", "taxicab"),
            "euclidean, chessboard or taxicab",
        ),
        # the names of functional.surface.AGGREGATIONS (that module imports torch; a test keeps them equal)
        "aggregation": (lambda v: v in ("inf", "drop_nan", "worst_case"), "inf, drop_nan or worst_case"),
        "worst_case": (lambda v: v is None or (is_number(v) and v >= 0), "null or a number >= 0"),
        "class_names": (
            lambda v: v is None or (isinstance(v, list) and v and all(isinstance(n, str) and n.strip() for n in v)),
            "null or a list of non-empty names (one per label 0..C-1)",
        ),
        "spacing": (
            lambda v: (
                v is None
                or (is_number(v) and v > 0)
                or (isinstance(v, list) and v and all(is_number(s) and s > 0 for s in v))
            ),
            "null (the NIfTI headers'), a positive number or a list of them (one per axis)",
        ),
    },
}

#: per family, the options' defaults (counts None for proposals: MCG's numbers of proposals,
#: ``segmetrics_torch.functional.proposals.MCG_PROPOSAL_COUNTS``)
OPTION_DEFAULTS: dict[str, dict[str, Any]] = {
    "foreground": {"measures": None},
    "boundary": {"thresholds": 99, "max_dist": 0.0075, "thin": True, "nms": False},
    "partition": {
        "measures": None,
        "thresholds": None,
        "num_regions": None,
        "rule": "seism",
        "gamma_obj": 0.9,
        "max_dist": 0.0075,
    },
    # counts None: MCG's numbers of proposals (segmetrics_torch.functional.proposals.MCG_PROPOSAL_COUNTS)
    "proposals": {
        "counts": None,
        "num_classes": 256,
        "chunk_size": None,
        "boundary": False,
        "bound_th": 0.008,
        "void_label": 255,
    },
    # "measures" of surface: absent is the one pass (the records' settings of a default run stay as they were)
    "surface": {
        "num_classes": None,
        "include_background": False,
        "convention": "monai",
        "percentile": 95.0,
        "tolerance": None,
        "spacing": None,
        "directed": False,
        "distance_metric": "euclidean",
        "aggregation": "inf",
        "worst_case": None,
        "class_names": None,
    },
}
