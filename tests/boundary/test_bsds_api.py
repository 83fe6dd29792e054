"""BoundaryPR / boundary_pr: oracle parity, batching, backends, summaries, edge cases and bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

from segmetrics_torch import BoundaryPR
from segmetrics_torch.functional.boundary import (
    BoundaryCounts,
    boundary_pr,
    boundary_pr_counts,
    boundary_summary,
    default_thresholds,
    ois_counts,
    summarize_counts,
)
from segmetrics_torch.reference import boundary as ref
from segmetrics_torch.synthetic import make_boundary_dataset

MAX_DIST = 2.5  # pixels: the synthetic images are small


@pytest.fixture(scope="module")
def data():
    d = make_boundary_dataset(4, (40, 56), 3, seed=11)
    return torch.from_numpy(d.preds), torch.from_numpy(d.boundaries), d


def test_counts_match_the_numpy_oracle(data):
    preds, target, d = data
    thr = np.linspace(0.1, 0.9, 5)
    c = boundary_pr_counts(preds, target, thresholds=thr, max_dist=MAX_DIST)
    for b in range(preds.shape[0]):
        expected = ref.evaluation_bdry_image(d.preds[b], list(d.boundaries[b]), thr, max_dist=MAX_DIST)
        np.testing.assert_array_equal(c.cnt_r[b].numpy(), expected[:, 0])
        np.testing.assert_array_equal(c.sum_r[b].numpy(), expected[:, 1])
        np.testing.assert_array_equal(c.sum_p[b].numpy(), expected[:, 3])
        # equally cheap maximum matchings may pair different machine pixels: the union over annotators can move
        assert np.all(np.abs(c.cnt_p[b].numpy() - expected[:, 2]) <= np.ceil(0.02 * expected[:, 3]))


def test_metric_batching_lists_and_functional_agree(data):
    preds, target, _ = data
    full = boundary_pr(preds, target, thresholds=7, max_dist=MAX_DIST)
    metric = BoundaryPR(thresholds=7, max_dist=MAX_DIST)
    for i in range(preds.shape[0]):
        metric.update(preds[i : i + 1], target[i : i + 1])
    got = metric.compute()
    for key in ("ap", "r50", "recall", "precision", "f"):
        torch.testing.assert_close(got[key], full[key], rtol=0, atol=0, equal_nan=True)
    for key in ("ods", "ois"):
        for k in full[key]:
            torch.testing.assert_close(got[key][k], full[key][k], rtol=0, atol=0)
    # a list of differently sized images (padding changes nothing)
    small = preds[1, :30, :41]
    small_t = target[1, :, :30, :41]
    mixed = boundary_pr_counts([preds[0], small], [target[0], small_t], thresholds=7, max_dist=MAX_DIST)
    alone = boundary_pr_counts(small[None], small_t[None], thresholds=7, max_dist=MAX_DIST)
    first = boundary_pr_counts(preds[:1], target[:1], thresholds=7, max_dist=MAX_DIST)
    for f in ("cnt_r", "sum_r", "cnt_p", "sum_p"):
        assert torch.equal(getattr(mixed, f)[1], getattr(alone, f)[0])
        assert torch.equal(getattr(mixed, f)[0], getattr(first, f)[0])


@pytest.mark.parametrize("input_format", ["soft", "ucm2", "stack"])
def test_torch_backend_equals_numba_backend(data, device, input_format):
    """The CUDA path (threshold + thin as tensor ops) gives the compiled kernel's counts, on every device."""
    preds, target, _ = data
    preds, target = preds[:2], target[:2]
    thr = 5
    if input_format == "ucm2":
        grid = torch.zeros(2, 2 * preds.shape[1] + 1, 2 * preds.shape[2] + 1, dtype=torch.float64)
        grid[:, 2::2, 2::2] = preds
        preds = grid
    elif input_format == "stack":
        preds = preds[:, None] >= default_thresholds(5).view(1, -1, 1, 1)
    a = boundary_pr_counts(preds, target, thresholds=thr, max_dist=MAX_DIST, input_format=input_format)
    b = boundary_pr_counts(
        preds.to(device),
        target.to(device),
        thresholds=thr,
        max_dist=MAX_DIST,
        input_format=input_format,
        backend="torch",
    )
    assert b.cnt_r.device.type == torch.device(device).type
    for f in ("cnt_r", "sum_r", "cnt_p", "sum_p"):
        assert torch.equal(getattr(a, f), getattr(b, f).cpu())
    # deterministic: the same counts on a second run
    again = boundary_pr_counts(preds, target, thresholds=thr, max_dist=MAX_DIST, input_format=input_format)
    assert all(torch.equal(x, y) for x, y in zip(a, again, strict=True))


def test_uint8_maps_are_divided_by_255(data):
    preds, target, _ = data
    as_u8 = torch.round(preds * 255).to(torch.uint8)
    a = boundary_pr_counts(as_u8, target, max_dist=MAX_DIST)
    b = boundary_pr_counts(as_u8.to(torch.float64) / 255, target, max_dist=MAX_DIST)
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


def test_default_thresholds_follow_matlab_linspace():
    t = default_thresholds(99).numpy()
    k = np.arange(99)
    d1, d2 = 1 / 100, 1 - 1 / 100  # as BSR writes them: 1/(nthresh+1), 1-1/(nthresh+1)
    expected = d1 + (k * (d2 - d1)) / 98
    expected[-1] = d2
    np.testing.assert_array_equal(t, expected)
    # numpy's linspace rounds differently on some entries; a pixel equal to such a threshold would flip
    assert not np.array_equal(t, np.linspace(d1, d2, 99))
    np.testing.assert_array_equal(default_thresholds(3, "stack").numpy(), [1, 2, 3])


@st.composite
def count_tables(draw):
    n = draw(st.integers(1, 4))
    k = draw(st.integers(1, 8))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    sum_r = rng.integers(0, 50, (n, 1)).repeat(k, 1)
    sum_p = np.sort(rng.integers(0, 60, (n, k)), axis=1)[:, ::-1].copy()  # fewer machine pixels at higher t
    if draw(st.booleans()):
        sum_p[:, -2:] = 0  # the top thresholds keep nothing: R = 0 runs, duplicated recalls
    cnt_r = np.minimum(rng.integers(0, 50, (n, k)), sum_r)
    cnt_p = np.minimum(rng.integers(0, 60, (n, k)), sum_p)
    thr = np.sort(rng.uniform(0, 1, k))
    return thr, cnt_r, sum_r, cnt_p, sum_p


@given(count_tables(), st.sampled_from(["first", "last"]))
def test_summary_matches_collect_eval_bdry(table, occurrence):
    thr, cnt_r, sum_r, cnt_p, sum_p = table
    tabs = [np.stack([cnt_r[i], sum_r[i], cnt_p[i], sum_p[i]], 1) for i in range(len(cnt_r))]
    expected = ref.collect_eval_bdry(thr, tabs, unique_occurrence=occurrence)
    t = [torch.from_numpy(x) for x in (cnt_r, sum_r, cnt_p, sum_p)]
    got = boundary_summary(*(x.sum(0) for x in t), torch.from_numpy(thr), ois_counts(*t), unique_occurrence=occurrence)
    np.testing.assert_allclose(
        [float(got["ods"][k]) for k in ("threshold", "recall", "precision", "f")], expected["ods"], rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(
        [float(got["ois"][k]) for k in ("recall", "precision", "f")], expected["ois"], rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(float(got["ap"]), expected["ap"], rtol=0, atol=1e-12)
    for key in ("r50", "r50_dollar", "ap_pyedgeeval"):
        np.testing.assert_allclose(float(got[key]), expected[key], rtol=0, atol=1e-12, equal_nan=True, err_msg=key)
    np.testing.assert_allclose(got["f"].numpy(), expected["F"], rtol=0, atol=1e-15)
    counts = BoundaryCounts(*t, torch.from_numpy(thr))
    per_image = summarize_counts(counts, unique_occurrence=occurrence)["per_image"]
    for j, key in enumerate(("threshold", "recall", "precision", "f")):
        np.testing.assert_allclose(per_image[key].numpy(), [row[j] for row in expected["per_image"]], atol=1e-12)


def test_official_zero_conventions():
    """No GT boundary -> R = 0; no machine boundary -> P = 0; F = 0 when P + R = 0 (collect_eval_bdry.m)."""
    target = torch.zeros(1, 2, 20, 30, dtype=torch.bool)
    preds = torch.zeros(1, 20, 30)
    preds[0, 10, 5:25] = 0.7
    c = boundary_pr_counts(preds, target, thresholds=3, max_dist=2)
    assert (c.sum_r == 0).all() and (c.cnt_r == 0).all() and (c.cnt_p == 0).all()
    assert c.sum_p.tolist() == [[20, 20, 0]]
    res = summarize_counts(c)
    assert res["recall"].tolist() == [0, 0, 0] and res["precision"].tolist() == [0, 0, 0]
    assert float(res["ods"]["f"]) == 0 and float(res["ap"]) == 0
    # an empty prediction against real boundaries: P = 0, R = 0
    target[0, 0, 10, 5:25] = True
    res = boundary_pr(torch.zeros(1, 20, 30), target, thresholds=3, max_dist=2)
    assert res["precision"].tolist() == [0, 0, 0] and res["recall"].tolist() == [0, 0, 0]
    # a perfect prediction
    res = boundary_pr(target[:, 0].double(), target[:, :1], thresholds=3, max_dist=2)
    assert res["f"].tolist() == [1, 1, 1] and float(res["ods"]["f"]) == 1


def test_r50_nan_warns():
    target = torch.zeros(1, 1, 20, 30, dtype=torch.bool)
    target[0, 0, 2, 2:8] = True
    preds = torch.zeros(1, 20, 30)
    preds[0, 15, :] = 0.9  # far from the GT: precision 0 everywhere
    metric = BoundaryPR(thresholds=3, max_dist=2)
    metric.update(preds, target)
    with pytest.warns(RuntimeWarning, match="R50"):
        res = metric.compute()
    assert np.isnan(float(res["r50"]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ok = BoundaryPR(thresholds=3, max_dist=2)
        ok.update(target[:, 0].double(), target)
        ok.compute()


BAD = [
    ("size", lambda p, t: (p[:, :10], t), ValueError, "same image size"),
    ("empty annotators", lambda p, t: (p, t[:, :0]), ValueError, "at least one annotator"),
    ("nan", lambda p, t: (p.masked_fill(p > 0.5, float("nan")), t), ValueError, "NaN"),
    ("range", lambda p, t: (p * 2, t), ValueError, r"\[0, 1\]"),
    ("non-boolean gt", lambda p, t: (p, t.to(torch.uint8) * 3), ValueError, "boolean"),
    ("count mismatch", lambda p, t: (p[:1], t), ValueError, "same number of images"),
    ("target ndim", lambda p, t: (p, t[:, 0]), ValueError, "target"),
    ("preds dtype", lambda p, t: (p.to(torch.int32), t), TypeError, "preds"),
    ("preds type", lambda p, t: (p.numpy(), t), TypeError, "preds"),
    ("empty batch", lambda p, t: (p[:0], t[:0]), ValueError, "at least one image"),
    ("empty list", lambda p, t: ([], []), ValueError, "at least one image"),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_input_is_rejected(data, case):
    preds, target, _ = data
    _, make, exc, match = case
    p, t = make(preds.clone(), target.clone())
    with pytest.raises(exc, match=match):
        boundary_pr_counts(p, t, thresholds=3)
    with pytest.raises(exc, match=match):
        BoundaryPR(thresholds=3).update(p, t)


def test_bad_arguments():
    with pytest.raises(ValueError, match="input_format"):
        BoundaryPR(input_format="png")
    with pytest.raises(ValueError, match="max_dist"):
        BoundaryPR(max_dist=-1)
    with pytest.raises(ValueError, match="thresholds"):
        BoundaryPR(thresholds=0)
    with pytest.raises(ValueError, match="thresholds"):
        BoundaryPR(thresholds=[0.1, float("nan")])
    with pytest.raises(ValueError, match="unique_occurrence"):
        BoundaryPR(unique_occurrence="middle")
    with pytest.raises(ValueError, match="ucm2"):
        boundary_pr_counts(torch.zeros(1, 10, 10), torch.zeros(1, 1, 4, 4, dtype=torch.bool), input_format="ucm2")
    with pytest.raises(ValueError, match="levels"):
        boundary_pr_counts(
            torch.zeros(1, 2, 8, 8, dtype=torch.bool),
            torch.zeros(1, 1, 8, 8, dtype=torch.bool),
            thresholds=3,
            input_format="stack",
        )


def test_repeated_machine_maps_are_counted_once_with_identical_results(data):
    """Few distinct values (as in ucm2): thresholds giving the same map share one evaluation; the counts equal those
    of the torch path, which evaluates every threshold, and of an unsorted threshold list (no sharing)."""
    preds, target, _ = data
    coarse = torch.round(preds[:2] * 3) / 3  # values 0, 1/3, 2/3, 1
    thr = default_thresholds(20)
    a = boundary_pr_counts(coarse, target[:2], thresholds=thr, max_dist=MAX_DIST)
    b = boundary_pr_counts(coarse, target[:2], thresholds=thr, max_dist=MAX_DIST, backend="torch")
    perm = torch.randperm(20, generator=torch.Generator().manual_seed(0))
    c = boundary_pr_counts(coarse, target[:2], thresholds=thr[perm], max_dist=MAX_DIST)
    for f in ("cnt_r", "sum_r", "cnt_p", "sum_p"):
        assert torch.equal(getattr(a, f), getattr(b, f))
        assert torch.equal(getattr(a, f)[:, perm], getattr(c, f))
    assert len(torch.unique(a.sum_p[0])) <= 4
