"""The compiled kernel's weighted F: its importance table, and the weighted-F-alone pass equal to the full pass."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from segmetrics_torch._constants import LOG_HALF_OVER_5

pytest.importorskip("numba")

from segmetrics_torch.ops.distance import distance_transform_edt
from segmetrics_torch.ops.foreground import foreground_statistics


def test_importance_table_ends_at_two():
    from segmetrics_torch.ops._kernels.foreground import importance_table

    table = importance_table()
    k = np.arange(table.shape[0], dtype=np.float64)
    assert np.array_equal(table, 2 - np.exp(LOG_HALF_OVER_5 * np.sqrt(k)))
    assert table[-1] == 2.0 and table[-2] < 2.0
    for d2 in (table.shape[0], 10**5, 1 << 17, 2 * 4096**2):  # what the kernel reads as table[-1]
        assert 2 - math.exp(LOG_HALF_OVER_5 * math.sqrt(d2)) == 2.0


@pytest.mark.parametrize("dtype", [torch.uint8, torch.float64])
@pytest.mark.parametrize("shape", [(5, 1, 1), (7, 9, 1), (6, 17, 23), (3, 70, 300)])
def test_weighted_f_alone_equals_full_pass(dtype, shape):
    rng = np.random.default_rng(sum(shape))
    g = torch.from_numpy(rng.random(shape) < rng.choice([0.0, 0.003, 0.05, 0.5, 1.0], shape[0])[:, None, None])
    raw = rng.integers(0, 256, shape)
    preds = torch.from_numpy(raw.astype(np.uint8)) if dtype == torch.uint8 else torch.from_numpy(raw / 255.0)
    for normalize in (True, False):
        full = foreground_statistics(preds, g, normalize=normalize, s_measure=True, weighted_f=True)
        alone = foreground_statistics(preds, g, normalize=normalize, weighted_f=True, counts=False)
        given = foreground_statistics(
            preds, g, normalize=normalize, weighted_f=True, counts=False, distance=distance_transform_edt(g)
        )
        assert torch.equal(alone.pos, full.pos)
        for other in (alone, given):
            assert other.weighted_f_measure is not None and full.weighted_f_measure is not None
            assert torch.equal(other.weighted_f_measure, full.weighted_f_measure)
