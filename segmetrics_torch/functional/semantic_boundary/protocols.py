"""The evaluation protocols of semantic boundary detection (SBD, Cityscapes) as named, frozen presets.

Two families are in use (see ``docs/semantic-boundaries.md``):

* ``"matlab"``: the SBD MATLAB benchmark (Hariharan et al., ICCV 2011; CASENet's "pre-SEAL" numbers). Ground truth
  ``GTcls.Boundaries{k}`` as stored in ``cls/<id>.mat`` (instance-sensitive: OR ``GTinst.Boundaries`` of the class's
  instances), ``kill_internal`` within ``Segmentation == k``, ``max_dist`` 0.02 of the diagonal, thinned predictions,
  99 thresholds (MATLAB ``linspace``), no ignored frame.
* ``"pre-seal"`` / ``"post-seal"``: SEAL's protocols (Yu et al., ECCV 2018) as pyEdgeEval 0.2.8 implements them.
  Ground truth regenerated from the segmentation (``thin``: radius 1 then thinning; raw: radius 2), a 5-pixel
  ignored frame on SBD, thin or raw predictions. ``pre-seal``: max_dist 0.02, kill_internal, skip_if_nonexistent,
  not instance-sensitive. ``post-seal``: instance-sensitive (kill_internal and skip_if_nonexistent off); its
  non-instance-sensitive variant switches both on. Cityscapes at half scale; post-SEAL max_dist 0.0035.

Every field of a :class:`SemanticBoundaryProtocol` can be changed with :meth:`SemanticBoundaryProtocol.replace`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal, get_args

from ..._checks import check_bool, check_choice, check_positive_float
from ..._constants import MAX_THRESHOLDS

__all__ = ["PRESETS", "SemanticBoundaryProtocol", "semantic_boundary_protocol"]

Dataset = Literal["sbd", "cityscapes"]
Preset = Literal["matlab", "pre-seal", "post-seal"]
#: where the ground-truth boundaries come from: the ``.mat`` file's stored ``Boundaries`` ("stored", SBD only) or
#: regenerated from the segmentation as SEAL does ("regenerated")
GroundTruthSource = Literal["stored", "regenerated"]
#: how an int number of thresholds becomes values: MATLAB's ``linspace`` or numpy's (pyEdgeEval), which differ in the
#: last bit for some thresholds (0.2, 0.4, 0.6, 0.8 equal 51/255, 102/255, ... of a uint8 map to the bit)
ThresholdRule = Literal["matlab", "numpy"]
DATASETS: tuple[str, ...] = get_args(Dataset)
PRESETS: tuple[str, ...] = get_args(Preset)


@dataclass(frozen=True)
class SemanticBoundaryProtocol:
    """One evaluation protocol of semantic boundaries (every field settable; see the module doc for the presets).

    Attributes:
        name: the preset's name, with ``"+thin"`` / ``"+raw"`` and ``"+is"`` / ``"+nonis"`` (informative only).
        dataset: "sbd" (20 classes) or "cityscapes" (19 trainIds).
        ground_truth: "stored" (``GTcls.Boundaries``; SBD only) or "regenerated" (SEAL).
        thin: thin the thresholded predictions; for regenerated ground truth also the GT (radius 1 + thinning).
        radius: the regenerated GT's half width in pixels (SEAL: 1 with ``thin``, 2 raw).
        max_dist: matching tolerance, a fraction of the diagonal (< 1) or pixels (>= 1).
        kill_internal: drop thresholded prediction pixels inside the evaluated class's region that lie farther than
            the tolerance from every GT edge of the class.
        skip_if_nonexistent: an image without GT edges of the class adds no counts (not even false positives).
        instance_sensitive: boundaries between two instances of one class are GT edges.
        ignore_border: width of the frame (pixels) ignored on all four sides: predictions there are set to 0 and the
            regenerated GT treats it as an ignore region (SEAL on SBD: 5; 0 = none).
        scale: evaluation scale (Cityscapes: 0.5); see ``labels_first``.
        labels_first: at ``scale < 1``, resize the label maps before making edges (SEAL thin) rather than resizing
            full-scale edges (raw; "nearest resize at load").
        thresholds: number of thresholds (or their values).
        threshold_rule: "matlab" or "numpy" ``linspace`` for an int ``thresholds``.

    Example:
        >>> p = semantic_boundary_protocol("pre-seal", "sbd", thin=False)
        >>> p.name, p.radius, p.ignore_border
        ('pre-seal+raw+nonis', 2.0, 5)
        >>> p.replace(max_dist=0.01).max_dist
        0.01
    """

    name: str
    dataset: Dataset
    ground_truth: GroundTruthSource
    thin: bool
    radius: float
    max_dist: float
    kill_internal: bool
    skip_if_nonexistent: bool
    instance_sensitive: bool
    ignore_border: int
    scale: float
    labels_first: bool
    thresholds: int = 99
    threshold_rule: ThresholdRule = "matlab"

    def __post_init__(self) -> None:
        check_choice(self.dataset, "dataset", DATASETS)
        check_choice(self.ground_truth, "ground_truth", get_args(GroundTruthSource))
        check_choice(self.threshold_rule, "threshold_rule", get_args(ThresholdRule))
        for name in ("thin", "kill_internal", "skip_if_nonexistent", "instance_sensitive", "labels_first"):
            check_bool(getattr(self, name), name)
        check_positive_float(self.max_dist, "max_dist")
        check_positive_float(self.radius, "radius")
        if not 0 < self.scale <= 1:
            raise ValueError(f"Expected `scale` in (0, 1], but got {self.scale!r}.")
        border = self.ignore_border  # (beyond 2^31 - 1 pixels numpy's slices wrap; no image is that large)
        if isinstance(border, bool) or not isinstance(border, int) or not 0 <= border < 2**31:
            raise ValueError(f"Expected `ignore_border` to be a non-negative int below 2^31, but got {border!r}.")
        if self.ground_truth == "stored" and self.dataset != "sbd":
            raise ValueError("Expected `ground_truth='regenerated'` for Cityscapes: only SBD's .mat files store edges.")
        levels = self.thresholds  # (each level keeps counts per image: MAX_THRESHOLDS, as the boundary benchmark)
        if isinstance(levels, bool) or not isinstance(levels, int) or not 1 <= levels <= MAX_THRESHOLDS:
            raise ValueError(f"Expected `thresholds` to be an int in [1, {MAX_THRESHOLDS}], but got {levels!r}.")

    def replace(self, **changes: Any) -> SemanticBoundaryProtocol:
        """A copy with some fields changed (checked again)."""
        return dataclasses.replace(self, **changes)


def semantic_boundary_protocol(
    preset: Preset = "post-seal",
    dataset: Dataset = "sbd",
    *,
    thin: bool = True,
    instance_sensitive: bool | None = None,
    **overrides: Any,
) -> SemanticBoundaryProtocol:
    """The named preset for a dataset, thin or raw, instance-sensitive or not, with any field overridden.

    Args:
        preset: "matlab" (the SBD MATLAB benchmark; SBD only), "pre-seal" or "post-seal" (pyEdgeEval 0.2.8).
        dataset: "sbd" or "cityscapes".
        thin: thin predictions (and the regenerated GT: radius 1 + thinning) or evaluate raw maps (GT radius 2).
        instance_sensitive: None = the preset's own (post-seal: True; others: False). ``pre-seal`` with True is a
            ``ValueError`` (pyEdgeEval refuses it too). For post-seal, False switches kill_internal and
            skip_if_nonexistent on, as pyEdgeEval does.
        **overrides: any :class:`SemanticBoundaryProtocol` field, applied last.

    Example:
        >>> p = semantic_boundary_protocol("post-seal", "cityscapes", thin=False)
        >>> p.max_dist, p.scale, p.radius, p.instance_sensitive, p.kill_internal
        (0.0035, 0.5, 2.0, True, False)
        >>> semantic_boundary_protocol("matlab").ground_truth
        'stored'
    """
    check_choice(preset, "preset", PRESETS)
    check_choice(dataset, "dataset", DATASETS)
    check_bool(thin, "thin")
    if instance_sensitive is not None:
        check_bool(instance_sensitive, "instance_sensitive")
    sbd = dataset == "sbd"
    if preset == "matlab":
        if not sbd:
            raise ValueError("Expected `dataset='sbd'` with preset='matlab' (the SBD MATLAB benchmark).")
        inst = bool(instance_sensitive)
        fields: dict[str, Any] = {
            "ground_truth": "stored",
            "thin": thin,
            "radius": 1.0,
            "max_dist": 0.02,
            "kill_internal": True,
            "skip_if_nonexistent": True,
            "instance_sensitive": inst,
            "ignore_border": 0,
            "scale": 1.0,
            "labels_first": True,
            "threshold_rule": "matlab",
        }
    else:
        if preset == "pre-seal":
            if instance_sensitive:
                raise ValueError("preset='pre-seal' is not instance-sensitive (pyEdgeEval refuses it too).")
            inst = False
        else:
            inst = True if instance_sensitive is None else instance_sensitive
        fields = {
            "ground_truth": "regenerated",
            "thin": thin,
            "radius": 1.0 if thin else 2.0,
            "max_dist": 0.02 if (sbd or preset == "pre-seal") else 0.0035,
            "kill_internal": not inst,
            "skip_if_nonexistent": not inst,
            "instance_sensitive": inst,
            "ignore_border": 5 if sbd else 0,
            "scale": 1.0 if sbd else 0.5,
            "labels_first": thin,
            "threshold_rule": "numpy",
        }
    name = f"{preset}+{'thin' if thin else 'raw'}+{'is' if inst else 'nonis'}"
    protocol = SemanticBoundaryProtocol(name=name, dataset=dataset, **fields)
    return protocol.replace(**overrides) if overrides else protocol
