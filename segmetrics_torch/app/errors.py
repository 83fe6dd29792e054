"""The one error type of the command: a problem with the user's input or environment."""

from __future__ import annotations

from pathlib import Path

__all__ = ["InputError", "read_text_file"]


class InputError(Exception):
    """A problem with the user's input or environment: reported as one ``error:`` line, exit status 2."""


def read_text_file(path: Path, what: str) -> str:
    """The UTF-8 text of the user's file ``path``, described as ``what`` ("the configuration") in the errors: a
    missing path, a folder, or a byte that is not UTF-8 (with its line, and how to convert a Latin-1 file)."""
    if not path.is_file():
        raise InputError(f"{what} {path} {'is not a file' if path.exists() else 'does not exist'}")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        line = error.object.count(b"\n", 0, error.start) + 1
        raise InputError(
            f"{path}: byte {error.start} (line {line}) is not UTF-8 ({error.object[error.start:error.start + 1]!r}); "
            "save it as UTF-8 (an editor's 'encoding' menu, or iconv -f latin1 -t utf-8)"
        ) from None
