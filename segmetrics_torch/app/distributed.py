"""``segmetrics evaluate`` under ``torchrun``: one process group, the images sharded over the ranks.

Run without ``torchrun`` (no ``WORLD_SIZE`` / ``RANK`` in the environment) nothing here does anything: every helper
is the identity and the command runs in one process as before.

Under ``torchrun --nproc-per-node N [--nnodes M ...] -m segmetrics_torch.app.cli evaluate ...``:

* :func:`session` (around the command's handler) joins the process group that ``torchrun`` describes
  (``torch.distributed`` is the only engine: backend ``nccl`` for CUDA tensors and ``gloo`` for CPU ones), selects
  the GPU ``LOCAL_RANK`` when there is one, silences stdout on every rank but 0 and lets only errors through their
  stderr, and leaves the group at the end (also on errors and Ctrl-C). ``SIGTERM`` (what ``torchrun`` sends the
  other ranks when one fails) ends a rank as Ctrl-C does, as it ends any run of the command
  (``cli.INTERRUPTS``): no half-written file, the cache valid.
* Listing and pairing run identically on every rank (they read the same folder listings, so they reach the same
  pairs and the same errors without talking to each other); the foreground pre-scan (it reads every file's header)
  and the report form's cache look-ups run on rank 0 alone, which gives the others its findings
  (:func:`main_decides`, :func:`share_cached`).
* :func:`shard` gives each rank its contiguous block of the pairs (:func:`segmetrics_torch.sharding.shard_indices`:
  no padding, no duplicate), which it decodes and evaluates.
* The family cores merge the ranks' states before they summarise: the foreground sums (float64) are added, the
  boundary counts and the per-image values are gathered in rank order, which is the original order of the images
  (:func:`gather`), and the Metric classes (partition, hierarchy, proposals) synchronise themselves in
  ``compute()`` as under DDP. Every rank then holds the whole result.
* Only rank 0 writes: the report, ``--json`` / ``--csv`` files and cache entries (:func:`is_main`).
"""

from __future__ import annotations

import contextlib
import datetime
import functools
import io
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec, TextIO, TypeVar

from ..errors import InputError
from .launch import launched, processes_per_machine

if TYPE_CHECKING:
    from ..functional.foreground import ForegroundSums, ToolboxSums
    from .foreground_rows import ForegroundRows

__all__ = [
    "active",
    "barrier",
    "decided_by_main",
    "device_for",
    "gather",
    "is_main",
    "launched",
    "main_decides",
    "merge_foreground",
    "offset",
    "peers",
    "processes_per_machine",
    "rank",
    "session",
    "shard",
    "shard_progress",
    "share_cached",
    "world_size",
]

T = TypeVar("T")
P = ParamSpec("P")

_STATE: dict[str, Any] = {"active": False, "rank": 0, "world_size": 1, "local_rank": 0}


def _torch() -> Any:
    """torch, with ``torch.distributed``, imported on first use: only a torchrun run reaches the functions that use
    it, and the report form (``--config``) plans and starts its decoding workers before torch loads (the module's
    deferred imports are here and in :func:`_shard_indices` alone)."""
    import torch
    import torch.distributed

    return torch


def _shard_indices(length: int, rank: int, world_size: int) -> range:
    """:func:`segmetrics_torch.sharding.shard_indices` (that module imports torch: see :func:`_torch`)."""
    from ..sharding import shard_indices

    return shard_indices(length, rank, world_size)


def active() -> bool:
    """Whether this process is one rank of a running process group (inside :func:`session`)."""
    return bool(_STATE["active"])


def rank() -> int:
    """This process's rank (0 without ``torchrun``)."""
    return int(_STATE["rank"])


def world_size() -> int:
    """The number of processes (1 without ``torchrun``)."""
    return int(_STATE["world_size"])


def is_main() -> bool:
    """Whether this process prints the report and writes the files: rank 0, or the only process."""
    return rank() == 0


class _ErrorsOnly(io.TextIOBase):
    """The stderr of a rank other than 0: only ``error: ...`` lines and tracebacks get through, prefixed by the
    rank; warnings, notes and progress bars (rank 0 prints them for the whole run) do not."""

    def __init__(self, stream: TextIO, rank: int) -> None:
        self._stream = stream
        self._rank = rank
        self._line = ""
        self._traceback = False

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        self._line += text
        while "\n" in self._line:
            line, self._line = self._line.split("\n", 1)
            self._emit(line)
        return len(text)

    def _emit(self, line: str) -> None:
        if line.startswith("Traceback"):
            self._traceback = True
        if self._traceback or line.startswith("error:"):
            self._stream.write(f"[rank {self._rank}] {line}\n")
            self._stream.flush()
        if line.startswith("error:"):
            self._traceback = False

    def flush(self) -> None:
        if self._line:
            line, self._line = self._line, ""
            self._emit(line)
        self._stream.flush()


@contextlib.contextmanager
def session() -> Iterator[None]:
    """Join ``torchrun``'s process group for the duration of a command (nothing without ``torchrun``).

    Backends: ``gloo`` for CPU tensors, plus ``nccl`` for CUDA tensors when CUDA is available (the GPU of the
    process is ``cuda:LOCAL_RANK``). Outside rank 0, stdout goes nowhere and stderr shows errors only.
    """
    if not launched() or active():
        yield
        return

    torch = _torch()
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    cuda = torch.cuda.is_available()
    if cuda:
        torch.cuda.set_device(local_rank % torch.cuda.device_count())
    backend = "cpu:gloo,cuda:nccl" if cuda else "gloo"
    try:
        torch.distributed.init_process_group(backend=backend, timeout=datetime.timedelta(minutes=30))
    except (ValueError, RuntimeError) as error:  # WORLD_SIZE / RANK set, but no torchrun rendezvous (MASTER_ADDR...)
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        print(
            f"error: WORLD_SIZE and RANK are set, as torchrun sets them, but the process group does not start "
            f"({first}); run under torchrun, or unset them to run in one process",
            file=sys.stderr,
        )
        raise SystemExit(2) from None
    _STATE.update(
        active=True,
        rank=torch.distributed.get_rank(),
        world_size=torch.distributed.get_world_size(),
        local_rank=local_rank,
    )
    stdout, stderr = sys.stdout, sys.stderr
    if rank() != 0:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # closed below
        sys.stderr = _ErrorsOnly(stderr, rank())
    try:
        yield
    finally:
        if rank() != 0:
            sys.stdout.close()
            sys.stderr.flush()
            sys.stdout, sys.stderr = stdout, stderr
        _STATE.update(active=False, rank=0, world_size=1, local_rank=0)
        with contextlib.suppress(Exception):
            _torch().distributed.destroy_process_group()


def device_for(device: Any) -> Any:
    """``device`` as this rank uses it: a CUDA device without an index becomes ``cuda:LOCAL_RANK``."""
    if active() and getattr(device, "type", None) == "cuda" and device.index is None:
        return _torch().device("cuda", _torch().cuda.current_device())
    return device


def shard(items: Sequence[T]) -> list[T]:
    """This rank's contiguous block of ``items`` (all of them without ``torchrun``).

    Raises:
        InputError: fewer items than processes (a rank would have nothing to evaluate).
    """
    if not active():
        return list(items)

    if len(items) < world_size():
        raise InputError(
            f"{len(items)} image(s) for {world_size()} processes: every process needs at least one image (run "
            "fewer processes)"
        )
    block = _shard_indices(len(items), rank(), world_size())
    return list(items[block.start : block.stop])


def offset(length: int) -> int:
    """The index, in the whole list of ``length`` items, of this rank's first item (0 without ``torchrun``)."""
    if not active():
        return 0

    return _shard_indices(length, rank(), world_size()).start


def _to_cpu(obj: Any) -> Any:

    if isinstance(obj, _torch().Tensor):
        return obj.cpu()
    if isinstance(obj, dict):
        return {key: _to_cpu(value) for key, value in obj.items()}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_to_cpu(value) for value in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_cpu(value) for value in obj)
    return obj


@contextlib.contextmanager
def peers() -> Iterator[None]:
    """Around a collective: another rank that stopped (an error in its shard, Ctrl-C) ends this one with an
    :class:`InputError` saying so (that rank printed why), instead of the backend's traceback."""
    try:
        yield
    except RuntimeError:  # torch.distributed.DistBackendError and gloo's "Connection closed by peer"
        if not active():
            raise
        message = "another process of this torchrun run stopped (its error is above); nothing was written"
        raise InputError(message) from None


def gather(obj: T) -> list[T]:
    """Every rank's ``obj`` (tensors moved to the CPU), in rank order, on every rank (``[obj]`` without
    ``torchrun``). Ranks hold contiguous blocks of the images, so rank order is the images' order."""
    if not active():
        return [obj]

    parts: list[Any] = [None] * world_size()
    with peers():
        _torch().distributed.all_gather_object(parts, _to_cpu(obj))
    return parts


def main_decides(decide: Callable[[], T]) -> T:
    """``decide()`` run on rank 0 alone and its result given to every rank (just ``decide()`` without ``torchrun``):
    for what must be the same everywhere but may change while the ranks start (the cache), or costs too much to do
    on every rank (the pre-scan). An :class:`InputError` of ``decide()`` ends every rank: rank 0 reports it, the
    others exit with status 2 silently."""
    if not active():
        return decide()

    box: list[Any] = [None]
    if is_main():
        try:
            box[0] = ("ok", decide())
        except InputError as error:  # every rank ends with rank 0's input error (not waiting for ever)
            box[0] = ("error", str(error))
    with peers():
        _torch().distributed.broadcast_object_list(box, src=0)
    status, value = box[0]
    if status == "error":
        if is_main():
            raise InputError(value)
        raise SystemExit(2)  # rank 0 says why; the others end with its exit status, silently
    return value


def decided_by_main(function: Callable[P, T]) -> Callable[P, T]:
    """``function`` as :func:`main_decides` runs it: on rank 0 alone, its result (or its input error) given to
    every rank; a plain call without ``torchrun``. For a step every rank needs and rank 0 alone should take, so
    that the step reads as itself: ``@decided_by_main`` above ``FolderRun.open_dataset`` (the pairing and pre-scan)."""

    @functools.wraps(function)
    def decided(*args: P.args, **kwargs: P.kwargs) -> T:
        return main_decides(lambda: function(*args, **kwargs))

    return decided


def barrier() -> None:
    """Wait for every rank (nothing without ``torchrun``)."""
    if active():
        with peers():
            _torch().distributed.barrier()


def merge_foreground(metric: ForegroundSums | ToolboxSums, rows: ForegroundRows, length: int) -> None:
    """Make ``metric`` (a :class:`~segmetrics_torch.functional.ForegroundSums` fed with this rank's shard of
    ``length`` images) hold the whole dataset's state on every rank, through its public ``sums()`` / ``load()``: the
    float64 sums added in rank order, the counts added; and ``rows`` (the command's per-image report) the NaN
    S-measure positions and the per-image scores in image order (nothing without ``torchrun``)."""
    if not active():
        return

    start = offset(length)
    parts = gather((metric.sums(), int(metric.count), [start + i for i in rows.nan_s_images], rows.per_image))
    sums: dict[str, Any] = {}
    for part_sums, _, _, _ in parts:
        for name, value in part_sums.items():
            sums[name] = sums[name] + value if name in sums else value
    metric.load(sums, sum(part[1] for part in parts))
    rows.nan_s_images = [i for part in parts for i in part[2]]
    rows.per_image = {name: row for part in parts for name, row in part[3].items()}


def share_cached(found: dict[str, Any]) -> dict[str, Any]:
    """The report form's cache look-ups, ``{key: record or None}``, read by rank 0: the other ranks get ``{key: {}}``
    for each cached key (they skip those combinations and never report them), so that every rank computes the same
    combinations even when rank 0 writes an entry while another rank is still starting (``found`` itself without
    ``torchrun``)."""
    if not active():
        return found
    cached = main_decides(lambda: [key for key, record in found.items() if record is not None])
    return found if is_main() else {key: {} for key in cached}


def shard_progress(progress: Any, length: int) -> None:
    """Under torchrun, make a progress bar of ``length`` images (rank 0's, the only one shown) count this rank's
    shard, so that it ends at 100 %; nothing without torchrun or without a bar."""
    if not active() or progress is None or not hasattr(progress, "total"):
        return

    progress.total = len(_shard_indices(length, rank(), world_size()))
    if hasattr(progress, "refresh"):
        progress.refresh()
