"""Output files of the command: checked before any measure runs, each written atomically at the end.

A run that fails must not leave a half-written or a stale-but-fresh-looking file behind, and a run must not spend an
hour computing to find that ``--json`` points into a read-only folder. So:

* :func:`check_output` runs before the evaluation for every output the user named: the path is not a folder, its
  folder exists, and a file can be created there (a real probe: permission bits do not tell the whole story, e.g. a
  read-only mount or an ACL);
* :func:`write_atomically` writes through a temporary file in the same folder and ``os.replace`` s it onto the target:
  readers see the old file or the new one, never a part; a failure leaves the old file as it was.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from .errors import InputError

__all__ = ["check_output", "write_atomically"]


def check_output(path: str | Path | None, option: str) -> Path | None:
    """``path`` as a Path once it is known to be writable, or ``None`` when not given.

    Raises:
        InputError: naming ``option`` and what is wrong: a folder given as a file name, a missing folder, a folder
            where no file can be created.
    """
    if path is None:
        return None
    out = Path(path)
    if out.is_dir():
        raise InputError(f"{option} {out} is a directory; give a file name")
    if not out.parent.is_dir():
        what = "is not a folder" if out.parent.exists() else "does not exist"
        raise InputError(f"{option} {out}: the folder {out.parent} {what}")
    if out.exists() and not os.access(out, os.W_OK):
        raise InputError(f"{option} {out}: the file exists and is not writable")
    try:
        handle, probe = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".probe", dir=out.parent)
    except OSError as error:
        raise InputError(f"{option} {out}: cannot create a file in {out.parent} ({error.strerror or error})") from None
    os.close(handle)
    os.unlink(probe)
    return out


def write_atomically(path: str | Path, write: Callable[[Path], None]) -> None:
    """Call ``write(temporary_path)`` then move the temporary file onto ``path`` (same folder, ``os.replace``).

    The temporary file keeps ``path``'s suffix (writers such as matplotlib choose the format from it).
    """
    path = Path(path)
    handle, temp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=f".tmp{path.suffix}", dir=path.parent)
    os.close(handle)
    try:
        write(Path(temp))
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
