"""Bad and edge inputs of the meta-measures and their baselines (segmetrics_torch.meta), issue 20."""

from __future__ import annotations

import pytest
import torch

from segmetrics_torch import MAE
from segmetrics_torch.meta import (
    annotation_error_test,
    as_measure,
    centered_gaussian_map,
    gaussian_noise_maps,
    generic_map_test,
    grid_oversegmentation,
    gt_switch_test,
    match_size,
    noise_test,
    perturb_ground_truth,
    quadtree_partition,
    quadtree_ucm,
    random_hierarchy_ucm,
    sabd,
    sihd,
    sihd_from_values,
    sisd,
    switch_pairing,
)

from .cases import close, meta, raises, run_case, value


def _ann(b: int = 3, h: int = 8, w: int = 12) -> torch.Tensor:
    """(B, 2, H, W) two annotations per image, the images differ."""
    a = torch.zeros(b, 2, h, w, dtype=torch.int64)
    for i in range(b):
        a[i, 0, :, 3 + 2 * i :] = 1
        a[i, 1, :, 4 + 2 * i :] = 1
        a[i, 1, 5:, :] += 2
    return a


def _masks(b: int = 3, h: int = 8, w: int = 12) -> torch.Tensor:
    g = torch.zeros(b, h, w, dtype=torch.bool)
    for i in range(b):
        g[i, 2:6, 2 + i : 8 + i] = True
    return g


def _maps(seed: int, b: int = 3, h: int = 8, w: int = 12) -> torch.Tensor:
    return torch.rand(b, h, w, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


ANN, GT = _ann(), _masks()
SOA = {"a": GT.double() * 0.8 + 0.1, "b": GT.double() * 0.6 + 0.2}
SEG = ANN[:, 0]
BASE = torch.zeros_like(SEG)
SAME, DIFF = torch.linspace(0.6, 1.0, 20), torch.linspace(0.0, 0.5, 20)


CASES = [
    # ---- as_measure
    raises("as-measure-unknown", lambda: as_measure("iou2"), ValueError, r"`measure` to name one of"),
    raises("as-measure-int", lambda: as_measure(3), TypeError, r"`measure` to be a name, a torchmetrics.Metric"),
    raises("as-measure-none", lambda: as_measure(None), TypeError, r"`measure` to be a name"),
    raises(
        "as-measure-callable-no-direction",
        lambda: as_measure(lambda p, g: p.sum()),
        ValueError,
        r"`higher_is_better` \(True or False\) for a callable",
    ),
    raises(
        "as-measure-direction-str",
        lambda: as_measure("mae", higher_is_better="no"),
        TypeError,
        r"`higher_is_better` to be a bool",
    ),
    raises(
        "as-measure-callable-direction-str",
        lambda: as_measure(lambda p, g: p.sum(), higher_is_better="yes"),
        TypeError,
        r"`higher_is_better` to be a bool",
    ),
    value("as-measure-metric", lambda: as_measure(MAE()).higher_is_better, lambda out: out is False),
    raises(
        "as-measure-dict-no-key",
        lambda: sabd(as_measure(lambda p, g: {"x": torch.zeros(len(p))}, higher_is_better=True), SEG, BASE, ANN),
        ValueError,
        r"returns a dict with keys \['x'\]: pass `key`",
    ),
    # ---- sihd_from_values
    raises(
        "sihd-values-num-bins-2",
        lambda: sihd_from_values(SAME, DIFF, num_bins=2),
        ValueError,
        r"`num_bins` to be an int >= 3",
    ),
    raises(
        "sihd-values-num-bins-float", lambda: sihd_from_values(SAME, DIFF, num_bins=30.0), ValueError, r"`num_bins`"
    ),
    raises("sihd-values-num-bins-bool", lambda: sihd_from_values(SAME, DIFF, num_bins=True), ValueError, r"`num_bins`"),
    raises("sihd-values-empty", lambda: sihd_from_values([], DIFF), ValueError, r"`same` to hold at least one value"),
    raises(
        "sihd-values-nan",
        lambda: sihd_from_values(SAME, torch.tensor([0.1, float("nan")])),
        ValueError,
        r"`different` to hold at least one value, all finite",
    ),
    raises("sihd-values-str", lambda: sihd_from_values("abc", DIFF), TypeError, r"`same` to be a tensor or a seq"),
    raises("sihd-ordered-str", lambda: sihd("voi", ANN, ordered="no"), TypeError, r"`ordered` to be a bool"),
    value("sihd-values-separated", lambda: sihd_from_values(SAME, DIFF).rate, close(1.0)),
    # ---- sihd
    raises("sihd-unknown-measure", lambda: sihd("mae2", ANN), ValueError, r"`measure` to name one of"),
    raises("sihd-measures-list-bad", lambda: sihd(["voi", "dice"], ANN), ValueError, r"a list of names of"),
    raises("sihd-annotations-none", lambda: sihd("voi", None), TypeError, r"`annotations` to be a torch.Tensor or"),
    raises(
        "sihd-annotations-numpy",
        lambda: sihd("voi", [a.numpy() for a in ANN]),
        TypeError,
        r"`annotations\[0\]` to be a torch.Tensor",
    ),
    raises("sihd-annotations-empty-list", lambda: sihd("voi", []), ValueError, r"at least 2 images, but got 0"),
    raises("sihd-annotations-3d", lambda: sihd("voi", ANN[:, 0]), ValueError, r"`annotations` of shape \(B, K, H, W\)"),
    raises("sihd-annotations-empty", lambda: sihd("voi", []), ValueError, r"`annotations`"),
    raises("sihd-one-annotation", lambda: sihd("voi", ANN[:, :1]), ValueError, r"at least 2 annotations"),
    raises(
        "sihd-zero-annotations",
        lambda: sihd("voi", [ANN[0], ANN[1, :0]]),
        ValueError,
        r"`annotations\[1\]` to be a \(K, H, W\) tensor with K >= 1",
    ),
    raises("sihd-num-bins", lambda: sihd("voi", ANN, num_bins=0), ValueError, r"`num_bins`"),
    raises("sihd-max-different", lambda: sihd("voi", ANN, max_different=0), ValueError, r"`max_different`"),
    raises("sihd-seed-negative", lambda: sihd("voi", ANN, seed=-1, max_different=2), ValueError, r"`seed` to be a non"),
    raises("sihd-seed-float", lambda: sihd("voi", ANN, seed=1.5, max_different=2), ValueError, r"`seed`"),
    raises("sihd-batch-size", lambda: sihd("voi", ANN, batch_size=0), ValueError, r"`batch_size` to be a positive"),
    raises("sihd-meta", lambda: sihd("voi", meta(ANN)), ValueError, r"to hold values"),
    raises("sihd-fraction-labels", lambda: sihd("voi", ANN * 0.5), ValueError, r"to hold integer labels"),
    # identical human partitions: SEISM's pdf_intersection.m stops ("Case not thought"), so do we, clearly
    raises(
        "sihd-identical-annotations",
        lambda: sihd("voi", torch.zeros(3, 2, 4, 4, dtype=torch.int64)),
        ValueError,
        r"SIHD: both PDFs have the same median bin",
    ),
    # ---- sabd / sisd
    raises("sabd-lengths", lambda: sabd("voi", SEG[:2], BASE, ANN), ValueError, r"`soa` to hold 3 images"),
    raises("sabd-baseline-lengths", lambda: sabd("voi", SEG, BASE[:1], ANN), ValueError, r"`baseline` to hold 3"),
    raises("sabd-empty-dict", lambda: sabd("voi", {}, BASE, ANN), ValueError, r"`soa` to hold at least one method"),
    raises("sabd-soa-str", lambda: sabd("voi", "results/", BASE, ANN), TypeError, r"`soa` to be a tensor, a list"),
    raises(
        "sabd-batch-size-zero",
        lambda: sabd("voi", SEG, BASE, ANN, batch_size=0),
        ValueError,
        r"`batch_size` to be a positive int",
    ),
    raises(
        "sabd-batch-size-negative",
        lambda: sabd("voi", SEG, BASE, ANN, batch_size=-2),
        ValueError,
        r"`batch_size` to be a positive int",
    ),
    raises(
        "sabd-size-mismatch",
        lambda: sabd("voi", SEG[:, :4], BASE, ANN),
        ValueError,
        r"`preds\[0\]` and `target\[0\]` to have the same image size",
    ),
    raises("sabd-empty", lambda: sabd("voi", SEG[:0], BASE[:0], ANN[:0]), ValueError, r"at least one image"),
    value("sabd-constant-baseline", lambda: sabd("voi", SEG, BASE, ANN).rate, close(1.0)),
    raises("sisd-one-image", lambda: sisd("voi", SEG[:1], ANN[:1]), ValueError, r"at least 2 images"),
    raises("sisd-pairing", lambda: sisd("voi", SEG, ANN, pairing=[0, 1, 2]), ValueError, r"`pairing` to give every"),
    raises("sisd-pairing-choice", lambda: sisd("voi", SEG, ANN, pairing="some"), ValueError, r"`pairing`"),
    raises("sisd-seed", lambda: sisd("voi", SEG, ANN, pairing="random", seed=True), ValueError, r"`seed`"),
    # ---- foreground tests
    raises("generic-choice", lambda: generic_map_test("mae", SOA, GT, generic="square"), ValueError, r"`generic` to"),
    raises(
        "generic-compare",
        lambda: generic_map_test("mae", SOA, GT, compare="median"),
        ValueError,
        r"`compare` to be one of",
    ),
    raises("generic-lengths", lambda: generic_map_test("mae", {"a": SOA["a"][:2]}, GT), ValueError, r"`a` to hold 3"),
    raises(
        "generic-nan-maps",
        lambda: generic_map_test("mae", {"a": SOA["a"] * float("nan")}, GT),
        ValueError,
        r"`preds` to contain only finite values",
    ),
    raises("generic-batch-size", lambda: generic_map_test("mae", SOA, GT, batch_size=1.5), ValueError, r"`batch_size`"),
    raises("noise-num-maps", lambda: noise_test("mae", SOA, GT, num_maps=0), ValueError, r"`num"),
    raises("noise-std", lambda: noise_test("mae", SOA, GT, std=-1.0), ValueError, r"`std` to be a finite number > 0"),
    raises("noise-mean-nan", lambda: noise_test("mae", SOA, GT, mean=float("nan")), ValueError, r"`mean`"),
    raises("noise-binary-str", lambda: noise_test("mae", SOA, GT, binary="yes"), TypeError, r"`binary` to be a bool"),
    raises("gt-switch-one", lambda: gt_switch_test("mae", {"a": SOA["a"][:1]}, GT[:1]), ValueError, r"at least 2"),
    raises(
        "annotation-operation",
        lambda: annotation_error_test("mae", SOA, GT, operation="open"),
        ValueError,
        r"`operation` to be one of",
    ),
    raises("annotation-radius", lambda: annotation_error_test("mae", SOA, GT, radius=0), ValueError, r"`radius`"),
    # ---- baselines
    raises("quadtree-ucm-small", lambda: quadtree_ucm(1, 8), ValueError, r"`height` to be an int >= 2"),
    raises("quadtree-partition-regions", lambda: quadtree_partition(8, 12, 0), ValueError, r"`num_regions` to be a"),
    raises("quadtree-partition-float", lambda: quadtree_partition(8.0, 12, 4), ValueError, r"`height`"),
    raises("grid-cells", lambda: grid_oversegmentation(8, 12, cells=0), ValueError, r"`cells` to be an int >= 1"),
    raises(
        "random-ucm-seed",
        lambda: random_hierarchy_ucm(grid_oversegmentation(8, 12, 4), seed=-3),
        ValueError,
        r"`seed` to be a non-negative int",
    ),
    raises(
        "random-ucm-none",
        lambda: random_hierarchy_ucm(None),
        TypeError,
        r"`oversegmentation(\[0\])?` to be a torch.Tensor",
    ),
    raises("random-ucm-3d", lambda: random_hierarchy_ucm(SEG), ValueError, r"`oversegmentation\[0\]` to have 2 dims"),
    raises("gaussian-map-sigma", lambda: centered_gaussian_map(8, 12, sigma=0), ValueError, r"`sigma` to be a number"),
    raises("noise-maps-num", lambda: gaussian_noise_maps(0, 8, 12), ValueError, r"`num` to be an int >= 1"),
    raises("noise-maps-std-inf", lambda: gaussian_noise_maps(2, 8, 12, std=float("inf")), ValueError, r"`std`"),
    raises("switch-pairing-one", lambda: switch_pairing(1), ValueError, r"`num` to be an int >= 2"),
    raises("match-size-zero", lambda: match_size(SEG[0], (0, 5)), ValueError, r"`size` to be two positive ints"),
    raises("match-size-negative", lambda: match_size(SEG[0], (-4, 5)), ValueError, r"`size`"),
    raises("match-size-str", lambda: match_size(SEG[0], "8x12"), ValueError, r"`size` to be two positive ints"),
    raises("match-size-1d", lambda: match_size(SEG[0, 0], (8, 12)), ValueError, r"`x` of shape \(\.\.\., h, w\)"),
    raises("match-size-none", lambda: match_size(None, (8, 12)), TypeError, r"`x` to be a torch.Tensor"),
    value("match-size-transpose", lambda: match_size(SEG[0].T, (8, 12)), close(torch.rot90(SEG[0].T, 1))),
    raises(
        "perturb-radius-inf",
        lambda: perturb_ground_truth(GT, radius=float("inf")),
        ValueError,
        r"`radius` to be a finite number > 0",
    ),
    value("perturb-radius-huge", lambda: perturb_ground_truth(GT, radius=1e9), close(torch.ones_like(GT))),
    raises("perturb-values", lambda: perturb_ground_truth(GT.double() * 0.5), ValueError, r"`target` to be boolean"),
    raises("perturb-meta", lambda: perturb_ground_truth(meta(GT)), ValueError, r"`target` to hold values"),
    raises("perturb-4d", lambda: perturb_ground_truth(GT[None]), ValueError, r"`target` of shape \(B, H, W\)"),
    value(
        "perturb-empty-gt",
        lambda: perturb_ground_truth(torch.zeros_like(GT), operation="erode"),
        close(torch.zeros_like(GT)),
    ),
]


@pytest.mark.parametrize("case", [c.param() for c in CASES])
def test_meta_bad_input(case):
    run_case(case)


def test_enough_cases():
    assert len({c.id for c in CASES}) == len(CASES) >= 30
