"""Never lose a file, fourth round: what an adversarial user found after the third (links, modes, two runs at once).

* a stale report file that the user replaced by a link: the next report removed the file the link points to (a
  user's figure, or a ground-truth image when the report folder holds the inputs);
* ``evaluate boundary --out-dir``: a link or a hard link at a BSR file name was written through (the user's file
  overwritten), and a read-only BSR file was found only after the run, with part of the set written;
* a private output (0600) replaced came back 0644; a read-only output (0444) was replaced by root;
* two runs merging their rows into one ``--csv`` at once: the later one dropped the earlier one's rows;
* ``--toolbox-lines`` into a file whose last line has no newline: the new line was glued onto it.

Each case is checked against the fix's absence (it failed before).
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import numpy as np
import pytest

from segmetrics_torch.app.folder_io import BSR_FILES, bsr_files
from segmetrics_torch.errors import InputError
from segmetrics_torch.reports import files, html_report, report, tables
from segmetrics_torch.reports.output_safety import checked_outputs
from segmetrics_torch.synthetic import write_foreground_dataset
from tests.conftest import signal_at_first_replace

from ..reports.html_run import two_image_report


def _write_report(folder: Path, names: list[str]) -> None:
    report.write_report_folder(folder, {name: (lambda p, n=name: p.write_text(n)) for name in names})


def test_a_stale_report_file_replaced_by_a_link_keeps_the_linked_file(tmp_path: Path) -> None:
    """The user's own figure beside the report's files, linked in under a stale figure's name (``ln -sf``)."""
    out = tmp_path / "rep"
    _write_report(out, ["results.json", "figures/a_pr.png", "figures/b_pr.png"])
    mine = out / "my_pr.png"
    mine.write_text("the user's figure")
    (out / "figures" / "b_pr.png").unlink()
    (out / "figures" / "b_pr.png").symlink_to("../my_pr.png")
    _write_report(out, ["results.json", "figures/a_pr.png"])
    assert mine.read_text() == "the user's figure"


def test_a_stale_report_file_behind_a_linked_folder_is_not_removed(tmp_path: Path) -> None:
    """The report folder holds the inputs (allowed: ``output: data``); a stale name now reaches a ground truth
    through a linked folder."""
    out = tmp_path / "data"
    _write_report(out, ["results.json", "csv/a.csv", "figures/b_pr.png"])
    gt = out / "gt"
    gt.mkdir()
    (gt / "b_pr.png").write_text("a ground-truth image")
    (out / "figures" / "b_pr.png").unlink()
    (out / "figures").rmdir()
    (out / "figures").symlink_to("gt", target_is_directory=True)
    _write_report(out, ["results.json", "csv/a.csv"])
    assert (gt / "b_pr.png").read_text() == "a ground-truth image"


def _bsr_summary() -> dict:
    curve = np.array([0.1, 0.5])
    per_image = {k: np.array([0.5]) for k in ("threshold", "recall", "precision", "f")}
    best = {"threshold": 0.5, "recall": 0.5, "precision": 0.5, "f": 0.5}
    curves = {"thresholds": curve, "recall": curve, "precision": curve, "f": curve}
    return {"ods": best, "ois": best, "ap": 0.4, **curves, "per_image": per_image}


@pytest.mark.parametrize("link", ["symbolic", "hard"])
def test_bsr_files_replace_a_link_never_write_through_it(tmp_path: Path, link: str) -> None:
    out, mine = tmp_path / "od", tmp_path / "precious.txt"
    out.mkdir()
    mine.write_text("the user's notes")
    if link == "symbolic":
        (out / "eval_bdry.txt").symlink_to(mine)
    else:
        os.link(mine, out / "eval_bdry.txt")
    tables.write_run_files(texts=bsr_files(out, _bsr_summary()))  # as the command writes them
    assert mine.read_text() == "the user's notes"
    assert not (out / "eval_bdry.txt").is_symlink() and "0.4" in (out / "eval_bdry.txt").read_text()


def test_a_read_only_bsr_file_is_refused_before_the_run(tmp_path: Path) -> None:
    out = tmp_path / "od"
    out.mkdir()
    (out / "eval_bdry_img.txt").write_text("kept")
    (out / "eval_bdry_img.txt").chmod(0o444)
    bsr = {f"--out-dir ({name})": out / name for name in BSR_FILES}
    with pytest.raises(InputError, match=r"--out-dir \(eval_bdry_img.txt\) .* not writable"):
        checked_outputs({"--json": None}, folders={"--out-dir": out}, folder_files=bsr)


def test_a_read_only_output_is_refused_even_where_it_could_be_replaced(tmp_path: Path) -> None:
    """Root replaces any file (``os.access`` says yes); a file without write permission is read-only on purpose."""
    target = tmp_path / "r.json"
    target.write_text("{}")
    target.chmod(0o444)
    with pytest.raises(InputError, match="not writable"):
        files.check_output(target, "--json")


def test_a_replaced_output_keeps_its_mode(tmp_path: Path) -> None:
    private = tmp_path / "r.json"
    private.write_text("old")
    private.chmod(0o600)
    files.write_atomically(private, lambda p: p.write_text("new"))
    assert stat.S_IMODE(private.stat().st_mode) == 0o600 and private.read_text() == "new"
    fresh = tmp_path / "new.json"
    files.write_atomically(fresh, lambda p: p.write_text("new"))
    assert stat.S_IMODE(fresh.stat().st_mode) == files.default_file_mode()


@pytest.mark.parametrize("mode", [0o600, 0o664])
def test_a_rewritten_report_and_html_page_keep_their_modes(tmp_path: Path, mode: int) -> None:
    """The report folder's files and the HTML page (and its assets folder) took the umask's mode on every run: a
    report the user made private became readable by all again (and one opened to a group was closed)."""
    _write_report(tmp_path / "rep", ["results.json", "csv/a.csv"])
    write_foreground_dataset(tmp_path, n=2, size=(32, 32), methods=["good"])
    two_image_report(tmp_path, tmp_path / "html")
    kept = [tmp_path / "rep" / "results.json", tmp_path / "rep" / "csv" / "a.csv", tmp_path / "html" / "index.html"]
    for path in kept:
        path.chmod(mode)
    (tmp_path / "html" / "assets").chmod(0o700)
    _write_report(tmp_path / "rep", ["results.json", "csv/a.csv"])
    two_image_report(tmp_path, tmp_path / "html")
    assert [stat.S_IMODE(p.stat().st_mode) for p in kept] == [mode] * len(kept)
    assert stat.S_IMODE((tmp_path / "html" / "assets").stat().st_mode) == 0o700
    # a read-only assets folder: its mode is given once the page has left the new one (given before, the page could
    # not be moved out of it without root's override, and the temporary folder stayed)
    (tmp_path / "html" / "assets").chmod(0o555)
    two_image_report(tmp_path, tmp_path / "html")
    assert stat.S_IMODE((tmp_path / "html" / "assets").stat().st_mode) == 0o555
    assert sorted(p.name for p in (tmp_path / "html").iterdir()) == ["assets", "index.html"]
    (tmp_path / "html" / "assets").chmod(0o755)  # (for pytest's clean-up)


def test_a_ctrl_c_at_the_probe_leaves_no_probe_file(monkeypatch, tmp_path: Path) -> None:
    """The probe file is created and removed under the signal hold: a Ctrl-C between the two left it."""
    import signal

    real = os.close

    def interrupted_close(handle: int) -> None:
        signal.raise_signal(signal.SIGINT)
        real(handle)

    monkeypatch.setattr(files.os, "close", interrupted_close)
    with pytest.raises(KeyboardInterrupt):
        files.probe_folder(tmp_path / "r.json", "--json")
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []


def test_a_ctrl_c_during_the_clean_up_leaves_no_temporary_folder(monkeypatch, tmp_path: Path) -> None:
    """The report folder's temporary folder is removed under the signal hold: a Ctrl-C landing in the removal cut
    it short and left the folder."""
    import shutil
    import signal

    real = shutil.rmtree

    def interrupted(path, *args, **kwargs):
        signal.raise_signal(signal.SIGINT)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", interrupted)  # (reports.files.remove_tree removes it)
    with pytest.raises(KeyboardInterrupt):
        _write_report(tmp_path / "rep", ["results.json"])
    monkeypatch.undo()
    assert sorted(p.name for p in (tmp_path / "rep").iterdir()) == [report.MANIFEST, "results.json"]


def test_two_runs_merging_into_one_table_keep_both_rows(monkeypatch, tmp_path: Path) -> None:
    """The first run is held between reading the table and replacing it; the second runs meanwhile. Without the
    folder's lock the second read the old table and one run's row was lost; with it the second waits."""
    table = tmp_path / "all.csv"
    read, go = threading.Event(), threading.Event()
    real = tables.merged_csv

    def slow_first(path, rows, keys, option):
        merged = real(path, rows, keys, option)
        if rows[0]["method"] == "a":
            read.set()
            go.wait(timeout=60)
        return merged

    monkeypatch.setattr(tables, "merged_csv", slow_first)

    def run(method: str) -> None:
        row = {"method": method, "dataset": "d", "num_images": 1, "mae": 0.1}
        tables.write_run_files(None, [(table, [row], ("method", "dataset"), "--csv")])

    first = threading.Thread(target=run, args=("a",))
    first.start()
    assert read.wait(timeout=60)
    second = threading.Thread(target=run, args=("b",))
    second.start()
    second.join(timeout=2)  # without the lock it finishes here; with it, it waits for the first
    go.set()
    first.join()
    second.join()
    methods = [line.split(",")[0] for line in table.read_text().splitlines()[1:]]
    assert sorted(methods) == ["a", "b"]


def test_a_toolbox_line_never_joins_a_last_line_without_its_newline(tmp_path: Path) -> None:
    lines = tmp_path / "fg_result.txt"
    lines.write_text("(Dataset:fg; Model:earlier) mae:0.1")  # saved by an editor without a final newline
    files.write_together([files.AppendedText(lines, "(new)\n")])
    assert lines.read_text().splitlines() == ["(Dataset:fg; Model:earlier) mae:0.1", "(new)"]
    files.write_together([files.AppendedText(lines, "(next)\n")])
    assert lines.read_text() == "(Dataset:fg; Model:earlier) mae:0.1\n(new)\n(next)\n"


@pytest.mark.parametrize("name", ["pipe", "/dev/stdout", "/dev/null", "/proc/self/fd/1"])
def test_a_pipe_or_a_device_is_never_an_output(tmp_path: Path, name: str) -> None:
    """A file written whole and moved onto the name replaced the pipe, or the system's ``/dev/stdout`` link when the
    process's output was a file (as root in a container, ``/dev/null`` too)."""
    target = Path(name)
    if name == "pipe":
        target = tmp_path / "pipe.json"
        os.mkfifo(target)
    before = os.lstat(target)
    with pytest.raises(InputError, match="not a regular file"):
        files.check_output(target, "--json")
    assert os.lstat(target).st_ino == before.st_ino


def test_two_html_reports_into_one_folder_take_turns(monkeypatch, tmp_path: Path) -> None:
    """Each run removed every temporary folder of the report folder as a killed run's: the other run's, still being
    written (``error: cannot access .../.segmetrics-html-XXXX/hist``). The folder's lock makes the second wait."""
    write_foreground_dataset(tmp_path, n=2, size=(32, 32), methods=["good"])
    drawing, go = threading.Event(), threading.Event()
    real = html_report._save_thumbnails

    def held(*args, **kwargs):
        if threading.current_thread().name == "first":
            drawing.set()
            go.wait(timeout=60)
        return real(*args, **kwargs)

    monkeypatch.setattr(html_report, "_save_thumbnails", held)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            two_image_report(tmp_path, tmp_path / "html")
        except BaseException as error:  # (reported by the assertion below)
            errors.append(error)

    first, second = threading.Thread(target=run, name="first"), threading.Thread(target=run, name="second")
    first.start()
    assert drawing.wait(timeout=60)
    second.start()
    second.join(timeout=2)  # without the lock it removes the first run's temporary folder here
    go.set()
    first.join()
    second.join()
    assert errors == []
    assert (tmp_path / "html" / "index.html").is_file()


@pytest.mark.parametrize("umask", [0o033, 0o026])
def test_the_html_assets_folder_gets_the_mode_mkdir_gives(tmp_path: Path, umask: int) -> None:
    """The assets folder (made by mkdtemp, 0700, then moved into place) took its mode from the file mode: 0755 where
    mkdir gives 0744 under umask 033, 0750 where it gives 0751 under 026."""
    write_foreground_dataset(tmp_path, n=2, size=(32, 32), methods=["good"])
    previous = os.umask(umask)
    try:
        (tmp_path / "made").mkdir()
        two_image_report(tmp_path, tmp_path / "html")
    finally:
        os.umask(previous)
    mkdir_mode = stat.S_IMODE((tmp_path / "made").stat().st_mode)
    assert stat.S_IMODE((tmp_path / "html" / "assets").stat().st_mode) == mkdir_mode == 0o777 & ~umask


def test_an_interrupted_manifest_write_leaves_no_temporary_file(monkeypatch, tmp_path: Path) -> None:
    """A Ctrl-C while the report folder's manifest was moved into place left its temporary ``.manifest-*`` file,
    which no later run removed."""
    _write_report(tmp_path / "rep", ["results.json"])
    signal_at_first_replace(monkeypatch, onto=report.MANIFEST)
    with pytest.raises(KeyboardInterrupt):
        report.replace_manifest(tmp_path / "rep", ["results.json"])
    assert sorted(p.name for p in (tmp_path / "rep").iterdir()) == [report.MANIFEST, "results.json"]
