"""Announce the one-time compilation of the package's CPU kernels (a documented log message).

The first call of a kernel on a machine compiles it with numba (seconds to a minute on a small machine); numba caches
the result on disk (``cache=True``), and later processes load it in milliseconds. A silent first run looks like a
hang, so the first compilation of a package kernel in a process logs, once, on the logger ``segmetrics_torch.compile``::

    compiling segmetrics-torch's CPU kernels for this machine, those this run uses (once each: numba caches them in
    DIR; a measure family used for the first time compiles its own; `segmetrics warmup` compiles all of them ahead,
    e.g. in a Docker image)

and every kernel compiled logs its name at DEBUG. The message is logged at INFO where the application configured
logging (a handler on the logger or an ancestor: the ``segmetrics`` command prints it as a ``note:`` line on stderr),
and at WARNING where it did not, so that a plain library call (``WeightedFMeasure().update(...)`` in a notebook)
shows it on stderr through Python's last-resort handler instead of pausing without a word. Loading from the cache
logs nothing. The package calls :func:`watch` once, at import (before any kernel module compiles).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

__all__ = ["LOGGER_NAME", "cache_folder", "compiled_or_cached", "ready", "watch"]

#: the logger of the compilation messages
LOGGER_NAME = "segmetrics_torch.compile"
_LOG = logging.getLogger(LOGGER_NAME)
_state = {"watching": False, "announced": False}


def cache_folder() -> str:
    """Where numba caches the kernels: ``NUMBA_CACHE_DIR``, else the package's ``ops/_kernels/__pycache__``."""
    return os.environ.get("NUMBA_CACHE_DIR") or str(Path(__file__).resolve().parent / "__pycache__")


def watch() -> None:
    """Register the listener of numba's compile events (once per process)."""
    if _state["watching"]:
        return
    from numba.core import event

    class _Listener(event.Listener):
        def on_start(self, ev: Any) -> None:
            dispatcher = ev.data.get("dispatcher")
            module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
            if not module.startswith("segmetrics_torch"):
                return
            if not _state["announced"]:
                _state["announced"] = True
                # unconfigured logging drops INFO records: then WARNING, which the last-resort handler prints
                level = logging.INFO if _LOG.hasHandlers() else logging.WARNING
                _LOG.log(
                    level,
                    "compiling segmetrics-torch's CPU kernels for this machine, those this run uses (once each: numba "
                    "caches them in %s; a measure family used for the first time compiles its own; `segmetrics "
                    "warmup` compiles all of them ahead, e.g. in a Docker image)",
                    cache_folder(),
                )
            _LOG.debug("compiling %s.%s", module, dispatcher.py_func.__name__)

        def on_end(self, ev: Any) -> None:
            pass

    event.register("numba:compile", _Listener())
    _state["watching"] = True


def ready(dispatcher: Any, args: tuple[Any, ...]) -> bool:
    """Whether calling the numba ``dispatcher`` with arguments of ``args``' types would start without compiling:
    compiled in this process, or found in the on-disk cache (whose index also checks the source file and the
    machine). Reads numba's dispatcher internals; where they differ (another numba), answers True, so the caller
    behaves as if the kernel were ready and the call compiles when it must."""
    try:
        types = tuple(dispatcher.typeof_pyval(a) for a in args)
    except Exception:  # any failure of the look-up means "unknown", never an error of the caller
        return True
    found = compiled_or_cached(dispatcher, types)
    return True if found is None else found


def compiled_or_cached(dispatcher: Any, types: tuple[Any, ...]) -> bool | None:
    """Whether the numba ``dispatcher`` has an overload for the argument ``types`` compiled in this process or in
    its on-disk cache (read from the cache's index: nothing is loaded, so the call that follows loads it once);
    None where numba's internals differ (another numba)."""
    try:
        if types in dispatcher.overloads:
            return True
        from numba.core.caching import NullCache

        cache = dispatcher._cache
        if isinstance(cache, NullCache):  # cache=False: only what this process compiled
            return False
        key = cache._index_key(types, dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:
        return None
