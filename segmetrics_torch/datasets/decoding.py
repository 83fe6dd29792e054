"""Decoding file pairs for evaluation: one :class:`DecodeTask` per pair, decoded in order in this process or in
worker processes (:class:`DecodeStream`: chunks through files in RAM, a bounded window, Ctrl-C safe); the reading
conventions are those of :mod:`.evaluation`."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError
from ..io import (
    max_image_pixels,
    open_image,
    read_bsds_ground_truth,
    read_gray_map,
    read_labels,
    read_mat_array,
    read_segmentations,
    resize_linear,
    set_max_image_pixels,
)

if TYPE_CHECKING:  # annotations only: the app imports torch lazily
    from multiprocessing.connection import Connection
    from multiprocessing.synchronize import Semaphore

__all__ = [
    "DecodeStream",
    "DecodeTask",
    "decode_pairs",
    "decode_tasks",
    "worker_pool_context",
]


# ------------------------------------------------------------------------------------------------------ reading


@dataclass(frozen=True)
class DecodeTask:
    """One pair to read: ``family`` ("foreground", "boundary", "partition"), the files, and how to read them.

    ``resize``: None when the caller offers no resizing (the size error then says so), else whether to resize a
    grayscale prediction to its ground truth.
    """

    family: str
    stem: str
    pred_path: Path
    gt_path: Path
    input_format: str = "soft"
    gt_format: str = "image"
    resize: bool | None = None


def _size_error(task: DecodeTask, pred_shape: tuple[int, ...], gt_shape: tuple[int, ...]) -> InputError:
    hint = "; resize the prediction to the ground truth, or pass --resize (cv2 INTER_LINEAR, as PySODEvalToolkit)"
    return InputError(
        f"{task.stem}: the prediction {task.pred_path} is {pred_shape[-1]}x{pred_shape[-2]} (WxH) but the ground "
        f"truth {task.gt_path} is {gt_shape[-1]}x{gt_shape[-2]}{hint}"
    )


def _decode_foreground(task: DecodeTask) -> tuple[np.ndarray, np.ndarray]:
    pred, gt = read_gray_map(task.pred_path), read_gray_map(task.gt_path)
    if gt.max() == 1:
        # a mask saved as 0/1 means foreground = 1 (binarised > 128 it would be empty); the pre-scan reports it
        gt = gt * np.uint8(255)
    if pred.shape != gt.shape:
        if not task.resize:
            raise _size_error(task, pred.shape, gt.shape)
        pred = resize_linear(pred, gt.shape)
    return pred, gt


def _decode_boundary(task: DecodeTask) -> tuple[np.ndarray, np.ndarray]:
    """pred (H, W) uint8 or (2H+1, 2W+1) float64 ucm2; gt (A, H, W) bool, or (1, H, W) int64 labels for "labels"
    (their boundaries are drawn in the main process: workers never run torch, whose thread pools a fork leaves
    unusable)."""

    ucm2 = task.input_format == "ucm2"
    pred = read_mat_array(task.pred_path, "ucm2") if ucm2 else read_gray_map(task.pred_path)
    if task.gt_format == "mat":
        gt = read_bsds_ground_truth(task.gt_path).boundaries
    elif task.gt_format == "labels":
        gt = read_labels(task.gt_path)[None]
    else:
        gt = read_gray_map(task.gt_path)[None] > 0
    if pred.ndim != 2:
        raise InputError(f"{task.stem}: `ucm2` in {task.pred_path} is not a 2-D array (shape {pred.shape})")
    h, w = gt.shape[-2:]
    if ucm2 and pred.shape != (2 * h + 1, 2 * w + 1):
        raise InputError(
            f"{task.stem}: the ucm2 {task.pred_path} is {pred.shape[1]}x{pred.shape[0]} (WxH) but the ground truth "
            f"{task.gt_path} is {w}x{h}, which needs a double-size ucm2 of {2 * w + 1}x{2 * h + 1}"
        )
    if not ucm2 and pred.shape != (h, w):
        if not task.resize:
            raise _size_error(task, pred.shape, gt.shape)
        pred = resize_linear(pred, (h, w))
    return pred, gt


def _decode_partition(task: DecodeTask) -> tuple[np.ndarray, np.ndarray]:
    """pred (H, W) int64 labels, (2H+1, 2W+1) float64 ucm2 or (L, H, W) int64 levels; gt (K, H, W) int64."""

    fmt = task.input_format
    readers = {"labels": read_labels, "ucm2": lambda p: read_mat_array(p, "ucm2"), "stack": read_segmentations}
    pred = readers[fmt](task.pred_path)
    gt = (
        read_bsds_ground_truth(task.gt_path).segmentations
        if task.gt_format == "mat"
        else read_labels(task.gt_path)[None]
    )
    h, w = gt.shape[-2:]
    ucm2 = fmt == "ucm2"
    if pred.ndim != (3 if fmt == "stack" else 2):
        raise InputError(f"{task.stem}: {task.pred_path} holds an array of shape {pred.shape}, not a {fmt} map")
    if pred.shape[-2:] != ((2 * h + 1, 2 * w + 1) if ucm2 else (h, w)):
        need = f", which needs a double-size ucm2 of {2 * w + 1}x{2 * h + 1}" if ucm2 else ""
        raise InputError(
            f"{task.stem}: the prediction {task.pred_path} is {pred.shape[-1]}x{pred.shape[-2]} (WxH) but the ground "
            f"truth {task.gt_path} is {w}x{h}{need}"
        )
    return pred, gt


_DECODERS: dict[str, Callable[[DecodeTask], tuple[Any, Any]]] = {
    "foreground": _decode_foreground,
    "boundary": _decode_boundary,
    "partition": _decode_partition,
}


def _decode(task: DecodeTask) -> tuple[str, Any, Any]:
    """``(stem, pred, gt)`` arrays; every reading problem becomes an :class:`InputError` naming the file."""
    try:
        pred, gt = _DECODERS[task.family](task)
    except InputError:
        raise
    except (ValueError, OSError) as error:
        message = str(error)
        names = (task.stem, task.pred_path.name, task.gt_path.name)
        raise InputError(message if any(n in message for n in names) else f"{task.stem}: {message}") from None
    return task.stem, pred, gt


def _decode_chunk(tasks: list[DecodeTask]) -> list[tuple[str, Any, Any]]:
    return [_decode(task) for task in tasks]


def worker_pool_context() -> Any:  # a multiprocessing context (BaseContext does not type its Process)
    """The multiprocessing context of the decoding workers: fork on Linux (workers start in milliseconds and need no
    re-import; they only run PIL / numpy / scipy.io, never torch, whose thread pools a fork leaves unusable), else
    the platform's default (spawn)."""
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


#: decoded bytes per pixel of a pair, by family (foreground: two uint8 maps; boundary: a map and up to ~8 bool annotator
#: maps or a float64 ucm2; partition: int64 labels and annotations), to bound the memory of prefetched pairs
_BYTES_PER_PIXEL = {"foreground": 2, "boundary": 48, "partition": 96}


def _pair_bytes(task: DecodeTask) -> int:
    """Decoded size of a pair, estimated from the header of its ground truth (481 x 321 for .mat files)."""

    pixels = 481 * 321
    if task.gt_path.suffix.lower() != ".mat":
        try:
            with open_image(task.gt_path) as image:
                pixels = image.width * image.height
        except (OSError, ValueError):
            pass  # the decoder reports it, naming the file
    return _BYTES_PER_PIXEL[task.family] * pixels


def _scratch_folder() -> str:
    # decoded chunks travel through files in RAM (tmpfs) where there is one
    shm = Path("/dev/shm")
    base = str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None
    return tempfile.mkdtemp(prefix="segmetrics-decode-", dir=base)


def _decode_worker(
    chunks: list[list[DecodeTask]],
    index: int,
    workers: int,
    conn: Connection,
    slots: Semaphore,
    folder: str,
    max_pixels: int,
) -> None:
    """Decode chunks ``index, index + workers, ...`` in order; each goes to a file, its number down the pipe; images
    are held to the main process's size limit ``max_pixels`` (a spawned worker would not inherit a limit set by a
    function)."""

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the main process stops the workers itself
    set_max_image_pixels(max_pixels)
    for k in range(index, len(chunks), workers):
        slots.acquire()  # at most `window` decoded chunks wait for the main process
        try:
            payload: tuple[str, Any] = ("ok", _decode_chunk(chunks[k]))
        except Exception as error:  # re-raised in the main process, at this chunk's turn
            payload = ("error", error)
        path = os.path.join(folder, f"{k}.pkl")
        try:
            with open(path + ".tmp", "wb") as f:
                pickle.dump(payload, f, protocol=5)
            os.replace(path + ".tmp", path)
            conn.send(k)
        except (FileNotFoundError, BrokenPipeError, ConnectionResetError, EOFError):
            # the main process is gone or has stopped the stream (Ctrl-C, an error) and removed the scratch folder
            # between two chunks: nobody will read this one, so the worker ends without a word (not a traceback
            # on the user's terminal after the run's own `error: interrupted`)
            return
        if payload[0] == "error":
            break
    conn.close()


class DecodeStream:
    """The decoded ``(stem, pred, gt)`` of ``tasks``, in order; with workers, decoding starts at construction.

    ``workers`` processes share the chunks of ``chunk`` pairs statically (worker i decodes chunks i, i + workers,
    ...), so that they need nothing from the main process while it is busy (importing torch holds the GIL for
    seconds, which starves the feeder and result threads of a ``concurrent.futures`` pool). Each decoded chunk is
    written to a file in RAM (``/dev/shm`` where it exists) and announced by its number on a pipe; at most
    ``window`` chunks per worker wait unread, so memory stays near ``memory`` bytes however large the dataset.
    Iterate once; the first failing pair raises its :class:`InputError` at its turn; :meth:`close` (also on errors,
    Ctrl-C and early exit) stops the workers and removes the files.

    Args:
        tasks: the pairs to read.
        workers: processes (0, or a handful of pairs: decode in this process, lazily).
        chunk: pairs per work item.
        memory: bytes of decoded pairs to hold ahead (default 512 MiB; at least 2 chunks per worker).
    """

    def __init__(
        self, tasks: Sequence[DecodeTask], workers: int = 0, *, chunk: int = 8, memory: int = 512 << 20
    ) -> None:
        self.tasks = list(tasks)
        self._procs: list = []
        self._folder: str | None = None
        if workers <= 0 or len(self.tasks) <= chunk:
            return
        chunks = [self.tasks[i : i + chunk] for i in range(0, len(self.tasks), chunk)]
        workers = min(workers, len(chunks))
        window = max(2, memory // max(1, _pair_bytes(self.tasks[0]) * chunk * workers))
        ctx = worker_pool_context()
        self._folder = _scratch_folder()
        self._chunks = len(chunks)
        self._conns, self._slots = [], []
        try:
            for index in range(workers):
                receive, send = ctx.Pipe(duplex=False)
                slots = ctx.Semaphore(window)
                proc = ctx.Process(
                    target=_decode_worker,
                    args=(chunks, index, workers, send, slots, self._folder, max_image_pixels()),
                    daemon=True,
                )
                # listed before it starts: a Ctrl-C between the start and the listing would leave a worker that close()
                # does not stop, writing into the folder close() removes
                self._procs.append(proc)
                proc.start()
                send.close()  # the worker holds the only writing end: EOF when it exits
                self._conns.append(receive)
                self._slots.append(slots)
        except BaseException:
            self.close()
            raise

    def __iter__(self) -> Iterator[tuple[str, Any, Any]]:
        if self._folder is None:
            for task in self.tasks:
                yield _decode(task)
            return

        try:
            workers = len(self._procs)
            for k in range(self._chunks):
                conn = self._conns[k % workers]
                try:
                    announced = conn.recv()
                except EOFError:
                    raise RuntimeError(
                        f"a decoding worker exited unexpectedly (exit code {self._procs[k % workers].exitcode})"
                    ) from None
                path = os.path.join(self._folder, f"{announced}.pkl")
                with open(path, "rb") as f:
                    status, payload = pickle.load(f)
                os.unlink(path)
                self._slots[k % workers].release()
                if status == "error":
                    raise payload
                yield from payload
        finally:
            self.close()

    def close(self) -> None:
        """Stop the workers and remove the decoded chunks nobody read."""
        started = [proc for proc in self._procs if proc.pid is not None]  # (one interrupted before its start)
        for proc in started:
            if proc.is_alive():
                proc.terminate()
        for proc in started:
            proc.join()
        for conn in getattr(self, "_conns", []):
            conn.close()
        self._procs = []
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


def decode_pairs(tasks: Sequence[DecodeTask], workers: int = 0, *, chunk: int = 8) -> Iterator[tuple[str, Any, Any]]:
    """Yield ``(stem, pred, gt)`` of every task, in order, decoded by ``workers`` processes (:class:`DecodeStream`)."""
    return iter(DecodeStream(tasks, workers, chunk=chunk))


def decode_tasks(pairs: Sequence[tuple[str, Path, Path]], family: str, **formats: Any) -> list[DecodeTask]:
    """The :class:`DecodeTask` of every pair of a family (``formats``: input_format, gt_format, resize)."""
    return [DecodeTask(family, stem, Path(pred), Path(gt), **formats) for stem, pred, gt in pairs]
