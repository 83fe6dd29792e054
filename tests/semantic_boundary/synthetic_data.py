"""Small synthetic datasets in the SBD and Cityscapes layouts (also used by the command's tests).

SBD: ``gt/cls/<id>.mat`` (GTcls), ``gt/inst/<id>.mat`` (GTinst), ``pred/class_XXX/<id>.png``.
Cityscapes: ``gtFine/val/<city>/<id>_gtFine_labelIds.png`` / ``_instanceIds.png``,
``pred/class_XXX/<city>/<id>_leftImg8bit.png`` (full size).
Regions are random ellipses (later ones on top), so classes touch, overlap and split into several instances;
predictions are blurred, jittered and noisy copies of each class's region borders, as uint8 maps.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse
from PIL import Image
from scipy import ndimage

from segmetrics_torch.reference.boundary import seg2bmap


def _ellipses(rng: np.random.Generator, shape: tuple[int, int], n: int) -> list[np.ndarray]:
    h, w = shape
    yy, xx = np.mgrid[:h, :w]
    out = []
    for _ in range(n):
        cy, cx = rng.uniform(0, h), rng.uniform(0, w)
        ry, rx = rng.uniform(0.12, 0.4) * h, rng.uniform(0.12, 0.4) * w
        out.append(((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1)
    return out


def soft_prediction(rng: np.random.Generator, region: np.ndarray, noise: float = 0.25) -> np.ndarray:
    """A uint8 boundary map near the region's border: blurred border, a random shift, speckle noise."""
    border = seg2bmap(region.astype(np.int64)).astype(np.float64)
    border = np.roll(border, (int(rng.integers(-1, 2)), int(rng.integers(-1, 2))), axis=(0, 1))
    soft = ndimage.gaussian_filter(border, rng.uniform(0.6, 1.5))
    soft = soft / max(soft.max(), 1e-9) * rng.uniform(0.6, 1.0)
    soft = soft + noise * rng.random(region.shape) ** 4
    return np.clip(np.rint(soft * 255), 0, 255).astype(np.uint8)


def make_sbd(
    root: Path,
    n_images: int = 3,
    shape: tuple[int, int] = (48, 64),
    classes: tuple[int, ...] = (3, 7, 15),
    seed: int = 0,
) -> tuple[list[str], list[int]]:
    """Write an SBD-layout dataset under ``root/gt`` and ``root/pred``; returns (ids, classes)."""
    rng = np.random.default_rng(seed)
    ids = [f"2008_{i:06d}" for i in range(n_images)]
    for d in ("gt/cls", "gt/inst"):
        (root / d).mkdir(parents=True, exist_ok=True)
    for c in classes:
        (root / "pred" / f"class_{c:03d}").mkdir(parents=True, exist_ok=True)
    for image_id in ids:
        seg = np.zeros(shape, np.uint8)
        inst = np.zeros(shape, np.uint8)
        cats = []
        for mask in _ellipses(rng, shape, int(rng.integers(3, 6))):
            cats.append(int(rng.choice(classes)))
            seg[mask] = cats[-1]
            inst[mask] = len(cats)
        keep = [i + 1 for i in range(len(cats)) if (inst == i + 1).any()]  # drop fully covered instances
        remap = np.zeros(len(cats) + 1, np.uint8)
        remap[keep] = np.arange(1, len(keep) + 1)
        inst = remap[inst]
        cats = [cats[i - 1] for i in keep]
        present = sorted(set(cats))
        bounds = np.empty((20, 1), dtype=object)
        for k in range(20):
            bounds[k, 0] = scipy.sparse.csc_matrix(seg2bmap((seg == k + 1).astype(np.int64)).astype(np.float64))
        gtcls = {"Boundaries": bounds, "Segmentation": seg, "CategoriesPresent": np.array(present, np.uint8)[:, None]}
        scipy.io.savemat(root / "gt/cls" / f"{image_id}.mat", {"GTcls": gtcls})
        ib = np.empty((len(cats), 1), dtype=object)
        for i in range(len(cats)):
            ib[i, 0] = scipy.sparse.csc_matrix(seg2bmap((inst == i + 1).astype(np.int64)).astype(np.float64))
        gtinst = {"Segmentation": inst, "Boundaries": ib, "Categories": np.array(cats, np.uint8)[:, None]}
        scipy.io.savemat(root / "gt/inst" / f"{image_id}.mat", {"GTinst": gtinst})
        for c in classes:
            Image.fromarray(soft_prediction(rng, seg == c)).save(root / "pred" / f"class_{c:03d}" / f"{image_id}.png")
    return ids, list(classes)


#: labelIds used by the synthetic Cityscapes images: road, sidewalk, building, person, car, bicycle (and ignore 3)
CITYSCAPES_LABELS = (7, 8, 11, 24, 26, 33)


def make_cityscapes(
    root: Path, n_images: int = 2, shape: tuple[int, int] = (128, 256), seed: int = 0, city: str = "lindau"
) -> tuple[list[str], list[int]]:
    """Write a Cityscapes-layout dataset (``root/gtFine/val/<city>``, ``root/pred``); returns (ids, classes 1-based)."""
    rng = np.random.default_rng(seed)
    label2train = {7: 0, 8: 1, 11: 2, 24: 11, 26: 13, 33: 18}
    classes = sorted(t + 1 for t in label2train.values())
    gt = root / "gtFine" / "val" / city
    gt.mkdir(parents=True, exist_ok=True)
    ids = [f"{city}_{i:06d}_000019" for i in range(n_images)]
    for image_id in ids:
        labels = np.full(shape, 7, np.uint8)
        labels[: shape[0] // 3] = 11
        inst = labels.astype(np.int32)
        counters: dict[int, int] = {}
        for mask in _ellipses(rng, shape, int(rng.integers(4, 8))):
            lab = int(rng.choice(CITYSCAPES_LABELS[1:]))
            labels[mask] = lab
            if lab in (24, 26, 33):
                counters[lab] = counters.get(lab, -1) + 1
                inst[mask] = lab * 1000 + counters[lab]
            else:
                inst[mask] = lab
        labels[-4:] = 3  # an out-of-ROI strip: SEAL's ignore region
        inst[-4:] = 3
        Image.fromarray(labels).save(gt / f"{image_id}_gtFine_labelIds.png")
        Image.fromarray(inst.astype(np.uint16)).save(gt / f"{image_id}_gtFine_instanceIds.png")
        for c in classes:
            lab = next(k for k, t in label2train.items() if t + 1 == c)
            folder = root / "pred" / f"class_{c:03d}" / city
            folder.mkdir(parents=True, exist_ok=True)
            Image.fromarray(soft_prediction(rng, labels == lab)).save(folder / f"{image_id}_leftImg8bit.png")
    return ids, classes
