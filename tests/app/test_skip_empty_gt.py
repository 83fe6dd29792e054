"""COD10K's convention: leave out the images of empty ground truth, counted and reported (issue 28, item 11)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

import segmetrics_torch as st
from segmetrics_torch.app.cli import main


def _batch() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    p = torch.rand(4, 20, 20, generator=gen)
    g = torch.zeros(4, 20, 20, dtype=torch.bool)
    g[0, 2:8, 2:8] = True
    g[2, 5:15, 5:15] = True
    return p, g


def test_metrics_leave_out_empty_ground_truths() -> None:
    p, g = _batch()
    metric = st.ForegroundMeasures(skip_empty_gt=True, include=["size_invariant_mae"])
    metric.update(p, g)
    reference = st.ForegroundMeasures(include=["size_invariant_mae"])
    reference.update(p[[0, 2]], g[[0, 2]])
    got, expected = metric.compute(), reference.compute()
    assert int(metric.count) == 2 and int(metric.skipped_empty_gt) == 2
    assert int(metric.included["size_invariant_mae"].count) == 2
    for key in ("mae", "s_measure", "weighted_f_measure", "size_invariant_mae"):
        torch.testing.assert_close(got[key], expected[key], rtol=0, atol=0)
    lists = st.WeightedFMeasure(skip_empty_gt=True)
    lists.update(list(p), list(g.to(torch.uint8) * 255))
    assert int(lists.count) == 2 and int(lists.skipped_empty_gt) == 2
    kept = st.MAE()
    kept.update(p, g)
    assert int(kept.count) == 4 and int(kept.skipped_empty_gt) == 0  # the default keeps them, as PySODMetrics


def test_forward_leaves_them_out_of_the_included_measures_too() -> None:
    """Lightning calls ``metric(preds, target)``: the included measures get the filtered batch there as well."""
    p, g = _batch()
    by_forward = st.ForegroundMeasures(skip_empty_gt=True, include=["size_invariant_mae"])
    batch_value = by_forward(p, g)
    by_update = st.ForegroundMeasures(skip_empty_gt=True, include=["size_invariant_mae"])
    by_update.update(p, g)
    assert int(by_forward.included["size_invariant_mae"].count) == 2
    expected = by_update.compute()["size_invariant_mae"]
    torch.testing.assert_close(batch_value["size_invariant_mae"], expected, rtol=0, atol=0)
    torch.testing.assert_close(by_forward.compute()["size_invariant_mae"], expected, rtol=0, atol=0)
    empty = st.ForegroundMeasures(skip_empty_gt=True, include=["size_invariant_mae"])
    only_empty = empty(p[[1, 3]], g[[1, 3]])
    assert torch.isnan(only_empty["size_invariant_mae"]) and torch.isnan(only_empty["mae"])
    assert int(empty.included["size_invariant_mae"].count) == 0 and int(empty.skipped_empty_gt) == 2


def test_a_batch_of_only_empty_ground_truths() -> None:
    p, g = _batch()
    metric = st.SMeasure(skip_empty_gt=True)
    metric.update(p[[1, 3]], g[[1, 3]])
    assert int(metric.count) == 0 and int(metric.skipped_empty_gt) == 2


def test_the_command_counts_and_reports_them(tmp_path: Path, capsys) -> None:
    p, g = _batch()
    for i in range(4):
        pred, gt = (p[i].numpy() * 255).astype(np.uint8), g[i].numpy().astype(np.uint8) * 255
        for folder, image in (("pred", pred), ("gt", gt)):
            (tmp_path / folder).mkdir(exist_ok=True)
            Image.fromarray(image).save(tmp_path / folder / f"im{i}.png")
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "evaluate",
                "foreground",
                "--pred",
                str(tmp_path / "pred"),
                "--gt",
                str(tmp_path / "gt"),
                "--skip-empty-gt",
                "--json",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert "Evaluated 2 image(s) (of 4 ground truths)" in captured.out
    assert "skipped: empty ground truth (no foreground pixel): 2: im1, im3" in captured.err
    report = json.loads(out.read_text())
    assert report["num_images"] == 2 and {s["image"] for s in report["skipped"]} == {"im1", "im3"}


def test_bad_input_is_still_named_with_skip_empty_gt() -> None:
    metric = st.MAE(skip_empty_gt=True)
    for preds, target in ((torch.zeros(0, 4, 4), torch.zeros(0, 4, 4, dtype=torch.bool)), ([], []), (None, None)):
        with pytest.raises((ValueError, TypeError), match=r"preds|target|batch|empty"):
            metric.update(preds, target)
    # images that read as "empty ground truth" but are invalid: named, not left out silently (a NaN map, a target
    # that is not binary or negative, an empty size were skipped and counted, and the Metric returned NaN)
    empty = torch.zeros(2, 8, 8, dtype=torch.bool)
    bad = [
        (torch.rand(2, 8, 8), -torch.ones(2, 8, 8, dtype=torch.long), r"`target`.*binary"),
        (torch.rand(2, 8, 8), torch.full((2, 8, 8), 0.3), r"`target`.*binary"),
        (torch.full((2, 8, 8), float("nan")), empty, r"`preds`.*finite"),
        (torch.rand(2, 0, 16), torch.zeros(2, 0, 16, dtype=torch.bool), r"`preds`.*non-empty"),
    ]
    for cls in (st.MAE, st.Dice, st.SMeasure):
        for preds, target, match in bad:
            metric = cls(skip_empty_gt=True)
            with pytest.raises(ValueError, match=match):
                metric.update(preds, target)
            assert int(metric.skipped_empty_gt) == 0


@pytest.mark.parametrize("family", ["boundary", "partition", "proposals"])
def test_families_without_the_convention_refuse_the_flag(family: str, tmp_path: Path, capsys) -> None:
    """Boundary maps, partitions and proposals have no empty-ground-truth convention: the flag is a usage error
    (exit 2) instead of being accepted and ignored; foreground and surface take it, and the report form says so."""
    with pytest.raises(SystemExit) as info:
        main(["evaluate", family, "--pred", str(tmp_path), "--gt", str(tmp_path), "--skip-empty-gt"])
    assert info.value.code == 2
    assert "unrecognized arguments: --skip-empty-gt" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    shown = " ".join(capsys.readouterr().out.split())  # argparse wraps the help to the terminal's width
    assert "--skip-empty-gt foreground and surface jobs: leave out the images whose ground truth is empty" in shown


@pytest.mark.parametrize("protocol", ["pysodmetrics", "matlab-toolbox"])
def test_skip_empty_gt_reads_the_values_once(protocol: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The filter checks the batch whole before leaving images out; the kept images' values are not read again (a
    second full pass over the maps, a CUDA sync more per batch), and the result is the unfiltered Metric's on them."""
    from segmetrics_torch.functional.foreground import _intermediates

    calls: list[int] = []
    real = _intermediates.check_values

    def counting(p: torch.Tensor, *args: object) -> None:
        calls.append(p.shape[0])
        real(p, *args)

    monkeypatch.setattr(_intermediates, "check_values", counting)
    p, g = _batch()
    metric = st.FMeasure(skip_empty_gt=True, protocol=protocol)
    metric.update(p, g)
    assert calls == [4]
    reference = st.FMeasure(protocol=protocol)
    reference.update(p[[0, 2]], g[[0, 2]])
    got, want = metric.compute(), reference.compute()
    for key in want:
        torch.testing.assert_close(got[key], want[key], rtol=0, atol=0)
