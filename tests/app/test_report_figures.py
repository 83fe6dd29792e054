"""The report's per-dataset figures keep the configuration's colours, order and highlight, the grids have an
E-measure panel set, boundary PR curves leave out thresholds without detections, and the iso-F lines take a colour
no method has (issue 28, item 7). The figures are read back from the drawn matplotlib objects."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from matplotlib.colors import to_hex

from segmetrics_torch.app.cli import main
from segmetrics_torch.reports import combined, figures as plots

pytest.importorskip("matplotlib")


def _data(root: Path) -> None:
    from PIL import Image

    rng = np.random.default_rng(0)
    for i in range(3):
        gt = np.zeros((24, 28), np.uint8)
        gt[5:15, 6:20] = 255
        (root / "gt").mkdir(parents=True, exist_ok=True)
        Image.fromarray(gt).save(root / "gt" / f"im{i}.png")
        for k, method in enumerate(("A", "B", "C")):
            (root / method).mkdir(exist_ok=True)
            noisy = np.clip(gt * (0.5 + 0.2 * k) + rng.integers(0, 90, gt.shape), 0, 255).astype(np.uint8)
            Image.fromarray(noisy).save(root / method / f"im{i}.png")


@pytest.fixture
def drawn(monkeypatch) -> dict[str, list[dict]]:
    """Every saved figure's lines: {first file name: [{"label", "color", "lw"}]}."""
    seen: dict[str, list[dict]] = {}

    def record(original):
        def save(fig, path):
            paths = [Path(path)] if isinstance(path, (str, Path)) else [Path(p) for p in path]
            seen[paths[0].name] = [
                {
                    "label": line.get_label(),
                    "color": to_hex(line.get_color()),
                    "lw": line.get_linewidth(),
                    "x": np.asarray(line.get_xdata(), dtype=float),
                }
                for ax in fig.axes
                for line in ax.get_lines()
            ]
            return original(fig, path)

        return save

    monkeypatch.setattr(plots, "_save_figure", record(plots._save_figure))
    monkeypatch.setattr(combined, "_save_figure", record(combined._save_figure))  # the grids' own reference
    return seen


def test_per_dataset_figures_follow_the_configuration(tmp_path: Path, drawn, capsys) -> None:
    _data(tmp_path)
    (tmp_path / "eval.yaml").write_text(
        "output: report\nfigures: [png]\nfamilies: [foreground]\ndatasets:\n  DS: gt\n"
        "methods:\n  A: A\n  B: B\n  C: C\n"
        "method_order: [C, A, B]\ncolors: {B: '#123456'}\nhighlight: C\n",
        encoding="utf-8",
    )
    assert main(["evaluate", "--config", str(tmp_path / "eval.yaml"), "--no-progress"]) == 0, capsys.readouterr().err
    for name in ("DS_foreground_pr.png", "DS_foreground_fmeasure.png", "DS_foreground_emeasure.png"):
        lines = {line["label"].split(" [")[0]: line for line in drawn[name] if " [" in line["label"]}
        assert lines["B"]["color"] == "#123456", name  # the configured colour
        assert lines["C"]["lw"] >= 2 * lines["A"]["lw"], name  # the highlight, thick
        assert lines["A"]["color"] == to_hex("C1"), name  # A is second in method_order: the cycle's second colour
        legend = [line["label"].split(" [")[0] for line in drawn[name] if " [" in line["label"]]
        assert legend == ["C", "A", "B"], name  # the legend (drawing) order is method_order
    assert "grid_foreground_emeasure.png" in drawn
    assert (tmp_path / "report/figures/grid_foreground_emeasure.png").is_file()


def test_boundary_pr_figures_leave_out_thresholds_without_detections(tmp_path: Path, drawn) -> None:
    recall = np.array([0.9, 0.6, 0.3, 0.005, 0.0])
    curves = {"A": {"recall": recall[recall >= 0.01], "precision": [0.4, 0.6, 0.8], "value": 0.6}}
    plots.plot_pr_curves(curves, tmp_path / "pr.png", iso_f=True)
    method_colours = {line["color"] for line in drawn["pr.png"] if line["label"].startswith("A ")}
    iso = [line for line in drawn["pr.png"] if line["label"].startswith("_")]
    assert iso and {line["color"] for line in iso} == {plots.ISO_F_COLOUR}
    assert plots.ISO_F_COLOUR not in method_colours and plots.ISO_F_COLOUR not in {to_hex(f"C{i}") for i in range(10)}


def test_the_report_drops_the_fall_to_zero(tmp_path: Path) -> None:
    from segmetrics_torch.reports.report import _pr_curves

    record = {
        "results": {
            "recall": [0.9, 0.5, 0.004, 0.0],
            "precision": [0.5, 0.7, 1.0, 0.0],
            "ods": {"f": 0.6, "recall": 0.5, "precision": 0.7},
        }
    }
    curve = _pr_curves({"A": record}, "boundary")["A"]
    assert list(curve["recall"]) == [0.9, 0.5] and list(curve["precision"]) == [0.5, 0.7]


def test_a_roc_figure_when_the_areas_under_roc_are_asked_for(tmp_path: Path, drawn, capsys) -> None:
    """``siaucroc`` among the measures: a per-dataset ROC figure (the mean dynamic TPR against FPR of each method,
    its siAUC-ROC in the legend, the chance diagonal); without it, none."""
    import json

    _data(tmp_path)
    config = (
        "output: {out}\nfigures: [png]\nfamilies: [foreground]\ndatasets:\n  DS: gt\n"
        "methods:\n  A: A\n  B: B\n{options}"
    )
    (tmp_path / "roc.yaml").write_text(
        config.format(out="with", options="options:\n  foreground: {measures: [maxf, siaucroc]}\n"), encoding="utf-8"
    )
    assert main(["evaluate", "--config", str(tmp_path / "roc.yaml"), "--no-progress"]) == 0, capsys.readouterr().err
    results = json.loads((tmp_path / "with/results.json").read_text(encoding="utf-8"))
    lines = {line["label"].split(" [")[0]: line for line in drawn["DS_foreground_roc.png"] if " [" in line["label"]}
    assert set(lines) == {"A", "B"}
    for method in ("A", "B"):
        assert f"siAUC-ROC={results_value(results, method):.3f}" in lines[method]["label"]
    chance = [line for line in drawn["DS_foreground_roc.png"] if " [" not in line["label"]]
    assert any(list(line["x"]) == [0.0, 1.0] for line in chance)
    (tmp_path / "plain.yaml").write_text(config.format(out="without", options=""), encoding="utf-8")
    assert main(["evaluate", "--config", str(tmp_path / "plain.yaml"), "--no-progress"]) == 0
    assert not list((tmp_path / "without/figures").glob("*roc*"))


def results_value(results: dict, method: str) -> float:
    """The method's siAUC-ROC in a report's results.json (searched: its nesting is the report's)."""
    found: list[float] = []

    def walk(node, path):
        if isinstance(node, dict):
            if "auc_roc" in node and method in path:
                found.append(float(node["auc_roc"]))
            for key, value in node.items():
                walk(value, (*path, key))

    walk(results, ())
    assert len(found) == 1, found
    return found[0]
