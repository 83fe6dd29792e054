"""``segmetrics evaluate davis --config``: a report of 2 methods x 2 (root, set, task) datasets whose numbers and CSVs
equal the single form's; the per-sequence figure (in ``--out`` and in the report); ``settings.device`` is the device
used; bad configurations; an output inside an input, or an input the evaluation rejects, writes nothing."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from segmetrics_torch.app.cli import main
from segmetrics_torch.functional import evaluate_davis
from segmetrics_torch.reports.protocol_report import protocol_config_from_mapping, resolved_device_name
from segmetrics_torch.reports.video_figures import plot_davis_per_sequence
from tests.video.layout import moving_objects, perturb, write_davis

CONFIG = """\
output: report
figures: [png]
datasets:
  val-semi: {root: DAVIS, task: semi-supervised}
  val-unsup: {root: DAVIS, set: val, task: unsupervised, decay_edges: corrected}
methods:
  A: {val-semi: A/semi, val-unsup: A/unsup}
  B: B/{dataset}
"""


@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One DAVIS root (both tasks' annotations of two sequences) and four results folders."""
    root = tmp_path_factory.mktemp("davis-grid")
    rng = np.random.default_rng(7)
    gts = {f"seq-{i}": moving_objects(rng, 6, 26, 34, k, void=i == 0, vanish=i == 1) for i, k in enumerate((2, 3))}
    folders = {("semi-supervised", "A/semi"), ("semi-supervised", "B/val-semi"), ("unsupervised", "A/unsup"),
               ("unsupervised", "B/val-unsup")}  # fmt: skip
    for task, folder in sorted(folders):
        seqs = {name: (gt, perturb(rng, gt, max_id=int(gt[0][gt[0] < 255].max()))) for name, gt in gts.items()}
        write_davis(root / "DAVIS", root / folder, seqs, task=task)
    return root


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    status = main(["evaluate", "davis", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


def _config(folder: Path, text: str = CONFIG, name: str = "eval.yaml") -> Path:
    (folder / name).write_text(text, encoding="utf-8")
    return folder / name


def test_the_report_equals_the_single_form(grid: Path, tmp_path: Path, capsys) -> None:
    before = _snapshot(grid)
    config = _config(grid)
    status, out, err = _run(capsys, "--config", config)
    assert status == 0, err
    report = grid / "report"
    assert {k: v for k, v in _snapshot(grid).items() if not k.startswith(str(report)) and k != str(config)} == before
    results = json.loads((report / "results.json").read_text())["results"]
    options = {"val-semi": ["--task", "semi-supervised"],
               "val-unsup": ["--task", "unsupervised", "--decay-edges", "corrected"]}  # fmt: skip
    folders = {("A", "val-semi"): "A/semi", ("A", "val-unsup"): "A/unsup", ("B", "val-semi"): "B/val-semi",
               ("B", "val-unsup"): "B/val-unsup"}  # fmt: skip
    combined = {(r["method"], r["dataset"], r["measure"]): float(r["value"])
                for r in csv.DictReader((report / "csv" / "combined_davis.csv").open())}  # fmt: skip
    for (method, dataset), folder in folders.items():
        out_dir, single = tmp_path / f"{method}-{dataset}", tmp_path / f"{method}-{dataset}.json"
        argv = ["--davis-root", grid / "DAVIS", "--results", grid / folder, *options[dataset]]
        status, _, err = _run(capsys, *argv, "--out", out_dir, "--json", single)
        assert status == 0, err
        want, got = json.loads(single.read_text()), results[dataset][method]
        assert got["global"] == want["global"] and got["objects"] == want["objects"]  # bit for bit, through JSON
        assert got["settings"]["device"] == want["settings"]["device"] == "cpu"
        for name in ("global_results-val.csv", "per-sequence_results-val.csv"):  # the reference's texts
            assert (report / "csv" / f"{dataset}__{method}_{name}").read_text() == (out_dir / name).read_text()
        for key, value in want["global"].items():
            assert combined[(method, dataset, key)] == value
        assert (out_dir / "per-sequence_results-val.png").stat().st_size > 0  # the single form's figure
        assert (report / "figures" / f"{dataset}__{method}_per_sequence.png").stat().st_size > 0
    markdown = (report / "combined.md").read_text()
    assert "val-semi J&F ↑" in markdown and "val-unsup J-Decay ↓" in markdown
    assert "val-semi: video object segmentation (DAVIS)" in out


def test_per_sequence_values_are_the_library_s(grid: Path, monkeypatch, tmp_path: Path, capsys) -> None:
    drawn: list = []
    monkeypatch.setattr(
        "segmetrics_torch.app.davis_command.plot_davis_per_sequence", lambda rows, path, **kw: drawn.append(rows)
    )
    status, _, err = _run(capsys, "--davis-root", grid / "DAVIS", "--results", grid / "A/semi", "--task",
                          "semi-supervised", "--out", tmp_path / "o", "--device", "auto")  # fmt: skip
    assert status == 0, err
    assert drawn == [evaluate_davis(grid / "DAVIS", grid / "A/semi").per_sequence()]


def test_settings_device_is_the_device_used(grid: Path, tmp_path: Path, capsys) -> None:
    argv = ["--davis-root", grid / "DAVIS", "--results", grid / "A/semi", "--task", "semi-supervised"]
    status, _, err = _run(capsys, *argv, "--out", tmp_path / "o", "--device", "auto", "--json", tmp_path / "r.json")
    assert status == 0, err
    torch = pytest.importorskip("torch")
    expected = "cuda:0" if torch.cuda.is_available() else "cpu"
    assert json.loads((tmp_path / "r.json").read_text())["settings"]["device"] == expected
    assert resolved_device_name("cpu") == "cpu"
    if torch.cuda.is_available():
        assert resolved_device_name("cuda") == f"cuda:{torch.cuda.current_device()}"


def test_the_figure_function(tmp_path: Path) -> None:
    rows = {"a": {"jf_mean": 0.5, "j_mean": 0.4, "f_mean": 0.6}, "b": {"jf_mean": float("nan"), "j_mean": 0.1,
            "f_mean": 0.2}}  # fmt: skip
    paths = plot_davis_per_sequence(rows, [tmp_path / "f.png", tmp_path / "f.svg"], title="t")
    assert [p.stat().st_size > 0 for p in paths] == [True, True]
    with pytest.raises(ValueError, match="per_sequence\\['a'\\]"):
        plot_davis_per_sequence({"a": {"j_mean": 0.1}}, tmp_path / "g.png")
    with pytest.raises(ValueError, match="at least one sequence"):
        plot_davis_per_sequence({}, tmp_path / "g.png")


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        (CONFIG.replace("task: semi-supervised}", "task: semi}").replace("decay_edges: corrected", "decay_edges: x")
         + "device: tpu\nworkers: 0\n",
         ["4 mistakes", "datasets.val-semi.task: expected semi-supervised or unsupervised, got 'semi'",
          "datasets.val-unsup.decay_edges: expected reference or corrected", "device: expected cpu, cuda, cuda:N or "
          "auto, got 'tpu'", "workers: expected a positive integer, got 0"]),
        (CONFIG.replace("{root: DAVIS, task: semi-supervised}", "{task: semi-supervised, sets: val}"),
         ["2 mistakes", "datasets.val-semi: unknown key(s) sets", "datasets.val-semi.root: missing"]),
        (CONFIG.replace("methods:\n", "methods: []\nx:\n"), ["methods: expected a non-empty mapping"]),
        (CONFIG.replace("  B: B/{dataset}\n", "  A: B/{dataset}\n"), ["the key 'A' appears twice"]),
    ],
    ids=["four-mistakes", "entry-keys", "methods-not-a-mapping", "duplicate-method"],
)  # fmt: skip
def test_bad_configurations(tmp_path: Path, capsys, text: str, needles: list[str]) -> None:
    status, _, err = _run(capsys, "--config", _config(tmp_path, text))
    assert status == 2 and err.startswith("error: ") and err.count("error:") == 1
    for needle in needles:
        assert needle in err
    assert not (tmp_path / "report").exists()


@pytest.mark.parametrize(
    ("output", "needle"),
    [("DAVIS/report", "is inside the DAVIS root of val-semi"), ("A/semi/seq-0/report", "is inside the folder of A on "
     "val-semi"), ("DAVIS", "is the DAVIS root of val-semi")],
)  # fmt: skip
def test_an_output_inside_an_input_is_refused(grid: Path, capsys, output: str, needle: str) -> None:
    config = _config(grid, CONFIG.replace("output: report", f"output: {output}"), "inside.yaml")
    before = _snapshot(grid)
    status, _, err = _run(capsys, "--config", config)
    assert status == 2 and needle in err and err.count("error:") == 1
    assert _snapshot(grid) == before


def test_an_input_the_evaluation_rejects_writes_nothing(grid: Path, tmp_path: Path, capsys) -> None:
    text = CONFIG.replace("root: DAVIS", f"root: {grid}/DAVIS").replace("A/", f"{grid}/A/")
    text = text.replace("B: B/{dataset}", f"B: {tmp_path}/B/{{dataset}}")
    (tmp_path / "B").mkdir()
    status, _, err = _run(capsys, "--config", _config(tmp_path, text))
    assert status == 2 and err.startswith("error: val-semi / B: ") and err.count("error:") == 1
    assert not (tmp_path / "report").exists()


def test_ctrl_c_is_exit_130_and_nothing_written(grid: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    import segmetrics_torch.reports.protocol_report as protocol_report

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(protocol_report, "evaluate_davis", interrupted)
    text = CONFIG.replace("root: DAVIS", f"root: {grid}/DAVIS").replace("A/", f"{grid}/A/")
    status, _, _ = _run(capsys, "--config", _config(tmp_path, text.replace("B: B/", f"B: {grid}/B/")))
    assert status == 130
    assert not (tmp_path / "report").exists()


def test_a_script_reads_the_same_configuration() -> None:
    config = protocol_config_from_mapping(
        {"datasets": {"d": {"root": "R", "task": "unsupervised", "max_proposals": 5}}, "methods": {"m": {"d": "x"}},
         "device": "auto", "chunk_frames": 4},
        "davis",
        "/base",
    )  # fmt: skip
    (dataset, _, folder), *_ = config.pairs()
    assert dataset.settings == {"root": Path("/base/R"), "subset": "val", "task": "unsupervised", "max_proposals": 5}
    assert (folder, config.device, config.chunk_frames) == (Path("/base/x"), "auto", 4)


@pytest.mark.parametrize(
    "option", [["--device", "cuda:3"], ["--bound-th", "0.5"], ["--set", "test"], ["--workers", "9"]]
)
def test_an_option_the_configuration_sets_is_refused_beside_it(tmp_path: Path, capsys, option: list[str]) -> None:
    """A --config run takes these from each dataset's entry: given on the command line they are an error naming
    them, never silently ignored (a --device cuda run that ran on the CPU)."""
    status, _, err = _run(capsys, "--config", _config(tmp_path), *option)
    assert status == 2
    assert err.count("error:") == 1 and option[0] in err, err
    assert not (tmp_path / "report").exists()
