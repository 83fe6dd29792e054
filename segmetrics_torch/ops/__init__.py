"""Exact, batched building blocks (no measure semantics).

Where code goes:

* A compiled kernel goes into :mod:`segmetrics_torch.ops._kernels`, in the module of its *algorithm* (``edt``,
  ``thinning``, ``assignment``, ``unionfind``, ``correspondence``, ``labels``, ``tables``, ``foreground``; a new
  algorithm gets a new module), at module level with ``cache=True``; kernel modules import each other by public names
  only.
* Each kernel is called from exactly one public, checked op in ``ops/`` (``distance``, ``morphology``, ``matching``,
  ``contingency``, ``hierarchy``, ``masks``, ``foreground``, ...): the op validates its arguments, converts dtypes /
  layouts / devices, picks the kernel or the tensor path by asking :mod:`.backend` (never on its own: the one rule of
  which code runs, set by :func:`use_backend` / :func:`set_backend` / ``SEGMETRICS_BACKEND``), and documents the
  convention.
* ``functional/``, ``metrics/``, ``meta/`` and ``losses.py`` use ops only through those public functions, never
  ``ops._kernels`` or another ``ops._*`` name, and never decide on their own which code runs (a family with a
  kernel op and tensor code of its own asks :func:`compiled_kernels` in one place: the foreground family in
  ``functional/foreground/_intermediates.py``).

The backend setting is this package's public API (:mod:`.backend`): ``use_backend("tensor")`` runs a block on the
tensor code that CUDA runs, ``set_backend`` sets it for the process.
"""

from .backend import (
    BACKEND_SETTINGS as BACKEND_SETTINGS,
    BackendSetting as BackendSetting,
    compile_aside_enabled as compile_aside_enabled,
    compiled_kernels as compiled_kernels,
    get_backend as get_backend,
    resolve as resolve,
    set_backend as set_backend,
    set_compile_aside as set_compile_aside,
    triton_kernels as triton_kernels,
    use_backend as use_backend,
)

__all__ = [
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
