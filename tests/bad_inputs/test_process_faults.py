"""The command started with a standard stream closed (``segmetrics ... >&-``, ``2>&-``), run in a subprocess through
the shell, as a user or a cron job starts it.

A closed stdout was exit 1 with ``'NoneType' object has no attribute 'flush'`` and a traceback, and the ``--json`` of a
single-folder run was never written (the table is printed before it): a regression, since a command that printed
through ``print`` alone passed. A closed standard stream is output nobody reads, as when the reader of a pipe goes
away: the run writes every file it was asked for and exits 0.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from .folders import write_foreground

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def sod(tmp_path: Path) -> Path:
    write_foreground(tmp_path, np.random.default_rng(0))
    return tmp_path


def _run(command: list[str], redirection: str, cwd: Path) -> subprocess.CompletedProcess:
    """``command`` run by ``sh`` with ``redirection`` (``>&-``: stdout closed before the program starts)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    script = f'exec "$@" {redirection}'
    captured = {"stdout": subprocess.PIPE} if redirection.startswith("2") else {"stderr": subprocess.PIPE}
    return subprocess.run(
        ["sh", "-c", script, "sh", sys.executable, "-m", "segmetrics_torch.app.cli", *command],
        cwd=cwd,
        env=env,
        text=True,
        timeout=600,
        **captured,
    )


def _no_fault(proc: subprocess.CompletedProcess) -> None:
    shown = proc.stderr if proc.stderr is not None else proc.stdout
    assert proc.returncode == 0, shown
    assert "Traceback" not in (shown or "") and "error" not in (shown or ""), shown


@pytest.mark.parametrize("redirection", [">&-", "2>&-"], ids=["stdout-closed", "stderr-closed"])
def test_single_folder_with_a_closed_stream_writes_its_files(sod: Path, redirection: str) -> None:
    command = [
        "evaluate",
        "foreground",
        "--pred",
        "pred",
        "--gt",
        "gt",
        "--no-progress",
        "--json",
        "r.json",
        "--csv",
        "r.csv",
    ]
    _no_fault(_run(command, redirection, sod))
    assert json.loads((sod / "r.json").read_text(encoding="utf-8"))["num_images"] == 3
    assert (sod / "r.csv").read_text(encoding="utf-8").startswith("method,dataset,num_images")


def test_report_with_stdout_closed_writes_the_report(sod: Path) -> None:
    command = [
        "evaluate",
        "--gt",
        "gt",
        "--pred",
        "M=pred",
        "--output",
        "out",
        "--no-progress",
        "--figures",
        "none",
        "--json",
        "r.json",
    ]
    _no_fault(_run(command, ">&-", sod))
    assert (sod / "out" / "tables.md").is_file()
    assert json.loads((sod / "out" / "results.json").read_text(encoding="utf-8"))["results"]
    assert (sod / "r.json").is_file()


def test_stdout_closed_does_not_hide_an_input_error(sod: Path) -> None:
    """The exit status still tells: exit 2 and the one error line on stderr."""
    proc = _run(["evaluate", "foreground", "--pred", "nowhere", "--gt", "gt", "--no-progress"], ">&-", sod)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
