"""The files the package reads, each declared by its reader: the one list the command's output-safety rule asks.

Every function of the package that opens a user's file declares what it opens with :func:`reads`: the file-name
endings it takes and whether it picks them out of a folder (the pairing of ``--pred`` / ``--gt`` folders takes every
file whose name a reader of the run's family accepts) or reads only a file the user names (a configuration, a
dataset list, a matplotlib style). The declarations are collected in :data:`READERS`, beside the measure registry
(:mod:`segmetrics_torch.registry`), and nothing else in the package lists extensions for safety's sake:

* :func:`folder_extensions` is the union over every folder reader of every family: the command refuses an output
  whose name one of them accepts inside any input folder, whatever family the run is (a ``--json P/new.nii.gz``
  of a foreground run would otherwise be taken for a volume by the next surface run);
* :func:`is_read_by_a_reader` says whether a file name is one of those;
* a test walks the package's source and fails when a function opens a file (Pillow, nibabel, scipy.io, numpy's
  ``load``, the command's text-file reader) without a declaration, so a new family's reader is covered on its first
  commit.

Matching is on the end of the lower-cased name (``.nii.gz`` is one ending, not ``.gz``); names starting with a dot are
never picked out of a folder (the command's own lock, manifest and temporary files).

This module imports nothing of the package (the readers import it).

Example:
    >>> from segmetrics_torch.readers import folder_extensions, is_read_by_a_reader
    >>> ".nii.gz" in folder_extensions() and ".mat" in folder_extensions()
    True
    >>> is_read_by_a_reader("case0.NII.GZ"), is_read_by_a_reader("results.json"), is_read_by_a_reader(".x.png")
    (True, False, False)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["READERS", "FileReader", "folder_extensions", "is_read_by_a_reader", "reads"]

_F = TypeVar("_F", bound=Callable[..., object])


@dataclass(frozen=True)
class FileReader:
    """One reader's declaration.

    Attributes:
        name: the reader's qualified name (``module.function``).
        extensions: the lower-case file-name endings it opens (``".png"``, ``".nii.gz"``).
        what: what it reads, as an error message names it ("NIfTI label volumes").
        from_folders: whether the command picks such files out of an input folder (True) or the reader opens only a
            file the user names (False: a configuration, a style); the files of both kinds are inputs of a run.
    """

    name: str
    extensions: tuple[str, ...]
    what: str
    from_folders: bool = True


#: every declared reader of the package, by qualified name (filled as the modules that hold them are imported)
READERS: dict[str, FileReader] = {}


def reads(extensions: Iterable[str], what: str, *, from_folders: bool = True) -> Callable[[_F], _F]:
    """Declare the decorated function a reader of files ending in ``extensions`` (see the module doc).

    Raises:
        ValueError: an extension that does not start with a dot or is not lower-case.
    """
    endings = tuple(extensions)
    for ending in endings:
        if not ending.startswith(".") or ending != ending.lower() or len(ending) < 2:
            raise ValueError(f"extensions: expected lower-case endings such as '.png', got {ending!r}")

    def declare(function: _F) -> _F:
        name = f"{function.__module__}.{function.__qualname__}"
        READERS[name] = FileReader(name, endings, what, from_folders)
        return function

    return declare


def _load_readers() -> None:
    """Import the modules that declare readers, so that the list is whole whatever the caller imported first."""
    import importlib

    for module in _DECLARING_MODULES:
        importlib.import_module(module)


#: the modules whose declared folder readers cover every ending any folder reader of the package takes (torch-free:
#: the output check runs before a report loads torch); a test imports every module and checks that nothing is missing
_DECLARING_MODULES = ("segmetrics_torch.io",)


def folder_extensions() -> tuple[str, ...]:
    """Every ending some folder reader of any family picks up, longest first (``.nii.gz`` before ``.gz``)."""
    _load_readers()
    endings = {ending for reader in READERS.values() if reader.from_folders for ending in reader.extensions}
    return tuple(sorted(endings, key=lambda e: (-len(e), e)))


def is_read_by_a_reader(name: str) -> bool:
    """Whether a file of this name in an input folder would be picked up by some folder reader (not a dot-file)."""
    lower = name.lower()
    return not lower.startswith(".") and lower.endswith(folder_extensions())
