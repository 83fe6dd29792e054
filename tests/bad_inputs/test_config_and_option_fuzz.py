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


def _aliases(levels: int) -> tuple[str, str]:
    """YAML anchors of ``levels`` levels of ten-fold lists: (their lines under a ``defs:`` key, the last alias)."""
    lines = ["defs:", "  - &x0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"  - &x{i} [{', '.join([f'*x{i - 1}'] * 10)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n", f"*x{levels - 1}"


def _in_options(family: str, key: str, levels: int = 6) -> str:
    """An alias-built value for ``options.<family>.<key>`` (``defs`` is refused too, after it: one line each)."""
    defs, alias = _aliases(levels)
    return BASE + defs + f"options: {{{family}: {{{key}: [{alias}]}}}}\n"


CONFIGS = {
    "billion-laughs": (_laughs(), ".yaml", r"families: expected one or a list of .*surface, got \[\[.*\.\.\."),
    "int-key": (BASE + "1: x\nfoo: y\n", ".yaml", r"the key 1 \(line 3\) is not text.*quote it"),
    "null-key-in-entry": (
        "datasets: {D: {gt: ROOT/sod/gt, null: x}}\nmethods: {M: ROOT/sod/pred}\n",
        ".yaml",
        r"the key null \(line 1\) is not text, but YAML's NoneType",
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
    "measures-laughs": (_in_options("foreground", "measures"), ".yaml", r"options.foreground.measures: expected"),
    "surface-laughs": (_in_options("surface", "measures"), ".yaml", r"options.surface.measures: expected"),
    "counts-beyond-int64": (
        BASE + "options: {proposals: {counts: [99999999999999999999999]}}\n",
        ".yaml",
        r"options.proposals.counts: expected a list of positive integers below 2\^63",
    ),
    "regions-beyond-int64": (
        BASE + "options: {partition: {num_regions: [1, 99999999999999999999]}}\n",
        ".yaml",
        r"options.partition.num_regions: expected a list of positive integers below 2\^63",
    ),
    "partition-thresholds": (
        BASE + "options: {partition: {thresholds: 1000000000000}}\n",
        ".yaml",
        r"options.partition.thresholds: expected an integer from 1 to 100000",
    ),
    "proposal-classes": (
        BASE + "options: {proposals: {num_classes: 10000000000}}\n",
        ".yaml",
        r"options.proposals.num_classes: expected an integer from 1 to 65536",
    ),
    "yes-key": (
        "datasets: {D: ROOT/sod/gt}\nmethods: {M: ROOT/sod/pred, yes: ROOT/sod/pred}\n",
        ".yaml",
        r"the key yes \(line 2\) is not text, but YAML's bool.*quote it \('yes': \.\.\.\)",
    ),
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
    return err  # (the error line, and the mistakes listed under it when there are several)


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
    "ignore-border": (
        lambda r: ["evaluate", "semantic-boundary", "--pred", str(r), "--gt", str(r), "--ignore-border", "2147483648"],
        r"--ignore-border: expected an integer from 0 to 2147483647",
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


def test_an_output_named_by_a_number_is_a_folder_name(tmp_path: Path) -> None:
    """``output: 2024`` names a folder (YAML reads it as a number): taken, as before; null, false, '' are refused."""
    from segmetrics_torch.app.report_config import config_from_mapping

    data = {"datasets": {"D": str(tmp_path)}, "methods": {"M": str(tmp_path)}, "output": 2024}
    assert config_from_mapping(data, tmp_path).output == tmp_path / "2024"


def test_an_unreadable_manifest_is_not_a_crash(root: Path, tmp_path: Path, capsys) -> None:
    """A report folder's manifest nested too deep for the parser is an unreadable manifest (was exit 1)."""
    out = tmp_path / "report"
    out.mkdir()
    (out / ".segmetrics-manifest.json").write_text("[" * 200000 + "]" * 200000, encoding="utf-8")
    argv = ["evaluate", "--gt", str(root / "sod/gt"), "--pred", str(root / "sod/pred"), "--output", str(out)]
    status = main([*argv, "--figures", "none", "--no-progress"])
    err = capsys.readouterr().err
    assert status in (0, 2) and "Traceback" not in err and "unexpected" not in err, err[-2000:]


def test_a_class_list_built_by_aliases_is_named_short() -> None:
    """``classes:`` of a semantic-boundary configuration: ``str()`` of an alias-built value ran to gigabytes."""
    from segmetrics_torch.functional.semantic_boundary import class_numbers

    huge: list = ["lol"] * 10
    for _ in range(5):
        huge = [huge] * 10
    with pytest.raises(ValueError) as info:
        class_numbers([huge], "sbd")
    assert len(str(info.value)) < 1000
