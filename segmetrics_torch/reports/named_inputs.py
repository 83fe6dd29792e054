"""The files a run of the command reads by name, recorded as it reads them: every one is an input that no output may
replace.

A configuration (``--config``), PySODEvalToolkit's ``--datasets-json`` / ``--methods-json``, a matplotlib style file
(``--style``) and whatever list or split a later family reads are opened through :func:`read_text_file` (or declared
with :func:`named_input` where another library opens them), which records them in the run's ledger. The output
check (:mod:`.output_safety`) asks the ledger, so a reader added tomorrow is protected by the way it reads, not by a
list someone must remember to extend. The ledger belongs to one command invocation (:func:`run_ledger`, entered by
``segmetrics``' ``main``), so in-process callers (tests) never see another run's files.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..readers import reads

__all__ = ["NamedInput", "named_input", "named_inputs", "read_text_file", "run_ledger"]


@dataclass(frozen=True)
class NamedInput:
    """A file the run reads because the user named it: ``role`` names it in errors ("the configuration file")."""

    role: str
    path: Path


_LEDGER: ContextVar[tuple[NamedInput, ...]] = ContextVar("segmetrics_named_inputs", default=())


@contextlib.contextmanager
def run_ledger() -> Iterator[None]:
    """A fresh, empty ledger for one invocation of the command (restored after it)."""
    token = _LEDGER.set(())
    try:
        yield
    finally:
        _LEDGER.reset(token)


def named_input(path: str | Path, role: str) -> None:
    """Record ``path`` (its real path: links followed) as a file this run reads."""
    real = Path(os.path.realpath(path))
    _LEDGER.set((*_LEDGER.get(), NamedInput(role, real)))


def named_inputs() -> tuple[NamedInput, ...]:
    """The files recorded so far in this run, each with its role."""
    return _LEDGER.get()


@reads(
    (".yaml", ".yml", ".json", ".txt", ".mplstyle"),
    "files the user names (configurations, lists, styles)",
    from_folders=False,
)
def read_text_file(path: Path, what: str) -> str:
    """The UTF-8 text of the user's file ``path``, described as ``what`` ("the configuration") in the errors: a
    missing path, a folder, or a byte that is not UTF-8 (with its line, and how to convert a Latin-1 file). The file
    is recorded as an input of the run (:func:`named_input`) before it is read."""
    if not path.is_file():
        raise InputError(f"{what} {path} {'is not a file' if path.exists() else 'does not exist'}")
    named_input(path, what)
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        line = error.object.count(b"\n", 0, error.start) + 1
        raise InputError(
            f"{path}: byte {error.start} (line {line}) is not UTF-8 ({error.object[error.start : error.start + 1]!r}); "
            "save it as UTF-8 (an editor's 'encoding' menu, or iconv -f latin1 -t utf-8)"
        ) from None
