"""The one error type of the command: a problem with the user's input or environment."""

from __future__ import annotations

__all__ = ["InputError"]


class InputError(Exception):
    """A problem with the user's input or environment: reported as one ``error:`` line, exit status 2."""
