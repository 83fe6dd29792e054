"""The numpy oracles of ``segmetrics_torch.reference.foreground`` against pysodmetrics 1.6.2.

Three kinds of evidence:
- PySODMetrics' own test images (``../shared/pysod_testdata``): every per-image value and 256-point curve, and every
  dataset value stored for v1.4.3 (the numbers its test suite checks with exact equality).
- Random maps (hypothesis): empty / full / thin / anti-aliased GTs, constant / binary / smooth / noisy / stretched
  predictions, sizes 1..48 x 1..48 and a few larger ones; every measure compared with the pysod classes, curves
  included.
- Edge cases with values known in closed form.
Tolerance: 1e-6 (the package's contract); observed agreement is ~1e-15.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from hypothesis import event, given, note, settings, strategies as st
from scipy import ndimage

from segmetrics_torch.reference import foreground as ref
from tests.conftest import shared_path

pysod = pytest.importorskip("py_sod_metrics")
cv2 = pytest.importorskip("cv2")
from py_sod_metrics.utils import prepare_data  # noqa: E402

TOL = 1e-6
IMAGES = ("0001.png", "19.png", "aerial-1867541__340.png")


def assert_close(actual, expected, what: str, tol: float = TOL) -> None:
    """``|actual - expected| <= tol`` elementwise; NaN only matches NaN."""
    np.testing.assert_allclose(
        np.asarray(actual, dtype=np.float64),
        np.asarray(expected, dtype=np.float64),
        rtol=0,
        atol=tol,
        equal_nan=True,
        err_msg=what,
    )


# ----------------------------------------------------------------------------------------------------------------
# running both sides
# ----------------------------------------------------------------------------------------------------------------
def oracle_all(p: np.ndarray, g: np.ndarray) -> dict:
    """Every oracle value of one prepared image, under the names used by :func:`pysod_all`."""
    em = ref.e_measure(p, g)
    fm = ref.f_measure(p, g)
    pr = ref.precision_recall(p, g)
    iou = ref.iou(p, g)
    dice = ref.dice(p, g)
    return {
        "mae": ref.mae(p, g),
        "wfm": ref.weighted_f_measure(p, g),
        "adp_em": em["adaptive"],
        "em_curve": em["curve"],
        "adp_fm": fm["adaptive"],
        "fm_curve": fm["curve"],
        "precision_curve": fm["precision"],
        "recall_curve": fm["recall"],
        "adp_pre": pr["adaptive_precision"],
        "pre_curve": pr["precision"],
        "adp_rec": pr["adaptive_recall"],
        "rec_curve": pr["recall"],
        "adp_iou": iou["adaptive"],
        "iou_curve": iou["curve"],
        "adp_dice": dice["adaptive"],
        "dice_curve": dice["curve"],
    }


PIXEL_KEYS = ("mae", "wfm", "adp_em", "em_curve", "adp_fm", "fm_curve", "precision_curve", "recall_curve")
FMV2_KEYS = ("adp_pre", "pre_curve", "adp_rec", "rec_curve", "adp_iou", "iou_curve", "adp_dice", "dice_curve")


def pysod_all(pred: np.ndarray, gt: np.ndarray, normalize: bool = True) -> dict:
    """The same values from the pysodmetrics classes (one fresh object per image)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Fmeasure's deprecation warning; numpy's empty-slice warnings of Smeasure
        mae, wfm, em, fm = pysod.MAE(), pysod.WeightedFmeasure(), pysod.Emeasure(), pysod.Fmeasure()
        handlers = {
            "pre": pysod.PrecisionHandler(with_dynamic=True, with_adaptive=True),
            "rec": pysod.RecallHandler(with_dynamic=True, with_adaptive=True),
            "iou": pysod.IOUHandler(with_dynamic=True, with_adaptive=True),
            "dice": pysod.DICEHandler(with_dynamic=True, with_adaptive=True),
        }
        fmv2 = pysod.FmeasureV2(metric_handlers=handlers)
        for metric in (mae, wfm, em, fm, fmv2):
            metric.step(pred, gt, normalize=normalize)
        out = {"mae": mae.get_results()["mae"], "wfm": wfm.get_results()["wfm"]}
        em_res, fm_res = em.get_results()["em"], fm.get_results()
    out.update(
        adp_em=em_res["adp"], em_curve=em_res["curve"], adp_fm=fm_res["fm"]["adp"], fm_curve=fm_res["fm"]["curve"]
    )
    out.update(precision_curve=fm_res["pr"]["p"], recall_curve=fm_res["pr"]["r"])
    for name, res in fmv2.get_results().items():
        out[f"adp_{name}"] = res["adaptive"]
        out[f"{name}_curve"] = res["dynamic"]
    return out


def pysod_sm(pred: np.ndarray, gt: np.ndarray, normalize: bool = True, alpha: float = 0.5) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mean of an empty quadrant
        sm = pysod.Smeasure(alpha=alpha)
        sm.step(pred, gt, normalize=normalize)
        return float(sm.get_results()["sm"])


# ----------------------------------------------------------------------------------------------------------------
# the S-measure's fragile case, decided independently of the oracle
# ----------------------------------------------------------------------------------------------------------------
def sm_quadrants(g: np.ndarray) -> list[tuple[slice, slice]]:
    """The four region-term quadrants as pysod cuts them (``argwhere(g).mean(0).round() + 1``)."""
    h, w = g.shape
    cy, cx = (int(v) + 1 for v in np.argwhere(g).mean(axis=0).round())
    return [
        (slice(0, cy), slice(0, cx)),
        (slice(0, cy), slice(cx, w)),
        (slice(cy, h), slice(0, cx)),
        (slice(cy, h), slice(cx, w)),
    ]


def fragile_quadrants(p: np.ndarray, g: np.ndarray) -> list[bool]:
    """Per quadrant: True when it is non-empty and both prediction and GT are constant on it.

    There the ssim formula gives 1 (alpha' = beta' = 0), but pysod's answer depends on whether ``np.mean`` of the
    constant happens to be exact: if not, sigma_x ~ 1e-33 != 0 and pysod's ssim is 0. The object regions need no
    such exception: there a constant prediction only perturbs the std by ~1e-17, a continuous change far below TOL.
    """
    flags = []
    for rs, cs in sm_quadrants(g):
        bp, bg = p[rs, cs], g[rs, cs]
        flags.append(bool(bp.size) and bp.min() == bp.max() and bg.min() == bg.max())
    return flags


def sm_intended(p: np.ndarray, g: np.ndarray, alpha: float = 0.5, skip_empty: bool = False) -> float:
    """The S-measure the formula intends, assembled from pysod's own pieces (``Smeasure.object`` / ``.ssim``):
    the ssim of every fragile quadrant is 1, and with ``skip_empty`` an empty (zero-weight) quadrant is left out."""
    y = g.mean()
    if y == 0:
        return float(1 - p.mean())
    if y == 1:
        return float(p.mean())
    sm = pysod.Smeasure(alpha=alpha)
    region = 0.0
    for (rs, cs), fragile in zip(sm_quadrants(g), fragile_quadrants(p, g), strict=True):
        bp, bg = p[rs, cs], g[rs, cs]
        if bp.size == 0:
            if skip_empty:
                continue
            return float("nan")
        region += bp.size / g.size * (1.0 if fragile else sm.ssim(bp, bg))
    return float(max(0.0, alpha * sm.object(p, g) + (1 - alpha) * region))


def check_s_measure(pred, gt, normalize: bool = True) -> None:
    """Oracle S-measure (both moment modes, both empty-quadrant modes) against pysod."""
    p, g = ref.prepare(pred, gt, normalize=normalize)
    expected = pysod_sm(pred, gt, normalize=normalize)
    # numpy moments: pysod always, NaN and rounding fragility included
    assert_close(ref.s_measure(p, g, moments="numpy"), expected, "Sm (moments='numpy') vs pysod")
    exact = ref.s_measure(p, g)
    skipped = ref.s_measure(p, g, empty_quadrant="skip")
    if np.isnan(expected):
        event("Sm NaN (empty quadrant)")
    if 0 < g.mean() < 1 and any(fragile_quadrants(p, g)):
        event("Sm fragile quadrant")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sm = pysod.Smeasure()
            blocks = [q for q, fragile in zip(sm_quadrants(g), fragile_quadrants(p, g), strict=True) if fragile]
            pysod_ssims = [sm.ssim(p[rs, cs], g[rs, cs]) for rs, cs in blocks]
        assert all(s in (0, 1) for s in pysod_ssims), pysod_ssims  # the flip is a branch change, nothing else
        if any(s == 0 for s in pysod_ssims):
            event("Sm fragile quadrant flipped by pysod")
        assert_close(exact, sm_intended(p, g), "Sm (moments='exact') vs the formula in a fragile quadrant")
    else:
        assert_close(exact, expected, "Sm (moments='exact') vs pysod")
    assert_close(skipped, sm_intended(p, g, skip_empty=True), "Sm (empty_quadrant='skip')")
    if not np.isnan(skipped):
        assert 0 <= skipped <= 1


# ----------------------------------------------------------------------------------------------------------------
# PySODMetrics' test images
# ----------------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def real_data() -> dict:
    """Images, stored pysod values, and the oracle's values for the 3 test images."""
    root = shared_path("pysod_testdata")
    per_image = json.loads(shared_path("pysod_testdata", "pysod_1.6.2_per_image.json").read_text())["images"]
    dataset = json.loads(shared_path("pysod_testdata", "version_performance.json").read_text())["v1_4_3"]
    images = {}
    for name in IMAGES:
        pred = cv2.imread(str(root / "preds" / name), cv2.IMREAD_GRAYSCALE)
        gt = cv2.imread(str(root / "masks" / name), cv2.IMREAD_GRAYSCALE)
        assert pred is not None and gt is not None, name
        p, g = ref.prepare(pred, gt)
        values = oracle_all(p, g)
        values["sm"] = ref.s_measure(p, g)
        values["sm_numpy"] = ref.s_measure(p, g, moments="numpy")
        values["fm1"] = ref.f_measure(p, g, beta2=1.0)
        images[name] = {"pred": pred, "gt": gt, "oracle": values}
    return {"images": images, "per_image": per_image, "dataset": dataset}


@pytest.mark.shared
def test_real_images_per_image_values(real_data):
    stored_names = {
        "MAE": "mae",
        "wFmeasure": "wfm",
        "adpEm": "adp_em",
        "em_curve": "em_curve",
        "adpFm": "adp_fm",
        "fm_curve": "fm_curve",
        "precision_curve": "precision_curve",
        "recall_curve": "recall_curve",
        "Smeasure": "sm",
    }
    for name in IMAGES:
        stored, mine = real_data["per_image"][name], real_data["images"][name]["oracle"]
        assert list(stored["shape"]) == list(real_data["images"][name]["gt"].shape)
        for key, my_key in stored_names.items():
            assert_close(mine[my_key], stored[key], f"{name}: {key}")
        assert_close(mine["sm_numpy"], stored["Smeasure"], f"{name}: Smeasure (numpy moments)")


@pytest.mark.shared
def test_real_images_fmeasurev2_family_per_image(real_data):
    for name in IMAGES:
        entry = real_data["images"][name]
        expected = pysod_all(entry["pred"], entry["gt"])
        for key in (*FMV2_KEYS, *PIXEL_KEYS):
            assert_close(entry["oracle"][key], expected[key], f"{name}: {key}")


@pytest.mark.shared
def test_real_images_dataset_values(real_data):
    values = [real_data["images"][name]["oracle"] for name in IMAGES]
    expected = real_data["dataset"]

    def mean_of(key):
        return float(np.mean([v[key] for v in values]))

    def curve_of(key):
        return np.mean([v[key] for v in values], axis=0)

    scalars = {
        "MAE": "mae",
        "Smeasure": "sm",
        "wFmeasure": "wfm",
        "adpEm": "adp_em",
        "adpFm": "adp_fm",
        "adpfm": "adp_fm",
        "adpiou": "adp_iou",
        "adpdice": "adp_dice",
        "adppre": "adp_pre",
        "adprec": "adp_rec",
    }
    for key, my_key in scalars.items():
        assert_close(mean_of(my_key), expected[key], key)
    curves = {
        "Em": "em_curve",
        "Fm": "fm_curve",
        "fm": "fm_curve",
        "iou": "iou_curve",
        "dice": "dice_curve",
        "pre": "pre_curve",
        "rec": "rec_curve",
    }
    for key, my_key in curves.items():
        assert_close(curve_of(my_key).mean(), expected[f"mean{key}"], f"mean{key}")
        assert_close(curve_of(my_key).max(), expected[f"max{key}"], f"max{key}")
    # F1 (beta^2 = 1) is the Dice coefficient
    assert_close(np.mean([v["fm1"]["adaptive"] for v in values]), expected["adpf1"], "adpf1")
    f1_curve = np.mean([v["fm1"]["curve"] for v in values], axis=0)
    assert_close(f1_curve.mean(), expected["meanf1"], "meanf1")
    assert_close(f1_curve.max(), expected["maxf1"], "maxf1")
    assert_close(np.mean([v["sm_numpy"] for v in values]), expected["Smeasure"], "Smeasure (numpy moments)")


# ----------------------------------------------------------------------------------------------------------------
# random maps
# ----------------------------------------------------------------------------------------------------------------
GT_KINDS = ("empty", "full", "rect", "ellipse", "noise", "row", "col", "pixel", "last_col", "last_row", "levels")
PRED_KINDS = ("noise", "subrange", "const", "binary", "smooth", "perfect", "noisy_gt", "few_levels", "inverted")


def make_gt(kind: str, h: int, w: int, rng: np.random.Generator) -> np.ndarray:
    gt = np.zeros((h, w), np.uint8)
    if kind == "full":
        gt[:] = 255
    elif kind == "rect":
        r0, r1 = np.sort(rng.integers(0, h + 1, 2))
        c0, c1 = np.sort(rng.integers(0, w + 1, 2))
        gt[r0 : max(r1, r0 + 1), c0 : max(c1, c0 + 1)] = 255
    elif kind == "ellipse":
        yy, xx = np.mgrid[:h, :w]
        cy, cx = rng.uniform(0, h), rng.uniform(0, w)
        ry, rx = rng.uniform(0.5, h), rng.uniform(0.5, w)
        gt[((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1] = 255
    elif kind == "noise":
        gt[rng.random((h, w)) < rng.uniform(0.05, 0.95)] = 255
    elif kind == "row":
        gt[rng.integers(0, h), :] = 255
    elif kind == "col":
        gt[:, rng.integers(0, w)] = 255
    elif kind == "pixel":
        gt[rng.integers(0, h), rng.integers(0, w)] = 255
    elif kind == "last_col":
        gt[rng.integers(0, h) :, w - 1] = 255
    elif kind == "last_row":
        gt[h - 1, rng.integers(0, w) :] = 255
    elif kind == "levels":  # anti-aliased masks: only values > 128 are foreground
        gt = rng.choice(np.array([0, 100, 127, 128, 129, 200, 255], np.uint8), size=(h, w))
    return gt


def make_pred(kind: str, gt: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    h, w = gt.shape
    fg = gt > 128
    if kind == "noise":
        pred = rng.integers(0, 256, (h, w))
    elif kind == "subrange":  # min-max stretching of an arbitrary range
        lo = rng.integers(0, 256)
        pred = rng.integers(lo, rng.integers(lo, 256) + 1, (h, w))
    elif kind == "const":
        pred = np.full((h, w), rng.choice([0, 255, int(rng.integers(1, 255))]))
    elif kind == "binary":
        a, b = rng.integers(0, 256, 2)
        mask = fg ^ (rng.random((h, w)) < rng.uniform(0, 0.3)) if rng.random() < 0.5 else rng.random((h, w)) < 0.5
        pred = np.where(mask, a, b)
    elif kind == "smooth":
        field = ndimage.gaussian_filter(rng.random((h, w)), sigma=rng.uniform(0.5, 4))
        lo, hi = np.sort(rng.uniform(0, 255, 2))
        span = np.ptp(field)
        pred = lo + (field - field.min()) / (span if span > 0 else 1) * (hi - lo)
    elif kind == "perfect":
        pred = fg * 255
    elif kind == "noisy_gt":
        pred = fg * rng.uniform(100, 255) + rng.normal(0, rng.uniform(1, 80), (h, w))
    elif kind == "few_levels":
        pred = rng.choice(rng.integers(0, 256, rng.integers(1, 5)), size=(h, w))
    else:  # inverted
        pred = (~fg) * 255
    return np.clip(np.round(pred), 0, 255).astype(np.uint8)


@st.composite
def image_pairs(draw) -> tuple[np.ndarray, np.ndarray]:
    """A uint8 (pred, gt) pair: mostly 1..48 x 1..48 (non-square, incl. single rows/columns), some 49..128 per side."""
    if draw(st.integers(0, 9)) == 0:
        h, w = draw(st.integers(49, 128)), draw(st.integers(49, 128))
    else:
        h, w = draw(st.integers(1, 48)), draw(st.integers(1, 48))
    gt_kind, pred_kind = draw(st.sampled_from(GT_KINDS)), draw(st.sampled_from(PRED_KINDS))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    gt = make_gt(gt_kind, h, w, rng)
    pred = make_pred(pred_kind, gt, rng)
    note(f"{h}x{w} gt={gt_kind} pred={pred_kind}")
    event(f"gt={gt_kind}")
    event(f"pred={pred_kind}")
    event("larger than 48" if max(h, w) > 48 else ("one row or column" if min(h, w) == 1 else "small"))
    return pred, gt


@settings(max_examples=400)
@given(image_pairs())
def test_random_maps_mae_e_f_wf_match_pysod(pair):
    pred, gt = pair
    p, g = ref.prepare(pred, gt)
    p_ref, g_ref = prepare_data(pred, gt)
    assert p.dtype == np.float64 and np.array_equal(p, p_ref) and np.array_equal(g, g_ref)
    mine, expected = oracle_all(p, g), pysod_all(pred, gt)
    for key in PIXEL_KEYS:
        assert_close(mine[key], expected[key], key)


@settings(max_examples=300)
@given(image_pairs())
def test_random_maps_iou_dice_precision_recall_match_pysod(pair):
    pred, gt = pair
    mine, expected = oracle_all(*ref.prepare(pred, gt)), pysod_all(pred, gt)
    for key in FMV2_KEYS:
        assert_close(mine[key], expected[key], key)


@settings(max_examples=600)
@given(image_pairs())
def test_random_maps_s_measure_matches_pysod(pair):
    check_s_measure(*pair)


@st.composite
def float_pairs(draw) -> tuple[np.ndarray, np.ndarray]:
    """normalize=False inputs: a float64 map in [0, 1] (incl. constants and exact bin edges k/255) and a bool GT."""
    pred_u8, gt_u8 = draw(image_pairs())
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(("uniform", "bin_edges", "const", "from_uint8")))
    shape = gt_u8.shape
    if kind == "uniform":
        pred = rng.random(shape)
    elif kind == "bin_edges":
        pred = rng.integers(0, 256, shape) / 255
    elif kind == "const":
        pred = np.full(shape, draw(st.sampled_from((0.0, 0.1, 0.2, 1 / 3, 0.5, 1.0))))
    else:
        pred = pred_u8 / 255
    event(f"float pred={kind}")
    return pred, gt_u8 > 128


@settings(max_examples=150)
@given(float_pairs())
def test_random_float_maps_without_normalisation_match_pysod(pair):
    pred, gt = pair
    p, g = ref.prepare(pred, gt, normalize=False)
    assert np.array_equal(p, pred) and np.array_equal(g, gt)
    mine, expected = oracle_all(p, g), pysod_all(pred, gt, normalize=False)
    for key in (*PIXEL_KEYS, *FMV2_KEYS):
        assert_close(mine[key], expected[key], key)
    check_s_measure(pred, gt, normalize=False)


# ----------------------------------------------------------------------------------------------------------------
# edge cases with known values
# ----------------------------------------------------------------------------------------------------------------
def test_perfect_prediction():
    gt = np.zeros((20, 30), np.uint8)
    gt[4:13, 7:22] = 255
    p, g = ref.prepare(gt.copy(), gt)
    n = g.size
    em = ref.e_measure(p, g)
    assert_close(em["adaptive"], n / (n - 1), "adaptive Em = N/(N-1)", tol=1e-12)
    assert_close(em["curve"][:255], n / (n - 1), "Em curve of the binary map", tol=1e-12)
    assert em["adaptive"] > 1
    assert_close(ref.weighted_f_measure(p, g), 1.0, "wFm", tol=1e-12)
    assert_close(ref.s_measure(p, g), 1.0, "Sm", tol=1e-12)
    assert ref.mae(p, g) == 0
    for measure in (ref.f_measure, ref.iou, ref.dice):
        assert_close(measure(p, g)["adaptive"], 1.0, measure.__name__, tol=1e-12)
    assert_close(ref.iou(p, g)["curve"][:255], 1.0, "IoU curve")


def test_empty_gt():
    rng = np.random.default_rng(0)
    pred = rng.integers(0, 256, (17, 23)).astype(np.uint8)
    gt = np.zeros_like(pred)
    p, g = ref.prepare(pred, gt)
    n, bins = g.size, ref.threshold_bins(p)
    assert ref.weighted_f_measure(p, g) == 0
    assert_close(ref.s_measure(p, g), 1 - p.mean(), "Sm = 1 - mean(p)", tol=1e-15)
    fm = ref.f_measure(p, g)
    assert fm["adaptive"] == 0 and not fm["curve"].any() and not fm["recall"].any()
    em_curve = [np.count_nonzero(bins < 255 - i) / (n - 1 + ref.EPS) for i in range(256)]
    assert_close(ref.e_measure(p, g)["curve"], em_curve, "Em curve = #(FM == 0)/(N - 1)", tol=1e-15)
    assert not ref.iou(p, g)["curve"].any() and not ref.dice(p, g)["curve"].any()
    assert_close(ref.mae(p, g), p.mean(), "MAE", tol=1e-15)


def test_full_gt():
    rng = np.random.default_rng(1)
    pred = rng.integers(0, 256, (15, 12)).astype(np.uint8)
    gt = np.full_like(pred, 255)
    p, g = ref.prepare(pred, gt)
    n, bins = g.size, ref.threshold_bins(p)
    assert_close(ref.s_measure(p, g), p.mean(), "Sm = mean(p)", tol=1e-15)
    em_curve = [np.count_nonzero(bins >= 255 - i) / (n - 1 + ref.EPS) for i in range(256)]
    assert_close(ref.e_measure(p, g)["curve"], em_curve, "Em curve = #(FM == 1)/(N - 1)", tol=1e-15)
    pr = ref.precision_recall(p, g)
    assert_close(pr["precision"][pr["recall"] > 0], 1.0, "precision on a full GT", tol=0)
    assert pr["recall"][-1] == 1
    assert_close(ref.weighted_f_measure(p, g), pysod_all(pred, gt)["wfm"], "wFm on a full GT (not special-cased)")


@pytest.mark.parametrize(
    ("shape", "where"),
    [((4, 4), "last_col"), ((5, 7), "last_row"), ((1, 9), "partial_row"), ((9, 1), "partial_col")],
)
def test_s_measure_empty_quadrant(shape, where):
    gt = np.zeros(shape, np.uint8)
    if where == "last_col":
        gt[:, -1] = 255
    elif where == "last_row":
        gt[-1, 2:] = 255
    elif where == "partial_row":
        gt[0, 5:] = 255
    else:
        gt[5:, 0] = 255
    for pred in (gt.copy(), np.arange(gt.size, dtype=np.uint8).reshape(shape) * 7):
        p, g = ref.prepare(pred, gt)
        assert np.isnan(pysod_sm(pred, gt))
        assert np.isnan(ref.s_measure(p, g)) and np.isnan(ref.s_measure(p, g, moments="numpy"))
        skipped = ref.s_measure(p, g, empty_quadrant="skip")
        assert_close(skipped, sm_intended(p, g, skip_empty=True), "Sm, empty quadrant skipped", tol=1e-12)
        assert 0 <= skipped <= 1
    # a perfect prediction scores 1 once the empty quadrant is left out
    p, g = ref.prepare(gt.copy(), gt)
    assert_close(ref.s_measure(p, g, empty_quadrant="skip"), 1.0, "perfect map, empty quadrant skipped", tol=1e-12)


def test_s_measure_fragile_constant_quadrant():
    """6x10 GT block [2:, 4:], constant prediction 11: the centroid (5, 7) leaves a 1x3 bottom-right quadrant whose
    GT is all one and whose prediction is constant; ``np.mean`` of 11/255 over it is off by an ulp, so pysod's ssim
    there is 0 instead of 1 and its Sm is lower by (1 - alpha) * 3/60 = 0.025."""
    gt = np.zeros((6, 10), np.uint8)
    gt[2:, 4:] = 255
    pred = np.full_like(gt, 11)
    p, g = ref.prepare(pred, gt)
    assert fragile_quadrants(p, g) == [False, False, False, True]
    expected = pysod_sm(pred, gt)
    assert_close(expected, 0.31693142980413497, "pysod 1.6.2", tol=1e-15)
    assert_close(ref.s_measure(p, g, moments="numpy"), expected, "numpy moments reproduce pysod", tol=1e-15)
    assert_close(ref.s_measure(p, g), expected + 0.5 * 3 / 60, "exact moments: ssim 1", tol=1e-12)


@pytest.mark.parametrize("value", [0, 1, 100, 128, 254, 255])
def test_constant_prediction_is_not_stretched(value):
    gt = np.zeros((7, 9), np.uint8)
    gt[2:5, 3:6] = 255
    p, g = ref.prepare(np.full(gt.shape, value, np.uint8), gt)
    assert p.dtype == np.float64 and np.all(p == value / 255)
    assert_close(ref.mae(p, g), np.mean(np.abs(value / 255 - g)), "MAE", tol=1e-15)
    assert len(np.unique(ref.threshold_bins(p))) == 1


def test_stretching_and_binarisation_order():
    pred = np.array([[7, 35], [0, 20]], np.uint8)  # mn=0, mx=35, v=7: float64 bin 50, exact floor(255*7/35) = 51
    gt = np.array([[128, 129], [0, 255]], np.uint8)
    p, g = ref.prepare(pred, gt)
    assert g.tolist() == [[False, True], [False, True]]
    assert ref.threshold_bins(p)[0, 0] == 50
    assert np.array_equal(p, prepare_data(pred, gt)[0])


def test_curve_order_is_descending_threshold():
    gt = np.zeros((10, 10), np.uint8)
    gt[:5] = 255
    pred = np.zeros_like(gt)
    pred[0, 0] = 255  # the only pixel in the top bin, on the GT
    pred[9, 9] = 128  # a background pixel in bin 128
    p, g = ref.prepare(pred, gt)
    pr = ref.precision_recall(p, g)
    assert pr["precision"][0] == 1 and pr["recall"][0] == 1 / 50  # index 0: bins >= 255
    assert pr["precision"][126] == 1 and pr["precision"][127] == 0.5  # index 127: bins >= 128 take the bin-128 pixel
    assert pr["recall"][255] == 1 and pr["precision"][255] == 0.5  # index 255: every pixel


def test_matlab_gaussian_kernel():
    k = ref.matlab_gaussian_kernel(7, 5.0)
    assert k.shape == (7, 7)
    assert_close(k.sum(), 1.0, "sum", tol=1e-15)
    assert_close(k[3, 3], 0.023835778808354184, "centre", tol=1e-17)
    assert_close(k[0, 0], 0.016629658588054284, "corner", tol=1e-17)
    assert_close(k, pysod.WeightedFmeasure().matlab_style_gauss2D((7, 7), sigma=5), "pysod kernel", tol=1e-17)


def test_prepare_validation():
    gt = np.zeros((3, 4), bool)
    with pytest.raises(ValueError):
        ref.prepare(np.zeros((3, 5), np.uint8), np.zeros((3, 4), np.uint8))
    with pytest.raises(TypeError):
        ref.prepare(np.zeros((3, 4), np.uint8), gt, normalize=False)
    with pytest.raises(TypeError):
        ref.prepare(np.zeros((3, 4)), gt.astype(np.uint8), normalize=False)
    with pytest.raises(ValueError):
        ref.prepare(np.full((3, 4), 1.5), gt, normalize=False)
    with pytest.raises(ValueError):
        ref.s_measure(np.zeros((3, 4)), gt, moments="fast")
