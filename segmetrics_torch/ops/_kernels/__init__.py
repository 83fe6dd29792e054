"""Compiled numba CPU kernels, one module per algorithm; private to :mod:`segmetrics_torch.ops`.

Rules:

* Every kernel is reached through one checked public op of :mod:`segmetrics_torch.ops` (validation, dtype/layout
  conversion and device transfer happen there, never here); nothing outside ``ops`` imports this package.
* One module per *algorithm*, not per measure family: ``edt`` (exact distance transform), ``thinning``,
  ``assignment`` (least-cost maximum matching), ``unionfind``, ``correspondence`` (BSDS boundary counts built on
  thinning + assignment), ``labels`` (relabelling, UCM hierarchy sweeps), ``tables`` (contingency counts, weighted
  matchings, proposal mask counts), ``foreground`` (the fused foreground-measure kernel), ``edge_nms`` (edge
  non-maximum suppression of soft boundary maps).
* Kernel modules import each other by public (non-underscore) names only; helpers private to one algorithm keep a
  leading underscore.
* Kernels stay at module level in these stable module names, with ``cache=True``, so that numba's on-disk cache is
  keyed by a stable name. Importing ``segmetrics_torch.ops._kernels`` itself imports nothing (numba loads only with
  the submodule an op needs).
"""
