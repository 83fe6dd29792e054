"""Partition measures: the batched torch path against the numpy oracle, scikit-image and scikit-learn; labels,
batching, edge cases and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st
from skimage.metrics import adapted_rand_error, variation_of_information
from sklearn.metrics import rand_score

import segmetrics_torch.ops.contingency as contingency
from segmetrics_torch import ObjectsAndPartsPR, PartitionMeasures, SegmentationCovering, VariationOfInformation
from segmetrics_torch.functional import partition_measures
from segmetrics_torch.functional.partition import TABLE_MEASURES, partition_tables
from segmetrics_torch.ops.contingency import relabel
from segmetrics_torch.reference import partition as ref

LABEL_VALUES = [-(2**62), -7, -1, 0, 1, 2, 5, 1000, 2**40 + 3, 2**62]


@st.composite
def label_maps(draw, max_side=14, max_annotators=4):
    h = draw(st.integers(1, max_side))
    w = draw(st.integers(2 if h == 1 else 1, max_side))
    k = draw(st.integers(1, max_annotators))
    n_labels = draw(st.integers(1, 6))
    values = draw(st.lists(st.sampled_from(LABEL_VALUES), min_size=n_labels, max_size=n_labels, unique=True))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    blocky = draw(st.booleans())
    maps = []
    for _ in range(k + 1):
        idx = rng.integers(0, n_labels, (h, w))
        if blocky:  # large regions, so that Fop finds objects and parts
            idx = np.repeat(np.repeat(rng.integers(0, n_labels, (h // 3 + 1, w // 3 + 1)), 3, 0), 3, 1)[:h, :w]
        maps.append(np.asarray(values, dtype=np.int64)[idx])
    return maps[0], np.stack(maps[1:])


@settings(max_examples=60)
@given(label_maps())
def test_relabel_backends_match_first_appearance(pair):
    seg, gts = pair
    flat = torch.from_numpy(np.concatenate([seg[None], gts]).reshape(len(gts) + 1, -1))
    for backend in ("numba", "torch"):
        out, counts = relabel(flat, backend=backend)
        for row, k, original in zip(out.numpy(), counts.tolist(), flat.numpy(), strict=True):
            expected = ref.relabel(original.reshape(1, -1)).ravel()
            np.testing.assert_array_equal(row, expected)
            assert k == len(np.unique(original))


@settings(max_examples=40)
@given(label_maps(), st.booleans())
def test_tables_equal_reference_intersection_matrices(pair, sort_path):
    seg, gts = pair
    old = contingency._DENSE_CELLS
    contingency._DENSE_CELLS = 0 if sort_path else old  # exercise the unique() aggregation too
    try:
        ct = partition_tables([torch.from_numpy(seg)[None]], [torch.from_numpy(gts)])
    finally:
        contingency._DENSE_CELLS = old
    row_off = 0  # one partition: its rows are 0..K_S-1
    col_off = torch.cumsum(ct.annotation_regions, 0) - ct.annotation_regions
    for t in range(ct.num_tables):
        expected = ref.intersection_matrix(seg, gts[t])
        got = np.zeros_like(expected)
        sel = ct.tables == t
        got[(ct.rows[sel] - row_off).numpy(), (ct.cols[sel] - col_off[t]).numpy()] = ct.counts[sel].numpy()
        np.testing.assert_array_equal(got, expected)
    assert ct.row_sizes.tolist() == ref.intersection_matrix(seg, gts[0]).sum(1).tolist()


@settings(max_examples=40)
@given(label_maps(), label_maps())
def test_torch_backend_tables_equal_the_kernel(pair_a, pair_b):
    """The tensor path (the one CUDA takes) gives the same tables as the CPU kernel, for a batch of two images."""
    parts = [torch.from_numpy(pair_a[0])[None], torch.from_numpy(pair_b[0])[None]]
    anns = [torch.from_numpy(pair_a[1]), torch.from_numpy(pair_b[1])]
    if parts[0].shape != parts[1].shape:
        parts, anns = parts[:1], anns[:1]
    kernel = partition_tables(parts, anns, backend="numba")
    tensor = partition_tables(parts, anns, backend="torch")
    for a, b in zip(kernel, tensor, strict=True):
        assert torch.equal(a, b)


def _reference_values(seg, gts, gamma_obj=0.9):
    return ref.partition_measures(seg, list(gts), gamma_obj=gamma_obj)


@settings(max_examples=80)
@given(label_maps())
def test_all_table_measures_equal_the_numpy_oracle(pair):
    seg, gts = pair
    out = partition_measures(torch.from_numpy(seg)[None], torch.from_numpy(gts)[None], measures=TABLE_MEASURES)
    expected = _reference_values(seg, gts)
    for key, value in expected.items():
        if math.isnan(value):
            continue  # degenerate 0/0 of the reference; our conventions are tested separately
        if key.startswith("fr") and any(math.isnan(v) for k, v in expected.items() if k.startswith("fr")):
            continue
        assert float(out[key][0]) == pytest.approx(value, abs=1e-9), key


@settings(max_examples=60)
@given(label_maps(max_annotators=1))
def test_third_party_voi_rand_and_adapted_rand(pair):
    seg, gts = pair
    gt = gts[0]
    out = partition_measures(torch.from_numpy(seg)[None], torch.from_numpy(gts)[None], measures=["voi", "pri", "fr"])
    # scikit-image rejects negative labels: give it the (equivalent) relabelled maps
    s, g = ref.relabel(seg), ref.relabel(gt)
    assert float(out["voi"][0]) == pytest.approx(variation_of_information(g, s, ignore_labels=()).sum(), abs=1e-9)
    assert float(out["pri"][0]) == pytest.approx(rand_score(g.ravel(), s.ravel()), abs=1e-9)
    with np.errstate(divide="ignore", invalid="ignore"):
        error, precision, recall = adapted_rand_error(g, s, ignore_labels=())
    if np.isfinite([error, precision, recall]).all():  # skimage gives NaN where we define 1 (no pair in a region)
        # scikit-image's "precision" is SEISM's region recall and vice versa
        assert float(out["fr"][0]) == pytest.approx(1 - error, abs=1e-9)
        assert float(out["fr_recall"][0]) == pytest.approx(precision, abs=1e-9)
        assert float(out["fr_precision"][0]) == pytest.approx(recall, abs=1e-9)


def test_fop_gamma_obj_is_an_argument():
    rng = np.random.default_rng(3)
    seg = np.repeat(np.repeat(rng.integers(0, 4, (6, 6)), 5, 0), 5, 1)
    gt = seg.copy()
    gt[:3] = 9  # shaves some regions: overlaps between 0.9 and 0.95
    for gamma in (0.9, 0.95):
        out = partition_measures(
            torch.from_numpy(seg)[None], torch.from_numpy(gt)[None, None], measures="fop", gamma_obj=gamma
        )
        f, p, r = ref.fop(seg, [gt], gamma_obj=gamma)
        assert (float(out["fop"][0]), float(out["fop_precision"][0]), float(out["fop_recall"][0])) == pytest.approx(
            (f, p, r), abs=1e-12
        )


def test_identical_partitions_score_perfectly_with_any_label_values():
    seg = torch.tensor([[5, 5, -3, -3], [5, 5, -3, 2**60], [7, 7, 7, 2**60]])
    relabelled = torch.tensor([[0, 0, 1, 1], [0, 0, 1, 2], [3, 3, 3, 2]])
    out = partition_measures(seg[None], relabelled[None, None].repeat(1, 2, 1, 1), max_dist=1.0)
    for key in ("fb", "fop", "fr", "pri", "nvoi", "sc", "ssc", "dhd", "sdhd", "vd", "bgm", "bce", "gce", "lce"):
        assert float(out[key][0]) == pytest.approx(1.0, abs=1e-12), key
    assert float(out["voi"][0]) == 0.0


def test_defined_edge_cases_are_not_nan():
    one_pixel = partition_measures(torch.zeros(1, 1, 1, dtype=torch.long), torch.zeros(1, 1, 1, 1, dtype=torch.long))
    assert all(not torch.isnan(v).any() for v in one_pixel.values())
    assert float(one_pixel["pri"][0]) == 1.0
    # every partition region a single pixel: no pair inside a region, region precision := 1
    seg = torch.arange(6).view(1, 2, 3)
    gt = torch.zeros(1, 1, 2, 3, dtype=torch.long)
    out = partition_measures(seg, gt, measures=["fr", "nvoi", "voi"])
    assert float(out["fr_precision"][0]) == 1.0 and float(out["fr_recall"][0]) == 0.0
    assert float(out["voi"][0]) == pytest.approx(math.log2(6))
    assert float(out["nvoi"][0]) == pytest.approx(1 - math.log2(6) / (2 * math.log2(6)))
    both_single = partition_measures(torch.zeros(1, 2, 2, dtype=torch.long), torch.ones(1, 1, 2, 2, dtype=torch.long))
    assert float(both_single["nvoi"][0]) == 1.0


def test_batch_equals_single_images_and_lists_keep_order():
    rng = np.random.default_rng(0)
    segs = [torch.from_numpy(rng.integers(0, 4, s)) for s in [(9, 11), (9, 11), (7, 5), (9, 11)]]
    gts = [torch.from_numpy(rng.integers(0, 3, (k, *s.shape))) for k, s in zip([1, 3, 2, 2], segs, strict=True)]
    batch = partition_measures(segs, gts, max_dist=1.5)
    for i in range(len(segs)):
        single = partition_measures(segs[i][None], gts[i][None], max_dist=1.5)
        for key, value in single.items():
            torch.testing.assert_close(batch[key][i], value[0], rtol=0, atol=1e-15)
    # a (B, H, W) / (B, K, H, W) batch gives the same as the list
    same = partition_measures(torch.stack([segs[0], segs[3]]), torch.stack([gts[3], gts[3]]), max_dist=1.5)
    listed = partition_measures([segs[0], segs[3]], [gts[3], gts[3]], max_dist=1.5)
    for key in same:
        torch.testing.assert_close(same[key], listed[key], rtol=0, atol=0)


def test_float_and_bool_labels():
    seg = torch.tensor([[[0.0, 0.0, 2.0], [3.0, 3.0, 2.0]]])
    gt = torch.tensor([[[[0, 0, 2], [3, 3, 2]]]])
    out = partition_measures(seg, gt, measures="voi")
    assert float(out["voi"][0]) == 0.0
    out = partition_measures(seg > 1, gt, measures="pri")
    assert 0 <= float(out["pri"][0]) <= 1


@pytest.mark.parametrize(
    ("preds", "target", "match"),
    [
        (torch.tensor([[[0.5, 1.0]]]), torch.zeros(1, 1, 1, 2), "fractional"),
        (torch.tensor([[[float("nan"), 1.0]]]), torch.zeros(1, 1, 1, 2), "NaN"),
        (torch.zeros(1, 2, 3), torch.zeros(1, 1, 3, 2), "same image size"),
        (torch.zeros(2, 2, 3), torch.zeros(1, 1, 2, 3), "same number of images"),
        (torch.zeros(0, 2, 3), torch.zeros(0, 1, 2, 3), "at least one image"),
        (torch.zeros(1, 2, 3), torch.zeros(1, 0, 2, 3), "non-empty"),
        (torch.zeros(2, 3), torch.zeros(1, 1, 2, 3), "shape"),
        ([], [], "at least one image"),
    ],
)
def test_bad_input_raises_value_error(preds, target, match):
    with pytest.raises(ValueError, match=match):
        partition_measures(preds, target)
    with pytest.raises(ValueError, match=match):
        PartitionMeasures().update(preds, target)


def test_bad_arguments():
    seg = torch.zeros(1, 2, 2, dtype=torch.long)
    with pytest.raises(TypeError, match="preds"):
        partition_measures(np.zeros((1, 2, 2)), seg[:, None])
    with pytest.raises(TypeError, match="integer labels"):
        partition_measures(seg.to(torch.complex64), seg[:, None])
    with pytest.raises(ValueError, match="measures"):
        partition_measures(seg, seg[:, None], measures=["nope"])
    with pytest.raises(ValueError, match="gamma_obj"):
        partition_measures(seg, seg[:, None], gamma_obj=1.5)
    with pytest.raises(ValueError, match="direction"):
        SegmentationCovering(direction="sideways")


def test_metric_classes_accumulate_like_seism_gather():
    rng = np.random.default_rng(1)
    segs = torch.from_numpy(np.repeat(np.repeat(rng.integers(0, 4, (5, 4, 4)), 4, 1), 4, 2))
    gts = torch.from_numpy(np.repeat(np.repeat(rng.integers(0, 3, (5, 2, 4, 4)), 4, 2), 4, 3))
    per = partition_measures(segs, gts, measures=["fop", "voi"])
    metric = ObjectsAndPartsPR()
    metric.update(segs[:2], gts[:2])
    metric.update(list(segs[2:]), list(gts[2:]))
    res = metric.compute()
    p, r = per["fop_precision"].mean(), per["fop_recall"].mean()
    torch.testing.assert_close(res["precision"], p)
    torch.testing.assert_close(res["f"], 2 * p * r / (p + r))
    voi = VariationOfInformation()
    voi.update(segs, gts)
    torch.testing.assert_close(voi.compute(), per["voi"].mean())
    assert VariationOfInformation.higher_is_better is False


def test_device_path(device):
    seg = torch.tensor([[0, 0, 1], [2, 2, 1]], device=device)
    gt = torch.tensor([[[0, 0, 1], [0, 0, 1]]], device=device)
    out = partition_measures(seg[None], gt[None], measures=TABLE_MEASURES)
    cpu = partition_measures(seg[None].cpu(), gt[None].cpu(), measures=TABLE_MEASURES)
    for key in cpu:
        assert out[key].device.type == torch.device(device).type
        torch.testing.assert_close(out[key].cpu(), cpu[key])
