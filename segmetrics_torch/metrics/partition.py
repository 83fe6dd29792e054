"""torchmetrics ``Metric`` classes of the partition measures (SEISM) and of hierarchies (ODS/OIS/AP, BSR regions).

Every state is a sum reduced with ``"sum"``: per measure the sum over images of its per-image value (Fop and Fr: of
precision and recall, summarised as F of the means as SEISM's ``gather_measure.m``; Fb: the boundary counts), the
sums at each image's own best level (OIS) and the image count. A dataset split across DDP processes therefore gives
the single-process result up to the order of float64 additions.

Conventions follow SEISM: similarities in [0, 1] with 1 for identical partitions (``dhd``, ``vd``, ``bgm`` and the
consistency measures are ``1 - distance / N`` or ``1 - error``), except VoI, a distance in bits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, TypedDict

import torch
from torch import Tensor

from .._checks import ImageBatch, check_bool, check_choice, check_positive_float
from ..functional.boundary.bsds import default_thresholds
from ..functional.boundary.summary import UniqueOccurrence, check_unique_occurrence
from ..functional.partition.hierarchy import HIERARCHY_FORMATS, HierarchyFormat, check_num_regions, hierarchy_measures
from ..functional.partition.segmentation import partition_measures
from ..functional.partition.summary import PR_MEASURES, hierarchy_state, state_shapes, summarize_hierarchy
from ..functional.partition.tables import check_fop_constants, check_measures
from ..ops.hierarchy import RULES, Rule
from ._base import ExactMetric

__all__ = [
    "BidirectionalConsistency",
    "BipartiteGraphMatching",
    "DirectionalHamming",
    "GlobalConsistency",
    "HierarchyMeasures",
    "LocalConsistency",
    "NormalizedVariationOfInformation",
    "ObjectsAndPartsPR",
    "PartitionBoundaryPR",
    "PartitionMeasures",
    "ProbabilisticRandIndex",
    "RegionBenchmark",
    "RegionPR",
    "SegmentationCovering",
    "VanDongen",
    "VariationOfInformation",
]


class PartitionOptions(TypedDict):
    """The keyword options a :class:`PartitionMeasures` passes to :func:`partition_measures` (``metric.options``)."""

    gamma_obj: float
    gamma_part: float
    beta: float
    max_dist: float
    validate_args: bool


class HierarchyOptions(PartitionOptions):
    """The keyword options a :class:`HierarchyMeasures` passes to :func:`hierarchy_measures` (``metric.options``)."""

    input_format: HierarchyFormat
    rule: Rule


class _SummedStates(ExactMetric):
    """Adds the states of :func:`segmetrics_torch.functional.partition.summary.state_shapes`, all summed."""

    is_differentiable = False
    higher_is_better: bool | None = True
    full_state_update = False

    def _add_states(self, measures: tuple[str, ...], levels: int, region_benchmark: bool) -> None:
        self._state_names = []
        for name, shape in state_shapes(measures, levels, region_benchmark).items():
            dtype = torch.int64 if name.startswith("fb_") else torch.float64
            self.add_state(name, default=torch.zeros(shape, dtype=dtype), dist_reduce_fx="sum")
            self._state_names.append(name)

    def _accumulate(self, state: dict[str, Tensor]) -> None:
        for name in self._state_names:
            current = getattr(self, name)
            setattr(self, name, current + state[name].to(current.device, current.dtype))

    def _states(self) -> dict[str, Tensor]:
        return {name: getattr(self, name) for name in self._state_names}


class _PartitionMetric(_SummedStates):
    """The per-image partition measures summed over a dataset: arguments, ``update`` and the dataset values that
    :class:`PartitionMeasures` and the one-measure classes return."""

    count: Tensor

    def __init__(
        self,
        measures: str | Sequence[str] | None = None,
        *,
        gamma_obj: float = 0.9,
        gamma_part: float = 0.25,
        beta: float = 0.1,
        max_dist: float = 0.0075,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.measures = check_measures(measures)
        check_fop_constants(gamma_obj, gamma_part, beta)
        self.options: PartitionOptions = {
            "gamma_obj": gamma_obj,
            "gamma_part": gamma_part,
            "beta": beta,
            "max_dist": check_positive_float(max_dist, "max_dist"),
            "validate_args": check_bool(validate_args, "validate_args"),
        }
        self._add_states(self.measures, 1, False)

    def update(self, preds: ImageBatch, target: ImageBatch) -> None:
        """Add a batch of images.

        Host synchronisation (by design): the contingency tables are sparse, so their sizes are read on the host
        (``int(...)`` of region counts and table sizes in ``ops.contingency``, ``torch.unique`` of the cell index on
        non-CPU devices); relabelling sorts on the device but reads the region counts; BGM (a maximum-weight
        matching) and Fop's candidate rules run in compiled CPU kernels on copies of the tables (``.cpu().numpy()`` in
        ``functional.partition.tables`` / ``fop``); Fb copies boundary maps to the host for the correspondence
        kernel, as :class:`BoundaryPR`. The label-value checks of ``validate_args=True`` synchronise once per batch.
        """
        self.update_values(partition_measures(preds, target, measures=self.measures, **self.options))

    def update_values(self, values: dict[str, Tensor]) -> None:
        """Add per-image values already computed by :func:`segmetrics_torch.functional.partition_measures` with this
        metric's measures and options (e.g. to keep them as well), instead of computing them again."""
        missing = [k for k in self.measures if k not in values]
        if missing:
            raise ValueError(f"Expected per-image values for {missing}, but `values` has keys {sorted(values)}.")
        self._accumulate(hierarchy_state({k: v[:, None] for k, v in values.items()}, self.measures, False))

    def _dataset_values(self) -> dict[str, Tensor]:
        """Dataset values of the images seen so far: each measure key, plus ``<key>_precision`` / ``_recall``."""
        one = torch.ones(1, dtype=torch.float64, device=self.count.device)
        summary = summarize_hierarchy(self._states(), one, self.measures, region_benchmark=False)
        out: dict[str, Tensor] = {}
        for m in self.measures:
            out[m] = summary[m]["ods"]
            if m in PR_MEASURES:
                out[f"{m}_precision"] = summary[m]["ods_precision"]
                out[f"{m}_recall"] = summary[m]["ods_recall"]
        return out


class PartitionMeasures(_PartitionMetric):
    """Every SEISM measure of machine partitions against several human partitions, averaged over a dataset.

    Per image, see :func:`segmetrics_torch.functional.partition_measures` (one contingency table per annotator
    feeds all measures). Dataset values as SEISM's ``gather_measure.m``: the mean over images, except Fop and Fr
    (F of the mean precision and mean recall) and Fb (boundary counts pooled over images).

    Args:
        measures: keys to compute (default all): fb, fop, fr, pri, voi, nvoi, sc, ssc, dhd, sdhd, vd, bgm, bce, gce,
            lce.
        gamma_obj, gamma_part, beta: Fop constants (SEISM's code 0.9, 0.25, 0.1; the CVPR'13 text 0.95 for gamma_obj).
        max_dist: Fb tolerance, fraction of the diagonal (< 1) or pixels.
        validate_args: check label values (synchronises CUDA).

    ``update(preds, target)``: ``preds`` (B, H, W) integer label maps or a list; ``target`` (B, K, H, W) or a list
    of (K_b, H, W) human label maps.

    ``compute()``: dict of 0-d float64 tensors with the requested keys, plus ``<key>_precision`` and
    ``<key>_recall`` for fb, fop and fr.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) integer label maps of the machine partitions, or a list of (H, W) maps.
    - ``target``: (B, K, H, W) integer human label maps (K annotators per image), or a list of (K_b, H, W) maps.

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a dict of 0-d float64 tensors, one per requested measure key, plus ``<key>_precision`` and
      ``<key>_recall`` for fb, fop and fr.

    Example:
        >>> seg = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1]]])
        >>> metric = PartitionMeasures(measures=["pri", "voi"])
        >>> metric.update(seg, seg[:, None])
        >>> {k: round(float(v), 6) for k, v in metric.compute().items()}
        {'pri': 1.0, 'voi': 0.0}
    """

    #: mixed directions (VoI, GCE, ...: lower is better; PRI, covering, F: higher), as torchmetrics says
    higher_is_better = None

    def compute(self) -> dict[str, Tensor]:
        """Dataset values of the images seen so far."""
        return self._dataset_values()


class _OneMeasure(_PartitionMetric):
    _measure = ""

    def __init__(
        self,
        *,
        gamma_obj: float = 0.9,
        gamma_part: float = 0.25,
        beta: float = 0.1,
        max_dist: float = 0.0075,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        """One measure of :class:`PartitionMeasures`, with its arguments (``gamma_obj``, ``gamma_part`` and ``beta``
        are Fop's constants and ``max_dist`` Fb's tolerance; the other measures ignore them; ``measures`` is fixed:
        this class's one measure)."""
        super().__init__(
            measures=(self._measure,),
            gamma_obj=gamma_obj,
            gamma_part=gamma_part,
            beta=beta,
            max_dist=max_dist,
            validate_args=validate_args,
            **kwargs,
        )

    def compute(self) -> Tensor | dict[str, Tensor]:
        res = self._dataset_values()
        if self._measure in PR_MEASURES:
            return {
                "f": res[self._measure],
                "precision": res[f"{self._measure}_precision"],
                "recall": res[f"{self._measure}_recall"],
            }
        return res[self._measure]


class ObjectsAndPartsPR(_OneMeasure):
    """Precision-recall for objects and parts, Fop (Pont-Tuset & Marques CVPR 2013; SEISM ``fop``). ``compute()``
    returns ``{"f", "precision", "recall"}`` with F of the mean precision and recall. See :class:`PartitionMeasures`
    for the arguments (``gamma_obj`` 0.9 as SEISM's code, 0.95 as the paper's text).

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) integer label maps of the machine partitions, or a list of (H, W) maps.
    - ``target``: (B, K, H, W) integer human label maps (K annotators per image), or a list of (K_b, H, W) maps.

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - ``{"f", "precision", "recall"}``: 0-d float64 tensors, F of the dataset's mean precision and mean recall.

    Example:
        >>> import torch
        >>> seg = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 2, 2]]])  # (B=1, H, W)
        >>> gt = torch.tensor([[[[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1]]]])  # (B=1, K=1, H, W)
        >>> from segmetrics_torch import ObjectsAndPartsPR
        >>> metric = ObjectsAndPartsPR()
        >>> metric.update(seg, gt)
        >>> {k: round(float(v), 4) for k, v in metric.compute().items()}
        {'f': 0.1212, 'precision': 0.0667, 'recall': 0.6667}
    """

    _measure = "fop"


class RegionPR(_OneMeasure):
    """Precision-recall for regions (pairs of pixels), Fr (Martin 2003; SEISM ``fr``): ``{"f", "precision",
    "recall"}``.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) integer label maps of the machine partitions, or a list of (H, W) maps.
    - ``target``: (B, K, H, W) integer human label maps (K annotators per image), or a list of (K_b, H, W) maps.

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - ``{"f", "precision", "recall"}``: 0-d float64 tensors, F of the dataset's mean precision and mean recall.

    Example:
        >>> import torch
        >>> seg = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 2, 2]]])  # (B=1, H, W)
        >>> gt = torch.tensor([[[[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1]]]])  # (B=1, K=1, H, W)
        >>> from segmetrics_torch import RegionPR
        >>> metric = RegionPR()
        >>> metric.update(seg, gt)
        >>> {k: round(float(v), 4) for k, v in metric.compute().items()}
        {'f': 0.5833, 'precision': 0.7778, 'recall': 0.4667}
    """

    _measure = "fr"


class PartitionBoundaryPR(_OneMeasure):
    """Fb of partitions: their boundaries (``seg2bmap``) matched to the annotators' with the BSDS correspondence
    (SEISM ``fb``), counts pooled over images: ``{"f", "precision", "recall"}``.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) integer label maps of the machine partitions, or a list of (H, W) maps.
    - ``target``: (B, K, H, W) integer human label maps (K annotators per image), or a list of (K_b, H, W) maps.

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - ``{"f", "precision", "recall"}``: 0-d float64 tensors from the boundary counts pooled over the
      images.

    Example:
        >>> import torch
        >>> seg = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 2, 2]]])  # (B=1, H, W)
        >>> gt = torch.tensor([[[[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1]]]])  # (B=1, K=1, H, W)
        >>> from segmetrics_torch import PartitionBoundaryPR
        >>> metric = PartitionBoundaryPR(max_dist=1)
        >>> metric.update(seg, gt)
        >>> {k: round(float(v), 4) for k, v in metric.compute().items()}
        {'f': 0.5714, 'precision': 0.5, 'recall': 0.6667}
    """

    _measure = "fb"


class ProbabilisticRandIndex(_OneMeasure):
    """Probabilistic Rand index (Unnikrishnan et al. 2007): the Rand index averaged over the annotators.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) integer label maps of the machine partitions, or a list of (H, W) maps.
    - ``target``: (B, K, H, W) integer human label maps (K annotators per image), or a list of (K_b, H, W) maps.

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a 0-d float64 tensor: the mean over images of the per-image value (itself averaged over the annotators).

    Example:
        >>> import torch
        >>> seg = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 2, 2]]])  # (B=1, H, W)
        >>> gt = torch.tensor([[[[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1]]]])  # (B=1, K=1, H, W)
        >>> from segmetrics_torch import ProbabilisticRandIndex
        >>> metric = ProbabilisticRandIndex()
        >>> metric.update(seg, gt)
        >>> round(float(metric.compute()), 4)
        0.697
    """

    _measure = "pri"


class VariationOfInformation(_OneMeasure):
    """Variation of information (Meila 2005) in bits, averaged over annotators; a distance (0 = identical).

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) integer label maps of the machine partitions, or a list of (H, W) maps.
    - ``target``: (B, K, H, W) integer human label maps (K annotators per image), or a list of (K_b, H, W) maps.

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a 0-d float64 tensor: the mean over images of the per-image VoI in bits (averaged over the annotators; lower
      is better).

    Example:
        >>> import torch
        >>> seg = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 2, 2]]])  # (B=1, H, W)
        >>> gt = torch.tensor([[[[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1]]]])  # (B=1, K=1, H, W)
        >>> from segmetrics_torch import VariationOfInformation
        >>> metric = VariationOfInformation()
        >>> metric.update(seg, gt)
        >>> round(float(metric.compute()), 4)
        1.2516
    """

    higher_is_better = False
    _measure = "voi"


class NormalizedVariationOfInformation(_OneMeasure):
    """SEISM's ``nvoi``: ``1 - VoI / (2 log2 max(K_S, K_G))`` per annotator, averaged (1 = identical).

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) integer label maps of the machine partitions, or a list of (H, W) maps.
    - ``target``: (B, K, H, W) integer human label maps (K annotators per image), or a list of (K_b, H, W) maps.

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a 0-d float64 tensor: the mean over images of the per-image value (itself averaged over the annotators).

    Example:
        >>> import torch
        >>> seg = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 2, 2]]])  # (B=1, H, W)
        >>> gt = torch.tensor([[[[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1]]]])  # (B=1, K=1, H, W)
        >>> from segmetrics_torch import NormalizedVariationOfInformation
        >>> metric = NormalizedVariationOfInformation()
        >>> metric.update(seg, gt)
        >>> round(float(metric.compute()), 4)
        0.6052
    """

    _measure = "nvoi"


class SegmentationCovering(_OneMeasure):
    """Segmentation covering (Arbelaez et al. TPAMI 2011), averaged over annotators.

    Args:
        direction: ``"annotation"`` (default; SEISM ``ssc``, BSDS covering C(S -> {G}): each annotation region
            weighted by its area and scored by its best-overlapping partition region) or ``"partition"`` (SEISM
            ``sc``, C({G} -> S): summed over the partition's regions).
        Other keywords as the one-measure classes (:class:`VariationOfInformation`): ``validate_args``, Fop's
            ``gamma_obj`` / ``gamma_part`` / ``beta`` and Fb's ``max_dist`` (ignored here), torchmetrics' options;
            ``measures`` is fixed.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) integer label maps of the machine partitions, or a list of (H, W) maps.
    - ``target``: (B, K, H, W) integer human label maps (K annotators per image), or a list of (K_b, H, W) maps.

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a 0-d float64 tensor: the mean over images of the per-image value (itself averaged over the annotators).

    Example:
        >>> import torch
        >>> seg = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 2, 2]]])  # (B=1, H, W)
        >>> gt = torch.tensor([[[[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1]]]])  # (B=1, K=1, H, W)
        >>> from segmetrics_torch import SegmentationCovering
        >>> metric = SegmentationCovering()
        >>> metric.update(seg, gt)
        >>> round(float(metric.compute()), 4)
        0.6667
    """

    def __init__(self, direction: Literal["annotation", "partition"] = "annotation", **kwargs: Any) -> None:
        check_choice(direction, "direction", ("annotation", "partition"))
        self._measure = "ssc" if direction == "annotation" else "sc"
        super().__init__(**kwargs)


class DirectionalHamming(_OneMeasure):
    """Directional Hamming distance (Huang & Dom 1995) as SEISM's similarity ``1 - D_H / N``, averaged.

    Args:
        direction: ``"partition_to_annotation"`` (default; SEISM ``dhd``, D_H(S => G) = N - sum_j max_i n_ij) or
            ``"annotation_to_partition"`` (SEISM ``sdhd``).
        Other keywords as the one-measure classes (:class:`VariationOfInformation`): ``validate_args``, Fop's
            ``gamma_obj`` / ``gamma_part`` / ``beta`` and Fb's ``max_dist`` (ignored here), torchmetrics' options;
            ``measures`` is fixed.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) integer label maps of the machine partitions, or a list of (H, W) maps.
    - ``target``: (B, K, H, W) integer human label maps (K annotators per image), or a list of (K_b, H, W) maps.

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a 0-d float64 tensor: the mean over images of the per-image value (itself averaged over the annotators).

    Example:
        >>> import torch
        >>> seg = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 2, 2]]])  # (B=1, H, W)
        >>> gt = torch.tensor([[[[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1]]]])  # (B=1, K=1, H, W)
        >>> from segmetrics_torch import DirectionalHamming
        >>> metric = DirectionalHamming()
        >>> metric.update(seg, gt)
        >>> round(float(metric.compute()), 4)
        0.6667
    """

    def __init__(
        self,
        direction: Literal["partition_to_annotation", "annotation_to_partition"] = "partition_to_annotation",
        **kwargs: Any,
    ) -> None:
        options = {"partition_to_annotation": "dhd", "annotation_to_partition": "sdhd"}
        check_choice(direction, "direction", options)
        self._measure = options[direction]
        super().__init__(**kwargs)


class VanDongen(_OneMeasure):
    """Van Dongen distance (2000) as SEISM's similarity ``1 - d_vD / (2N)``, averaged over annotators.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) integer label maps of the machine partitions, or a list of (H, W) maps.
    - ``target``: (B, K, H, W) integer human label maps (K annotators per image), or a list of (K_b, H, W) maps.

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a 0-d float64 tensor: the mean over images of the per-image value (itself averaged over the annotators).

    Example:
        >>> import torch
        >>> seg = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 2, 2]]])  # (B=1, H, W)
        >>> gt = torch.tensor([[[[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1]]]])  # (B=1, K=1, H, W)
        >>> from segmetrics_torch import VanDongen
        >>> metric = VanDongen()
        >>> metric.update(seg, gt)
        >>> round(float(metric.compute()), 4)
        0.75
    """

    _measure = "vd"


class BipartiteGraphMatching(_OneMeasure):
    """Bipartite graph matching (Jiang et al. 2006): ``1 - (N - max one-to-one matched overlap) / N``, averaged;
    the maximum-weight matching is solved exactly.

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) integer label maps of the machine partitions, or a list of (H, W) maps.
    - ``target``: (B, K, H, W) integer human label maps (K annotators per image), or a list of (K_b, H, W) maps.

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a 0-d float64 tensor: the mean over images of the per-image value (itself averaged over the annotators).

    Example:
        >>> import torch
        >>> seg = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 2, 2]]])  # (B=1, H, W)
        >>> gt = torch.tensor([[[[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1]]]])  # (B=1, K=1, H, W)
        >>> from segmetrics_torch import BipartiteGraphMatching
        >>> metric = BipartiteGraphMatching()
        >>> metric.update(seg, gt)
        >>> round(float(metric.compute()), 4)
        0.6667
    """

    _measure = "bgm"


class BidirectionalConsistency(_OneMeasure):
    """``1 - BCE`` (Martin 2001 bidirectional consistency error), averaged over annotators (SEISM ``bce``).

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) integer label maps of the machine partitions, or a list of (H, W) maps.
    - ``target``: (B, K, H, W) integer human label maps (K annotators per image), or a list of (K_b, H, W) maps.

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a 0-d float64 tensor: the mean over images of the per-image value (itself averaged over the annotators).

    Example:
        >>> import torch
        >>> seg = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 2, 2]]])  # (B=1, H, W)
        >>> gt = torch.tensor([[[[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1]]]])  # (B=1, K=1, H, W)
        >>> from segmetrics_torch import BidirectionalConsistency
        >>> metric = BidirectionalConsistency()
        >>> metric.update(seg, gt)
        >>> round(float(metric.compute()), 4)
        0.5556
    """

    _measure = "bce"


class GlobalConsistency(_OneMeasure):
    """``1 - GCE`` (Martin et al. ICCV 2001 global consistency error), averaged over annotators (SEISM ``gce``).

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) integer label maps of the machine partitions, or a list of (H, W) maps.
    - ``target``: (B, K, H, W) integer human label maps (K annotators per image), or a list of (K_b, H, W) maps.

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a 0-d float64 tensor: the mean over images of the per-image value (itself averaged over the annotators).

    Example:
        >>> import torch
        >>> seg = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 2, 2]]])  # (B=1, H, W)
        >>> gt = torch.tensor([[[[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1]]]])  # (B=1, K=1, H, W)
        >>> from segmetrics_torch import GlobalConsistency
        >>> metric = GlobalConsistency()
        >>> metric.update(seg, gt)
        >>> round(float(metric.compute()), 4)
        0.8333
    """

    _measure = "gce"


class LocalConsistency(_OneMeasure):
    """``1 - LCE`` (Martin et al. ICCV 2001 local consistency error), averaged over annotators (SEISM ``lce``).

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, H, W) integer label maps of the machine partitions, or a list of (H, W) maps.
    - ``target``: (B, K, H, W) integer human label maps (K annotators per image), or a list of (K_b, H, W) maps.

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a 0-d float64 tensor: the mean over images of the per-image value (itself averaged over the annotators).

    Example:
        >>> import torch
        >>> seg = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 2, 2]]])  # (B=1, H, W)
        >>> gt = torch.tensor([[[[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1]]]])  # (B=1, K=1, H, W)
        >>> from segmetrics_torch import LocalConsistency
        >>> metric = LocalConsistency()
        >>> metric.update(seg, gt)
        >>> round(float(metric.compute()), 4)
        0.8333
    """

    _measure = "lce"


class HierarchyMeasures(_SummedStates):
    """Partition measures of hierarchies at L levels over a dataset: SEISM's ODS / OIS / AP and the Berkeley region
    benchmark (covering, PRI, VoI as ``collect_eval_reg.m``).

    Args:
        thresholds: ucm2 thresholds (int L gives MATLAB ``linspace(1/(L+1), 1-1/(L+1), L)``, 99 -> 0.01..0.99) or,
            for ``input_format="stack"``, an int number of levels.
        num_regions: SEISM's "number of regions" parameters instead of thresholds (ucm2 only).
        input_format: "ucm2" (double-size maps) or "stack" ((L, H, W) label maps per image).
        rule: ucm2 partitions as SEISM ("seism": ``gridbmap2seg(ucm2 > t)``) or BSR ("bsr": ``bwlabel(ucm2 <= t)``).
        measures: measure keys (default all but Fb, whose boundary matching dominates the cost; pass them explicitly
            to include "fb").
        region_benchmark: also accumulate the BSR covering counts.
        unique_occurrence: AP duplicate-recall rule ("first": current MATLAB, as SEISM; "last": pre-R2013a).
        gamma_obj, gamma_part, beta, max_dist, validate_args: as :class:`PartitionMeasures`.

    ``compute()``: see :func:`segmetrics_torch.functional.partition.summary.summarize_hierarchy`; plus
    ``parameters`` (L,), the thresholds or region counts (also the attribute ``levels``; not ``parameters``, which
    would shadow :meth:`torch.nn.Module.parameters`).

    As input to ``update`` (and ``forward``):

    - ``preds``: ``input_format="ucm2"``: (B, 2H+1, 2W+1) ultrametric contour maps in [0, 1] or a list;
      ``"stack"``: (B, L, H, W) label maps (one partition per level) or a list of (L, H, W).
    - ``target``: (B, K, H, W) integer human label maps, or a list of (K_b, H, W).

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - a dict: per measure ``{"ods", "ods_parameter", "ois", "curve", ...}`` (Fop, Fr, Fb also precision, recall
      and ``ap``), ``region_benchmark`` (covering / PRI / VoI ODS, OIS, Best) when enabled, and ``parameters`` (L,).

    Example:
        >>> import torch
        >>> from segmetrics_torch import HierarchyMeasures
        >>> seg = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 2, 2]]])
        >>> stack = torch.stack([torch.zeros_like(seg), seg], dim=1)  # (B=1, L=2, H, W): coarse, fine
        >>> gt = torch.tensor([[[[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1]]]])
        >>> metric = HierarchyMeasures(2, input_format="stack", measures=["pri", "voi"])
        >>> metric.update(stack, gt)
        >>> res = metric.compute()
        >>> round(float(res["pri"]["ods"]), 4), float(res["pri"]["ods_parameter"])
        (0.697, 2.0)
        >>> round(float(res["region_benchmark"]["covering"]["ods"]), 4)
        0.6667
    """

    #: mixed directions (VoI, GCE, ...: lower is better; PRI, covering, F: higher), as torchmetrics says
    higher_is_better = None

    count: Tensor

    def __init__(
        self,
        thresholds: int | Sequence[float] | Tensor = 99,
        *,
        num_regions: Sequence[int] | Tensor | None = None,
        input_format: HierarchyFormat = "ucm2",
        rule: Rule = "seism",
        measures: str | Sequence[str] | None = None,
        region_benchmark: bool = True,
        unique_occurrence: UniqueOccurrence = "first",
        gamma_obj: float = 0.9,
        gamma_part: float = 0.25,
        beta: float = 0.1,
        max_dist: float = 0.0075,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        check_choice(input_format, "input_format", HIERARCHY_FORMATS)
        check_choice(rule, "rule", RULES)
        check_unique_occurrence(unique_occurrence)
        check_fop_constants(gamma_obj, gamma_part, beta)
        self.measures = (
            tuple(m for m in check_measures(None) if m != "fb") if measures is None else check_measures(measures)
        )
        if num_regions is not None:
            if input_format != "ucm2":
                raise ValueError("`num_regions` applies to ucm2 input only.")
            regions = check_num_regions(num_regions)
            self.levels = regions.to(torch.float64)
            self.thresholds: Tensor | None = None
        else:
            self.levels = default_thresholds(thresholds, "soft" if input_format == "ucm2" else "stack")
            self.thresholds = self.levels
        self.num_regions = None if num_regions is None else check_num_regions(num_regions)
        self.region_benchmark = check_bool(region_benchmark, "region_benchmark")
        self.unique_occurrence = unique_occurrence
        self.options: HierarchyOptions = {
            "input_format": input_format,
            "rule": rule,
            "gamma_obj": gamma_obj,
            "gamma_part": gamma_part,
            "beta": beta,
            "max_dist": check_positive_float(max_dist, "max_dist"),
            "validate_args": check_bool(validate_args, "validate_args"),
        }
        self._add_states(self.measures, self.levels.numel(), self.region_benchmark)

    def update(self, preds: ImageBatch, target: ImageBatch) -> None:
        """Add a batch of hierarchies (ucm2 maps or level stacks) with their human partitions.

        Host synchronisation (by design): a ucm2's levels come from one union-find sweep in a compiled CPU kernel
        (the ucm2 is copied to the host in ``ops.hierarchy``); ``num_regions`` reads the distinct ucm2 values
        (``torch.unique``); the tables and their measures synchronise as :meth:`PartitionMeasures.update` does.
        """
        if self.thresholds is None:  # num_regions given
            values = hierarchy_measures(
                preds,
                target,
                num_regions=self.num_regions,
                measures=self.measures,
                region_benchmark=self.region_benchmark,
                **self.options,
            )
        else:
            values = hierarchy_measures(
                preds,
                target,
                thresholds=self.thresholds,
                measures=self.measures,
                region_benchmark=self.region_benchmark,
                **self.options,
            )
        self._accumulate(hierarchy_state(values, self.measures, self.region_benchmark))

    def compute(self) -> dict[str, Any]:
        """ODS / OIS / AP per measure (and the region benchmark) of the images seen so far."""
        params = self.levels.to(self.count.device)
        out: dict[str, Any] = summarize_hierarchy(
            self._states(),
            params,
            self.measures,
            region_benchmark=self.region_benchmark,
            unique_occurrence=self.unique_occurrence,
        )
        out["parameters"] = params
        return out


class RegionBenchmark(HierarchyMeasures):
    """The Berkeley region benchmark (BSR ``regionBench``/``collect_eval_reg.m``): segmentation covering
    ODS / OIS / Best and PRI / VoI ODS / OIS over thresholds of ucm2 maps (``bwlabel(ucm2 <= t)``, 8-connected) or
    levels of segmentation stacks. ``compute()`` returns ``{"covering": {...}, "pri": {...}, "voi": {...},
    "parameters"}`` (see :func:`segmetrics_torch.functional.partition.summary.summarize_hierarchy`).

    Args: ``thresholds``, ``input_format`` and ``rule`` as :class:`HierarchyMeasures` (``rule`` defaults to BSR's
    here); its other keywords (``num_regions``, ``unique_occurrence``, ``validate_args``, ``gamma_obj``,
    ``gamma_part``, ``beta``, ``max_dist``) are accepted too.
    ``measures`` and ``region_benchmark`` are fixed (PRI, VoI and the covering counts).

    As input to ``update`` (and ``forward``):

    - ``preds``: (B, 2H+1, 2W+1) ucm2 maps or, with ``input_format="stack"``, (B, L, H, W) label maps (or
      lists).
    - ``target``: (B, K, H, W) integer human label maps, or a list of (K_b, H, W).

    As output of ``compute`` (``forward`` returns the same for the batch alone):

    - ``{"covering": {"ods", "ods_parameter", "ois", "best", "curve"}, "pri": {...}, "voi": {...}, "parameters"}``
      (float64 tensors), as BSR's ``collect_eval_reg.m``.

    Example:
        >>> import torch
        >>> from segmetrics_torch import RegionBenchmark
        >>> seg = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 2, 2]]])
        >>> stack = torch.stack([torch.zeros_like(seg), seg], dim=1)  # (B=1, L=2, H, W)
        >>> gt = torch.tensor([[[[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1]]]])
        >>> metric = RegionBenchmark(2, input_format="stack")
        >>> metric.update(stack, gt)
        >>> res = metric.compute()
        >>> {k: round(float(v), 4) for k, v in res["covering"].items() if k != "curve"}
        {'ods': 0.6667, 'ods_parameter': 2.0, 'ois': 0.6667, 'best': 0.6667}
    """

    def __init__(
        self,
        thresholds: int | Sequence[float] | Tensor = 99,
        *,
        input_format: HierarchyFormat = "ucm2",
        rule: Rule = "bsr",
        **kwargs: Any,
    ) -> None:
        super().__init__(
            thresholds, input_format=input_format, rule=rule, measures=("pri", "voi"), region_benchmark=True, **kwargs
        )

    def compute(self) -> dict[str, Any]:
        out = super().compute()
        return {**out["region_benchmark"], "parameters": out["parameters"]}
