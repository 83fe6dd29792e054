"""``segmetrics evaluate proposals``: .npz and label-image pools against instance / class images and .npz objects,
checked against ProposalRecall on the same arrays; the recall figure; bad input."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from segmetrics_torch import ProposalRecall
from segmetrics_torch.app.cli import main
from segmetrics_torch.io import read_objects, read_proposals

H, W = 48, 64
COUNTS = [1, 4, 10, 100]


def _discs(rng: np.random.Generator, n: int) -> np.ndarray:
    yy, xx = np.mgrid[:H, :W]
    centres = rng.integers(0, (H, W), (n, 2))
    radii = rng.integers(3, 14, n)
    return np.stack([(yy - cy) ** 2 + (xx - cx) ** 2 <= r * r for (cy, cx), r in zip(centres, radii, strict=True)])


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    """Three images: two .npz mask pools and one 16-bit label-image pool; Pascal-style instance images (255 void
    rings) and class images."""
    root = tmp_path_factory.mktemp("proposals")
    for d in ("pred", "gt", "cls"):
        (root / d).mkdir()
    rng = np.random.default_rng(5)
    for i in range(3):
        inst = np.zeros((H, W), np.uint8)
        cls = np.zeros((H, W), np.uint8)
        for k, disc in enumerate(_discs(rng, 3), start=1):
            ring = _dilate(disc) & ~disc & (inst == 0)
            inst[disc], cls[disc] = k, rng.integers(1, 4)
            inst[ring], cls[ring] = 255, 255
        Image.fromarray(inst).save(root / "gt" / f"im{i}.png")
        Image.fromarray(cls).save(root / "cls" / f"im{i}.png")
        if i < 2:
            np.savez_compressed(root / "pred" / f"im{i}.npz", masks=_discs(rng, 30 + 10 * i))
        else:
            labels = (np.arange(H)[:, None] // 12 * 4 + np.arange(W)[None] // 16 + 1).astype(np.uint16) * 3
            Image.fromarray(labels).save(root / "pred" / f"im{i}.png")  # labels 3, 6, ..., 48: gaps are empty
    return root


def _dilate(mask: np.ndarray) -> np.ndarray:
    out = mask.copy()
    out[1:] |= mask[:-1]
    out[:-1] |= mask[1:]
    out[:, 1:] |= mask[:, :-1]
    out[:, :-1] |= mask[:, 1:]
    return out


def _expected(root: Path, **kwargs) -> dict[str, torch.Tensor]:
    metric = ProposalRecall(COUNTS, num_classes=256, **kwargs)
    for i in range(3):
        pool = read_proposals(next((root / "pred").glob(f"im{i}.*")))
        gt = read_objects(root / "gt" / f"im{i}.png", class_path=root / "cls" / f"im{i}.png")
        metric.update(*(None if x is None else torch.from_numpy(x) for x in (pool, gt.objects, gt.void, gt.classes)))
    return metric.compute()


def test_json_equals_the_metric_and_the_figure_is_written(dataset, tmp_path, capsys):
    out, fig = tmp_path / "r.json", tmp_path / "recall.png"
    args = [
        "evaluate",
        "proposals",
        "--pred",
        str(dataset / "pred"),
        "--gt",
        str(dataset / "gt"),
        "--gt-classes",
        str(dataset / "cls"),
        "--counts",
        ",".join(map(str, COUNTS)),
        "--boundary",
        "--bound-th",
        "2",
        "--json",
        str(out),
        "--plot",
        str(fig),
        "--no-progress",
        "--per-image-csv",
        str(tmp_path / "img.csv"),
    ]
    assert main(args) == 0
    table = capsys.readouterr().out
    assert "N=10" in table and "N=100" in table and "J_c" in table and "F AR" in table
    report = json.loads(out.read_text())
    expected = _expected(dataset, boundary=True, bound_th=2.0)
    assert set(expected) <= set(report["results"])
    for key, value in expected.items():
        np.testing.assert_allclose(report["results"][key], value.numpy(), rtol=0, atol=1e-12, err_msg=key)
    assert report["num_images"] == 3 and report["settings"]["counts"] == COUNTS
    per = report["results"]["per_image"]
    assert per["im2"]["num_proposals"] == 48 and per["im0"]["num_objects"] == 3
    assert len(per["im1"]["best_boundary_f"]) == 3
    # the mean of the per-object best J within the largest N is the curve's last point
    best = [j for p in per.values() for j in p["best_jaccard"]]
    assert np.isclose(np.mean(best), report["results"]["jaccard_object"][-1])
    with (tmp_path / "img.csv").open() as f:
        csv_rows = {r["image"]: r for r in csv.DictReader(f)}
    assert list(csv_rows) == list(per)
    for stem, values in per.items():
        assert int(csv_rows[stem]["num_objects"]) == values["num_objects"]
        assert float(csv_rows[stem]["best_jaccard_mean"]) == pytest.approx(np.mean(values["best_jaccard"]), abs=1e-12)
    assert fig.stat().st_size > 10_000 and fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_figure_and_the_json_are_one_set(dataset, tmp_path, capsys, monkeypatch):
    """--plot was written on its own before the JSON and the tables: a Ctrl-C at its rename left the new figure
    beside the previous run's JSON."""
    pytest.importorskip("matplotlib")
    from tests.conftest import signal_at_first_replace

    out = tmp_path / "outputs"
    out.mkdir()
    argv = ["evaluate", "proposals", "--pred", str(dataset / "pred"), "--gt", str(dataset / "gt"), "--no-progress"]
    argv += ["--counts", ",".join(map(str, COUNTS)), "--json", str(out / "r.json"), "--plot", str(out / "recall.png")]
    assert main(argv) == 0
    for path in out.iterdir():
        path.write_text("the previous run's")
    signal_at_first_replace(monkeypatch)
    assert main(argv) == 130
    capsys.readouterr()
    assert sorted(p.name for p in out.iterdir()) == ["r.json", "recall.png"]  # no temporary file left
    # the signal came while the figure was drawn into its temporary file: the previous run's set, whole
    assert [p.read_bytes() == b"the previous run's" for p in sorted(out.iterdir())] == [True, True]


def test_npz_objects_with_void_and_classes(tmp_path):
    rng = np.random.default_rng(9)
    (tmp_path / "pred").mkdir()
    (tmp_path / "gt").mkdir()
    objs, pool = _discs(rng, 2), _discs(rng, 12)
    void = np.zeros((H, W), bool)
    void[:, :4] = True
    np.savez(tmp_path / "gt" / "a.npz", objects=objs.astype(np.uint8), void=void, classes=np.array([0, 3]))
    np.savez(tmp_path / "pred" / "a.npz", masks=pool)
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "evaluate",
                "proposals",
                "--pred",
                str(tmp_path / "pred"),
                "--gt",
                str(tmp_path / "gt"),
                "--counts",
                "2,5,100",
                "--num-classes",
                "4",
                "--json",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    metric = ProposalRecall([2, 5, 100], num_classes=4)
    metric.update(torch.from_numpy(pool), torch.from_numpy(objs), torch.from_numpy(void), torch.tensor([0, 3]))
    results = json.loads(out.read_text())["results"]
    for key, value in metric.compute().items():
        np.testing.assert_allclose(results[key], value.numpy(), rtol=0, atol=1e-12, err_msg=key)


def _setup(tmp_path: Path, pool: np.ndarray | None = None, objects: np.ndarray | None = None) -> list[str]:
    (tmp_path / "pred").mkdir(exist_ok=True)
    (tmp_path / "gt").mkdir(exist_ok=True)
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "pred" / "a.npz", masks=_discs(rng, 4) if pool is None else pool)
    np.savez(tmp_path / "gt" / "a.npz", objects=_discs(rng, 2) if objects is None else objects)
    return ["evaluate", "proposals", "--pred", str(tmp_path / "pred"), "--gt", str(tmp_path / "gt"), "--no-progress"]


@pytest.mark.parametrize(
    ("pool", "objects", "extra", "message"),
    [
        (np.zeros((3, H, W + 1), bool), None, [], "prediction 65x48, ground truth 64x48"),
        (np.full((3, H, W), 2, np.uint8), None, [], "must be binary"),
        (np.zeros((0, H, W), bool), None, [], "holds no proposal"),
        (None, np.zeros((0, H, W), bool), [], "K >= 1"),
        (None, None, ["--plot", "x.jpg"], "give a .png, .pdf or .svg"),
    ],
)
def test_bad_input_is_one_error_line(tmp_path, capsys, pool, objects, extra, message):
    args = _setup(tmp_path, pool, objects)
    extra = [str(tmp_path / e) if e.endswith(".jpg") else e for e in extra]
    assert main(args + extra) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("error: ") and err.count("\n") == 1


def test_missing_pool_and_empty_label_image(tmp_path, capsys):
    args = _setup(tmp_path)
    np.savez(tmp_path / "gt" / "b.npz", objects=np.ones((1, H, W), bool))
    assert main(args) == 2
    assert "b: ground truth without a prediction" in capsys.readouterr().err
    Image.fromarray(np.zeros((H, W), np.uint8)).save(tmp_path / "pred" / "b.png")
    assert main(args) == 2
    assert "holds no proposal" in capsys.readouterr().err


def test_figure_of_several_methods(tmp_path):
    from segmetrics_torch.reports.figures import plot_proposal_recall

    rng = np.random.default_rng(4)
    objs = torch.from_numpy(_discs(rng, 3))
    results = {}
    for name, n in (("small pool", 8), ("large pool", 60)):
        metric = ProposalRecall([1, 2, 5, 10, 50, 100], boundary=True, bound_th=2)
        metric.update(torch.from_numpy(_discs(rng, n)), objs)
        results[name] = metric.compute()
    path = plot_proposal_recall(results, tmp_path / "two.pdf", title="two methods")
    assert path.read_bytes()[:5] == b"%PDF-" and path.stat().st_size > 5_000
    with pytest.raises(ValueError, match="at least one method"):
        plot_proposal_recall({}, tmp_path / "none.png")
    without = {k: v for k, v in results["large pool"].items() if k != "boundary_f_object"}
    with pytest.raises(ValueError, match="boundary_f_object"):
        plot_proposal_recall({"a": results["small pool"], "b": without}, tmp_path / "x.png", boundary=True)
