"""``--html DIR`` of every ``segmetrics evaluate`` form: a single folder of each family (foreground, boundary,
partition, surface) and a ``--config`` report of 3 methods x 2 datasets write the error browser, whose per-image
rows are the run's own (the ``--per-image-csv`` rows), with an error overlay per shown image; an ``--html`` folder
that is an input folder is refused before anything runs, and nothing is written."""

from __future__ import annotations

import csv
import html
import json
import re
from pathlib import Path

import numpy as np
import pytest
import scipy.ndimage
from PIL import Image

from segmetrics_torch.app.cli import main


def _page_data(folder: Path) -> dict:
    """The JSON the page's script reads (``<script type="application/json" id="report-data">``)."""
    text = (folder / "index.html").read_text(encoding="utf-8")
    found = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', text, re.S)
    assert found is not None, "no report data in the page"
    return json.loads(html.unescape(found.group(1)) if "&#" in found.group(1) else found.group(1))


def _csv_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _thumbnails(folder: Path) -> list[Path]:
    return sorted((folder / "assets").rglob("*_err.png"))


def _run(capsys, *args: str | Path) -> tuple[int, str]:
    status = main(
        ["evaluate", *map(str, args), "--no-progress"] if args[0] != "--config" else ["evaluate", *map(str, args)]
    )
    return status, capsys.readouterr().err


def _foreground(root: Path, method: str = "pred", shift: int = 0) -> tuple[Path, Path]:
    rng = np.random.default_rng(1 + shift)
    for folder in ("gt", method):
        (root / folder).mkdir(parents=True, exist_ok=True)
    for i in range(4):
        gt = np.zeros((40, 48), np.uint8)
        gt[8 + i : 30, 10 : 34 + i] = 255
        pred = np.clip(np.roll(gt, shift + i, axis=1) * 0.8 + rng.integers(0, 60, gt.shape), 0, 255)
        Image.fromarray(gt).save(root / "gt" / f"im{i}.png")
        Image.fromarray(pred.astype(np.uint8)).save(root / method / f"im{i}.png")
    return root / method, root / "gt"


def _labels(i: int) -> np.ndarray:
    labels = np.zeros((36, 44), np.uint8)
    labels[6 + i : 28, 5 : 30 + i] = 1
    labels[20:, 24 + i :] = 2
    return labels


def _edges(labels: np.ndarray) -> np.ndarray:
    return (scipy.ndimage.morphological_gradient(labels, size=2) > 0).astype(np.uint8)


def test_foreground_writes_the_runs_rows_with_overlays(tmp_path: Path, capsys) -> None:
    pred, gt = _foreground(tmp_path)
    out = tmp_path / "report"
    status, err = _run(
        capsys, "foreground", "--pred", pred, "--gt", gt, "--html", out, "--per-image-csv", tmp_path / "p.csv"
    )
    assert status == 0, err
    data = _page_data(out)
    csv_rows = _csv_rows(tmp_path / "p.csv")
    assert sorted(r["image"] for r in csv_rows) == ["im0", "im1", "im2", "im3"]
    assert json.dumps(data).count('"im0"') >= 1
    # every image of the run is in the page's rows, with the CSV's MAE
    page_text = (out / "index.html").read_text(encoding="utf-8")
    for row in csv_rows:
        assert row["image"] in page_text
    assert len(_thumbnails(out)) == 4  # one error overlay per image (one method)


@pytest.mark.parametrize("family", ["boundary", "partition", "surface"])
def test_each_family_writes_its_report(tmp_path: Path, capsys, family: str) -> None:
    (tmp_path / "gt").mkdir()
    (tmp_path / "pred").mkdir()
    for i in range(3):
        labels = _labels(i)
        if family == "boundary":
            gt, pred = _edges(labels) * 255, scipy.ndimage.gaussian_filter(_edges(np.roll(labels, 1, 0)) * 255.0, 1)
            pred = np.clip(pred * 255 / max(pred.max(), 1), 0, 255).astype(np.uint8)
        elif family == "partition":
            gt, pred = labels, np.roll(labels, 2, axis=1)
        else:
            gt, pred = (
                (labels == 1).astype(np.uint8) * 255,
                (np.roll(labels, i + 1, axis=0) == 1).astype(np.uint8) * 255,
            )
        Image.fromarray(np.asarray(gt, np.uint8)).save(tmp_path / "gt" / f"im{i}.png")
        Image.fromarray(np.asarray(pred, np.uint8)).save(tmp_path / "pred" / f"im{i}.png")
    out = tmp_path / "report"
    status, err = _run(capsys, family, "--pred", tmp_path / "pred", "--gt", tmp_path / "gt", "--html", out)
    assert status == 0, err
    page = (out / "index.html").read_text(encoding="utf-8")
    assert all(f"im{i}" in page for i in range(3))
    assert len(_thumbnails(out)) == 3, sorted(p.name for p in (out / "assets").rglob("*"))


def test_a_config_report_of_three_methods_and_two_datasets(tmp_path: Path, capsys) -> None:
    for method, shift in (("m1", 0), ("m2", 2), ("m3", 5)):
        _foreground(tmp_path / "A", method, shift)
        _foreground(tmp_path / "B", method, shift + 1)
    config = tmp_path / "eval.yaml"
    config.write_text(
        "datasets:\n  A: {gt: A/gt}\n  B: {gt: B/gt}\n"
        "methods:\n  m1: '{dataset}/m1'\n  m2: '{dataset}/m2'\n  m3: '{dataset}/m3'\n"
        "output: report\nhtml: browser\nfigures: [png]\n",
        encoding="utf-8",
    )
    status, err = _run(capsys, "--config", config, "--no-progress")
    assert status == 0, err
    out = tmp_path / "browser"
    page = (out / "index.html").read_text(encoding="utf-8")
    for name in ("m1", "m2", "m3", ">A<", ">B<"):
        assert name in page, name
    # side by side: every shown image drawn under each of the three methods
    errors = _thumbnails(out)
    methods = {re.search(r"_m(\d+)_err", p.name).group(1) for p in errors}  # type: ignore[union-attr]
    assert methods == {"0", "1", "2"}
    assert list((out / "assets" / "figures").glob("*.png")), "the report's figures are on the page"


def test_an_input_folder_is_refused_before_the_run(tmp_path: Path, capsys) -> None:
    pred, gt = _foreground(tmp_path)
    before = sorted(p.name for p in pred.iterdir())
    status, err = _run(capsys, "foreground", "--pred", pred, "--gt", gt, "--html", pred, "--json", tmp_path / "r.json")
    assert status == 2
    assert err.count("error:") == 1 and "--html" in err, err
    assert sorted(p.name for p in pred.iterdir()) == before
    assert not (tmp_path / "r.json").exists()  # nothing ran


# ------------------------------------------------------------------------------ from a review of the day's change


def test_a_users_own_page_is_never_replaced(tmp_path: Path, capsys) -> None:
    pred, gt = _foreground(tmp_path)
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<h1>my page</h1>", encoding="utf-8")
    status, err = _run(capsys, "foreground", "--pred", pred, "--gt", gt, "--html", site, "--json", tmp_path / "r.json")
    assert status == 2 and err.count("error:") == 1 and "index.html" in err, err
    assert (site / "index.html").read_text(encoding="utf-8") == "<h1>my page</h1>"
    assert sorted(p.name for p in site.iterdir()) == ["index.html"] and not (tmp_path / "r.json").exists()
    # a page this report wrote is replaced on the next run
    assert _run(capsys, "foreground", "--pred", pred, "--gt", gt, "--html", tmp_path / "ours")[0] == 0
    assert _run(capsys, "foreground", "--pred", pred, "--gt", gt, "--html", tmp_path / "ours")[0] == 0


def test_every_page_folder_of_a_report_is_checked_before_the_run(tmp_path: Path, capsys) -> None:
    _foreground(tmp_path / "A", "m1")
    (tmp_path / "P" / "gt").mkdir(parents=True)
    (tmp_path / "P" / "m1").mkdir()
    for i in range(2):
        Image.fromarray(_labels(i)).save(tmp_path / "P" / "gt" / f"im{i}.png")
        Image.fromarray(np.roll(_labels(i), 2, axis=1)).save(tmp_path / "P" / "m1" / f"im{i}.png")
    page = tmp_path / "browser" / "foreground"  # a report of two families writes one page per family here
    page.mkdir(parents=True)
    (page / "index.html").write_text("mine", encoding="utf-8")
    config = tmp_path / "eval.yaml"
    config.write_text(
        "datasets:\n  A: {gt: A/gt, families: [foreground]}\n  P: {gt: P/gt, families: [partition]}\n"
        "methods:\n  m1: {A: A/m1, P: P/m1}\noutput: report\nhtml: browser\nfigures: false\n",
        encoding="utf-8",
    )
    status, err = _run(capsys, "--config", config, "--no-progress")
    assert status == 2 and "index.html" in err, err
    assert (page / "index.html").read_text(encoding="utf-8") == "mine"
    assert not (tmp_path / "report").exists()  # refused before anything ran
    (page / "index.html").unlink()
    status, err = _run(capsys, "--config", config, "--no-progress")
    assert status == 0, err
    assert (tmp_path / "browser" / "foreground" / "index.html").is_file()
    assert (tmp_path / "browser" / "partition" / "index.html").is_file()


@pytest.mark.parametrize("where", ["afile/sub", "report/figures"])
def test_an_html_folder_that_cannot_be_written_is_refused_first(tmp_path: Path, capsys, where: str) -> None:
    _foreground(tmp_path / "A", "m1")
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    config = tmp_path / "eval.yaml"
    config.write_text(
        f"datasets:\n  A: {{gt: A/gt}}\nmethods:\n  m1: A/m1\noutput: report\nhtml: {where}\n", encoding="utf-8"
    )
    status, err = _run(capsys, "--config", config, "--no-progress")
    assert status == 2 and err.count("error:") == 1, err
    assert not (tmp_path / "report").exists(), "refused before the run"


def test_names_are_never_read_as_markup_by_the_figures(tmp_path: Path, capsys) -> None:
    pred, gt = _foreground(tmp_path)
    name = r"net_$\alpha_{bad$"
    out = tmp_path / "page"
    status, err = _run(capsys, "foreground", "--pred", pred, "--gt", gt, "--name", name, "--html", out)
    assert status == 0, err
    assert html.escape(name) in (out / "index.html").read_text(encoding="utf-8")


def test_a_threshold_is_shown_but_never_ranked(tmp_path: Path, capsys) -> None:
    (tmp_path / "gt").mkdir()
    (tmp_path / "pred").mkdir()
    for i in range(2):
        Image.fromarray(_edges(_labels(i)) * 255).save(tmp_path / "gt" / f"im{i}.png")
        soft = scipy.ndimage.gaussian_filter(_edges(np.roll(_labels(i), 1, 0)) * 255.0, 1)
        Image.fromarray(np.clip(soft * 255 / soft.max(), 0, 255).astype(np.uint8)).save(
            tmp_path / "pred" / f"im{i}.png"
        )
    out = tmp_path / "page"
    assert _run(capsys, "boundary", "--pred", tmp_path / "pred", "--gt", tmp_path / "gt", "--html", out)[0] == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "ODS-T ↑" not in page and "ODS-T ↓" not in page and "ODS-F ↑" in page


def _previous_set(tmp_path: Path, capsys) -> tuple[list[str], dict[Path, bytes]]:
    """A run's --json and --html written once, then both marked as the previous run's."""
    pred, gt = _foreground(tmp_path)
    args = ["foreground", "--pred", pred, "--gt", gt, "--html", tmp_path / "report"]
    args += ["--json", tmp_path / "r.json"]
    status, err = _run(capsys, *args)
    assert status == 0, err
    previous = {}
    for path in [tmp_path / "r.json", tmp_path / "report" / "index.html"]:
        path.write_text(f"the previous run's {path.name}\n")
        previous[path] = path.read_bytes()
    return [str(a) for a in args], previous


def test_the_html_report_and_the_tables_are_one_set_under_ctrl_c(tmp_path: Path, capsys, monkeypatch) -> None:
    """The page was drawn after the --json and the tables had been moved into place: a Ctrl-C while it was drawn (its
    thumbnails take seconds) left this run's JSON beside the previous run's page."""
    from segmetrics_torch.reports import html_report
    from tests.conftest import interrupted

    args, previous = _previous_set(tmp_path, capsys)
    monkeypatch.setattr(html_report, "_save_thumbnails", interrupted)
    status, _ = _run(capsys, *args)
    assert status == 130
    assert {path: path.read_bytes() for path in previous} == previous  # the previous set, whole
    assert sorted(p.name for p in (tmp_path / "report").iterdir()) == ["assets", "index.html"]  # nothing left over


def test_a_page_that_cannot_be_drawn_replaces_no_table(tmp_path: Path, capsys, monkeypatch) -> None:
    """A failure while the page is drawn (a full disk) is a failure of the run's set: no file of it is replaced."""
    from segmetrics_torch.reports import html_report

    args, previous = _previous_set(tmp_path, capsys)

    def full(*_: object, **__: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(html_report, "_save_thumbnails", full)
    status, err = _run(capsys, *args)
    assert status != 0 and "No space left on device" in err
    assert {path: path.read_bytes() for path in previous} == previous


def test_a_signal_at_the_first_rename_leaves_the_previous_set_or_the_new(tmp_path: Path, capsys, monkeypatch) -> None:
    """Ctrl-C at the set's first rename waits for the renames: the new set, the page included, is in place."""
    from tests.conftest import signal_at_first_replace

    args, previous = _previous_set(tmp_path, capsys)
    moved = signal_at_first_replace(monkeypatch)
    status, _ = _run(capsys, *args)
    assert status == 130 and moved
    assert all(path.read_bytes() != old for path, old in previous.items())  # the new set, every file of it
    assert "report-data" in (tmp_path / "report" / "index.html").read_text(encoding="utf-8")


def test_a_rename_that_fails_puts_the_previous_report_back(tmp_path: Path, capsys, monkeypatch) -> None:
    """A failing rename of the new assets/ (an I/O error) after the new page was moved in left the new page over
    the previous run's thumbnails: the previous page goes back with its assets, and (the report's renames come
    first) the previous --json stays."""
    import errno
    import os

    from segmetrics_torch.reports import html_report

    args, previous = _previous_set(tmp_path, capsys)
    (tmp_path / "report" / "assets" / "mine").write_text("the previous run's assets")
    real = os.replace

    def replace(src, dst):
        if Path(dst).name == "assets" and not Path(src).name.endswith("-previous"):
            raise OSError(errno.EIO, "Input/output error")
        return real(src, dst)

    monkeypatch.setattr(html_report.os, "replace", replace)
    status, err = _run(capsys, *args)
    assert status != 0 and "Input/output error" in err
    assert {path: path.read_bytes() for path in previous} == previous  # the page moves first: nothing else moved
    assert (tmp_path / "report" / "assets" / "mine").is_file()
    assert sorted(p.name for p in (tmp_path / "report").iterdir()) == ["assets", "index.html"]


def test_a_config_report_and_its_pages_are_one_set(tmp_path: Path, capsys, monkeypatch) -> None:
    """evaluate --config with html: the pages were drawn after the report folder had been moved in: a Ctrl-C while
    they were drawn left the new results.json beside the previous run's page (found by a review)."""
    from segmetrics_torch.reports import html_report
    from tests.conftest import interrupted

    _foreground(tmp_path / "A", "m1")
    _foreground(tmp_path / "A", "m2", 3)
    config = tmp_path / "eval.yaml"
    config.write_text(
        "datasets:\n  A: {gt: A/gt}\nmethods:\n  m1: '{dataset}/m1'\n  m2: '{dataset}/m2'\n"
        "output: report\nhtml: browser\nfigures: [png]\n",
        encoding="utf-8",
    )
    status, err = _run(capsys, "--config", config, "--no-progress")
    assert status == 0, err
    previous = {}
    for path in (tmp_path / "report" / "results.json", tmp_path / "browser" / "index.html"):
        path.write_text(f"the previous run's {path.name}\n")
        previous[path] = path.read_bytes()
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    monkeypatch.setattr(html_report, "_save_thumbnails", interrupted)
    status, _ = _run(capsys, "--config", config, "--no-progress")
    assert status == 130
    assert {path: path.read_bytes() for path in previous} == previous
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before  # nothing new, nothing left over


def _report_config(tmp_path: Path, datasets: tuple[str, ...]) -> Path:
    config = tmp_path / "eval.yaml"
    listed = "".join(f"  {d}: {{gt: {d}/gt}}\n" for d in datasets)
    config.write_text(
        f"datasets:\n{listed}methods:\n  m1: '{{dataset}}/m1'\noutput: report\nhtml: browser\nfigures: [png]\n",
        encoding="utf-8",
    )
    return config


def test_an_interrupted_report_leaves_its_manifest_as_it_was(tmp_path: Path, capsys, monkeypatch) -> None:
    """The report's manifest was written when the report was staged, before its pages were drawn: a Ctrl-C there left
    it listing the files of a report never written (csv/B_foreground.csv), and the next report removed the user's
    own file of that name as its own (found by a review)."""
    from segmetrics_torch.reports import html_report
    from tests.conftest import interrupted

    _foreground(tmp_path / "A", "m1")
    _foreground(tmp_path / "B", "m1", 3)
    config = _report_config(tmp_path, ("A",))
    assert _run(capsys, "--config", config, "--no-progress")[0] == 0
    manifest = tmp_path / "report" / ".segmetrics-manifest.json"
    before = manifest.read_bytes()
    _report_config(tmp_path, ("A", "B"))
    with monkeypatch.context() as patched:
        patched.setattr(html_report, "_save_thumbnails", interrupted)
        assert _run(capsys, "--config", config, "--no-progress")[0] == 130
    assert manifest.read_bytes() == before
    mine = tmp_path / "report" / "csv" / "B_foreground.csv"
    mine.write_text("my own table\n")
    _report_config(tmp_path, ("A",))
    status, err = _run(capsys, "--config", config, "--no-progress")
    assert status == 0, err
    assert mine.read_text() == "my own table\n"  # no report wrote it: not the report's to remove


def test_a_failing_page_rename_leaves_the_previous_report(tmp_path: Path, capsys, monkeypatch) -> None:
    """A report's pages move in before its folder: a page's rename that fails puts the previous page back, and the
    report folder has not moved yet (its results.json was the new one beside the previous page)."""
    import errno
    import os

    _foreground(tmp_path / "A", "m1")
    config = _report_config(tmp_path, ("A",))
    assert _run(capsys, "--config", config, "--no-progress")[0] == 0
    results, page = tmp_path / "report" / "results.json", tmp_path / "browser" / "index.html"
    results.write_text("the previous run's results.json\n")
    previous_page = page.read_bytes()
    real = os.replace

    def replace(src, dst):
        if Path(dst) == page and Path(src).name == "index.html":  # the new page moving in
            raise OSError(errno.EIO, "Input/output error")
        return real(src, dst)

    with monkeypatch.context() as patched:
        patched.setattr(os, "replace", replace)
        status, err = _run(capsys, "--config", config, "--no-progress")
    assert status != 0 and "Input/output error" in err
    assert page.read_bytes() == previous_page and results.read_text() == "the previous run's results.json\n"


def test_a_read_only_assets_folder_is_replaced_by_a_user(tmp_path: Path, capsys) -> None:
    """A previous report's assets/ made read-only (0555) by its user: the new report keeps that mode, and the previous
    one is removed. Run as a user without root's file permissions (root here drops them): the previous page was moved
    into that folder and the run failed (Permission denied); before that, its folder was left behind."""
    import os
    import shutil
    import subprocess
    import sys

    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("root without setpriv: cannot run without root's file permissions")
        prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner"]
    pred, gt = _foreground(tmp_path)
    out = tmp_path / "report"
    argv = ["evaluate", "foreground", "--pred", str(pred), "--gt", str(gt), "--html", str(out), "--no-progress"]
    assert main(argv) == 0
    capsys.readouterr()
    (out / "assets").chmod(0o555)
    code = "import sys; from segmetrics_torch.app.cli import main; sys.exit(main(sys.argv[1:]))"
    try:
        run = subprocess.run([*prefix, sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr
        assert sorted(p.name for p in out.iterdir()) == ["assets", "index.html"]  # nothing left over
        assert (out / "assets").stat().st_mode & 0o777 == 0o555
    finally:
        for folder in (out, *out.rglob("*")):
            if folder.is_dir():
                folder.chmod(0o755)
