"""The error of unusable input: a file, a folder or an option of the user's that cannot be used as given.

The readers of datasets (:mod:`segmetrics_torch.datasets`), the writers of reports (:mod:`segmetrics_torch.reports`)
and the ``segmetrics`` command raise it with a message that names the file or option and what is wrong; the command
prints it as one ``error:`` line and exits with status 2. The measures themselves raise ``ValueError`` /
``TypeError`` for bad tensors, as torchmetrics does.
"""

from __future__ import annotations

__all__ = ["InputError"]


class InputError(Exception):
    """A problem with the user's input or environment (a file, a folder, an option): one ``error:`` line, exit 2."""
