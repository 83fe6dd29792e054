"""The rule that keeps a run from touching what the user owns: no output replaces or deletes a file the run reads or
would read, nor lands where an input folder's pairing would pick it up next time. The ``segmetrics`` command applies
it to every output of every form; a script that writes tables or a report folder with :mod:`segmetrics_torch.reports`
can ask it the same (:func:`check_outputs`).

Checked before any measure runs (a mistake costs nothing), for every output of every form:

* a **file output** (``--json``, ``--csv``, ``--per-image-csv``, ``--plot``, BSR's ``eval_bdry*.txt`` of
  ``--out-dir``) must not be a file the run reads: a file of an input folder that some reader picks up, a file the
  run read by name (the configuration, PySODEvalToolkit's JSON files, a style: whatever went through
  :func:`.named_inputs.read_text_file`), followed through symbolic and hard links. It must not sit in an input folder
  under a name that any declared folder reader of any family accepts
  (:func:`segmetrics_torch.readers.is_read_by_a_reader`: the next run's pairing would take it for an input, whatever
  family that run is), and must not sit in the cache
  folder (whose ``.json`` entries the run reads). A new ``results.json`` beside the images is allowed: no folder
  reader takes ``.json``;
* a **folder output** (``--output``, ``--cache``) must not be an input folder itself, and the parts of it that the
  report writes and replaces (``results.json``, ``tables.*``, ``combined.*``, ``csv/``, ``figures/``, ``cache/``,
  its temporary ``.segmetrics-report-*`` folders) must not hold an input folder or the configuration file;
* an input folder read as a whole **tree** (``InputFolder(..., tree=True)``: DAVIS' sequence folders, the SBD class
  folders, a ground truth searched recursively: every file there is read, or is an error of the next run) holds no
  output anywhere inside it, and no folder output that makes entries anywhere in it (``FolderOutput(...,
  anywhere=True)``: SBD's ``--out-dir``) holds it;
* two outputs must not name the same file.

The rule holds no list of extensions: the readers declare what they read (:mod:`segmetrics_torch.readers`), the
named files are recorded as they are read (:mod:`.named_inputs`), and this module asks both.

A violation is an :class:`~segmetrics_torch.errors.InputError` (exit 2, one ``error:`` line) naming the option,
the path and the input it would destroy or pollute.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from ..readers import is_read_by_a_reader
from .files import check_output, probe_folder
from .named_inputs import named_inputs
from .tables import check_csv_outputs

__all__ = [
    "REPORT_FILES",
    "REPORT_FOLDERS",
    "REPORT_TEMP_PREFIX",
    "FolderOutput",
    "InputFile",
    "InputFolder",
    "check_appended_file",
    "check_outputs",
    "check_outputs_are_not_folders",
    "checked_outputs",
    "probe_outputs",
    "report_folder",
    "report_owns",
]

#: the files a report writes at the top of its folder (and replaces on the next run)
REPORT_FILES = frozenset(
    {
        ".segmetrics-lock",
        "results.json",
        "tables.md",
        "tables.tex",
        "combined.md",
        "combined.tex",
        "combined.xlsx",
        ".segmetrics-manifest.json",
    }
)
#: the sub-folders of a report folder whose files the report writes and removes
REPORT_FOLDERS = frozenset({"csv", "figures"})
#: a report renders into a temporary folder of this prefix inside its folder (removed after, or by the next run)
REPORT_TEMP_PREFIX = ".segmetrics-report-"


@dataclass(frozen=True)
class InputFolder:
    """A folder the run reads: ``role`` names it in errors ("the prediction folder"). Every name a declared folder
    reader of any family accepts is an input there (:func:`segmetrics_torch.readers.is_read_by_a_reader`); with
    ``tree``, the run reads every file of its tree, so that no output may be anywhere inside it."""

    role: str
    path: Path
    tree: bool = False


@dataclass(frozen=True)
class InputFile:
    """A single file the run reads (the configuration); the files read through :func:`.inputs.read_text_file` are
    added by :func:`check_outputs` itself."""

    role: str
    path: Path


@dataclass(frozen=True)
class FolderOutput:
    """A folder the run writes into: the top-level ``files`` and the ``folders`` (whole sub-trees) it owns, and the
    ``prefixes`` of its temporary entries. ``marker``: a path under the folder (``assets/.segmetrics-html``) whose
    file says that its owned entries were written by the same writer: without it, an owned file or folder that exists
    (or a link of that name) is the user's, and refused rather than replaced ("": no such rule). ``anywhere``: it
    makes entries of names not listed here (SBD's ``class_NNN/`` folders of ``--out-dir``), so that it may not hold an
    input read as a tree either."""

    option: str
    path: Path
    files: frozenset[str] = frozenset()
    folders: frozenset[str] = field(default_factory=frozenset)
    prefixes: tuple[str, ...] = ()
    marker: str = ""
    anywhere: bool = False


def report_owns(relative: str) -> bool:
    """Whether a path relative to a report folder is one the report writes (and may therefore remove)."""
    parts = Path(relative).parts
    if not parts or ".." in parts or Path(relative).is_absolute():
        return False
    if len(parts) == 1:
        return parts[0] in REPORT_FILES
    return parts[0] in REPORT_FOLDERS


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _inside(path: Path, folder: Path) -> bool:
    return path != folder and path.is_relative_to(folder)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _linked_input_in(path: Path, folder: InputFolder) -> Path | None:
    """An input of ``folder`` (a name some reader picks) that is the same file as ``path`` under another name: a hard
    link, or an input that is a symbolic link to it, or ``path`` itself a link to it (links followed); None if
    none. The folder is listed only when ``path`` exists."""
    try:
        target = path.stat()
    except OSError:
        return None
    try:
        entries = list(os.scandir(folder.path))
    except OSError:
        return None
    for entry in entries:
        if not is_read_by_a_reader(entry.name):
            continue
        try:
            other = entry.stat()  # follows a symbolic link: the file the pairing would read
        except OSError:
            continue
        if (other.st_ino, other.st_dev) == (target.st_ino, target.st_dev):
            return Path(entry.path)
    return None


def _check_makeable(out: FolderOutput) -> None:
    """A file where the folder should be, a folder that cannot be made (its nearest existing parent is not a writable
    folder), and, with a ``marker``, owned entries of another writer: refused before anything is written."""
    path = Path(out.path)
    if path.exists() and not path.is_dir():
        raise InputError(f"{out.option} {path} is a file; give a folder")
    parent = path
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if parent == path and not os.access(path, os.W_OK | os.X_OK):
        raise InputError(f"{out.option} {path} is a folder this run cannot write into (not writable)")
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        what = "is not a folder" if not parent.is_dir() else "is not writable"
        raise InputError(f"{out.option} {path}: {parent} {what}, so the folder cannot be made")
    if not out.marker:
        return
    marker = path / out.marker
    ours = marker.is_file() and all(
        (path / p).is_dir() and not (path / p).is_symlink() for p in Path(out.marker).parents if p != Path(".")
    )
    for name in sorted(out.folders) + sorted(out.files):
        entry = path / name
        if entry.is_symlink() or (entry.exists() and not ours):
            raise InputError(
                f"{out.option} {path}: {entry} exists and was not written by this report (no {marker.name} in "
                f"{marker.parent}); the report replaces that {'folder' if name in out.folders else 'file'}: move it or "
                "choose another output folder"
            )


def _check_folder_output(
    out: FolderOutput, folder_inputs: Sequence[InputFolder], file_inputs: Sequence[InputFile]
) -> None:
    """A folder output is a folder that can be made, neither an input folder nor a parent of an input it writes or
    replaces, and (with a ``marker``) replaces nothing another writer made."""
    _check_makeable(out)
    root = _real(out.path)
    for sub in sorted(out.folders):
        if (root / sub).is_symlink():  # its files would be written (and replaced) wherever the link points
            raise InputError(
                f"{root / sub} is a symbolic link; {out.option} {out.path} writes and replaces the files of its "
                f"{sub}/ folder, which must be a folder of its own: remove the link or choose another output folder"
            )
    for folder in folder_inputs:
        if root == folder.path:
            raise InputError(
                f"{out.option} {out.path} is {folder.role}; give a folder of its own (the run writes files there "
                "and replaces them on the next run)"
            )
        if _inside(folder.path, root):
            first = folder.path.relative_to(root).parts[0]
            if first in out.folders or any(first.startswith(p) for p in out.prefixes):
                raise InputError(
                    f"{folder.role} {folder.path} is inside {root / first}, which {out.option} {out.path} "
                    "writes and replaces; move the inputs or choose another output folder"
                )
    for source in file_inputs:
        if _inside(source.path, root):
            relative = source.path.relative_to(root)
            first = relative.parts[0]
            owned = (len(relative.parts) == 1 and first in out.files) or first in out.folders
            if owned or any(first.startswith(p) for p in out.prefixes):
                raise InputError(
                    f"{source.role} {source.path} is a file that {out.option} {out.path} writes; rename it or "
                    "choose another output folder"
                )


def check_outputs(
    files: Mapping[str, Path | None] | Iterable[tuple[str, Path | None]],
    *,
    folders: Sequence[FolderOutput] = (),
    inputs: Sequence[InputFolder] = (),
    input_files: Sequence[InputFile] = (),
    cache: Path | None = None,
) -> None:
    """Raise :class:`InputError` if an output would replace, delete or pollute an input (see the module doc).

    Args:
        files: ``option -> path`` of the file outputs (``None``: not given).
        folders: the folder outputs.
        inputs: the folders the run reads.
        input_files: single input files (the configuration).
        cache: the cache folder the run reads, if any.
    """
    pairs = list(files.items()) if isinstance(files, Mapping) else list(files)
    given = [(option, Path(path)) for option, path in pairs if path is not None]
    trees = [f for f in inputs if f.tree]
    _check_trees([], folders, trees)  # a folder output inside a tree: said before its files are
    folder_inputs = [InputFolder(f.role, _real(f.path)) for f in inputs]
    file_inputs = [InputFile(f.role, _real(f.path)) for f in input_files]
    file_inputs += [InputFile(f.role, f.path) for f in named_inputs()]  # recorded as real paths
    cache_real = _real(cache) if cache is not None else None

    seen: dict[Path, str] = {}
    for option, path in given:
        real = _real(path)
        if real in seen:
            raise InputError(f"{seen[real]} and {option} name the same file {path}; give each its own file name")
        seen[real] = option
        for source in file_inputs:
            if real == source.path or _same_file(real, source.path):
                raise InputError(f"{option} {path} is {source.role} this run reads; writing it would replace it")
        # os.replace writes the name itself (a link there is replaced, not followed): its folder counts, as does the
        # file a link resolves to
        written = _real(path.parent) / path.name
        for folder in folder_inputs:
            if written.parent == folder.path and is_read_by_a_reader(written.name) and written != real:
                raise InputError(
                    f"{option} {path} is a file of {folder.role} {folder.path} that this run reads (a link to "
                    f"{real}); writing it would replace it: give a file name outside that folder"
                )
            if real.parent == folder.path and is_read_by_a_reader(real.name):
                if real.exists():
                    raise InputError(
                        f"{option} {path} is a file of {folder.role} {folder.path} that this run reads; writing it "
                        "would replace it: give a file name outside that folder"
                    )
                raise InputError(
                    f"{option} {path}: a file named {real.name} in {folder.role} {folder.path} would be read as an "
                    "input by the next run's pairing (some reader of the package takes that name); give a file name "
                    "outside that folder (a .json or .csv name there is fine)"
                )
            link = _linked_input_in(real, folder) if real.exists() else None
            if link is not None:
                raise InputError(
                    f"{option} {path} is the same file as {link} of {folder.role} (a hard or symbolic link); writing "
                    "it would replace that input"
                )
        if cache_real is not None and (real.parent == cache_real or _inside(real, cache_real)):
            raise InputError(
                f"{option} {path} is inside the cache folder {cache_real}, whose entries this run reads; give a file "
                "name outside it"
            )
        for out in folders:
            root = _real(out.path)
            if (real.parent == root and real.name in out.files) or (
                _inside(real, root) and real.relative_to(root).parts[0] in out.folders
            ):
                raise InputError(f"{option} {path} is a file that {out.option} {out.path} writes; give another name")

    _check_trees(given, [], trees)  # after the files' own checks, whose messages say more where both apply
    for out in folders:
        _check_folder_output(out, folder_inputs, file_inputs)
    for out in folders:  # a folder output inside what another folder output owns would be replaced by it
        root = _real(out.path)
        for other in folders:
            base = _real(other.path)
            if other is out or not _inside(root, base):
                continue
            first = root.relative_to(base).parts[0]
            if first in other.folders or first in other.files or any(first.startswith(p) for p in other.prefixes):
                raise InputError(
                    f"{out.option} {out.path} is inside {base / first}, which {other.option} {other.path} writes and "
                    "replaces; choose another folder"
                )


def check_outputs_are_not_folders(files: Mapping[str, Path | None], folders: Mapping[str, Path | None]) -> None:
    """Raise :class:`InputError` if a file output (``option -> path``) names a folder the run writes into
    (``option -> folder``, e.g. ``--out-dir``), which may not exist yet: checked before anything is written, so that
    a run never writes the folder's files and then fails on the file."""
    roots = {_real(Path(path)): option for option, path in folders.items() if path is not None}
    for option, path in files.items():
        if path is not None and _real(Path(path)) in roots:
            folder_option = roots[_real(Path(path))]
            raise InputError(f"{option} {path} is the folder {folder_option} writes into; give a file name")


def report_folder(path: Path, option: str = "--output", *, default_cache: bool = False) -> FolderOutput:
    """The :class:`FolderOutput` of a report folder (``cache/`` included when the cache is the default one)."""
    owned = REPORT_FOLDERS | ({"cache"} if default_cache else set())
    return FolderOutput(option, path, REPORT_FILES, frozenset(owned), (REPORT_TEMP_PREFIX,))


def check_appended_file(path: Path, option: str, accepts: Callable[[str], bool], what: str) -> None:
    """An output that a run appends to (never replaces), such as a MATLAB toolbox's result lines: the file must be
    new, empty, or hold only lines that ``accepts`` (blank lines aside), so that a mistyped path never gets a line
    appended to another file; ``what`` names the lines in the error."""
    if not path.is_file() or path.stat().st_size == 0:
        return
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (UnicodeDecodeError, OSError):
        lines = ["\0"]  # not text: never a file of such lines
    if not all(accepts(line) for line in lines if line.strip()):
        raise InputError(
            f"{option} {path}: the file exists and holds other lines than {what}: give a new file or one such file"
        )


def _check_trees(
    given: Sequence[tuple[str, Path]], folders: Sequence[FolderOutput], trees: Sequence[InputFolder]
) -> None:
    """No output inside a tree input, and no folder output that writes ``anywhere`` in it holding one (another may: a
    report folder above its inputs, whose own names are checked against the inputs by :func:`_check_folder_output`).
    A file counts where its name is written (``os.replace`` replaces a link there, it never writes through it)."""
    roots = [(tree, _real(tree.path)) for tree in trees]
    outputs = [(out.option, Path(out.path), _real(out.path), out.anywhere, "folder") for out in folders]
    outputs += [(option, path, _real(path.parent) / path.name, False, "path") for option, path in given]
    for option, path, real, anywhere, what in outputs:
        for tree, root in roots:
            if real.is_relative_to(root):
                where = "is" if real == root else "is inside"
                raise InputError(
                    f"{option} {path} {where} {tree.role} {tree.path}, which this run reads (every file of its "
                    f"tree); give a {what} outside it"
                )
            if anywhere and root.is_relative_to(real):
                raise InputError(f"{option} {path} holds {tree.role} {tree.path}; give a folder of its own")


def probe_outputs(files: Mapping[str, Path | None], folders: Mapping[str, Path | None] | None = None) -> None:
    """The checks that write, once an output is known not to be an input's (call it after the checks against the
    inputs, so that a refused output never touches an input's folder): each file's folder takes a new file, and the
    parent of each folder the run will create (``folders``, option -> folder; one that exists is checked by its
    files) takes a new entry, so that it fails now, not at ``mkdir`` after the evaluation
    (:func:`~.files.probe_folder`: a file created and removed; None: not asked for)."""
    for option, path in files.items():
        probe_folder(path, option)
    for option, folder in (folders or {}).items():
        if folder is not None and not folder.exists():
            probe_folder(folder, option)


def checked_outputs(
    outputs: Mapping[str, str | Path | None],
    *,
    inputs: Sequence[InputFolder] = (),
    folders: Mapping[str, Path | None] | None = None,
    folder_files: Mapping[str, Path] | None = None,
    appended: Mapping[str, tuple[Callable[[str], bool], str]] | None = None,
    folder_outputs: Sequence[FolderOutput] = (),
) -> dict[str, Path | None]:
    """Every file output of a run checked at once, before anything is read, and returned as paths (None: not asked
    for): each writable (:func:`~.files.check_output`; ``folder_files`` too), none naming a folder the run writes
    into (``folders``: option -> folder, :func:`check_outputs_are_not_folders`), none an input or a file
    ``folder_files`` (option -> path, e.g. the files of ``--out-dir``) would replace (:func:`check_outputs`), a table
    option a table it can merge into (:func:`~.tables.check_csv_outputs`), and a file appended to (``appended``:
    option -> (line test, what the lines are)) new or of such lines (:func:`check_appended_file`); ``folder_outputs``:
    the folders the run writes whole (an HTML report), none an input nor holding one in a file or folder it writes
    (:func:`check_outputs`).

    Example:
        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp())
        >>> checked_outputs({"--json": str(out / "r.json"), "--csv": None})["--csv"] is None
        True
    """
    files = {option: check_output(value, option, probe=False) for option, value in outputs.items()}
    # (a folder the run creates holds nothing to check yet)
    inside = {option: path for option, path in (folder_files or {}).items() if path.parent.is_dir()}
    for option, path in inside.items():
        check_output(path, option, probe=False)
    if folders:
        check_outputs_are_not_folders(files, folders)
    check_outputs({**files, **(folder_files or {})}, inputs=inputs, folders=folder_outputs)
    probe_outputs({**files, **inside}, folders)
    for option, (accepts, what) in (appended or {}).items():
        if (appended_to := files.get(option)) is not None:
            check_appended_file(appended_to, option, accepts, what)
    check_csv_outputs(files)
    return files
