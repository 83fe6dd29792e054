"""Ordinary faults are not bugs (issue 26, item 2), and written files get the user's umask (issue 28, item 2).

Process faults (a closed pipe, a full disk) run ``segmetrics`` in a subprocess; the others in-process. Each was
exit 1 with ``unexpected ...`` and a traceback before.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from segmetrics_torch.app import report_run
from segmetrics_torch.app.cli import main

from .folders import write_foreground


@pytest.fixture
def sod(tmp_path: Path) -> Path:
    write_foreground(tmp_path, np.random.default_rng(0))
    return tmp_path


def _command(root: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "segmetrics_torch.app.cli",
        "evaluate",
        "foreground",
        "--pred",
        str(root / "pred"),
        "--gt",
        str(root / "gt"),
        "--no-progress",
        *extra,
    ]


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


def test_a_reader_that_goes_away_is_not_an_error(sod: Path) -> None:
    """``segmetrics ... | head -1``: the rest of stdout is dropped, the files are still written whole, exit 0."""
    out = sod / "r.json"
    proc = subprocess.Popen(_command(sod, "--json", str(out)), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # the reader is gone before the command prints the rest
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 0, err
    assert "Traceback" not in err and "error" not in err, err
    assert json.loads(out.read_text())["num_images"] == 3


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_on_stdout_is_exit_2(sod: Path) -> None:
    with open("/dev/full", "w") as full:
        proc = subprocess.run(_command(sod), stdout=full, stderr=subprocess.PIPE, timeout=300)
    line = _one_error_line(proc.stderr.decode())
    assert proc.returncode == 2
    assert line == "error: cannot write to standard output: no space left on device"


def test_a_decompression_bomb_is_a_listed_problem(sod: Path, capsys) -> None:
    Image.new("L", (20000, 20000)).save(sod / "pred" / "im2.png")  # 380 KB on disk, 400 Mpx decoded
    assert main(_command(sod)[3:]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "im2.png: 20000x20000 = 400,000,000 pixels exceeds the limit of 178,956,970 pixels" in line
    assert "--max-image-pixels" in line and "SEGMETRICS_MAX_IMAGE_PIXELS" in line
    assert main([*_command(sod)[3:], "--skip-bad"]) == 0  # the pre-scan lists it, so --skip-bad leaves it out
    assert "skipped: unreadable or corrupt file: 1: im2" in capsys.readouterr().err
    # a raised limit lets the header through: the next problem is its size against the GT
    assert main([*_command(sod)[3:], "--max-image-pixels", "400000000"]) == 2
    assert "prediction size differs from its ground truth (prediction 20000x20000" in capsys.readouterr().err


def test_a_bad_pixel_limit_names_the_variable(sod: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("SEGMETRICS_MAX_IMAGE_PIXELS", "many")
    assert main(_command(sod)[3:]) == 2
    assert "SEGMETRICS_MAX_IMAGE_PIXELS='many'" in _one_error_line(capsys.readouterr().err)


def test_a_latin1_configuration_names_the_byte(sod: Path, capsys) -> None:
    config = sod / "eval.yaml"
    config.write_bytes(b"datasets:\n  D: gt\nmethods:\n  M\xe9thode: pred\nfamilies: [foreground]\noutput: rep\n")
    assert main(["evaluate", "--config", str(config)]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "eval.yaml: byte 30 (line 4) is not UTF-8" in line and "save it as UTF-8" in line


@pytest.mark.parametrize("value", ["0", "-2"])
def test_numba_threads_not_positive_names_the_variable(sod: Path, capsys, monkeypatch, value) -> None:
    monkeypatch.setenv("NUMBA_NUM_THREADS", value)
    assert main(_command(sod)[3:]) == 2
    assert f"NUMBA_NUM_THREADS={value}: numba needs a positive number of threads" in capsys.readouterr().err


def test_numba_threads_not_a_number_is_left_to_numba(sod: Path, monkeypatch) -> None:
    """``NUMBA_NUM_THREADS=abc``: numba warns and uses its default, as before (a subprocess: read at import)."""
    env = {**os.environ, "NUMBA_NUM_THREADS": "abc"}
    proc = subprocess.run(_command(sod), capture_output=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()


def test_a_second_run_into_a_held_output_folder(sod: Path, capsys) -> None:
    out = sod / "report"
    out.mkdir()
    holder = os.open(out / report_run.LOCK_FILE, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        os.pwrite(holder, b"4242\n", 0)
        argv = [
            "evaluate",
            "--gt",
            str(sod / "gt"),
            "--pred",
            f"M={sod / 'pred'}",
            "--family",
            "foreground",
            "--output",
            str(out),
            "--figures",
            "none",
            "--no-progress",
        ]
        assert main(argv) == 2
        line = _one_error_line(capsys.readouterr().err)
        expected = f"error: another segmetrics run is writing {out} (pid 4242); wait for it or choose another --output"
        assert line == expected
        assert not (out / "results.json").exists()
    finally:
        os.close(holder)
    assert main(argv) == 0  # released (as when the holder's process ends): the next run goes ahead
    assert (out / "results.json").is_file()


def test_a_failed_run_leaves_no_folder_behind(sod: Path, capsys) -> None:
    out = sod / "new-report"
    argv = [
        "evaluate",
        "--gt",
        str(sod / "gt"),
        "--pred",
        f"M={sod / 'nowhere'}",
        "--family",
        "foreground",
        "--output",
        str(out),
        "--no-progress",
    ]
    assert main(argv) == 2
    capsys.readouterr()
    assert not out.exists()


def test_written_files_get_the_mode_of_the_umask(sod: Path, capsys) -> None:
    """Every file of every output option (and of a report: JSON, CSVs, tables, cache, manifest) is 0o644 under
    umask 022 (mkstemp's temporary files were 0600)."""
    previous = os.umask(0o022)
    try:
        files = ["--json", str(sod / "a.json"), "--csv", str(sod / "a.csv"), "--per-image-csv", str(sod / "b.csv")]
        assert (
            main(
                [
                    "evaluate",
                    "--gt",
                    str(sod / "gt"),
                    "--pred",
                    f"M={sod / 'pred'}",
                    "--family",
                    "foreground",
                    "--output",
                    str(sod / "report"),
                    "--figures",
                    "none",
                    "--no-progress",
                    *files,
                ]
            )
            == 0
        )
        assert (
            main(
                [
                    *_command(sod)[3:],
                    "--json",
                    str(sod / "c.json"),
                    "--csv",
                    str(sod / "c.csv"),
                    "--per-image-csv",
                    str(sod / "d.csv"),
                ]
            )
            == 0
        )
        os.umask(0o077)
        assert main([*_command(sod)[3:], "--json", str(sod / "private.json")]) == 0
    finally:
        os.umask(previous)
    capsys.readouterr()
    written = [p for p in (sod / "report").rglob("*") if p.is_file()]
    written += [sod / n for n in ("a.json", "a.csv", "b.csv", "c.json", "c.csv", "d.csv")]
    assert len(written) > 8
    modes = {str(p.relative_to(sod)): oct(p.stat().st_mode & 0o777) for p in written}
    assert set(modes.values()) == {"0o644"}, modes
    assert oct((sod / "private.json").stat().st_mode & 0o777) == "0o600"
