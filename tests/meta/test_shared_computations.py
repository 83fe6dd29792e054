"""``shared_computations()`` changes how often the measures run, never their values."""

from __future__ import annotations

import torch

from segmetrics_torch.meta import (
    annotation_error_test,
    generic_map_test,
    gt_switch_test,
    metameasures as mm,
    noise_test,
    sabd,
    shared_computations,
    sisd,
)
from segmetrics_torch.synthetic import make_foreground_dataset


def _foreground_rates(measures, preds, gts):
    out = {}
    for m in measures:
        out[m] = (
            generic_map_test(m, preds, gts, generic="gaussian").rate,
            generic_map_test(m, preds, gts, generic="circle").rate,
            noise_test(m, preds, gts, num_maps=2, seed=3).rate,
            gt_switch_test(m, preds, gts).rate,
            annotation_error_test(m, preds, gts, operation="dilate", radius=2.0).per_image,
        )
    return out


def test_foreground_tests_equal_with_and_without_sharing(monkeypatch):
    data = make_foreground_dataset(n=6, size=(24, 32), seed=1)
    gts = torch.from_numpy(data.gt) > 127
    preds = {name: torch.from_numpy(maps).double() / 255 for name, maps in data.preds.items()}
    assert len(preds) >= 2
    measures = ["mae", "s_measure", "weighted_f", "f_max", "e_mean", "e_adaptive"]
    plain = _foreground_rates(measures, preds, gts)
    calls = []
    original = mm._all_foreground
    monkeypatch.setattr(mm, "_all_foreground", lambda p, t: calls.append(1) or original(p, t))
    with shared_computations():
        shared = _foreground_rates(measures, preds, gts)
    assert plain.keys() == shared.keys()
    for m in measures:
        for a, b in zip(plain[m], shared[m], strict=True):
            torch.testing.assert_close(torch.as_tensor(a), torch.as_tensor(b), rtol=0, atol=0, equal_nan=True)
    # one kernel pass per distinct input set (3 methods, 2 generic maps, 2 noise maps, 3 switched, 3 perturbed), not
    # one per measure and test
    assert len(calls) <= 13 < 6 * 13


def test_partition_tests_equal_with_and_without_sharing():
    gen = torch.Generator().manual_seed(0)
    gts = [torch.randint(0, 3, (2, 12, 16), generator=gen) for _ in range(4)]
    soa = {"m": [torch.randint(0, 4, (12, 16), generator=gen) for _ in range(4)]}
    base = [torch.randint(0, 2, (12, 16), generator=gen) for _ in range(4)]
    measures = ["voi", "pri", "fop", "sc"]
    plain = {m: (sabd(m, soa, base, gts).rate, sisd(m, soa, gts).rate) for m in measures}
    with shared_computations():
        shared = {m: (sabd(m, soa, base, gts).rate, sisd(m, soa, gts).rate) for m in measures}
    assert plain == shared
