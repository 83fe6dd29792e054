"""Silent numbers and unclear errors of the second bad-input round (issue 26, items 4 and 5)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import segmetrics_torch as st
from segmetrics_torch.functional.boundary import boundary_pr
from segmetrics_torch.functional.foreground import size_invariant_mae
from segmetrics_torch.functional.proposals import proposal_overlaps
from segmetrics_torch.losses import e_measure_loss, weighted_f_measure_loss
from segmetrics_torch.meta import as_measure, generic_map_test
from segmetrics_torch.sharding import EvaluationSampler


def _full_gt_batch() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    p = torch.rand(3, 20, 20, generator=gen)
    g = torch.zeros(3, 20, 20, dtype=torch.bool)
    g[0, 3:8, 3:8] = True
    g[1] = True  # the target box covers the whole image: no background
    g[2, 10:15, 2:18] = True
    return p, g


def test_si_mae_nan_is_announced_naming_the_image() -> None:
    p, g = _full_gt_batch()
    with pytest.warns(RuntimeWarning, match=r"size_invariant_mae is NaN for 1 image\(s\) \(index 1\)"):
        values = size_invariant_mae(p, g)
    assert torch.isnan(values[1]) and not torch.isnan(values[[0, 2]]).any()


def test_si_mae_metric_warns_once_at_compute() -> None:
    p, g = _full_gt_batch()
    metric = st.SizeInvariantMAE()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning per update
        metric.update(p, g)
        metric.update(p, g)
    # two NaN images, the first at index 1 (the Metric keeps that one only; "(index 1)" read as a list of both)
    with pytest.warns(
        RuntimeWarning, match=r"SizeInvariantMAE is NaN for 2 image\(s\) \(the first: index 1\)"
    ) as record:
        assert torch.isnan(metric.compute())
    assert len([w for w in record if "SizeInvariantMAE" in str(w.message)]) == 1


def test_a_meta_measure_refuses_nan_scores() -> None:
    def nan_measure(preds, target):
        return torch.full((preds.shape[0],), float("nan"), dtype=torch.float64)

    p, g = _full_gt_batch()
    measure = as_measure(nan_measure, higher_is_better=True, name="always_nan")
    with pytest.raises(ValueError, match=r"generic: the measure 'always_nan' returned NaN in \d+ of \d+ judgements"):
        generic_map_test(measure, p, g)


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (
            lambda: boundary_pr(
                torch.randint(0, 256, (1, 20, 20), dtype=torch.uint8), _annotators(), thresholds=[64, 128, 192]
            ),
            r"`thresholds` in \[0, 1\].*fractions of 255 for a uint8 map \(e\.g\. 192 -> 0\.7529\)",
        ),
        (lambda: st.BoundaryPR(thresholds=[-0.5, 0.5]), r"`thresholds` in \[0, 1\].*from -0\.5 to 0\.5"),
        (lambda: st.HierarchyMeasures(thresholds=[-1.0, 2.0]), r"`thresholds` in \[0, 1\].*from -1 to 2"),
    ],
    ids=["uint8-map-0-255", "boundary-negative", "hierarchy-outside"],
)
def test_thresholds_outside_the_maps_range(make, match) -> None:
    with pytest.raises(ValueError, match=match):
        make()


def _annotators() -> torch.Tensor:
    gt = torch.zeros(1, 1, 20, 20, dtype=torch.bool)
    gt[0, 0, 10, 2:18] = True
    return gt


def test_stack_levels_are_labels_not_fractions() -> None:
    assert st.HierarchyMeasures(thresholds=[1.0, 2.0, 5.0], input_format="stack").levels.tolist() == [1, 2, 5]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_counts_stay_exact_whatever_set_dtype_asks(dtype) -> None:
    """4 x 300 x 300 pixel counts overflowed float16 (binary: nan); the states keep float64 and the results too."""
    gen = torch.Generator().manual_seed(1)
    p, g = torch.rand(4, 300, 300, generator=gen), torch.rand(4, 300, 300, generator=gen) > 0.5
    reference = st.ThresholdMeasures()
    reference.update(p, g)
    metric = st.ThresholdMeasures().set_dtype(dtype)
    metric.update(p, g)
    dtypes = {k: v.dtype for k, v in reference.metric_state.items() if isinstance(v, torch.Tensor)}
    assert {k: v.dtype for k, v in metric.metric_state.items() if isinstance(v, torch.Tensor)} == dtypes
    assert set(dtypes.values()) <= {torch.float64, torch.int64}
    assert metric.dtype == dtype  # recorded

    def flat(d, prefix=""):
        for k, v in d.items():
            yield from flat(v, f"{prefix}{k}/") if isinstance(d[k], dict) else [(prefix + k, v)]

    got, expected = dict(flat(metric.compute())), dict(flat(reference.compute()))
    for key, value in expected.items():
        torch.testing.assert_close(got[key], value, rtol=0, atol=0, equal_nan=True, msg=key)
        assert not torch.isnan(got[key]).all(), key


def test_a_one_pixel_e_measure_loss_is_bounded() -> None:
    for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        ones = torch.ones(1, 1, 1, dtype=dtype)
        assert float(e_measure_loss(ones, torch.ones(1, 1, 1))) == 0.0
        assert float(e_measure_loss(torch.full((1, 1, 1), 0.25, dtype=dtype), torch.zeros(1, 1, 1))) == 0.25
    gen = torch.Generator().manual_seed(2)
    for shape in [(2, 1, 2), (3, 4, 5)]:
        p = torch.rand(shape, generator=gen, dtype=torch.float64)
        g = torch.rand(shape, generator=gen) > 0.5
        for loss in (e_measure_loss(p, g, reduction="none"), weighted_f_measure_loss(p, g, reduction="none")):
            assert torch.isfinite(loss).all() and (loss >= -1).all() and (loss <= 1).all()


def test_merging_metrics_built_differently_names_the_setting() -> None:
    with pytest.raises(ValueError, match=r"different settings \(thresholds=\[.*\] here, 9 values there\)"):
        st.BoundaryPR(thresholds=4).merge_state(st.BoundaryPR(thresholds=9))
    with pytest.raises(ValueError, match=r"measures=\('pri',\) here, \('voi',\) there"):
        st.PartitionMeasures(["pri"]).merge_state(st.PartitionMeasures(["voi"]))
    with pytest.raises(ValueError, match="Cannot merge a BoundaryPR into a MAE"):
        st.MAE().merge_state(st.BoundaryPR())
    with pytest.raises(ValueError, match="include different measures"):
        st.ForegroundMeasures(include=["size_invariant_mae"]).merge_state(st.ForegroundMeasures())


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (
            (5.0,),
            {"num_replicas": 2, "rank": 0},
            r"`data_source` to be the dataset \(anything with len\(\)\) or its length, but got 5\.0 \(float\)",
        ),
        ((10,), {"num_replicas": 2.0, "rank": 0}, r"`num_replicas` to be an int, but got 2\.0"),
        ((10,), {"num_replicas": 2, "rank": True}, r"`rank` to be an int, but got True"),
    ],
)
def test_sampler_arguments_are_named(args, kwargs, match) -> None:
    with pytest.raises(TypeError, match=match):
        EvaluationSampler(*args, **kwargs)


def test_sampler_takes_numpy_integers() -> None:
    sampler = EvaluationSampler(np.int64(5), num_replicas=np.int64(2), rank=np.int64(1))
    assert list(sampler) == [2, 3, 4]


def test_a_bool_label_map_says_the_dtype_is_wrong() -> None:
    objects = torch.zeros(1, 8, 12, dtype=torch.bool)
    objects[0, 2:5, 3:7] = True
    with pytest.raises(TypeError, match=r"integer tensor .* got dtype torch.bool; one mask is a \(1, H, W\) stack"):
        proposal_overlaps(torch.zeros(8, 12, dtype=torch.bool), objects)


def test_si_mae_nan_warning_names_an_unchecked_map() -> None:
    """With validate_args=False a NaN map is not refused: the warning does not blame the boxes alone."""
    p = torch.full((2, 8, 8), float("nan"))
    g = torch.zeros(2, 8, 8, dtype=torch.bool)
    with pytest.warns(RuntimeWarning, match=r"or \(validate_args=False\) a NaN or inf in `preds`"):
        assert torch.isnan(size_invariant_mae(p, g, validate_args=False)).all()
    metric = st.SizeInvariantMAE(validate_args=False)
    metric.update(p, g)
    with pytest.warns(RuntimeWarning, match=r"or \(validate_args=False\) a NaN or inf in `preds`"):
        assert torch.isnan(metric.compute())
    p, g = _full_gt_batch()  # checked values: the boxes are the one cause, as before
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        size_invariant_mae(p, g)
    assert [str(w.message) for w in record if "validate_args" in str(w.message)] == []
