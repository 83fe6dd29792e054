"""Hierarchies: UCM -> partitions (both rules) against scipy labelling, the atoms path against per-level pixel
tables, region-count thresholds, stacks, the Metric and its summaries."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from segmetrics_torch import HierarchyMeasures, RegionBenchmark
from segmetrics_torch.functional import hierarchy_measures, partition_measures
from segmetrics_torch.functional.partition import TABLE_MEASURES, hierarchy_state, summarize_hierarchy
from segmetrics_torch.ops.hierarchy import gridbmap2seg, region_count_thresholds, ucm_hierarchy
from segmetrics_torch.reference import partition as ref


def random_ucm(rng, h, w, closed_pixels=False):
    """A random (non-ultrametric) double-size grid map with values on a 1/8 lattice (ties with thresholds)."""
    u = rng.integers(0, 9, (2 * h + 1, 2 * w + 1)) / 8.0
    if not closed_pixels:
        u[1::2, 1::2] = 0
    return u


@settings(max_examples=40)
@given(st.integers(1, 9), st.integers(1, 9), st.integers(0, 2**31 - 1), st.booleans())
def test_ucm_partitions_equal_scipy_labelling(h, w, seed, closed_pixels):
    rng = np.random.default_rng(seed)
    u = random_ucm(rng, h, w, closed_pixels)
    thresholds = np.array([0.5, 0.0, 0.125, 0.875, 1.0])
    for rule, oracle in (("seism", ref.ucm_to_partition), ("bsr", ref.bsr_ucm_to_partition)):
        hier = ucm_hierarchy([torch.from_numpy(u)], torch.from_numpy(thresholds), rule=rule)
        levels = hier.partitions(0).numpy()
        for lv, t in enumerate(thresholds):
            np.testing.assert_array_equal(levels[lv], ref.relabel(oracle(u, t)))
            assert hier.level_regions[0, lv] == len(np.unique(levels[lv]))


def test_gridbmap2seg_and_region_count_thresholds():
    rng = np.random.default_rng(4)
    u = random_ucm(rng, 6, 7)
    grid = torch.from_numpy(u > 0.4)
    np.testing.assert_array_equal(gridbmap2seg(grid).numpy(), ref.relabel(ref.gridbmap2seg(u > 0.4)))
    counts = [1, 2, 3, 5, 100]
    got = region_count_thresholds(torch.from_numpy(u), counts)
    assert got.tolist() == [ref.region_count_threshold(u, n) for n in counts]
    with pytest.raises(ValueError, match="odd shape"):
        gridbmap2seg(torch.zeros(4, 5, dtype=torch.bool))


@settings(max_examples=25)
@given(st.integers(2, 8), st.integers(2, 8), st.integers(0, 2**31 - 1), st.integers(1, 3))
def test_atoms_path_equals_pixel_tables_of_every_level(h, w, seed, k):
    """hierarchy_measures aggregates one atoms x annotation table per level; partition_measures tabulates pixels."""
    rng = np.random.default_rng(seed)
    ucms = [torch.from_numpy(random_ucm(rng, h, w, closed_pixels=seed % 3 == 0)) for _ in range(2)]
    gts = [torch.from_numpy(rng.integers(0, 3, (k, h, w))) for _ in range(2)]
    thresholds = [0.3, 0.6, 0.1]
    out = hierarchy_measures(ucms, gts, thresholds=thresholds, measures=TABLE_MEASURES)
    for b in range(2):
        levels = ucm_hierarchy([ucms[b]], torch.tensor(thresholds, dtype=torch.float64)).partitions(0)
        direct = partition_measures(list(levels), [gts[b]] * len(thresholds), measures=TABLE_MEASURES)
        for key, value in direct.items():
            torch.testing.assert_close(out[key][b], value, rtol=0, atol=1e-12, msg=key)
        stack = hierarchy_measures(
            levels[None], gts[b][None], input_format="stack", thresholds=3, measures=TABLE_MEASURES
        )
        for key in direct:
            torch.testing.assert_close(stack[key][0], out[key][b], rtol=0, atol=1e-12, msg=key)


def test_region_benchmark_counts_equal_the_bsr_oracle():
    rng = np.random.default_rng(8)
    u = random_ucm(rng, 7, 9)
    gts = rng.integers(1, 4, (2, 7, 9))
    thresholds = [0.2, 0.5, 0.8]
    out = hierarchy_measures(
        [torch.from_numpy(u)], [torch.from_numpy(gts)], thresholds=thresholds, rule="bsr", measures=["pri", "voi"]
    )
    segs = [ref.bsr_ucm_to_partition(u, t) for t in thresholds]
    expected = ref.evaluation_reg_image(segs, list(gts))
    for ours, theirs in (("reg_cnt_r", "cntR"), ("reg_sum_r", "sumR"), ("reg_cnt_p", "cntP"), ("reg_sum_p", "sumP")):
        np.testing.assert_allclose(out[ours][0].numpy(), expected[theirs], rtol=1e-12)
    assert float(out["reg_cnt_r_best"][0]) == pytest.approx(expected["cntR_best"], rel=1e-12)
    np.testing.assert_allclose(out["pri"][0].numpy(), expected["ri"], rtol=1e-12)
    np.testing.assert_allclose(out["voi"][0].numpy(), expected["voi"], rtol=1e-12, atol=1e-12)


def test_num_regions_parameters_follow_seism_read_one_ucm():
    rng = np.random.default_rng(2)
    u = random_ucm(rng, 8, 8)
    gt = torch.from_numpy(rng.integers(0, 3, (1, 8, 8)))
    out = hierarchy_measures([torch.from_numpy(u)], [gt], num_regions=[2, 5, 50], measures=["voi"])
    expected_t = [ref.region_count_threshold(u, n) for n in (2, 5, 50)]
    assert out["thresholds"][0].tolist() == expected_t
    for lv, t in enumerate(expected_t):
        part = ref.ucm_to_partition(u, t)
        assert float(out["voi"][0, lv]) == pytest.approx(ref.voi(part, [gt[0].numpy()]), abs=1e-12)


def test_hierarchy_metric_equals_functional_summary_and_batches():
    rng = np.random.default_rng(5)
    ucms = [torch.from_numpy(random_ucm(rng, 6, 8)) for _ in range(4)]
    gts = [torch.from_numpy(rng.integers(0, 3, (2, 6, 8))) for _ in range(4)]
    measures = ("fop", "pri", "voi", "ssc")
    metric = HierarchyMeasures(thresholds=5, measures=measures)
    metric.update(ucms[:1], gts[:1])
    metric.update(ucms[1:], gts[1:])
    res = metric.compute()
    per = hierarchy_measures(ucms, gts, thresholds=5, measures=measures)
    direct = summarize_hierarchy(hierarchy_state(per, measures, True), per["thresholds"], measures)
    for m in measures:
        for key in direct[m]:
            torch.testing.assert_close(res[m][key], direct[m][key], rtol=0, atol=1e-14)
    # ODS of a similarity is the best mean over levels, of VoI the lowest
    assert float(res["pri"]["ods"]) == pytest.approx(float(per["pri"].mean(0).max()))
    assert float(res["voi"]["ods"]) == pytest.approx(float(per["voi"].mean(0).min()))
    assert float(res["voi"]["ois"]) == pytest.approx(float(per["voi"].min(1).values.mean()))
    p, r = per["fop_precision"].mean(0), per["fop_recall"].mean(0)
    best = int((2 * p * r / (p + r)).nan_to_num().argmax())
    assert float(res["fop"]["ods_parameter"]) == pytest.approx(float(per["thresholds"][best]))
    rb = RegionBenchmark(thresholds=5)
    rb.update(ucms, gts)
    out = rb.compute()
    assert set(out) == {"covering", "pri", "voi", "parameters"}


@pytest.mark.filterwarnings("ignore:The ``compute`` method")
def test_hierarchy_bad_input():
    u = torch.zeros(7, 9, dtype=torch.float64)
    gt = torch.zeros(1, 3, 4, dtype=torch.long)
    with pytest.raises(ValueError, match="odd shape"):
        hierarchy_measures([torch.zeros(6, 9)], [gt])
    with pytest.raises(ValueError, match="describe"):
        hierarchy_measures([u], [torch.zeros(1, 3, 5, dtype=torch.long)])
    bad = u.clone()
    bad[1, 1] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        hierarchy_measures([bad], [gt])
    with pytest.raises(ValueError, match="levels"):
        hierarchy_measures([torch.zeros(2, 3, 4, dtype=torch.long)], [gt], input_format="stack", thresholds=3)
    with pytest.raises(ValueError, match="input_format"):
        hierarchy_measures([u], [gt], input_format="pb")
    with pytest.raises(ValueError, match="rule"):
        HierarchyMeasures(rule="eight")
    with pytest.raises(ValueError, match="num_regions"):
        HierarchyMeasures(num_regions=[0, 3])
    with pytest.raises(ValueError, match="empty dataset"):
        HierarchyMeasures(thresholds=3, measures=["pri"]).compute()
