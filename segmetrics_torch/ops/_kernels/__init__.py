"""Compiled numba CPU kernels, private to :mod:`segmetrics_torch.ops` (numba is imported with a kernel module only).

Kernels stay at module level in these stable module names, with ``cache=True``, so that numba's on-disk cache is keyed
by a stable name.
"""
