"""Which code computes an op: the compiled CPU kernels, the Triton kernels or plain tensor operations. Decided here.

Several ops have more than one implementation of the same arithmetic: compiled numba kernels for CPU tensors (the
distance transform, thinning, the fused foreground statistics, the weighted-F loss, ...), Triton kernels for CUDA
tensors (the distance transform) and tensor code that runs on any device (what CUDA runs). Every op asks this module
which one runs, through :func:`resolve` (an op's ``backend="auto"`` argument), :func:`compiled_kernels` or
:func:`triton_kernels`; nothing above ``ops`` decides it on its own, so one setting moves every op at once and a
family cannot forget it.

The setting (:func:`get_backend`):

* ``"auto"`` (the default): CPU tensors take the compiled kernels (where numba imports), CUDA tensors the Triton
  kernels (where Triton imports and the image fits them), everything else the tensor code.
* ``"compiled"``: the same choice as ``"auto"`` inside the library. It differs for a caller that may take a cheaper
  route of its own under ``"auto"``: the ``segmetrics`` command's first small ``evaluate foreground`` run on a machine
  whose kernels are not compiled yet takes the tensor path instead of waiting for the compilation, except under
  ``"compiled"`` (``--backend compiled``), which always compiles.
* ``"tensor"``: the tensor code everywhere, no compiled and no Triton kernel: CPU tensors take exactly what CUDA
  tensors take without Triton (the tests use it to run the CUDA path on a CPU). Ops with no tensor code (the host
  kernels of the bipartite matching and of the partition tables' large cases) run as always.

The results do not depend on the setting: the implementations are tested against each other (bit for bit for the
distance transform and the counts; to rounding where floating sums are accumulated in another order, documented at
each op). An op's explicit ``backend="numba"`` or ``"torch"`` wins over the setting, which decides only ``"auto"``.

Where it comes from: the environment variable ``SEGMETRICS_BACKEND`` gives the initial value (read once, on the
first question; an unknown value is a ``ValueError`` naming the variable and the accepted values, checked through
:mod:`segmetrics_torch.environment`); :func:`set_backend` changes it for the process and :func:`use_backend` for a
block.
The value is process-wide (a module-level value, not a context variable) because the library and the command run
work on thread pools that must see what the thread that started them set; :func:`use_backend` is meant for one
thread at a time (two threads entering it with different values at once would see each other's). Child processes
inherit the environment variable, not a value set by a function.

Compile-aside (:func:`set_compile_aside`) is not a backend: on a machine whose numba cache is cold, the boundary
family's matching kernel compiles in a second process while this one goes on; the same kernel runs either way, so
it changes when the compilation happens, never which code computes or the numbers. It is on by default (it turns
itself off where it cannot help: one CPU, a busy machine, a warm cache); a benchmark of a cold run turns it off to
measure its gain.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Literal, cast, get_args

from ..environment import environment_value

if TYPE_CHECKING:  # importing this module loads neither torch nor numba (the command asks it before either loads)
    import torch

    from .._checks import Backend

__all__ = [
    "BACKEND_ENV",
    "BACKEND_SETTINGS",
    "BackendSetting",
    "compile_aside_enabled",
    "compiled_kernels",
    "get_backend",
    "resolve",
    "set_backend",
    "set_compile_aside",
    "triton_kernels",
    "use_backend",
]

#: the backend setting: "auto", "compiled" or "tensor" (see the module's docstring)
BackendSetting = Literal["auto", "compiled", "tensor"]
BACKEND_SETTINGS: tuple[str, ...] = get_args(BackendSetting)
#: the environment variable of the initial setting
BACKEND_ENV = "SEGMETRICS_BACKEND"

_LOCK = threading.Lock()
#: the process's setting; None until the first question reads the environment
_setting: BackendSetting | None = None
_compile_aside = True


def get_backend() -> BackendSetting:
    """The backend setting now: the last :func:`set_backend` / :func:`use_backend`, else ``$SEGMETRICS_BACKEND``
    (read on the first call), else ``"auto"``.

    Raises:
        ValueError: ``SEGMETRICS_BACKEND`` holds a value other than ``auto``, ``compiled`` or ``tensor``
            (``SEGMETRICS_BACKEND='fast': expected auto, compiled or tensor``); set but empty is the default.

    Example:
        >>> from segmetrics_torch.ops import get_backend, use_backend
        >>> with use_backend("tensor"):
        ...     get_backend()
        'tensor'
    """
    setting = _setting
    return _initial() if setting is None else setting


def _initial() -> BackendSetting:
    global _setting
    value = cast(BackendSetting, environment_value(BACKEND_ENV))  # checked there against environment.VARIABLES
    with _LOCK:
        if _setting is None:  # a set_backend between the read and here wins
            _setting = value
        return _setting


def set_backend(name: BackendSetting) -> None:
    """Set the backend of every op of this process to ``name`` (``"auto"``, ``"compiled"`` or ``"tensor"``) until
    the next change; :func:`use_backend` sets it for a block and restores the previous value.

    Raises:
        ValueError: ``name`` is not one of the settings.

    Example:
        >>> import torch
        >>> from segmetrics_torch.ops import compiled_kernels, get_backend, set_backend
        >>> previous = get_backend()
        >>> set_backend("tensor")
        >>> compiled_kernels(torch.device("cpu"))
        False
        >>> set_backend(previous)
    """
    global _setting
    checked = _checked(name)
    with _LOCK:
        _setting = checked


def _checked(name: object) -> BackendSetting:
    if name not in BACKEND_SETTINGS:
        from .._checks import check_choice  # only to word the error as every other argument's

        check_choice(name, "backend", BACKEND_SETTINGS)
    return cast(BackendSetting, name)


@contextlib.contextmanager
def use_backend(name: BackendSetting) -> Iterator[None]:
    """Run the block with the backend ``name``; the previous setting is back on the way out, however the block ends
    (an exception, Ctrl-C).

    Raises:
        ValueError: ``name`` is not one of the settings (before the block runs).

    Example:
        >>> import torch
        >>> from segmetrics_torch.ops import use_backend
        >>> from segmetrics_torch.ops.distance import distance_transform_edt
        >>> mask = torch.tensor([[False, True, False]])
        >>> with use_backend("tensor"):  # the tensor code (what CUDA runs) on a CPU tensor
        ...     distance_transform_edt(mask)[0]
        tensor([[1., 0., 1.]], dtype=torch.float64)
    """
    global _setting
    checked = _checked(name)
    previous = get_backend()
    with _LOCK:
        _setting = checked
    try:
        yield
    finally:
        with _LOCK:
            _setting = previous


def compiled_kernels(device: torch.device) -> bool:
    """Whether tensors on ``device`` take the compiled CPU kernels: a CPU device, numba importable, and a setting
    other than ``"tensor"``. The one question of every op with a numba kernel and a tensor path (and of the
    foreground family, whose measures share one fused kernel): a CPU tensor that does not take the kernels takes the
    tensor code CUDA runs.

    Example:
        >>> import torch
        >>> from segmetrics_torch.ops import compiled_kernels
        >>> compiled_kernels(torch.device("meta"))  # only CPU tensors have compiled kernels
        False
    """
    return device.type == "cpu" and get_backend() != "tensor" and _numba_available()


def triton_kernels(device: torch.device) -> bool:
    """Whether tensors on ``device`` may take the Triton kernels: a CUDA device, Triton importable, and a setting
    other than ``"tensor"`` (an op still takes its tensor code where its kernel does not apply, e.g. the distance
    transform's images too large for int32 keys, or once its kernel failed to build).

    Example:
        >>> import torch
        >>> from segmetrics_torch.ops import triton_kernels
        >>> triton_kernels(torch.device("cpu"))
        False
    """
    return device.type == "cuda" and get_backend() != "tensor" and _triton_available()


def resolve(backend: Backend, device: torch.device) -> Literal["numba", "torch"]:
    """The implementation an op's ``backend`` argument names for tensors on ``device``: ``"numba"`` and ``"torch"``
    as given (an explicit choice wins over the setting), ``"auto"`` the compiled kernel where
    :func:`compiled_kernels` says so, the tensor code otherwise.

    Raises:
        ValueError: ``backend`` is not ``"auto"``, ``"numba"`` or ``"torch"``.

    Example:
        >>> import torch
        >>> from segmetrics_torch.ops import resolve, use_backend
        >>> with use_backend("tensor"):
        ...     resolve("auto", torch.device("cpu")), resolve("numba", torch.device("cpu"))
        ('torch', 'numba')
    """
    if backend == "auto":
        return "numba" if compiled_kernels(device) else "torch"
    if backend == "numba" or backend == "torch":
        return backend
    from .._checks import BACKENDS, check_choice

    check_choice(backend, "backend", BACKENDS)  # raises: not one of them
    raise AssertionError("unreachable")


def set_compile_aside(enabled: bool) -> None:
    """Let the compiled backend compile the boundary matching kernel in a second process on a cold numba cache
    (``True``, the default) or keep every compilation in this process (``False``: what a benchmark of the gain
    compares against). Results never depend on it (see the module's docstring).

    Example:
        >>> from segmetrics_torch.ops import compile_aside_enabled, set_compile_aside
        >>> set_compile_aside(False)
        >>> compile_aside_enabled()
        False
        >>> set_compile_aside(True)
    """
    global _compile_aside
    if not isinstance(enabled, bool):
        raise TypeError(f"Expected `enabled` to be a bool, but got {enabled!r}.")
    _compile_aside = enabled


def compile_aside_enabled() -> bool:
    """Whether :func:`set_compile_aside` lets a second process compile the matching kernel (the default: yes).

    Example:
        >>> from segmetrics_torch.ops import compile_aside_enabled
        >>> compile_aside_enabled()
        True
    """
    return _compile_aside


@functools.cache
def _numba_available() -> bool:
    # Imported, not just looked up: an installed numba that fails to import (say, built for another numpy) must
    # send "auto" to the tensor code rather than fail.
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


@functools.cache
def _triton_available() -> bool:
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True
