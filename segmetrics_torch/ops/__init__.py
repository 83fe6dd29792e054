"""Exact, batched building blocks (no measure semantics).

Where code goes:

* A compiled kernel goes into :mod:`segmetrics_torch.ops._kernels`, in the module of its *algorithm* (``edt``,
  ``thinning``, ``assignment``, ``unionfind``, ``correspondence``, ``labels``, ``tables``, ``foreground``; a new
  algorithm gets a new module), at module level with ``cache=True``; kernel modules import each other by public names
  only.
* Each kernel is called from exactly one public, checked op in ``ops/`` (``distance``, ``morphology``, ``matching``,
  ``contingency``, ``hierarchy``, ``masks``, ``foreground``, ...): the op validates its arguments, converts dtypes /
  layouts / devices, picks the kernel or the tensor path (``backend``), and documents the convention.
* ``functional/``, ``metrics/``, ``meta/`` and ``losses.py`` use ops only through those public functions, never
  ``ops._kernels`` or another ``ops._*`` name.
"""
