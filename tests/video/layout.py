"""Synthetic DAVIS-layout folders for the video tests: palette PNGs of moving objects, written with Pillow."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

#: DAVIS' palette (the PASCAL VOC colour map) for the first ids; the rest grey: only the indices matter
PALETTE = [0, 0, 0, 128, 0, 0, 0, 128, 0, 128, 128, 0, 0, 0, 128, 128, 0, 128] + [200] * (3 * 250) + [224, 224, 192]


def save_mask(path: Path, labels: np.ndarray) -> None:
    """Write an (H, W) id map as a palette PNG (DAVIS' format)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    image = Image.fromarray(np.asarray(labels, dtype=np.uint8), mode="P")
    image.putpalette(PALETTE[: 3 * 256])
    image.save(path)


def moving_objects(
    rng: np.random.Generator,
    frames: int,
    height: int,
    width: int,
    objects: int,
    *,
    void: bool = False,
    vanish: bool = False,
    empty_frames: bool = False,
) -> np.ndarray:
    """(T, H, W) uint8 labels of ``objects`` moving rectangles (later ids drawn over earlier ones); options: a void
    band around object 1 (255), objects absent from some frames (never from the first), frames without any object
    (never the first)."""
    labels = np.zeros((frames, height, width), np.uint8)
    for k in range(1, objects + 1):
        h0, w0 = rng.integers(3, max(4, height // 2)), rng.integers(3, max(4, width // 2))
        y, x = rng.integers(0, height - h0), rng.integers(0, width - w0)
        vy, vx = rng.integers(-2, 3), rng.integers(-2, 3)
        for t in range(frames):
            if vanish and t > 0 and rng.random() < 0.25:
                continue
            yy = int(np.clip(y + vy * t, 0, height - h0))
            xx = int(np.clip(x + vx * t, 0, width - w0))
            labels[t, yy : yy + h0, xx : xx + w0] = k
            if void and k == 1:
                band = labels[t, max(yy - 1, 0) : yy + h0 + 1, max(xx - 1, 0) : xx + w0 + 1]
                band[band == 0] = 255
    if empty_frames:
        for t in range(1, frames):
            if rng.random() < 0.2:
                labels[t] = np.where(labels[t] == 255, 255, 0)
    return labels


def perturb(rng: np.random.Generator, labels: np.ndarray, *, max_id: int, flip: float = 0.02) -> np.ndarray:
    """A 'result' from a ground truth: void dropped, each frame shifted by up to 2 px, some pixels relabelled."""
    out = np.where(labels == 255, 0, labels).astype(np.uint8)
    for t in range(out.shape[0]):
        out[t] = np.roll(out[t], (int(rng.integers(-2, 3)), int(rng.integers(-2, 3))), axis=(0, 1))
        noise = rng.random(out[t].shape) < flip
        out[t][noise] = rng.integers(0, max_id + 1, int(noise.sum()))
    return out


def write_davis(
    root: Path,
    results: Path,
    sequences: dict[str, tuple[np.ndarray, np.ndarray]],
    *,
    task: str = "semi-supervised",
    subset: str = "val",
) -> None:
    """Write ``{name: (gt (T, H, W), result (T, H, W))}`` as a DAVIS root (ImageSets/2017/<subset>.txt and the
    annotations of ``task``) and a results folder; the set lists the sequences in the dict's order."""
    folder = "Annotations" if task == "semi-supervised" else "Annotations_unsupervised"
    (root / "ImageSets" / "2017").mkdir(parents=True, exist_ok=True)
    (root / "ImageSets" / "2017" / f"{subset}.txt").write_text("".join(f"{n}\n" for n in sequences))
    for name, (gt, res) in sequences.items():
        for t in range(gt.shape[0]):
            save_mask(root / folder / "480p" / name / f"{t:05d}.png", gt[t])
            save_mask(results / name / f"{t:05d}.png", res[t])


def pil_read(path: str) -> np.ndarray:
    """The reference's reader: ``np.array(Image.open(path))``."""
    with Image.open(path) as image:
        return np.array(image)


def set_list(root: Path, subset: str = "val") -> list[str]:
    """The sequences of ``ImageSets/2017/<subset>.txt`` as the reference reads them (stripped lines)."""
    return [line.strip() for line in (root / "ImageSets" / "2017" / f"{subset}.txt").read_text().splitlines()]


def reference_folder(root: Path, results: Path, **kwargs) -> dict:
    """The numpy port of davis2017-evaluation on a folder, reading as it does."""
    from segmetrics_torch.reference.video import evaluate_folder

    return evaluate_folder(str(root), str(results), set_list(root), pil_read, **kwargs)
