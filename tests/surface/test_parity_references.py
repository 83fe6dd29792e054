"""Parity with the reference libraries on the conventions notes' cases A-E (D, E: 48^3 blobs and a slice of them).

Tolerances: 1e-9 against the float64 references (MedPy, DeepMind, the Boundary IoU rule), 1e-6 relative against the
float32 ones (MONAI, TorchMetrics). The first test pins the values of the notes' table, so it fails without any
reference library installed.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

from segmetrics_torch.functional.surface import (
    average_surface_distance,
    boundary_iou,
    hausdorff_distance,
    normalized_surface_distance,
    surface_distance_measures,
    surface_distances,
)
from segmetrics_torch.reference import surface as ref

from ._refs import (
    CASES,
    authors_boundary_iou,
    case,
    deepmind_all,
    medpy_all,
    monai_asd,
    monai_hd,
    monai_nsd,
    torchmetrics_hd,
)

F32 = {"rel": 1e-6, "abs": 1e-6}
F64 = {"rel": 1e-12, "abs": 1e-9}


def _batch(x: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(x)[None]


def _ours(name: str, convention: str, **kw: object) -> dict[str, float]:
    p, g, sp = case(name)
    kw = {"tolerance": 1.0, **kw}
    out = surface_distance_measures(_batch(p), _batch(g), spacing=sp, convention=convention, **kw)  # type: ignore[arg-type]
    return {k: float(v[0]) for k, v in out.items()}


# the notes' section 6 table (4 decimals): HD, HD95, ASD pred->gt, ASSD, NSD(1.0) for monai; HD95 medpy; deepmind
NOTES = {
    "A": ((2.8284, 2.2361, 1.6046, 1.5226, 0.4048), 2.2361, (2.2361, 1.6114, 0.3864)),
    "A'": ((4.1231, 4.0296, 1.8587, 1.8329, 0.5714), 4.0296, (4.0311, 1.4493, 0.6772)),
    "B": ((3.2016, 2.5000, 1.4826, 1.4826, 0.3108), 2.5000, (2.2913, 1.4390, 0.2695)),
    "C": ((24.0416, 23.3452, 2.3340, 1.2284, 0.9474), 5.6569, (23.3452, 3.3865, 0.9192)),
}


@pytest.mark.parametrize("name", list(NOTES))
def test_notes_table(name: str) -> None:
    monai, medpy_hd95, (dm_hd95, dm_asd, dm_nsd) = NOTES[name]
    ours = _ours(name, "monai")
    got = [ours[k] for k in ("hausdorff", "hausdorff_percentile", "asd", "assd", "nsd")]
    assert [round(v, 4) for v in got] == list(monai)
    assert round(_ours(name, "medpy")["hausdorff_percentile"], 4) == medpy_hd95
    dm = _ours(name, "deepmind")
    assert [round(dm[k], 4) for k in ("hausdorff_percentile", "asd", "nsd")] == [dm_hd95, dm_asd, dm_nsd]


@pytest.mark.parametrize("name", CASES)
def test_monai(name: str) -> None:
    pytest.importorskip("monai")
    p, g, sp = case(name)
    ours = _ours(name, "monai")
    assert ours["hausdorff"] == pytest.approx(monai_hd(p, g, sp), **F32)
    assert ours["hausdorff_percentile"] == pytest.approx(monai_hd(p, g, sp, 95), **F32)
    assert ours["asd"] == pytest.approx(monai_asd(p, g, sp), **F32)
    assert ours["assd"] == pytest.approx(monai_asd(p, g, sp, symmetric=True), **F32)
    assert ours["nsd"] == pytest.approx(monai_nsd(p, g, sp, 1.0), **F32)
    P, G = _batch(p), _batch(g)
    assert float(hausdorff_distance(P, G, spacing=sp, directed=True)[0]) == pytest.approx(
        monai_hd(p, g, sp, directed=True), **F32
    )
    # MONAI's quantile runs in float32, rank (n - 1) q included: with distances 0 and 22.6 on either side of the rank
    # (case C, q = 0.9) its float32 weight moves the result by 3e-5. Ours is the float64 quantile of the same lists;
    # MONAI's value is the float32 quantile of our lists.
    sd = surface_distances(P, G, spacing=sp)[0][0]
    assert sd is not None
    for q in (50, 90, 99, 100):
        for directed in (False, True):
            lists = [sd.pred_to_gt] if directed else [sd.pred_to_gt, sd.gt_to_pred]
            exact = max(float(torch.quantile(torch.from_numpy(d), q / 100)) for d in lists)
            f32 = max(float(torch.quantile(torch.from_numpy(d).float(), q / 100)) for d in lists)
            ours = float(hausdorff_distance(P, G, spacing=sp, percentile=q, directed=directed)[0])
            assert ours == pytest.approx(exact, **F64)
            assert monai_hd(p, g, sp, q, directed=directed) == pytest.approx(f32, **F32)
    for tau in (1.0,) if name == "D" else (0.0, 0.999, 1.0, 2.5):  # D: 3-D, slow in MONAI
        assert float(normalized_surface_distance(P, G, tolerance=tau, spacing=sp)[0]) == pytest.approx(
            monai_nsd(p, g, sp, tau), **F32
        )
        assert float(normalized_surface_distance(P, G, tolerance=tau, spacing=sp, use_subvoxels=True)[0]) == (
            pytest.approx(monai_nsd(p, g, sp, tau, use_subvoxels=True), **F32)
        )


@pytest.mark.parametrize("name", ["A", "A'", "B", "C"])
@pytest.mark.parametrize("metric", ["chessboard", "taxicab"])
def test_monai_chessboard_taxicab_refuse_spacing(name: str, metric: str) -> None:
    """MONAI's chessboard / taxicab distances ignore the spacing (its numbers are in voxels whatever the spacing):
    under convention="monai" a spacing is refused, naming both fixes; without one the numbers are MONAI's, which
    equal its numbers with the spacing it ignored."""
    pytest.importorskip("monai")
    p, g, sp = case(name)
    if any(s != 1.0 for s in sp):
        with pytest.raises(ValueError, match=r"`spacing`=None \(unit\) with distance_metric=.*'torchmetrics'"):
            hausdorff_distance(_batch(p), _batch(g), spacing=sp, distance_metric=metric)
    ours = float(hausdorff_distance(_batch(p), _batch(g), distance_metric=metric)[0])
    assert ours == pytest.approx(monai_hd(p, g, sp, metric=metric), **F32)
    assert ours == pytest.approx(monai_hd(p, g, (1.0,) * p.ndim, metric=metric), **F32)
    # TorchMetrics' convention honours it: the max over the axes of spacing x offset (chessboard)
    scaled = hausdorff_distance(_batch(p), _batch(g), spacing=sp, distance_metric=metric, convention="torchmetrics")
    assert float(scaled[0]) == pytest.approx(
        ref.hausdorff_distance(p, g, sp, convention="torchmetrics", metric=metric), **F64
    )


@pytest.mark.parametrize("name", CASES)
def test_medpy(name: str) -> None:
    pytest.importorskip("medpy")
    p, g, sp = case(name)
    ours = _ours(name, "medpy")
    ref = medpy_all(p, g, sp)
    for ours_key, ref_key in (("hausdorff", "hd"), ("hausdorff_percentile", "hd95"), ("asd", "asd"), ("assd", "assd")):
        assert ours[ours_key] == pytest.approx(ref[ref_key], **F64), ours_key


@pytest.mark.parametrize("name", ["A", "B", "C", "E"])
def test_medpy_connectivity(name: str) -> None:
    pytest.importorskip("medpy")
    p, g, sp = case(name)
    ndim = p.ndim
    ours = _ours(name, "medpy", connectivity=ndim)
    ref = medpy_all(p, g, sp, connectivity=ndim)
    assert [ours[k] for k in ("hausdorff", "hausdorff_percentile", "asd", "assd")] == pytest.approx(
        [ref[k] for k in ("hd", "hd95", "asd", "assd")], **F64
    )


@pytest.mark.parametrize("name", CASES)
def test_deepmind(name: str) -> None:
    pytest.importorskip("surface_distance")
    p, g, sp = case(name)
    ref = deepmind_all(p, g, sp, tolerance=1.0)
    ours = _ours(name, "deepmind")
    for ours_key, ref_key in (
        ("hausdorff", "hd"),
        ("hausdorff_percentile", "hd95"),
        ("asd", "asd"),
        ("assd", "assd"),
        ("nsd", "nsd"),
    ):
        assert ours[ours_key] == pytest.approx(ref[ref_key], **F64), ours_key
    # gt -> pred mean: the directed mean with the roles swapped
    import surface_distance as sd_lib

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sd = sd_lib.compute_surface_distances(g, p, list(sp))
        gt_to_pred = sd_lib.compute_average_surface_distance(sd)[0]
        robust = {q: sd_lib.compute_robust_hausdorff(sd, q) for q in (0, 50, 99.5)}
    swapped = average_surface_distance(_batch(g), _batch(p), spacing=sp, convention="deepmind")
    assert float(swapped[0]) == pytest.approx(gt_to_pred, **F64)
    for q, value in robust.items():
        ours_q = hausdorff_distance(_batch(p), _batch(g), spacing=sp, convention="deepmind", percentile=q)
        assert float(ours_q[0]) == pytest.approx(value, **F64)


@pytest.mark.parametrize("name", ["A", "A'", "C", "E"])
@pytest.mark.parametrize("metric", ["euclidean", "chessboard", "taxicab"])
def test_torchmetrics(name: str, metric: str) -> None:
    pytest.importorskip("torchmetrics")
    p, g, sp = case(name)
    for directed in (False, True):
        ours = hausdorff_distance(
            _batch(p), _batch(g), spacing=sp, convention="torchmetrics", distance_metric=metric, directed=directed
        )
        assert float(ours[0]) == pytest.approx(torchmetrics_hd(p, g, sp, metric, directed), **F32)


def test_torchmetrics_non_square_is_the_documented_value() -> None:
    """TorchMetrics' stride bug (its issue 3300) gives 17.0 on case A padded to 20x30; the documented HD is 2.83, the
    value it returns on a square image holding the same masks."""
    pytest.importorskip("torchmetrics")
    p, g, sp = case("A")
    wide_p, wide_g = np.pad(p, ((0, 0), (0, 10))), np.pad(g, ((0, 0), (0, 10)))
    ours = float(hausdorff_distance(_batch(wide_p), _batch(wide_g), convention="torchmetrics")[0])
    square = torchmetrics_hd(np.pad(wide_p, ((0, 10), (0, 0))), np.pad(wide_g, ((0, 10), (0, 0))), sp)
    assert ours == pytest.approx(square, **F32)
    assert ours == pytest.approx(math.sqrt(8), **F64)


@pytest.mark.parametrize("name", ["A", "C", "E"])
@pytest.mark.parametrize("ratio", [0.02, 0.05, 0.1])
def test_boundary_iou_authors_rule(name: str, ratio: float) -> None:
    pytest.importorskip("cv2")
    p, g, _ = case(name)
    assert float(boundary_iou(_batch(p), _batch(g), dilation_ratio=ratio)[0]) == pytest.approx(
        authors_boundary_iou(p, g, ratio), **F64
    )


def test_boundary_iou_round_half_even() -> None:
    """A 75x100 image: 0.02 * 125 = 2.5 rounds to d = 2 (Python's round), not 3."""
    pytest.importorskip("cv2")
    rng = np.random.default_rng(3)
    for _ in range(5):
        p = np.zeros((75, 100), bool)
        g = np.zeros((75, 100), bool)
        p[rng.integers(0, 30) : rng.integers(40, 75), rng.integers(0, 40) : rng.integers(50, 100)] = True
        g[rng.integers(0, 30) : rng.integers(40, 75), rng.integers(0, 40) : rng.integers(50, 100)] = True
        assert float(boundary_iou(_batch(p), _batch(g))[0]) == pytest.approx(authors_boundary_iou(p, g), **F64)
