"""A small first run does not wait for the CPU kernels to compile: it takes the tensor path instead.

The first call of the fused foreground kernel on a machine compiles it (about 13 s on a 2-core machine; numba caches
it on disk, later runs load it in milliseconds). The tensor path (what CUDA runs: plain torch operations, nothing to
compile) computes the same measures at about 0.13 us per pixel on that machine, so for runs of up to
:data:`TENSOR_PATH_PIXELS` pixels in all (about 200 images of 320 x 320: ~3 s; a report's jobs in one process add
up) it finishes well before the compilation would, with the same values to ~1e-12 (the two paths are tested against
each other and against PySODMetrics). A run past that bound compiles, as always, and is announced. So ``segmetrics
evaluate foreground`` on a handful of images answers in a second or two on a fresh machine, and says on stderr why
it did not compile::

    note: segmetrics-torch's CPU kernels are not compiled on this machine yet; foreground runs of up to 20,000,000
    pixels in all take the tensor path instead of waiting ~15 s for them (the first run: 3 images of 320x320); a
    larger run compiles them once (numba caches them in DIR; `segmetrics warmup` compiles them ahead)

printed once per process, however many runs (a report's jobs) take the tensor path.

This applies under the backend setting ``"auto"`` only (:mod:`segmetrics_torch.ops.backend`, the default): the
command's ``--backend compiled`` (or ``SEGMETRICS_BACKEND=compiled``, which the test suite sets so that its runs take
the path they test) compiles whatever the size, ``--backend tensor`` takes the tensor path for every run. The switch
reaches the library only through its public API, :func:`segmetrics_torch.ops.use_backend`, for the run and restored
after it; the environment is never written. Only the command decides this: the library's Metric classes and
functions compile on their first CPU call, as documented.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from ..ops.backend import compiled_kernels, get_backend, use_backend
from ..ops.foreground import foreground_kernel_ready, kernel_cache_folder

if TYPE_CHECKING:  # torch loads with the first batch: the command sets OpenMP's wait policy before that (see cli)
    import torch

__all__ = ["TENSOR_PATH_PIXELS", "ColdStart", "cold_start"]

#: runs of at most this many pixels (images x pixels of the first image) take the tensor path while the kernel is cold;
#: the bound holds for a whole process (a report's jobs add up), so the tensor path never costs more than ~3 s of it
TENSOR_PATH_PIXELS = 20_000_000
_spent = {"pixels": 0, "announced": False}


class ColdStart:
    """The decision of one foreground run, taken on its first batch (:meth:`decide`), undone by :meth:`restore`."""

    def __init__(self, n_images: int) -> None:
        self.n_images = n_images
        self.decided = False
        self.tensor_path = False
        self._scope = contextlib.ExitStack()

    def decide(self, preds: torch.Tensor | Sequence[torch.Tensor]) -> bool:
        """On the first batch (a stacked (B, H, W) tensor or a list of maps): take the tensor path for the rest of
        the run (``use_backend("tensor")``, the distance transform included) if the backend setting is ``"auto"``,
        the run is small, on the CPU, and the fused kernel is neither compiled nor cached; announce it. True when it
        switched, on that call only."""
        if self.decided:
            return False
        self.decided = True
        if len(preds) == 0 or get_backend() != "auto":  # "compiled": the user asked to compile; "tensor": no kernel
            return False
        first = preds[0]
        pixels = self.n_images * first.numel()
        if _spent["pixels"] + pixels > TENSOR_PATH_PIXELS or not compiled_kernels(first.device):
            return False

        if foreground_kernel_ready():
            return False
        self.tensor_path = True
        _spent["pixels"] += pixels
        self._scope.enter_context(use_backend("tensor"))
        if _spent["announced"]:
            return True
        _spent["announced"] = True
        # once per process: the bound is the process's (a report's jobs add up), and so is the note
        size = "x".join(str(n) for n in first.shape[-2:])
        print(
            f"note: segmetrics-torch's CPU kernels are not compiled on this machine yet; foreground runs of up to "
            f"{TENSOR_PATH_PIXELS:,} pixels in all take the tensor path instead of waiting ~15 s for them (the first "
            f"run: {self.n_images} image{'s' if self.n_images != 1 else ''} of {size}); a larger run compiles them "
            f"once (numba caches them in {kernel_cache_folder()}; `segmetrics warmup` compiles them ahead)",
            file=sys.stderr,
        )
        return True

    def restore(self) -> None:
        """Give the backend setting back its value from before the run (the command may run in-process)."""
        if not self.tensor_path:
            return
        self._scope.close()
        self.tensor_path = False


@contextlib.contextmanager
def cold_start(n_images: int) -> Iterator[ColdStart]:
    """A :class:`ColdStart` for one run, restored on the way out whatever happens (Ctrl-C included)."""
    plan = ColdStart(n_images)
    try:
        yield plan
    finally:
        plan.restore()
