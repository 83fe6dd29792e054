"""No output of the command replaces, deletes or pollutes what the user owns (issue 26, item 1).

Every output option of every form (single-folder commands of the four families, ``--output`` reports, the
``--config`` / ``--gt --pred`` report form, the meta-measures) is pointed at every input role it has (a prediction,
a ground truth, a class image, the configuration file, the cache): each is exit 2 with one ``error:`` line, checked
before any measure runs, and every input file keeps its bytes. A new ``results.json`` beside the images stays
allowed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from segmetrics_torch.app.cli import main
from segmetrics_torch.reports import report, tables
from segmetrics_torch.reports.output_safety import report_owns

from .folders import H, W, fingerprint, png, write_families


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """Valid inputs of every family, a configuration file and a cache folder, in a fresh folder per case."""
    write_families(tmp_path)
    for i in range(2):
        masks = np.zeros((4, H, W), bool)
        masks[:, 2:12, 3:15] = True
        (tmp_path / "prop/pred").mkdir(parents=True, exist_ok=True)
        np.savez(tmp_path / "prop/pred" / f"p{i}.npz", masks=masks)
        inst = np.zeros((H, W), np.uint8)
        inst[2:10, 3:12] = 1
        png(tmp_path / "prop/gt" / f"p{i}.png", inst)
        png(tmp_path / "prop/cls" / f"p{i}.png", inst * 7)
    (tmp_path / "eval.yaml").write_text(
        "output: report\ndatasets:\n  D: sod/gt\nmethods:\n  M: sod/pred\nfamilies: [foreground]\n", encoding="utf-8"
    )
    (tmp_path / "cachedir").mkdir()
    (tmp_path / "cachedir" / "0123abcd.json").write_text("{}", encoding="utf-8")
    return tmp_path


def _fg(r: Path, *extra: str) -> list[str]:
    return ["evaluate", "foreground", "--pred", str(r / "sod/pred"), "--gt", str(r / "sod/gt"), "--no-progress", *extra]


def _bdry(r: Path, *extra: str) -> list[str]:
    return ["evaluate", "boundary", "--pred", str(r / "bdry/pred"), "--gt", str(r / "bdry/gt"), "--no-progress", *extra]


def _part(r: Path, *extra: str) -> list[str]:
    return [
        "evaluate",
        "partition",
        "--pred",
        str(r / "part/pred"),
        "--gt",
        str(r / "part/gt"),
        "--no-progress",
        *extra,
    ]


def _prop(r: Path, *extra: str) -> list[str]:
    return [
        "evaluate",
        "proposals",
        "--pred",
        str(r / "prop/pred"),
        "--gt",
        str(r / "prop/gt"),
        "--gt-classes",
        str(r / "prop/cls"),
        "--no-progress",
        *extra,
    ]


def _report(r: Path, *extra: str) -> list[str]:
    return [
        "evaluate",
        "--gt",
        str(r / "sod/gt"),
        "--pred",
        f"M={r / 'sod/pred'}",
        "--family",
        "foreground",
        "--output",
        str(r / "out"),
        "--no-progress",
        "--figures",
        "none",
        *extra,
    ]


def _config(r: Path, *extra: str) -> list[str]:
    return ["evaluate", "--config", str(r / "eval.yaml"), "--no-progress", "--figures", "none", *extra]


def _symlink_to_pred(r: Path) -> Path:
    link = r / "elsewhere.png"
    link.symlink_to(r / "sod/pred/im0.png")
    return link


def _hardlink_to_gt(r: Path) -> Path:
    link = r / "hard.json"
    os.link(r / "sod/gt/im1.png", link)
    return link


def _json_config_in_report(r: Path) -> list[str]:
    (r / "out").mkdir()
    data = {"output": ".", "datasets": {"D": "../sod/gt"}, "methods": {"M": "../sod/pred"}, "families": ["foreground"]}
    (r / "out" / "results.json").write_text(json.dumps(data), encoding="utf-8")
    return ["evaluate", "--config", str(r / "out" / "results.json"), "--no-progress", "--figures", "none"]


def _preds_inside_figures(r: Path) -> list[str]:
    (r / "out/figures").mkdir(parents=True)
    os.rename(r / "sod/pred", r / "out/figures/pred")
    return [
        "evaluate",
        "foreground",
        "--pred",
        str(r / "out/figures/pred"),
        "--gt",
        str(r / "sod/gt"),
        "--output",
        str(r / "out"),
        "--no-progress",
    ]


def _bsr_file_linked_to_pred(r: Path) -> list[str]:
    (r / "bsr").mkdir()
    (r / "bsr" / "eval_bdry.txt").symlink_to(r / "bdry/pred/b0.png")
    return _bdry(r, "--out-dir", str(r / "bsr"))


@dataclass(frozen=True)
class Case:
    id: str
    argv: Callable[[Path], list[str]]
    match: str  # regex the error line matches


CASES = [
    # evaluate foreground (single folder): --json, --csv, --per-image-csv x prediction, GT
    Case(
        "fg-json-pred",
        lambda r: _fg(r, "--json", str(r / "sod/pred/im0.png")),
        r"--json .*im0\.png is a file of the prediction folder",
    ),
    Case(
        "fg-json-gt",
        lambda r: _fg(r, "--json", str(r / "sod/gt/im0.png")),
        r"--json .* ground-truth folder .* would replace",
    ),
    Case(
        "fg-csv-gt",
        lambda r: _fg(r, "--csv", str(r / "sod/gt/im1.png")),
        r"--csv .*im1\.png is a file of the ground-truth folder",
    ),
    Case(
        "fg-per-image-pred",
        lambda r: _fg(r, "--per-image-csv", str(r / "sod/pred/im2.png")),
        r"--per-image-csv .* prediction folder",
    ),
    Case(
        "fg-json-new-image-in-pred",
        lambda r: _fg(r, "--json", str(r / "sod/pred/new.jpg")),
        r"would be read as an input by the next run's pairing",
    ),
    Case(
        "fg-csv-new-image-in-gt", lambda r: _fg(r, "--csv", str(r / "sod/gt/table.TIF")), r"would be read as an input"
    ),
    Case(
        "fg-json-symlink-to-pred",
        lambda r: _fg(r, "--json", str(_symlink_to_pred(r))),
        r"prediction folder .* would replace",
    ),
    Case("fg-json-hardlink-to-gt", lambda r: _fg(r, "--json", str(_hardlink_to_gt(r))), r"a hard or symbolic link"),
    Case(
        "fg-json-and-csv-same-file",
        lambda r: _fg(r, "--json", str(r / "x.csv"), "--csv", str(r / "x.csv")),
        r"--json and --csv name the same file",
    ),
    # evaluate foreground --output (the report of one method): the folder x prediction, GT, cache
    Case(
        "fg-output-is-pred",
        lambda r: _fg(r, "--output", str(r / "sod/pred")),
        r"the output folder .* is the prediction folder",
    ),
    Case("fg-output-is-gt", lambda r: _fg(r, "--output", str(r / "sod/gt")), r"is the ground-truth folder"),
    Case(
        "fg-output-holds-pred-in-figures",
        _preds_inside_figures,
        r"prediction folder .* is inside .*figures, which the output folder",
    ),
    # the report form (--gt/--pred and --config): --json, --csv, --per-image-csv, --output, --cache x every role
    Case(
        "report-json-pred",
        lambda r: _report(r, "--json", str(r / "sod/pred/im1.png")),
        r"--json .* prediction folder of M on",
    ),
    Case("report-csv-gt", lambda r: _report(r, "--csv", str(r / "sod/gt/im0.png")), r"--csv .* ground-truth folder of"),
    Case(
        "report-per-image-new-in-gt",
        lambda r: _report(r, "--per-image-csv", str(r / "sod/gt/rows.png")),
        r"would be read as an input",
    ),
    Case(
        "report-cache-is-pred",
        lambda r: _report(r, "--cache", str(r / "sod/pred")),
        r"the cache folder .* is the prediction folder",
    ),
    Case(
        "report-output-is-gt",
        lambda r: [
            "evaluate",
            "--gt",
            str(r / "sod/gt"),
            "--pred",
            f"M={r / 'sod/pred'}",
            "--family",
            "foreground",
            "--output",
            str(r / "sod/gt"),
            "--no-progress",
        ],
        r"is the ground-truth folder",
    ),
    Case(
        "report-json-in-cache",
        lambda r: _report(r, "--cache", str(r / "cachedir"), "--json", str(r / "cachedir/0123abcd.json")),
        r"inside the cache folder",
    ),
    Case(
        "report-json-new-in-cache",
        lambda r: _report(r, "--cache", str(r / "cachedir"), "--json", str(r / "cachedir/run.json")),
        r"inside the cache folder",
    ),
    Case(
        "config-json-is-config",
        lambda r: _config(r, "--json", str(r / "eval.yaml")),
        r"--json .*eval\.yaml is the configuration file",
    ),
    Case(
        "config-csv-is-config",
        lambda r: _config(r, "--csv", str(r / "eval.yaml")),
        r"--csv .* is the configuration file",
    ),
    Case(
        "config-per-image-is-config",
        lambda r: _config(r, "--per-image-csv", str(r / "eval.yaml")),
        r"is the configuration file",
    ),
    Case(
        "config-output-replaces-config",
        _json_config_in_report,
        r"configuration file .*results\.json is a file that the output folder",
    ),
    Case(
        "config-output-is-pred",
        lambda r: _config(r, "--output", str(r / "sod/pred")),
        r"is the prediction folder of M on D",
    ),
    Case(
        "config-cache-is-gt",
        lambda r: _config(r, "--cache", str(r / "sod/gt")),
        r"the cache folder .* is the ground-truth folder",
    ),
    # evaluate boundary: --json, --per-image-csv, --out-dir (BSR files) x prediction, GT
    Case("bdry-json-pred", lambda r: _bdry(r, "--json", str(r / "bdry/pred/b0.png")), r"--json .* prediction folder"),
    Case(
        "bdry-per-image-gt-mat",
        lambda r: _bdry(r, "--per-image-csv", str(r / "bdry/gt/b1.mat")),
        r"ground-truth folder",
    ),
    Case(
        "bdry-json-new-mat-in-gt", lambda r: _bdry(r, "--json", str(r / "bdry/gt/x.mat")), r"x\.mat in .* would be read"
    ),
    Case(
        "bdry-out-dir-file-links-to-pred",
        _bsr_file_linked_to_pred,
        r"--out-dir \(eval_bdry\.txt\) .* prediction folder",
    ),
    # evaluate partition: --json, --per-image-csv x prediction, GT
    Case("part-json-gt", lambda r: _part(r, "--json", str(r / "part/gt/b0.mat")), r"ground-truth folder"),
    Case(
        "part-per-image-new-in-pred",
        lambda r: _part(r, "--per-image-csv", str(r / "part/pred/new.png")),
        r"would be read",
    ),
    # evaluate proposals: --json, --per-image-csv, --plot x prediction (.npz), GT, class images
    Case("prop-json-pred-npz", lambda r: _prop(r, "--json", str(r / "prop/pred/p0.npz")), r"prediction folder"),
    Case(
        "prop-plot-new-in-gt", lambda r: _prop(r, "--plot", str(r / "prop/gt/recall.png")), r"--plot .* would be read"
    ),
    Case("prop-per-image-class", lambda r: _prop(r, "--per-image-csv", str(r / "prop/cls/p1.png")), r"class folder"),
    # segmetrics meta: --json x prediction, GT
    Case(
        "meta-partition-json-gt",
        lambda r: ["meta", "partition", "--gt", str(r / "bdry/gt"), "--json", str(r / "bdry/gt/b0.mat")],
        r"ground-truth folder",
    ),
    Case(
        "meta-foreground-json-pred",
        lambda r: [
            "meta",
            "foreground",
            "--pred",
            str(r / "sod/pred"),
            "--gt",
            str(r / "sod/gt"),
            "--json",
            str(r / "sod/pred/im0.png"),
        ],
        r"prediction folder",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_no_output_touches_an_input(case: Case, root: Path, capsys) -> None:
    argv = case.argv(root)
    before = fingerprint(root)
    status = main(argv)
    err = capsys.readouterr().err
    assert status == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    assert __import__("re").search(case.match, lines[0]), lines[0]
    after = fingerprint(root)
    assert after == before  # no input replaced, none removed, nothing new (checked before any measure runs)


def test_every_output_option_is_covered() -> None:
    """The matrix names every output option of every form at least once."""
    ids = " ".join(c.id for c in CASES)
    for needed in (
        "fg-json",
        "fg-csv",
        "fg-per-image",
        "fg-output",
        "report-json",
        "report-csv",
        "report-per-image",
        "report-cache",
        "report-output",
        "config-json",
        "config-csv",
        "config-per-image",
        "config-output",
        "config-cache",
        "bdry-json",
        "bdry-per-image",
        "bdry-out-dir",
        "part-json",
        "part-per-image",
        "prop-json",
        "prop-plot",
        "prop-per-image",
        "meta-partition-json",
        "meta-foreground-json",
    ):
        assert needed in ids, needed


def test_results_json_beside_the_images_is_allowed(root: Path, capsys) -> None:
    assert main(_fg(root, "--json", str(root / "sod/pred/results.json"))) == 0, capsys.readouterr().err
    assert json.loads((root / "sod/pred/results.json").read_text())["num_images"] == 3


def test_bsr_files_in_the_prediction_folder_are_allowed(root: Path, capsys) -> None:
    """BSR's eval_bdry*.txt beside the maps (as its benchmark scripts often do) neither replace nor pollute."""
    assert main(_bdry(root, "--out-dir", str(root / "bdry/pred"), "--thresholds", "5")) == 0, capsys.readouterr().err
    assert (root / "bdry/pred/eval_bdry.txt").is_file()


def test_an_html_folder_above_the_inputs_writes_beside_them_only(root: Path, capsys) -> None:
    """docs/evaluate.md: a folder above the inputs is fine for ``--html``; it writes its page and assets only (the
    inputs byte for byte as they were); the input folder itself, or one of the report's own subfolders holding an
    input, is refused."""
    sod = root / "sod"
    before = fingerprint(sod)
    assert main(_fg(root, "--html", str(sod))) == 0, capsys.readouterr().err
    assert (sod / "index.html").is_file() and fingerprint(sod / "pred") == before_of(before, "pred")
    assert fingerprint(sod / "gt") == before_of(before, "gt")
    assert main(_fg(root, "--html", str(sod / "gt"))) == 2
    assert "error:" in capsys.readouterr().err


def before_of(prints: dict, sub: str) -> dict:
    return {k.split("/", 1)[1]: v for k, v in prints.items() if k.split("/", 1)[0] == sub}


def test_csv_that_is_not_a_table_of_the_command(root: Path, capsys) -> None:
    """A binary file outside the inputs is not read as text (was: exit 1, unexpected UnicodeDecodeError)."""
    photo = root / "photo.png"
    photo.write_bytes((root / "sod/gt/im1.png").read_bytes())
    assert main(_fg(root, "--csv", str(photo), "--json", str(root / "r.json"))) == 2
    err = capsys.readouterr().err
    assert "--csv" in err and "is not a CSV table this command wrote" in err and "UTF-8" in err
    assert not (root / "r.json").exists()  # checked before any measure runs: nothing is written


def test_csv_of_another_kind_is_rejected_before_any_measure(root: Path, capsys) -> None:
    runs = root / "runs.csv"
    runs.write_text("method,dataset,image,MAE\nA,D,im0,0.1\n", encoding="utf-8")
    assert main(_fg(root, "--csv", str(runs), "--json", str(root / "r.json"))) == 2
    err = capsys.readouterr().err
    assert "is not a CSV table this command wrote" in err and "method, dataset, image" in err
    assert not (root / "r.json").exists()
    assert runs.read_text(encoding="utf-8") == "method,dataset,image,MAE\nA,D,im0,0.1\n"


def test_one_csv_collects_runs_with_different_measures(root: Path, capsys) -> None:
    runs = root / "runs.csv"
    assert main(_fg(root, "--csv", str(runs), "--measures", "mae", "--name", "A")) == 0
    assert main(_fg(root, "--csv", str(runs), "--measures", "mae,s", "--name", "B")) == 0
    capsys.readouterr()
    lines = runs.read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    assert header[:3] == ["method", "dataset", "num_images"] and "mae" in header and len(header) == 5
    rows = {line.split(",")[0]: dict(zip(header, line.split(","), strict=True)) for line in lines[1:]}
    assert set(rows) == {"A", "B"}
    s_key = header[4]
    assert rows["A"][s_key] == "" and rows["B"][s_key] != ""  # A did not compute it: an empty cell


def test_a_manifest_removes_only_report_files(tmp_path: Path) -> None:
    """A manifest naming a file the report never writes (edited, or of another tool) does not remove that file."""
    (tmp_path / "eval.yaml").write_text("x", encoding="utf-8")
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "old.png").write_text("x", encoding="utf-8")
    (tmp_path / report.MANIFEST).write_text(
        json.dumps({"files": ["eval.yaml", "figures/old.png", "../outside.txt"]}), encoding="utf-8"
    )
    (tmp_path.parent / "outside.txt").write_text("x", encoding="utf-8")
    removed = report.replace_manifest(tmp_path, ["results.json"])
    assert removed == ["figures/old.png"]
    assert (tmp_path / "eval.yaml").exists() and (tmp_path.parent / "outside.txt").exists()


def test_report_owns_names_what_render_writes() -> None:
    for relative in (
        "results.json",
        "tables.md",
        "tables.tex",
        "combined.xlsx",
        "csv/a_foreground.csv",
        "figures/grid_foreground_pr.png",
    ):
        assert report_owns(relative), relative
    for relative in ("eval.yaml", "pred/im0.png", "../x", "/etc/passwd", "cache/abc.json"):
        assert not report_owns(relative), relative


def test_a_folder_that_cannot_be_listed_is_named_alone(tmp_path: Path, monkeypatch) -> None:
    """Only the ground-truth folder unreadable: the error names it, not both folders (root runs the suite, so the
    permission error is raised by a stand-in for ``Path.iterdir``)."""
    from segmetrics_torch.datasets.folders import open_folders
    from segmetrics_torch.errors import InputError

    for folder in ("pred", "gt"):
        png(tmp_path / folder / "a.png", np.zeros((4, 4), np.uint8))
    iterdir = Path.iterdir

    def refuse(self: Path):
        if self.name == "gt":
            raise PermissionError(13, "Permission denied", str(self))
        return iterdir(self)

    monkeypatch.setattr(Path, "iterdir", refuse)
    with pytest.raises(InputError, match=r"^cannot list the folder .*gt: Permission denied$"):
        open_folders(tmp_path / "pred", tmp_path / "gt", "foreground")


@pytest.mark.parametrize("relative", ["results.json", "tables.md", "csv/sod_foreground_per_image.csv"])
def test_a_report_never_replaces_a_users_file_of_its_names(root: Path, relative: str, capsys) -> None:
    """A folder without a report's manifest holding the user's own file of a report's name: refused, the file as it
    was (a top-level name before anything runs; a file of csv/ once its name is known, before anything is written);
    a folder an earlier report wrote is written again as before."""
    out = root / "out"
    (out / relative).parent.mkdir(parents=True)
    (out / relative).write_text("mine\n", encoding="utf-8")
    assert main(_report(root)) == 2
    err = capsys.readouterr().err
    assert f"holds {relative}, which the report would replace but no report wrote" in err, err
    assert (out / relative).read_text(encoding="utf-8") == "mine\n"
    (out / relative).unlink()
    assert main(_report(root)) == 0, capsys.readouterr().err
    assert main(_report(root)) == 0, capsys.readouterr().err  # its own files, listed in its manifest
    capsys.readouterr()


def test_an_earlier_report_without_a_manifest_is_a_reports_own(root: Path, capsys) -> None:
    """A report of a version before the manifest (its results.json names a segmetrics_version) is replaced."""
    assert main(_report(root)) == 0
    (root / "out" / report.MANIFEST).unlink()
    assert main(_report(root)) == 0, capsys.readouterr().err
    capsys.readouterr()


def test_an_interrupted_move_leaves_every_moved_file_in_the_manifest(tmp_path: Path, monkeypatch) -> None:
    """The manifest lists the new files before they are moved in: an interruption after the first move leaves no
    report file that the next run would refuse as the user's."""
    import os

    out = tmp_path / "out"
    report.write_report_folder(out, {"results.json": lambda p: p.write_text("{}", encoding="utf-8")})
    real_replace, calls = os.replace, []

    def interrupted(src, dst):
        calls.append(dst)
        if len(calls) == 3:  # the manifest, tables.md moved in, then the interruption
            raise KeyboardInterrupt
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", interrupted)
    files = {name: (lambda p: p.write_text("x", encoding="utf-8")) for name in ("tables.md", "tables.tex")}
    with pytest.raises(KeyboardInterrupt):
        report.write_report_folder(out, files)
    monkeypatch.setattr(os, "replace", real_replace)
    assert (out / "tables.md").is_file() and not (out / "tables.tex").exists()
    assert report.foreign_report_files(out, ["results.json", "tables.md", "tables.tex"]) == []
    report.write_report_folder(out, files)  # the next run: no refusal


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("method,dataset,num_images,mae\nX,Y,3,0.5,EXTRA_NOTE\n", "line 2 has more cells than the header"),
        ("method,dataset,num_images,mae,note,note\nX,Y,3,0.5,first,second\n", "column 'note' is repeated"),
    ],
)
@pytest.mark.parametrize("option", ["--csv", "--per-image-csv"])
def test_a_table_whose_cells_a_merge_would_drop_is_refused(
    root: Path, capsys, text: str, why: str, option: str
) -> None:
    """A cell past the header's last column, or one of two columns of one name, has no place in a merged table: the
    merge dropped it silently (exit 0); now the file is refused before any measure runs and kept byte for byte."""
    if option == "--per-image-csv":
        text = text.replace("num_images", "image")
    table = root / "notes.csv"
    table.write_text(text, encoding="utf-8")
    assert main(_fg(root, option, str(table), "--json", str(root / "r.json"))) == 2
    err = capsys.readouterr().err
    assert option in err and why in err
    assert table.read_text(encoding="utf-8") == text and not (root / "r.json").exists()


def test_a_table_with_empty_trailing_cells_is_merged(tmp_path: Path) -> None:
    """A spreadsheet's trailing comma (empty cells past the header) loses nothing in a merge: the table is taken."""
    table = tmp_path / "runs.csv"
    table.write_text("method,dataset,num_images,mae\nA,D,3,0.5,\n", encoding="utf-8")
    rows = [{"method": "B", "dataset": "D", "num_images": 2, "mae": 0.25}]
    assert tables.write_run_files(None, [(table, rows, ("method", "dataset"), "--csv")]) == ["updated"]
    assert table.read_text(encoding="utf-8").splitlines() == [
        "method,dataset,num_images,mae",
        "A,D,3,0.5",
        "B,D,2,0.25",
    ]


def test_an_input_read_as_a_tree_holds_no_output(tmp_path: Path) -> None:
    """``InputFolder(..., tree=True)`` (a folder read whole, DAVIS' or SBD's): one rule of ``check_outputs`` where the
    DAVIS and SBD forms and the protocol reports each had a copy: no output anywhere inside it, no folder output that
    makes entries anywhere in it holding it; others may hold it (a report folder above its inputs)."""
    from segmetrics_torch.errors import InputError
    from segmetrics_torch.reports.output_safety import FolderOutput, InputFolder, check_outputs, report_folder

    tree = InputFolder("the results folder", tmp_path / "data" / "results", tree=True)
    (tmp_path / "data" / "results" / "seq").mkdir(parents=True)
    with pytest.raises(InputError, match=r"--json .*r\.json is inside the results folder .*every file of its tree"):
        check_outputs({"--json": tmp_path / "data" / "results" / "seq" / "r.json"}, inputs=[tree])
    with pytest.raises(InputError, match=r"--out .* is the results folder"):
        check_outputs({}, folders=[FolderOutput("--out", tmp_path / "data" / "results")], inputs=[tree])
    with pytest.raises(InputError, match=r"--out-dir .* holds the results folder"):
        check_outputs({}, folders=[FolderOutput("--out-dir", tmp_path / "data", anywhere=True)], inputs=[tree])
    check_outputs({}, folders=[FolderOutput("--out", tmp_path / "data")], inputs=[tree])  # the files it names only
    check_outputs({}, folders=[report_folder(tmp_path / "data")], inputs=[tree])
    check_outputs({"--json": tmp_path / "data" / "results" / "seq" / "r.json"}, inputs=[InputFolder("r", tree.path)])


def test_a_file_counts_in_a_tree_where_its_name_is_written(tmp_path: Path) -> None:
    """A link at an output's name that points into a tree is replaced, not written through: not refused (a review:
    the first version of the tree rule resolved the link)."""
    from segmetrics_torch.reports.output_safety import InputFolder, check_outputs

    tree = InputFolder("the results folder", tmp_path / "results", tree=True)
    (tmp_path / "results" / "seq").mkdir(parents=True)
    (tmp_path / "results" / "seq" / "old.csv").write_text("x")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "global.csv").symlink_to(tmp_path / "results" / "seq" / "old.csv")
    check_outputs({"--out (global)": tmp_path / "out" / "global.csv"}, inputs=[tree])


def test_an_existing_folder_that_cannot_be_written_is_named_so(tmp_path: Path, monkeypatch) -> None:
    """Not "cannot be made": it exists (a review)."""
    from segmetrics_torch.errors import InputError
    from segmetrics_torch.reports import output_safety

    folder = tmp_path / "out"
    folder.mkdir()
    real = os.access
    monkeypatch.setattr(output_safety.os, "access", lambda path, mode: Path(path) != folder and real(path, mode))
    with pytest.raises(InputError, match=r"--out .*out is a folder this run cannot write into"):
        output_safety.check_outputs({}, folders=[output_safety.FolderOutput("--out", folder)])
