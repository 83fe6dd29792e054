"""The error of unusable input: a file, a folder or an option of the user's that cannot be used as given.

The readers of datasets (:mod:`segmetrics_torch.datasets`), the writers of reports (:mod:`segmetrics_torch.reports`)
and the ``segmetrics`` command raise it with a message that names the file or option and what is wrong; the command
prints it as one ``error:`` line and exits with status 2. The measures themselves raise ``ValueError`` /
``TypeError`` for bad tensors, as torchmetrics does.
"""

from __future__ import annotations

import reprlib

__all__ = ["InputError", "shown_value"]


class InputError(Exception):
    """A problem with the user's input or environment (a file, a folder, an option): one ``error:`` line, exit 2."""


_SHOWN = reprlib.Repr()
_SHOWN.maxlevel, _SHOWN.maxlist, _SHOWN.maxdict, _SHOWN.maxstring, _SHOWN.maxother = 3, 6, 6, 80, 80


def shown_value(value: object) -> str:
    """``repr(value)`` cut short for an error message (at most 6 items a level, 3 levels, 80 characters a string,
    200 in all): a configuration's value can be built by YAML aliases into a structure whose full repr runs to
    gigabytes.

    Example:
        >>> shown_value(list(range(100)))
        '[0, 1, 2, 3, 4, 5, ...]'
    """
    text = _SHOWN.repr(value)
    return text if len(text) <= 200 else text[:197] + "..."
