"""Bad and edge inputs of the foreground-map family (functional forms and Metric classes), issue 20."""

from __future__ import annotations

import pytest
import torch

from segmetrics_torch import MAE, EMeasure, FMeasure, ForegroundMeasures, IoU, SMeasure, WeightedFMeasure
from segmetrics_torch.functional import (
    dice,
    e_measure,
    f_measure,
    foreground_measures,
    iou,
    mae,
    precision_recall,
    s_measure,
    weighted_f_measure,
)

from .cases import close, grad, meta, metric_run, raises, run_case, value


def _p(b: int = 2, h: int = 8, w: int = 12, seed: int = 0) -> torch.Tensor:
    return torch.rand(b, h, w, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def _g(b: int = 2, h: int = 8, w: int = 12) -> torch.Tensor:
    g = torch.zeros(b, h, w, dtype=torch.uint8)
    g[:, 2:6, 3:9] = 255
    return g


P, G = _p(), _g()


def _nan_p() -> torch.Tensor:
    p = P.clone()
    p[0, 0, 0] = float("nan")
    return p


def _all_finite(out) -> None:
    assert all(bool(torch.isfinite(v).all()) for v in out.values())


CASES = [
    # ---- types
    raises("mae-preds-none", lambda: mae(None, G), TypeError, r"`preds` to be a torch.Tensor or a list"),
    raises("mae-target-none", lambda: mae(P, None), TypeError, r"`target` to be a torch.Tensor or a list"),
    raises("mae-preds-numpy", lambda: mae(P.numpy(), G), TypeError, r"`preds` .*ndarray"),
    raises("mae-preds-str", lambda: mae("map.png", G), TypeError, r"`preds` to be a torch.Tensor or a list.*str"),
    raises("mae-list-of-str", lambda: mae(["a", "b"], [G[0], G[1]]), TypeError, r"`preds\[0\]` to be a torch"),
    raises("mae-tensor-vs-list", lambda: mae(P, list(G)), TypeError, r"`preds` and `target` to be both tensors"),
    raises("mae-normalize-str", lambda: mae(P, G, normalize="yes"), TypeError, r"`normalize` to be a bool"),
    # ---- shapes
    raises("mae-2d", lambda: mae(P[0], G[0]), ValueError, r"`preds` of shape \(B, H, W\) or \(B, 1, H, W\)"),
    raises("mae-5d", lambda: mae(P[:, None, None], G[:, None, None]), ValueError, r"`preds` of shape \(B, H, W\)"),
    raises("mae-3-channels", lambda: mae(P[:, None].expand(2, 3, 8, 12), G), ValueError, r"`preds` of shape"),
    raises("mae-shape-mismatch", lambda: mae(P, G[:, :, :10]), ValueError, r"`preds` and `target` to have the same"),
    raises("mae-batch-mismatch", lambda: mae(P, G[:1]), ValueError, r"`preds` and `target` to have the same shape"),
    raises("mae-empty-batch", lambda: mae(P[:0], G[:0]), ValueError, r"`preds` to hold at least one image"),
    raises("mae-zero-height", lambda: mae(P[:, :0], G[:, :0]), ValueError, r"`preds` to have non-empty images"),
    raises("mae-empty-list", lambda: mae([], []), ValueError, r"`preds` to hold at least one image.*empty list"),
    raises("mae-list-length", lambda: mae([P[0], P[1]], [G[0]]), ValueError, r"as many `target` as `preds` images"),
    raises(
        "mae-list-size-mismatch",
        lambda: mae([P[0]], [G[0, :4]]),
        ValueError,
        r"`preds\[0\]` and `target\[0\]` to have the same shape",
    ),
    raises("mae-list-zero-size", lambda: mae([P[0, :0]], [G[0, :0]]), ValueError, r"`preds\[0\]` to be a non-empty"),
    raises("mae-list-3d-item", lambda: mae([P], [G]), ValueError, r"`preds\[0\]` of shape \(H, W\) or \(1, H, W\)"),
    # ---- dtypes and values
    raises("mae-complex-preds", lambda: mae(P.to(torch.complex64), G), TypeError, r"`preds` to be uint8.*complex"),
    raises("mae-int64-preds", lambda: mae((P * 255).long(), G), TypeError, r"`preds` to be uint8.*int64"),
    raises("mae-complex-target", lambda: mae(P, G.to(torch.complex64)), TypeError, r"`target` to be bool, uint8"),
    raises("mae-nan-preds", lambda: mae(_nan_p(), G), ValueError, r"`preds` to contain only finite values"),
    raises("mae-inf-preds", lambda: mae(P.masked_fill(P > 0.9, float("inf")), G), ValueError, r"`preds`.*finite"),
    raises("mae-preds-above-1", lambda: mae(P * 2, G), ValueError, r"floating `preds` to lie in \[0, 1\]"),
    raises("mae-preds-negative", lambda: mae(P - 0.5, G), ValueError, r"floating `preds` to lie in \[0, 1\]"),
    raises("mae-target-float-fraction", lambda: mae(P, G / 510), ValueError, r"`target` of dtype .* to be binary"),
    raises("mae-target-int-2", lambda: mae(P, (G > 0).long() * 2), ValueError, r"`target` of dtype torch.int64"),
    raises("mae-list-nan", lambda: mae([_nan_p()[0]], [G[0]]), ValueError, r"`preds\[0\.\.\]` to contain only finite"),
    # validate_args=False: no value check, a defined outcome (PySODMetrics' arithmetic on what arrives)
    value(
        "mae-above-1-unvalidated-kernel-equals-tensor-path",
        lambda: mae(P * 2, G, validate_args=False, normalize=False),
        close(lambda: (P * 2 - (G > 128).double()).abs().mean((1, 2))),
    ),
    value(
        "mae-target-float-unvalidated", lambda: mae(P, G / 255 * 0.7, validate_args=False), close(lambda: mae(P, G))
    ),  # non-binary targets binarise > 0.5
    raises("mae-meta", lambda: mae(meta(P), meta(G)), ValueError, r"`preds` to hold values.*'meta' device"),
    raises("mae-meta-target", lambda: mae(P, meta(G)), ValueError, r"`target` to hold values.*'meta'"),
    raises(
        "mae-device-mismatch-meta-list",
        lambda: mae([P[0], meta(P[1])], [G[0], G[1]]),
        ValueError,
        r"`preds\[1\]` to hold values",
    ),
    # ---- valid edge inputs with documented values
    value("mae-requires-grad", lambda: mae(grad(P), G), close(lambda: mae(P, G))),
    value("mae-bool-preds", lambda: mae(G > 0, G), close(torch.zeros(2, dtype=torch.float64))),
    value(
        "mae-uint8-preds",
        lambda: mae((P * 255).to(torch.uint8), G, normalize=False),
        close(lambda: mae((P * 255).to(torch.uint8).double() / 255, G, normalize=False)),
    ),
    value("mae-4d-single-channel", lambda: mae(P[:, None], G[:, None]), close(lambda: mae(P, G))),
    value(
        "mae-non-contiguous",
        lambda: mae(P.transpose(1, 2), G.transpose(1, 2)),
        close(lambda: mae(P.transpose(1, 2).contiguous(), G.transpose(1, 2).contiguous())),
    ),
    value(
        "mae-list-mixed-dtypes",
        lambda: mae([P[0], (P[1] * 255).to(torch.uint8)], [G[0], G[1] > 0]),
        close(lambda: torch.cat([mae(P[:1], G[:1]), mae((P[1:] * 255).to(torch.uint8), G[1:])])),
    ),
    value(
        "mae-list-sizes",
        lambda: mae([P[0], P[1, :5]], [G[0], G[1, :5]]),
        close(lambda: torch.cat([mae(P[:1], G[:1]), mae(P[1:, :5], G[1:, :5])])),
    ),
    value(
        "mae-one-pixel",
        lambda: mae(torch.ones(1, 1, 1), torch.ones(1, 1, 1, dtype=torch.bool)),
        close(torch.zeros(1, dtype=torch.float64)),
    ),
    value(
        "s-empty-gt-constant",
        lambda: s_measure(torch.zeros(1, 8, 12), torch.zeros(1, 8, 12, dtype=torch.bool)),
        close(torch.ones(1, dtype=torch.float64)),
    ),
    value(
        "s-full-gt",
        lambda: s_measure(torch.ones(1, 8, 12), torch.ones(1, 8, 12, dtype=torch.bool)),
        close(torch.ones(1, dtype=torch.float64)),
    ),
    value("f-empty-gt", lambda: f_measure(P, torch.zeros_like(G))["adaptive"], close(torch.zeros(2))),
    value("e-constant-map", lambda: e_measure(torch.full((2, 8, 12), 0.5), G), lambda out: _all_finite(out)),
    value("wf-empty-gt", lambda: weighted_f_measure(P, torch.zeros_like(G)), close(torch.zeros(2))),
    value(
        "iou-huge-values-uint8",
        lambda: iou(torch.full((2, 8, 12), 255, dtype=torch.uint8), G),
        lambda out: _all_finite(out),
    ),
    value("pr-all", lambda: precision_recall(P, G), lambda out: _all_finite(out)),
    value("dice-one-pixel", lambda: dice(torch.ones(1, 1, 1), torch.ones(1, 1, 1)), lambda out: _all_finite(out)),
    # S-measure's documented NaN: the GT centroid on the last row leaves an empty quadrant (PySODMetrics too)
    value(
        "s-empty-quadrant-nan",
        lambda: s_measure(P[:1, :3, :3], torch.tensor([[[0, 0, 0], [0, 0, 0], [0, 0, 1]]])),
        lambda out: torch.isnan(out).all(),
        nan_ok=True,
    ),
    value(
        "s-empty-quadrant-skip",
        lambda: s_measure(P[:1, :3, :3], torch.tensor([[[0, 0, 0], [0, 0, 0], [0, 0, 1]]]), empty_quadrant="skip"),
    ),
    # ---- options
    raises("f-beta2-zero", lambda: f_measure(P, G, beta2=0), ValueError, r"`beta2` to be a finite positive"),
    raises("f-beta2-negative", lambda: f_measure(P, G, beta2=-1.0), ValueError, r"`beta2` to be a finite positive"),
    raises("f-beta2-nan", lambda: f_measure(P, G, beta2=float("nan")), ValueError, r"`beta2`"),
    raises("f-beta2-inf", lambda: f_measure(P, G, beta2=float("inf")), ValueError, r"`beta2`"),
    raises("f-beta2-bool", lambda: f_measure(P, G, beta2=True), ValueError, r"`beta2`"),
    raises("f-beta2-str", lambda: f_measure(P, G, beta2="0.3"), ValueError, r"`beta2`"),
    raises("s-alpha-above-1", lambda: s_measure(P, G, alpha=1.5), ValueError, r"`alpha` to be a number in \[0, 1\]"),
    raises("s-alpha-nan", lambda: s_measure(P, G, alpha=float("nan")), ValueError, r"`alpha` to be a number"),
    raises("s-alpha-none", lambda: s_measure(P, G, alpha=None), ValueError, r"`alpha`"),
    raises(
        "s-empty-quadrant-choice",
        lambda: s_measure(P, G, empty_quadrant="zero"),
        ValueError,
        r"`empty_quadrant` to be one of 'nan', 'skip'",
    ),
    raises("wf-beta2-zero", lambda: weighted_f_measure(P, G, beta2=0.0), ValueError, r"`beta2`"),
    raises("wf-edt-backend", lambda: weighted_f_measure(P, G, edt_backend="scipy"), ValueError, r"`edt_backend`"),
    raises("suite-wf-beta2", lambda: foreground_measures(P, G, wf_beta2=-2), ValueError, r"`wf_beta2`"),
    raises("suite-validate-args-str", lambda: foreground_measures(P, G, normalize=1), TypeError, r"`normalize`"),
    # ---- Metric classes: constructor options
    raises("MAE-normalize-int", lambda: MAE(normalize=1), TypeError, r"`normalize` to be a bool"),
    raises("MAE-validate-args-str", lambda: MAE(validate_args="no"), TypeError, r"`validate_args` to be a bool"),
    raises("SMeasure-alpha", lambda: SMeasure(alpha=-0.1), ValueError, r"`alpha` to be a number in \[0, 1\]"),
    raises("SMeasure-empty-quadrant", lambda: SMeasure(empty_quadrant=None), ValueError, r"`empty_quadrant`"),
    raises("FMeasure-beta2", lambda: FMeasure(beta2=0), ValueError, r"`beta2` to be a finite positive"),
    raises("WeightedFMeasure-beta2", lambda: WeightedFMeasure(beta2=float("inf")), ValueError, r"`beta2`"),
    raises("WeightedFMeasure-backend", lambda: WeightedFMeasure(edt_backend=3), ValueError, r"`edt_backend`"),
    raises("ForegroundMeasures-beta2", lambda: ForegroundMeasures(beta2=float("nan")), ValueError, r"`beta2`"),
    raises("ForegroundMeasures-alpha", lambda: ForegroundMeasures(alpha=2), ValueError, r"`alpha`"),
    # ---- Metric classes: update inputs and compute
    raises("MAE-update-none", lambda: metric_run(MAE, [(None, G)]), TypeError, r"`preds` to be a torch.Tensor"),
    raises("MAE-update-nan", lambda: metric_run(MAE, [(_nan_p(), G)]), ValueError, r"`preds`.*finite"),
    raises("IoU-update-shape", lambda: metric_run(IoU, [(P, G[:1])]), ValueError, r"`preds` and `target`"),
    raises("EMeasure-update-meta", lambda: metric_run(EMeasure, [(meta(P), G)]), ValueError, r"`preds` to hold"),
    raises(
        "SMeasure-update-empty-list",
        lambda: metric_run(SMeasure, [([], [])]),
        ValueError,
        r"`preds` to hold at least one image",
    ),
    value("MAE-update-requires-grad", lambda: metric_run(MAE, [(grad(P), G)]), close(lambda: mae(P, G).mean())),
    value(
        "MAE-compute-before-update",
        lambda: MAE().compute(),
        lambda out: torch.isnan(out),
        warns=r"compute.*called before the ..update",
        category=UserWarning,
        nan_ok=True,
    ),  # torchmetrics' warning
    value(
        "SMeasure-nan-warns",
        lambda: metric_run(SMeasure, [(P[:1, :3, :3], torch.tensor([[[0, 0, 0], [0, 0, 0], [0, 0, 1]]]))]),
        lambda out: torch.isnan(out),
        warns=r"SMeasure is NaN: 1 image",
        nan_ok=True,
    ),
    value(
        "ForegroundMeasures-list-sizes",
        lambda: metric_run(ForegroundMeasures, [([P[0], P[1, :5]], [G[0], G[1, :5]])]),
        lambda out: None,
    ),
    value("MAE-numpy-free-uint8", lambda: metric_run(MAE, [(G.clone(), G)]), close(torch.tensor(0.0))),
]


@pytest.mark.parametrize("case", [c.param() for c in CASES])
def test_foreground_bad_input(case):
    run_case(case)


def test_enough_cases():
    assert len({c.id for c in CASES}) == len(CASES) >= 30
