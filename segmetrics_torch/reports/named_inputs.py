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
import json
import os
import re
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..errors import InputError
from ..readers import reads

__all__ = [
    "NamedInput",
    "named_input",
    "named_inputs",
    "parse_json",
    "read_config_mapping",
    "read_text_file",
    "run_ledger",
]


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


#: what an error about a repeated key adds
_TWICE = "; a later one would silently replace the earlier: merge them"


def read_config_mapping(path: str | Path, what: str = "the configuration") -> Any:
    """The parsed YAML (``.yaml`` / ``.yml``, any other suffix) or JSON (``.json``) file ``path`` that a run reads by
    name (:func:`read_text_file`: recorded as an input, ``what`` naming it in errors), a key repeated in one mapping
    refused at any depth: YAML and ``json`` would silently keep the last (a second method of one name replacing the
    first). Every configuration of the command is read so (``evaluate --config``, the protocol reports).

    Raises:
        InputError: ``path: the key 'MyNet' appears twice in one mapping (lines 2 and 5) ...``, invalid YAML /
            JSON, a missing file.
    """
    path = Path(path)
    text = read_text_file(path, what)
    if path.suffix.lower() == ".json":
        return parse_json(text, path)
    try:
        return yaml.load(text, Loader=_unique_keys_yaml_loader())  # a SafeLoader subclass
    except _DuplicateKey as error:
        first, second = error.lines
        message = f"the key {error.key!r} appears twice in one mapping (lines {first} and {second})"
        raise InputError(f"{path}: {message}{_TWICE}") from None
    except _KeyNotText as error:
        raise InputError(
            f"{path}: the key {error.text} (line {error.line}) is not text, but YAML's {type(error.key).__name__}: "
            f"a configuration's keys are names; quote it ('{error.text}': ...)"
        ) from None
    except yaml.YAMLError as error:
        raise InputError(f"{path}: not valid YAML ({' '.join(str(error).split())})") from None
    except (RecursionError, ValueError) as error:  # nesting deeper than Python's stack; an integer of > 4300 digits
        raise InputError(f"{path}: not a configuration this command reads ({_why_not_read(error)})") from None


def _why_not_read(error: Exception) -> str:
    """Why a parser gave up on a file that is valid YAML / JSON in principle."""
    if isinstance(error, RecursionError):
        return "its lists or mappings are nested too deep"
    return f"{error}".split(";")[0]  # e.g. an integer of more than 4300 digits


def parse_json(text: str, path: Path) -> Any:
    """The JSON ``text`` of the user's file ``path`` (a configuration, PySODEvalToolkit's dataset or method file), a
    key repeated in one object refused at any depth: ``json`` would keep the last one silently (a second method of
    one name replacing the first).

    Raises:
        InputError: ``path: the key 'MyNet' appears twice in one object (lines 2 and 5) ...`` (the lines where the
            key occurs exactly twice in the file, so that they are the two), or ``path: not valid JSON (...)``.
    """
    try:
        return json.loads(text, object_pairs_hook=_unique_json_keys)
    except _DuplicateKey as error:
        lines = [text.count("\n", 0, m.start()) + 1 for m in re.finditer(rf'"{re.escape(error.key)}"\s*:', text)]
        where = f" (lines {lines[0]} and {lines[1]})" if len(lines) == 2 and lines[0] != lines[1] else ""
        raise InputError(
            f"{path}: the key {error.key!r} appears twice in one object{where}{_TWICE}, or rename one"
        ) from None
    except json.JSONDecodeError as error:
        raise InputError(f"{path}: not valid JSON ({error})") from None
    except (RecursionError, ValueError) as error:  # nesting deeper than Python's stack; an integer of > 4300 digits
        raise InputError(f"{path}: not a configuration this command reads ({_why_not_read(error)})") from None


class _KeyNotText(Exception):
    def __init__(self, key: object, text: str, line: int) -> None:
        super().__init__(key)
        self.key, self.text, self.line = key, text, line  # text: as written (yes, ~, 0x10), not as YAML read it


class _DuplicateKey(Exception):
    def __init__(self, key: str, lines: tuple[int, int] = (0, 0)) -> None:
        super().__init__(key)
        self.key, self.lines = key, lines


def _unique_json_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _unique_keys_yaml_loader() -> type:
    """A ``yaml.SafeLoader`` that rejects a mapping with a repeated key (PyYAML keeps the last one silently)."""

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
            first_line: dict[Any, int] = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                line = key_node.start_mark.line + 1
                if not isinstance(key, str):  # 1:, null:, yes: (YAML's True), a date: never a name as written
                    raise _KeyNotText(key, str(getattr(key_node, "value", key))[:80], line)
                if key in first_line:
                    raise _DuplicateKey(key, (first_line[key], line))
                first_line[key] = line
            return super().construct_mapping(node, deep=deep)

    return Loader
