"""``segmetrics evaluate davis``: the two CSVs are the library's text, the JSON numbers are ``evaluate_davis``'s, on
synthetic DAVIS-layout folders of both tasks; bad input and an output inside an input folder are exit 2 with one
``error:`` line and nothing written; Ctrl-C is exit 130."""

from __future__ import annotations

import inspect
import json
import math
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from segmetrics_torch.app import davis_command
from segmetrics_torch.app.cli import main
from segmetrics_torch.app.cli_parser import build_parser
from segmetrics_torch.functional import davis_global_csv, davis_per_sequence_csv, evaluate_davis
from segmetrics_torch.reports.tables import format_table
from tests.conftest import interrupted
from tests.video.layout import moving_objects, perturb, save_mask, write_davis

TASKS = ("semi-supervised", "unsupervised")


def _folders(root: Path, task: str, *, objects: tuple[int, ...] = (2, 3), frames: int = 7) -> tuple[Path, Path]:
    """A DAVIS root and a results folder of len(objects) sequences (void pixels in the first, vanishing objects)."""
    rng = np.random.default_rng(len(objects) * 10 + frames + len(task))
    seqs = {}
    for i, k in enumerate(objects):
        gt = moving_objects(rng, frames, 30, 44, k, void=i == 0, vanish=i == 1)
        seqs[f"seq-{i}"] = (gt, perturb(rng, gt, max_id=k))
    davis, results = root / "DAVIS", root / "results"
    write_davis(davis, results, seqs, task=task)
    return davis, results


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    status = main(["evaluate", "davis", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


def _same(value: float | None, expected: float) -> bool:
    """A JSON number equals the library's (NaN is written as null)."""
    return (value is None and math.isnan(expected)) or (value is not None and value == expected)


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize(
    "options",
    [[], ["--decay-edges", "corrected", "--chunk-frames", "2", "--bound-th", "0.01", "--backend", "tensor"]],
)
def test_the_csvs_and_the_json_equal_the_library(tmp_path: Path, capsys, task: str, options: list[str]) -> None:
    davis, results = _folders(tmp_path / "in", task)
    before = _snapshot(tmp_path / "in")
    out, report = tmp_path / "out", tmp_path / "r.json"
    status, stdout, err = _run(
        capsys, "--davis-root", davis, "--results", results, "--task", task, "--out", out, "--json", report, *options
    )
    assert status == 0, err
    keywords = {"decay_edges": "corrected", "chunk_frames": 2, "bound_th": 0.01} if options else {}
    expected = evaluate_davis(davis, results, task=task, subset="val", **keywords)

    written = ["global_results-val.csv", "per-sequence_results-val.csv", "per-sequence_results-val.png"]
    assert sorted(p.name for p in out.iterdir()) == written
    assert (out / "global_results-val.csv").read_text(encoding="utf-8") == davis_global_csv(expected)
    assert (out / "per-sequence_results-val.csv").read_text(encoding="utf-8") == davis_per_sequence_csv(expected)
    row = expected.global_results()
    assert format_table({"results": row}, list(row)) in stdout
    assert _snapshot(tmp_path / "in") == before  # the inputs are untouched

    doc = json.loads(report.read_text(encoding="utf-8"))
    assert doc["global"] == row
    assert doc["settings"]["task"] == task and doc["settings"]["set"] == "val"
    assert doc["settings"]["decay_edges"] == keywords.get("decay_edges", "reference")
    assert doc["sequences"] == ["seq-0", "seq-1"]
    assert (
        [o["name"] for o in doc["objects"]]
        == [o.name for o in expected.objects]
        == [
            "seq-0_1",
            "seq-0_2",
            "seq-1_1",
            "seq-1_2",
            "seq-1_3",
        ]
    )
    for got, obj in zip(doc["objects"], expected.objects, strict=True):
        assert (got["object_id"], got["proposal_id"]) == (obj.object_id, obj.proposal_id)
        assert all(_same(got[key], value) for key, value in obj.stats.items()), (got, obj.stats)
        for key, frames in (("j", obj.j), ("f", obj.f)):
            assert len(got[key]) == len(frames)
            assert all(_same(a, b) for a, b in zip(got[key], frames.tolist(), strict=True))


def test_sequences_and_set_options(tmp_path: Path, capsys) -> None:
    davis, results = _folders(tmp_path / "in", "semi-supervised")
    (davis / "ImageSets/2017/test-dev.txt").write_text("seq-1\n")
    out = tmp_path / "out"
    status, _, err = _run(
        capsys, "--davis-root", davis, "--results", results, "--task", "semi-supervised", "--set", "test-dev",
        "--out", out,
    )  # fmt: skip
    assert status == 0, err
    expected = evaluate_davis(davis, results, subset="test-dev")
    assert [o.sequence for o in expected.objects] == ["seq-1"] * 3
    assert (out / "per-sequence_results-test-dev.csv").read_text() == davis_per_sequence_csv(expected)
    status, _, err = _run(
        capsys, "--davis-root", davis, "--results", results, "--task", "semi-supervised", "--sequences", "seq-0",
        "--out", out,
    )  # fmt: skip
    assert status == 0, err
    only = evaluate_davis(davis, results, sequences=["seq-0"])
    assert (out / "global_results-val.csv").read_text() == davis_global_csv(only)


def test_the_defaults_are_the_library_s() -> None:
    """Each option's default is ``evaluate_davis``'s (the parser imports no torch, so it repeats them)."""
    parser = build_parser()
    argv = ["evaluate", "davis", "--davis-root", "d", "--results", "r", "--task", "unsupervised", "--out", "o"]
    args = parser.parse_args(argv)
    defaults = {k: p.default for k, p in inspect.signature(evaluate_davis).parameters.items()}
    for key in davis_command.SETTINGS:
        if key != "task":
            assert getattr(args, key) == defaults[key], key
    assert (args.set, args.sequences, args.device) == (defaults["subset"], defaults["sequences"], defaults["device"])
    # the options --config refuses when changed: the same defaults
    assert {key: getattr(args, key) for key in davis_command.CONFIG_SET} == davis_command.CONFIG_SET


def _refused(capsys, root: Path, argv: list, match: str) -> str:
    """Exit 2, one ``error:`` line containing ``match``, nothing under ``root`` written or changed."""
    before = _snapshot(root)
    status, _, err = _run(capsys, *argv)
    lines = [line for line in err.splitlines() if line.strip()]
    assert status == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert match in lines[0], lines[0]
    assert _snapshot(root) == before
    assert not (root / "out").exists()
    return lines[0]


def test_bad_input_is_one_error_line_and_nothing_written(tmp_path: Path, capsys) -> None:
    davis, results = _folders(tmp_path / "in", "semi-supervised")
    argv = ["--davis-root", davis, "--results", results, "--task", "semi-supervised", "--out", tmp_path / "out"]
    argv += ["--json", tmp_path / "r.json"]
    _refused(capsys, tmp_path, [*argv, "--max-image-pixels", "100"], "sequence 'seq-0', frame 00000 (ground truth)")
    frame = results / "seq-1" / "00003.png"
    labels = np.asarray(Image.open(frame))
    Image.fromarray(np.stack([labels] * 3, axis=-1)).save(frame)  # an RGB PNG
    _refused(capsys, tmp_path, argv, "sequence 'seq-1', frame 00003 (result)")
    save_mask(frame, labels)
    (results / "seq-0" / "00002.png").unlink()  # a missing frame
    _refused(capsys, tmp_path, argv, "sequence 'seq-0', frame 00002 (result)")
    save_mask(results / "seq-0" / "00002.png", np.full((30, 44), 3, np.uint8))  # an id above seq-0's two objects
    _refused(capsys, tmp_path, argv, "sequence 'seq-0'")


def test_more_than_20_proposals_is_refused(tmp_path: Path, capsys) -> None:
    davis, results = _folders(tmp_path / "in", "unsupervised", objects=(2,), frames=4)
    proposals = np.zeros((30, 44), np.uint8)
    for k in range(1, 22):
        proposals[k, :] = k
    save_mask(results / "seq-0" / "00001.png", proposals)
    argv = ["--davis-root", davis, "--results", results, "--task", "unsupervised", "--out", tmp_path / "out"]
    _refused(capsys, tmp_path, argv, "seq-0")
    assert _run(capsys, *argv, "--max-proposals", "21")[0] == 0  # the limit is the option's


@pytest.mark.parametrize(
    ("where", "match"),
    [
        ("results/out", "--out {p} is inside the results folder"),
        ("results", "--out {p} is the results folder"),
        ("DAVIS", "--out {p} is the DAVIS root"),
        ("DAVIS/Annotations/480p/x", "--out {p} is inside the DAVIS root"),
    ],
)
def test_out_inside_an_input_folder_is_refused(tmp_path: Path, capsys, where: str, match: str) -> None:
    davis, results = _folders(tmp_path, "semi-supervised", objects=(1,), frames=3)
    out = tmp_path / where
    argv = ["--davis-root", davis, "--results", results, "--task", "semi-supervised", "--out", out]
    _refused(capsys, tmp_path, argv, match.format(p=out))
    assert not (out / "global_results-val.csv").exists()


@pytest.mark.parametrize("name", ["results/seq-0/00001.png", "results/seq-0/new.json", "DAVIS/x.json"])
def test_json_inside_an_input_folder_is_refused(tmp_path: Path, capsys, name: str) -> None:
    davis, results = _folders(tmp_path, "semi-supervised", objects=(1,), frames=3)
    argv = ["--davis-root", davis, "--results", results, "--task", "semi-supervised", "--out", tmp_path / "out"]
    _refused(capsys, tmp_path, [*argv, "--json", tmp_path / name], "--json")


@pytest.mark.parametrize("name", ["global_results-val.csv", "per-sequence_results-val.png"])
def test_json_onto_a_csv_output_is_refused(tmp_path: Path, capsys, name: str) -> None:
    """--json naming a file --out writes: the figure too (the JSON replaced it silently)."""
    pytest.importorskip("matplotlib")
    davis, results = _folders(tmp_path / "in", "semi-supervised", objects=(1,), frames=3)
    out = tmp_path / "given"
    out.mkdir()
    argv = ["--davis-root", davis, "--results", results, "--task", "semi-supervised", "--out", out]
    _refused(capsys, tmp_path, [*argv, "--json", out / name], "name the same file")
    assert not list(out.iterdir())


def test_the_outputs_are_written_together(tmp_path: Path, capsys, monkeypatch) -> None:
    """An interruption while the files are written leaves the previous run's set whole (the CSVs were moved in
    before the figure and the JSON were written: a new table beside an old JSON)."""
    pytest.importorskip("matplotlib")
    davis, results = _folders(tmp_path / "in", "semi-supervised", objects=(1,), frames=3)
    out, report = tmp_path / "out", tmp_path / "run.json"
    argv = ["--davis-root", davis, "--results", results, "--task", "semi-supervised", "--out", out, "--json", report]
    assert _run(capsys, *argv)[0] == 0
    for path in [*out.iterdir(), report]:
        path.write_bytes(b"the previous run's " + path.name.encode())
    before = _snapshot(tmp_path)

    monkeypatch.setattr(davis_command, "plot_davis_per_sequence", interrupted)
    assert _run(capsys, *argv)[0] == 130
    assert _snapshot(tmp_path) == before  # (hidden files too: no temporary file is left)


def test_ctrl_c_is_exit_130_and_nothing_written(tmp_path: Path, capsys, monkeypatch) -> None:
    davis, results = _folders(tmp_path / "in", "semi-supervised", objects=(1,), frames=3)

    monkeypatch.setattr(davis_command, "evaluate_davis", interrupted)
    status, _, _ = _run(
        capsys, "--davis-root", davis, "--results", results, "--task", "semi-supervised", "--out", tmp_path / "out"
    )
    assert status == 130
    assert not (tmp_path / "out").exists()


def test_out_above_the_input_folders_is_allowed(tmp_path: Path, capsys) -> None:
    """--out may hold the inputs (``--out .`` beside DAVIS/ and results/): it writes its two CSVs and the figure at
    its top, never inside them."""
    davis, results = _folders(tmp_path, "semi-supervised", objects=(1,), frames=3)
    argv = ["--davis-root", davis, "--results", results, "--task", "semi-supervised", "--out", tmp_path]
    status, _, err = _run(capsys, *argv)
    assert status == 0, err
    assert (tmp_path / "global_results-val.csv").is_file()
