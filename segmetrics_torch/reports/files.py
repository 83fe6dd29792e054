"""Output files of the command: checked before any measure runs, each written atomically at the end.

A run that fails must not leave a half-written or a stale-but-fresh-looking file behind, and a run must not spend an
hour computing to find that ``--json`` points into a read-only folder. So:

* :func:`check_output` runs before the evaluation for every output the user named: the path is not a folder, its
  folder exists, and a file can be created there (a real probe: permission bits do not tell the whole story, e.g. a
  read-only mount or an ACL);
* :func:`write_atomically` writes through a temporary file in the same folder and ``os.replace`` s it onto the target:
  readers see the old file or the new one, never a part; a failure leaves the old file as it was. The file gets the
  mode the user's umask gives a new file (:func:`default_file_mode`), not ``mkstemp``'s 0600.
  :func:`write_together` does so for a set of outputs (a run's ``--json``, CSV tables, figures and HTML report):
  every output is made first, then all are moved into place while :func:`signals_held` holds Ctrl-C and ``SIGTERM``
  back, so that an interruption or a failure leaves the old set or the new one, never a mix. An output that is more
  than one file (the HTML report: a page and its ``assets/`` folder) joins the set as a :class:`StagedOutput`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import signal
import stat
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..errors import InputError

try:
    import fcntl  # POSIX: the folder locks of folders_locked
except ImportError:  # Windows: no flock, nothing is locked
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "AppendedText",
    "Output",
    "StagedOutput",
    "check_output",
    "default_file_mode",
    "default_folder_mode",
    "folders_locked",
    "keep_mode",
    "make_temporary_file",
    "probe_folder",
    "remove_stale_folders",
    "remove_tree",
    "signals_held",
    "slug",
    "write_atomically",
    "write_together",
]


def _umask() -> int:
    """The process's umask, read from ``/proc/self/status`` where it exists (no change of the process's umask, which
    is global to its threads), else set and restored at once."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def default_file_mode() -> int:
    """The mode a new file gets under the process's umask (``0o666 & ~umask``; 0o644 under the usual 022).

    ``tempfile.mkstemp`` creates its files 0600 whatever the umask; the command's outputs are written through such
    files and moved into place, so they are given this mode first: co-authors on a shared server read them as they
    read any file the user makes. A file that replaces an existing one keeps that file's mode instead
    (:func:`write_together`: a results file the user made private stays private).
    """
    return 0o666 & ~_umask()


def default_folder_mode() -> int:
    """The mode a new folder gets under the process's umask (``0o777 & ~umask``; 0o755 under 022), for a folder made
    by ``tempfile.mkdtemp`` (0700 whatever the umask) and then moved into place."""
    return 0o777 & ~_umask()


def make_temporary_file(folder: str | Path, prefix: str, suffix: str = "") -> tuple[int, str]:
    """``tempfile.mkstemp`` in ``folder``, the file given :func:`default_file_mode`: ``(descriptor, path)``."""
    handle, temp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=folder)
    try:
        os.fchmod(handle, default_file_mode())
    except BaseException:
        os.close(handle)
        os.unlink(temp)
        raise
    return handle, temp


def remove_stale_folders(folder: Path, prefix: str) -> None:
    """Remove the temporary entries a killed run (SIGKILL, power loss) left in ``folder``: the sub-folders and files
    whose name starts with ``prefix``, a writer's own (a link of that name is left alone). Call it where no other run
    writes into ``folder`` at the same time (one run per output folder, or under :func:`folders_locked`)."""
    for stale in folder.glob(f"{prefix}*"):
        if stale.is_symlink():
            continue
        if stale.is_dir():
            remove_tree(stale)
        elif stale.is_file():
            with contextlib.suppress(OSError):
                stale.unlink()


def remove_tree(path: str | Path) -> None:
    """Remove a folder of ours and everything in it, errors ignored (as ``shutil.rmtree(ignore_errors=True)``),
    read-only sub-folders included: a previous report's ``assets/`` that the user made read-only (0555), whose mode
    the new one keeps, is emptied after its write bit is set (without it, removing its entries fails for anyone but
    root)."""

    def writable_then_again(function: Callable[..., object], name: str, *_: object) -> None:
        with contextlib.suppress(OSError):
            parent = os.path.dirname(name)
            os.chmod(parent, stat.S_IMODE(os.lstat(parent).st_mode) | stat.S_IWUSR | stat.S_IXUSR)
            function(name)

    if not os.path.isdir(path) or os.path.islink(path):
        return
    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=writable_then_again)
    else:  # (onexc is new in 3.12; onerror is deprecated there)
        shutil.rmtree(path, onerror=writable_then_again)


#: folders of devices and of the process's own streams, never an output's place (``/dev/shm``, a plain file system
#: in memory, excepted)
SYSTEM_FOLDERS = ("/dev/", "/proc/", "/sys/")


def check_output(path: str | Path | None, option: str, *, probe: bool = True) -> Path | None:
    """``path`` as a Path once it is known to be writable, or ``None`` when not given.

    ``probe=False`` leaves out the one check that writes: a file created and removed in the output's folder to learn
    that the folder takes one (:func:`probe_folder`). A caller that checks the paths against its inputs first passes
    it, and probes after that check, so that a refused output never touches an input's folder.

    Raises:
        InputError: naming ``option`` and what is wrong: a folder given as a file name, a pipe or a device
            (``/dev/stdout``: the output is written whole into a new file moved onto the name, which would replace
            it), a missing folder, a folder where no file can be created, a read-only file.
    """
    if path is None:
        return None
    out = Path(path)
    if out.is_dir():
        raise InputError(f"{option} {out} is a directory; give a file name")
    # a pipe, a device or a stream of the process (/dev/stdout, /dev/null, /proc/self/fd/1, even when it leads to a
    # regular file): a file written whole and moved onto the name would replace the system's own
    places = [str(p) for p in (out.absolute(), out.resolve())]
    system = any(p.startswith(SYSTEM_FOLDERS) and not p.startswith("/dev/shm/") for p in places)
    if system or (out.exists() and not out.is_file()):
        raise InputError(f"{option} {out} is not a regular file (a pipe, a device or a socket); give a file name")
    if not out.parent.is_dir():
        what = "is not a folder" if out.parent.exists() else "does not exist"
        raise InputError(f"{option} {out}: the folder {out.parent} {what}")
    # a file without any write permission is read-only on purpose: refused even where the process could replace it
    # (root, or the owner of the folder: os.replace asks nothing of the file itself)
    if out.exists() and (not os.access(out, os.W_OK) or not out.stat().st_mode & 0o222):
        raise InputError(f"{option} {out}: the file exists and is not writable")
    if probe:
        probe_folder(out, option)
    return out


def probe_folder(path: Path | None, option: str) -> None:
    """Create and remove a file beside ``path`` (nothing when None): the folder takes a new file (permissions, a
    read-only mount, a full quota) where asking ``os.access`` could say yes.

    Raises:
        InputError: naming ``option``: no file can be created in ``path``'s folder.
    """
    if path is None:
        return
    with signals_held():  # a Ctrl-C between the two calls must not leave the probe file behind
        try:
            handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe", dir=path.parent)
        except OSError as error:
            why = error.strerror or error
            raise InputError(f"{option} {path}: cannot create a file in {path.parent} ({why})") from None
        os.close(handle)
        os.unlink(name)


def keep_mode(temp: str | Path, target: str | Path) -> None:
    """Give ``temp``, about to be moved onto ``target``, the mode of the file or folder ``target`` names (a file the
    user made private stays private, one they opened to a group stays open); nothing where ``target`` does not exist
    or is a link (the new entry keeps the umask's mode, :func:`default_file_mode`), or is of another kind."""
    with contextlib.suppress(OSError):
        old, new = os.lstat(target), os.lstat(temp)
        if stat.S_IFMT(old.st_mode) == stat.S_IFMT(new.st_mode) and not stat.S_ISLNK(old.st_mode):
            os.chmod(temp, stat.S_IMODE(old.st_mode))


def write_atomically(path: str | Path, write: Callable[[Path], object]) -> None:
    """Call ``write(temporary_path)`` then move the temporary file onto ``path`` (same folder, ``os.replace``).

    The temporary file keeps ``path``'s suffix (writers such as matplotlib choose the format from it). A folder that
    does not exist is an error (``FileNotFoundError``, as ``open`` raises), not made: a mistyped path makes no
    folders (a set of a run's outputs, :func:`write_together`, makes its outputs' folders).
    """
    folder = Path(path).parent
    if not folder.is_dir():
        raise FileNotFoundError(errno.ENOENT, f"the folder {folder} does not exist", str(path))
    write_together([(path, write)])


@runtime_checkable
class StagedOutput(Protocol):
    """An output that :func:`write_together` makes beside its target and moves into place with a run's other files:
    one made of several files (:class:`~segmetrics_torch.reports.html_report.HtmlReport`, a page and its folder).

    ``target``: the path it replaces; its folder is made when missing and locked with the set's other folders.
    ``check()`` (optional): the output's own checks of where it goes (a folder of the user's it must not replace, an
    input folder), called for every output before any folder is made or anything staged, so that a refused output
    changes nothing, and again once every output is staged, just before the moves. ``stage()``: make the output
    under temporary names beside ``target`` (it may raise: nothing of the user's has changed then). ``commit()``:
    move it into place; called after every output of the set was staged, while signals are held; an output with
    ``rolls_back = True`` (it puts its previous entries back when a rename fails) commits before the others.
    ``discard()``: remove what ``stage`` made, when the set fails or is interrupted before ``commit`` (it is called
    for every output whose ``stage`` began, and does nothing once ``commit`` has run).
    """

    @property
    def target(self) -> Path: ...

    def stage(self) -> None: ...

    def commit(self) -> None: ...

    def discard(self) -> None: ...


class _StagedFile:
    """One file of a set: ``write(temporary_path)`` beside ``target``, then ``os.replace`` onto it."""

    def __init__(self, target: str | Path, write: Callable[[Path], object]) -> None:
        self.target, self.write, self.temp = Path(target), write, ""

    def stage(self) -> None:
        target = self.target
        handle, self.temp = make_temporary_file(target.parent, f".{target.stem}.", f".tmp{target.suffix}")
        os.close(handle)
        self.write(Path(self.temp))
        keep_mode(self.temp, self.target)

    def commit(self) -> None:
        os.replace(self.temp, self.target)
        self.temp = ""

    def discard(self) -> None:
        if self.temp:
            with contextlib.suppress(OSError):
                os.unlink(self.temp)


class AppendedText:
    """Text added at the end of a file, as ``open(path, "a")`` adds it (a MATLAB toolbox's ``fopen(..., 'a')`` result
    lines), as one output of a set (:class:`StagedOutput`): the file is opened when the set is staged (so that a file
    that cannot take the text fails before anything moves; a file that this opening created is removed again if the
    set fails) and written when it moves in, after every output that can be undone. The file is never rewritten: it
    keeps its inode, its links (a symbolic link is followed, a hard link's other names see the text), its owner and
    its mode, and runs appending at once each keep their text (``O_APPEND``). A last line without its newline (as an
    editor saves it) gets one first, so the text never joins it."""

    def __init__(self, target: str | Path, text: str) -> None:
        self.target, self.data = Path(target), text.encode("utf-8")
        self._handle: int | None = None
        self._created = False

    def stage(self) -> None:
        self._created = not self.target.exists()
        self._handle = os.open(self.target, os.O_RDWR | os.O_APPEND | os.O_CREAT, default_file_mode())

    def commit(self) -> None:
        if self._handle is None:
            return
        handle, self._handle = self._handle, None
        try:
            size = os.fstat(handle).st_size
            ended = size == 0 or os.pread(handle, 1, size - 1) == b"\n"
            data = self.data if ended else b"\n" + self.data
            while data:
                data = data[os.write(handle, data) :]
        finally:
            os.close(handle)

    def discard(self) -> None:
        if self._handle is not None:
            handle, self._handle = self._handle, None
            os.close(handle)
            if self._created:
                with contextlib.suppress(OSError):
                    if self.target.stat().st_size == 0:
                        self.target.unlink()


#: an output of :func:`write_together`: ``(path, write)`` (``write(temporary_path)`` makes the file) or a staged one
Output = tuple[str | Path, Callable[[Path], object]] | StagedOutput


def write_together(files: Sequence[Output], *, locked: bool = False) -> None:
    """Write a set of outputs, each file as :func:`write_atomically` does, and move them into place together.

    ``files``: ``(path, write)`` pairs and :class:`StagedOutput` s (a report folder). Each staged output's own
    ``check()`` runs before anything is made, and again just before the moves (under the folders' lock when
    ``locked``), so that what arrived where it goes while the set was made (a user's page, another run's report) is
    refused, not replaced. A target's folder that does not exist is made (and removed again, when still empty, if
    the set is not written). Every output is made first, each under a temporary name beside its target; a failure or
    an interruption there leaves every target as it was (what was made is removed). Then the outputs are moved into
    place while :func:`signals_held` holds Ctrl-C and ``SIGTERM`` back: an interruption leaves the old set or the
    new one, never a run's ``--json`` beside the previous run's table or page. ``locked``: the whole write holds the
    lock of the outputs' folders (:func:`folders_locked`), for writers that read the file they replace (a table that
    rows are merged into: a run merging at the same time waits, and both runs' rows are kept) and for report folders
    (one run at a time cleans and fills one).

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> write_together([(folder / name, lambda p: p.write_text("text")) for name in ("a.txt", "new/b.txt")])
        >>> sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))
        ['a.txt', 'new', 'new/b.txt']
    """
    outputs = [f if isinstance(f, StagedOutput) else _StagedFile(*f) for f in files]
    checks = [check for output in outputs if (check := getattr(output, "check", None)) is not None]
    for check in checks:  # a refused output makes no folder and stages nothing
        check()
    made: list[Path] = []  # the folders made here, removed again when the set is not written
    try:
        for output in outputs:  # a folder that does not exist yet (a report's, --out-dir's), made to be locked
            folder = output.target.parent
            made += reversed([p for p in (folder, *folder.parents) if not p.exists()])
            folder.mkdir(parents=True, exist_ok=True)
        with folders_locked([output.target for output in outputs]) if locked else contextlib.nullcontext():
            _write_staged(outputs, checks)
    except BaseException:
        with signals_held():
            for folder in reversed(made):
                with contextlib.suppress(OSError):
                    folder.rmdir()  # empty again once the outputs' temporary entries are gone; else it stays
        raise


def _commit_order(output: StagedOutput) -> int:
    """Outputs that put their previous entries back when a rename fails first, text appended to a file (which cannot
    be taken back) last."""
    return 0 if getattr(output, "rolls_back", False) else 2 if isinstance(output, AppendedText) else 1


def _write_staged(outputs: Sequence[StagedOutput], checks: Sequence[Callable[[], object]]) -> None:
    begun: list[StagedOutput] = []
    try:
        for output in outputs:
            begun.append(output)
            output.stage()
        # again, as the targets are now: drawing a page takes seconds, a lock may have been waited for
        for check in checks:
            check()
        with signals_held():
            # the outputs that put their previous entries back when a rename fails first, so that then no other output
            # of the set has moved yet (a failing rename elsewhere, the disk failing, is the rare mix left); appended
            # text last
            for output in sorted(outputs, key=_commit_order):
                output.commit()
    except BaseException:
        with signals_held():  # the clean-up is not cut short by a second Ctrl-C
            for output in begun:
                output.discard()  # an output already moved into place has nothing left to remove
        raise


@contextlib.contextmanager
def folders_locked(paths: Iterable[str | Path]) -> Iterator[None]:
    """Hold an exclusive lock on the folder of each of ``paths`` while the block runs (``flock`` on the folder itself,
    so that no lock file is left beside the user's files; folders in sorted order, so that two runs cannot wait for
    each other): for a table that is read, merged and replaced, so that runs writing into one table at the same time
    (several methods evaluated in parallel into one ``--csv``) each add their rows, the later one waiting for the
    earlier (without it, both read the old table and the last to finish dropped the other's rows). Where ``flock`` does
    not exist (Windows), a folder cannot be opened or its file system takes no locks (``ENOLCK``: some network
    mounts; a ``RuntimeWarning`` says so), that folder is not locked.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> with folders_locked([folder / "table.csv"]):
        ...     (folder / "table.csv").write_text("method\\n")
        7
    """
    if fcntl is None:
        yield
        return
    handles = []
    try:
        # one lock per folder however it is spelt (a link to it, ..): flock on a second descriptor of a folder this
        # process holds would wait for itself
        for folder in sorted({os.path.realpath(os.path.dirname(os.path.abspath(p))) for p in paths}):
            handle = _lock_folder(folder)
            if handle is not None:
                handles.append(handle)
        yield
    finally:
        for handle in handles:
            os.close(handle)  # releases its lock


def _lock_folder(folder: str, attempts: int = 8) -> int | None:
    """A descriptor of ``folder`` holding its exclusive lock, or None where it cannot be opened. A folder removed or
    replaced while this run waited for its lock (a run that made it, and failed, removes it again when empty) is made
    again and locked anew, so that the lock held is the folder's that the outputs go into."""
    assert fcntl is not None  # (the caller checked)
    for _ in range(attempts):
        try:
            handle = os.open(folder, os.O_RDONLY)
        except OSError:
            return None  # (the output check has named an unusable folder already)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
        except OSError as error:  # a file system that takes no locks (ENOLCK: some network mounts)
            warnings.warn(
                f"cannot lock the folder {folder} ({error.strerror or error}): written unlocked, so runs writing "
                "into it at the same time (rows merged into one table) may lose each other's writes",
                RuntimeWarning,
                stacklevel=4,
            )
            return handle
        try:
            if os.path.samestat(os.fstat(handle), os.stat(folder)):
                return handle
        except OSError:
            pass  # removed meanwhile
        os.close(handle)
        with contextlib.suppress(OSError):
            os.makedirs(folder, exist_ok=True)
    return None


#: the signals :func:`signals_held` holds back: Ctrl-C, and what a job scheduler or ``kill`` sends
HELD_SIGNALS: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Hold Ctrl-C (``SIGINT``) and ``SIGTERM`` back while the block runs, then let them act as they would have.

    For the few renames that move a set of outputs into place: a signal that arrives meanwhile is noted, and when the
    block ends the previous handlers are restored and each noted signal is raised again, so that its handler runs
    (the command's: an interruption, exit 130) or its default action ends the process, a few system calls later than
    it came. Python runs signal handlers in the main thread only and lets only that thread install them: in another
    thread the block runs without the hold. A signal whose handler was not installed from Python is left alone.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list[int] = []

    def note(signum: int, frame: Any) -> None:
        noted.append(signum)

    previous: dict[int, Any] = {}
    try:
        for held in HELD_SIGNALS:
            if signal.getsignal(held) is not None:  # None: installed outside Python, which could not be restored
                previous[held] = signal.signal(held, note)
        yield
    finally:
        for held, handler in previous.items():
            signal.signal(held, handler)
        for came in dict.fromkeys(noted):
            signal.raise_signal(came)


def slug(name: str) -> str:
    """A file-name-safe form of a dataset / family name: letters and digits of any script (``str.isalnum``; every
    filesystem the command writes to takes them), ``.``, ``_`` and ``-`` are kept, every other run of characters
    (spaces, ``/``, punctuation) becomes one ``_``; a name with nothing left is ``unnamed``.

    Different names can still slug alike (``DUTS TE`` and ``DUTS_TE``): a report refuses such a pair of dataset names
    before it runs (:func:`~segmetrics_torch.app.report_config.config_from_mapping`), so that one file never holds
    another dataset's table.
    """
    kept = "".join(c if c.isalnum() or c in "._-" else " " for c in name)
    return re.sub(r" +", "_", kept).strip("_") or "unnamed"
