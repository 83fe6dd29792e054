"""Compile a kernel in a second process while this one goes on: a shorter first run on a machine with 2+ CPUs.

numba compiles one function at a time per process (a global lock), so a first run that needs several large kernels
waits for the sum of their compilation times. When a caller knows ahead that it will need a kernel for one exact
signature, :func:`compile_aside` starts a Python process that compiles it into numba's on-disk cache
(``cache=True``) while this process compiles and runs what comes before; the caller calls :meth:`Aside.wait` just
before its first call of the kernel, which then loads it from the cache instead of compiling it. The BSDS soft-map
counts use it for their matching stage (~10 s of a cold 20 s run on a 2-core machine).

It does nothing (returns an :class:`Aside` whose ``wait`` returns at once) where it cannot help: the kernel is
compiled here or cached already, one CPU, a machine without an idle CPU (load average above CPUs - 1), caching off.
Whether to use it at all is the caller's (the ops ask :func:`segmetrics_torch.ops.backend.compile_aside_enabled`;
this module reads no setting). Whatever happens to the second process (it fails, it is killed), the kernel still
works: the call compiles it here, as without the helper.
The helper's output is discarded; it inherits the environment (``NUMBA_CACHE_DIR`` included) and finds this
package where this process found it. A second ``compile_aside`` of the same kernel and signature before the first
helper is waited for returns that helper.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from ._compile_log import compiled_or_cached

__all__ = ["Aside", "compile_aside"]

# compile for the argument types as a tuple: numba keys its cache by the signature as passed to `compile`, and a
# call from Python looks it up by the tuple of the arguments' types (a string signature would be cached under the
# string, never found)
_CHILD = (
    "import importlib, sys; from numba.core import sigutils; "
    "kernel = getattr(importlib.import_module(sys.argv[1]), sys.argv[2]); "
    "kernel.compile(tuple(sigutils.normalize_signature(sys.argv[3])[0]))"
)
#: the longest wait for the helper before this process compiles the kernel itself
_TIMEOUT_S = 600.0
#: the helpers started and not yet waited for, by (module, kernel, signature): a caller that starts one early (a
#: command, as soon as it knows what it will compute) and the op that needs the kernel share it
_RUNNING: dict[tuple[str, str, str], Aside] = {}


class Aside:
    """The helper process of :func:`compile_aside` (or none)."""

    def __init__(self, process: subprocess.Popen[bytes] | None, key: tuple[str, str, str] | None = None) -> None:
        self.process = process
        self.key = key

    def wait(self) -> bool:
        """Wait for the helper; True when it compiled the kernel (False: none started, or it failed)."""
        if self.process is None:
            return False
        try:
            return self.process.wait(_TIMEOUT_S) == 0
        except subprocess.TimeoutExpired:
            self.stop()
            return False
        finally:
            _RUNNING.pop(self.key or ("", "", ""), None)

    def stop(self) -> None:
        """End the helper if it still runs (the caller gave up, e.g. on an error)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        _RUNNING.pop(self.key or ("", "", ""), None)


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _busy() -> bool:
    """Fewer than one idle CPU besides this process (the last minute's load average): a helper would only compete
    with this process for the same cores (a trial beside a CPU-bound job: 23-27 s without the helper, 27-29 s with)."""
    try:
        return os.getloadavg()[0] > _cpus() - 1
    except OSError:  # not available on this platform
        return False


def compile_aside(dispatcher: Any, signature: str) -> Aside:
    """Start compiling ``dispatcher`` (a module-level ``numba.njit(cache=True)`` kernel) for ``signature`` (numba's
    string form, e.g. ``"void(int64[::1], int64)"``) in a second process, unless that cannot help (see above)."""
    function = getattr(dispatcher, "py_func", None)
    if function is None:  # not a numba dispatcher (NUMBA_DISABLE_JIT=1 leaves the plain function)
        return Aside(None)
    key = (function.__module__, function.__name__, signature)
    if key in _RUNNING:
        return _RUNNING[key]
    if _cpus() < 2 or _busy():
        return Aside(None)
    try:
        from numba.core import sigutils
        from numba.core.caching import NullCache

        args, _ = sigutils.normalize_signature(signature)
        if isinstance(dispatcher._cache, NullCache) or compiled_or_cached(dispatcher, tuple(args)) is not False:
            return Aside(None)  # ready, or numba's internals differ: nothing to gain
    except Exception:  # another numba's internals: go without the helper
        return Aside(None)
    package_root = str(Path(sys.modules["segmetrics_torch"].__file__ or "").resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", _CHILD, function.__module__, function.__name__, signature],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except OSError:
        return Aside(None)
    _RUNNING[key] = Aside(process, key)
    return _RUNNING[key]


@atexit.register
def _stop_all() -> None:
    # a helper nobody waited for (the process ends on an error) does not outlive it
    for helper in list(_RUNNING.values()):
        helper.stop()
