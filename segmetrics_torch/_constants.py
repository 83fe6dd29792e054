"""Numerical constants shared by the measures, their kernels and the losses (one definition each).

Importing this module imports nothing else (no torch, no numba): the compiled kernels read these as module globals,
which numba freezes at compile time.
"""

import math

__all__ = ["EPS", "LOG_HALF_OVER_5"]

#: ``numpy.spacing(1)`` == MATLAB ``eps`` (2.22e-16), the regulariser of the SOD measures' divisions
EPS = 2.220446049250313e-16
#: ``log(0.5) / 5``: the weighted F-measure's pixel importance ``B = 2 - exp(LOG_HALF_OVER_5 * d) = 2 - 0.5^(d / 5)``
LOG_HALF_OVER_5 = math.log(0.5) / 5
