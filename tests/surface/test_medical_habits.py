"""Issue 43, "medical habits": the dataset mean's rule for a missed structure (``aggregation``: ``inf``, MONAI's
NaN-dropping mean, BraTS' worst case) in the functions, the Metrics and ``evaluate surface``; the spacing of each case
in the outputs and a ``--spacing`` that replaces a header named once; the NSD's tolerance required; numpy inputs and
0/255 masks; ``--directed``, ``--distance-metric`` and ``--class-names``; chessboard with a spacing."""

from __future__ import annotations

import contextlib
import csv
import json
import math
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as hst
from PIL import Image

import segmetrics_torch as st
from segmetrics_torch.app.cli import main
from segmetrics_torch.functional.surface import (
    aggregate_distances,
    average_surface_distance,
    boundary_iou,
    empty_sides,
    hausdorff_distance,
    hd95,
    normalized_surface_distance,
    surface_distance_measures,
    surface_distances,
)
from segmetrics_torch.reference import surface as ref

F32 = {"rel": 1e-6, "abs": 1e-6}


def _batch(seed: int, batch: int = 5, classes: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, 24, 26) label maps with boxes of classes 1..C-1, some missed by the prediction, some absent from both."""
    gen = torch.Generator().manual_seed(seed)
    g = torch.zeros(batch, 24, 26, dtype=torch.int64)
    p = torch.zeros_like(g)
    for b in range(batch):
        for c in range(1, classes):
            y, x = (int(v) for v in torch.randint(2, 12, (2,), generator=gen))
            kind = int(torch.randint(0, 5, (1,), generator=gen))
            if kind != 0:  # 0: the class is absent from both
                g[b, y : y + 7, x : x + 8] = c
            if kind not in (0, 1):  # 1: the prediction misses it
                p[b, y + 1 : y + 8, x - 1 : x + 7] = c
            if kind == 4:  # a hallucinated blob far away as well
                p[b, 20:22, 22:24] = c
    return p, g


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """The empty-mask warnings of these deliberately empty masks, silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# ------------------------------------------------------------------------------------------ aggregation


@pytest.mark.parametrize("percentile", [None, 95])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_drop_nan_is_monais_mean(seed: int, percentile: float | None) -> None:
    """``aggregation="drop_nan"`` equals MONAI's own Metric with ``reduction="mean_batch"`` (its
    ``do_metric_reduction``: NaN left out, inf kept), per class, and its ``not_nans`` count plus ours dropped is the
    batch; the default ``"inf"`` keeps every missed structure infinite."""
    pytest.importorskip("monai")
    from monai.metrics import HausdorffDistanceMetric

    p, g = _batch(seed)
    onehot = [torch.nn.functional.one_hot(x, 3).movedim(-1, 1).float() for x in (p, g)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        monai = HausdorffDistanceMetric(
            include_background=False, percentile=percentile, reduction="mean_batch", get_not_nans=True
        )
        monai(y_pred=onehot[0], y=onehot[1])
        expected, not_nans = monai.aggregate()
        ours = st.HausdorffDistance(percentile=percentile, num_classes=3, aggregation="drop_nan")
        ours.update(p, g)
        default = st.HausdorffDistance(percentile=percentile, num_classes=3)
        default.update(p, g)
    got = ours.compute()
    for c in range(2):
        if not_nans[c] == 0:  # every value dropped: MONAI writes 0, here NaN (no mean)
            assert math.isnan(float(got[c])) and float(expected[c]) == 0.0
        else:
            assert float(got[c]) == pytest.approx(float(expected[c]), **F32)
    assert (ours.dropped() + not_nans.long()).tolist() == [p.shape[0]] * 2
    one_empty = torch.stack(empty_sides(p, g, num_classes=3))
    missed = (one_empty[0] != one_empty[1]).any(0)
    assert [math.isinf(float(v)) for v in default.compute()] == missed.tolist()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    hst.integers(0, 2**16),
    hst.sampled_from(["inf", "drop_nan", "worst_case"]),
    hst.sampled_from(["monai", "deepmind"]),
    hst.sampled_from(["hd", "hd95", "asd", "assd"]),
)
def test_every_rule_against_the_reference(seed: int, aggregation: str, convention: Any, measure: str) -> None:
    """The function, the single-measure Metrics and the one-pass Metric agree with the numpy reference's case-by-case
    mean (``reference.surface.mean_over_images``), means and dropped counts, per class."""
    p, g = _batch(seed)
    worst = 373.13 if aggregation == "worst_case" else None
    kw: dict[str, Any] = {"num_classes": 3, "convention": convention, "aggregation": aggregation, "worst_case": worst}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if measure in ("hd", "hd95"):
            q = 95 if measure == "hd95" else None
            values = hausdorff_distance(p, g, percentile=q, num_classes=3, convention=convention)
            metric: st.HausdorffDistance | st.AverageSurfaceDistance = st.HausdorffDistance(percentile=q, **kw)
        else:
            symmetric = measure == "assd"
            values = average_surface_distance(p, g, symmetric=symmetric, num_classes=3, convention=convention)
            metric = st.AverageSurfaceDistance(symmetric=symmetric, **kw)
        metric.update(p[:2], g[:2])
        metric.update(p[2:], g[2:])
        suite = st.SurfaceDistanceMeasures(**kw)
        suite.update(p, g)
        out = aggregate_distances(values, p, g, aggregation=kw["aggregation"], worst_case=worst, num_classes=3)
    key = {"hd": "hausdorff", "hd95": "hausdorff_percentile", "asd": "asd", "assd": "assd"}[measure]
    p_empty, g_empty = empty_sides(p, g, num_classes=3)
    for c in range(2):
        mean, dropped = ref.mean_over_images(
            values[:, c].tolist(), p_empty[:, c].tolist(), g_empty[:, c].tolist(), aggregation, worst
        )
        for got, n in (
            (out.mean[c], out.dropped[c]),
            (metric.compute()[c], metric.dropped()[c]),
            (suite.compute()[key][c], suite.dropped()[key][c]),
        ):
            assert int(n) == dropped
            if math.isnan(mean):
                assert math.isnan(float(got))
            else:
                assert float(got) == pytest.approx(mean, rel=1e-12, abs=1e-12)


def test_worst_case_is_bratss_rule() -> None:
    """A missed structure counts as the worst-case value, a pair of two empty masks is left out (BraTS scores it 0;
    documented), and the value is required with that rule and refused with the others."""
    g = torch.zeros(3, 20, 20, dtype=torch.bool)
    g[:, 5:11, 5:11] = True
    p = g.clone()
    p[2] = False  # missed
    g2, p2 = g.clone(), p.clone()
    g2[1], p2[1] = False, False  # nothing to find, nothing found
    with _quiet():
        metric = st.HausdorffDistance(percentile=95, aggregation="worst_case", worst_case=373.13)
        metric.update(p2, g2)
        assert float(metric.compute()) == pytest.approx((0.0 + 373.13) / 2)
        assert int(metric.dropped()) == 1
        assert float(aggregate_distances(hd95(p, g), p, g).mean) == math.inf
    with pytest.raises(ValueError, match=r"`worst_case` with aggregation='worst_case'.*373\.13"):
        st.HausdorffDistance(aggregation="worst_case")
    with pytest.raises(ValueError, match=r"`worst_case` only with aggregation='worst_case'"):
        st.AverageSurfaceDistance(worst_case=10.0)
    with pytest.raises(ValueError, match="`aggregation`"):
        st.SurfaceDistanceMeasures(aggregation="mean")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`preds` and `target` with aggregation='inf'"):
        aggregate_distances(torch.tensor([1.0, math.nan]))
    # drop_nan reads no masks
    assert float(aggregate_distances(torch.tensor([1.0, math.nan, 3.0]), aggregation="drop_nan").mean) == 2.0


def test_merging_needs_the_same_rule() -> None:
    a = st.HausdorffDistance(aggregation="drop_nan")
    b = st.HausdorffDistance()
    with pytest.raises(ValueError, match="aggregation"):
        a.merge_state(b)


# ------------------------------------------------------------------------------------------ tolerance


def test_the_tolerance_is_required() -> None:
    with pytest.raises(TypeError, match="tolerance"):
        st.NormalizedSurfaceDistance()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="tolerance"):
        normalized_surface_distance(torch.ones(1, 4, 4, dtype=torch.bool), torch.ones(1, 4, 4, dtype=torch.bool))  # type: ignore[call-arg]
    g = torch.zeros(1, 20, 20, dtype=torch.bool)
    g[:, 5:11, 5:11] = True
    p = g.roll(1, 1)
    assert "nsd" not in surface_distance_measures(p, g)  # no tolerance, no NSD: never a default of 1
    suite = st.SurfaceDistanceMeasures()
    suite.update(p, g)
    assert "nsd" not in suite.compute() and "nsd" not in suite.dropped()
    with_nsd = st.SurfaceDistanceMeasures(tolerance=2.0)
    with_nsd.update(p, g)
    assert float(with_nsd.compute()["nsd"]) == float(normalized_surface_distance(p, g, tolerance=2.0)[0])


# ------------------------------------------------------------------------------------------ numpy, 0/255


def test_numpy_arrays_give_the_tensors_numbers() -> None:
    p, g = _batch(3)
    pn, gn = p.numpy(), g.numpy()
    kw: dict[str, Any] = {"num_classes": 3, "tolerance": 1.5}
    with _quiet():
        for fn in (hausdorff_distance, average_surface_distance):
            ours = fn(pn, gn, num_classes=3)
            torch.testing.assert_close(ours, fn(p, g, num_classes=3), rtol=0, atol=0, equal_nan=True)
        torch.testing.assert_close(
            normalized_surface_distance(pn, gn, **kw),
            normalized_surface_distance(p, g, **kw),
            rtol=0,
            atol=0,
            equal_nan=True,
        )
        torch.testing.assert_close(
            boundary_iou(pn, gn, num_classes=3), boundary_iou(p, g, num_classes=3), equal_nan=True
        )
        listed = surface_distance_measures(list(pn), list(gn), **kw)  # a list of arrays
        for key, value in surface_distance_measures(p, g, **kw).items():
            torch.testing.assert_close(listed[key], value, rtol=0, atol=0, equal_nan=True)
        masks = (pn == 1), (gn.astype(np.uint16) == 1).astype(np.uint16)  # bool and uint16 masks
        torch.testing.assert_close(hd95(*masks), hd95(p == 1, g == 1), rtol=0, atol=0, equal_nan=True)
        assert surface_distances(pn, gn, num_classes=3)[0][0] is not None
        metric = st.SurfaceDistanceMeasures(num_classes=3, tolerance=1.5)
        metric.update(pn, gn)
        twin = st.SurfaceDistanceMeasures(num_classes=3, tolerance=1.5)
        twin.update(p, g)
        for key, value in twin.compute().items():
            torch.testing.assert_close(metric.compute()[key], value, equal_nan=True)
    with pytest.raises(TypeError, match="dtype"):
        hd95(np.array([[["a"]]]), np.array([[["a"]]]))


def test_a_0_255_mask_is_an_error_with_the_fix() -> None:
    g = np.zeros((1, 10, 10), np.uint8)
    g[0, 2:6, 2:6] = 255
    with pytest.raises(ValueError, match=r"only 0 and 255.*`target > 0`"):
        hd95(g > 0, g)
    with pytest.raises(ValueError, match=r"only 0 and 255.*`preds > 0`"):
        st.HausdorffDistance().update(torch.from_numpy(g), torch.from_numpy(g > 0))
    with pytest.raises(ValueError, match=r"got 255.*`ignore_index=255`"):
        hd95(g.astype(np.int64) // 255, g.astype(np.int64), num_classes=2)
    with pytest.raises(ValueError, match=r"0 and 1"):  # other values: the plain message, no 0/255 hint
        hd95(g // 255 * 7, g > 0)
    with _quiet():  # the fix works
        assert float(hd95(g > 0, g > 0)[0]) == 0.0


# ------------------------------------------------------------------------------------------ chessboard + spacing


def test_chessboard_with_a_spacing_under_monai_is_refused_and_torchmetrics_scales_it() -> None:
    g = torch.zeros(1, 12, 12, dtype=torch.bool)
    g[0, 2:5, 2:5] = True
    p = torch.zeros_like(g)
    p[0, 8:10, 3:5] = True
    with pytest.raises(ValueError, match=r"`spacing`=None \(unit\).*ignores the spacing.*'torchmetrics'"):
        hausdorff_distance(p, g, distance_metric="chessboard", spacing=(2.0, 0.5))
    with pytest.raises(ValueError, match="spacing"):
        st.HausdorffDistance(distance_metric="taxicab").update(p, g, spacing=[[3.0, 3.0]])  # per-image form too
    scaled = hausdorff_distance(p, g, distance_metric="chessboard", spacing=(2.0, 0.5), convention="torchmetrics")
    # brute force: max over the two boundaries of the nearest max_i s_i |dx_i|
    assert float(scaled[0]) == pytest.approx(
        ref.hausdorff_distance(p[0].numpy(), g[0].numpy(), (2.0, 0.5), convention="torchmetrics", metric="chessboard")
    )
    assert float(hausdorff_distance(p, g, distance_metric="chessboard")[0]) == float(
        hausdorff_distance(p, g, distance_metric="chessboard", spacing=1.0)[0]
    )


# ------------------------------------------------------------------------------------------ the command


def _labels(root: Path, n: int = 3) -> None:
    (root / "gt").mkdir(parents=True)
    (root / "pred").mkdir()
    for i in range(n):
        g = np.zeros((30, 34), np.uint8)
        g[6:18, 8:24] = 1
        g[21:27, 20:30] = 2
        p = np.roll(g, (i, 1 + i), (0, 1))
        if i == 2:
            p[p == 2] = 0  # the third image misses class 2
        Image.fromarray(g).save(root / "gt" / f"im{i}.png")
        Image.fromarray(p).save(root / "pred" / f"im{i}.png")


def _cli(root: Path, *extra: str) -> list[str]:
    return ["evaluate", "surface", "--pred", str(root / "pred"), "--gt", str(root / "gt"), "--no-progress", *extra]


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_the_command_takes_the_aggregation_and_records_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _labels(tmp_path)
    common = ["--num-classes", "3", "--tolerance", "1"]
    assert main(_cli(tmp_path, *common, "--json", str(tmp_path / "inf.json"))) == 0
    out = capsys.readouterr().out
    assert "--aggregation inf" in out
    inf = json.loads((tmp_path / "inf.json").read_text(encoding="utf-8"))
    assert inf["settings"]["aggregation"] == "inf" and inf["results"]["aggregation"]["rule"] == "inf"
    assert inf["results"]["hausdorff_percentile"][1] == "inf"  # class 2 missed once: as before the option
    assert main(_cli(tmp_path, *common, "--aggregation", "drop_nan", "--json", str(tmp_path / "drop.json"))) == 0
    out = capsys.readouterr().out
    assert "--aggregation drop_nan" in out and "Left out of the means" in out and "HD95 1" in out
    drop = json.loads((tmp_path / "drop.json").read_text(encoding="utf-8"))["results"]
    assert drop["aggregation"]["dropped"]["hausdorff_percentile"] == [0, 1]
    assert "MONAI" in drop["aggregation"]["reference"]
    per = drop["per_image"]
    assert drop["hausdorff_percentile"][1] == pytest.approx(
        np.mean([per["im0"]["hausdorff_percentile"][1], per["im1"]["hausdorff_percentile"][1]]), abs=1e-12
    )
    args = [*common, "--aggregation", "worst_case", "--worst-case", "373.13", "--json", str(tmp_path / "w.json")]
    assert main(_cli(tmp_path, *args)) == 0
    worst = json.loads((tmp_path / "w.json").read_text(encoding="utf-8"))
    assert worst["settings"]["worst_case"] == 373.13
    expected = (per["im0"]["hausdorff_percentile"][1] + per["im1"]["hausdorff_percentile"][1] + 373.13) / 3
    assert worst["results"]["hausdorff_percentile"][1] == pytest.approx(expected, abs=1e-12)
    capsys.readouterr()
    assert main(_cli(tmp_path, *common, "--aggregation", "worst_case")) == 2
    assert main(_cli(tmp_path, *common, "--worst-case", "3")) == 2
    assert "--worst-case" in capsys.readouterr().err


def test_the_command_needs_a_tolerance_for_the_nsd(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _labels(tmp_path)
    assert main(_cli(tmp_path, "--num-classes", "3", "--json", str(tmp_path / "r.json"))) == 0
    out = capsys.readouterr().out
    assert "NSD" not in out.splitlines()[0] and "NSD: not computed" in out
    assert "nsd" not in json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["results"]
    assert main(_cli(tmp_path, "--num-classes", "3", "--measures", "hd95,nsd")) == 2
    (line,) = [x for x in capsys.readouterr().err.splitlines() if x.startswith("error:")]
    assert "--tolerance" in line, line


def test_directed_distance_metric_and_class_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _labels(tmp_path)
    args = [
        "--num-classes",
        "3",
        "--directed",
        "--distance-metric",
        "taxicab",
        "--convention",
        "torchmetrics",
        "--spacing",
        "0.5,2",
        "--class-names",
        "background,liver,tumour",
        "--per-image-csv",
        str(tmp_path / "per.csv"),
        "--json",
        str(tmp_path / "r.json"),
    ]
    assert main(_cli(tmp_path, *args)) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "/ liver" in out and "/ tumour" in out and "class 1" not in out
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["results"]["class_names"] == ["liver", "tumour"]
    assert report["settings"]["directed"] is True and report["settings"]["distance_metric"] == "taxicab"
    rows = {r["image"]: r for r in _rows(tmp_path / "per.csv")}
    p = np.asarray(Image.open(tmp_path / "pred" / "im1.png"))
    g = np.asarray(Image.open(tmp_path / "gt" / "im1.png"))
    expected = hausdorff_distance(
        torch.from_numpy(p)[None].long(),
        torch.from_numpy(g)[None].long(),
        num_classes=3,
        directed=True,
        distance_metric="taxicab",
        convention="torchmetrics",
        spacing=(0.5, 2.0),
    )[0]
    assert float(rows["im1"]["hausdorff/liver"]) == pytest.approx(float(expected[0]), abs=1e-12)
    assert float(rows["im1"]["hausdorff/tumour"]) == pytest.approx(float(expected[1]), abs=1e-12)
    assert rows["im1"]["spacing"] == "0.5x2.0"
    # MONAI's taxicab with a spacing: refused, naming --spacing and the other convention
    assert main(_cli(tmp_path, "--distance-metric", "taxicab", "--spacing", "0.5,2")) == 2
    (line,) = [x for x in capsys.readouterr().err.splitlines() if x.startswith("error:")]
    assert "--spacing" in line and "torchmetrics" in line, line
    assert main(_cli(tmp_path, "--num-classes", "3", "--class-names", "a,b")) == 2  # one name per label
    assert main(_cli(tmp_path, "--class-names", "a")) == 2  # masks: no class names


def test_the_spacing_of_each_case_is_recorded_and_an_override_is_named_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nibabel = pytest.importorskip("nibabel")
    (tmp_path / "gt").mkdir()
    (tmp_path / "pred").mkdir()
    v = np.zeros((10, 12, 8), np.uint8)
    v[3:7, 4:9, 2:6] = 1
    for name, zooms in (("a", (0.8, 0.8, 2.5)), ("b", (1.0, 1.0, 1.0)), ("c", (0.5, 0.5, 3.0))):
        affine = np.diag([*zooms, 1.0])
        nibabel.save(nibabel.Nifti1Image(v, affine), str(tmp_path / "gt" / f"{name}.nii.gz"))
        nibabel.save(nibabel.Nifti1Image(np.roll(v, 1, 0), affine), str(tmp_path / "pred" / f"{name}.nii.gz"))
    per_csv, out_json = tmp_path / "per.csv", tmp_path / "r.json"
    assert main(_cli(tmp_path, "--per-image-csv", str(per_csv), "--json", str(out_json))) == 0
    err = capsys.readouterr().err
    assert "replaces" not in err
    per = json.loads(out_json.read_text(encoding="utf-8"))["results"]["per_image"]
    assert per["a"]["spacing"] == [float(np.float32(s)) for s in (0.8, 0.8, 2.5)]
    assert per["b"]["spacing"] == [1.0, 1.0, 1.0]
    rows = {r["image"]: r for r in _rows(per_csv)}
    assert [float(s) for s in rows["c"]["spacing"].split("x")] == [0.5, 0.5, 3.0]
    per_csv.unlink()
    assert main(_cli(tmp_path, "--spacing", "1", "--per-image-csv", str(per_csv), "--json", str(out_json))) == 0
    lines = [x for x in capsys.readouterr().err.splitlines() if "replaces" in x]
    assert len(lines) == 1 and "a.nii.gz" in lines[0] and "and 1 more of the 3 pairs" in lines[0], lines
    per = json.loads(out_json.read_text(encoding="utf-8"))["results"]["per_image"]
    assert all(per[k]["spacing"] == [1.0, 1.0, 1.0] for k in "abc")
    assert {r["spacing"] for r in _rows(per_csv)} == {"1.0x1.0x1.0"}


def test_the_figure_names_the_classes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("matplotlib")
    from segmetrics_torch.reports import figures

    shown: list[str] = []
    save = figures._save_figure

    def spy(fig, path):  # type: ignore[no-untyped-def]
        shown.extend(label.get_text() for ax in fig.axes for label in ax.get_xticklabels())
        return save(fig, path)

    monkeypatch.setattr(figures, "_save_figure", spy)
    per_image = {"M": {"im0": {"assd": [1.0, 2.0]}, "im1": {"assd": [1.5, math.inf]}}}
    measures = [("assd", "ASSD")]
    figures.plot_surface_distributions(
        per_image, tmp_path / "f.png", measures=measures, classes=[1, 2], class_names=["liver", "tumour"]
    )
    assert shown == ["liver", "tumour"]
    shown.clear()
    figures.plot_surface_distributions(per_image, tmp_path / "g.png", measures=measures, classes=[1, 2])
    assert shown == ["class 1", "class 2"]
    with pytest.raises(ValueError, match="one name per class"):
        figures.plot_surface_distributions(
            per_image, tmp_path / "h.png", measures=measures, classes=[1, 2], class_names=["liver"]
        )


def test_the_report_options_name_the_library_aggregations() -> None:
    """The configuration check lists the aggregation rules without importing torch: they are the library's."""
    from segmetrics_torch.app.family_options import OPTION_CHECKS
    from segmetrics_torch.functional.surface import AGGREGATIONS

    check, _ = OPTION_CHECKS["surface"]["aggregation"]
    assert all(check(name) for name in AGGREGATIONS) and not check("mean")
