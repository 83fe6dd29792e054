"""One name per measure: the registry every layer reads (no torch, nothing of the package imported).

Each :class:`Measure` has its key (the name of ``segmetrics evaluate --measures`` and of ``segmetrics meta``), the
other spellings users type (PySODEvalToolkit's and PySODMetrics' keys such as ``maxEm``, ``Smeasure``, ``wFmeasure``,
the meta-measures' former names such as ``weighted_f``, the table headers), the column header in Markdown and LaTeX,
its direction, its family and where its value sits in a result. :func:`canonical` maps any spelling to its key
(case, ``_``, ``-`` and spaces ignored).

Foreground measures (PySODMetrics 1.6.2 conventions, see ``docs/foreground.md``): ``result`` is the ``/``-path of the
value in :class:`~segmetrics_torch.ForegroundMeasures`' flattened result and ``include`` the measure that Metric must
``include`` to compute it (None: always computed). Partition measures (SEISM keys, Pont-Tuset & Marques 2013): ``fb``
needs the boundary matching, the others come from the contingency tables; ``pr_curve`` marks the precision-recall
measures (Fb, Fop, Fr) whose hierarchies have PR curves and ODS/OIS/AP.

Example:
    >>> from segmetrics_torch.registry import canonical, MEASURES
    >>> canonical("maxEm"), canonical("weighted_f"), canonical("Smeasure")
    ('maxe', 'wf', 's')
    >>> MEASURES["wf"].header, MEASURES["mae"].higher_is_better
    ('wF', False)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "DEFAULT_FOREGROUND",
    "DEPRECATED_CLASSES",
    "FOREGROUND",
    "MEASURES",
    "META_FOREGROUND",
    "PARTITION",
    "PARTITION_TABLES",
    "PR_MEASURES",
    "THRESHOLD_MEASURES",
    "Measure",
    "aliases",
    "canonical",
    "meta_name",
]


#: the binary-classification measures of ``threshold_measures`` (one per PySODMetrics 1.6 handler), in the order of
#: PySODMetrics' README: the names of that function's ``measures``, of its results and of the numpy reference's
THRESHOLD_MEASURES = (
    "fmeasure", "precision", "recall", "specificity", "fpr", "ber", "iou", "dice", "accuracy", "kappa",
)  # fmt: skip


@dataclass(frozen=True)
class Measure:
    """A measure's names, headers, direction and place in a result (see the module doc)."""

    key: str
    family: Literal["foreground", "partition"]
    header: str
    latex: str
    higher_is_better: bool
    description: str
    result: str = ""
    include: str | None = None
    aliases: tuple[str, ...] = ()
    pr_curve: bool = False


def _fg(key: str, header: str, result: str, description: str, *, lower: bool = False, include: str | None = None,
        aliases: tuple[str, ...] = (), latex: str | None = None) -> Measure:  # fmt: skip
    return Measure(key, "foreground", header, latex or header, not lower, description, result, include, aliases)


def _pt(key: str, header: str, description: str, *, lower: bool = False, pr_curve: bool = False,
        latex: str | None = None) -> Measure:  # fmt: skip
    return Measure(key, "partition", header, latex or header, not lower, description, key, None, (), pr_curve)


_SI, _MS, _TM = "size_invariant_f_measure", "multiscale_iou", "threshold_measures"

# fmt: off
_ALL = (
    _fg("mae", "MAE", "mae", "mean absolute error", lower=True),
    _fg("s", "S-measure", "s_measure", "S-measure (Fan et al. 2017)", aliases=("sm", "smeasure", "s_measure"),
        latex="$S_\\alpha$"),
    _fg("wf", "wF", "weighted_f_measure", "weighted F-beta (Margolin et al. 2014)",
        aliases=("wfm", "wfmeasure", "weightedf", "weighted_f", "weighted_f_measure"),
        latex="$F^w_\\beta$"),
    _fg("adpf", "adpF", "f_measure/adaptive", "F-beta at the adaptive threshold", aliases=("adpfm", "f_adaptive")),
    _fg("meanf", "meanF", "f_measure/mean", "mean F-beta over the 256 thresholds",
        aliases=("meanfm", "avgf", "avgfm", "f_mean")),
    _fg("maxf", "maxF", "f_measure/max", "max F-beta over the 256 thresholds", aliases=("maxfm", "f_max")),
    _fg("adpe", "adpE", "e_measure/adaptive", "E-measure at the adaptive threshold", aliases=("adpem", "e_adaptive")),
    _fg("meane", "meanE", "e_measure/mean", "mean E-measure over the 256 thresholds",
        aliases=("meanem", "avge", "avgem", "e_mean")),
    _fg("maxe", "maxE", "e_measure/max", "max E-measure over the 256 thresholds", aliases=("maxem", "e_max")),
    _fg("meaniou", "meanIoU", "iou/mean", "mean IoU over the 256 thresholds", aliases=("avgiou", "iou")),
    _fg("meandice", "meanDice", "dice/mean", "mean Dice over the 256 thresholds", aliases=("avgdice", "dice")),
    _fg("maxiou", "maxIoU", "iou/max", "max IoU over the 256 thresholds"),
    _fg("maxdice", "maxDice", "dice/max", "max Dice over the 256 thresholds"),
    _fg("simae", "siMAE", "size_invariant_mae", "size-invariant MAE (Li et al. 2024)", lower=True,
        include="size_invariant_mae"),
    _fg("siadpf", "siAdpF", f"{_SI}/fmeasure/adaptive", "size-invariant adaptive F", include=_SI, aliases=("siadpfm",)),
    _fg("simeanf", "siMeanF", f"{_SI}/fmeasure/mean", "size-invariant mean F", include=_SI,
        aliases=("simeanfm", "siavgf")),
    _fg("simaxf", "siMaxF", f"{_SI}/fmeasure/max", "size-invariant max F", include=_SI, aliases=("simaxfm",)),
    _fg("siaucroc", "siAUC-ROC", f"{_SI}/auc_roc", "area under the ROC curve, PySODMetrics' recorder", include=_SI,
        aliases=("sisampleaucroc", "aucroc")),
    _fg("siaucpr", "siAUC-PR", f"{_SI}/auc_pr", "area under the PR curve, PySODMetrics' recorder", include=_SI,
        aliases=("sisampleaucpr", "aucpr")),
    _fg("adpmsiou", "adpMSIoU", f"{_MS}/adaptive", "multi-scale IoU at the adaptive threshold", include=_MS),
    _fg("meanmsiou", "meanMSIoU", f"{_MS}/mean", "mean multi-scale IoU (Ahmadzadeh et al. 2021)", include=_MS,
        aliases=("msiou", "avgmsiou")),
    _fg("maxmsiou", "maxMSIoU", f"{_MS}/max", "max multi-scale IoU", include=_MS),
    _fg("hce", "HCE", "human_correction_effort", "human correction effort (Qin et al. 2022)", lower=True,
        include="human_correction_effort"),
    _fg("cm", "Cm", "context_measure", "context measure (Wang et al. 2024)", include="context_measure",
        aliases=("context",)),
    _fg("meanber", "meanBER", f"{_TM}/ber/mean", "mean balanced error rate", lower=True, include=_TM,
        aliases=("avgber",)),
    _fg("meankappa", "meanKappa", f"{_TM}/kappa/mean", "mean Cohen's kappa", include=_TM, aliases=("avgkappa",)),
    _fg("meanacc", "meanAcc", f"{_TM}/accuracy/mean", "mean accuracy", include=_TM),
    _pt("fb", "Fb", "boundary F-measure (Martin et al. 2004)", pr_curve=True),
    _pt("fop", "Fop", "F-measure of objects and parts (Pont-Tuset & Marques 2013)", pr_curve=True),
    _pt("fr", "Fr", "F-measure of regions (pairs of pixels)", pr_curve=True),
    _pt("pri", "PRI", "probabilistic Rand index"),
    _pt("voi", "VoI", "variation of information", lower=True),
    _pt("nvoi", "NVoI", "normalised variation of information"),
    _pt("sc", "SC", "segmentation covering"),
    _pt("ssc", "SSC", "symmetric segmentation covering"),
    _pt("dhd", "DHD", "directional Hamming distance (as SEISM: a similarity)"),
    _pt("sdhd", "SDHD", "symmetric directional Hamming distance (as SEISM: a similarity)"),
    _pt("vd", "vD", "van Dongen distance (as SEISM: a similarity)"),
    _pt("bgm", "BGM", "bipartite graph matching"),
    _pt("bce", "BCE", "bidirectional consistency error (as SEISM: a similarity)"),
    _pt("gce", "GCE", "global consistency error (as SEISM: a similarity)"),
    _pt("lce", "LCE", "local consistency error (as SEISM: a similarity)"),
)
# fmt: on

#: key -> measure, foreground then partition
MEASURES: dict[str, Measure] = {m.key: m for m in _ALL}
#: the foreground keys, in the tables' order
FOREGROUND: tuple[str, ...] = tuple(m.key for m in _ALL if m.family == "foreground")
#: the foreground table of ``segmetrics evaluate foreground`` without ``--measures``
DEFAULT_FOREGROUND: tuple[str, ...] = ("mae", "s", "wf", "adpf", "meanf", "maxf", "adpe", "meane", "maxe", "meaniou",
                                       "meandice")  # fmt: skip
#: the foreground measures of :mod:`segmetrics_torch.meta` (one ForegroundMeasures pass) -> the name its results
#: are reported under (kept: reports and JSON written before the registry use them; any spelling is accepted)
META_FOREGROUND: dict[str, str] = {"mae": "mae", "s": "s_measure", "wf": "weighted_f", "adpf": "f_adaptive",
                                   "meanf": "f_mean", "maxf": "f_max", "adpe": "e_adaptive", "meane": "e_mean",
                                   "maxe": "e_max"}  # fmt: skip
#: the partition keys (SEISM's), Fb first
PARTITION: tuple[str, ...] = tuple(m.key for m in _ALL if m.family == "partition")
#: the partition measures computed from contingency tables (all but Fb)
PARTITION_TABLES: tuple[str, ...] = tuple(k for k in PARTITION if k != "fb")
#: the partition measures with precision-recall curves (ODS/OIS/AP on hierarchies)
PR_MEASURES: tuple[str, ...] = tuple(m.key for m in _ALL if m.pr_curve)

#: former class names, still importable with a DeprecationWarning naming the new one: PySODMetrics' spelling of
#: MultiScaleIoU, and the first name of the size-invariant threshold measures (which compute every threshold measure,
#: not the F-measure alone)
DEPRECATED_CLASSES: dict[str, str] = {
    "MSIoU": "MultiScaleIoU",
    "SizeInvariantFMeasure": "SizeInvariantThresholdMeasures",
}


def _squash(name: str) -> str:
    return "".join(name.lower().split()).replace("_", "").replace("-", "")


def _spellings() -> dict[str, str]:
    out: dict[str, str] = {}
    for m in _ALL:
        for spelling in (m.key, m.header, *m.aliases):
            key = _squash(spelling)
            if out.setdefault(key, m.key) != m.key:
                raise AssertionError(f"{spelling!r} names both {out[key]!r} and {m.key!r}")
    return out


_SPELLINGS = _spellings()


def canonical(name: str, family: str | None = None) -> str | None:
    """The key of the measure ``name`` spells (any registered spelling; case, ``_``, ``-``, spaces ignored), of
    ``family`` when given; None when it names none."""
    key = _SPELLINGS.get(_squash(name))
    if key is None or (family is not None and MEASURES[key].family != family):
        return None
    return key


def meta_name(name: str) -> str:
    """The name :mod:`segmetrics_torch.meta` reports a measure under, from any spelling (``"wf"``, ``"wFmeasure"``,
    ``"weighted_f"`` -> ``"weighted_f"``; ``"Fop"`` -> ``"fop"``); ``name`` itself when it spells no measure."""
    key = canonical(name)
    return name if key is None else META_FOREGROUND.get(key, key)


def aliases(family: str | None = None) -> dict[str, str]:
    """Every accepted spelling (squashed) -> key, of ``family`` when given (for "did you mean" hints)."""
    return {s: k for s, k in _SPELLINGS.items() if family is None or MEASURES[k].family == family}
