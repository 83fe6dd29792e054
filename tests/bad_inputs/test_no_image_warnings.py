"""``compute()`` with no image: one warning, the same in every foreground Metric (issue 29: two copies of ``_mean``
had drifted; ``SizeInvariantMAE`` warned twice where ``MAE`` warned once, and ``MAE`` said nothing after updates that
all raised)."""

from __future__ import annotations

import warnings

import pytest
import torch

import segmetrics_torch as st

CLASSES = [st.MAE, st.SMeasure, st.WeightedFMeasure, st.SizeInvariantMAE, st.ThresholdMeasures]


def _warnings(fn) -> list[str]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        value = fn()
    assert all(
        torch.isnan(v).all()
        for v in (value.values() if isinstance(value, dict) else [value])
        if isinstance(v, torch.Tensor)
    )
    return [str(w.message) for w in seen]


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_compute_before_any_update_warns_once(cls) -> None:
    assert len(_warnings(cls().compute)) == 1  # torchmetrics' "compute before update", not ours too


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_compute_after_updates_that_all_raised_warns_once(cls) -> None:
    metric = cls()
    with pytest.raises(ValueError):
        metric.update(torch.full((1, 8, 8), 2.0), torch.zeros(1, 8, 8, dtype=torch.bool))  # out of [0, 1]
    messages = _warnings(metric.compute)
    assert len(messages) == 1 and "no image has been added" in messages[0], messages
