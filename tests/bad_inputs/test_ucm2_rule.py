"""The one ucm2 rule (``ops.unit_maps.as_ucm2``): the boundary family and the hierarchy family read a uint8 ucm2 and its
float64 ``/ 255`` twin to the same numbers, and reject the same bad ucm2 with the same kind of error."""

from __future__ import annotations

import pytest
import torch

from segmetrics_torch import BoundaryPR, HierarchyMeasures
from segmetrics_torch.functional import boundary_pr, hierarchy_measures

from .cases import assert_close


def _ucm_u8(b: int = 2, h: int = 8, w: int = 12) -> torch.Tensor:
    """A (B, 2H+1, 2W+1) uint8 ucm2 with contours at several strengths (levels that are not multiples of 1/99)."""
    u = torch.zeros(b, 2 * h + 1, 2 * w + 1, dtype=torch.uint8)
    u[:, :, 12] = 200
    u[:, 10, :] = 101
    u[:, 10, 12] = 200
    u[1, 4, :12] = 37
    u[1, 4, 12] = 200
    return u


def _target(b: int = 2, h: int = 8, w: int = 12) -> tuple[torch.Tensor, torch.Tensor]:
    """(bool boundaries (B, 2, H, W), label maps (B, 2, H, W)) of two annotators."""
    seg = torch.zeros(b, 2, h, w, dtype=torch.int64)
    seg[:, 0, :, 6:] = 1
    seg[:, 1, 5:, :] = 1
    bnd = torch.zeros(b, 2, h, w, dtype=torch.bool)
    bnd[:, 0, :, 6] = True
    bnd[:, 1, 5, :] = True
    return bnd, seg


U8 = _ucm_u8()
UF = U8.double() / 255
BND, SEG = _target()
MEASURES = ["pri", "voi", "ssc", "fop", "fb"]


def _boundary_functional(u):
    out = boundary_pr(u, BND, thresholds=9, input_format="ucm2")
    return {k: out[k] for k in ("ods", "ois", "ap", "precision", "recall")}


def _boundary_metric(u):
    m = BoundaryPR(thresholds=9, input_format="ucm2")
    m.update(u, BND)
    out = m.compute()
    return {k: out[k] for k in ("ods", "ois", "ap", "precision", "recall")}


def _hierarchy_functional(u):
    out = hierarchy_measures(u, SEG, thresholds=9, measures=MEASURES)
    return {k: v for k, v in out.items() if k != "thresholds"}


def _hierarchy_regions(u):
    return hierarchy_measures(u, SEG, num_regions=[1, 2, 3, 4], measures=["voi", "pri"])


def _hierarchy_metric(u):
    m = HierarchyMeasures(thresholds=9, measures=MEASURES)
    m.update(u, SEG)
    return m.compute()


FAMILIES = {
    "boundary_pr": _boundary_functional,
    "BoundaryPR": _boundary_metric,
    "hierarchy_measures": _hierarchy_functional,
    "hierarchy_measures-num_regions": _hierarchy_regions,
    "HierarchyMeasures": _hierarchy_metric,
}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_uint8_and_float_ucm2_give_the_same_numbers(family):
    fn = FAMILIES[family]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a NaN R50 is announced; the same either way
        from_u8, from_float = fn(U8), fn(UF)
        from_list = fn(list(U8))
    assert_close(from_u8, from_float, atol=0)
    assert_close(from_list, from_u8, atol=0)


BAD = {
    "negative": (ValueError, r"floating `preds\[0\]` to lie in \[0, 1\]", lambda: UF - 0.5),
    "above-1": (ValueError, r"floating `preds\[0\]` to lie in \[0, 1\]", lambda: UF * 2),
    "nan": (ValueError, r"`preds\[0\]` to contain only finite values", lambda: UF.masked_fill(U8 == 101, float("nan"))),
    "inf": (ValueError, r"`preds\[1\]` to contain only finite values", lambda: UF.masked_fill(U8 == 37, float("inf"))),
    "bool": (
        TypeError,
        r"`preds\[0\]` to be floating in \[0, 1\] or uint8 \(0..255\), but got dtype torch.bool",
        lambda: U8 > 0,
    ),
    "int16": (TypeError, r"`preds\[0\]` to be floating in \[0, 1\] or uint8.*torch.int16", lambda: U8.to(torch.int16)),
    "int64": (TypeError, r"`preds\[0\]` to be floating in \[0, 1\] or uint8.*torch.int64", lambda: U8.long()),
    "complex": (
        TypeError,
        r"`preds\[0\]` to be floating in \[0, 1\] or uint8.*complex",
        lambda: UF.to(torch.complex64),
    ),
    "even-shape": (
        ValueError,
        r"`preds\[0\]` to be a double-size ucm2 of odd shape \(2H\+1, 2W\+1\)",
        lambda: UF[:, 1:, :],
    ),
    "too-small": (ValueError, r"`preds\[0\]` to be a double-size ucm2 of odd shape", lambda: UF[:, :1, :1]),
}


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("bad", list(BAD))
def test_both_families_reject_the_same_bad_ucm2(family, bad):
    error, match, make = BAD[bad]
    with pytest.raises(error, match=match):
        FAMILIES[family](make())
