"""Readers of soft maps and ucm2 as float64 in [0, 1]: the one reading of such inputs in the package.

They convert data (a uint8 map is divided by 255 exactly on every device, :func:`.device_exact.divide_exactly`), so
they live in ``ops`` rather than in ``_checks``, which imports nothing of the package and only checks.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .._checks import check_probability_map
from .device_exact import divide_exactly

__all__ = ["as_ucm2", "as_unit_map"]


def as_unit_map(x: Tensor, name: str, validate_args: bool = True) -> Tensor:
    """A soft map or ucm2 as float64 in [0, 1]: the one reading of such inputs in the package.

    * uint8 is divided by 255 (an 8-bit PNG or ucm2 image, as BSR's ``imread`` / ``double(.)/255``);
    * floating maps are taken as they are and must be finite and in [0, 1] (checked when ``validate_args``; this
      synchronises a CUDA device): a negative value or one above 1 is an error, not a level outside every threshold;
    * any other dtype (bool, other integers, complex) is a ``TypeError``: a bool map is a single level, which the
      soft-map and ucm2 formats do not describe (pass ``x.double()`` if that is meant).
    """
    if x.dtype == torch.uint8:
        return divide_exactly(x.to(torch.float64), 255)
    if not x.is_floating_point():
        raise TypeError(f"Expected `{name}` to be floating in [0, 1] or uint8 (0..255), but got dtype {x.dtype}.")
    if validate_args:
        check_probability_map(x, name)
    return x.to(torch.float64)


def as_ucm2(x: Tensor, name: str, validate_args: bool = True) -> Tensor:
    """A ucm2 as float64 in [0, 1]: the one ucm2 rule of the package, used by the boundary and hierarchy families.

    The shape is the double-size grid of Arbelaez et al., (..., 2H+1, 2W+1) with H, W >= 1 (``ValueError``
    otherwise); the values are read by :func:`as_unit_map` (uint8 / 255 as BSR's ``double(imread(.)) / 255``,
    floats finite in [0, 1], other dtypes a ``TypeError``), so a uint8 ucm2 and its float64 ``/ 255`` twin give the
    same numbers in every function that takes a ucm2.
    """
    h2, w2 = x.shape[-2:] if x.ndim >= 2 else (0, 0)
    if x.ndim < 2 or h2 < 3 or w2 < 3 or h2 % 2 == 0 or w2 % 2 == 0:
        raise ValueError(
            f"Expected `{name}` to be a double-size ucm2 of odd shape (2H+1, 2W+1) with H, W >= 1, but got shape "
            f"{tuple(x.shape)}."
        )
    return as_unit_map(x, name, validate_args)
