"""Empty prediction and/or ground truth: each convention's value of the notes' section 7, always with a warning that
names the image and the class (MedPy's convention raises), checked against the references where they return one."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

from segmetrics_torch.functional.surface import (
    EmptyMaskWarning,
    average_surface_distance,
    boundary_iou,
    hausdorff_distance,
    normalized_surface_distance,
)

from ._refs import case, monai_asd, monai_hd, monai_nsd, torchmetrics_hd

INF, NAN = math.inf, math.nan
SIDES = ("pred", "gt", "both")


def _pair(side: str) -> tuple[torch.Tensor, torch.Tensor]:
    p, g, _ = case("A")
    if side in ("pred", "both"):
        p = np.zeros_like(p)
    if side in ("gt", "both"):
        g = np.zeros_like(g)
    # image 1 of a batch of 2: the warning must name it; image 0 is the non-empty case A
    p0, g0, _ = case("A")
    return torch.from_numpy(np.stack([p0, p])), torch.from_numpy(np.stack([g0, g]))


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


EXPECTED = {
    # (measure, convention, options): values for (pred empty, gt empty, both empty)
    ("hd", "monai", ()): (INF, INF, NAN),
    ("hd95", "monai", ()): (NAN, NAN, NAN),
    ("hd_directed", "monai", ()): (INF, INF, NAN),
    ("hd", "deepmind", ()): (INF, INF, INF),
    ("hd95", "deepmind", ()): (INF, INF, INF),
    ("hd", "torchmetrics", ()): (INF, INF, NAN),
    ("asd", "monai", ()): (INF, INF, NAN),
    ("assd", "monai", ()): (INF, INF, NAN),
    ("asd", "deepmind", ()): (NAN, INF, NAN),
    ("assd", "deepmind", ()): (NAN, NAN, NAN),
    ("nsd", "monai", ()): (0.0, 0.0, NAN),
    ("nsd", "monai", ("subvoxels",)): (0.0, 0.0, NAN),
    ("nsd", "deepmind", ()): (0.0, 0.0, NAN),
    ("biou", None, ()): (0.0, 0.0, NAN),
}


def _call(
    measure: str, convention: str | None, options: tuple[str, ...], p: torch.Tensor, g: torch.Tensor, **kw: object
) -> torch.Tensor:
    if measure == "hd":
        return hausdorff_distance(p, g, convention=convention, **kw)  # type: ignore[arg-type]
    if measure == "hd95":
        return hausdorff_distance(p, g, convention=convention, percentile=95, **kw)  # type: ignore[arg-type]
    if measure == "hd_directed":
        return hausdorff_distance(p, g, convention=convention, directed=True, **kw)  # type: ignore[arg-type]
    if measure in ("asd", "assd"):
        return average_surface_distance(p, g, convention=convention, symmetric=measure == "assd", **kw)  # type: ignore[arg-type]
    if measure == "nsd":
        return normalized_surface_distance(
            p,
            g,
            tolerance=1.0,
            convention=convention,
            use_subvoxels="subvoxels" in options,
            **kw,  # type: ignore[arg-type]
        )
    return boundary_iou(p, g, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("key", list(EXPECTED), ids=lambda k: "-".join(str(x) for x in k if x))
@pytest.mark.parametrize("side", SIDES)
def test_empty_values_and_warning(key: tuple[str, str | None, tuple[str, ...]], side: str) -> None:
    measure, convention, options = key
    p, g = _pair(side)
    with pytest.warns(EmptyMaskWarning, match=r"image 1: the (prediction|ground truth)") as record:
        out = _call(measure, convention, options, p, g)
    assert len(record) == 1  # image 0 is not empty
    assert out.dtype == torch.float64 and out.shape == (2,)
    assert math.isfinite(float(out[0]))
    assert _same(float(out[1]), EXPECTED[key][SIDES.index(side)])
    word = {"pred": "prediction is", "gt": "ground truth is", "both": "prediction and ground truth are"}[side]
    assert word in str(record[0].message)


@pytest.mark.parametrize("side", SIDES)
def test_monai_reference_values(side: str) -> None:
    pytest.importorskip("monai")
    p, g = (x[1].numpy() for x in _pair(side))
    sp = (1.0, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EmptyMaskWarning)
        i = SIDES.index(side)
        assert _same(monai_hd(p, g, sp), EXPECTED[("hd", "monai", ())][i])
        assert _same(monai_hd(p, g, sp, 95), EXPECTED[("hd95", "monai", ())][i])
        assert _same(monai_hd(p, g, sp, directed=True), EXPECTED[("hd_directed", "monai", ())][i])
        assert _same(monai_asd(p, g, sp), EXPECTED[("asd", "monai", ())][i])
        assert _same(monai_asd(p, g, sp, True), EXPECTED[("assd", "monai", ())][i])
        assert _same(monai_nsd(p, g, sp, 1.0), EXPECTED[("nsd", "monai", ())][i])
        assert _same(monai_nsd(p, g, sp, 1.0, True), EXPECTED[("nsd", "monai", ("subvoxels",))][i])


@pytest.mark.parametrize("side", ["pred", "gt"])
def test_torchmetrics_one_empty_is_inf(side: str) -> None:
    pytest.importorskip("torchmetrics")
    p, g = (x[1].numpy() for x in _pair(side))
    assert torchmetrics_hd(p, g, (1.0, 1.0)) == INF


def test_torchmetrics_both_empty_raises_ours_nan() -> None:
    pytest.importorskip("torchmetrics")
    p, g = (x[1].numpy() for x in _pair("both"))
    with pytest.raises(RuntimeError):
        torchmetrics_hd(p, g, (1.0, 1.0))


def test_deepmind_nsd_both_empty_is_nan() -> None:
    sd_lib = pytest.importorskip("surface_distance")
    z = np.zeros((5, 5), bool)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert math.isnan(sd_lib.compute_surface_dice_at_tolerance(sd_lib.compute_surface_distances(z, z, [1, 1]), 1))


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("measure", ["hd", "hd95", "asd", "assd"])
def test_medpy_convention_raises_like_medpy(side: str, measure: str) -> None:
    p, g = _pair(side)
    with pytest.raises(ValueError, match=r"image 1: the .* is empty .* convention='medpy' raises"):
        _call(measure, "medpy", (), p, g)
    binary = pytest.importorskip("medpy.metric.binary")
    with pytest.raises(RuntimeError, match="does not contain any binary object"):
        getattr(binary, measure)(p[1].numpy(), g[1].numpy())


def test_warning_names_the_class() -> None:
    target = torch.zeros(1, 10, 10, dtype=torch.long)
    target[0, 2:5, 2:5] = 1
    target[0, 6:9, 6:9] = 2
    preds = target.clone()
    preds[preds == 2] = 0  # class 2 missed
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        out = hausdorff_distance(preds, target, num_classes=4)
    messages = [str(r.message) for r in record if r.category is EmptyMaskWarning]
    assert len(messages) == 2
    assert "image 0, class 2: the prediction is empty" in messages[0]
    assert "image 0, class 3: the prediction and ground truth are empty" in messages[1]  # class 3: empty in both
    assert all(r.filename == __file__ for r in record)  # points at the caller's line
    assert out.shape == (1, 3) and float(out[0, 0]) == 0.0 and out[0, 1] == INF and math.isnan(float(out[0, 2]))


def test_a_metric_names_empty_pairs_of_its_first_such_batch_only_until_reset() -> None:
    """A training loop's every batch of an untrained net: the first batch's pairs are named (and a line says the
    later ones are counted silently), later batches add no warning, ``reset()`` starts again."""
    from segmetrics_torch.metrics import HausdorffDistance

    metric = HausdorffDistance()
    target = torch.zeros(4, 8, 8, dtype=torch.bool)
    target[:, 2:5, 2:5] = True
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for _ in range(3):
            metric.update(torch.zeros_like(target), target)
        silent = metric.last_empty  # of the third update, which warned of nothing
        first = [str(r.message) for r in record if r.category is EmptyMaskWarning]
        metric.reset()
        metric.update(torch.zeros_like(target), target)
    assert len(first) == 5 and all(f"image {i}:" in first[i] for i in range(4))
    assert "further empty (image, class) pairs are counted without a warning until reset()" in first[4]
    assert sum(r.category is EmptyMaskWarning for r in record) == 10
    # every update's pairs stay readable, warned of or not (the command names each file's from them)
    assert [(w.image, w.what, w.measure) for w in silent] == [
        (i, "prediction is", "hausdorff_distance") for i in range(4)
    ]
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        metric.reset()
        for _ in range(3):
            metric(torch.zeros_like(target), target)  # forward: its own reset() inside keeps the silence
    assert sum(r.category is EmptyMaskWarning for r in record) == 5
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", module="segmetrics_torch")  # the warnings come from the package
        metric.reset()
        metric.update(torch.zeros_like(target), target)
    assert not record


def test_empty_sides_checks_its_inputs_as_the_functions_do() -> None:
    """A public function of its own: mismatched batches, a 2-D input (read row by row), labels past num_classes
    (reported "empty"), num_classes 1 and a string include_background were accepted or failed inside torch."""
    from segmetrics_torch.functional.surface.aggregation import empty_sides

    g = torch.zeros(2, 16, 16, dtype=torch.long)
    g[:, 4:8, 4:8] = 1
    bad = [
        ((g, g[:1]), {"num_classes": 3}, ValueError, "as many images"),
        ((g[0], g[0]), {"num_classes": 3}, ValueError, r"`preds` of shape \(B, H, W\)"),
        ((g * 5, g), {"num_classes": 3}, ValueError, r"`preds` to hold labels in \[0, 2\]"),
        ((g, g), {"num_classes": 1}, ValueError, "`num_classes`"),
        ((g, g), {"num_classes": 3, "include_background": "yes"}, TypeError, "`include_background`"),
        ((g[:0], g[:0]), {}, ValueError, "empty batch"),
    ]
    for (p, t), options, error, match in bad:
        with pytest.raises(error, match=match):
            empty_sides(p, t, **options)
