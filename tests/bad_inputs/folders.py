"""Small valid input folders of the command's families, written by the command-line bad-input tests (each test
then breaks one thing in its own copy)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import scipy.io
from PIL import Image

H, W = 20, 24


def fingerprint(root: Path) -> dict[str, str]:
    """Every file under ``root`` (inputs, configuration, cache) with its content hash (links not followed): equal
    before and after a refused run when nothing was replaced, removed or added."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def png(path: Path, array: np.ndarray) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(array).save(path)
    return path


def gt_mat(path: Path, seg: np.ndarray) -> Path:
    """A BSDS ``groundTruth`` .mat with one annotation: ``seg`` and its boundaries."""
    path.parent.mkdir(parents=True, exist_ok=True)
    cell = np.empty((1, 1), dtype=object)
    bnd = np.zeros_like(seg, dtype=np.uint8)
    bnd[:, 1:] |= (seg[:, 1:] != seg[:, :-1]).astype(np.uint8)
    bnd[1:, :] |= (seg[1:, :] != seg[:-1, :]).astype(np.uint8)
    cell[0, 0] = {"Segmentation": seg.astype(np.uint16), "Boundaries": bnd}
    scipy.io.savemat(path, {"groundTruth": cell})
    return path


def write_foreground(folder: Path, rng: np.random.Generator) -> None:
    """``folder/gt`` (3 box masks, 0/255) and ``folder/pred`` (3 random soft maps), ``im0..im2.png``."""
    for i in range(3):
        gt = np.zeros((H, W), np.uint8)
        gt[4 : 10 + i, 5:15] = 255
        png(folder / "gt" / f"im{i}.png", gt)
        png(folder / "pred" / f"im{i}.png", rng.integers(0, 256, (H, W), dtype=np.uint8))


def write_families(base: Path) -> None:
    """``base/sod`` (:func:`write_foreground`), ``base/bdry/{gt,pred}`` (2 BSDS .mat + random soft maps) and
    ``base/part/{gt,pred}`` (the same two-region partition), ``b0``/``b1``."""
    rng = np.random.default_rng(0)
    write_foreground(base / "sod", rng)
    seg = np.ones((H, W), np.int64)
    seg[:, W // 2 :] = 2
    for i in range(2):
        gt_mat(base / "bdry/gt" / f"b{i}.mat", seg)
        png(base / "bdry/pred" / f"b{i}.png", rng.integers(0, 256, (H, W), dtype=np.uint8))
        png(base / "part/pred" / f"b{i}.png", (seg * 40).astype(np.uint8))
        gt_mat(base / "part/gt" / f"b{i}.mat", seg)
