"""Bad and edge inputs of the boundary family (BSDS boundary PR, morphological boundary F), issue 20."""

from __future__ import annotations

import math

import pytest
import torch

from segmetrics_torch import BoundaryPR, MorphologicalBoundaryF
from segmetrics_torch.functional import boundary_pr, boundary_pr_counts, morphological_boundary_f

from .cases import close, grad, meta, metric_run, raises, run_case, value


def _pb(b: int = 2, h: int = 8, w: int = 12) -> torch.Tensor:
    return torch.rand(b, h, w, generator=torch.Generator().manual_seed(1), dtype=torch.float64)


def _gt(b: int = 2, h: int = 8, w: int = 12) -> torch.Tensor:
    t = torch.zeros(b, 2, h, w, dtype=torch.bool)
    t[:, 0, 3, 2:10] = True
    t[:, 1, 4, 2:10] = True
    return t


PB, GT = _pb(), _gt()
DIAGONAL = math.hypot(8, 12)
MASK = torch.zeros(2, 8, 12, dtype=torch.bool)
MASK[:, 2:6, 3:9] = True


def _counts(*args, **kwargs):
    return boundary_pr_counts(*args, thresholds=5, **kwargs)


def _pr(*args, **kwargs):
    return boundary_pr(*args, thresholds=5, **kwargs)


def _ods(out) -> float:
    return float(out["ods"]["f"]) if isinstance(out["ods"], dict) else float(out["ods"])


def _same_counts(expected):
    def check(out):
        exp = expected()
        for name in ("cnt_r", "sum_r", "cnt_p", "sum_p"):
            assert torch.equal(getattr(out, name), getattr(exp, name)), name

    return check


def _stack_levels(levels: int = 3) -> torch.Tensor:
    return torch.stack([PB >= (i + 1) / (levels + 1) for i in range(levels)], dim=1)


CASES = [
    # ---- types
    raises("counts-preds-none", lambda: _counts(None, GT), TypeError, r"`preds` to be a torch.Tensor or a list"),
    raises("counts-target-numpy", lambda: _counts(PB, GT.numpy()), TypeError, r"`target` to be a torch.Tensor"),
    raises("counts-list-of-str", lambda: _counts(["a.png"], [GT[0]]), TypeError, r"`preds\[0\]` to be a torch"),
    raises("counts-preds-str", lambda: _counts("pb.png", GT), TypeError, r"`preds` to be a torch.Tensor.*str"),
    # ---- shapes
    raises("counts-preds-2d", lambda: _counts(PB[0], GT), ValueError, r"`preds` to have 3 dims"),
    raises("counts-target-3d", lambda: _counts(PB, GT[:, 0]), ValueError, r"`target` to have 4 dims"),
    raises(
        "counts-batch-mismatch",
        lambda: _counts(PB, GT[:1]),
        ValueError,
        r"`preds` and `target` to hold the same number of images",
    ),
    raises(
        "counts-size-mismatch",
        lambda: _counts(PB[:, :, :10], GT),
        ValueError,
        r"`preds\[0\]` and `target\[0\]` to have the same image size",
    ),
    raises("counts-empty-batch", lambda: _counts(PB[:0], GT[:0]), ValueError, r"`preds` to hold at least one image"),
    raises("counts-empty-list", lambda: _counts([], []), ValueError, r"`preds` to hold at least one image"),
    raises("counts-zero-size", lambda: _counts(PB[:, :0], GT[:, :, :0]), ValueError, r"`preds\[0\]` to be a non-empty"),
    raises(
        "counts-no-annotator", lambda: _counts(PB, GT[:, :0]), ValueError, r"at least one annotator in `target\[0\]`"
    ),
    raises("counts-list-item-ndim", lambda: _counts([PB], [GT[0]]), ValueError, r"`preds\[0\]` to have 2 dims"),
    raises(
        "counts-ucm2-even",
        lambda: _counts(PB, GT, input_format="ucm2"),
        ValueError,
        r"`preds\[0\]` to be a double-size ucm2 of odd shape \(2H\+1, 2W\+1\)",
    ),
    raises(
        "counts-stack-levels",
        lambda: boundary_pr_counts(_stack_levels(3), GT, thresholds=5, input_format="stack"),
        ValueError,
        r"`preds\[0\]` to hold 5 levels",
    ),
    # ---- dtypes and values
    raises("counts-preds-complex", lambda: _counts(PB.to(torch.complex64), GT), TypeError, r"`preds\[0\]` to be float"),
    raises("counts-preds-bool", lambda: _counts(PB > 0.5, GT), TypeError, r"`preds\[0\]` to be floating.*torch.bool"),
    raises("counts-preds-int64", lambda: _counts((PB * 255).long(), GT), TypeError, r"`preds\[0\]`.*torch.int64"),
    raises(
        "counts-preds-nan",
        lambda: _counts(PB.masked_fill(PB > 0.9, float("nan")), GT),
        ValueError,
        r"`preds\[0\]` to contain only finite",
    ),
    raises(
        "counts-preds-above-1", lambda: _counts(PB * 2, GT), ValueError, r"floating `preds\[0\]` to lie in \[0, 1\]"
    ),
    raises(
        "counts-target-complex", lambda: _counts(PB, GT.to(torch.complex64)), TypeError, r"`target\[0\]` to be bool"
    ),
    raises("counts-target-values", lambda: _counts(PB, GT.long() * 3), ValueError, r"`target\[0\]` to be boolean"),
    raises(
        "counts-target-nan",
        lambda: _counts(PB, torch.where(GT, float("nan"), 0.0)),
        ValueError,
        r"`target\[0\]` to be boolean .* contains NaN or inf",
    ),
    raises("counts-meta", lambda: _counts(meta(PB), GT), ValueError, r"`preds` to hold values.*'meta'"),
    raises(
        "counts-meta-in-list",
        lambda: _counts([PB[0], meta(PB[1])], list(GT)),
        ValueError,
        r"`preds\[1\]` to hold values",
    ),
    # validate_args=False: out-of-range levels are compared as they are (above 1 passes every threshold), no crash
    value("counts-above-1-unvalidated", lambda: _counts(PB * 2, GT, validate_args=False), lambda out: None),
    value("counts-requires-grad", lambda: _counts(grad(PB), GT), _same_counts(lambda: _counts(PB, GT))),
    value(
        "counts-uint8-preds",
        lambda: _counts((PB * 255).to(torch.uint8), GT),
        _same_counts(lambda: _counts((PB * 255).to(torch.uint8).double() / 255, GT)),
    ),
    value("counts-int-target", lambda: _counts(PB, GT.long()), _same_counts(lambda: _counts(PB, GT))),
    value(
        "counts-non-contiguous",
        lambda: _counts(PB.transpose(1, 2), GT.transpose(2, 3)),
        _same_counts(lambda: _counts(PB.transpose(1, 2).contiguous(), GT.transpose(2, 3).contiguous())),
    ),
    value(
        "counts-list-sizes",
        lambda: _counts([PB[0], PB[1, :5]], [GT[0], GT[1, :, :5]]),
        _same_counts(lambda: _counts([PB[0], PB[1, :5]], [GT[0], GT[1, :, :5]])),
    ),
    value(
        "counts-one-pixel",
        lambda: _counts(torch.ones(1, 1, 1), torch.ones(1, 1, 1, 1, dtype=torch.bool)),
        lambda out: None,
    ),
    # ---- options
    raises("counts-input-format", lambda: _counts(PB, GT, input_format="png"), ValueError, r"`input_format` to be one"),
    raises("counts-max-dist-zero", lambda: _counts(PB, GT, max_dist=0), ValueError, r"`max_dist` to be a finite pos"),
    raises("counts-max-dist-nan", lambda: _counts(PB, GT, max_dist=float("nan")), ValueError, r"`max_dist`"),
    raises("counts-max-dist-bool", lambda: _counts(PB, GT, max_dist=True), ValueError, r"`max_dist`"),
    # a tolerance beyond the diagonal reaches what the diagonal reaches: capped there, the same counts
    value(
        "counts-max-dist-huge",
        lambda: _counts(PB, GT, max_dist=1e6),
        _same_counts(lambda: _counts(PB, GT, max_dist=DIAGONAL)),
    ),
    raises(
        "counts-thresholds-zero",
        lambda: boundary_pr_counts(PB, GT, thresholds=0),
        ValueError,
        r"`thresholds` to be a positive int",
    ),
    raises("counts-thresholds-bool", lambda: boundary_pr_counts(PB, GT, thresholds=True), TypeError, r"`thresholds`"),
    raises(
        "counts-thresholds-empty",
        lambda: boundary_pr_counts(PB, GT, thresholds=[]),
        ValueError,
        r"`thresholds` to be a non-empty 1-D sequence",
    ),
    raises(
        "counts-thresholds-nan",
        lambda: boundary_pr_counts(PB, GT, thresholds=[0.5, float("nan")]),
        ValueError,
        r"`thresholds` to be a non-empty 1-D sequence of finite values",
    ),
    raises("counts-thresholds-2d", lambda: boundary_pr_counts(PB, GT, thresholds=[[0.5]]), ValueError, r"`thresholds`"),
    raises(
        "counts-thresholds-str",
        lambda: boundary_pr_counts(PB, GT, thresholds="99"),
        (TypeError, ValueError),
        r"`thresholds`",
    ),
    raises("counts-backend", lambda: _counts(PB, GT, backend="cuda"), ValueError, r"`backend`"),
    raises("pr-unique-occurrence", lambda: _pr(PB, GT, unique_occurrence="middle"), ValueError, r"`unique_occurrence`"),
    raises("pr-thin-str", lambda: _pr(PB, GT, thin="yes"), TypeError, r"`thin` to be a bool"),
    raises("pr-validate-args-str", lambda: _pr(PB, GT, validate_args="no"), TypeError, r"`validate_args` to be a bool"),
    # ---- documented values
    value("pr-perfect", lambda: _ods(_pr(GT[:, 0].double(), GT[:, :1])), close(1.0)),
    value("pr-empty-gt-r50-nan", lambda: _pr(PB, torch.zeros_like(GT)), warns=r"R50 .* is NaN", nan_ok=True),
    value(
        "pr-requires-grad", lambda: _ods(_pr(grad(PB), GT)), close(lambda: _ods(_pr(PB, GT))), warns=r"R50", nan_ok=True
    ),
    # ---- Metric classes
    raises("BoundaryPR-thresholds", lambda: BoundaryPR(thresholds=-1), ValueError, r"`thresholds` to be a positive"),
    raises("BoundaryPR-max-dist", lambda: BoundaryPR(max_dist=-0.1), ValueError, r"`max_dist`"),
    raises("BoundaryPR-input-format", lambda: BoundaryPR(input_format=None), ValueError, r"`input_format`"),
    raises("BoundaryPR-thin", lambda: BoundaryPR(thin=1), TypeError, r"`thin` to be a bool"),
    raises("BoundaryPR-backend", lambda: BoundaryPR(backend="gpu"), ValueError, r"`backend`"),
    raises("BoundaryPR-unique-occurrence", lambda: BoundaryPR(unique_occurrence=0), ValueError, r"`unique_occurrence`"),
    raises(
        "BoundaryPR-update-shape",
        lambda: metric_run(BoundaryPR, [(PB, GT[:1])], thresholds=5),
        ValueError,
        r"same number of images",
    ),
    raises(
        "BoundaryPR-update-meta",
        lambda: metric_run(BoundaryPR, [(PB, meta(GT))], thresholds=5),
        ValueError,
        r"`target` to hold values",
    ),
    value(
        "BoundaryPR-update-max-dist-huge",
        lambda: _ods(metric_run(BoundaryPR, [(PB, GT)], max_dist=500.0)),
        close(lambda: _ods(metric_run(BoundaryPR, [(PB, GT)], max_dist=DIAGONAL))),
    ),
    value(
        "BoundaryPR-compute-before-update",
        lambda: BoundaryPR(thresholds=5).compute(),
        lambda out: torch.isnan(torch.as_tensor(_ods(out))),
        warns=r"saw no image",
        nan_ok=True,
    ),
    value(
        "BoundaryPR-requires-grad",
        lambda: _ods(metric_run(BoundaryPR, [(grad(PB), GT)], thresholds=5)),
        close(lambda: _ods(metric_run(BoundaryPR, [(PB, GT)], thresholds=5))),
        warns=r"R50",
        nan_ok=True,
    ),
    # ---- morphological boundary F (DAVIS)
    raises("mbf-preds-none", lambda: morphological_boundary_f(None, MASK), TypeError, r"`preds` to be a torch.Tensor"),
    raises("mbf-shape", lambda: morphological_boundary_f(MASK, MASK[:, :4]), ValueError, r"`preds\[0\]` and `target"),
    raises("mbf-batch", lambda: morphological_boundary_f(MASK, MASK[:1]), ValueError, r"as many `preds` as `target`"),
    raises("mbf-values", lambda: morphological_boundary_f(MASK.long() * 2, MASK), ValueError, r"`preds.*` to be bool"),
    raises("mbf-float-fraction", lambda: morphological_boundary_f(MASK * 0.5, MASK), ValueError, r"`preds.*boolean"),
    raises("mbf-complex", lambda: morphological_boundary_f(MASK.to(torch.complex64), MASK), TypeError, r"`preds"),
    raises("mbf-zero-size", lambda: morphological_boundary_f(MASK[:, :0], MASK[:, :0]), ValueError, r"`preds` to have"),
    raises("mbf-empty-batch", lambda: morphological_boundary_f(MASK[:0], MASK[:0]), ValueError, r"at least one image"),
    raises("mbf-bound-th-zero", lambda: morphological_boundary_f(MASK, MASK, bound_th=0), ValueError, r"`bound_th`"),
    value(
        "mbf-bound-th-huge",
        lambda: morphological_boundary_f(MASK, ~MASK, bound_th=1e9),
        close(lambda: morphological_boundary_f(MASK, ~MASK, bound_th=DIAGONAL)),
    ),
    raises("mbf-meta", lambda: morphological_boundary_f(meta(MASK), MASK), ValueError, r"`preds` to hold values"),
    value(
        "mbf-empty-both",
        lambda: morphological_boundary_f(torch.zeros_like(MASK), torch.zeros_like(MASK))["f"],
        close(torch.ones(2, dtype=torch.float64)),
    ),
    value(
        "mbf-empty-pred",
        lambda: morphological_boundary_f(torch.zeros_like(MASK), MASK)["f"],
        close(torch.zeros(2, dtype=torch.float64)),
    ),
    value(
        "mbf-one-pixel",
        lambda: morphological_boundary_f(torch.ones(1, 1, 1), torch.ones(1, 1, 1))["f"],
        close(torch.ones(1, dtype=torch.float64)),
    ),
    value(
        "mbf-requires-grad",
        lambda: morphological_boundary_f(grad(MASK), MASK)["f"],
        close(torch.ones(2, dtype=torch.float64)),
    ),
    raises(
        "MorphologicalBoundaryF-bound-th",
        lambda: MorphologicalBoundaryF(bound_th=float("inf")),
        ValueError,
        r"`bound_th`",
    ),
    raises("MorphologicalBoundaryF-backend", lambda: MorphologicalBoundaryF(backend="cv2"), ValueError, r"`backend`"),
    raises(
        "MorphologicalBoundaryF-validate",
        lambda: MorphologicalBoundaryF(validate_args=None),
        TypeError,
        r"`validate_args`",
    ),
    value(
        "MorphologicalBoundaryF-compute-before-update",
        lambda: MorphologicalBoundaryF().compute(),
        warns=r"compute.*called before the ..update",
        category=UserWarning,
        nan_ok=True,
    ),
]


@pytest.mark.parametrize("case", [c.param() for c in CASES])
def test_boundary_bad_input(case):
    run_case(case)


def test_enough_cases():
    assert len({c.id for c in CASES}) == len(CASES) >= 30


@pytest.mark.parametrize(
    ("thresholds", "match"),
    [
        ([0.9, 0.1, 0.5], "strictly increasing"),  # ODS moved (0.1738 -> 0.1741) and its threshold with the order
        ([0.5, 0.5], "strictly increasing"),  # AP 0.0 against ap_pyedgeeval's 0.0126
        (10**7, r"positive int \(at most 100000\)"),  # asked for 8 GB at once
    ],
)
def test_thresholds_the_curves_cannot_read(thresholds: object, match: str) -> None:
    gt = torch.zeros(1, 1, 20, 20, dtype=torch.bool)
    gt[0, 0, 10, 4:16] = True
    with pytest.raises(ValueError, match=rf"`thresholds`.*{match}|{match}.*`thresholds`"):
        boundary_pr(torch.rand(1, 20, 20), gt, thresholds=thresholds)
    with pytest.raises(ValueError, match="thresholds"):
        BoundaryPR(thresholds=thresholds)
