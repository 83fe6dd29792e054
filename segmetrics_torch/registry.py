"""One record per measure, every family: the registry every layer reads (no torch, nothing of the package imported).

Each :class:`Measure` has its key (the name of ``segmetrics evaluate --measures`` and of ``segmetrics meta``), the
other spellings users type (PySODEvalToolkit's and PySODMetrics' keys such as ``maxEm``, ``Smeasure``, ``wFmeasure``,
the meta-measures' former names such as ``weighted_f``, the table headers), the column header in Markdown and LaTeX,
its direction, its family, where its value sits in a result, the report column that shows it, and the public
:class:`~torchmetrics.Metric` (or loss) class and function that compute it. :func:`canonical` maps any spelling to its
key (case, ``_``, ``-`` and spaces ignored). What is read from here rather than written again: the command's measure
options (``--measures`` of foreground, partition, meta), the report tables' columns and directions of every family,
the meta-measures' directions; what is checked against it by tests: every public Metric's ``higher_is_better``, the
functions and classes it names, and the measure tables of the README and ``docs/`` (each row names registered classes,
each registered class has a row).

Foreground measures (PySODMetrics 1.6.2 conventions, see ``docs/foreground.md``): ``result`` is the ``/``-path of the
value in :class:`~segmetrics_torch.ForegroundMeasures`' flattened result and ``include`` the measure that Metric must
``include`` to compute it (None: always computed). Partition measures (SEISM keys, Pont-Tuset & Marques 2013): ``fb``
needs the boundary matching, the others come from the contingency tables; ``pr_curve`` marks the precision-recall
measures (Fb, Fop, Fr) whose hierarchies have PR curves and ODS/OIS/AP. Boundary (BSDS benchmark), boundary-distance
(``surface``) and proposal measures: ``result`` is the key of the command's record of a run (``ods/f``, ``hausdorff``,
``recall_50``); ``column`` is the report's header where it is not ``header`` (``HD{q}``: the percentile filled in).
Losses (family ``loss``) and meta-measures (``meta``) name their class or function.

Example:
    >>> from segmetrics_torch.registry import canonical, MEASURES
    >>> canonical("maxEm"), canonical("weighted_f"), canonical("Smeasure")
    ('maxe', 'wf', 's')
    >>> MEASURES["wf"].header, MEASURES["mae"].higher_is_better
    ('wF', False)
"""

from __future__ import annotations

import difflib
import importlib.util
from dataclasses import dataclass
from typing import Literal

from ._constants import MAX_CLASSES, MAX_THRESHOLDS  # the library's bounds, which the command's options share
from .errors import InputError, shown_value

__all__ = [
    "DEFAULT_FOREGROUND",
    "DEPRECATED_CLASSES",
    "FOREGROUND",
    "FOREGROUND_PROTOCOLS",
    "INCLUDABLE",
    "MAX_CLASSES",
    "MAX_THRESHOLDS",
    "MEASURES",
    "META_FOREGROUND",
    "META_FOREGROUND_DEFAULT",
    "META_PARTITION_DEFAULT",
    "PARTITION",
    "PARTITION_TABLES",
    "PR_MEASURES",
    "SUITES",
    "SURFACE",
    "SURFACE_SUITE",
    "TABLES",
    "TABLE_END",
    "TABLE_START",
    "THRESHOLD_MEASURES",
    "TOOLBOX_LINE_LAYOUTS",
    "TOOLBOX_RESULTS",
    "Family",
    "Measure",
    "TableRow",
    "aliases",
    "canonical",
    "canonical_list",
    "family_measures",
    "foreground_columns",
    "higher_is_better",
    "lower_is_better",
    "measure_error",
    "meta_name",
    "missing_packages",
    "outside_protocol",
    "parse_measures",
    "render_table",
    "report_columns",
    "with_tables",
]


#: the binary-classification measures of ``threshold_measures`` (one per PySODMetrics 1.6 handler), in the order of
#: PySODMetrics' README: the names of that function's ``measures``, of its results and of the numpy reference's
THRESHOLD_MEASURES = (
    "fmeasure",
    "precision",
    "recall",
    "specificity",
    "fpr",
    "ber",
    "iou",
    "dice",
    "accuracy",
    "kappa",
)

#: the measures :class:`~segmetrics_torch.ForegroundMeasures` can ``include`` beside its own suite, by the name its
#: ``include=`` takes (the ``include`` of the foreground records below) -> the public Metric class of
#: ``segmetrics_torch`` that computes them; the Metric builds its children from this table, and so can any client
#: that wants them without the suite (``getattr(segmetrics_torch, INCLUDABLE[name])(...)``, as the command does)
INCLUDABLE = {
    "threshold_measures": "ThresholdMeasures",
    "size_invariant_f_measure": "SizeInvariantThresholdMeasures",
    "size_invariant_mae": "SizeInvariantMAE",
    "multiscale_iou": "MultiScaleIoU",
    "human_correction_effort": "HumanCorrectionEffort",
    "context_measure": "ContextMeasure",
}


Family = Literal[
    "foreground", "partition", "boundary", "surface", "proposals", "semantic-boundary", "video", "loss", "meta"
]


@dataclass(frozen=True)
class Measure:
    """A measure's names, headers, direction, place in a result, report column and the public class and function
    that compute it (see the module doc)."""

    key: str
    family: Family
    header: str
    latex: str
    higher_is_better: bool
    description: str
    result: str = ""
    include: str | None = None
    aliases: tuple[str, ...] = ()
    pr_curve: bool = False
    #: the public Metric class (a loss: its ``nn.Module``) of ``segmetrics_torch`` that computes it ("" for none)
    metric: str = ""
    #: the public function (of ``segmetrics_torch.functional``, or ``segmetrics_torch.meta``) that computes it
    function: str = ""
    #: the report column's header where it is not ``header``
    column: str = ""
    #: whether the command's report of the family has a column for it (boundary, surface, proposals: the fixed
    #: columns; foreground and partition: the columns are the measures the user names)
    report: bool = True
    #: the keywords of its functions that the command exposes as options for it (``--directed`` applies to HD ...)
    options: tuple[str, ...] = ()

    @property
    def report_header(self) -> str:
        """The header of the measure's column in the command's tables."""
        return self.column or self.header


def _fg(
    key: str,
    header: str,
    result: str,
    description: str,
    metric: str,
    function: str,
    *,
    lower: bool = False,
    include: str | None = None,
    aliases: tuple[str, ...] = (),
    latex: str | None = None,
) -> Measure:
    return Measure(
        key,
        "foreground",
        header,
        latex or header,
        not lower,
        description,
        result,
        include,
        aliases,
        metric=metric,
        function=function,
    )


def _pt(
    key: str,
    header: str,
    description: str,
    metric: str,
    *,
    lower: bool = False,
    pr_curve: bool = False,
    latex: str | None = None,
    column: str = "",
) -> Measure:
    return Measure(
        key,
        "partition",
        header,
        latex or header,
        not lower,
        description,
        key,
        None,
        (),
        pr_curve,
        metric=metric,
        function="partition_measures",
        column=column,
    )


def _other(
    family: Family,
    key: str,
    header: str,
    result: str,
    description: str,
    metric: str,
    function: str = "",
    *,
    lower: bool = False,
    column: str = "",
    aliases: tuple[str, ...] = (),
    report: bool = True,
    options: tuple[str, ...] = (),
) -> Measure:
    return Measure(
        key,
        family,
        header,
        header,
        not lower,
        description,
        result,
        aliases=aliases,
        metric=metric,
        function=function,
        column=column,
        report=report and family not in ("loss", "meta"),
        options=options,
    )


_SI, _MS, _TM = "size_invariant_f_measure", "multiscale_iou", "threshold_measures"

_SIT, _TMS = "SizeInvariantThresholdMeasures", "ThresholdMeasures"
_ST_F, _TM_F = "size_invariant_threshold_measures", "threshold_measures"

# one measure per call, so that the table reads as a table (the formatter would spread each over many lines)
# fmt: off
_ALL = (
    _fg("mae", "MAE", "mae", "mean absolute error", "MAE", "mae", lower=True),
    _fg("s", "S-measure", "s_measure", "S-measure (Fan et al. 2017)", "SMeasure", "s_measure",
        aliases=("sm", "smeasure", "s_measure"), latex="$S_\\alpha$"),
    _fg("wf", "wF", "weighted_f_measure", "weighted F-beta (Margolin et al. 2014)", "WeightedFMeasure",
        "weighted_f_measure", aliases=("wfm", "wfmeasure", "weightedf", "weighted_f", "weighted_f_measure"),
        latex="$F^w_\\beta$"),
    _fg("adpf", "adpF", "f_measure/adaptive", "F-beta at the adaptive threshold", "FMeasure", "f_measure",
        aliases=("adpfm", "f_adaptive")),
    _fg("meanf", "meanF", "f_measure/mean", "mean F-beta over the 256 thresholds", "FMeasure", "f_measure",
        aliases=("meanfm", "avgf", "avgfm", "f_mean")),
    _fg("maxf", "maxF", "f_measure/max", "max F-beta over the 256 thresholds", "FMeasure", "f_measure",
        aliases=("maxfm", "f_max")),
    _fg("adpe", "adpE", "e_measure/adaptive", "E-measure at the adaptive threshold", "EMeasure", "e_measure",
        aliases=("adpem", "e_adaptive")),
    _fg("meane", "meanE", "e_measure/mean", "mean E-measure over the 256 thresholds", "EMeasure", "e_measure",
        aliases=("meanem", "avge", "avgem", "e_mean")),
    _fg("maxe", "maxE", "e_measure/max", "max E-measure over the 256 thresholds", "EMeasure", "e_measure",
        aliases=("maxem", "e_max")),
    _fg("meaniou", "meanIoU", "iou/mean", "mean IoU over the 256 thresholds", "IoU", "iou", aliases=("avgiou", "iou")),
    _fg("meandice", "meanDice", "dice/mean", "mean Dice over the 256 thresholds", "Dice", "dice",
        aliases=("avgdice", "dice", "meandic")),
    _fg("maxiou", "maxIoU", "iou/max", "max IoU over the 256 thresholds", "IoU", "iou"),
    _fg("maxdice", "maxDice", "dice/max", "max Dice over the 256 thresholds", "Dice", "dice", aliases=("maxdic",)),
    _fg("adpiou", "adpIoU", "iou/adaptive", "IoU at the adaptive threshold", "IoU", "iou", aliases=("iou_adaptive",)),
    _fg("adpdice", "adpDice", "dice/adaptive", "Dice at the adaptive threshold", "Dice", "dice",
        aliases=("dice_adaptive", "adpdic")),
    _fg("adpsen", "adpSen", f"{_TM}/recall/adaptive", "sensitivity (recall) at the adaptive threshold", _TMS, _TM_F,
        include=_TM, aliases=("adpsensitivity",)),
    _fg("meansen", "meanSen", f"{_TM}/recall/mean", "mean sensitivity (recall) over the 256 thresholds", _TMS, _TM_F,
        include=_TM, aliases=("avgsen", "meansensitivity")),
    _fg("maxsen", "maxSen", f"{_TM}/recall/max", "max sensitivity (recall) over the 256 thresholds", _TMS, _TM_F,
        include=_TM),
    _fg("adpspe", "adpSpe", f"{_TM}/specificity/adaptive", "specificity at the adaptive threshold", _TMS, _TM_F,
        include=_TM, aliases=("adpspecificity",)),
    _fg("meanspe", "meanSpe", f"{_TM}/specificity/mean", "mean specificity over the 256 thresholds", _TMS, _TM_F,
        include=_TM, aliases=("avgspe", "meanspecificity")),
    _fg("maxspe", "maxSpe", f"{_TM}/specificity/max", "max specificity over the 256 thresholds", _TMS, _TM_F,
        include=_TM),
    _fg("simae", "siMAE", "size_invariant_mae", "size-invariant MAE (Li et al. 2024)", "SizeInvariantMAE",
        "size_invariant_mae", lower=True, include="size_invariant_mae"),
    _fg("siadpf", "siAdpF", f"{_SI}/fmeasure/adaptive", "size-invariant adaptive F", _SIT, _ST_F, include=_SI,
        aliases=("siadpfm",)),
    _fg("simeanf", "siMeanF", f"{_SI}/fmeasure/mean", "size-invariant mean F", _SIT, _ST_F, include=_SI,
        aliases=("simeanfm", "siavgf")),
    _fg("simaxf", "siMaxF", f"{_SI}/fmeasure/max", "size-invariant max F", _SIT, _ST_F, include=_SI,
        aliases=("simaxfm",)),
    _fg("siaucroc", "siAUC-ROC", f"{_SI}/auc_roc", "area under the ROC curve, PySODMetrics' recorder", _SIT, _ST_F,
        include=_SI, aliases=("sisampleaucroc", "aucroc")),
    _fg("siaucpr", "siAUC-PR", f"{_SI}/auc_pr", "area under the PR curve, PySODMetrics' recorder", _SIT, _ST_F,
        include=_SI, aliases=("sisampleaucpr", "aucpr")),
    _fg("adpmsiou", "adpMSIoU", f"{_MS}/adaptive", "multi-scale IoU at the adaptive threshold", "MultiScaleIoU",
        "multiscale_iou", include=_MS),
    _fg("meanmsiou", "meanMSIoU", f"{_MS}/mean", "mean multi-scale IoU (Ahmadzadeh et al. 2021)", "MultiScaleIoU",
        "multiscale_iou", include=_MS, aliases=("msiou", "avgmsiou")),
    _fg("maxmsiou", "maxMSIoU", f"{_MS}/max", "max multi-scale IoU", "MultiScaleIoU", "multiscale_iou", include=_MS),
    _fg("hce", "HCE", "human_correction_effort", "human correction effort (Qin et al. 2022)", "HumanCorrectionEffort",
        "human_correction_effort", lower=True, include="human_correction_effort"),
    _fg("cm", "Cm", "context_measure", "context measure (Wang et al. 2024)", "ContextMeasure", "context_measure",
        include="context_measure", aliases=("context",)),
    Measure("ccm", "foreground", "CCm", "CCm", True, "camouflage context measure (needs the RGB image)",
            "camouflage_context_measure", metric="CamouflageContextMeasure", function="camouflage_context_measure",
            report=False),
    _fg("meanber", "meanBER", f"{_TM}/ber/mean", "mean balanced error rate", _TMS, _TM_F, lower=True, include=_TM,
        aliases=("avgber",)),
    _fg("meankappa", "meanKappa", f"{_TM}/kappa/mean", "mean Cohen's kappa", _TMS, _TM_F, include=_TM,
        aliases=("avgkappa",)),
    _fg("meanacc", "meanAcc", f"{_TM}/accuracy/mean", "mean accuracy", _TMS, _TM_F, include=_TM),
    _pt("fb", "Fb", "boundary F-measure (Martin et al. 2004)", "PartitionBoundaryPR", pr_curve=True),
    _pt("fop", "Fop", "F-measure of objects and parts (Pont-Tuset & Marques 2013)", "ObjectsAndPartsPR", pr_curve=True),
    _pt("fr", "Fr", "F-measure of regions (pairs of pixels)", "RegionPR", pr_curve=True),
    _pt("pri", "PRI", "probabilistic Rand index", "ProbabilisticRandIndex"),
    _pt("voi", "VoI", "variation of information", "VariationOfInformation", lower=True),
    _pt("nvoi", "NVoI", "normalised variation of information", "NormalizedVariationOfInformation"),
    _pt("sc", "SC", "segmentation covering", "SegmentationCovering"),
    _pt("ssc", "SSC", "symmetric segmentation covering", "SegmentationCovering"),
    _pt("dhd", "DHD", "directional Hamming distance (as SEISM: a similarity)", "DirectionalHamming"),
    _pt("sdhd", "SDHD", "symmetric directional Hamming distance (as SEISM: a similarity)", "DirectionalHamming"),
    _pt("vd", "vD", "van Dongen distance (as SEISM: a similarity)", "VanDongen", column="VD"),
    _pt("bgm", "BGM", "bipartite graph matching", "BipartiteGraphMatching"),
    _pt("bce", "BCE", "bidirectional consistency error (as SEISM: a similarity)", "BidirectionalConsistency"),
    _pt("gce", "GCE", "global consistency error (as SEISM: a similarity)", "GlobalConsistency"),
    _pt("lce", "LCE", "local consistency error (as SEISM: a similarity)", "LocalConsistency"),
    # the BSDS boundary benchmark (the report's columns, in its order) and DAVIS' boundary F
    _other("boundary", "ods", "ODS", "ods/f", "F at the dataset-optimal threshold", "BoundaryPR", "boundary_pr"),
    _other("boundary", "ois", "OIS", "ois/f", "F at each image's optimal threshold", "BoundaryPR", "boundary_pr"),
    _other("boundary", "ap", "AP", "ap", "area under the PR curve (pyEdgeEval's AUC)", "BoundaryPR", "boundary_pr"),
    _other("boundary", "r50", "R50", "r50", "recall where precision first reaches 0.5", "BoundaryPR", "boundary_pr"),
    _other("boundary", "mbf", "F", "f", "morphological boundary F (DAVIS)", "MorphologicalBoundaryF",
           "morphological_boundary_f", report=False),
    # boundary distances (the report's columns, in its order), Boundary IoU
    _other("surface", "hd", "HD", "hausdorff", "Hausdorff distance", "HausdorffDistance", "hausdorff_distance",
           lower=True, options=("directed", "distance_metric", "aggregation")),
    _other("surface", "hd95", "HD95", "hausdorff_percentile", "percentile Hausdorff distance (95th by default)",
           "HausdorffDistance", "hd95", lower=True, column="HD{q}",
           options=("directed", "distance_metric", "aggregation")),
    _other("surface", "asd", "ASD", "asd", "average surface distance (directed)", "AverageSurfaceDistance",
           "average_surface_distance", lower=True, options=("distance_metric", "aggregation")),
    _other("surface", "assd", "ASSD", "assd", "average symmetric surface distance", "AverageSurfaceDistance",
           "average_surface_distance", lower=True, options=("distance_metric", "aggregation")),
    _other("surface", "nsd", "NSD", "nsd", "normalised surface distance (surface Dice) at a tolerance",
           "NormalizedSurfaceDistance", "normalized_surface_distance", aliases=("surfacedice",),
           options=("distance_metric",)),
    _other("surface", "biou", "Boundary IoU", "boundary_iou", "Boundary IoU (Cheng et al. 2021)", "BoundaryIoU",
           "boundary_iou", aliases=("boundaryiou",)),
    _other("surface", "cldice", "clDice", "cl_dice", "centreline Dice of tubular structures (Shit et al. 2021)",
           "ClDice", "cl_dice", aliases=("centerlinedice", "centrelinedice")),
    # semantic boundaries (SBD / Cityscapes): the class means of the BSDS matcher's per-class summaries
    _other("semantic-boundary", "mf_ods", "mF (ODS)", "mean/ods_f", "class mean of per-class ODS F",
           "SemanticBoundaryPR", "semantic_boundary_pr"),
    _other("semantic-boundary", "mf_ois", "mF (OIS)", "mean/ois_f", "class mean of per-class OIS F",
           "SemanticBoundaryPR", "semantic_boundary_pr"),
    _other("semantic-boundary", "map", "mAP", "mean/ap", "class mean of per-class AP (BSR; pyEdgeEval's AUC)",
           "SemanticBoundaryPR", "semantic_boundary_pr"),
    # video object segmentation (DAVIS 2016/2017): the global table's columns, in its order
    _other("video", "davis_jf", "J&F", "J&F-Mean", "DAVIS J&F: mean of the objects' J-Mean and F-Mean",
           "VideoObjectSegmentation", "evaluate_davis", aliases=("jandf", "j&fmean")),
    _other("video", "davis_j_mean", "J-Mean", "J-Mean", "region similarity J (IoU), mean over frames then objects",
           "VideoObjectSegmentation", "evaluate_davis"),
    _other("video", "davis_j_recall", "J-Recall", "J-Recall", "fraction of frames with J > 0.5, mean over objects",
           "VideoObjectSegmentation", "evaluate_davis"),
    _other("video", "davis_j_decay", "J-Decay", "J-Decay", "J of the first quarter of frames minus the last (reference "
           "bin edges)", "VideoObjectSegmentation", "evaluate_davis", lower=True),
    _other("video", "davis_f_mean", "F-Mean (contour)", "F-Mean", "boundary F (seg2bmap, disk of ceil(0.008 x "
           "diagonal)), mean over frames then objects", "VideoObjectSegmentation", "evaluate_davis"),
    _other("video", "davis_f_recall", "F-Recall", "F-Recall", "fraction of frames with F > 0.5, mean over objects",
           "VideoObjectSegmentation", "evaluate_davis"),
    _other("video", "davis_f_decay", "F-Decay", "F-Decay", "F of the first quarter of frames minus the last (reference "
           "bin edges)", "VideoObjectSegmentation", "evaluate_davis", lower=True),
    # object proposals (the report's columns, in its order)
    _other("proposals", "ji", "J_i", "jaccard_object", "best overlap per object, averaged over objects",
           "ProposalRecall"),
    _other("proposals", "jc", "J_c", "jaccard_class", "best overlap per object, averaged per class", "ProposalRecall"),
    _other("proposals", "recall50", "R@.5", "recall_50", "objects recalled at overlap 0.5", "ProposalRecall"),
    _other("proposals", "recall70", "R@.7", "recall_70", "objects recalled at overlap 0.7", "ProposalRecall"),
    _other("proposals", "ar", "AR", "average_recall", "average recall over overlaps 0.5..0.95", "ProposalRecall"),
    # differentiable losses (lower is better: 1 - the measure)
    _other("loss", "eloss", "E-measure loss", "", "1 - E-measure", "EMeasureLoss", lower=True),
    _other("loss", "wfloss", "weighted F loss", "", "1 - weighted F-beta", "WeightedFMeasureLoss", lower=True),
    _other("loss", "softfloss", "soft F loss", "", "1 - soft F-beta", "SoftFMeasureLoss", lower=True),
    _other("loss", "softiouloss", "soft IoU loss", "", "1 - soft IoU", "SoftIoULoss", lower=True),
    _other("loss", "softcldiceloss", "soft clDice loss", "", "1 - soft clDice", "SoftClDiceLoss", lower=True),
    # meta-measures (Pont-Tuset & Marques 2013): each a % of correct decisions, higher is better
    _other("meta", "sihd", "SIHD", "", "swapped-image human discrimination (% correct)", "", "sihd"),
    _other("meta", "sabd", "SABD", "", "state-of-the-art baseline discrimination (% correct)", "", "sabd"),
    _other("meta", "sisd", "SISD", "", "swapped-image state-of-the-art discrimination (% correct)", "", "sisd"),
)
# fmt: on

#: key -> measure, by family: foreground, partition, boundary, surface, proposals, loss, meta
MEASURES: dict[str, Measure] = {m.key: m for m in _ALL}
#: the foreground keys a table can show (``--measures``), in the tables' order
FOREGROUND: tuple[str, ...] = tuple(m.key for m in _ALL if m.family == "foreground" and m.report)
#: the foreground table of ``segmetrics evaluate foreground`` without ``--measures``
DEFAULT_FOREGROUND: tuple[str, ...] = (
    "mae",
    "s",
    "wf",
    "adpf",
    "meanf",
    "maxf",
    "adpe",
    "meane",
    "maxe",
    "meaniou",
    "meandice",
)
#: the foreground measures of :mod:`segmetrics_torch.meta` (one ForegroundMeasures pass) -> the name its results
#: are reported under (kept: reports and JSON written before the registry use them; any spelling is accepted)
META_FOREGROUND: dict[str, str] = {
    "mae": "mae",
    "s": "s_measure",
    "wf": "weighted_f",
    "adpf": "f_adaptive",
    "meanf": "f_mean",
    "maxf": "f_max",
    "adpe": "e_adaptive",
    "meane": "e_mean",
    "maxe": "e_max",
}
#: ``segmetrics meta partition``'s default measures: CVPR 2013 Table 2's, in its order (SEISM keys)
META_PARTITION_DEFAULT: tuple[str, ...] = (
    "fb",
    "fop",
    "voi",
    "ssc",
    "vd",
    "dhd",
    "bce",
    "bgm",
    "pri",
    "sc",
    "fr",
    "sdhd",
)
#: ``segmetrics meta foreground``'s default measures
META_FOREGROUND_DEFAULT: tuple[str, ...] = (
    "e_adaptive",
    "e_mean",
    "e_max",
    "weighted_f",
    "f_adaptive",
    "f_mean",
    "f_max",
    "mae",
    "s_measure",
)
#: the partition keys (SEISM's), Fb first
PARTITION: tuple[str, ...] = tuple(m.key for m in _ALL if m.family == "partition")
#: the partition measures computed from contingency tables (all but Fb)
PARTITION_TABLES: tuple[str, ...] = tuple(k for k in PARTITION if k != "fb")
#: the boundary-distance keys, and those of :class:`~segmetrics_torch.SurfaceDistanceMeasures`' one pass (the table of
#: ``segmetrics evaluate surface`` without ``--measures``)
SURFACE: tuple[str, ...] = tuple(m.key for m in _ALL if m.family == "surface")
SURFACE_SUITE: tuple[str, ...] = ("hd", "hd95", "asd", "assd", "nsd")
#: the partition measures with precision-recall curves (ODS/OIS/AP on hierarchies)
PR_MEASURES: tuple[str, ...] = tuple(m.key for m in _ALL if m.pr_curve)

#: the conventions of the foreground measures by name (``protocol=`` of the functions and Metrics, ``segmetrics
#: evaluate foreground --protocol``): PySODMetrics 1.6.2 (the default) and the versions of the MATLAB evaluation
#: toolbox of PraNet / Inf-Net / SINet (``segmetrics_torch.functional.foreground.matlab_toolbox.TOOLBOX_PROTOCOLS``,
#: ``docs/matlab-toolbox.md``)
FOREGROUND_PROTOCOLS: tuple[str, ...] = ("pysodmetrics", "matlab-toolbox", "matlab-toolbox-2020-11")

#: the layouts of the toolbox's result line (``segmetrics_torch.functional.format_toolbox_line``): PraNet's
#: ``eval/main.m``, Inf-Net's ``EvaluationTool/main.m``, SINet's and the COD toolbox's ``main.m``
TOOLBOX_LINE_LAYOUTS: tuple[str, ...] = ("pranet", "inf-net", "cod")

#: where each foreground measure's value sits in the result of a MATLAB-toolbox protocol (the ``/``-paths of
#: ``summarize_toolbox``'s result, as ``Measure.result`` is of the default convention's); the foreground measures not
#: listed (size invariance, multi-scale IoU, HCE, context, BER, kappa, accuracy) are not part of the toolbox
TOOLBOX_RESULTS: dict[str, str] = {
    "mae": "mae",
    "s": "s_measure",
    "wf": "weighted_f_measure",
    "adpf": "f_measure/adaptive",
    "meanf": "f_measure/mean",
    "maxf": "f_measure/max",
    "adpe": "e_measure/adaptive",
    "meane": "e_measure/mean",
    "maxe": "e_measure/max",
    "meaniou": "iou/mean",
    "maxiou": "iou/max",
    "meandice": "dice/mean",
    "maxdice": "dice/max",
    "adpsen": "sensitivity/adaptive",
    "meansen": "sensitivity/mean",
    "maxsen": "sensitivity/max",
    "adpspe": "specificity/adaptive",
    "meanspe": "specificity/mean",
    "maxspe": "specificity/max",
}


@dataclass(frozen=True)
class TableRow:
    """One row of a measure table of the README: what is measured, our class / function, the paper, the reference
    reproduced (with its tolerance). Markdown, as printed."""

    measure: str
    names: str
    paper: str
    reference: str

    def markdown(self) -> str:
        cells = (self.measure, self.names, self.paper, self.reference)
        return "|" + "|".join(f" {c} " if c else " " for c in cells) + "|"


#: the README's measure tables: the header, then one row per class (or group) of measures; the README's tables are
#: written from these (``python -m segmetrics_torch._readme README.md``; a test fails when they differ)
TABLES: dict[str, tuple[str, tuple[TableRow, ...]]] = {
    "foreground": (
        "| measure | class / function | paper | reference reproduced (tolerance) |",
        (
            TableRow(
                "MAE",
                "`MAE` / `mae`",
                "Perazzi et al., CVPR 2012",
                "PySODMetrics 1.6.2 `MAE` (1e-6; within 1e-15 on its test images)",
            ),
            TableRow(
                "F-beta (beta^2 = 0.3): adaptive, mean, max, 256-point curve, PR curve",
                "`FMeasure` / `f_measure`",
                "Achanta et al., CVPR 2009",
                "PySODMetrics 1.6.2 `Fmeasure` (1e-6)",
            ),
            TableRow(
                "weighted F-beta",
                "`WeightedFMeasure` / `weighted_f_measure`",
                "Margolin, Zelnik-Manor & Tal, CVPR 2014",
                "MATLAB `WFb.m` via PySODMetrics 1.6.2 `WeightedFmeasure` (1e-6)",
            ),
            TableRow(
                "E-measure: adaptive, mean, max, curve",
                "`EMeasure` / `e_measure`",
                "Fan et al., IJCAI 2018",
                "Fan's `Enhancedmeasure.m` via PySODMetrics 1.6.2 `Emeasure` (1e-6)",
            ),
            TableRow(
                "S-measure",
                "`SMeasure` / `s_measure`",
                "Fan et al., ICCV 2017",
                "PySODMetrics 1.6.2 `Smeasure` (1e-6; see deviations)",
            ),
            TableRow(
                "IoU (Jaccard), Dice: adaptive, mean, max, curve",
                "`IoU`, `Dice` / `iou`, `dice`",
                "-",
                "PySODMetrics 1.6.2 `FmeasureV2` handlers (1e-6)",
            ),
            TableRow(
                "precision / recall: adaptive and curves",
                "`ForegroundMeasures`, `FMeasure` / `precision_recall`",
                "-",
                "PySODMetrics 1.6.2 `FmeasureV2` / `Fmeasure` (1e-6)",
            ),
            TableRow(
                "all of the above from one pass",
                "`ForegroundMeasures` / `foreground_measures`",
                "",
                "",
            ),
            TableRow(
                "the MATLAB evaluation toolbox of PraNet / Inf-Net / SINet as a protocol: mean / max / adaptive Dice, "
                "IoU, sensitivity, specificity, F, E; S-measure, MAE, weighted F ([docs/matlab-toolbox.md]"
                "(docs/matlab-toolbox.md); also `protocol=` of the measures above)",
                "`MatlabToolboxMeasures` / `toolbox_measures`",
                "Fan et al., PraNet (MICCAI 2020), Inf-Net (IEEE TMI 2020), SINet (CVPR 2020)",
                "the toolboxes' `main.m`: the COD toolbox's saved output (F, precision, recall bit for bit; E 2e-12; "
                "S 4e-13; MAE 6e-14; weighted F 1.2e-10)",
            ),
            TableRow(
                "FmeasureV2 handler set: F-beta, precision, recall/TPR/sensitivity, specificity/TNR, FPR, BER, IoU, "
                "Dice, overall accuracy, Cohen's kappa; adaptive, dynamic (256-curve, mean, max), binary `p > 0.5` per "
                "image or pooled",
                "`ThresholdMeasures` / `threshold_measures`",
                "Achanta et al., CVPR 2009 (adaptive threshold); Cohen 1960 (kappa)",
                "PySODMetrics 1.6.2 `FmeasureV2` + its ten handlers (1e-6; bit-equal in the tests)",
            ),
            TableRow(
                "size-invariant threshold measures (per GT component, bounding boxes)",
                "`SizeInvariantThresholdMeasures` / `size_invariant_threshold_measures`",
                "Li et al., ICML 2024",
                "PySODMetrics 1.6.2 `SizeInvarianceFmeasureV2` (1e-6; recorder keys `si_sample_*`, `si_overall_*`)",
            ),
            TableRow(
                "AUC-ROC, AUC-PR (per target, size-invariant)",
                "`SizeInvariantThresholdMeasures` (`auc_roc`, `auc_pr`) / `size_invariant_threshold_measures`",
                "Li et al., ICML 2024",
                "PySODMetrics' `examples/metric_recorder.py` `si_sample_auc_roc` / `_pr` (1e-12)",
            ),
            TableRow(
                "size-invariant MAE",
                "`SizeInvariantMAE` / `size_invariant_mae`",
                "Li et al., ICML 2024",
                "PySODMetrics 1.6.2 `SizeInvarianceMAE` (1e-6)",
            ),
            TableRow(
                "multi-scale IoU: adaptive, dynamic (257-curve, mean, max), binary",
                "`MultiScaleIoU` (former name `MSIoU`, deprecated) / `multiscale_iou`",
                "Ahmadzadeh et al., ICIP 2021",
                "PySODMetrics 1.6.2 `MSIoU` (1e-6; float16 denominators reproduced)",
            ),
            TableRow(
                "human correction effort (HCE; lower is better)",
                "`HumanCorrectionEffort` / `human_correction_effort`",
                "Qin et al., ECCV 2022 (DIS)",
                "PySODMetrics 1.6.2 `HumanCorrectionEffortMeasure` (equal counts; OpenCV contours/polygons on the CPU)",
            ),
            TableRow(
                "context measure",
                "`ContextMeasure` / `context_measure`",
                "Wang, Ji, Shao, Cheng & Fan, arXiv:2512.07076 (2025)",
                "PySODMetrics 1.6.2 `ContextMeasure` (1e-6; filtered on the GT box by FFT, any device)",
            ),
            TableRow(
                "camouflage context measure (needs the RGB image)",
                "`CamouflageContextMeasure` / `camouflage_context_measure`",
                "same paper",
                "PySODMetrics 1.6.2 `CamouflageContextMeasure` (1e-6; OpenCV, scikit-learn 1-NN, scikit-image "
                "CIEDE2000)",
            ),
        ),
    ),
    "boundary": (
        "| measure | class / function | paper | reference reproduced (tolerance) |",
        (
            TableRow(
                "boundary PR: ODS, OIS, AP (pyEdgeEval's `AUC`; its `AP` as `ap_pyedgeeval`), R50 (where precision "
                "first reaches 0.5; Dollar's as `r50_dollar`), PR curve, per-image best",
                "`BoundaryPR` / `boundary_pr`, `boundary_pr_counts`",
                "Martin, Fowlkes & Malik, TPAMI 2004; Arbelaez et al., TPAMI 2011",
                "BSR `bench/benchmarks` (MATLAB): `test_1`/`test_2`/`test_3` per threshold and summary within 1e-3; "
                "official gPb-owt-ucm per-image best F within 2e-3; SEISM per-image Fb: sumR/sumP exact, F within "
                "2e-3; pyEdgeEval: sumR/sumP exact on raw maps (its thinning stops early: `docs/boundaries.md`)",
            ),
            TableRow(
                "morphological boundary F, precision, recall",
                "`MorphologicalBoundaryF` / `morphological_boundary_f`",
                "Perazzi, Pont-Tuset et al., CVPR 2016",
                "DAVIS `f_boundary.m` (numpy port, 1e-15)",
            ),
        ),
    ),
    "partition": (
        "| measure (key) | class | paper | reference reproduced (tolerance) |",
        (
            TableRow(
                "objects and parts F, P, R (`fop`)",
                "`ObjectsAndPartsPR`",
                "Pont-Tuset & Marques, CVPR 2013",
                "SEISM per-image gPb-UCM `fop`, 20 images x 5 thresholds (1e-6, the files' `%f`); QuadTree `fop` from "
                "the image size (1e-6); dataset ODS/OIS/AP from the 200-image files = SEISM's pr_curves",
            ),
            TableRow(
                "boundary F of a partition (`fb`)",
                "`PartitionBoundaryPR`",
                "Martin et al. 2004",
                "SEISM per-image `fb`: sumR/sumP exact, F within 2e-3 (gPb-UCM and QuadTree); ODS/OIS/AP from the "
                "200-image files = SEISM's",
            ),
            TableRow(
                "regions (pairs of pixels) F (`fr`)",
                "`RegionPR`",
                "Martin 2003",
                "scikit-image `adapted_rand_error(ignore_labels=())` (1e-9)",
            ),
            TableRow(
                "probabilistic Rand index (`pri`)",
                "`ProbabilisticRandIndex`",
                "Unnikrishnan et al., TPAMI 2007",
                "scikit-learn `rand_score` (1e-9); BSR `test_1`/`test_4`/`test_5` (printed precision)",
            ),
            TableRow(
                "variation of information, bits (`voi`), normalised (`nvoi`)",
                "`VariationOfInformation`, `NormalizedVariationOfInformation`",
                "Meila 2005",
                "scikit-image `variation_of_information` (1e-9); BSR `test_1`/`4`/`5`",
            ),
            TableRow(
                "covering of the GT by S (`ssc`, BSDS covering) and of S by the GT (`sc`)",
                "`SegmentationCovering(direction=...)`",
                "Arbelaez et al., TPAMI 2011",
                "BSR `test_1`/`4`/`5` covering ODS/OIS/Best (printed precision)",
            ),
            TableRow(
                "directional Hamming both ways (`dhd`, `sdhd`), van Dongen (`vd`)",
                "`DirectionalHamming`, `VanDongen`",
                "Huang & Dom 1995; van Dongen 2000",
                "numpy oracle from SEISM `dhd.hpp` (1e-9)",
            ),
            TableRow(
                "bipartite graph matching (`bgm`)",
                "`BipartiteGraphMatching`",
                "Jiang et al. 2006",
                "oracle with `scipy.optimize.linear_sum_assignment` (exact)",
            ),
            TableRow(
                "1 - BCE / GCE / LCE (`bce`, `gce`, `lce`)",
                "`BidirectionalConsistency`, `GlobalConsistency`, `LocalConsistency`",
                "Martin et al., ICCV 2001",
                "numpy oracle from SEISM `bce_gce_lce.hpp` (1e-9)",
            ),
            TableRow(
                "all of the above from one pass (one contingency table per annotator)",
                "`PartitionMeasures` / `partition_measures`",
                "",
                "",
            ),
            TableRow(
                "hierarchies: ODS / OIS / AP of every measure, BSR region benchmark",
                "`HierarchyMeasures`, `RegionBenchmark` / `hierarchy_measures`",
                "SEISM scripts; BSR `collect_eval_reg.m`",
                "BSR `test_1` (ucm2), `test_4`/`test_5` (segs) summary lines to the printed digit",
            ),
        ),
    ),
    "other": (
        "| other families | class / function | paper | reference reproduced |",
        (
            TableRow(
                "Hausdorff distance (directed, symmetric), percentile Hausdorff (HD95), 2-D and 3-D, spacing (per "
                "image too), label maps or one-hot (`input_format=`)",
                "`HausdorffDistance` / `hausdorff_distance`, `hd95` (`convention=`)",
                "Huttenlocher et al., TPAMI 1993",
                "MONAI 1.6 (default; 1e-6 rel., float32; its percentile interpolates in float32: up to ~3e-5 where the "
                "rank falls in a large gap), MedPy 0.5.2 and DeepMind `surface-distance` 0.1 (1e-9), TorchMetrics 1.9 "
                "(1e-6; exact on non-square images where it is not) "
                "([`docs/surface-distances.md`](docs/surface-distances.md))",
            ),
            TableRow(
                "average surface distance (directed), ASSD",
                "`AverageSurfaceDistance` / `average_surface_distance` (`symmetric=`)",
                "-",
                "the same references and tolerances",
            ),
            TableRow(
                "normalised surface distance / surface Dice at a tolerance (per class)",
                "`NormalizedSurfaceDistance` / `normalized_surface_distance` (`use_subvoxels=`)",
                "Nikolov et al., 2018",
                "MONAI `compute_surface_dice` (voxel counts, subvoxels), DeepMind `compute_surface_dice_at_tolerance`",
            ),
            TableRow(
                "Boundary IoU (2-D)",
                "`BoundaryIoU` / `boundary_iou`",
                "Cheng et al., CVPR 2021",
                "the authors' `mask_to_boundary` rule with OpenCV erosion (1e-9)",
            ),
            TableRow(
                "clDice (centreline Dice of tubular structures), 2-D and 3-D; its soft form as a loss",
                "`ClDice` / `cl_dice`; `SoftClDiceLoss` / `soft_cl_dice_loss`",
                "Shit et al., CVPR 2021",
                "the authors' `cldice_metric` on scikit-image skeletons (bit-equal where finite); MONAI 1.6 "
                "`SoftclDiceLoss` (bit-equal, gradients too)",
            ),
            TableRow(
                "all of the boundary distances from one pass",
                "`SurfaceDistanceMeasures` / `surface_distance_measures`",
                "",
                "",
            ),
            TableRow(
                "semantic boundaries per class (SBD 20, Cityscapes 19): ODS, OIS, AP and their class means (mF), PR "
                "curves; presets MATLAB (pre-SEAL, SBD benchmark), pre-/post-SEAL, instance-sensitive, thin/raw",
                "`SemanticBoundaryPR` / `semantic_boundary_pr`, `semantic_boundary_counts`",
                "Hariharan et al., ICCV 2011; Yu et al. (SEAL), ECCV 2018; Cordts et al., CVPR 2016",
                "the SBD MATLAB benchmark's output (`sbd_bench`: within 1e-3, sumR/sumP exact); pyEdgeEval 0.2.8's "
                "presets (sumR/sumP exact on raw maps) ([`docs/semantic-boundaries.md`](docs/semantic-boundaries.md))",
            ),
            TableRow(
                "video object segmentation (DAVIS 2016/2017): J&F, J/F Mean, Recall, Decay per object and sequence, "
                "semi-supervised and unsupervised (Hungarian matching of up to 20 proposals)",
                "`VideoObjectSegmentation` / `evaluate_davis`, `davis_j_and_f`, `davis_statistics`",
                "Perazzi et al., CVPR 2016; Pont-Tuset et al., arXiv 2017; Caelles et al., arXiv 2019",
                "`davis2017-evaluation`'s logic (CSV text identical, J/F within 1e-15); vos-benchmark 0.1.0 (J/F "
                "Mean within 1e-9) ([`docs/video.md`](docs/video.md))",
            ),
            TableRow(
                "object proposals: best J (and boundary F) per object vs number of proposals, recall at J > t, average "
                "recall",
                "`ProposalRecall`",
                "Pont-Tuset et al., TPAMI 2017 (MCG)",
                "MCG `eval_proposals.m` protocol, numpy loop oracle ([`docs/proposals.md`](docs/proposals.md))",
            ),
            TableRow(
                "losses: 1 - E-measure, 1 - weighted F, soft F, soft IoU",
                "`EMeasureLoss`, `WeightedFMeasureLoss`, `SoftFMeasureLoss`, `SoftIoULoss`",
                "Fan et al. 2018; Margolin et al. 2014",
                "equal to 1 - the metric on binary maps (1e-12) ([`docs/training.md`](docs/training.md))",
            ),
            TableRow(
                "meta-measures: SIHD, SABD, SISD; generic-map, noise, GT-switch, annotation-error tests; baselines",
                "`segmetrics_torch.meta` (`sihd`, `sabd`, `sisd`), `segmetrics meta`",
                "Pont-Tuset & Marques, CVPR 2013; Margolin et al. 2014; Fan et al. 2017, 2018",
                "SEISM `SIHD_error.m` rules, SEISM's QuadTree outputs "
                "([`docs/meta-measures.md`](docs/meta-measures.md))",
            ),
        ),
    ),
}


#: the README's markers around a generated table (``{name}``: a key of :data:`TABLES`)
TABLE_START = "<!-- measure table {name}: generated from segmetrics_torch/registry.py, edit the rows there -->"
TABLE_END = "<!-- end of measure table -->"


def render_table(name: str) -> str:
    """The Markdown of the measure table ``name`` of :data:`TABLES` (header, rule, rows)."""
    header, rows = TABLES[name]
    rule = "|" + "---|" * header.count("|", 1)
    return "\n".join([header, rule, *(row.markdown() for row in rows)])


def with_tables(text: str) -> str:
    """``text`` (the README) with every generated measure table rewritten from :data:`TABLES`.

    Raises:
        ValueError: a table of :data:`TABLES` without its markers in ``text``.
    """
    for name in TABLES:
        start = TABLE_START.format(name=name)
        begin = text.find(start)
        end = text.find(TABLE_END, begin)
        if begin < 0 or end < 0:
            raise ValueError(f"the measure table {name!r} has no markers ({start!r} ... {TABLE_END!r})")
        text = text[: begin + len(start)] + "\n" + render_table(name) + "\n" + text[end:]
    return text


#: the Metrics that compute several measures in one pass, a chosen set of them (each measure's record names its own
#: class): their ``higher_is_better`` is None where their measures' directions differ
SUITES: dict[str, Family] = {
    "ForegroundMeasures": "foreground",
    "MatlabToolboxMeasures": "foreground",
    "ThresholdMeasures": "foreground",
    "SizeInvariantThresholdMeasures": "foreground",
    "PartitionMeasures": "partition",
    "HierarchyMeasures": "partition",
    "RegionBenchmark": "partition",
    "SurfaceDistanceMeasures": "surface",
}

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


def foreground_columns(
    names: list[str] | tuple[str, ...] | None, protocol: str = "pysodmetrics"
) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """``(columns, lower_is_better keys, measures to include)`` of a foreground table of the measures ``names``
    (canonical keys of the foreground family; None: :data:`DEFAULT_FOREGROUND`): the columns as ``(result key,
    header)``, the result keys where lower is better, and the measures
    :class:`~segmetrics_torch.ForegroundMeasures` must ``include`` to compute them. With a MATLAB-toolbox
    ``protocol`` (:data:`FOREGROUND_PROTOCOLS`) the result keys are :data:`TOOLBOX_RESULTS`' and nothing is included
    (a measure outside the toolbox: ``ValueError``, see :func:`outside_protocol`).

    Example:
        >>> foreground_columns(["mae", "s"])[:2]
        ([('mae', 'MAE'), ('s_measure', 'S-measure')], ['mae'])
        >>> foreground_columns(["meansen"], "matlab-toolbox")
        ([('sensitivity/mean', 'meanSen')], [], [])
    """
    keys = list(names or DEFAULT_FOREGROUND)
    if protocol != "pysodmetrics":
        outside = outside_protocol(keys, protocol)
        if outside:
            raise ValueError(f"not part of the {protocol} protocol: {', '.join(outside)}")
        columns = [(TOOLBOX_RESULTS[k], MEASURES[k].header) for k in keys]
        return columns, [TOOLBOX_RESULTS[k] for k in keys if not MEASURES[k].higher_is_better], []
    columns = [(MEASURES[k].result, MEASURES[k].header) for k in keys]
    lower = [MEASURES[k].result for k in keys if not MEASURES[k].higher_is_better]
    include = list(dict.fromkeys(m for k in keys if (m := MEASURES[k].include)))
    return columns, lower, include


def outside_protocol(names: list[str] | tuple[str, ...] | None, protocol: str) -> list[str]:
    """The measures of ``names`` (canonical foreground keys; None: :data:`DEFAULT_FOREGROUND`) that the foreground
    ``protocol`` does not compute (a name of :data:`FOREGROUND_PROTOCOLS`; an unknown one: ``ValueError``).

    Example:
        >>> outside_protocol(["meansen", "hce", "simae"], "matlab-toolbox")
        ['hce', 'simae']
    """
    if protocol not in FOREGROUND_PROTOCOLS:
        raise ValueError(
            f"Expected `protocol` to be one of {', '.join(map(repr, FOREGROUND_PROTOCOLS))}, got {protocol!r}."
        )
    if protocol == "pysodmetrics":
        return []
    return [k for k in names or DEFAULT_FOREGROUND if k not in TOOLBOX_RESULTS]


def measure_error(names: object, family: Family) -> str | None:
    """Why ``names`` (a list, or a comma-separated string) is not a list of ``family``'s table measures, naming the
    unknown token and the nearest spellings; None when it is one.

    Example:
        >>> measure_error("mae,maxf", "foreground") is None
        True
        >>> measure_error("mea", "foreground").split(";")[0]
        "unknown measure 'mea'"
    """
    if isinstance(names, str):
        names = [n for n in names.split(",") if n.strip()]
    if not isinstance(names, (list, tuple)) or not names or not all(isinstance(n, str) for n in names):
        return f"expected a comma-separated list of measure names, got {shown_value(names)}"
    known = [m.key for m in _ALL if m.family == family and m.report]
    for name in names:
        key = canonical(name, family)
        if key is None:
            near = difflib.get_close_matches(_squash(name), [*known, *aliases(family)], n=3, cutoff=0.5)
            hint = f"; did you mean {' or '.join(repr(n) for n in dict.fromkeys(near))}?" if near else ""
            return f"unknown measure {name.strip()!r}{hint} (known: {', '.join(known)})"
        if not MEASURES[key].report:  # a library measure the command's table has no column for
            m = MEASURES[key]
            where = [f"segmetrics_torch.{m.metric}"] if m.metric else []
            where += [f"segmetrics_torch.functional.{m.function}"] if m.function else []
            return (
                f"the measure {name.strip()!r} is not in the command's {family} table: {m.description}; compute it "
                f"with {' or '.join(where) or 'the library'}"
            )
    return None


def canonical_list(names: object, family: Family) -> list[str] | None:
    """``names`` (a list, or a comma-separated string) as ``family``'s measure keys, other spellings mapped
    (PySODEvalToolkit's ``maxEm``, ``Smeasure`` ...), duplicates dropped; None when one is unknown (see
    :func:`measure_error` for the message).

    Example:
        >>> canonical_list("maxEm, Smeasure, mae, MAE", "foreground")
        ['maxe', 's', 'mae']
    """
    if measure_error(names, family) is not None:
        return None
    if isinstance(names, str):
        names = [n for n in names.split(",") if n.strip()]
    assert isinstance(names, (list, tuple))
    return list(dict.fromkeys(c for n in names if (c := canonical(n, family)) is not None))


#: the optional packages a measure runs (the ``opencv`` extra): measure -> import names
REQUIRES: dict[str, tuple[str, ...]] = {"hce": ("cv2", "skimage")}
_PACKAGE_NAMES = {"cv2": "OpenCV", "skimage": "scikit-image", "sklearn": "scikit-learn"}


def missing_packages(names: list[str] | tuple[str, ...] | None) -> str | None:
    """Why the measures ``names`` (keys) cannot run here, naming the packages and the extra; None when they can.
    Checked before any image is read (the measure would otherwise fail after the decoding)."""
    for name in names or ():
        absent = [m for m in REQUIRES.get(name, ()) if importlib.util.find_spec(m) is None]
        if absent:
            listed = " and ".join(_PACKAGE_NAMES.get(m, m) for m in absent)
            return f"the measure {name!r} needs {listed}: pip install 'segmetrics-torch[opencv]'"
    return None


def parse_measures(
    text: object, family: Family, *, option: str = "measures", protocol: str = "pysodmetrics"
) -> list[str] | None:
    """The measures a user named (``text``: a comma-separated string or a list; None: the family's default table,
    returned as None) as ``family``'s keys, checked before anything is read: a name no spelling matches, a measure
    whose optional packages are missing (:func:`missing_packages`), an unknown foreground ``protocol`` or a measure
    outside it (:func:`outside_protocol`) is an :class:`~segmetrics_torch.errors.InputError` naming ``option``.

    Example:
        >>> parse_measures("wFmeasure,maxEm", "foreground", option="--measures")
        ['wf', 'maxe']
        >>> parse_measures(None, "foreground") is None
        True
    """
    if protocol not in FOREGROUND_PROTOCOLS:
        raise InputError(f"--protocol: unknown protocol {protocol!r} (known: {', '.join(FOREGROUND_PROTOCOLS)})")
    if text is None:
        return None
    problem = measure_error(text, family)
    names = canonical_list(text, family) if problem is None else None
    if names is None:
        raise InputError(f"{option}: {problem}")
    problem = missing_packages(names)
    if problem is not None:
        raise InputError(f"{option}: {problem}")
    outside = outside_protocol(names, protocol)
    if outside:
        raise InputError(
            f"{option}: {', '.join(outside)} {'is' if len(outside) == 1 else 'are'} not part of the {protocol} "
            "protocol (see docs/matlab-toolbox.md; leave out --protocol for the PySODMetrics measures)"
        )
    return names


def meta_name(name: str) -> str:
    """The name :mod:`segmetrics_torch.meta` reports a measure under, from any spelling (``"wf"``, ``"wFmeasure"``,
    ``"weighted_f"`` -> ``"weighted_f"``; ``"Fop"`` -> ``"fop"``); ``name`` itself when it spells no measure."""
    key = canonical(name)
    return name if key is None else META_FOREGROUND.get(key, key)


def aliases(family: str | None = None) -> dict[str, str]:
    """Every accepted spelling (squashed) -> key, of ``family`` when given (for "did you mean" hints)."""
    return {s: k for s, k in _SPELLINGS.items() if family is None or MEASURES[k].family == family}


def family_measures(family: Family) -> tuple[Measure, ...]:
    """The measures of ``family``, in the registry's order (the report's column order).

    Example:
        >>> [m.key for m in family_measures("surface")]
        ['hd', 'hd95', 'asd', 'assd', 'nsd', 'biou', 'cldice']
    """
    return tuple(m for m in _ALL if m.family == family)


def report_columns(family: Family) -> tuple[tuple[str, str], ...]:
    """``(result key, header)`` of the fixed columns of the command's report of ``family`` (boundary, surface,
    proposals), in order; a header may hold ``{q}`` (the percentile of HD95).

    Example:
        >>> report_columns("boundary")
        (('ods/f', 'ODS'), ('ois/f', 'OIS'), ('ap', 'AP'), ('r50', 'R50'))
    """
    return tuple((m.result, m.report_header) for m in family_measures(family) if m.report)


def higher_is_better(family: Family, result: str) -> bool | None:
    """The direction of the value at ``result`` of a ``family`` record, as :func:`lower_is_better` finds it (the
    measure at that path, else the scalar measure the key extends); None for a key no measure names (a threshold, a
    count), so that a caller ranking images by it can tell "no direction" from "higher is better".

    Example:
        >>> higher_is_better("foreground", "mae"), higher_is_better("surface", "hausdorff/1")
        (False, False)
        >>> higher_is_better("boundary", "f"), higher_is_better("boundary", "threshold")
        (True, None)
    """
    measures = family_measures(family)
    found = [m for m in measures if m.result == result] or [
        m for m in measures if "/" not in m.result and m.result == result.split("/")[0]
    ]
    return None if not found else not any(not m.higher_is_better for m in found)


def lower_is_better(family: Family, result: str) -> bool:
    """Whether lower is better for the value at ``result`` of a ``family`` record: the direction of the measure at that
    result path, else of the scalar measure the key extends (``hausdorff/2`` -> HD, ``voi/ods`` -> VoI); False for a
    key no measure names.

    Example:
        >>> lower_is_better("surface", "hausdorff/1"), lower_is_better("surface", "nsd")
        (True, False)
        >>> lower_is_better("partition", "voi/ods"), lower_is_better("partition", "region_benchmark/covering/ods")
        (True, False)
    """
    measures = family_measures(family)
    exact = [m for m in measures if m.result == result]
    # a key extending a scalar measure's (a class, ODS / OIS of a hierarchy) takes that measure's direction
    found = exact or [m for m in measures if "/" not in m.result and m.result == result.split("/")[0]]
    return any(not m.higher_is_better for m in found)
