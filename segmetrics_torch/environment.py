"""The ``SEGMETRICS_*`` environment variables the package reads, each with the values it accepts, read in one place.

There are two, and no more: each setting of the library is a function or an argument first (the backend:
:mod:`segmetrics_torch.ops.backend`; the image size limit: ``--max-image-pixels``), and a variable only where a
process must inherit it (a subprocess, a job script, the command's decoding workers). The package never writes the
backend variable: the command steers the library through :func:`segmetrics_torch.ops.use_backend`, not through the
environment (a test greps for writes; the one left is the command's ``--max-image-pixels``, which its decoding worker
processes inherit as ``SEGMETRICS_MAX_IMAGE_PIXELS``).

A variable set to a value the package does not know (``SEGMETRICS_BACKEND=Tensor``, ``SEGMETRICS_BACKEND=off``) is a
``ValueError`` naming the variable, the value and the accepted values, never the default without a word: a misspelt
setting would otherwise look applied. Set but empty (``SEGMETRICS_BACKEND=``) is the same as unset; spaces around a
value are ignored.

:data:`VARIABLES` is the one list (a test checks that every ``SEGMETRICS_*`` name in the package's source is in it);
:func:`environment_value` reads one variable; :func:`check_environment` checks them all (the command does, before a
run starts, so that a bad value is one ``error:`` line however deep in the library it is read).

This module imports nothing of the package (any module may use it).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["VARIABLES", "Variable", "check_environment", "environment_value"]


def _positive_integer(text: str) -> bool:
    try:
        return int(text.replace("_", "").replace(",", "")) >= 1
    except ValueError:
        return False


@dataclass(frozen=True)
class Variable:
    """One variable: its value when unset (None: the reader supplies it), the accepted values in words (for the
    message), and the check of a value."""

    default: str | None
    accepted: str
    valid: Callable[[str], bool]


#: every ``SEGMETRICS_*`` variable the package reads
VARIABLES: dict[str, Variable] = {
    # the initial backend setting (ops.backend.BACKEND_SETTINGS; a test checks that the lists agree), read once by
    # ops.backend
    "SEGMETRICS_BACKEND": Variable(
        "auto", "auto, compiled or tensor", lambda text: text in ("auto", "compiled", "tensor")
    ),
    # the image (and volume) size limit of the readers (io.max_image_pixels; its default lives there)
    "SEGMETRICS_MAX_IMAGE_PIXELS": Variable(None, "a positive number of pixels", _positive_integer),
}


def environment_value(name: str) -> str | None:
    """The value of the variable ``name`` (one of :data:`VARIABLES`), stripped; its default when unset or empty.

    Raises:
        ValueError: a value the variable does not accept (``SEGMETRICS_BACKEND='Tensor': expected auto, compiled
            or tensor``).
    """
    variable = VARIABLES[name]
    text = os.environ.get(name, "").strip()
    if not text:
        return variable.default
    if not variable.valid(text):
        raise ValueError(f"{name}={os.environ[name]!r}: expected {variable.accepted}")
    return text


def check_environment() -> None:
    """Check every variable of :data:`VARIABLES` (the first bad one raises, as :func:`environment_value`)."""
    for name in VARIABLES:
        environment_value(name)
