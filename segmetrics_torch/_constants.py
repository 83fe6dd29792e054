"""Numerical constants shared by the measures, their kernels and the losses (one definition each).

Importing this module imports nothing else (no torch, no numba): the compiled kernels read these as module globals,
which numba freezes at compile time.
"""

import math

__all__ = ["EPS", "LOG_HALF_OVER_5", "MAX_CLASSES", "MAX_THRESHOLDS"]

#: ``numpy.spacing(1)`` == MATLAB ``eps`` (2.22e-16), the regulariser of the SOD measures' divisions
EPS = 2.220446049250313e-16
#: ``log(0.5) / 5``: the weighted F-measure's pixel importance ``B = 2 - exp(LOG_HALF_OVER_5 * d) = 2 - 0.5^(d / 5)``
LOG_HALF_OVER_5 = math.log(0.5) / 5

#: the most levels a benchmark takes (each level keeps its counts per image: 10^7 levels asked for 8 GB at once); the
#: functions and the command's options share it
MAX_THRESHOLDS = 100_000
#: the most classes a label map's measures take: their states and per-class work grow with the number asked for,
#: not with the images (num_classes=10^9 asked for 792 GB at construction, 10^6 took 2.2 GB on one 16 x 16 image)
MAX_CLASSES = 1 << 16
