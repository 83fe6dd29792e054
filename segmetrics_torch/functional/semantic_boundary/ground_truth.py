"""Ground truth of semantic boundaries: the SBD ``.mat`` files, Cityscapes ``gtFine`` maps, SEAL's regeneration.

* SBD (Hariharan et al., ICCV 2011): ``cls/<id>.mat`` holds ``GTcls`` (``Boundaries``: a 20-cell of sparse (H, W)
  boundary maps, ``Segmentation``: the class map 0..20, ``CategoriesPresent``), ``inst/<id>.mat`` holds ``GTinst``
  (``Segmentation``: instance map 0..N, ``Boundaries``: an N-cell of sparse maps, ``Categories``: N classes). Read with
  scipy (recent scipy returns sparse *arrays*, older sparse matrices: both are densified).
* Cityscapes (Cordts et al., CVPR 2016): ``*_gtFine_labelIds.png`` (labelIds 0..33) and ``*_gtFine_instanceIds.png``
  (``labelId * 1000 + k`` for the k-th instance of an instance class, the labelId elsewhere). Evaluated classes are
  the 19 trainIds; kill_internal reads the map of trainIds (255: no class).
* SEAL's regeneration (Yu et al., ECCV 2018; pyEdgeEval 0.2.8 ``mask2bdry``): for a class mask ``m`` and an ignore
  region ``I``, a pixel is an edge iff ``0 < d_in + d_out <= radius`` with ``d_in`` the exact Euclidean distance to
  the nearest pixel outside ``m | I`` and ``d_out`` the distance to the nearest pixel of ``m`` (so edges lie within
  ``radius`` on both sides of the class border, none along the ignore region); instance-sensitive: OR the same map of
  every instance of the class; thin: radius 1 then thinning. The ignore region is SBD's 5-pixel frame (SEAL) or
  Cityscapes' labelIds 2 and 3 (rectification border, out of ROI). Distances are those of
  :func:`~segmetrics_torch.ops.distance.distance_transform_edt` (exact; pixels beyond the image are never nearest,
  as OpenCV's ``distanceTransform(..., DIST_L2, DIST_MASK_PRECISE)`` that pyEdgeEval calls).
* Resizing to half scale is nearest-neighbour with Pillow's rule (:func:`resize_nearest`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
from torch import Tensor

from ..._checks import Backend, check_tensor
from ...io import _loadmat, read_labels
from ...ops.distance import distance_transform_edt
from ...ops.morphology import thin as thin_maps
from ...readers import reads

__all__ = [
    "CITYSCAPES_CLASSES",
    "SBD_CLASSES",
    "SemanticGroundTruth",
    "cityscapes_ground_truth",
    "mask_boundaries",
    "read_cityscapes_instance_ids",
    "read_cityscapes_label_ids",
    "read_sbd_cls",
    "read_sbd_inst",
    "regenerate_boundaries",
    "resize_nearest",
    "sbd_ground_truth",
]

SBD_CLASSES = (
    "aeroplane", "bicycle", "bird", "boat", "bottle", "bus", "car", "cat", "chair", "cow",
    "dining table", "dog", "horse", "motor bike", "person", "potted plant", "sheep", "sofa", "train", "tv/monitor",
)  # fmt: skip
CITYSCAPES_CLASSES = (
    "road", "sidewalk", "building", "wall", "fence", "pole", "traffic light", "traffic sign", "vegetation", "terrain",
    "sky", "person", "rider", "car", "truck", "bus", "train", "motorcycle", "bicycle",
)  # fmt: skip
#: Cityscapes labelId -> trainId of the 19 evaluated classes (cityscapesScripts' ``labels.py``)
CITYSCAPES_LABEL_TO_TRAIN: Mapping[int, int] = {
    7: 0, 8: 1, 11: 2, 12: 3, 13: 4, 17: 5, 19: 6, 20: 7, 21: 8, 22: 9, 23: 10, 24: 11, 25: 12, 26: 13, 27: 14,
    28: 15, 31: 16, 32: 17, 33: 18,
}  # fmt: skip
#: labelIds with instances in ``instanceIds`` (person, rider, car, truck, bus, train, motorcycle, bicycle)
CITYSCAPES_INSTANCE_LABELS = (24, 25, 26, 27, 28, 31, 32, 33)
#: labelIds that SEAL's edge generation treats as ignore regions (rectification border, out of ROI)
CITYSCAPES_IGNORE_LABELS = (2, 3)
#: SBD instance maps are uint8: at most 255 instances per image
SBD_MAX_INSTANCES = 255
# Bound on the pixels of the per-mask distance maps computed at once (two float64 + two int64 maps per pixel).
_CHUNK_PIXELS = 1 << 24


class SBDClassGroundTruth(NamedTuple):
    """``GTcls`` of one SBD image: (20, H, W) bool stored boundaries, (H, W) int64 class map 0..20, present classes."""

    boundaries: np.ndarray
    segmentation: np.ndarray
    categories: tuple[int, ...]


class SBDInstanceGroundTruth(NamedTuple):
    """``GTinst`` of one SBD image: (H, W) int64 instance map 0..N, (N, H, W) bool boundaries, (N,) classes 1..20."""

    segmentation: np.ndarray
    boundaries: np.ndarray
    categories: np.ndarray


class SemanticGroundTruth(NamedTuple):
    """Per-class GT edges (K, H, W) bool and the (H, W) int64 trainId map (255: no class) for kill_internal.

    Example:
        >>> import tempfile
        >>> from PIL import Image
        >>> path = Path(tempfile.mkdtemp()) / "aachen_000000_000019_gtFine_labelIds.png"
        >>> labels = np.full((8, 8), 7, np.uint8); labels[:, 4:] = 26  # labelIds: road | car
        >>> Image.fromarray(labels).save(path)
        >>> gt = cityscapes_ground_truth(path, None, instance_sensitive=False, thin=True, radius=1)  # half scale
        >>> gt.edges.shape, gt.segmentation[0].tolist()  # trainIds: road 0, car 13
        (torch.Size([19, 4, 4]), [0, 0, 13, 13])
    """

    edges: Tensor
    segmentation: Tensor


def _dense(x: object, path: Path, what: str) -> np.ndarray:
    """A sparse matrix or array (scipy < 1.13 / >= 1.13) or a dense array as a dense ndarray."""
    if hasattr(x, "toarray"):
        return np.asarray(x.toarray())
    arr = np.asarray(x)
    if arr.dtype == object:
        raise ValueError(f"{path}: `{what}` is not a numeric map (got a nested cell).")
    return arr


def _struct(path: str | Path, key: str, fields: Sequence[str]) -> tuple[Path, dict[str, object]]:

    path = Path(path)
    data = _loadmat(path)
    if key not in data:
        found = sorted(k for k in data if not k.startswith("_"))
        raise ValueError(f"{path}: expected a MATLAB struct `{key}` (an SBD {key[2:]} ground truth), found {found}.")
    value = np.asarray(data[key])
    names = value.dtype.names or ()
    missing = [f for f in fields if f not in names]
    if value.size != 1 or missing:
        raise ValueError(f"{path}: `{key}` lacks the fields {missing} (fields {list(names)}).")
    entry = value.ravel()[0]
    return path, {f: entry[f] for f in fields}


def _cell(value: object) -> list[object]:
    arr = np.asarray(value)
    return list(arr.ravel()) if arr.dtype == object else [arr]


def _int_list(value: object) -> np.ndarray:
    return np.asarray(value, dtype=np.int64).ravel()


@reads((".mat",), "SBD class ground truth (cls/<id>.mat: GTcls)")
def read_sbd_cls(path: str | Path) -> SBDClassGroundTruth:
    """Read an SBD ``cls/<id>.mat`` (``GTcls``).

    Raises:
        FileNotFoundError: no such file.
        ValueError: not a MATLAB v5 file, no ``GTcls`` struct or a field missing, a boundary map of another size than
            the segmentation, or a class outside 0..20 (each message names the file).

    Example:
        >>> import tempfile, scipy.io
        >>> seg = np.zeros((4, 6), np.uint8); seg[:, 3:] = 15  # a person (class 15) on the right
        >>> bounds = np.empty((20, 1), object)
        >>> for k in range(20):
        ...     bounds[k, 0] = np.zeros((4, 6))
        >>> bounds[14, 0][:, 3] = 1  # the person's boundary
        >>> gtcls = {"Boundaries": bounds, "Segmentation": seg, "CategoriesPresent": np.array([[15]], np.uint8)}
        >>> path = Path(tempfile.mkdtemp()) / "2008_000001.mat"
        >>> scipy.io.savemat(path, {"GTcls": gtcls})
        >>> gt = read_sbd_cls(path)
        >>> gt.boundaries.shape, int(gt.boundaries[14].sum()), gt.segmentation[0].tolist(), gt.categories
        ((20, 4, 6), 4, [0, 0, 0, 15, 15, 15], (15,))
    """
    path, gt = _struct(path, "GTcls", ("Boundaries", "Segmentation", "CategoriesPresent"))
    seg = np.asarray(gt["Segmentation"])
    if seg.ndim != 2 or seg.dtype.kind not in "iub":
        raise ValueError(f"{path}: `GTcls.Segmentation` must be a 2-D integer map, got {seg.dtype} {seg.shape}.")
    seg = seg.astype(np.int64)
    if seg.size and (seg.min() < 0 or seg.max() > len(SBD_CLASSES)):
        raise ValueError(f"{path}: `GTcls.Segmentation` holds classes outside 0..20 ({seg.min()}..{seg.max()}).")
    cells = _cell(gt["Boundaries"])
    if len(cells) != len(SBD_CLASSES):
        raise ValueError(f"{path}: `GTcls.Boundaries` must hold 20 maps (one per class), got {len(cells)}.")
    bounds = np.zeros((len(cells), *seg.shape), bool)
    for k, cell in enumerate(cells):
        b = _dense(cell, path, f"GTcls.Boundaries{{{k + 1}}}")
        if b.shape != seg.shape:
            raise ValueError(f"{path}: `GTcls.Boundaries{{{k + 1}}}` is {b.shape}, the segmentation {seg.shape}.")
        bounds[k] = b != 0
    cats = tuple(int(c) for c in _int_list(gt["CategoriesPresent"]))
    return SBDClassGroundTruth(bounds, seg, cats)


@reads((".mat",), "SBD instance ground truth (inst/<id>.mat: GTinst)")
def read_sbd_inst(path: str | Path) -> SBDInstanceGroundTruth:
    """Read an SBD ``inst/<id>.mat`` (``GTinst``).

    Raises:
        FileNotFoundError: no such file.
        ValueError: not a MATLAB v5 file, no ``GTinst`` struct or a field missing, more than 255 instances (SBD's
            instance maps are uint8), an instance index without a category, a category outside 1..20 (the message
            names the file).

    Example:
        >>> import tempfile, scipy.io
        >>> inst = np.zeros((4, 6), np.uint8); inst[:2, 3:] = 1; inst[2:, 3:] = 2  # two people, one above the other
        >>> bounds = np.empty((2, 1), object)
        >>> for i in range(2):
        ...     bounds[i, 0] = np.zeros((4, 6))
        >>> bounds[0, 0][1, 3:] = bounds[1, 0][2, 3:] = 1  # where they touch
        >>> gtinst = {"Segmentation": inst, "Boundaries": bounds, "Categories": np.array([[15], [15]], np.uint8)}
        >>> path = Path(tempfile.mkdtemp()) / "2008_000001.mat"
        >>> scipy.io.savemat(path, {"GTinst": gtinst})
        >>> gt = read_sbd_inst(path)
        >>> gt.segmentation[:, 4].tolist(), gt.boundaries.shape, gt.categories.tolist()
        ([1, 1, 2, 2], (2, 4, 6), [15, 15])
    """
    path, gt = _struct(path, "GTinst", ("Segmentation", "Boundaries", "Categories"))
    seg = np.asarray(gt["Segmentation"])
    if seg.ndim != 2 or seg.dtype.kind not in "iub":
        raise ValueError(f"{path}: `GTinst.Segmentation` must be a 2-D integer map, got {seg.dtype} {seg.shape}.")
    seg = seg.astype(np.int64)
    cats = _int_list(gt["Categories"]) if np.asarray(gt["Categories"]).size else np.zeros(0, np.int64)
    n = int(seg.max()) if seg.size else 0
    if n > SBD_MAX_INSTANCES or len(cats) > SBD_MAX_INSTANCES:
        raise ValueError(
            f"{path}: {max(n, len(cats))} instances; an SBD instance map (uint8) holds at most {SBD_MAX_INSTANCES}."
        )
    if seg.size and seg.min() < 0:
        raise ValueError(f"{path}: `GTinst.Segmentation` holds negative instance indices.")
    if n > len(cats):
        raise ValueError(f"{path}: instance {n} of `GTinst.Segmentation` has no entry in `Categories` ({len(cats)}).")
    if len(cats) and (cats.min() < 1 or cats.max() > len(SBD_CLASSES)):
        raise ValueError(f"{path}: `GTinst.Categories` holds classes outside 1..20: {cats.tolist()}.")
    cells = _cell(gt["Boundaries"]) if len(cats) else []
    bounds = np.zeros((len(cats), *seg.shape), bool)
    for i, cell in enumerate(cells[: len(cats)]):
        b = _dense(cell, path, f"GTinst.Boundaries{{{i + 1}}}")
        if b.shape == seg.shape:
            bounds[i] = b != 0
        else:
            raise ValueError(f"{path}: `GTinst.Boundaries{{{i + 1}}}` is {b.shape}, the segmentation {seg.shape}.")
    return SBDInstanceGroundTruth(seg, bounds, cats)


@reads((".png",), "Cityscapes gtFine labelIds maps")
def read_cityscapes_label_ids(path: str | Path) -> np.ndarray:
    """Read a ``*_gtFine_labelIds.png`` as an (H, W) int64 map (labelIds 0..33; a ValueError names the file).

    Example:
        >>> import tempfile
        >>> from PIL import Image
        >>> path = Path(tempfile.mkdtemp()) / "aachen_000000_000019_gtFine_labelIds.png"
        >>> Image.fromarray(np.array([[7, 7, 26], [7, 24, 26]], np.uint8)).save(path)  # road, person, car
        >>> labels = read_cityscapes_label_ids(path)
        >>> labels.dtype, labels.tolist()
        (dtype('int64'), [[7, 7, 26], [7, 24, 26]])
    """

    labels = read_labels(path)
    if labels.size and (labels.min() < 0 or labels.max() > 33):
        raise ValueError(f"{path}: Cityscapes labelIds lie in 0..33, got {labels.min()}..{labels.max()}.")
    return labels


@reads((".png",), "Cityscapes gtFine instanceIds maps")
def read_cityscapes_instance_ids(path: str | Path) -> np.ndarray:
    """Read a ``*_gtFine_instanceIds.png`` as an (H, W) int64 map (``labelId * 1000 + k`` for instances).

    Raises:
        ValueError: an id >= 1000 whose labelId is not an instance class, or one outside 0..33999 (names the file).

    Example:
        >>> import tempfile
        >>> from PIL import Image
        >>> path = Path(tempfile.mkdtemp()) / "aachen_000000_000019_gtFine_instanceIds.png"
        >>> ids = np.array([[7, 26000, 26000, 26001]], np.uint16)  # road, then cars 0 and 1 (16-bit PNG)
        >>> Image.fromarray(ids).save(path)
        >>> read_cityscapes_instance_ids(path).tolist()
        [[7, 26000, 26000, 26001]]
    """

    ids = read_labels(path)
    if ids.size and (ids.min() < 0 or ids.max() > 33999):
        raise ValueError(f"{path}: Cityscapes instanceIds lie in 0..33999, got {ids.min()}..{ids.max()}.")
    bad = np.setdiff1d(np.unique(ids[ids >= 1000]) // 1000, CITYSCAPES_INSTANCE_LABELS)
    if bad.size:
        raise ValueError(f"{path}: instance ids of labelIds {bad.tolist()}, which have no instances in Cityscapes.")
    return ids


def resize_nearest(x: Tensor, size: tuple[int, int]) -> Tensor:
    """Nearest-neighbour resize of (..., H, W) to ``size`` = (h, w), Pillow's ``Image.NEAREST`` index for index.

    Pillow samples pixel centres, ``src = floor(s / 2 + d * s)`` with ``s = H / h``, the sum accumulated in float64
    one step at a time (its ``ImagingScaleAffine``; the accumulated rounding moves some indices of an upscale, so it
    is reproduced step by step here): at half scale the odd rows and columns, not OpenCV's ``INTER_NEAREST`` even ones.

    Example:
        >>> resize_nearest(torch.arange(8).view(1, 8), (1, 4)).tolist()
        [[1, 3, 5, 7]]
    """
    h_in, w_in = x.shape[-2:]
    rows = _pillow_index(h_in, size[0]).to(x.device)
    cols = _pillow_index(w_in, size[1]).to(x.device)
    return x[..., rows[:, None], cols[None, :]]


def _pillow_index(n_in: int, n_out: int) -> Tensor:
    step = n_in / n_out
    v = np.full(n_out, step)
    v[0] = step * 0.5
    return torch.from_numpy(np.minimum(np.cumsum(v).astype(np.int64), n_in - 1))  # cumsum adds in order, as the loop


def scaled_size(height: int, width: int, scale: float) -> tuple[int, int]:
    """pyEdgeEval's scaled size ``int(h * scale + 0.5), int(w * scale + 0.5)``."""
    return int(height * scale + 0.5), int(width * scale + 0.5)


def mask_boundaries(masks: Tensor, ignore: Tensor | None, radius: float, *, backend: Backend = "auto") -> Tensor:
    """SEAL's edges of binary masks: ``0 < d_in + d_out <= radius`` (pyEdgeEval ``mask2bdry``, see module doc).

    Args:
        masks: (N, H, W) bool masks.
        ignore: (H, W) or (N, H, W) bool ignore region, or None.
        radius: edge half width in pixels.

    Returns:
        (N, H, W) bool edge maps.

    Example:
        >>> m = torch.zeros(1, 5, 6, dtype=torch.bool); m[0, :, 3:] = True
        >>> mask_boundaries(m, None, 1).int()[0, 0].tolist()
        [0, 0, 1, 1, 0, 0]
    """
    check_tensor(masks, "masks")
    if masks.dtype != torch.bool or masks.ndim != 3:
        raise ValueError(f"Expected `masks` to be a bool (N, H, W) tensor, but got {masks.dtype} {tuple(masks.shape)}.")
    inside = masks if ignore is None else masks | ignore.to(masks.device).expand_as(masks)
    out = torch.zeros_like(masks)
    step = max(1, _CHUNK_PIXELS // max(1, masks.shape[1] * masks.shape[2]))
    for lo in range(0, masks.shape[0], step):
        d_in, _ = distance_transform_edt(~inside[lo : lo + step], backend=backend)
        d_out, _ = distance_transform_edt(masks[lo : lo + step], backend=backend)
        d = d_in + d_out  # +inf where a distance has no feature (an empty mask, nothing outside): never an edge
        out[lo : lo + step] = (d > 0) & (d <= radius)
    return out


def regenerate_boundaries(
    labels: Tensor,
    class_values: Sequence[int],
    *,
    radius: float,
    thin: bool,
    ignore: Tensor | None = None,
    instances: Tensor | None = None,
    instance_classes: Mapping[int, int] | None = None,
    backend: Backend = "auto",
) -> Tensor:
    """SEAL's regenerated GT edges of one image: per class ``mask_boundaries(labels == v)``, optionally OR its
    instances' edges, optionally thinned.

    Args:
        labels: (H, W) integer class map.
        class_values: the label value of each output channel (K values).
        radius: edge half width (SEAL: 1 thin, 2 raw).
        thin: thin each class's edge map (after the OR of its instances).
        ignore: (H, W) bool ignore region (SBD frame; Cityscapes labelIds 2, 3).
        instances: (H, W) integer instance map (0 / anything not in ``instance_classes``: no instance).
        instance_classes: instance id -> class value; instance-sensitive edges when given with ``instances``.

    Returns:
        (K, H, W) bool edges; a class absent from ``labels`` has none (its instances are not looked at, as
        pyEdgeEval).

    Example:
        >>> labels = torch.zeros(6, 6, dtype=torch.int64); labels[:, 3:] = 1  # class 1 on the right, no class 2
        >>> edges = regenerate_boundaries(labels, [1, 2], radius=1, thin=False)
        >>> edges.shape, edges[0, 2].int().tolist(), int(edges[1].sum())  # one pixel on each side of the border
        (torch.Size([2, 6, 6]), [0, 0, 1, 1, 0, 0], 0)
    """
    check_tensor(labels, "labels")
    if labels.ndim != 2 or labels.dtype.is_floating_point:
        raise ValueError(
            f"Expected `labels` to be an integer (H, W) map, but got {labels.dtype} {tuple(labels.shape)}."
        )
    values = torch.as_tensor(list(class_values), dtype=labels.dtype, device=labels.device)
    masks = labels[None] == values[:, None, None]
    present = masks.flatten(1).any(1)
    edges = torch.zeros_like(masks)
    idx = present.nonzero().flatten()
    if idx.numel():
        edges[idx] = mask_boundaries(masks[idx], ignore, radius, backend=backend)
    if instances is not None and instance_classes:
        if instances.shape != labels.shape:
            raise ValueError(
                f"Expected `instances` of the shape of `labels` {tuple(labels.shape)}, got {tuple(instances.shape)}."
            )
        value_index = {int(v): k for k, v in enumerate(values.tolist())}
        ids = [i for i in _present_ids(instances) if i in instance_classes]
        ids = [i for i in ids if instance_classes[i] in value_index and bool(present[value_index[instance_classes[i]]])]
        if ids:
            id_t = torch.as_tensor(ids, dtype=instances.dtype, device=instances.device)
            inst_edges = mask_boundaries(instances[None] == id_t[:, None, None], ignore, radius, backend=backend)
            channel = torch.as_tensor([value_index[instance_classes[i]] for i in ids], device=labels.device)
            for c in channel.unique().tolist():
                edges[c] |= inst_edges[channel == c].any(0)
    if thin:
        edges = thin_maps(edges, backend=backend)
    return edges


def _present_ids(ids: Tensor) -> list[int]:
    """The distinct non-negative values of an id map, increasing (a count per value: no sort of the pixels)."""
    flat = ids.flatten().long()
    flat = flat[flat >= 0] if bool((flat < 0).any()) else flat
    if flat.numel() == 0:
        return []
    return torch.bincount(flat).nonzero().flatten().tolist()


def _frame(height: int, width: int, border: int) -> Tensor:
    frame = torch.zeros(height, width, dtype=torch.bool)
    if border:
        frame[:border] = frame[-border:] = True
        frame[:, :border] = frame[:, -border:] = True
    return frame


def stored_sbd_boundaries(cls: SBDClassGroundTruth, inst: SBDInstanceGroundTruth | None = None) -> Tensor:
    """The MATLAB benchmark's GT: ``GTcls.Boundaries`` (20, H, W), OR ``GTinst.Boundaries`` of each class's
    instances when ``inst`` is given (instance-sensitive)."""
    edges = torch.from_numpy(cls.boundaries.copy())
    if inst is not None:
        if inst.segmentation.shape != cls.segmentation.shape:
            raise ValueError(
                f"Expected GTinst of the size of GTcls {cls.segmentation.shape}, got {inst.segmentation.shape}."
            )
        for b, c in zip(inst.boundaries, inst.categories, strict=True):
            edges[int(c) - 1] |= torch.from_numpy(b)
    return edges


def _sbd_train_ids(seg: np.ndarray) -> Tensor:
    """SBD class map -> trainIds (class - 1; background 0 and SEAL's frame label 21: 255)."""
    t = torch.from_numpy(seg.astype(np.int64)) - 1
    return torch.where((t < 0) | (t >= len(SBD_CLASSES)), torch.full_like(t, 255), t)


def sbd_ground_truth(
    cls_path: str | Path,
    inst_path: str | Path | None,
    *,
    regenerate: bool,
    instance_sensitive: bool,
    thin: bool = True,
    radius: float = 1.0,
    ignore_border: int = 0,
    backend: Backend = "auto",
) -> SemanticGroundTruth:
    """GT edges (20, H, W) and trainId map of one SBD image, stored (MATLAB) or regenerated (SEAL).

    Regenerated: the class map's ``ignore_border`` frame becomes an ignore region (SEAL's label 21), the trainId map
    is 255 there; instance-sensitive needs ``inst_path``.

    Example:
        >>> import tempfile, scipy.io
        >>> seg = np.zeros((6, 6), np.uint8); seg[:, 3:] = 15  # a person (class 15) on the right
        >>> bounds = np.empty((20, 1), object)
        >>> for k in range(20):
        ...     bounds[k, 0] = np.zeros((6, 6))
        >>> bounds[14, 0][:, 3] = 1  # the stored boundary: the person's first column
        >>> gtcls = {"Boundaries": bounds, "Segmentation": seg, "CategoriesPresent": np.array([[15]], np.uint8)}
        >>> path = Path(tempfile.mkdtemp()) / "2008_000001.mat"
        >>> scipy.io.savemat(path, {"GTcls": gtcls})
        >>> stored = sbd_ground_truth(path, None, regenerate=False, instance_sensitive=False)
        >>> stored.edges.shape, stored.edges[14, 2].int().tolist(), stored.segmentation[2].tolist()
        (torch.Size([20, 6, 6]), [0, 0, 0, 1, 0, 0], [255, 255, 255, 14, 14, 14])
        >>> sbd_ground_truth(path, None, regenerate=True, instance_sensitive=False).edges[14, 2].int().tolist()
        [0, 0, 1, 0, 0, 0]
    """
    cls = read_sbd_cls(cls_path)
    inst = read_sbd_inst(inst_path) if (instance_sensitive and inst_path is not None) else None
    if instance_sensitive and inst is None:
        raise ValueError("Expected `inst_path` (inst/<id>.mat) for instance-sensitive SBD ground truth.")
    if not regenerate:
        return SemanticGroundTruth(stored_sbd_boundaries(cls, inst), _sbd_train_ids(cls.segmentation))
    h, w = cls.segmentation.shape
    frame = _frame(h, w, ignore_border)
    labels = torch.from_numpy(cls.segmentation)
    labels = torch.where(frame, torch.full_like(labels, len(SBD_CLASSES) + 1), labels)
    inst_map, inst_classes = None, None
    if inst is not None:
        if inst.segmentation.shape != (h, w):
            raise ValueError(f"{inst_path}: GTinst is {inst.segmentation.shape}, GTcls {(h, w)}.")
        inst_map = torch.from_numpy(inst.segmentation)
        inst_classes = {i + 1: int(c) for i, c in enumerate(inst.categories)}
    edges = regenerate_boundaries(
        labels,
        range(1, len(SBD_CLASSES) + 1),
        radius=radius,
        thin=thin,
        ignore=frame if ignore_border else None,
        instances=inst_map,
        instance_classes=inst_classes,
        backend=backend,
    )
    return SemanticGroundTruth(edges, _sbd_train_ids(labels.numpy()))


def cityscapes_train_ids(label_ids: Tensor) -> Tensor:
    """labelIds -> trainIds (255 for labels without one)."""
    lut = torch.full((256,), 255, dtype=torch.int64)
    for label, train in CITYSCAPES_LABEL_TO_TRAIN.items():
        lut[label] = train
    return lut.to(label_ids.device)[label_ids.clamp(0, 255).long()]


def cityscapes_ground_truth(
    label_path: str | Path,
    instance_path: str | Path | None,
    *,
    instance_sensitive: bool,
    thin: bool,
    radius: float,
    scale: float = 0.5,
    labels_first: bool = True,
    backend: Backend = "auto",
) -> SemanticGroundTruth:
    """SEAL's regenerated GT edges (19, h, w) and trainId map (h, w) of one Cityscapes image at ``scale``.

    ``labels_first`` (SEAL thin): the labelIds and instanceIds maps are resized (nearest, Pillow) before the edges are
    made; otherwise (raw) the full-scale edges are resized (nearest at load, pyEdgeEval's ``load_scaled_edge``). The
    trainId map (kill_internal) is the resized labelIds map's.

    Example:
        >>> import tempfile
        >>> from PIL import Image
        >>> root = Path(tempfile.mkdtemp())
        >>> labels = np.full((8, 8), 7, np.uint8); labels[:, 4:] = 26  # labelIds: road | car
        >>> ids = labels.astype(np.uint16); ids[:4, 4:] = 26000; ids[4:, 4:] = 26001  # two cars, one above the other
        >>> Image.fromarray(labels).save(root / "a_gtFine_labelIds.png")
        >>> Image.fromarray(ids).save(root / "a_gtFine_instanceIds.png")
        >>> for sensitive in (False, True):  # full scale; the car's (trainId 13) edge pixels
        ...     gt = cityscapes_ground_truth(
        ...         root / "a_gtFine_labelIds.png", root / "a_gtFine_instanceIds.png",
        ...         instance_sensitive=sensitive, thin=False, radius=1, scale=1.0,
        ...     )
        ...     print(tuple(gt.edges.shape), int(gt.edges[13].sum()))
        (19, 8, 8) 16
        (19, 8, 8) 22
    """
    label_ids = torch.from_numpy(read_cityscapes_label_ids(label_path))
    inst = None
    if instance_sensitive:
        if instance_path is None:
            raise ValueError("Expected `instance_path` (*_gtFine_instanceIds.png) for instance-sensitive ground truth.")
        inst = torch.from_numpy(read_cityscapes_instance_ids(instance_path))
        if inst.shape != label_ids.shape:
            raise ValueError(
                f"{instance_path}: instanceIds is {tuple(inst.shape)}, labelIds {tuple(label_ids.shape)} "
                f"({label_path})."
            )
    h, w = label_ids.shape
    size = scaled_size(h, w, scale)
    if scale < 1 and labels_first:
        label_ids = resize_nearest(label_ids, size)
        inst = resize_nearest(inst, size) if inst is not None else None
    edges = cityscapes_edges(label_ids, inst, radius=radius, thin=thin, backend=backend)
    if scale < 1 and not labels_first:
        edges = resize_nearest(edges, size)
        label_ids = resize_nearest(label_ids, size)
    return SemanticGroundTruth(edges, cityscapes_train_ids(label_ids))


def cityscapes_edges(
    label_ids: Tensor, instance_ids: Tensor | None, *, radius: float, thin: bool, backend: Backend = "auto"
) -> Tensor:
    """Edges (19, H, W) per trainId from labelIds (and instanceIds: instance-sensitive), SEAL's rule."""
    ignore = torch.zeros(label_ids.shape, dtype=torch.bool, device=label_ids.device)
    for v in CITYSCAPES_IGNORE_LABELS:
        ignore |= label_ids == v
    classes = None
    if instance_ids is not None:
        ids = _present_ids(instance_ids)
        classes = {i: i // 1000 for i in ids if i >= 1000 and i // 1000 in CITYSCAPES_INSTANCE_LABELS}
    return regenerate_boundaries(
        label_ids,
        list(CITYSCAPES_LABEL_TO_TRAIN),
        radius=radius,
        thin=thin,
        ignore=ignore,
        instances=instance_ids,
        instance_classes=classes,
        backend=backend,
    )
