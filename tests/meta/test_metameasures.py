"""Meta-measures on constructed cases with known answers, SEISM's SIHD rule by hand, seeded reproducibility."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import stats

from segmetrics_torch import MAE, PartitionMeasures
from segmetrics_torch.functional import partition_measures
from segmetrics_torch.meta import (
    Measure,
    annotation_error_test,
    as_measure,
    generic_map_test,
    gt_switch_test,
    noise_test,
    sabd,
    sihd,
    sihd_from_values,
    sisd,
    spearman_rho,
)
from tests.conftest import shared_path

# ------------------------------------------------------------------------------------------------------ SIHD


def test_sihd_from_values_by_hand():
    # SEISM with 5 bins on [0, 1]: left edges 0, .25, .5, .75 (the last bin counts only x == .75), centres
    # edges + 1/10. same -> counts [0, 1, 3, 0], trapz area 1; different -> [2, 1, 1, 0], area 0.75 -> [8/3, 4/3,
    # 4/3, 0]. Medians (compute_percentile_index): same 3 - 2/3, different 1; walking from the different PDF's
    # bin 1 it stays above until bin 3 (4/3 < 3): t = .35 + (4/3 - 1) / (3 - 1 - 4/3 + 4/3) * .25 = .391667.
    # error1 = mean(same <= t) = 1/4, error2 = mean(different > t) = 1/4 -> 75 % correct.
    r = sihd_from_values([0.55, 0.6, 0.7, 0.3], [0.1, 0.2, 0.3, 0.6], num_bins=5)
    assert r.threshold == pytest.approx(0.35 + (1 / 3) / 2 * 0.25, abs=1e-12)
    assert (r.same_correct, r.same_total, r.different_correct, r.different_total) == (3, 4, 3, 4)
    assert r.rate == 0.75 and r.same_above


def test_sihd_from_values_distance_swaps_the_classes():
    # a distance: same-image values low. SEISM's error1 + error2 > 1 swap makes it 100 % correct all the same
    r = sihd_from_values([0.1, 0.2, 0.15, 0.12], [0.8, 0.9, 0.85, 0.7, 0.75])
    assert r.rate == 1.0 and not r.same_above and 0.2 < r.threshold < 0.7
    r = sihd_from_values([0.5, 0.6, 0.7, 0.8], [3.5, 4.0, 2.8, 3.1])  # VoI-like range: bins on floor/ceil = [0, 4]
    assert r.rate == 1.0 and not r.same_above


def test_sihd_from_values_errors():
    with pytest.raises(ValueError, match="same"):
        sihd_from_values([], [0.5])
    with pytest.raises(ValueError, match="Case not thought"):
        sihd_from_values([0.5, 0.5], [0.5, 0.5])
    with pytest.raises(ValueError, match="NaN threshold"):  # the lower median falls in an empty bin
        sihd_from_values([1.2, 0.5, 0.9], [3.5, 4.0, 2.8, 3.1])
    with pytest.raises(ValueError, match="num_bins"):
        sihd_from_values([0.1], [0.2], num_bins=2)


def _stripes(h: int, w: int, k: int, vertical: bool, offset: int = 0) -> torch.Tensor:
    n = w if vertical else h
    idx = ((torch.arange(n) + offset) * k // (n + offset)).clamp(max=k - 1)
    return idx[None, :].expand(h, w).clone() if vertical else idx[:, None].expand(h, w).clone()


def _striped_annotations(seed: int = 0) -> list[torch.Tensor]:
    """Image 0: 6 annotators drawing 2-4 vertical stripes at jittered cuts; image 1: the same horizontally.
    Same-image pairs share their cut direction, different-image pairs are orthogonal."""
    rng = np.random.default_rng(seed)
    return [
        torch.stack([_stripes(16, 16, int(rng.integers(2, 5)), v, int(rng.integers(0, 6))) for _ in range(6)])
        for v in (True, False)
    ]


def test_sihd_on_constructed_annotations():
    anns = _striped_annotations()
    both = sihd(["pri", "voi", "fop"], anns)
    for name, r in both.items():
        assert (r.same_total, r.different_total) == (2 * 6 * 5, 2 * 6 * 6)
        # the two classes are separated (checked on the values): SEISM's threshold lands between them, 100 %
        lo, hi = (r.same, r.different) if name == "voi" else (r.different, r.same)
        assert float(lo.max()) < float(hi.min())
        assert r.rate == 1.0 and r.same_above == (name != "voi")
    # the values are the measure's on each ordered pair: annotation 1 against annotation 0 of image 0
    expected = partition_measures(anns[0][1][None], anns[0][0][None, None], measures=["pri"])["pri"]
    assert float(expected[0]) in both["pri"].same.tolist()
    single = sihd("pri", anns)
    assert torch.equal(single.same, both["pri"].same) and single.rate == 1.0
    un = sihd("pri", anns, ordered=False)
    assert (un.same_total, un.different_total) == (2 * 15, 36)


def test_sihd_sampling_is_seeded():
    anns = _striped_annotations()
    a = sihd("pri", anns, max_different=50, seed=1)
    b = sihd("pri", anns, max_different=50, seed=1)
    assert a.different_total == 50 and torch.equal(a.different, b.different)
    c = sihd("pri", anns, max_different=50, seed=2)
    assert not torch.equal(a.different, c.different)


def test_sihd_on_bsds_sample_separates_human_pairs():
    from segmetrics_torch.io import read_bsds_ground_truth

    root = shared_path("bsds_sample", "BSDS500", "data", "groundTruth", "test")
    anns = [torch.from_numpy(read_bsds_ground_truth(p).segmentations) for p in sorted(root.glob("*.mat"))[:4]]
    r = sihd(["fop", "voi"], anns)
    k = [a.shape[0] for a in anns]
    assert r["fop"].same_total == sum(x * (x - 1) for x in k)
    assert r["fop"].different_total == sum(k) ** 2 - sum(x * x for x in k)
    assert r["fop"].rate > 0.9 and r["voi"].rate > 0.85 and not r["voi"].same_above


# ------------------------------------------------------------------------------------------------ SABD / SISD


def test_sabd_counts_strictly_better_judgements():
    gt = [_stripes(10, 12, 3, True)[None], _stripes(10, 12, 2, False)[None], _stripes(10, 12, 4, True)[None]]
    one = torch.zeros(10, 12, dtype=torch.long)
    soa = [gt[0][0], one, gt[2][0]]
    base = [one, gt[1][0], gt[2][0]]
    for m in ("pri", "voi", PartitionMeasures(measures=["voi"])):
        r = sabd(
            m if not isinstance(m, PartitionMeasures) else as_measure(m, key="voi", higher_is_better=False),
            soa,
            base,
            gt,
        )
        assert (r.count, r.total, r.ties, r.kind) == (1, 3, 1, "correct") and r.rate == pytest.approx(1 / 3)
    pooled = sabd("pri", {"a": soa, "b": soa}, base, gt)
    assert (pooled.count, pooled.total) == (2, 6)


def test_sisd_own_image_beats_swapped():
    gt = [_stripes(10, 12, 3, True)[None], _stripes(12, 10, 2, False)[None], _stripes(10, 12, 4, False)[None]]
    soa = [g[0] for g in gt]  # perfect: every swapped result is worse
    r = sisd("fop", soa, gt)
    assert (r.count, r.total, r.ties) == (6, 6, 0)
    r = sisd("pri", soa, gt, pairing=[2, 0, 1])
    assert (r.count, r.total) == (3, 3)
    # two identical images: the swapped result is as good as the own one -> a tie, not a correct judgement
    same = [gt[0], gt[0]]
    r = sisd("pri", [gt[0][0], gt[0][0]], same, pairing="random", seed=3)
    assert (r.count, r.ties) == (0, 2)
    with pytest.raises(ValueError, match="pairing"):
        sisd("pri", soa, gt, pairing=[0, 1, 2])


# ----------------------------------------------------------------------------------------- foreground tests


def _masks(n: int = 4, size: int = 32) -> torch.Tensor:
    g = torch.zeros(n, size, size, dtype=torch.uint8)
    for i in range(n):
        g[i, 4 + 2 * i : 14 + 3 * i, 6 + i : 20 + 2 * i] = 255
    return g


def test_generic_map_test_known_answer():
    gt = _masks()
    perfect, inverted = gt.clone(), 255 - gt
    r = generic_map_test("mae", {"perfect": perfect}, gt)
    assert (r.count, r.total, r.kind) == (0, 4, "error")
    # the inverted map has MAE 1, worse than any generic map: every image is an error
    r = generic_map_test("mae", inverted, gt, generic="circle")
    assert (r.count, r.total) == (4, 4) and r.rate == 1.0
    # against the mean of the two methods (MAE 0.5) or each method
    mixed = {"perfect": perfect, "inverted": inverted}
    each = generic_map_test("mae", mixed, gt, compare="each")
    assert (each.count, each.total) == (4, 8)
    with pytest.raises(ValueError, match="compare"):
        generic_map_test("mae", perfect, gt, compare="median")


def test_noise_test_known_answer_and_seed():
    gt = _masks()
    assert noise_test("s_measure", gt.clone(), gt, num_maps=3).count == 0
    r = noise_test("mae", 255 - gt, gt, num_maps=3, seed=1)
    assert (r.count, r.total) == (12, 12)
    a = noise_test("e_adaptive", _masks().roll(5, 2), gt, num_maps=2, seed=4)
    b = noise_test("e_adaptive", _masks().roll(5, 2), gt, num_maps=2, seed=4)
    assert torch.equal(a.values, b.values)
    assert not torch.equal(a.values, noise_test("e_adaptive", _masks().roll(5, 2), gt, num_maps=2, seed=5).values)


def test_gt_switch_known_answer():
    gt = _masks()
    r = gt_switch_test("mae", gt.clone(), gt)
    assert (r.count, r.total, r.ties) == (0, 12, 0)
    # an empty map scores the same against every mask of equal area: ties, never errors
    flat = torch.zeros((2, 8, 8), dtype=torch.uint8)  # MAE 0.5 exactly against either mask
    g2 = torch.zeros(2, 8, 8, dtype=torch.uint8)
    g2[0, :4], g2[1, 4:] = 255, 255
    r = gt_switch_test("mae", flat, g2, pairing="random")
    assert (r.count, r.ties, r.total) == (0, 2, 2)


def test_annotation_error_reversed_ranking():
    # score = -|area(pred) - area(gt)|: against the 10x10 mask the 10x10 map ranks first; against the mask dilated
    # by 5 px (~378 px) the 18x18 map ranks first: the ranking reverses, 1 - rho = 2
    gt = torch.zeros(1, 48, 48, dtype=torch.bool)
    gt[0, 19:29, 19:29] = True
    maps = {}
    for s in (10, 14, 18):
        p = torch.zeros(1, 48, 48)
        p[0, 24 - s // 2 : 24 - s // 2 + s, 24 - s // 2 : 24 - s // 2 + s] = 1
        maps[str(s)] = p

    def closeness(preds, target):
        return -(preds.flatten(1).sum(1) - target.flatten(1).float().sum(1)).abs()

    r = annotation_error_test(Measure("area", closeness, True), maps, gt, operation="dilate", radius=5)
    assert (r.rate, r.images, r.skipped) == (2.0, 1, 0)
    r = annotation_error_test(Measure("area", closeness, True), maps, gt, operation="erode", radius=1)
    assert r.rate == 0.0  # 64 px: the 10x10 map stays closest
    const = annotation_error_test(Measure("c", lambda p, t: torch.zeros(p.shape[0]), True), maps, gt)
    assert const.images == 0 and const.skipped == 1 and np.isnan(const.rate)
    with pytest.raises(ValueError, match="2 methods"):
        annotation_error_test("mae", maps["10"], gt)


def test_spearman_matches_scipy():
    rng = np.random.default_rng(0)
    for _ in range(20):
        x = rng.integers(0, 4, size=6).astype(float)  # ties included
        y = rng.integers(0, 4, size=6).astype(float)
        ours = float(spearman_rho(torch.from_numpy(x), torch.from_numpy(y)))
        ref = stats.spearmanr(x, y).statistic
        assert (np.isnan(ours) and np.isnan(ref)) or ours == pytest.approx(ref, abs=1e-12)


# ------------------------------------------------------------------------------------------------- measures


def test_metric_callable_and_name_agree():
    gt = _masks()
    preds = gt.roll(3, 1)
    by_name = generic_map_test("mae", preds, gt)
    by_metric = generic_map_test(MAE(), preds, gt)
    by_fn = generic_map_test(as_measure(_mae, higher_is_better=False), preds, gt)
    assert torch.allclose(by_name.values, by_metric.values) and torch.allclose(by_name.values, by_fn.values)
    assert by_metric.measure == "MAE"


def _mae(preds, target):
    from segmetrics_torch.functional import mae

    return mae(preds, target)


def test_as_measure_errors():
    with pytest.raises(ValueError, match="name one of"):
        as_measure("accuracy")
    with pytest.raises(ValueError, match="higher_is_better"):
        as_measure(_mae)
    with pytest.raises(TypeError, match="measure"):
        as_measure(3)
    with pytest.raises(ValueError, match="key"):
        as_measure(lambda p, t: {"a": torch.zeros(1)}, higher_is_better=True)(torch.zeros(1), torch.zeros(1))


def test_a_measure_and_its_mirror_get_one_sihd_across_orientations() -> None:
    """A landscape and a portrait image: the partition of one brought to the other's size and the reverse stand in
    one relative orientation (match_size rotates portrait onto landscape counter-clockwise, landscape onto portrait
    clockwise), so ``sc`` / ``ssc`` and ``dhd`` / ``sdhd`` score a pair and its reverse alike (both rotations were
    counter-clockwise: 14 of 24 mirror values differed, and on the BSDS sample sc 92.24 against ssc 92.21)."""
    rng = np.random.default_rng(2)

    def blobs(h: int, w: int) -> torch.Tensor:
        small = rng.integers(0, 3, (3, 4))
        return torch.from_numpy(np.kron(small, np.ones((h // 3 + 1, w // 4 + 1), np.int64))[:h, :w])

    anns = [torch.stack([blobs(16, 20) for _ in range(2)]), torch.stack([blobs(20, 16) for _ in range(2)])]
    out = sihd(["sc", "ssc", "dhd", "sdhd"], anns)
    for a, b in (("sc", "ssc"), ("dhd", "sdhd")):
        assert out[a].rate == out[b].rate and out[a].different_correct == out[b].different_correct
        assert torch.equal(torch.sort(out[a].different).values, torch.sort(out[b].different).values)


def test_sihd_parallel_pdfs_give_seism_s_infinite_threshold() -> None:
    """Parallel PDFs apart on the crossing's bins: SEISM's pdf_intersection.m divides by zero, threshold -inf and a
    rate of 0.5 (a transcription of SIHD_error.m gives it); the function raised, calling the PDFs empty."""
    same = torch.tensor([14.0, 14.0], dtype=torch.float64) / 29
    different = torch.tensor([21.0, 18.0, 12.0, 13.0, 22.0], dtype=torch.float64) / 29
    res = sihd_from_values(same, different)
    assert res.threshold == -math.inf and res.rate == 0.5 and (res.same_correct, res.different_correct) == (2, 0)
