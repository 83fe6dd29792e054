"""A set of outputs moves into place as one step (``reports.files``): an interruption leaves the old set or the new.

``signals_held`` holds Ctrl-C and SIGTERM back for the few renames; the tests send the signal from inside the moves
(a patched ``os.replace`` raises it at the first rename), which is where a real one would do harm.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from segmetrics_torch.errors import InputError
from segmetrics_torch.reports import files, tables
from segmetrics_torch.reports.html_report import ASSETS, MARKER, TEMP_PREFIX
from segmetrics_torch.synthetic import write_foreground_dataset
from tests.conftest import signal_at_first_replace

from .html_run import two_image_html, two_image_report


def test_a_signal_waits_for_the_block_then_acts(monkeypatch: pytest.MonkeyPatch) -> None:
    done = []
    with pytest.raises(KeyboardInterrupt):
        with files.signals_held():
            signal.raise_signal(signal.SIGINT)
            done.append("after the signal")  # still runs: the signal waits for the block's end
    assert done == ["after the signal"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler is back


def test_without_a_signal_nothing_changes() -> None:
    before = {s: signal.getsignal(s) for s in files.HELD_SIGNALS}
    with files.signals_held():
        pass
    assert {s: signal.getsignal(s) for s in files.HELD_SIGNALS} == before


def test_sigterm_with_its_default_action_ends_the_process_after_the_block(tmp_path: Path) -> None:
    """SIGTERM's default action (no handler) still ends the process, once the renames are done."""
    script = textwrap.dedent(
        f"""
        import signal
        from pathlib import Path
        from segmetrics_torch.reports.files import signals_held
        with signals_held():
            signal.raise_signal(signal.SIGTERM)
            Path({str(tmp_path / "moved")!r}).write_text("done")
        print("not reached")
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGTERM, proc.stderr
    assert (tmp_path / "moved").read_text() == "done"
    assert "not reached" not in proc.stdout


def test_write_together_moves_every_file_before_an_interruption(monkeypatch, tmp_path: Path) -> None:
    for name in ("a.json", "b.csv"):
        (tmp_path / name).write_text("old")
    moved = signal_at_first_replace(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        files.write_together([(tmp_path / n, lambda p: p.write_text("new")) for n in ("a.json", "b.csv")])
    assert len(moved) == 2
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == {"a.json": "new", "b.csv": "new"}


def test_write_together_touches_nothing_when_a_file_fails(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("old")

    def fail(path: Path) -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        files.write_together([(tmp_path / "a.json", lambda p: p.write_text("new")), (tmp_path / "b.csv", fail)])
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == {"a.json": "old"}  # no temporary file left


def test_a_runs_json_and_table_are_never_a_mix(monkeypatch, tmp_path: Path) -> None:
    row = {"method": "m", "dataset": "d", "num_images": 2, "mae": 0.1}
    keys = ("method", "dataset")
    tables.write_run_files((tmp_path / "r.json", {"mae": 0.1}), [(tmp_path / "t.csv", [row], keys, "--csv")])
    signal_at_first_replace(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        new = [(tmp_path / "t.csv", [row | {"mae": 0.2}], keys, "--csv")]
        tables.write_run_files((tmp_path / "r.json", {"mae": 0.2}), new)
    assert '"mae": 0.2' in (tmp_path / "r.json").read_text()
    assert "0.2" in (tmp_path / "t.csv").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "t.csv"]


def test_a_reports_json_and_table_are_never_a_mix(monkeypatch, tmp_path: Path, capsys) -> None:
    """The report form's --json and --csv (written one after the other: a Ctrl-C between them left the new JSON
    beside the previous run's table)."""
    from segmetrics_torch.app.cli import main

    write_foreground_dataset(tmp_path, n=2, size=(32, 32), methods=["good"])
    pred, gt = tmp_path / "good", tmp_path / "gt"

    def run(method: str) -> int:
        argv = ["evaluate", "--gt", str(gt), "--pred", f"{method}={pred}", "--output", str(tmp_path / "R")]
        argv += [
            "--figures",
            "none",
            "--no-cache",
            "--json",
            str(tmp_path / "r.json"),
            "--csv",
            str(tmp_path / "r.csv"),
        ]
        return main(argv)

    assert run("OLD") == 0
    signal_at_first_replace(monkeypatch, onto="r.json")
    assert run("NEW") == 130
    capsys.readouterr()
    assert "NEW" in (tmp_path / "r.json").read_text() and "NEW" in (tmp_path / "r.csv").read_text()


def test_an_interrupted_html_report_is_the_old_or_the_new_never_a_page_without_assets(monkeypatch, tmp_path):
    """The previous report's assets/ was removed before the new one moved in: a Ctrl-C between the two left a page
    without its thumbnails (and after it, the old page beside the new thumbnails)."""
    write_foreground_dataset(tmp_path, n=2, size=(32, 32), methods=["good"])
    out = tmp_path / "html"
    two_image_report(tmp_path, out, 0.5)
    signal_at_first_replace(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        two_image_report(tmp_path, out, 0.25)
    assert "run 0.25" in (out / "index.html").read_text(encoding="utf-8")  # the new page ...
    assets = out / ASSETS
    assert (assets / MARKER).is_file() and any((assets / "thumbs").iterdir())  # ... with its assets
    assert not list(out.glob(f"{TEMP_PREFIX}*"))  # the previous assets, moved aside, are gone too
    assert sorted(p.name for p in out.iterdir()) == [ASSETS, "index.html"]


def test_a_folder_spelt_two_ways_is_locked_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """--html DIR and --csv LINK/t.csv, LINK a link to DIR (a home folder reached through a link, on a cluster):
    the folder was flock-ed through two descriptors by one process, and the second waited for the first forever."""
    if files.fcntl is None:
        pytest.skip("no flock here")
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    locked = []
    monkeypatch.setattr(files.fcntl, "flock", lambda handle, how: locked.append(handle))
    with files.folders_locked([tmp_path / "real" / "index.html", tmp_path / "link" / "t.csv"]):
        pass
    assert len(locked) == 1


def test_a_folder_made_for_a_set_that_fails_is_removed(tmp_path: Path) -> None:
    """A report folder (a staged output) is made to be locked; a set that fails leaves no new folder behind."""
    write_foreground_dataset(tmp_path, n=2, size=(32, 32), methods=["good"])
    report = two_image_html(tmp_path, tmp_path / "new" / "html")

    def full(path: Path) -> None:
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        files.write_together([(tmp_path / "r.json", full), report], locked=True)
    with pytest.raises(OSError, match="No space left"):
        files.write_together([report, (tmp_path / "r.json", full)], locked=True)  # after the page was drawn
    assert not (tmp_path / "new").exists()


def test_a_file_system_without_locks_is_written_unlocked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """flock failing with ENOLCK (a network mount without locks) ended a --csv merge with a traceback."""
    import errno

    if files.fcntl is None:
        pytest.skip("no flock here")

    def no_locks(handle: int, how: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(files.fcntl, "flock", no_locks)
    rows = [{"method": "m", "dataset": "d", "num_images": 2, "mae": 0.1}]
    with pytest.warns(RuntimeWarning, match="cannot lock the folder .*No locks available.*written unlocked"):
        written = tables.write_run_files(None, [(tmp_path / "t.csv", rows, ("method", "dataset"), "--csv")])
    assert written == ["wrote"]


def test_a_failed_report_removes_no_folder_that_holds_another_file(tmp_path: Path) -> None:
    """A report folder that did not exist when the report was made, and that holds a file by the time its set fails
    (another run's report, a user's copy), was removed whole by the failed report."""
    from segmetrics_torch.reports.report import ReportFolder

    def fail(path: Path) -> None:
        raise OSError(28, "No space left on device")

    report = ReportFolder(tmp_path / "report", {"tables.md": fail})
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "mine.txt").write_text("mine")
    with pytest.raises(OSError, match="No space left"):
        files.write_together([report], locked=True)
    assert sorted(p.name for p in (tmp_path / "report").iterdir()) == ["mine.txt"]


def test_a_page_put_where_the_report_goes_after_it_was_made_is_kept(tmp_path: Path) -> None:
    """The HTML folder was checked when the report was made, not when it was written: a page of the user's put there
    in between (while a run evaluated, minutes) was replaced by the report."""
    write_foreground_dataset(tmp_path, n=2, size=(32, 32), methods=["good"])
    out = tmp_path / "html"
    report = two_image_html(tmp_path, out)
    out.mkdir()
    (out / "index.html").write_text("<p>my page</p>")
    with pytest.raises(InputError, match="not written by this report"):
        files.write_together([(tmp_path / "r.json", lambda p: p.write_text("{}")), report], locked=True)
    assert (out / "index.html").read_text() == "<p>my page</p>" and sorted(p.name for p in out.iterdir()) == [
        "index.html"
    ]
    assert not (tmp_path / "r.json").exists()  # nothing of the set was written


def test_a_users_file_put_in_the_report_folder_after_it_was_made_is_kept(tmp_path: Path) -> None:
    """The report folder was checked when the report was made: a results.json of the user's put there before the
    write was replaced."""
    from segmetrics_torch.reports.report import ReportFolder

    report = ReportFolder(tmp_path / "report", {"results.json": lambda p: p.write_text("{}")})
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "results.json").write_text("mine")
    with pytest.raises(InputError, match="no report wrote"):
        files.write_together([report], locked=True)
    assert (tmp_path / "report" / "results.json").read_text() == "mine"


def test_a_refused_output_makes_no_folder(tmp_path: Path) -> None:
    """Each staged output's own check runs before write_together makes any folder."""

    staged = []

    class Refused:
        target = tmp_path / "new" / "index.html"

        def check(self) -> None:
            raise InputError("refused")

        def stage(self) -> None:
            staged.append(self)

        def commit(self) -> None: ...

        def discard(self) -> None: ...

    with pytest.raises(InputError, match="refused"):
        files.write_together([Refused()], locked=True)
    assert not (tmp_path / "new").exists() and staged == []


def test_a_page_put_where_the_report_goes_while_the_set_is_made_is_kept(tmp_path: Path) -> None:
    """Checked only before the set was made, a page of the user's (or another run's, which had held the folder's
    lock) that arrived while the set was made (a page is drawn for seconds) was moved aside and removed."""
    write_foreground_dataset(tmp_path, n=2, size=(32, 32), methods=["good"])
    out = tmp_path / "html"
    report = two_image_html(tmp_path, out)

    def json_meanwhile(path: Path) -> None:
        path.write_text("{}")
        (out / "index.html").write_text("<p>my page</p>")  # arrives while the set is made

    with pytest.raises(InputError, match="not written by this report"):
        files.write_together([report, (tmp_path / "r.json", json_meanwhile)], locked=True)
    assert (out / "index.html").read_text() == "<p>my page</p>"
    assert sorted(p.name for p in out.iterdir()) == ["index.html"]  # the page drawn for the set is removed
    assert not (tmp_path / "r.json").exists()


def test_a_folder_removed_while_its_lock_was_awaited_is_made_and_locked_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Run A made a new folder, run B waited for its lock, A failed and removed the folder (empty again): B went on
    holding the lock of a removed folder and failed writing into it (FileNotFoundError)."""
    import threading

    if files.fcntl is None:
        pytest.skip("no flock here")
    folder = tmp_path / "new"
    folder.mkdir()
    held, b_locks, done = threading.Event(), threading.Event(), []
    flock = files.fcntl.flock

    def announced_flock(handle: int, how: int) -> None:
        if threading.current_thread().name == "b":
            b_locks.set()  # B has the folder open and asks for its lock: A removes the folder now
        flock(handle, how)

    monkeypatch.setattr(files.fcntl, "flock", announced_flock)

    def run_a() -> None:
        with files.folders_locked([folder / "a.txt"]):
            held.set()
            b_locks.wait(timeout=60)
            folder.rmdir()

    def run_b() -> None:
        held.wait(timeout=60)
        files.write_together([(folder / "b.txt", lambda p: p.write_text("b"))], locked=True)
        done.append((folder / "b.txt").read_text())

    a, b = threading.Thread(target=run_a), threading.Thread(target=run_b, name="b")
    a.start()
    b.start()
    a.join()
    b.join()
    assert done == ["b"]


def test_a_single_file_into_a_missing_folder_is_an_error_and_makes_no_folder(tmp_path: Path) -> None:
    """A set of a run's outputs makes its folders; one file written on its own (``write_json``, a figure) into a
    folder that does not exist is an error, as ``open`` makes it: a mistyped path makes no folders."""
    with pytest.raises(FileNotFoundError, match="does not exist"):
        tables.write_json(tmp_path / "typo" / "deeper" / "r.json", {"mae": 0.1})
    assert list(tmp_path.iterdir()) == []
    files.write_together([(tmp_path / "new" / "r.json", lambda p: p.write_text("{}"))])
    assert (tmp_path / "new" / "r.json").read_text() == "{}"
