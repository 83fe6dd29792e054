"""The MATLAB-toolbox protocol (PraNet / Inf-Net / SINet ``main.m``) against its numpy port and PySODMetrics 1.6.2.

* The batched torch path == the per-image, per-threshold numpy port of the toolbox loop
  (:mod:`segmetrics_torch.reference.foreground_toolbox`) to 1e-12, every column: random maps (hypothesis: empty /
  full / thin ground truth, constant / binary / noisy maps, TP = 0 at some thresholds), float maps, lists of
  differently sized maps, PySODMetrics' own test images; per image and per dataset, functional and Metric.
* Hand-computed values on a tiny map (the zero rules, the strict vs ``>=`` E-measure, mapminmax's reciprocal).
* S-measure and MAE equal PySODMetrics 1.6.2's to 1e-12 (outside the S-measure's centroid ties, documented).
* The toolbox's threshold grid and ``mapminmax`` as MATLAB builds them; the result-line format.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import assume, event, given, settings, strategies as st

from segmetrics_torch.functional.foreground.matlab_toolbox import (
    TOOLBOX_CURVES,
    TOOLBOX_PROTOCOLS,
    TOOLBOX_RESULT_PATHS,
    TOOLBOX_SCALARS,
    ToolboxSums,
    format_toolbox_line,
    summarize_toolbox,
    toolbox_counts,
    toolbox_foreground_values,
    toolbox_maps,
    toolbox_measures,
    toolbox_thresholds,
)
from segmetrics_torch.metrics.matlab_toolbox import MatlabToolboxMeasures
from segmetrics_torch.reference import foreground_toolbox as ref
from tests.conftest import shared_path
from tests.reference.test_reference_vs_pysod import image_pairs, pysod_all, pysod_sm

cv2 = pytest.importorskip("cv2")

TOL = 1e-12
PROTOCOLS = tuple(TOOLBOX_PROTOCOLS)
IMAGES = ("0001", "19", "aerial-1867541__340")
FAMILIES = ("dice", "iou", "sensitivity", "specificity", "precision", "f", "e")


def read_pair(name: str) -> tuple[np.ndarray, np.ndarray]:
    root = shared_path("pysod_testdata")
    pred = cv2.imread(str(root / "preds" / f"{name}.png"), cv2.IMREAD_GRAYSCALE)
    gt = cv2.imread(str(root / "masks" / f"{name}.png"), cv2.IMREAD_GRAYSCALE)
    return pred, gt


def centroid_tie(gt: np.ndarray) -> bool:
    """Whether MATLAB's and numpy's roundings of the S-measure centroid differ for this ground truth."""
    g = gt > 128 if gt.dtype == np.uint8 else gt
    if not g.any() or g.all():
        return False
    rows, cols = np.nonzero(g)
    numpy_split = (int(np.round(rows.sum() / rows.size)) + 1, int(np.round(cols.sum() / cols.size)) + 1)
    return numpy_split != ref.matlab_centroid(g)


def assert_image_matches(ours: dict[str, torch.Tensor], index: int, expected: dict, what: str) -> None:
    for key, value in expected.items():
        np.testing.assert_allclose(
            ours[key][index].cpu().numpy(),
            np.asarray(value),
            rtol=0,
            atol=TOL,
            equal_nan=True,
            err_msg=f"{what}: {key}",
        )


# ----------------------------------------------------------------------------------------------------------------
# MATLAB's building blocks
# ----------------------------------------------------------------------------------------------------------------
def test_thresholds_are_matlabs_colon_from_both_ends():
    t = toolbox_thresholds().numpy()
    assert np.array_equal(t, ref.toolbox_thresholds())
    assert t[0] == 1.0 and t[-1] == 0.0 and np.all(np.diff(t) < 0)
    step = -1.0 / 255.0
    # written out independently: the first 128 from 1 downwards, the last 128 from 0 upwards
    assert all(t[k] == 1.0 + k * step for k in range(128))
    assert all(t[255 - k] == 0.0 - k * step for k in range(128))
    # the grid is not the quotients k / 255: 36 of them differ in the last bits, which decides ties at a grey level
    assert sum(t[255 - k] != k / 255 for k in range(256)) == 36


def test_colon_port_on_other_grids():
    # the port's general case against values stated by the algorithm (odd and even numbers of intervals)
    assert np.array_equal(ref.matlab_colon(0.0, 0.25, 1.0), [0.0, 0.25, 0.5, 0.75, 1.0])
    grid = ref.matlab_colon(0.0, 0.1, 0.3)
    assert len(grid) == 4 and grid[-1] == 0.3 and grid[1] == 0.1
    assert len(ref.matlab_colon(0.0, 0.1, 1.0)) == 11


@settings(max_examples=200)
@given(image_pairs())
def test_maps_are_mapminmax_of_im2double(pair):
    pred, _ = pair
    ours = toolbox_maps(torch.from_numpy(pred)[None])[0].numpy()
    assert np.array_equal(ours, ref.mapminmax(ref.im2double(pred)))  # bit for bit, constant maps included


def test_mapminmax_multiplies_by_the_reciprocal():
    # 200 / 255 times its reciprocal is 0.9999999999999999: the map's maximum does not reach the threshold 1
    pred = np.array([[0, 200]], dtype=np.uint8)
    assert ref.mapminmax(ref.im2double(pred))[0, 1] == 0.9999999999999999
    assert toolbox_maps(torch.from_numpy(pred)[None])[0, 0, 1].item() == 0.9999999999999999
    # a constant map is left alone; a float map in [0, 1] with min 0 and max 1 too
    const = np.full((2, 3), 100, dtype=np.uint8)
    assert np.all(toolbox_maps(torch.from_numpy(const)[None]).numpy() == 100 / 255)
    assert np.all(ref.mapminmax(ref.im2double(const)) == 100 / 255)


# ----------------------------------------------------------------------------------------------------------------
# hand-computed values
# ----------------------------------------------------------------------------------------------------------------
def test_hand_computed_tiny_map():
    # 2 x 3 image, GT = left column pair; the map has the levels 0, 0.5 and 1 after mapminmax
    gt = torch.tensor([[[True, False, False], [True, False, False]]])
    preds = torch.tensor([[[255, 255, 0], [0, 0, 0]]], dtype=torch.uint8)
    out = toolbox_measures(preds, gt)
    # at t = 1: predicted {(0,0), (0,1)}: TP 1, FP 1, FN 1, TN 3
    assert out["dice_curve"][0, 0].item() == 2 * 1 / (2 + 2)
    assert out["iou_curve"][0, 0].item() == 1 / (1 + 2)
    assert out["sensitivity_curve"][0, 0].item() == 0.5
    assert out["specificity_curve"][0, 0].item() == 3 / 4
    assert out["precision_curve"][0, 0].item() == 0.5
    # E-measure of p > 1 (strict, the first releases): nothing predicted, sum phi = 4 * phi(0, 0) + 2 * phi(0, 1)
    mu_g = 2 / 6
    phi = lambda a, c: ((2 * a * c / (a * a + c * c + 2.220446049250313e-16)) + 1) ** 2 / 4  # noqa: E731
    e_strict = (4 * phi(0.0, -mu_g) + 2 * phi(0.0, 1 - mu_g)) / (6 - 1 + 2.220446049250313e-16)
    assert out["e_curve"][0, 0].item() == pytest.approx(e_strict, abs=TOL)
    # E-measure of p >= 1 (2020-11): the two 255 pixels
    out_ge = toolbox_measures(preds, gt, protocol="matlab-toolbox-2020-11")
    mu_fm = 2 / 6
    e_ge = (phi(1 - mu_fm, 1 - mu_g) + phi(1 - mu_fm, -mu_g) + phi(-mu_fm, 1 - mu_g) + 3 * phi(-mu_fm, -mu_g)) / (
        6 - 1 + 2.220446049250313e-16
    )
    assert out_ge["e_curve"][0, 0].item() == pytest.approx(e_ge, abs=TOL)
    # the overlap curves do not depend on the protocol
    for key in ("dice_curve", "iou_curve", "sensitivity_curve", "specificity_curve"):
        assert torch.equal(out[key], out_ge[key])
    # at t = 0 every pixel is predicted: Dice 2 * 2 / (2 + 6), specificity 0 / 4
    assert out["dice_curve"][0, -1].item() == 0.5 and out["specificity_curve"][0, -1].item() == 0.0


def test_zero_rules_when_tp_is_zero():
    # the map is high on background only: TP = 0 at the thresholds above the foreground's level
    gt = torch.zeros(1, 4, 4, dtype=torch.bool)
    gt[0, :2, :2] = True
    preds = torch.zeros(1, 4, 4, dtype=torch.uint8)
    preds[0, 2:, 2:] = 255
    preds[0, :2, :2] = 100
    out = toolbox_measures(preds, gt)
    p = toolbox_maps(preds)[0]
    t = toolbox_thresholds()
    no_tp = t > p[0, 0]
    assert no_tp.any() and (~no_tp).any()
    for family in ("dice", "iou", "sensitivity", "specificity", "precision", "f"):
        assert torch.all(out[f"{family}_curve"][0, no_tp] == 0), family
    # the toolbox zeroes the specificity too, although TN / (TN + FP) = 8 / 12 there
    assert torch.all(out["specificity_curve"][0, ~no_tp][:-1] > 0)


def test_empty_ground_truth_all_overlap_zero_and_full_ground_truth_nan_specificity():
    g = torch.Generator().manual_seed(1)
    preds = (torch.rand(2, 9, 7, generator=g) * 255).to(torch.uint8)
    target = torch.zeros(2, 9, 7, dtype=torch.bool)
    target[1] = True
    out = toolbox_measures(preds, target)
    for family in ("dice", "iou", "sensitivity", "specificity", "precision", "f"):
        assert torch.all(out[f"{family}_curve"][0] == 0)
        assert out[f"{family}_adaptive"][0] == 0
    assert torch.all(torch.isnan(out["specificity_curve"][1]))  # TP > 0 everywhere, TN + FP = 0
    assert torch.all(out["sensitivity_curve"][1] > 0)
    metric = MatlabToolboxMeasures()
    metric.update(preds, target)
    with pytest.warns(RuntimeWarning, match="specificity is NaN"):
        res = metric.compute()
    assert torch.isnan(res["specificity"]["mean"]) and not torch.isnan(res["dice"]["mean"])


# ----------------------------------------------------------------------------------------------------------------
# parity with the numpy port of the toolbox loop
# ----------------------------------------------------------------------------------------------------------------
@settings(max_examples=150)
@given(image_pairs(), st.sampled_from(PROTOCOLS))
def test_random_maps_match_the_toolbox_loop(pair, protocol):
    pred, gt = pair
    tie = centroid_tie(gt)
    event(f"centroid tie: {tie}")
    ours = toolbox_measures(torch.from_numpy(pred)[None], torch.from_numpy(gt)[None], protocol=protocol)
    expected = ref.evaluate_image(pred, gt, protocol)
    if tie:  # the known S-measure difference (test_s_measure_centroid_tie_follows_matlab)
        expected.pop("s_measure")
    assert_image_matches(ours, 0, expected, f"{protocol} {pred.shape}")


@st.composite
def float_maps(draw) -> tuple[np.ndarray, np.ndarray]:
    pred_u8, gt = draw(image_pairs())
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(("uniform", "levels", "const", "unit")))
    if kind == "uniform":
        pred = rng.random(gt.shape)
    elif kind == "levels":  # exactly on the grid's neighbourhood: k / 255 (36 of them differ from the grid)
        pred = rng.integers(0, 256, gt.shape) / 255
    elif kind == "const":
        pred = np.full(gt.shape, draw(st.sampled_from((0.0, 0.2, 1 / 3, 1.0))))
    else:  # spans [0, 1] exactly: mapminmax leaves it alone
        pred = pred_u8 / 255
        pred.flat[0], pred.flat[-1] = 0.0, 1.0
    event(f"float map: {kind}")
    return pred, gt > 128


@settings(max_examples=100)
@given(float_maps(), st.sampled_from(PROTOCOLS))
def test_float_maps_match_the_toolbox_loop(pair, protocol):
    pred, g = pair
    assume(not centroid_tie(g))
    ours = toolbox_measures(torch.from_numpy(pred)[None], torch.from_numpy(g)[None], protocol=protocol)
    assert_image_matches(ours, 0, ref.evaluate_image(pred, g, protocol), f"{protocol} float")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_released_maps_match_the_toolbox_loop_per_image_and_per_dataset(protocol):
    pairs = [read_pair(name) for name in IMAGES]
    preds = [torch.from_numpy(p) for p, _ in pairs]
    target = [torch.from_numpy(g) for _, g in pairs]
    ours = toolbox_measures(preds, target, protocol=protocol, weighted_f=True)
    for i, (pred, gt) in enumerate(pairs):
        assert_image_matches(ours, i, ref.evaluate_image(pred, gt, protocol, weighted_f=True), IMAGES[i])
    expected = ref.evaluate_dataset(pairs, protocol, weighted_f=True)
    for summary in (
        summarize_toolbox({key: value.mean(0) for key, value in ours.items()}),
        _metric_in_batches(pairs, protocol),
    ):
        for family in FAMILIES:
            name = {"f": "f_measure", "e": "e_measure"}.get(family, family)
            for part in ("mean", "max", "adaptive"):
                assert summary[name][part].item() == pytest.approx(expected[f"{part}_{family}"], abs=TOL)
            np.testing.assert_allclose(summary[name]["curve"].numpy(), expected[f"column_{family}"], atol=TOL)
        for key in ("s_measure", "mae", "weighted_f_measure"):
            assert summary[key].item() == pytest.approx(expected[key], abs=TOL)


def _metric_in_batches(pairs, protocol):
    metric = MatlabToolboxMeasures(protocol=protocol, weighted_f=True)
    metric.update([torch.from_numpy(pairs[0][0])], [torch.from_numpy(pairs[0][1])])
    metric.update([torch.from_numpy(p) for p, _ in pairs[1:]], [torch.from_numpy(g) for _, g in pairs[1:]])
    return metric.compute()


def test_batched_stack_equals_one_by_one_and_lists():
    rng = np.random.default_rng(5)
    preds = torch.from_numpy(rng.integers(0, 256, (4, 1, 21, 34), dtype=np.uint8))
    target = torch.from_numpy(rng.random((4, 1, 21, 34)) > 0.6)
    stacked = toolbox_measures(preds, target)
    for i in range(4):
        single = toolbox_measures(preds[i], target[i])
        for key in stacked:
            assert torch.equal(stacked[key][i], single[key][0]), key
    listed = toolbox_measures(list(preds[:, 0]), list(target[:, 0]))
    for key in stacked:
        assert torch.equal(stacked[key], listed[key]), key


def test_bool_float32_and_uint8_maps_agree():
    rng = np.random.default_rng(6)
    binary = torch.from_numpy(rng.random((3, 12, 10)) > 0.5)
    target = torch.from_numpy(rng.random((3, 12, 10)) > 0.5)
    as_uint8 = toolbox_measures(binary.to(torch.uint8) * 255, target)
    for preds in (binary, binary.to(torch.float32), binary.to(torch.float64)):
        other = toolbox_measures(preds, target)
        for key in as_uint8:
            assert torch.equal(other[key], as_uint8[key]), (preds.dtype, key)


def test_inputs_are_not_modified():
    rng = np.random.default_rng(2)
    for preds in (
        torch.from_numpy(rng.random((2, 9, 11))),
        torch.from_numpy(rng.integers(0, 256, (2, 9, 11), dtype=np.uint8)),
    ):
        target = torch.from_numpy(rng.random((2, 9, 11)) > 0.5)
        before = preds.clone(), target.clone()
        toolbox_measures(preds, target, weighted_f=True)
        assert torch.equal(preds, before[0]) and torch.equal(target, before[1])


def test_uint8_level_path_equals_the_pixel_path():
    # the first-passed threshold of each grey level, or of each pixel: the same counts
    rng = np.random.default_rng(3)
    for low, high in ((0, 256), (37, 201), (0, 2), (9, 10)):
        preds = torch.from_numpy(rng.integers(low, high, (3, 17, 23), dtype=np.uint8))
        g = torch.from_numpy(rng.random((3, 17, 23)) > 0.5)
        p = toolbox_maps(preds)
        for strict in (False, True):
            by_level = toolbox_counts(p, g, strict=strict, preds=preds)
            by_pixel = toolbox_counts(p, g, strict=strict)
            assert torch.equal(by_level.tp, by_pixel.tp) and torch.equal(by_level.pp, by_pixel.pp)


# ----------------------------------------------------------------------------------------------------------------
# against the toolbox's own saved output (COD toolbox, 2020-04-25: three released SINet maps of COD10K)
# ----------------------------------------------------------------------------------------------------------------
COD_DATA = Path(__file__).parent / "data" / "codtoolbox_sinet"


def read_cod_sample() -> tuple[list[torch.Tensor], list[torch.Tensor], dict[str, np.ndarray]]:
    from scipy.io import loadmat

    names = sorted(path.name for path in (COD_DATA / "gt").glob("*.png"))
    assert len(names) == 3
    preds = [torch.from_numpy(cv2.imread(str(COD_DATA / "map" / name), cv2.IMREAD_GRAYSCALE)) for name in names]
    target = [torch.from_numpy(cv2.imread(str(COD_DATA / "gt" / name), cv2.IMREAD_GRAYSCALE)) for name in names]
    saved = {
        k: np.asarray(v, dtype=np.float64).ravel()
        for k, v in loadmat(COD_DATA / "2020-CVPR-SINet.mat").items()
        if not k.startswith("__")
    }
    return preds, target, saved


def test_cod_toolbox_saved_output_is_reproduced():
    preds, target, saved = read_cod_sample()
    metric = MatlabToolboxMeasures(protocol="matlab-toolbox", beta2=0.3, weighted_f=True)
    metric.update(preds, target)
    res = metric.compute()
    # the F, precision and recall columns and their summaries: bit for bit (grid, mapminmax, >=, the 1.3 literal)
    for key, ours in (
        ("column_F", res["f_measure"]["curve"]),
        ("column_Pr", res["precision"]["curve"]),
        ("column_Rec", res["sensitivity"]["curve"]),
    ):
        np.testing.assert_array_equal(ours.numpy(), saved[key], err_msg=key)
    assert res["f_measure"]["adaptive"].item() == saved["adpFm"][0]
    assert res["f_measure"]["max"].item() == saved["maxFm"][0]
    assert res["f_measure"]["mean"].item() == pytest.approx(saved["meanFm"][0], abs=1e-15)
    # the E-measure: MATLAB sums its ~8e5-pixel enhanced matrices in its own order (the numpy port: 1.9e-12 too)
    np.testing.assert_allclose(res["e_measure"]["curve"].numpy(), saved["column_E"], rtol=0, atol=3e-12)
    for part, key in (("adaptive", "adpEm"), ("mean", "meanEm"), ("max", "maxEm")):
        assert res["e_measure"][part].item() == pytest.approx(saved[key][0], abs=1e-12), key
    assert res["s_measure"].item() == pytest.approx(saved["Sm"][0], abs=1e-12)
    assert res["mae"].item() == pytest.approx(saved["mae"][0], abs=1e-13)
    # the weighted F: 1.2e-10 (bwdist's tie rule and single-precision distances are not emulated; docs)
    assert res["weighted_f_measure"].item() == pytest.approx(saved["wFm"][0], abs=2e-10)
    # the E-measure of p >= t (the 2020-11 update) is not what this output used: its first column differs by 0.70
    later = MatlabToolboxMeasures(protocol="matlab-toolbox-2020-11")
    later.update(preds, target)
    assert abs(later.compute()["e_measure"]["curve"][0].item() - saved["column_E"][0]) > 0.5
    # the numpy port of the loop reproduces it too
    port = ref.evaluate_dataset([(p.numpy(), g.numpy()) for p, g in zip(preds, target, strict=True)], weighted_f=True)
    np.testing.assert_array_equal(port["column_f"], saved["column_F"])
    np.testing.assert_allclose(port["column_e"], saved["column_E"], rtol=0, atol=3e-12)
    assert port["s_measure"] == pytest.approx(saved["Sm"][0], abs=1e-14)


def test_cod_toolbox_result_line():
    preds, target, _ = read_cod_sample()
    metric = MatlabToolboxMeasures(weighted_f=True)
    metric.update(preds, target)
    expected = (  # the repository's Results/Result-COD10K-test/COD10K_result.txt
        "(Dataset:COD10K; Model:2020-CVPR-SINet) Smeasure:0.960; wFmeasure:0.956;MAE:0.023; adpEm:0.983; "
        "meanEm:0.972; maxEm:0.985; adpFm:0.978; meanFm:0.960; maxFm:0.982."
    )
    assert format_toolbox_line(metric.compute(), "COD10K", "2020-CVPR-SINet", "cod") == expected


# ----------------------------------------------------------------------------------------------------------------
# against PySODMetrics 1.6.2: S-measure and MAE equal, Dice and E-measure differ (recorded in the docs)
# ----------------------------------------------------------------------------------------------------------------
@settings(max_examples=150)
@given(image_pairs())
def test_s_measure_and_mae_equal_pysodmetrics(pair):
    pred, gt = pair
    assume(not centroid_tie(gt))
    ours = toolbox_measures(torch.from_numpy(pred)[None], torch.from_numpy(gt)[None])
    expected_sm = pysod_sm(pred, gt)
    if np.isnan(expected_sm):
        assert torch.isnan(ours["s_measure"][0])
    elif not _constant_quadrant_case(pred, gt):
        assert ours["s_measure"][0].item() == pytest.approx(expected_sm, abs=TOL)
    assert ours["mae"][0].item() == pytest.approx(pysod_all(pred, gt)["mae"], abs=TOL)


def _constant_quadrant_case(pred: np.ndarray, gt: np.ndarray) -> bool:
    """PySODMetrics' fragile S-measure case (a quadrant where map and GT are both constant; see
    segmetrics_torch.reference.foreground.s_measure): the package's exact moments differ there by design."""
    from segmetrics_torch.reference import foreground as sod_ref

    p, g = sod_ref.prepare(pred, gt)
    return sod_ref.s_measure(p, g, moments="exact") != sod_ref.s_measure(p, g, moments="numpy")


@pytest.mark.parametrize("name", IMAGES)
def test_released_maps_s_measure_and_mae_equal_pysodmetrics(name):
    pred, gt = read_pair(name)
    ours = toolbox_measures(torch.from_numpy(pred)[None], torch.from_numpy(gt)[None])
    assert ours["s_measure"][0].item() == pytest.approx(pysod_sm(pred, gt), abs=TOL)
    assert ours["mae"][0].item() == pytest.approx(pysod_all(pred, gt)["mae"], abs=TOL)


def test_released_maps_differ_from_pysodmetrics_where_documented():
    # the figures of docs/matlab-toolbox.md ("The two conventions on PySODMetrics' test images"): dataset means of
    # the toolbox protocols minus those of the default (PySODMetrics) convention
    from segmetrics_torch.functional import foreground_measures

    pairs = [read_pair(name) for name in IMAGES]
    preds = [torch.from_numpy(p) for p, _ in pairs]
    target = [torch.from_numpy(g) for _, g in pairs]
    default = foreground_measures(preds, target)
    expected = {  # protocol -> (mean Dice, mean IoU, mean E-measure) differences
        "matlab-toolbox": (-1.17e-5, -1.74e-5, 1.38e-3),
        "matlab-toolbox-2020-11": (-1.17e-5, -1.74e-5, -9.67e-6),
    }
    for protocol, differences in expected.items():
        ours = toolbox_measures(preds, target, protocol=protocol)
        for key, difference in zip(("dice_curve", "iou_curve", "e_curve"), differences, strict=True):
            actual = (ours[key].mean() - default[key].mean()).item()
            assert actual == pytest.approx(difference, rel=0.01), (protocol, key)
        # the adaptive values agree (same threshold rule, no pixel on the threshold here)
        for key in ("dice_adaptive", "iou_adaptive", "e_adaptive"):
            assert ours[key].mean().item() == pytest.approx(default[key].mean().item(), abs=TOL), (protocol, key)


def test_s_measure_centroid_tie_follows_matlab():
    # GT in columns {0, 5} and rows 1..4: the 0-based mean column and row are 2.5 (k = 2, even): numpy rounds them
    # to 2 (split after 3 columns / rows), MATLAB rounds the 1-based 3.5 to 4 (split after 4)
    gt = np.zeros((6, 8), dtype=np.uint8)
    gt[1:5, 0] = 255
    gt[1:5, 5] = 255
    assert centroid_tie(gt)
    pred = np.random.default_rng(0).integers(0, 256, (6, 8), dtype=np.uint8)
    ours = toolbox_measures(torch.from_numpy(pred)[None], torch.from_numpy(gt)[None])["s_measure"][0].item()
    matlab_rounding = ref.structure_measure(ref.mapminmax(ref.im2double(pred)), gt > 128)
    assert abs(matlab_rounding - pysod_sm(pred, gt)) > 1e-3  # the case matters
    assert ours == pytest.approx(matlab_rounding, abs=TOL)


# ----------------------------------------------------------------------------------------------------------------
# Metric, result lines, bad inputs, devices
# ----------------------------------------------------------------------------------------------------------------
def test_metric_merge_equals_one_metric_and_forward_is_the_batch():
    rng = np.random.default_rng(11)
    preds = torch.from_numpy(rng.integers(0, 256, (6, 15, 19), dtype=np.uint8))
    target = torch.from_numpy(rng.random((6, 15, 19)) > 0.5)
    whole = MatlabToolboxMeasures(protocol="matlab-toolbox-2020-11")
    whole.update(preds, target)
    a, b = (
        MatlabToolboxMeasures(protocol="matlab-toolbox-2020-11"),
        MatlabToolboxMeasures(protocol="matlab-toolbox-2020-11"),
    )
    batch_value = a(preds[:2], target[:2])
    b.update(preds[2:], target[2:])
    a.merge_state(b)
    merged, expected = a.compute(), whole.compute()
    for name in ("dice", "e_measure", "specificity"):
        torch.testing.assert_close(merged[name]["curve"], expected[name]["curve"], rtol=0, atol=1e-15)
    alone = summarize_toolbox(
        {k: v.mean(0) for k, v in toolbox_measures(preds[:2], target[:2], protocol="matlab-toolbox-2020-11").items()}
    )
    torch.testing.assert_close(batch_value["dice"]["mean"], alone["dice"]["mean"], rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match="protocol"):
        a.merge_state(MatlabToolboxMeasures())
    states = {name: getattr(whole, name) for name in whole._defaults}
    assert all(v.dtype in (torch.float64, torch.int64) for v in states.values())
    # every measure state a sum; the constant settings_id (metrics/_base.py) the maximum of equal values
    sums = {whole._reductions[name].__name__ for name in whole._defaults if name != "settings_id"}
    assert sums <= {"dim_zero_sum"} and whole._reductions["settings_id"].__name__ == "dim_zero_max"


def test_result_lines():
    pairs = [read_pair(name) for name in IMAGES]
    metric = MatlabToolboxMeasures(weighted_f=True)
    metric.update([torch.from_numpy(p) for p, _ in pairs], [torch.from_numpy(g) for _, g in pairs])
    res = metric.compute()
    line = format_toolbox_line(res, "pysod", "test", "pranet")
    assert line.startswith("(Dataset:pysod; Model:test) meanDic:") and line.endswith(".")
    assert f"meanDic:{res['dice']['mean'].item():.3f};meanIoU:{res['iou']['mean'].item():.3f};wFm:" in line
    assert line.count(":") == 15
    assert format_toolbox_line(res, "d", "m", "cod").startswith("(Dataset:d; Model:m) Smeasure:")
    no_wf = MatlabToolboxMeasures()
    no_wf.update([torch.from_numpy(p) for p, _ in pairs], [torch.from_numpy(g) for _, g in pairs])
    with pytest.raises(ValueError, match="weighted_f"):
        format_toolbox_line(no_wf.compute(), "d", "m", "pranet")
    with pytest.raises(ValueError, match="layout"):
        format_toolbox_line(res, "d", "m", "matlab")


def test_bad_inputs_are_named():
    preds = torch.zeros(1, 4, 4, dtype=torch.uint8)
    target = torch.zeros(1, 4, 4, dtype=torch.bool)
    with pytest.raises(ValueError, match="protocol"):
        toolbox_measures(preds, target, protocol="pysodmetrics")
    with pytest.raises(ValueError, match="beta2"):
        toolbox_measures(preds, target, beta2=-1.0)
    with pytest.raises(TypeError, match="weighted_f"):
        toolbox_measures(preds, target, weighted_f="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="same shape"):
        toolbox_measures(preds, target[:, :3])
    with pytest.raises(ValueError, match="preds"):
        toolbox_measures(torch.full((1, 4, 4), 2.0), target)
    with pytest.raises(ValueError, match="protocol"):
        MatlabToolboxMeasures(protocol="toolbox")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_devices_agree(device, protocol):
    pairs = [read_pair(name) for name in IMAGES]
    preds = [torch.from_numpy(p) for p, _ in pairs]
    target = [torch.from_numpy(g) for _, g in pairs]
    cpu = toolbox_measures(preds, target, protocol=protocol, weighted_f=True)
    there = toolbox_measures(
        [p.to(device) for p in preds], [t.to(device) for t in target], protocol=protocol, weighted_f=True
    )
    for key in cpu:
        assert there[key].device.type == torch.device(device).type
        torch.testing.assert_close(there[key].cpu(), cpu[key], rtol=0, atol=TOL, equal_nan=True)


def test_keys_are_the_documented_ones():
    out = toolbox_measures(
        torch.zeros(1, 3, 3, dtype=torch.uint8), torch.ones(1, 3, 3, dtype=torch.bool), weighted_f=True
    )
    assert set(out) == set(TOOLBOX_CURVES) | set(TOOLBOX_SCALARS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert all(out[key].shape == (1, 256) for key in TOOLBOX_CURVES)


def test_sums_equal_the_metric_and_load_adds_processes():
    rng = np.random.default_rng(4)
    preds = torch.from_numpy(rng.integers(0, 256, (5, 13, 17), dtype=np.uint8))
    target = torch.from_numpy(rng.random((5, 13, 17)) > 0.4)
    sums, metric = ToolboxSums(weighted_f=True), MatlabToolboxMeasures(weighted_f=True)
    values = sums.update(preds[:2], target[:2])
    assert torch.equal(values["dice_curve"], toolbox_measures(preds[:2], target[:2])["dice_curve"])
    sums.update(list(preds[2:]), list(target[2:]))
    metric.update(preds[:2], target[:2])
    metric.update(list(preds[2:]), list(target[2:]))
    ours, theirs = sums.compute(), metric.compute()
    for name in ("dice", "sensitivity", "specificity", "e_measure", "f_measure"):
        for part in ("adaptive", "mean", "max", "curve"):
            assert torch.equal(ours[name][part], theirs[name][part]), (name, part)
    for key in ("mae", "s_measure", "weighted_f_measure"):
        assert torch.equal(ours[key], theirs[key])
    # two "processes": each half, sums added and loaded
    first, second = ToolboxSums(weighted_f=True), ToolboxSums(weighted_f=True)
    first.update(preds[:3], target[:3])
    second.update(preds[3:], target[3:])
    first.load({k: v + second.sums()[k] for k, v in first.sums().items()}, int(first.count) + int(second.count))
    torch.testing.assert_close(first.compute()["dice"]["curve"], ours["dice"]["curve"], rtol=0, atol=1e-15)
    assert sums.settings == {"protocol": "matlab-toolbox", "beta2": 0.3, "weighted_f": True, "edt_backend": "auto"}
    with pytest.warns(RuntimeWarning, match="no image"):
        ToolboxSums().compute()


def test_result_paths_name_registered_keys_and_existing_values():
    from segmetrics_torch.registry import canonical

    sums = ToolboxSums(weighted_f=True)
    sums.update(torch.zeros(1, 4, 4, dtype=torch.uint8), torch.eye(4, dtype=torch.bool)[None])
    result = sums.compute()
    for key, path in TOOLBOX_RESULT_PATHS.items():
        value = result
        for part in path.split("/"):
            value = value[part]
        assert value.ndim == 0, key
        assert canonical(key) == key


# ----------------------------------------------------------------------------------------------------------------
# DDP: two gloo processes, each with half of the images, == one process
# ----------------------------------------------------------------------------------------------------------------
def _ddp_data() -> tuple[torch.Tensor, torch.Tensor]:
    rng = np.random.default_rng(8)
    preds = torch.from_numpy(rng.integers(0, 256, (6, 23, 31), dtype=np.uint8))
    target = torch.from_numpy(rng.random((6, 23, 31)) > 0.6)
    target[0] = False  # an empty ground truth
    return preds, target


def _ddp_worker(rank: int, world: int, port: int, out_path: str) -> None:
    import torch.distributed as dist

    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        assert dist.get_world_size() == 2, "the DDP test must run in two processes"
        preds, target = _ddp_data()
        metric = MatlabToolboxMeasures(weighted_f=True)
        mine = list(range(rank, preds.shape[0], world))
        metric.update(preds[mine], target[mine])
        result = metric.compute()
        if rank == 0:
            torch.save({"world_size": dist.get_world_size(), "result": result}, out_path)
    finally:
        dist.destroy_process_group()


@pytest.mark.ddp
@pytest.mark.slow
def test_two_process_gloo_equals_single_process(tmp_path):
    import torch.multiprocessing as mp

    from tests.metrics.test_ddp import _assert_equal, _free_port

    out_path = str(tmp_path / "ddp.pt")
    mp.spawn(_ddp_worker, args=(2, _free_port(), out_path), nprocs=2, join=True)
    got = torch.load(out_path, weights_only=False)
    assert got["world_size"] == 2
    single = MatlabToolboxMeasures(weighted_f=True)
    single.update(*_ddp_data())
    _assert_equal(got["result"], single.compute())


def test_foreground_values_use_the_default_conventions_names():
    rng = np.random.default_rng(12)
    preds = torch.from_numpy(rng.integers(0, 256, (2, 11, 9), dtype=np.uint8))
    target = torch.from_numpy(rng.random((2, 11, 9)) > 0.5)
    values = toolbox_foreground_values(preds, target, protocol="matlab-toolbox-2020-11", weighted_f=True)
    direct = toolbox_measures(preds, target, protocol="matlab-toolbox-2020-11", weighted_f=True)
    assert torch.equal(values["recall_curve"], direct["sensitivity_curve"])
    assert torch.equal(values["recall_adaptive"], direct["sensitivity_adaptive"])
    from segmetrics_torch.functional.foreground.suite import FOREGROUND_KEYS

    assert set(FOREGROUND_KEYS) <= set(values)
    with pytest.raises(ValueError, match="normalize"):
        toolbox_foreground_values(preds, target, protocol="matlab-toolbox", normalize=False)
