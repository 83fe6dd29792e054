"""Compiled numba CPU kernels, one module per algorithm; private to :mod:`segmetrics_torch.ops`.

Rules:

* Every kernel is reached through one checked public op of :mod:`segmetrics_torch.ops` (validation, dtype/layout
  conversion and device transfer happen there, never here); nothing outside ``ops`` imports this package.
* One module per *algorithm*, not per measure family: ``edt`` (exact distance transform), ``thinning``,
  ``assignment`` (least-cost maximum matching), ``unionfind``, ``correspondence`` (BSDS boundary counts built on
  thinning + assignment), ``labels`` (relabelling, UCM hierarchy sweeps), ``tables`` (contingency counts, weighted
  matchings, proposal mask counts), ``foreground`` (the fused foreground-measure kernel), ``edge_nms`` (edge
  non-maximum suppression of soft boundary maps), ``moments`` (pixel counts, coordinate sums and boxes of masks),
  ``reflect_gap`` (the border term of a reflected correlation), ``soft_map_stages`` (the serial stages of the soft-map
  boundary counts, spread over threads by :mod:`segmetrics_torch.ops.soft_map_counts`).
* ``_compile_log`` announces the first compilation; ``_compile_aside`` compiles a kernel known ahead in a second
  process on a first run (the soft-map matching).
* Kernel modules import each other by public (non-underscore) names only; helpers private to one algorithm keep a
  leading underscore.
* Kernels stay at module level in these stable module names, with ``cache=True``, so that numba's on-disk cache is
  keyed by a stable name. Only an op's import of a kernel submodule imports this package (and numba): the package
  first settles numba's cache folder (below), then registers the compile announcement of :mod:`._compile_log`.
* The on-disk cache is an optimisation, never a requirement. numba caches next to the kernels' source
  (``__pycache__``) or in the user's cache folder, and raises ``RuntimeError: cannot cache function ...: no locator
  available`` at import when neither is writable: a shared read-only install (a cluster module, a container) run by a
  user with no writable home. :func:`ensure_writable_cache` runs before any kernel module is compiled: when
  ``NUMBA_CACHE_DIR`` is unset and the package's ``__pycache__`` cannot be written, or ``NUMBA_CACHE_DIR`` names a
  folder that cannot be written, it points numba at a private folder under the system's temporary directory (per
  user, mode 0700), so the kernels compile and are cached there (and the compile note names that folder).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Literal, TypedDict

from ._compile_log import watch

__all__ = ["FOREGROUND_JIT", "JitOptions", "ensure_writable_cache"]


def _writable_folder(path: Path) -> bool:
    # the probe numba's own cache locators use: create the folder, then a temporary file in it
    try:
        path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return False
    return True


def ensure_writable_cache() -> str | None:
    """Give numba a writable cache folder when the one it would use is not writable; returns the folder it set, if
    any. ``NUMBA_CACHE_DIR`` set to a folder that cannot be written counts as unset (numba would fall back to the
    in-tree folder, and fail at import where that is read-only too)."""
    chosen = os.environ.get("NUMBA_CACHE_DIR")
    if chosen and _writable_folder(Path(chosen)):
        return None
    if not chosen and _writable_folder(Path(__file__).resolve().parent / "__pycache__"):
        return None
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    fallback = Path(tempfile.gettempdir()) / f"segmetrics-numba-cache-{uid}"
    if not _writable_folder(fallback):
        fallback = Path(tempfile.mkdtemp(prefix="segmetrics-numba-cache-"))
    else:
        fallback.chmod(0o700)
    os.environ["NUMBA_CACHE_DIR"] = str(fallback)  # numba reads it at import; child processes inherit it
    if "numba" in sys.modules:  # already imported: its config was read, set the value it consults when caching
        sys.modules["numba"].config.CACHE_DIR = str(fallback)
    return str(fallback)


ensure_writable_cache()
watch()  # announce the first compilation of a kernel (see _compile_log); after the cache folder is settled


class JitOptions(TypedDict):
    """Keyword options of ``numba.njit``, typed so that ``numba.njit(**options)`` type-checks."""

    cache: bool
    nogil: bool
    error_model: Literal["python", "numpy"]


#: the foreground kernels' options: numpy's error model (x / 0 -> inf/nan, as the tensor path), no GIL, on-disk cache
FOREGROUND_JIT: JitOptions = {"cache": True, "nogil": True, "error_model": "numpy"}
