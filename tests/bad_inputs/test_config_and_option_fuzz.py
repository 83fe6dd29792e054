"""Configurations and options found by a fuzzing pass of the command: each was a traceback (exit 1), a memory
blow-up, or a bad value accepted (exit 0); each is now exit 2 with one ``error:`` line naming the key or option,
and nothing written. The library's side: tolerances beyond the image and bounded sizes."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from segmetrics_torch.app.cli import main
from segmetrics_torch.functional import boundary_pr
from segmetrics_torch.functional.semantic_boundary import semantic_boundary_protocol
from segmetrics_torch.functional.video.jf import davis_radius

from .folders import write_families

BASE = "datasets: {D: ROOT/sod/gt}\nmethods: {M: ROOT/sod/pred}\n"


def _laughs() -> str:
    """A "billion laughs" of 10^8 leaves: its full repr in the error message took 2.4 GB and printed 800 MB."""
    lines = ["families:", "  - &x0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"  - &x{i} [{', '.join([f'*x{i - 1}'] * 10)}]" for i in range(1, 8)]
    return BASE + "\n".join(lines) + "\n"


CONFIGS = {
    "billion-laughs": (_laughs(), ".yaml", r"families: expected one or a list of .*surface, got \[\[.*\.\.\."),
    "int-key": (BASE + "1: x\nfoo: y\n", ".yaml", r"the key 1 \(line 3\) is not text.*quote it"),
    "null-key-in-entry": (
        "datasets: {D: {gt: ROOT/sod/gt, null: x}}\nmethods: {M: ROOT/sod/pred}\n",
        ".yaml",
        r"the key None \(line 1\) is not text",
    ),
    "highlight-list": (BASE + "highlight: [M]\n", ".yaml", r"highlight: expected a method name \(M\), got \['M'\]"),
    "method-order-nested": (BASE + "method_order: [[M]]\n", ".yaml", r"method_order: expected a list of method"),
    "int-of-5000-digits": (BASE + "workers: " + "9" * 5000 + "\n", ".yaml", r"4300 digits"),
    "yaml-nested-deep": (BASE + "families: " + "[" * 2000 + "]" * 2000 + "\n", ".yaml", r"nested too deep"),
    "json-nested-deep": (
        '{"datasets": {"D": "ROOT/sod/gt"}, "methods": {"M": "ROOT/sod/pred"}, "x": '
        + "[" * 100000
        + "]" * 100000
        + "}",
        ".json",
        r"nested too deep",
    ),
    "nan-colour": (BASE + "colors: {M: [.nan, 0, 0]}\n", ".yaml", r"colors: not a matplotlib colour: M: \[nan"),
    "output-null": (BASE + "output: null\n", ".yaml", r"output: expected a folder path, got None"),
    "output-empty": (BASE + "output: ''\n", ".yaml", r"output: expected a folder path, got ''"),
    "cache-empty": (BASE + "cache: ''\n", ".yaml", r"cache: expected true, false or a folder, got ''"),
    "options-false": (BASE + "options: {foreground: false}\n", ".yaml", r"options.foreground: expected a mapping"),
    "options-alias-twice": (
        BASE + "options: {sod: {measures: [mae]}, foreground: {measures: [s]}}\n",
        ".yaml",
        r"options: sod and foreground name one family: merge them",
    ),
}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("config_fuzz")
    write_families(base)
    return base


def _one_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    try:
        status = main(argv)
    except SystemExit as exit_:  # argparse's usage errors
        status = exit_.code
    err = capsys.readouterr().err
    assert "Traceback" not in err and "unexpected" not in err, err[-3000:]
    assert status == 2, err[-3000:]
    errors = [line for line in err.splitlines() if line.startswith("error:") or ": error:" in line]
    assert len(errors) == 1, err[-3000:]
    assert len(err) < 4000, len(err)  # a short message, whatever the value
    return errors[0]


@pytest.mark.parametrize("name", list(CONFIGS))
def test_a_bad_configuration_is_one_error_line(name: str, root: Path, tmp_path: Path, capsys) -> None:
    text, suffix, match = CONFIGS[name]
    config = tmp_path / f"eval{suffix}"
    config.write_text(text.replace("ROOT", str(root)), encoding="utf-8")
    before = sorted(tmp_path.rglob("*"))
    line = _one_error(["evaluate", "--config", str(config), "--no-progress"], capsys)
    assert re.search(match, line), line
    assert sorted(tmp_path.rglob("*")) == before  # nothing written (not a folder named "None")


OPTIONS: dict[str, tuple[Callable[[Path], list[str]], str]] = {
    "counts-beyond-int64": (
        lambda r: ["evaluate", "proposals", "--pred", str(r), "--gt", str(r), "--counts", "9" * 20],
        r"--counts: expected comma-separated positive integers below 2\^63",
    ),
    "void-label-below-none": (
        lambda r: ["evaluate", "proposals", "--pred", str(r), "--gt", str(r), "--void-label", "-2"],
        r"--void-label: expected -1 \(none\) or a non-negative label",
    ),
    "boundary-thresholds": (
        lambda r: ["evaluate", "boundary", "--pred", str(r), "--gt", str(r), "--thresholds", "1000000000000"],
        r"--thresholds: expected an integer from 1 to 100000",
    ),
    "proposal-classes": (
        lambda r: ["evaluate", "proposals", "--pred", str(r), "--gt", str(r), "--num-classes", "10000000000"],
        r"--num-classes: expected an integer from 1 to 65536",
    ),
    "family-empty": (
        lambda r: ["evaluate", "--gt", str(r / "sod/gt"), "--pred", str(r / "sod/pred"), "--family", ""],
        r"--family: '' is not a family \(known: foreground \(alias sod\), .*surface\)",
    ),
    "family-unknown": (
        lambda r: ["evaluate", "--gt", str(r / "sod/gt"), "--pred", str(r / "sod/pred"), "--family", "nope"],
        r"--family: 'nope' is not a family",
    ),
    "meta-seed": (
        lambda r: ["meta", "foreground", "--demo", "--n", "2", "--seed", "9" * 30],
        r"--seed: expected a non-negative integer below 2\^63",
    ),
    "demo-images": (lambda r: ["demo", "--n", "100000000000"], r"--n: expected an integer from 1 to 100000"),
    "meta-noise-maps": (
        lambda r: ["meta", "foreground", "--demo", "--n", "2", "--noise-maps", "100000000000"],
        r"--noise-maps: expected an integer from 1 to 1000",
    ),
    "style-not-text": (
        lambda r: ["evaluate", "--gt", str(r / "sod/gt"), "--pred", str(r / "sod/pred"), "--style", str(_a_png(r))],
        r"--style: .* is not UTF-8",
    ),
}


def _a_png(root: Path) -> Path:
    return next((root / "sod" / "gt").iterdir())


@pytest.mark.parametrize("name", list(OPTIONS))
def test_a_bad_option_is_one_error_line(name: str, root: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # (a report's default folder would land here)
    make, match = OPTIONS[name]
    line = _one_error(make(root), capsys)
    assert re.search(match, line), line
    assert list(tmp_path.iterdir()) == []  # no report folder or cache made before the refusal


def test_a_tolerance_beyond_the_image_is_the_diagonal_s() -> None:
    """max_dist 1e300 pixels overflowed the chunk size (exit 1); any tolerance past the diagonal matches alike."""
    gen = torch.Generator().manual_seed(0)
    preds = torch.rand(2, 16, 20, generator=gen)
    target = torch.rand(2, 1, 16, 20, generator=gen) > 0.8  # (B, annotators, H, W)
    far, diagonal = boundary_pr(preds, target, max_dist=1e300), boundary_pr(preds, target, max_dist=26.0)
    for key in ("ods", "ois"):
        assert float(far[key]["f"]) == float(diagonal[key]["f"])
    assert float(far["ap"]) == float(diagonal["ap"])
    # DAVIS: a disk wider than the diagonal is the diagonal's (numba refused a radius of 1e300)
    assert davis_radius(1e300, 480, 854) == davis_radius(1000.0, 480, 854) == math.ceil(math.hypot(480, 854))


def test_semantic_boundary_sizes_are_bounded() -> None:
    with pytest.raises(ValueError, match=r"`thresholds` to be an int in \[1, 100000\]"):
        semantic_boundary_protocol("post-seal", thresholds=10**10)
    with pytest.raises(ValueError, match=r"`ignore_border` to be a non-negative int below 2\^31"):
        semantic_boundary_protocol("post-seal", ignore_border=10**23)
