"""Evaluate a method's results on a DAVIS 2017 folder, as ``davis2017-evaluation``'s ``evaluation_method.py`` does.

Layout (the official one): ``<davis_root>/ImageSets/2017/<set>.txt`` (one sequence a line),
``<davis_root>/Annotations/<resolution>/<seq>/<frame>.png`` (``Annotations_unsupervised`` for the unsupervised task),
and the results ``<results>/<seq>/<frame>.png``: palette PNGs (mode ``P``; 8-bit gray ``L`` is read the same) whose
pixel values are object ids, 0 background, 255 void in the ground truth. The frames of a sequence are its ground-truth
PNGs sorted by name; the reference also requires ``JPEGImages``, which this does not read.

:func:`evaluate_davis` streams each sequence in chunks of ``chunk_frames`` frames (bounded memory whatever the
length) through :class:`~segmetrics_torch.functional.video.protocol.DavisSequence`, and returns a
:class:`DavisResults`; :func:`davis_global_csv` and :func:`davis_per_sequence_csv` give the text of the reference's
``global_results-<set>.csv`` and ``per-sequence_results-<set>.csv`` (columns, row order, ``%.3f``; a NaN an empty
field, as pandas writes it). The library writes no file: the command does.
"""

from __future__ import annotations

import csv
import io
import math
import struct
import warnings
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..._checks import BACKENDS, Backend, check_choice
from ...io import max_image_pixels, open_image
from ...ops.davis import decode_png_ids
from ...readers import reads
from .protocol import MAX_PROPOSALS, TASKS, DavisObject, DavisSequence
from .statistics import DECAY_EDGES, davis_decay_edges

__all__ = [
    "GLOBAL_COLUMNS",
    "PER_SEQUENCE_COLUMNS",
    "DavisResults",
    "davis_global_csv",
    "davis_per_sequence_csv",
    "davis_sequences",
    "evaluate_davis",
    "read_davis_mask",
]

#: the columns of ``global_results-<set>.csv``
GLOBAL_COLUMNS = ("J&F-Mean", "J-Mean", "J-Recall", "J-Decay", "F-Mean", "F-Recall", "F-Decay")
#: the columns of ``per-sequence_results-<set>.csv``
PER_SEQUENCE_COLUMNS = ("Sequence", "J-Mean", "F-Mean")
_MASK_MODES = ("P", "L")
#: chunks decoded ahead of the one being counted
_AHEAD = 2


@reads((".png",), "DAVIS palette PNG masks (object ids; 255 void)")
def read_davis_mask(path: str | Path, out: np.ndarray | None = None) -> np.ndarray:
    """Read a DAVIS mask: an (H, W) uint8 array of the palette indices (object ids) of a palette / gray PNG.

    The values are Pillow's ``np.asarray(Image.open(path))`` (the reference's reader), each file decoded once: a plain
    8-bit palette / gray PNG by :func:`~segmetrics_torch.ops.davis.decode_png_ids` (zlib-ng's inflate and a compiled
    unfilter, both without the GIL, several times Pillow's speed), any other file by Pillow. ``out``, an (H, W) uint8
    array, receives the mask when the image has that size (a frame of a preallocated chunk: no copy); the array
    returned may be read-only.

    Raises:
        FileNotFoundError: no such file.
        ValueError: not a readable image, or not a palette (``P``) / 8-bit gray (``L``) image: an RGB rendering of
            the masks has lost the ids (the message names the file and its mode).

    Example:
        >>> import tempfile, numpy as np
        >>> from pathlib import Path
        >>> from PIL import Image
        >>> path = Path(tempfile.mkdtemp()) / "00000.png"
        >>> im = Image.fromarray(np.array([[0, 1], [2, 255]], np.uint8), mode="P"); im.putpalette([0, 0, 0] * 256)
        >>> im.save(path)
        >>> read_davis_mask(path).tolist()
        [[0, 1], [2, 255]]
    """

    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError:
        data = b""  # a folder, no permission: Pillow's path below names the problem
    mask = decode_png_ids(data, out, max_pixels=max_image_pixels()) if data else None
    if mask is not None:
        return mask
    with open_image(path) as image:
        mode = image.mode
        if mode not in _MASK_MODES:
            raise ValueError(
                f"{path}: a DAVIS mask must be a palette (P) or 8-bit gray (L) PNG of object ids, but this one has "
                f"mode {mode!r} (an RGB rendering of the masks has lost the ids; save the id map with a palette)."
            )
        try:
            return np.asarray(image, dtype=np.uint8)  # read-only; the caller stacks frames into a new array
        except (OSError, SyntaxError, ValueError, struct.error) as error:  # Pillow's errors of a damaged PNG
            raise ValueError(f"{path}: cannot decode the image ({error}).") from None


@reads((".txt",), "DAVIS ImageSets sequence lists", from_folders=False)
def davis_sequences(davis_root: str | Path, subset: str = "val", *, year: str = "2017") -> list[str]:
    """The sequences of ``<davis_root>/ImageSets/<year>/<subset>.txt``, in the file's order (blank lines skipped).

    Raises:
        FileNotFoundError: the list does not exist (the message names it).

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> root = Path(tempfile.mkdtemp()); (root / "ImageSets" / "2017").mkdir(parents=True)
        >>> _ = (root / "ImageSets" / "2017" / "val.txt").write_text("bike-packing\\nblackswan\\n\\n")
        >>> davis_sequences(root, "val")
        ['bike-packing', 'blackswan']
    """
    path = Path(davis_root) / "ImageSets" / year / f"{subset}.txt"
    if not Path(davis_root).is_dir():  # a mistyped root: say so, not that a file inside it is missing
        raise FileNotFoundError(f"{davis_root}: the DAVIS root folder does not exist.")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: the DAVIS sequence list of set {subset!r} is missing.")
    return [line.strip() for line in path.read_text().splitlines() if line.strip()]


@dataclass(frozen=True)
class DavisResults:
    """The evaluation of one method on one DAVIS set.

    Attributes:
        task, subset: what was evaluated.
        objects: the per-object rows, in the reference's order (sequences as listed, objects within each).
        sequences: the sequences evaluated, in order.
        decay_edges: "reference" or "corrected".

    Example:
        >>> import tempfile
        >>> from PIL import Image
        >>> root = Path(tempfile.mkdtemp()); (root / "DAVIS/ImageSets/2017").mkdir(parents=True)
        >>> _ = (root / "DAVIS/ImageSets/2017/val.txt").write_text("cows\\n")
        >>> gt = np.zeros((24, 32), np.uint8); gt[4:12, 4:12] = 1
        >>> res = gt.copy(); res[4:12, 8:12] = 0  # the result finds the left half of the cow
        >>> for folder, mask in (("DAVIS/Annotations/480p/cows", gt), ("res/cows", res)):
        ...     (root / folder).mkdir(parents=True)
        ...     for t in range(4):
        ...         Image.fromarray(mask, mode="P").save(root / folder / f"{t:05d}.png")
        >>> results = evaluate_davis(root / "DAVIS", root / "res")
        >>> results.task, results.sequences, [o.name for o in results.objects]
        ('semi-supervised', ('cows',), ['cows_1'])
        >>> results.global_results()["J-Mean"]
        0.5
    """

    task: str
    subset: str
    objects: tuple[DavisObject, ...]
    sequences: tuple[str, ...]
    decay_edges: str = "reference"

    def global_results(self) -> dict[str, float]:
        """The global row: ``{"J&F-Mean", "J-Mean", "J-Recall", "J-Decay", "F-Mean", "F-Recall", "F-Decay"}``, each
        the mean over objects (J&F-Mean: the mean of the J and F means), as ``evaluation_method.py``."""
        if not self.objects:
            raise ValueError("No object was evaluated: every sequence's first annotation is empty.")

        def mean(key: str) -> float:
            return float(np.mean([o.stats[key] for o in self.objects]))

        j, f = mean("j_mean"), mean("f_mean")
        return {
            "J&F-Mean": (j + f) / 2.0,
            "J-Mean": j,
            "J-Recall": mean("j_recall"),
            "J-Decay": mean("j_decay"),
            "F-Mean": f,
            "F-Recall": mean("f_recall"),
            "F-Decay": mean("f_decay"),
        }

    def object_rows(self, *, frames: bool = True) -> list[dict[str, Any]]:
        """The per-object table as plain rows (a JSON report's, a DataFrame's), in the reference's order: ``name``
        (``<sequence>_<index>``), ``sequence``, ``object_id``, ``proposal_id``, the six statistics, and with
        ``frames`` the per-frame ``j`` and ``f`` over the evaluated frames (lists of floats, NaN kept).

        Example:
            >>> import torch
            >>> stats = {"j_mean": 0.8, "j_recall": 1.0, "j_decay": 0.1, "f_mean": 0.9, "f_recall": 1.0, "f_decay": 0.0}
            >>> row = DavisObject("blackswan", 1, 1, 1, torch.tensor([0.8]), torch.tensor([0.9]), stats)
            >>> DavisResults("semi-supervised", "val", (row,), ("blackswan",)).object_rows()[0]["name"]
            'blackswan_1'
        """
        rows = []
        for o in self.objects:
            row: dict[str, Any] = {"name": o.name, "sequence": o.sequence, "object_id": o.object_id}
            row.update(proposal_id=o.proposal_id, **o.stats)
            if frames:
                row.update(j=o.j.tolist(), f=o.f.tolist())
            rows.append(row)
        return rows

    def per_sequence(self) -> dict[str, dict[str, float]]:
        """Per sequence, the mean over its objects of each statistic (``j_mean``, ..., ``jf_mean``)."""
        out: dict[str, dict[str, float]] = {}
        for seq in self.sequences:
            rows = [o for o in self.objects if o.sequence == seq]
            if rows:
                stats = {k: float(np.mean([o.stats[k] for o in rows])) for k in rows[0].stats}
                stats["jf_mean"] = (stats["j_mean"] + stats["f_mean"]) / 2
                out[seq] = stats
        return out


def _fmt(value: float) -> str:
    # pandas' to_csv(float_format="%.3f"): the same digits, NaN an empty field
    return "" if math.isnan(value) else f"{value:.3f}"


def _csv(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)  # QUOTE_MINIMAL, "\n": what pandas writes on POSIX
    return buf.getvalue()


def davis_global_csv(results: DavisResults) -> str:
    """The text of the reference's ``global_results-<set>.csv`` (header and one row, ``%.3f``).

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional.video import DavisObject
        >>> stats = {"j_mean": 0.8, "j_recall": 1.0, "j_decay": 0.1, "f_mean": 0.9, "f_recall": 1.0, "f_decay": 0.0}
        >>> row = DavisObject("blackswan", 1, 1, 1, torch.ones(3), torch.ones(3), stats)
        >>> print(davis_global_csv(DavisResults("semi-supervised", "val", (row,), ("blackswan",))), end="")
        J&F-Mean,J-Mean,J-Recall,J-Decay,F-Mean,F-Recall,F-Decay
        0.850,0.800,1.000,0.100,0.900,1.000,0.000
    """
    row = results.global_results()
    return _csv([list(GLOBAL_COLUMNS), [_fmt(row[c]) for c in GLOBAL_COLUMNS]])


def davis_per_sequence_csv(results: DavisResults) -> str:
    """The text of the reference's ``per-sequence_results-<set>.csv``: ``Sequence,J-Mean,F-Mean``, one row per
    object named ``<sequence>_<i>``, in the reference's order.

    Example:
        >>> import torch
        >>> from segmetrics_torch.functional.video import DavisObject
        >>> stats = {"j_mean": 0.8, "j_recall": 1.0, "j_decay": 0.1, "f_mean": 0.9, "f_recall": 1.0, "f_decay": 0.0}
        >>> row = DavisObject("blackswan", 1, 1, 1, torch.ones(3), torch.ones(3), stats)
        >>> print(davis_per_sequence_csv(DavisResults("semi-supervised", "val", (row,), ("blackswan",))), end="")
        Sequence,J-Mean,F-Mean
        blackswan_1,0.800,0.900
    """
    rows = [list(PER_SEQUENCE_COLUMNS)]
    rows += [[o.name, _fmt(o.stats["j_mean"]), _fmt(o.stats["f_mean"])] for o in results.objects]
    return _csv(rows)


def _frame_error(sequence: str, frame: str, what: str, message: str) -> ValueError:
    return ValueError(f"sequence {sequence!r}, frame {frame} ({what}): {message}")


def _read_frame(
    path: Path, sequence: str, frame: str, what: str, shape: tuple[int, ...] | None, out: np.ndarray | None = None
) -> np.ndarray:
    try:
        mask = read_davis_mask(path, out)
    except FileNotFoundError:
        raise _frame_error(sequence, frame, what, f"{path} is missing") from None
    except ValueError as error:
        raise _frame_error(sequence, frame, what, str(error)) from None
    if shape is not None and mask.shape != shape:
        raise _frame_error(
            sequence,
            frame,
            what,
            f"{path} is {mask.shape[1]}x{mask.shape[0]} but the sequence's ground truth is "
            f"{shape[1]}x{shape[0]} (width x height)",
        )
    if out is not None and mask is not out:
        out[...] = mask  # Pillow's path: into the chunk's slot
    return mask


def evaluate_davis(
    davis_root: str | Path,
    results: str | Path,
    *,
    task: str = "semi-supervised",
    subset: str = "val",
    sequences: list[str] | None = None,
    resolution: str = "480p",
    max_proposals: int = MAX_PROPOSALS,
    decay_edges: str = "reference",
    bound_th: float = 0.008,
    chunk_frames: int = 32,
    device: str | torch.device = "cpu",
    backend: Backend = "auto",
    workers: int = 2,
) -> DavisResults:
    """Evaluate a results folder on a DAVIS 2017 set, as the reference's ``evaluation_method.py`` (module doc).

    Args:
        davis_root: the DAVIS folder (``ImageSets``, ``Annotations``, ``Annotations_unsupervised``).
        results: the method's folder, ``<results>/<seq>/<frame>.png``.
        task: "semi-supervised" or "unsupervised".
        subset: the set, ``ImageSets/2017/<subset>.txt`` ("val", "train", "test-dev", ...).
        sequences: evaluate these instead of the set's list.
        resolution: the annotations' sub-folder ("480p" or "Full-Resolution").
        max_proposals: the unsupervised limit (20).
        decay_edges: "reference" (uint8-wrapped beyond 256 evaluated frames, warned) or "corrected".
        bound_th: boundary tolerance (DAVIS 0.008 of the diagonal).
        chunk_frames: frames read and evaluated at a time (memory: three chunks of two uint8 frames each, the one
            counted and two decoding, and a few counts per evaluated frame).
        device: where the counts run ("cpu": the compiled kernel; "cuda": the tensor path).
        backend: "auto", "numba" or "torch".
        workers: threads decoding the PNGs (the next chunks, across sequences, decode while this one is counted; one
            process: no worker processes).

    Returns:
        :class:`DavisResults`.

    Raises:
        FileNotFoundError: the set's list or a sequence's annotation folder is missing.
        ValueError: a result frame missing, of another size, not a palette / gray PNG, with an id above the ground
            truth's objects (semi-supervised) or above ``max_proposals`` (unsupervised); each names the sequence and
            the frame. A warning when the reference's Decay edges wrap.

    Example:
        >>> import tempfile, numpy as np
        >>> from pathlib import Path
        >>> from PIL import Image
        >>> root = Path(tempfile.mkdtemp()); (root / "DAVIS/ImageSets/2017").mkdir(parents=True)
        >>> _ = (root / "DAVIS/ImageSets/2017/val.txt").write_text("cows\\n")
        >>> gt = np.zeros((24, 32), np.uint8); gt[4:12, 4:12] = 1
        >>> for folder in ("DAVIS/Annotations/480p/cows", "res/cows"):
        ...     (root / folder).mkdir(parents=True)
        ...     for t in range(4):
        ...         Image.fromarray(gt, mode="P").save(root / folder / f"{t:05d}.png")
        >>> res = evaluate_davis(root / "DAVIS", root / "res")
        >>> res.global_results()["J&F-Mean"], [o.name for o in res.objects]
        (1.0, ['cows_1'])
    """
    check_choice(task, "task", TASKS)
    check_choice(decay_edges, "decay_edges", DECAY_EDGES)
    check_choice(backend, "backend", BACKENDS)
    if not isinstance(chunk_frames, int) or chunk_frames < 1:
        raise ValueError(f"Expected `chunk_frames` to be a positive integer, but got {chunk_frames!r}.")
    root, res_root = Path(davis_root), Path(results)
    if not res_root.is_dir():
        raise FileNotFoundError(f"{res_root}: the results folder does not exist.")
    names = list(sequences) if sequences is not None else davis_sequences(root, subset)
    annotations = root / ("Annotations" if task == "semi-supervised" else "Annotations_unsupervised") / resolution
    dev = torch.device(device)
    rows: list[DavisObject] = []
    wrapped: list[tuple[str, int]] = []

    def head(name: str) -> tuple[Path, list[str], np.ndarray]:
        # a sequence's annotation folder, its frames and its first annotation (which gives the objects)
        gt_dir = annotations / name
        if not gt_dir.is_dir():
            raise FileNotFoundError(f"{gt_dir}: the ground truth of sequence {name!r} is missing.")
        # the reference's glob("*.png"): case-sensitive, dot-files left out
        frames = sorted(p.name[:-4] for p in gt_dir.iterdir() if p.name.endswith(".png") and p.name[0] != ".")
        if not frames:
            raise FileNotFoundError(f"{gt_dir}: sequence {name!r} has no annotation PNG.")
        return gt_dir, frames, _read_frame(gt_dir / f"{frames[0]}.png", name, frames[0], "ground truth", None)

    def units() -> Iterator[tuple[int, Any, list[str] | None]]:
        # (sequence, its head or the error met reading it, a chunk of its evaluated frames or None), in order; an
        # error is raised at its sequence's turn, after the earlier sequences' own errors
        for i, name in enumerate(names):
            try:
                gt_dir, frames, first = head(name)
            except (FileNotFoundError, ValueError) as error:
                yield i, error, None
                return
            evaluated = frames[1:-1] if task == "semi-supervised" else frames
            chunks = [evaluated[j : j + chunk_frames] for j in range(0, len(evaluated), chunk_frames)]
            if not chunks:  # no evaluated frame: the sequence's turn raises it
                yield i, (gt_dir, frames, first), None
            for chunk in chunks:
                yield i, (gt_dir, frames, first), chunk

    def submit(
        pool: ThreadPoolExecutor, name: str, gt_dir: Path, frames: list[str], first: np.ndarray, chunk: list[str]
    ) -> tuple[np.ndarray, np.ndarray, list[Future]]:
        # each PNG decoded once, by a worker thread, straight into its frame of the chunk (the first annotation,
        # read for the objects, is copied: the unsupervised task evaluates it)
        gt = np.empty((len(chunk), *first.shape), np.uint8)
        res = np.empty_like(gt)
        jobs = [(gt_dir / f"{f}.png", f, "ground truth", gt[i]) for i, f in enumerate(chunk)]
        jobs += [(res_root / name / f"{f}.png", f, "result", res[i]) for i, f in enumerate(chunk)]
        futures = []
        for path, f, what, slot in jobs:
            if what == "ground truth" and f == frames[0]:
                slot[...] = first
            else:
                futures.append(pool.submit(_read_frame, path, name, f, what, first.shape, slot))
        return gt, res, futures

    def close(seq: DavisSequence) -> None:
        rows.extend(seq.finish(decay_edges=decay_edges))
        if decay_edges == "reference" and seq.frames > 256 and seq.num_objects:
            wrapped.append((seq.name, seq.frames))

    # the PNGs of the next chunks (across sequences) decode in threads while the kernel counts this one (both
    # release the GIL); at most 1 + _AHEAD chunks are held
    with ThreadPoolExecutor(max_workers=max(1, int(workers))) as pool:
        source = units()
        queue: deque = deque()

        def top_up() -> None:
            while len(queue) < _AHEAD:
                unit = next(source, None)
                if unit is None:
                    return
                i, got, chunk = unit
                pending = None if chunk is None else submit(pool, names[i], got[0], got[1], got[2], chunk)
                queue.append((i, got, chunk, pending))

        top_up()
        seq: DavisSequence | None = None
        current = -1
        while queue:
            i, got, chunk, pending = queue.popleft()
            if i != current:  # the sequence's first chunk: the previous one is done
                if seq is not None:
                    close(seq)
                if isinstance(got, Exception):
                    raise got
                current, first = i, got[2]
                num_objects = int(np.where(first == 255, 0, first).max())
                seq = DavisSequence(
                    names[i], num_objects, task=task, max_proposals=max_proposals, bound_th=bound_th, backend=backend
                )
            top_up()
            if pending is not None:
                gt, res, futures = pending
                for future in futures:  # in order: the first error is the first frame's
                    future.result()
                assert seq is not None
                seq.add(torch.from_numpy(res).to(dev), torch.from_numpy(gt).to(dev), chunk)
        if seq is not None:
            close(seq)
    if wrapped:
        listed = ", ".join(f"{n} ({k} frames: edges {davis_decay_edges(k)})" for n, k in wrapped[:5])
        warnings.warn(
            f"{len(wrapped)} sequence(s) have more than 256 evaluated frames: the DAVIS reference's uint8 Decay bin "
            f"edges wrap ({listed}{', ...' if len(wrapped) > 5 else ''}), as its published numbers do; pass "
            "decay_edges='corrected' for the true quarters.",
            UserWarning,
            stacklevel=2,
        )
    return DavisResults(task, subset, tuple(rows), tuple(names), decay_edges)
