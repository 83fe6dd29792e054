"""The foreground measures a table can show, by the short names of ``--measures`` / ``options.foreground.measures``.

Torch-free (the command's parsers and the configuration check use it before torch loads). Each name maps to the key
of the flattened result (:func:`segmetrics_torch.app.tables.scalar_row`), the column header, the measure
:class:`~segmetrics_torch.ForegroundMeasures` must ``include`` to compute it (None: always computed) and whether
lower is better. The default is the table the command printed before the option existed.
"""

from __future__ import annotations

__all__ = ["DEFAULT_FOREGROUND_MEASURES", "FOREGROUND_MEASURES", "check_foreground_measures", "foreground_columns"]

#: name -> (result key, header, included measure or None, lower is better)
FOREGROUND_MEASURES: dict[str, tuple[str, str, str | None, bool]] = {
    "mae": ("mae", "MAE", None, True),
    "s": ("s_measure", "S-measure", None, False),
    "wf": ("weighted_f_measure", "wF", None, False),
    "adpf": ("f_measure/adaptive", "adpF", None, False),
    "meanf": ("f_measure/mean", "meanF", None, False),
    "maxf": ("f_measure/max", "maxF", None, False),
    "adpe": ("e_measure/adaptive", "adpE", None, False),
    "meane": ("e_measure/mean", "meanE", None, False),
    "maxe": ("e_measure/max", "maxE", None, False),
    "meaniou": ("iou/mean", "meanIoU", None, False),
    "meandice": ("dice/mean", "meanDice", None, False),
    "maxiou": ("iou/max", "maxIoU", None, False),
    "maxdice": ("dice/max", "maxDice", None, False),
    "simae": ("size_invariant_mae", "siMAE", "size_invariant_mae", True),
    "siadpf": ("size_invariant_f_measure/fmeasure/adaptive", "siAdpF", "size_invariant_f_measure", False),
    "simeanf": ("size_invariant_f_measure/fmeasure/mean", "siMeanF", "size_invariant_f_measure", False),
    "simaxf": ("size_invariant_f_measure/fmeasure/max", "siMaxF", "size_invariant_f_measure", False),
    "adpmsiou": ("multiscale_iou/adaptive", "adpMSIoU", "multiscale_iou", False),
    "meanmsiou": ("multiscale_iou/mean", "meanMSIoU", "multiscale_iou", False),
    "maxmsiou": ("multiscale_iou/max", "maxMSIoU", "multiscale_iou", False),
    "hce": ("human_correction_effort", "HCE", "human_correction_effort", True),
    "cm": ("context_measure", "Cm", "context_measure", False),
    "meanber": ("threshold_measures/ber/mean", "meanBER", "threshold_measures", True),
    "meankappa": ("threshold_measures/kappa/mean", "meanKappa", "threshold_measures", False),
    "meanacc": ("threshold_measures/accuracy/mean", "meanAcc", "threshold_measures", False),
}

DEFAULT_FOREGROUND_MEASURES: tuple[str, ...] = ("mae", "s", "wf", "adpf", "meanf", "maxf", "adpe", "meane", "maxe",
                                                "meaniou", "meandice")  # fmt: skip


def check_foreground_measures(names: object) -> list[str] | None:
    """``names`` (a list, or a comma-separated string) lowercased and checked; None when one is unknown."""
    if isinstance(names, str):
        names = [n for n in names.split(",") if n.strip()]
    if not isinstance(names, (list, tuple)) or not names or not all(isinstance(n, str) for n in names):
        return None
    out = [n.strip().lower() for n in names]
    return out if all(n in FOREGROUND_MEASURES for n in out) else None


def foreground_columns(names: list[str] | tuple[str, ...] | None) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """``(columns, lower_is_better keys, measures to include)`` of a foreground table of ``names`` (None: default)."""
    names = list(names or DEFAULT_FOREGROUND_MEASURES)
    columns = [(FOREGROUND_MEASURES[n][0], FOREGROUND_MEASURES[n][1]) for n in names]
    lower = [FOREGROUND_MEASURES[n][0] for n in names if FOREGROUND_MEASURES[n][3]]
    include = list(dict.fromkeys(m for n in names if (m := FOREGROUND_MEASURES[n][2])))
    return columns, lower, include
