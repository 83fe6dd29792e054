"""Bad and edge inputs of the partition family (SEISM measures) and the hierarchy family (ucm2 / level stacks)."""

from __future__ import annotations

import math

import pytest
import torch

from segmetrics_torch import HierarchyMeasures, PartitionMeasures, RegionBenchmark, SegmentationCovering
from segmetrics_torch.functional import hierarchy_measures, partition_measures

from .cases import close, meta, metric_run, raises, run_case, value

M = ["pri", "voi", "ssc", "fop"]  # a few table measures keep the matrix fast; "fb" where asked for


def _seg(b: int = 2, h: int = 8, w: int = 12) -> torch.Tensor:
    s = torch.zeros(b, h, w, dtype=torch.int64)
    s[:, :, 6:] = 1
    s[:, 5:, :] += 2
    return s


def _gt(b: int = 2, h: int = 8, w: int = 12) -> torch.Tensor:
    g = torch.zeros(b, 2, h, w, dtype=torch.int64)
    g[:, 0, :, 5:] = 1
    g[:, 1, 4:, :] = 1
    return g


def _ucm(b: int = 2, h: int = 8, w: int = 12) -> torch.Tensor:
    """A double-size ucm2 (2h+1, 2w+1) as uint8: a strong vertical and a weak horizontal contour."""
    u = torch.zeros(b, 2 * h + 1, 2 * w + 1, dtype=torch.uint8)
    u[:, :, 12] = 200
    u[:, 10, :] = 100
    u[:, 10, 12] = 200
    return u


S, GT, U = _seg(), _gt(), _ucm()
UF = U.double() / 255


def _pm(p, g, **kw):
    return partition_measures(p, g, measures=M, **kw)


def _hm(p, g, **kw):
    kw.setdefault("thresholds", 4)
    return hierarchy_measures(p, g, measures=["pri", "voi"], region_benchmark=False, **kw)


def _vals(keys=("pri", "voi", "ssc", "fop")):
    return lambda out: {k: out[k] for k in keys}


def _same(expected, keys=("pri", "voi", "ssc", "fop")):
    return close(lambda: {k: expected()[k] for k in keys})


CASES = [
    # ---- partition_measures: types and shapes
    raises("pm-preds-none", lambda: _pm(None, GT), TypeError, r"`preds` to be a torch.Tensor or a list"),
    raises("pm-target-numpy", lambda: _pm(S, GT.numpy()), TypeError, r"`target` to be a torch.Tensor or a list"),
    raises("pm-list-of-str", lambda: _pm(["a", "b"], GT), TypeError, r"`preds\[0\]` to be a torch.Tensor"),
    raises("pm-preds-4d", lambda: _pm(S[:, None], GT), ValueError, r"`preds` of shape \(B, H, W\) or a list"),
    raises("pm-target-3d", lambda: _pm(S, GT[:, 0]), ValueError, r"`target` of shape \(B, K, H, W\) or a list"),
    raises("pm-batch-mismatch", lambda: _pm(S, GT[:1]), ValueError, r"`preds` and `target` to hold the same number"),
    raises(
        "pm-size-mismatch",
        lambda: _pm(S[:, :, :10], GT),
        ValueError,
        r"`preds\[0\]` and `target\[0\]` to have the same image size",
    ),
    raises("pm-empty-batch", lambda: _pm(S[:0], GT[:0]), ValueError, r"`preds` to hold at least one image"),
    raises("pm-empty-list", lambda: _pm([], []), ValueError, r"`preds` to hold at least one image"),
    raises("pm-zero-size", lambda: _pm(S[:, :0], GT[:, :, :0]), ValueError, r"`preds\[0\]` to be non-empty"),
    raises("pm-no-annotator", lambda: _pm(S, GT[:, :0]), ValueError, r"`target\[0\]` to be non-empty"),
    raises("pm-list-item-3d", lambda: _pm([S], [GT[0]]), ValueError, r"`preds\[0\]` to have 2 dims"),
    # ---- dtypes and values
    raises("pm-complex", lambda: _pm(S.to(torch.complex64), GT), TypeError, r"`preds\[0\]` to hold integer labels"),
    raises("pm-float-fraction", lambda: _pm(S + 0.5, GT), ValueError, r"`preds\[0\]` to hold integer labels.*fraction"),
    raises(
        "pm-nan",
        lambda: _pm(S.double().masked_fill(S == 3, float("nan")), GT),
        ValueError,
        r"`preds\[0\]` to hold integer labels, but it contains NaN",
    ),
    raises("pm-float-huge", lambda: _pm(S.double() * 2.0**60, GT), ValueError, r"`preds\[0\]` labels below 2\*\*53"),
    raises("pm-meta", lambda: _pm(meta(S), GT), ValueError, r"`preds\[0\]` to hold values.*'meta'"),
    raises("pm-meta-target", lambda: _pm(S, meta(GT)), ValueError, r"`target\[0\]` to hold values"),
    # valid label maps: any integer values, equal to relabelled ones
    value("pm-negative-labels", lambda: _vals()(_pm(S - 7, GT)), _same(lambda: _pm(S, GT))),
    value("pm-huge-labels", lambda: _vals()(_pm(S * 2**40 + 5, GT * 2**50)), _same(lambda: _pm(S, GT))),
    value("pm-non-contiguous-labels", lambda: _vals()(_pm(S * 17, GT * 3 + 9)), _same(lambda: _pm(S, GT))),
    value("pm-uint8-bool-labels", lambda: _vals()(_pm(S.to(torch.uint8), GT.bool())), _same(lambda: _pm(S, GT))),
    value("pm-float-whole", lambda: _vals()(_pm(S.double(), GT.float())), _same(lambda: _pm(S, GT))),
    value("pm-requires-grad", lambda: _vals()(_pm(S.double().requires_grad_(), GT)), _same(lambda: _pm(S, GT))),
    value(
        "pm-non-contiguous-memory",
        lambda: _vals()(_pm(S.transpose(1, 2), GT.transpose(2, 3))),
        _same(lambda: _pm(S.transpose(1, 2).contiguous(), GT.transpose(2, 3).contiguous())),
    ),
    value(
        "pm-constant",
        lambda: _vals(("pri", "voi"))(_pm(torch.zeros_like(S), torch.zeros_like(GT))),
        close({"pri": torch.ones(2, dtype=torch.float64), "voi": torch.zeros(2, dtype=torch.float64)}),
    ),
    value(
        "pm-one-pixel",
        lambda: _vals(("pri", "voi"))(_pm(torch.zeros(1, 1, 1), torch.zeros(1, 1, 1, 1))),
        close({"pri": torch.ones(1, dtype=torch.float64), "voi": torch.zeros(1, dtype=torch.float64)}),
    ),
    value(
        "pm-list-sizes",
        lambda: _vals()(_pm([S[0], S[1, :5]], [GT[0], GT[1, :, :5]])),
        close(lambda: {k: torch.cat([_pm(S[:1], GT[:1])[k], _pm(S[1:, :5], GT[1:, :, :5])[k]]) for k in M}),
    ),
    value(
        "pm-fb-one-pixel",
        lambda: partition_measures(torch.zeros(1, 1, 1), torch.zeros(1, 1, 1, 1), measures="fb")["fb"],
    ),
    # ---- options
    raises(
        "pm-measures-unknown",
        lambda: partition_measures(S, GT, measures=["iou"]),
        ValueError,
        r"`measures` to name some of",
    ),
    raises("pm-measures-empty", lambda: partition_measures(S, GT, measures=[]), ValueError, r"`measures`"),
    raises("pm-measures-int", lambda: partition_measures(S, GT, measures=3), (TypeError, ValueError), r"`measures`"),
    raises("pm-gamma-obj", lambda: _pm(S, GT, gamma_obj=1.5), ValueError, r"`gamma_obj` to be a number in \[0, 1\]"),
    raises("pm-beta-nan", lambda: _pm(S, GT, beta=float("nan")), ValueError, r"`beta` to be a number in \[0, 1\]"),
    raises("pm-gamma-part-bool", lambda: _pm(S, GT, gamma_part=True), ValueError, r"`gamma_part`"),
    raises("pm-max-dist-zero", lambda: partition_measures(S, GT, measures="fb", max_dist=0), ValueError, r"`max_dist`"),
    value(
        "pm-max-dist-huge",
        lambda: partition_measures(S, GT, measures="fb", max_dist=1e6),
        close(lambda: partition_measures(S, GT, measures="fb", max_dist=math.hypot(8, 12))),
    ),
    raises("pm-validate-args-str", lambda: _pm(S, GT, validate_args="no"), TypeError, r"`validate_args` to be a bool"),
    # ---- Metric classes
    raises("PartitionMeasures-measures", lambda: PartitionMeasures(measures="rand"), ValueError, r"`measures`"),
    raises("PartitionMeasures-gamma", lambda: PartitionMeasures(gamma_obj=-1), ValueError, r"`gamma_obj`"),
    raises(
        "PartitionMeasures-validate-args",
        lambda: PartitionMeasures(validate_args="no"),
        TypeError,
        r"`validate_args` to be a bool",
    ),
    raises(
        "SegmentationCovering-direction", lambda: SegmentationCovering(direction="both"), ValueError, r"`direction`"
    ),
    raises(
        "PartitionMeasures-update-shape",
        lambda: metric_run(PartitionMeasures, [(S, GT[:, :, :4])], measures=M),
        ValueError,
        r"`preds\[0\]` and `target\[0\]` to have the same image size",
    ),
    raises(
        "PartitionMeasures-update-fraction",
        lambda: metric_run(PartitionMeasures, [(S * 0.5, GT)], measures=M),
        ValueError,
        r"`preds\[0\]` to hold integer labels",
    ),
    value(
        "PartitionMeasures-requires-grad",
        lambda: metric_run(PartitionMeasures, [(S.double().requires_grad_(), GT)], measures=M),
        close(lambda: metric_run(PartitionMeasures, [(S, GT)], measures=M)),
    ),
    raises(
        "PartitionMeasures-compute-before-update",
        lambda: PartitionMeasures(measures=M).compute(),
        ValueError,
        r"No images were evaluated: the summary of an empty dataset is undefined",
    ),
    # ---- hierarchy_measures: ucm2 and stacks
    raises("hm-ucm-even", lambda: _hm(U[:, 1:], GT), ValueError, r"`preds\[0\]` to be a double-size ucm2 of odd shape"),
    raises("hm-ucm-4d", lambda: _hm(U[:, None], GT), ValueError, r"`preds` ucm2 maps of shape \(B, 2H\+1, 2W\+1\)"),
    raises("hm-ucm-none", lambda: _hm(None, GT), TypeError, r"`preds` to be a torch.Tensor or a list"),
    raises("hm-ucm-size", lambda: _hm(U[:, :15], GT), ValueError, r"`preds\[0\]` to describe \(8, 12\) images"),
    raises("hm-ucm-batch", lambda: _hm(U[:1], GT), ValueError, r"`preds` and `target` to hold the same number"),
    raises("hm-ucm-empty", lambda: _hm(U[:0], GT[:0]), ValueError, r"`target` to hold at least one image"),
    raises("hm-ucm-tiny", lambda: _hm(U[:, :1, :1], GT[:, :, :0, :0]), ValueError, r"`(preds|target)\[0\]`"),
    raises(
        "hm-ucm-nan",
        lambda: _hm(UF.masked_fill(U == 100, float("nan")), GT),
        ValueError,
        r"`preds\[0\]` to contain only finite values",
    ),
    raises("hm-ucm-above-1", lambda: _hm(UF * 2, GT), ValueError, r"floating `preds\[0\]` to lie in \[0, 1\]"),
    raises("hm-ucm-bool", lambda: _hm(U > 0, GT), TypeError, r"`preds\[0\]` to be floating in \[0, 1\] or uint8"),
    raises("hm-ucm-int64", lambda: _hm(U.long(), GT), TypeError, r"`preds\[0\]`.*torch.int64"),
    raises("hm-ucm-meta", lambda: _hm(meta(UF), GT), ValueError, r"`preds\[0\]` to hold values"),
    raises("hm-input-format", lambda: _hm(U, GT, input_format="png"), ValueError, r"`input_format` to be one of"),
    raises("hm-rule", lambda: _hm(U, GT, rule="matlab"), ValueError, r"`rule` to be one of"),
    raises("hm-thresholds-zero", lambda: _hm(U, GT, thresholds=0), ValueError, r"`thresholds` to be a positive int"),
    raises("hm-thresholds-str", lambda: _hm(U, GT, thresholds="all"), TypeError, r"`thresholds`"),
    raises("hm-num-regions-empty", lambda: _hm(U, GT, num_regions=[]), ValueError, r"`num_regions` to be a list"),
    raises("hm-num-regions-fraction", lambda: _hm(U, GT, num_regions=[1.5]), ValueError, r"`num_regions`"),
    raises(
        "hm-num-regions-stack",
        lambda: _hm(S[:, None], GT, input_format="stack", thresholds=1, num_regions=[2]),
        ValueError,
        r"`num_regions` applies to ucm2 input only",
    ),
    raises(
        "hm-stack-levels",
        lambda: _hm(S[:, None], GT, input_format="stack", thresholds=3),
        ValueError,
        r"`preds\[0\]` to hold 3 levels",
    ),
    raises(
        "hm-stack-fraction",
        lambda: _hm(S[:, None] * 0.5, GT, input_format="stack", thresholds=1),
        ValueError,
        r"`preds\[0\]` to hold integer labels",
    ),
    raises(
        "hm-region-benchmark-str",
        lambda: hierarchy_measures(U, GT, thresholds=4, measures="pri", region_benchmark="yes"),
        TypeError,
        r"`region_benchmark` to be a bool",
    ),
    value(
        "hm-ucm-requires-grad",
        lambda: _vals(("pri", "voi"))(_hm(UF.clone().requires_grad_(), GT)),
        _same(lambda: _hm(UF, GT), ("pri", "voi")),
    ),
    value("hm-ucm-constant-zero", lambda: _vals(("pri", "voi"))(_hm(torch.zeros_like(U), GT))),
    value(
        "hm-stack-huge-labels",
        lambda: _vals(("pri", "voi"))(_hm(S[:, None] * 2**40 - 3, GT, input_format="stack", thresholds=1)),
        _same(lambda: _hm(S[:, None], GT, input_format="stack", thresholds=1), ("pri", "voi")),
    ),
    value("hm-num-regions-beyond", lambda: _hm(U, GT, num_regions=[1, 1000])["regions"], lambda out: None),
    value(
        "hm-one-pixel-ucm",
        lambda: hierarchy_measures(torch.zeros(1, 3, 3), torch.zeros(1, 1, 1, 1), thresholds=3, measures=["voi", "fb"])[
            "voi"
        ],
        close(torch.zeros(1, 3, dtype=torch.float64)),
    ),
    # ---- HierarchyMeasures / RegionBenchmark
    raises("HierarchyMeasures-thresholds", lambda: HierarchyMeasures(thresholds=-4), ValueError, r"`thresholds`"),
    raises("HierarchyMeasures-num-regions", lambda: HierarchyMeasures(num_regions=[0]), ValueError, r"`num_regions`"),
    raises("HierarchyMeasures-rule", lambda: HierarchyMeasures(rule=None), ValueError, r"`rule`"),
    raises(
        "HierarchyMeasures-unique-occurrence",
        lambda: HierarchyMeasures(unique_occurrence="all"),
        ValueError,
        r"`unique_occurrence`",
    ),
    raises(
        "HierarchyMeasures-region-benchmark",
        lambda: HierarchyMeasures(region_benchmark="no"),
        TypeError,
        r"`region_benchmark` to be a bool",
    ),
    raises(
        "HierarchyMeasures-validate-args",
        lambda: HierarchyMeasures(validate_args=0),
        TypeError,
        r"`validate_args` to be a bool",
    ),
    raises("RegionBenchmark-input-format", lambda: RegionBenchmark(input_format="seg"), ValueError, r"`input_format`"),
    raises(
        "HierarchyMeasures-update-bool-ucm",
        lambda: metric_run(HierarchyMeasures, [(U > 0, GT)], thresholds=4, measures="pri"),
        TypeError,
        r"`preds\[0\]` to be floating",
    ),
    raises(
        "HierarchyMeasures-compute-before-update",
        lambda: HierarchyMeasures(thresholds=4, measures="pri").compute(),
        ValueError,
        r"No images were evaluated",
    ),
]


@pytest.mark.parametrize("case", [c.param() for c in CASES])
def test_partition_bad_input(case):
    run_case(case)


def test_enough_cases():
    assert len({c.id for c in CASES}) == len(CASES) >= 30
